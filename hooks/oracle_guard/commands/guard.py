"""`oracle-guard guard install|status|uninstall [WORKTREE]`: the commit guard of one agent worktree.

install: the worktree's own `core.hooksPath` (per-worktree config, via
`extensions.worktreeConfig`; other worktrees and the main checkout are not
touched) points at pre-commit and pre-push hooks that run `oracle-guard
check --base <branch point>`; the branch point is recorded for that
worktree; the contract, the collection snapshot and the allowed-signers
file are made read-only on disk.  It prints what it did.  An agent with a
shell can undo all of it: this is a tripwire for honest mistakes and a
clear signal, not a boundary.  The boundary is the server-side `check`.
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
from collections.abc import Sequence

from oracle_guard.repo import git
from oracle_guard.repo.paths import DEFAULT_CONTRACT
from oracle_guard.reporting.report import UsageError, guarded
from oracle_guard.rules import args as hook_args

HOOK_DIR = "oracle-guard-hooks"  # inside the worktree's own git dir, not its work tree
STAGES = ("pre-commit", "pre-push")
MARK = "# installed by `oracle-guard guard install`"
SET_BY_GUARD = "oracle-guard.enabledWorktreeConfig"  # in the shared config: the guard turned the extension on


def _git(worktree: str, *args: str, check: bool = True) -> str:
    return git.run("-C", worktree, *args, check=check).decode("utf-8", "replace").strip()


def _top(worktree: str | None) -> str:
    where = os.path.abspath(worktree or ".")
    if not os.path.isdir(where):
        raise UsageError(f"{where}: no such folder")
    top = _git(where, "rev-parse", "--show-toplevel", check=False)
    if not top:
        raise UsageError(f"{where} is not inside a git worktree")
    return top


def _git_dir(top: str) -> str:
    return _git(top, "rev-parse", "--path-format=absolute", "--git-dir")


def _protected(top: str, contract_path: str) -> list[str]:
    """The contract, the snapshot and the signers file of this worktree (those that exist)."""
    from oracle_guard.contract import contract

    full = os.path.join(top, contract_path)
    loaded = None
    if os.path.isfile(full):
        with open(full, "rb") as f:
            loaded = contract.loads(f.read(), contract_path)
    c = loaded or contract.Contract(path=contract_path)
    paths = [contract_path, c.snapshot_path] + ([c.allowed_signers] if c.allowed_signers else [])
    return [
        p
        for p in dict.fromkeys(paths)
        if os.path.isfile(os.path.join(top, p)) and not os.path.islink(os.path.join(top, p))
    ]


def _branch_point(top: str, explicit: str | None) -> str:
    if explicit:
        commit = _git(top, "rev-parse", "--verify", "--quiet", f"{explicit}^{{commit}}", check=False)
        if not commit:
            raise UsageError(f"base revision '{explicit}' does not exist")
        return commit
    common = _git(top, "rev-parse", "--path-format=absolute", "--git-common-dir")
    main_top = os.path.dirname(common) if os.path.basename(common) == ".git" else None
    main_head = _git(main_top, "rev-parse", "--verify", "--quiet", "HEAD", check=False) if main_top else ""
    head = _git(top, "rev-parse", "--verify", "--quiet", "HEAD", check=False)
    if not head:
        raise UsageError(f"{top} has no commits yet; pass --base REV")
    if not main_head or main_head == head and main_top == top:
        raise UsageError("cannot tell where this worktree's branch left the main one; pass --base REV")
    point = _git(top, "merge-base", head, main_head, check=False)
    if not point:
        raise UsageError("this worktree shares no history with the main checkout; pass --base REV")
    return point


def _script(stage: str, base: str, contract_path: str) -> str:
    command = [
        sys.executable,
        "-m",
        "oracle_guard.commands.cli",
        "check",
        "--base",
        base,
        "--contract",
        contract_path,
        "--format",
        "agent",
    ]
    return f"#!/bin/sh\n{MARK} ({stage})\nexec {' '.join(shlex.quote(c) for c in command)}\n"


def install(top: str, base: str, contract_path: str) -> list[str]:
    done = []
    if _git(top, "config", "--bool", "extensions.worktreeConfig", check=False) != "true":
        _git(top, "config", "--local", "extensions.worktreeConfig", "true")
        _git(top, "config", "--local", SET_BY_GUARD, "true")  # so that uninstall turns it off again
        done.append("enabled extensions.worktreeConfig (per-worktree settings; other worktrees keep theirs)")
    hooks_dir = os.path.join(_git_dir(top), HOOK_DIR)
    os.makedirs(hooks_dir, exist_ok=True)
    for stage in STAGES:
        path = os.path.join(hooks_dir, stage)
        with open(path, "w", encoding="utf-8") as f:
            f.write(_script(stage, base, contract_path))
        os.chmod(path, 0o755)
    common_hooks = os.path.join(_git(top, "rev-parse", "--path-format=absolute", "--git-common-dir"), "hooks")
    if _has_hooks(common_hooks):
        done.append(
            f"note: this worktree no longer runs the hooks in {common_hooks} (e.g. `pre-commit install`'s); the guard runs `oracle-guard check`"
        )
    _git(top, "config", "--worktree", "core.hooksPath", hooks_dir)
    _git(top, "config", "--worktree", "oracle-guard.base", base)
    _git(top, "config", "--worktree", "oracle-guard.contract", contract_path)
    done.append(
        f"this worktree's core.hooksPath = {hooks_dir} ({', '.join(STAGES)} run `oracle-guard check --base {base[:12]}`)"
    )
    done.append(f"recorded the branch point {base[:12]} as this worktree's base")
    for rel in _protected(top, contract_path):
        full = os.path.join(top, rel)
        os.chmod(full, os.stat(full).st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        done.append(f"made {rel} read-only")
    return done


def _has_hooks(folder: str) -> bool:
    """Whether FOLDER holds hooks git would run (not its .sample files)."""
    if not os.path.isdir(folder):
        return False
    return any(not n.endswith(".sample") and os.path.isfile(os.path.join(folder, n)) for n in os.listdir(folder))


def uninstall(top: str) -> list[str]:
    done = []
    hooks_dir = os.path.join(_git_dir(top), HOOK_DIR)
    current = _git(top, "config", "--worktree", "--get", "core.hooksPath", check=False) if _worktree_config(top) else ""
    contract_path = _git(top, "config", "--worktree", "--get", "oracle-guard.contract", check=False) if current else ""
    if current == hooks_dir:
        _git(top, "config", "--worktree", "--unset", "core.hooksPath")
        done.append("removed this worktree's core.hooksPath")
    for key in ("oracle-guard.base", "oracle-guard.contract"):
        if _worktree_config(top) and _git(top, "config", "--worktree", "--get", key, check=False):
            _git(top, "config", "--worktree", "--unset", key)
    for stage in STAGES:
        path = os.path.join(hooks_dir, stage)
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                if MARK in f.read():
                    os.unlink(path)
    if os.path.isdir(hooks_dir) and not os.listdir(hooks_dir):
        os.rmdir(hooks_dir)
    for rel in _protected(top, contract_path or DEFAULT_CONTRACT):
        full = os.path.join(top, rel)
        mode = os.stat(full).st_mode
        if not mode & stat.S_IWUSR:
            os.chmod(full, mode | stat.S_IWUSR)
            done.append(f"made {rel} writable again")
    if _restore_worktree_config(top):
        done.append("disabled extensions.worktreeConfig again (the guard had enabled it; no worktree uses it now)")
    return done or ["nothing to undo: the guard is not installed here"]


def _restore_worktree_config(top: str) -> bool:
    """Turn extensions.worktreeConfig off when the guard turned it on and no worktree has settings of its own left."""
    if _git(top, "config", "--local", "--bool", "--get", SET_BY_GUARD, check=False) != "true":
        return False
    listed = _git(top, "worktree", "list", "--porcelain")
    trees = [line[len("worktree ") :] for line in listed.splitlines() if line.startswith("worktree ")]
    if any(os.path.isdir(t) and _git(t, "config", "--worktree", "--list", check=False) for t in trees):
        return False  # another worktree's guard (or the user) still relies on it
    _git(top, "config", "--local", "--unset", "extensions.worktreeConfig", check=False)
    _git(top, "config", "--local", "--unset", SET_BY_GUARD, check=False)
    for section in ("oracle-guard", "extensions"):  # no empty section headers left behind
        if not _git(top, "config", "--local", "--get-regexp", rf"^{section}\.", check=False):
            _git(top, "config", "--local", "--remove-section", section, check=False)
    for tree in trees:  # the per-worktree files the guard wrote, now without a setting
        path = _git(tree, "rev-parse", "--path-format=absolute", "--git-path", "config.worktree", check=False)
        if path and os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                if all(not line.strip() or line.strip().startswith("[") for line in f):
                    os.unlink(path)
    return True


def _worktree_config(top: str) -> bool:
    return _git(top, "config", "--bool", "extensions.worktreeConfig", check=False) == "true"


def status(top: str) -> tuple[bool, list[str]]:
    hooks_dir = os.path.join(_git_dir(top), HOOK_DIR)
    current = _git(top, "config", "--worktree", "--get", "core.hooksPath", check=False) if _worktree_config(top) else ""
    installed = current == hooks_dir and all(os.path.isfile(os.path.join(hooks_dir, s)) for s in STAGES)
    lines = [f"{top}: guard {'installed' if installed else 'not installed'}"]
    if installed:
        base = _git(top, "config", "--worktree", "--get", "oracle-guard.base", check=False)
        contract_path = (
            _git(top, "config", "--worktree", "--get", "oracle-guard.contract", check=False) or DEFAULT_CONTRACT
        )
        lines.append(f"  base: {base or '(none recorded)'}")
        for rel in _protected(top, contract_path):
            writable = bool(os.stat(os.path.join(top, rel)).st_mode & stat.S_IWUSR)
            lines.append(f"  {rel}: {'WRITABLE (run install again)' if writable else 'read-only'}")
    elif current:
        lines.append(f"  core.hooksPath is {current} (not the guard's)")
    return installed, lines


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    parser = hook_args.parser("oracle-guard guard", __doc__)
    parser.add_argument("action", choices=("install", "status", "uninstall"))
    parser.add_argument("worktree", nargs="?", help="the agent's worktree (default: the current one)")
    parser.add_argument(
        "--base",
        metavar="REV",
        help="the base to check against (default: where this worktree's branch left the main checkout's)",
    )
    hook_args.add_contract(parser)
    args = parser.parse_args(argv)
    top = _top(args.worktree)
    if args.action == "install":
        for line in install(top, _branch_point(top, args.base), args.contract):
            print(f"oracle-guard guard: {line}")
        return 0
    if args.action == "uninstall":
        for line in uninstall(top):
            print(f"oracle-guard guard: {line}")
        return 0
    installed, lines = status(top)
    print("\n".join(lines))
    return 0 if installed else 1
