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
import stat
from collections.abc import Sequence
from typing import Callable

from oracle_guard.repo import git
from oracle_guard.repo.paths import DEFAULT_CONTRACT
from oracle_guard.repo.paths import MAX_FILE_BYTES as MAX_FILE_BYTES
from oracle_guard.repo.paths import MAX_FILE_BYTES_SETTING as MAX_FILE_BYTES_SETTING
from oracle_guard.reporting.report import Finding, UsageError


def add_base_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--base",
        metavar="REV",
        help="compare with this revision (its merge base with HEAD); "
        "default: PRE_COMMIT_FROM_REF, else the staged change against HEAD",
    )


class ChangeSet:
    def __init__(
        self,
        base: str | None,
        base_label: str,
        target: str | None,
        changes: list[git.Change] | None = None,
        special: dict[str, str] | None = None,
    ) -> None:
        self.base = base  # commit the change is compared with; None: no history yet
        self.base_label = base_label  # the revision as the user named it, for messages
        self.target = target  # commit holding the new side; None: the work tree
        self.changes = changes or []
        # New paths that are no longer regular files (symlink, submodule, FIFO...) -> what they are.
        # Their change is recorded as the base file's deletion: nothing in them can be checked.
        self.special = special or {}
        self._by_new = {c.path: c for c in self.changes if c.path}
        self._base_blobs: dict[str, bytes | None] = {}
        self._new_blobs: dict[str, bytes | None] = {}
        self._head: tuple[str | None] | None = None  # (HEAD's commit,) once known
        self.staged = False  # the index against HEAD: what `git commit` is about to record

    def head(self) -> str | None:
        """The commit HEAD named when this change set was resolved (git is asked once, not per hook)."""
        if self._head is None:
            self._head = (git.head(),)
        return self._head[0]

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

    def read_base(self, paths: Sequence[str]) -> dict[str, bytes | None]:
        """Base contents keyed by the base path."""
        if not self.base:
            return {p: None for p in paths}
        return self._cached(self._base_blobs, paths, lambda missing: git.read_blobs(self.base or "", missing))

    def read_contract_base(self, path: str, reader: Callable[[str | None, str], bytes | None]) -> bytes | None:
        """The contract's bytes at the base, read by READER, the one fail-closed reader (contract.bytes_at_base).

        The reader is passed in because the contract layer sits above this one; an in-memory change set
        answers from its own trees instead.
        """
        return reader(self.base, path)

    def read_new(self, paths: Sequence[str]) -> dict[str, bytes | None]:
        """New contents keyed by path: the work tree, or the target commit."""
        if self.target:
            target = self.target
            return self._cached(self._new_blobs, paths, lambda missing: git.read_blobs(target, missing))
        return {p: read_worktree_file(p) for p in paths}  # the work tree can change under us (the snapshot)

    def _cached(
        self, cache: dict[str, bytes | None], paths: Sequence[str], read: Callable[[list[str]], dict[str, bytes | None]]
    ) -> dict[str, bytes | None]:
        # Every hook of one run reads the same blobs: ask git once per path.
        missing = [p for p in dict.fromkeys(paths) if p not in cache]
        if missing:
            cache.update(read(missing))
        return {p: cache.get(p) for p in paths}


def worktree_kind(path: str) -> str | None:
    """None for a regular file (or nothing) at PATH; else what is there instead, for messages."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:  # a name too long, a loop in a parent folder...
        raise UsageError(f"{path}: cannot be read ({exc.strerror})") from None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "directory (a submodule?)"
    return "FIFO" if stat.S_ISFIFO(mode) else "special file"


# The run's reader of the base contract's max_file_bytes (rules/args.py `context` sets it, enter_repo clears it):
# asked only for a file over the default, so no run pays for it otherwise.
_file_limit: list[Callable[[], int]] = []


def use_file_limit(reader: Callable[[], int] | None) -> None:
    _file_limit[:] = [reader] if reader is not None else []


def read_worktree_file(path: str) -> bytes | None:
    """Bytes of a regular file in the work tree; None if absent or anything else.

    Only lstat and an O_NONBLOCK|O_NOFOLLOW open: a symlink is never followed
    and a FIFO or device never blocks the hook.  A file over MAX_FILE_BYTES is
    read only when the base contract's max_file_bytes allows it, else exit 2.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    except OSError as exc:
        if os.path.islink(path):  # O_NOFOLLOW refused it (ELOOP)
            return None
        raise UsageError(f"{path}: cannot be read ({exc.strerror})") from None
    info = os.fstat(fd)
    regular = stat.S_ISREG(info.st_mode)
    limit = MAX_FILE_BYTES
    if regular and info.st_size > limit and _file_limit:
        try:
            limit = _file_limit[0]()
        except BaseException:
            os.close(fd)
            raise
    if not regular or info.st_size > limit:
        os.close(fd)
        if regular:
            raise TooBig(path, info.st_size, limit)
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read()


class TooBig(UsageError):
    """A file of the change over the limit: the gate cannot judge it, so it is a finding against it (OG929).

    Exit 2 ("nothing was judged") was the change's to cause: a CI that reads it as neutral let through a
    change that committed one big file beside the cheat.  Still a UsageError where no verdict is made."""

    def __init__(self, path: str, size: int, limit: int) -> None:
        super().__init__(too_big(path, size, limit))
        self.path = path

    def finding(self) -> Finding:
        return Finding(self.path, 1, 1, "OG929", f"{self}; the gate cannot judge it, so the change is refused")


def too_big(path: str, size: int, limit: int) -> str:
    """The one line for a file over the limit, with both ways on (docs/contract.md#checked-file-size)."""
    raise_it = (
        f"raise `max_file_bytes` in the contract (up to {MAX_FILE_BYTES_SETTING}; the base's value counts, "
        "so land the raise first), or "
        if limit < MAX_FILE_BYTES_SETTING
        else ""
    )
    return (
        f"{path}: {size} bytes is over the {limit}-byte limit for a checked file; {raise_it}"
        "build the generated file instead of committing it (docs/contract.md#checked-file-size)"
    )


def _regular_only(changes: list[git.Change], target: str | None) -> tuple[list[git.Change], dict[str, str]]:
    """Changes whose new side is not a regular file become the base file's deletion.

    In a commit git's mode says it (120000 symlink, 160000 submodule); in the
    work tree lstat does (git never stages a FIFO, but pytest would read one).
    """
    kept: list[git.Change] = []
    special: dict[str, str] = {}
    for change in changes:
        kind = None
        if change.path is not None:
            if target or change.new_mode in ("120000", "160000"):
                kind = {"120000": "symlink", "160000": "submodule"}.get(change.new_mode)
            if kind is None and not target:
                kind = worktree_kind(change.path)
        if kind is None or change.path is None:  # (a kind is only found for a path)
            kept.append(change)
            continue
        special[change.path] = kind
        if change.old_path is not None:
            kept.append(git.Change("D", None, change.old_path))
    return kept, special


def enter_repo(filenames: list[str]) -> list[str]:
    """Move to the repository's top folder; return FILENAMES relative to it.

    Paths that leave the repository (``..``, absolute elsewhere) are refused.
    """
    use_file_limit(None)  # a new run: its context names its own base
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


def _fetch_hint(rev: str) -> str:
    """A fetch command that makes REV exist here (a branch name gets its remote-tracking ref)."""
    remote, _, branch = rev.partition("/")
    if branch and remote in ("origin", "upstream"):
        return f"`git fetch {remote} {branch}:refs/remotes/{remote}/{branch}`"
    return f"`git fetch origin {rev}`"


def _verified(rev: str) -> str:
    commit = git.commit_of(rev)
    if commit:
        return commit
    if git.is_shallow():
        raise UsageError(
            f"base revision '{rev}' is not in this shallow clone; fetch it first "
            f"({_fetch_hint(rev)}, then `git fetch --deepen=200` or `git fetch --unshallow` if its history is missing)"
        )
    raise UsageError(f"base revision '{rev}' does not exist (fetch it: {_fetch_hint(rev)}; or check the name)")


def ci_base(env: dict[str, str] | None = None) -> str | None:
    """The base for the merge gate in CI when none was named, or None to use the usual order.

    On a detached HEAD with nothing staged (a CI checkout) the staged change is
    empty, so comparing with HEAD would always pass: there, a pull request's
    GITHUB_BASE_REF is the base, and without one the gate refuses to guess.
    """
    env = dict(os.environ) if env is None else env
    if not (env.get("CI") or env.get("GITHUB_ACTIONS")):
        return None
    if "ORACLE_GUARD_BASE" in env or env.get("PRE_COMMIT_FROM_REF"):
        return None
    if git.ok("symbolic-ref", "-q", "HEAD") or git.head() is None:
        return None  # on a branch, or no commits yet: the staged change is the change
    if git.run("diff", "--cached", "--name-only", "-z", "HEAD").strip(b"\0"):
        return None
    ref = env.get("GITHUB_BASE_REF", "").strip()
    if ref:
        return f"origin/{ref}"
    raise UsageError(
        "in CI on a detached HEAD with nothing staged there is no change to judge: "
        "pass the base, e.g. `oracle-guard check --base origin/main` (or set ORACLE_GUARD_BASE)"
    )


def resolve(args: argparse.Namespace, env: dict[str, str] | None = None) -> ChangeSet:
    """The change to check; call from the repository's top folder (enter_repo).

    A `--contract PATH` outside the repository, or one given explicitly that
    exists on neither side, is one clear error before anything reads it.
    """
    contract = getattr(args, "contract", None)
    if isinstance(contract, str):
        _inside(contract)
    change_set = _resolve(args, env)
    if isinstance(contract, str) and contract != DEFAULT_CONTRACT and not os.path.lexists(contract):
        sides = [change_set.read_base([contract])[contract] if change_set.base else None]
        if change_set.target:
            sides.append(change_set.read_new([contract])[contract])
        if all(side is None for side in sides):
            where = f"the work tree or at {change_set.base_label}" if change_set.base else "the work tree"
            raise UsageError(
                f"--contract {contract}: no such file in {where}; pass the contract's path from the repository's top "
                f"(default {DEFAULT_CONTRACT}), or run `oracle-guard init --contract {contract}`"
            )
    return change_set


def _inside(contract: str) -> None:
    parts = contract.replace("\\", "/").split("/")
    if not contract or os.path.isabs(contract) or ".." in parts:
        raise UsageError(
            f"--contract {contract}: must be a path inside the repository, relative to its top (default {DEFAULT_CONTRACT})"
        )


def _resolve(args: argparse.Namespace, env: dict[str, str] | None = None) -> ChangeSet:
    env = dict(os.environ) if env is None else env
    given = getattr(args, "base", None)
    if given is not None and not given.strip():
        raise UsageError("--base is empty: name the revision to compare with, e.g. --base origin/main")
    if "ORACLE_GUARD_BASE" in env and not env["ORACLE_GUARD_BASE"].strip() and given is None:
        raise UsageError("ORACLE_GUARD_BASE is set but empty: name the revision to compare with, or unset it")
    head = git.head()
    explicit = given or env.get("ORACLE_GUARD_BASE")
    from_ref, to_ref = env.get("PRE_COMMIT_FROM_REF"), env.get("PRE_COMMIT_TO_REF")

    label = explicit or from_ref
    if label:
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
                    "(run `git fetch --deepen=200` until it is found, or `git fetch --unshallow`)"
                )
            base = mb or base
        changes = git.diff(base, target, cached=False)
        # The work tree against an explicit base (the gate): files not yet added count as new.
        # pre-commit's range (pre-push) is about commits: files git does not track are not pushed.
        if target is None and explicit:
            changes += [git.Change("A", p, None) for p in git.untracked()]
        resolved = ChangeSet(base, label, target, *_regular_only(changes, target))
        resolved._head = (head,)
        return resolved

    if head is None:  # first commit: compare with nothing
        changes = git.diff(git.empty_tree(), None, cached=True)
        return ChangeSet(None, "(no commits yet)", None, *_regular_only(changes, None))
    staged = ChangeSet(head, "HEAD", None, *_regular_only(git.diff(head, None, cached=True), None))
    staged.staged = True
    return staged


def write_atomic(path: str, data: bytes) -> None:
    """Replace PATH with DATA in one rename: a reader sees the old file or the new, never half.

    A symlink at PATH is replaced, never written through; the file's mode is kept.
    """
    import tempfile

    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.lstat(path).st_mode) if os.path.isfile(path) and not os.path.islink(path) else None
    except OSError:
        mode = None
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def same_line_endings(text: str, like: bytes | None) -> str:
    """TEXT (with \\n line ends) spelled with CRLF when LIKE, the file it replaces, uses CRLF."""
    if like and b"\r\n" in like:
        return text.replace("\r\n", "\n").replace("\n", "\r\n")
    return text
