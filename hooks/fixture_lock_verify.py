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

import hashlib
import os
import re
import stat
import sys
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from hooks.report import Finding, UsageError, guarded, notice

if TYPE_CHECKING:
    from hooks import changes, contract
    from hooks.approvals import Approvals
    from hooks.context import HookContext

# hooks.contract (PyYAML) and hooks.changes are imported inside functions: main()
# starts hashing before paying for them, so the imports overlap the I/O.
DEFAULT_CONTRACT = "tests/agent_contract.yaml"  # = hooks.contract.DEFAULT_PATH

CHUNK = 1 << 20
WORKERS = max(1, min(4, os.cpu_count() or 1))


class Escape(Exception):
    """A fixture path that leaves where it may live."""


# -- hashing -------------------------------------------------------------------


def _file_digest(path: str) -> str:
    with open(path, "rb", buffering=0) as f:
        if sys.version_info >= (3, 11):  # hashlib.file_digest: C loop, GIL released
            return hashlib.file_digest(f, "sha256").hexdigest()
        h = hashlib.sha256()
        buf = bytearray(CHUNK)
        view = memoryview(buf)
        while True:
            n = f.readinto(buf)
            if not n:
                return h.hexdigest()
            h.update(view[:n])


def hash_files(paths: Iterable[str], workers: int = 1) -> dict[str, str]:
    """sha256 of many files; hashlib releases the GIL, so threads overlap I/O and hashing."""
    paths = list(paths)
    if workers < 2 or len(paths) < 2:
        return {p: _file_digest(p) for p in paths}
    # One interleaved share per thread: cheaper than a future per file, and
    # plain threads start faster than importing concurrent.futures.
    result: dict[str, str] = {}
    errors: list[BaseException] = []

    def work(share: list[str]) -> None:
        try:
            result.update((p, _file_digest(p)) for p in share)
        except BaseException as exc:  # re-raised in the caller's thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(paths[i::workers],)) for i in range(1, workers)]
    for thread in threads:
        thread.start()
    work(paths[0::workers])
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return result


def manifest_digest(entries: dict[str, str]) -> str:
    """The digest of a directory: sha256 of sorted '<sha256>  <relative path>' lines."""
    lines = "".join(
        f"{entries[rel]}  {rel}\n" for rel in sorted(entries, key=lambda p: p.encode("utf-8", "surrogateescape"))
    )
    return hashlib.sha256(lines.encode("utf-8", "surrogateescape")).hexdigest()


def directory_files(folder: str) -> list[str]:
    """Repo-relative files under FOLDER that git would commit (tracked or not ignored)."""
    from hooks import git

    out = git.run("ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", folder.rstrip("/") + "/")
    names = sorted({os.fsdecode(n) for n in out.split(b"\0") if n})
    return [n for n in names if os.path.lexists(n)]  # deleted but not yet staged: gone


_REAL_FOLDERS: dict[tuple[str, str], str] = {}
_CWD: list[str] = []


def _cwd() -> str:
    """os.getcwd(), asked once per check_path batch rather than per lock."""
    return _CWD[-1] if _CWD else os.getcwd()


def _real(path: str) -> str:
    """realpath(PATH), resolving each parent folder once: 1,000 locks share a few folders."""
    folder, _, name = path.rpartition("/")
    key = (_cwd(), folder)
    if key not in _REAL_FOLDERS:
        _REAL_FOLDERS[key] = os.path.realpath(folder or ".")
    inside = os.path.join(_REAL_FOLDERS[key], name) if name else _REAL_FOLDERS[key]
    return os.path.realpath(inside) if os.path.islink(inside) else inside


def check_path(path: str, roots: Sequence[str]) -> None:
    """Refuse absolute paths, `..`, and symlinks that resolve out of the fixtures root."""
    if path.startswith("/") or os.path.isabs(path) or (len(path) > 1 and path[1] == ":"):
        raise Escape("is absolute; lock paths are relative to the repository root")
    if ".." in path.split("/"):
        raise Escape("contains '..'")
    root = next((r.rstrip("/") for r in roots if path == r.rstrip("/") or path.startswith(r.rstrip("/") + "/")), None)
    top = _real("")
    allowed = _real(root) if root else top
    if allowed != top and not allowed.startswith(top.rstrip(os.sep) + os.sep):
        root, allowed = None, top  # a root outside the repository widens nothing
    real = _real(path.rstrip("/"))
    if real != allowed and not real.startswith(allowed.rstrip(os.sep) + os.sep):
        where = f"its fixtures root {root}/" if root else "the repository"
        raise Escape(f"resolves through a symlink to {real}, outside {where}")


def digest_of(path: str, roots: Sequence[str], workers: int = WORKERS) -> str | None:
    """The lock digest of PATH in the work tree (file or directory), None if missing."""
    check_path(path, roots)
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISDIR(mode):
        files = directory_files(path)
        prefix = path.rstrip("/") + "/"
        for name in files:
            if not stat.S_ISREG(os.lstat(name).st_mode):
                raise Escape(f"holds a symlink or special file ({name}); a locked directory may hold only files")
        digests = hash_files(files, workers)
        return manifest_digest({name[len(prefix) :]: digests[name] for name in files})
    if not stat.S_ISREG(mode):  # a FIFO or device would block or never end
        raise Escape("is not a regular file or directory")
    return _file_digest(path)


# -- the work tree, or a commit ------------------------------------------------


def _digests_at(target: str, fixtures: Sequence[contract.Fixture]) -> dict[str, str | None]:
    """Digests of the fixtures as committed in TARGET (pre-push / --to-ref of another commit)."""
    from hooks import git

    out = git.run("ls-tree", "-r", "-z", target)
    tree: dict[str, tuple[str, str]] = {}
    for record in out.split(b"\0"):
        if record:
            meta, _, name = record.partition(b"\t")
            mode, _, rest = meta.decode().partition(" ")
            tree[os.fsdecode(name)] = (mode, rest.split()[-1])
    result: dict[str, str | None] = {}
    for fixture in fixtures:
        prefix = fixture.path.rstrip("/") + "/"
        if fixture.path in tree:
            if tree[fixture.path][0] == "120000":
                raise Escape("is a symlink in the commit")
            data = git.read_blobs(target, [fixture.path])[fixture.path] or b""
            result[fixture.id] = hashlib.sha256(data).hexdigest()
            continue
        inside = sorted(n for n in tree if n.startswith(prefix))
        if not inside:
            result[fixture.id] = None
            continue
        if any(tree[n][0] == "120000" for n in inside):
            raise Escape("holds a symlink; a locked directory may hold only files")
        blobs = git.read_blobs(target, inside)
        result[fixture.id] = manifest_digest(
            {n[len(prefix) :]: hashlib.sha256(blobs[n] or b"").hexdigest() for n in inside}
        )
    return result


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
    _REAL_FOLDERS.clear()  # symlinks may have changed since an earlier run in this process
    _CWD.append(os.getcwd())
    try:
        for fixture in c.fixtures:
            try:
                check_path(fixture.path, c.fixture_roots)
                checked.append(fixture)
            except Escape as exc:
                findings.append(
                    _entry_finding(c, fixture, "OG403", f"fixture '{fixture.id}': path {fixture.path} {exc}")
                )
    finally:
        _CWD.pop()
    try:
        if target:
            actual = _digests_at(target, checked)
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


def _contract_bytes(target: str | None, path: str) -> bytes | None:
    if target:
        from hooks import git

        return git.read_blobs(target, [path]).get(path)
    from hooks import contract

    return contract.read_file(path)


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
    from hooks import contract, git

    change_set = ctx.change_set
    target = change_set.target if change_set else None
    new_bytes = _contract_bytes(target, ctx.contract)
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
        base_bytes = git.read_blobs(change_set.base, [ctx.contract]).get(ctx.contract)
        if base_bytes is not None and base_bytes != new_bytes:  # an unchanged contract cannot weaken a lock
            base = contract.load_at(change_set.base, ctx.contract)
            if base is not None and base.fixtures:
                from hooks.approvals import Approvals  # only a diff needs signatures

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
    from hooks import args as hook_args
    from hooks import changes

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
    return hook_args.finish(ctx, check(ctx), "fixture-lock-verify")


if __name__ == "__main__":
    raise SystemExit(main())
