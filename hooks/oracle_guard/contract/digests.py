"""Fixture digests: what a lock's sha256 is, for a file, a directory or a commit.

A file hashes its raw bytes (CRLF counts, mtime never does); a directory
hashes its manifest (sorted ``<sha256>  <relative path>`` lines of every
file git would commit there).  A path is refused (Escape) when absolute,
holding ``..``, or resolving through a symlink out of its fixtures root.
fixture-lock-verify checks locks with it and `oracle-guard init`/`lock`
writes them, so neither imports the other.  Standard library only (and git
when asked): fixture-lock-verify starts hashing before anything heavy loads.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oracle_guard.contract import contract

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
    from oracle_guard.repo import git

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


def forget_folders() -> None:
    """Drop resolved folders: symlinks may have changed since an earlier run in this process."""
    _REAL_FOLDERS.clear()


@contextlib.contextmanager
def same_cwd() -> Iterator[None]:
    """Ask os.getcwd() once for every check_path inside."""
    _CWD.append(os.getcwd())
    try:
        yield
    finally:
        _CWD.pop()


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


def digests_at(target: str, fixtures: Sequence[contract.Fixture]) -> dict[str, str | None]:
    """Digests of the fixtures as committed in TARGET (pre-push / --to-ref of another commit)."""
    from oracle_guard.repo import git

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
