"""Which revision to compare with, what changed since, and both sides' bytes.

The base is, in order: ``--base``, ``ORACLE_GUARD_BASE``, pre-commit's
``PRE_COMMIT_FROM_REF``/``PRE_COMMIT_TO_REF`` (compared from their merge base,
like ``git diff from...to``), else the staged change against ``HEAD``.  With
no ``HEAD`` yet everything is new.  pre-commit never passes deleted files and
passes only the new path of a rename, so the change set always comes from git.
"""
from __future__ import annotations

import argparse
import os
from typing import Callable

from hooks import git
from hooks.report import UsageError

MAX_FILE_BYTES = 16 * 1024 * 1024


def add_base_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--base",
        metavar="REV",
        help="compare with this revision (its merge base with HEAD); "
        "default: PRE_COMMIT_FROM_REF, else the staged change against HEAD",
    )


class ChangeSet:
    def __init__(self, base: str | None, base_label: str, target: str | None, changes: list[git.Change] | None = None) -> None:
        self.base = base  # commit the change is compared with; None: no history yet
        self.base_label = base_label  # the revision as the user named it, for messages
        self.target = target  # commit holding the new side; None: the work tree
        self.changes = changes or []
        self._by_new = {c.path: c for c in self.changes if c.path}
        self._base_blobs: dict[str, bytes | None] = {}
        self._new_blobs: dict[str, bytes | None] = {}

    @property
    def deleted(self) -> list[str]:
        return [c.old_path for c in self.changes if c.status == "D" and c.old_path]

    @property
    def changed_paths(self) -> list[str]:
        """New paths of every added, modified or renamed file."""
        return [c.path for c in self.changes if c.path]

    def is_changed(self, path: str) -> bool:
        return path in self._by_new

    def old_path(self, path: str) -> str | None:
        """Where PATH lived at the base: its old name if renamed, None if new."""
        change = self._by_new.get(path)
        if change is not None:
            return change.old_path
        return path if self.base else None

    def read_base(self, paths: list[str]) -> dict[str, bytes | None]:
        """Base contents keyed by the base path."""
        if not self.base:
            return {p: None for p in paths}
        return self._cached(self._base_blobs, paths, lambda missing: git.read_blobs(self.base or "", missing))

    def read_new(self, paths: list[str]) -> dict[str, bytes | None]:
        """New contents keyed by path: the work tree, or the target commit."""
        if self.target:
            target = self.target
            return self._cached(self._new_blobs, paths, lambda missing: git.read_blobs(target, missing))
        return {p: read_worktree_file(p) for p in paths}  # the work tree can change under us (the snapshot)

    def _cached(self, cache: dict[str, bytes | None], paths: list[str], read: Callable[[list[str]], dict[str, bytes | None]]) -> dict[str, bytes | None]:
        # Every hook of one run reads the same blobs: ask git once per path.
        missing = [p for p in dict.fromkeys(paths) if p not in cache]
        if missing:
            cache.update(read(missing))
        return {p: cache.get(p) for p in paths}


def read_worktree_file(path: str) -> bytes | None:
    """Bytes of a regular file in the work tree; None if absent or a symlink."""
    try:
        if os.path.islink(path):
            return None
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            raise UsageError(f"{path}: {size} bytes is over the {MAX_FILE_BYTES}-byte limit for a checked file")
        with open(path, "rb") as f:
            return f.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def enter_repo(filenames: list[str]) -> list[str]:
    """Move to the repository's top folder; return FILENAMES relative to it.

    Paths that leave the repository (``..``, absolute elsewhere) are refused.
    """
    top = git.toplevel()
    here = os.getcwd()
    result = []
    for name in filenames:
        full = os.path.normpath(os.path.join(here, name))
        rel = os.path.relpath(full, top).replace(os.sep, "/")
        if rel == ".." or rel.startswith("../"):
            raise UsageError(f"{name}: path is outside the repository")
        result.append(rel)
    os.chdir(top)
    return result


def _verified(rev: str) -> str:
    commit = git.commit_of(rev)
    if commit:
        return commit
    if git.is_shallow():
        raise UsageError(
            f"base revision '{rev}' is not in this shallow clone; fetch it first "
            f"(e.g. `git fetch --unshallow` or `git fetch origin {rev}`)"
        )
    raise UsageError(f"base revision '{rev}' does not exist (fetch it, or check the name)")


def resolve(args: argparse.Namespace, env: dict[str, str] | None = None) -> ChangeSet:
    """The change to check; call from the repository's top folder (enter_repo)."""
    env = dict(os.environ) if env is None else env
    head = git.head()
    explicit = getattr(args, "base", None) or env.get("ORACLE_GUARD_BASE")
    from_ref, to_ref = env.get("PRE_COMMIT_FROM_REF"), env.get("PRE_COMMIT_TO_REF")

    if explicit or from_ref:
        label = explicit or from_ref
        base = _verified(label)
        target = None
        if not explicit and to_ref:
            target = _verified(to_ref)
            if target == head:
                target = None
        tip = target or head
        if tip:
            mb = git.merge_base(base, tip)
            if mb is None and git.is_shallow():
                raise UsageError(
                    f"cannot find where this branch left '{label}': the clone is too shallow "
                    "(run `git fetch --unshallow`, or fetch with enough depth)"
                )
            base = mb or base
        changes = git.diff(base, target, cached=False)
        # The work tree against an explicit base (the gate): files not yet added count as new.
        # pre-commit's range (pre-push) is about commits: files git does not track are not pushed.
        if target is None and explicit:
            changes += [git.Change("A", p, None) for p in git.untracked()]
        return ChangeSet(base, label, target, changes)

    if head is None:  # first commit: compare with nothing
        changes = git.diff(git.empty_tree(), None, cached=True)
        return ChangeSet(None, "(no commits yet)", None, changes)
    return ChangeSet(head, "HEAD", None, git.diff(head, None, cached=True))
