"""fixture-lock-verify: locked fixtures match their sha256; locks change only with a signed approval.

Absolute checks, on every run (also pre-commit.ci's ``--all-files`` with no
base): each locked file's raw bytes hash to its ``sha256`` (CRLF counts, mtime
never does); a locked directory hashes to the sha256 of its manifest (sorted
``<sha256>  <relative path>`` lines of every file git would commit there);
the fixture exists; its path is relative, has no ``..``, and does not resolve
through a symlink out of its fixtures root.

Relative to the base contract: a lock whose digest or path changed, or a
lock dropped from the contract, needs a signed approval.  New locks are
stronger and always pass.  An id renamed with the same path and digest, and
a pure move (same digest, the old path gone), are not weakenings.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from oracle_guard.contract.digests import (
    WORKERS,
    Escape,
    check_path,
    digest_of,
    digests_at,
    forget_folders,
    hash_files,
    same_cwd,
)
from oracle_guard.repo.paths import DEFAULT_CONTRACT
from oracle_guard.reporting.report import Finding, UsageError, guarded, notice

if TYPE_CHECKING:
    from oracle_guard.contract import contract
    from oracle_guard.contract.approvals import Approvals
    from oracle_guard.repo import changes
    from oracle_guard.repo.context import HookContext

# oracle_guard.contract.contract (PyYAML) and oracle_guard.repo.changes are imported inside functions: main()
# starts hashing before paying for them, so the imports overlap the I/O.

# -- the checks ----------------------------------------------------------------


def _entry_finding(c: contract.Contract, fixture: contract.Fixture, code: str, message: str) -> Finding:
    return Finding(c.path, fixture.line or 1, fixture.col or 1, code, message)


_PATH_LINE = re.compile(rb"^[ \t-]*path:[ \t]*[\"']?([^\"'#\r\n]+?)[\"']?[ \t]*(?:#.*)?$", re.M)


class Prehash:
    """Start hashing the files a contract seems to lock while it is still being parsed.

    A cheap regex finds ``path:`` values in the raw bytes; only plain relative
    regular files (lstat, no ``..``) are read, and a digest is used only for a
    fixture whose path the loader and check_path accepted.  Parsing a 1,000-lock
    contract and hashing 200 MB then overlap instead of adding up.
    """

    def __init__(self, raw: bytes) -> None:
        paths = []
        for match in _PATH_LINE.finditer(raw):
            path = match.group(1).decode("utf-8", "replace")
            if path.startswith("/") or ".." in path.split("/"):
                continue
            try:
                if stat.S_ISREG(os.lstat(path).st_mode):
                    paths.append(path)
            except (OSError, ValueError):
                continue
        self.digests: dict[str, str] = {}
        self._thread = threading.Thread(target=self._run, args=(paths,), daemon=True)
        self._thread.start()

    def _run(self, paths: list[str]) -> None:
        try:
            self.digests = hash_files(paths, WORKERS)
        except OSError:
            self.digests = {}  # the real pass reports it

    def result(self) -> dict[str, str]:
        self._thread.join()
        return self.digests


def _changed_inside(path: str, change_set: changes.ChangeSet | None) -> str:
    """For a directory lock: which files changed there since the base, to say what broke it."""
    if change_set is None or not change_set.base:
        return ""
    prefix = path.rstrip("/") + "/"
    names = {"A": "added", "D": "removed", "R": "renamed"}
    seen = []
    for change in change_set.changes:
        name = change.path or change.old_path or ""
        if name.startswith(prefix) or (change.old_path or "").startswith(prefix):
            seen.append(
                f"{name[len(prefix) :] if name.startswith(prefix) else name} ({names.get(change.status, 'changed')})"
            )
    if not seen:
        return ""
    more = f" and {len(seen) - 5} more" if len(seen) > 5 else ""
    return "; since the base: " + ", ".join(seen[:5]) + more


def absolute_findings(
    c: contract.Contract,
    target: str | None,
    prehash: Prehash | None = None,
    change_set: changes.ChangeSet | None = None,
) -> list[Finding]:
    findings: list[Finding] = []
    actual: dict[str, str | None] = {}
    checked: list[contract.Fixture] = []
    forget_folders()  # symlinks may have changed since an earlier run in this process
    with same_cwd():
        for fixture in c.fixtures:
            try:
                check_path(fixture.path, c.fixture_roots)
                checked.append(fixture)
            except Escape as exc:
                findings.append(
                    _entry_finding(c, fixture, "OG403", f"fixture '{fixture.id}': path {fixture.path} {exc}")
                )
    try:
        if target:
            actual = digests_at(target, checked)
        else:
            files = [f for f in checked if os.path.isfile(f.path)]
            file_digests = prehash.result() if prehash else {}
            file_digests.update(hash_files([f.path for f in files if f.path not in file_digests], WORKERS))
            actual = {f.id: file_digests[f.path] for f in files}
            for fixture in checked:
                if fixture.id not in actual:
                    try:
                        actual[fixture.id] = digest_of(fixture.path, c.fixture_roots)
                    except Escape as exc:
                        findings.append(
                            _entry_finding(c, fixture, "OG403", f"fixture '{fixture.id}': {fixture.path} {exc}")
                        )
                        actual[fixture.id] = fixture.sha256  # reported already
    except PermissionError as exc:
        raise UsageError(f"cannot read a locked fixture: {exc.filename}: permission denied") from None
    for fixture in checked:
        if fixture.id not in actual:
            continue
        digest = actual[fixture.id]
        if digest is None:
            findings.append(
                _entry_finding(c, fixture, "OG402", f"locked fixture '{fixture.id}' is missing: {fixture.path}")
            )
        elif digest != fixture.sha256:
            inside = _changed_inside(fixture.path, change_set)
            findings.append(
                Finding(
                    fixture.path,
                    1,
                    1,
                    "OG401",
                    f"bytes do not match the lock '{fixture.id}' ({c.path}:{fixture.line}){inside}: "
                    f"sha256 {digest[:12]}…, locked {fixture.sha256[:12]}…; restore the file, or rotate the lock "
                    f"with a signed approval: `oracle-guard approve fixture-rotate {fixture.id} {fixture.sha256} {digest}`",
                )
            )
    return findings


def diff_findings(
    base: contract.Contract, new: contract.Contract | None, approvals: Approvals, new_paths_exist: dict[str, bool]
) -> list[Finding]:
    findings: list[Finding] = []
    now = {f.id: f for f in new.fixtures} if new else {}
    locked_now = {(f.path, f.sha256) for f in now.values()}
    where = new.path if new else base.path

    def rejected(statement: str, line: int, col: int, code: str, what: str) -> None:
        if not approvals.covers(statement):
            findings.append(Finding(where, line or 1, col or 1, code, f"{what}: {approvals.explain(statement)}"))

    for old in base.fixtures:
        fixture = now.get(old.id)
        if fixture is None:
            if (old.path, old.sha256) in locked_now:
                notice(f"fixture lock '{old.id}' renamed (same path and digest)")
                continue
            line = 1
            rejected(
                f"fixture-unlock {old.id} {old.sha256}",
                line,
                1,
                "OG406",
                f"lock '{old.id}' ({old.path}) dropped from the contract",
            )
            continue
        if fixture.path != old.path:
            pure_move = fixture.sha256 == old.sha256 and not new_paths_exist.get(old.path, False)
            if pure_move:
                notice(f"fixture '{old.id}' moved from {old.path} to {fixture.path} with the same digest")
            else:
                rejected(
                    f"fixture-repoint {old.id} {old.path} {fixture.path}",
                    fixture.line,
                    fixture.col,
                    "OG405",
                    f"lock '{old.id}' repointed from {old.path} to {fixture.path}",
                )
        if fixture.unlock and fixture.unlock != old.unlock:
            notice(
                f"fixture '{old.id}': `unlock` approves nothing here; a rotation needs `oracle-guard approve` (signed)"
            )
        if fixture.sha256 != old.sha256:
            hint = " (`unlock` is not an approval)" if fixture.unlock else ""
            rejected(
                f"fixture-rotate {old.id} {old.sha256} {fixture.sha256}",
                fixture.line,
                fixture.col,
                "OG404",
                f"lock '{old.id}' rotated from {old.sha256[:12]}… to {fixture.sha256[:12]}…{hint}",
            )
    return findings


def _early_prehash(argv: Sequence[str]) -> tuple[str, Prehash] | None:
    """Start hashing from the contract's raw bytes before anything heavy is imported."""
    if os.environ.get("PRE_COMMIT_TO_REF") or "--help" in argv or "-h" in argv:
        return None  # a target commit is hashed from git, not the work tree
    path = DEFAULT_CONTRACT
    for i, arg in enumerate(argv):
        if arg == "--contract" and i + 1 < len(argv):
            path = argv[i + 1]
        elif arg.startswith("--contract="):
            path = arg.partition("=")[2]
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block; main() reports it
            return None
        with open(path, "rb") as f:
            raw = f.read(64 * 1024 * 1024)
    except (OSError, ValueError):
        return None
    return os.getcwd(), Prehash(raw)


def check(ctx: HookContext) -> list[Finding]:
    from oracle_guard.contract import contract
    from oracle_guard.repo import git

    change_set = ctx.change_set
    target = change_set.target if change_set else None
    new_bytes = contract.bytes_at_new(target, ctx.contract)
    prehash = None
    if new_bytes and not target:  # digests from another folder or a target commit would not apply
        early = ctx.option("prehash")
        prehash = early[1] if early and early[0] == os.getcwd() else Prehash(new_bytes)
    new = None if new_bytes is None else contract.loads(new_bytes, ctx.contract)
    findings: list[Finding] = []
    if new is not None:
        findings += absolute_findings(new, target, prehash, change_set)
    if change_set is not None and change_set.base is None:
        notice("no commits yet: every lock is new")
    elif change_set is not None and change_set.base is not None:
        base_bytes = contract.bytes_at_base(change_set.base, ctx.contract)
        if base_bytes is not None and base_bytes != new_bytes:  # an unchanged contract cannot weaken a lock
            base = contract.base_from(base_bytes, ctx.contract)
            if base is not None and base.fixtures:
                from oracle_guard.contract.approvals import Approvals  # only a diff needs signatures

                approvals = Approvals.load(change_set, base, new)
                old_paths = [f.path for f in base.fixtures]
                if target:
                    exist = {p: v is not None for p, v in git.read_blobs(target, old_paths).items()}
                else:
                    exist = {p: os.path.lexists(p) for p in old_paths}
                findings += diff_findings(base, new, approvals, exist)
    return findings


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    early = _early_prehash(argv)
    from oracle_guard.repo import changes
    from oracle_guard.rules import args as hook_args

    parser = hook_args.parser("fixture-lock-verify", __doc__)
    hook_args.add_filenames(parser, "ignored: every lock is verified")
    hook_args.add_base(parser)
    parser.add_argument(
        "--no-diff", action="store_true", help="only verify digests and paths; do not compare with a base"
    )
    hook_args.add_contract(parser)
    hook_args.add_format(parser)
    args = parser.parse_args(argv)
    changes.enter_repo([])
    ctx = hook_args.context(args, None if args.no_diff else changes.resolve(args), prehash=early)
    return hook_args.finish(ctx, lambda: check(ctx), "fixture-lock-verify")


if __name__ == "__main__":
    raise SystemExit(main())
