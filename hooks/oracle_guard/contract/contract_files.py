"""The contract file's bytes, read one way per side (part of contract.py).

A regular file in the work tree (a symlink, or a symlinked folder on the way, is
refused, not followed), or a blob committed at a revision (a symlink, submodule or
folder there is refused too).  None means nothing at all is at the path; anything
else that is not a readable regular file is a ContractError (exit 2): a contract
that quietly stops being one must never read as "no contract".  No YAML here.
"""

from __future__ import annotations

import os
import posixpath
import stat

from oracle_guard.repo.paths import DEFAULT_CONTRACT, folders_above
from oracle_guard.reporting.report import UsageError

DEFAULT_PATH = DEFAULT_CONTRACT
MAX_CONTRACT_BYTES = 16 * 1024 * 1024  # ~100,000 locks; more is a mistake or an attack


class ContractError(UsageError):
    pass


def read_file(path: str, what: str = "contract file") -> bytes | None:
    """Bytes of the regular file at PATH (a symlink to one is followed), None if absent.

    A directory, FIFO, device, symlink loop or over-long name is one clear
    ContractError; the O_NONBLOCK open means a FIFO never blocks the hook.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ContractError(f"{path}: is a directory, not a {what}") from None
    except (OSError, ValueError) as exc:
        raise ContractError(f"{path}: cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise ContractError(
            f"{path}: is a {'directory' if stat.S_ISDIR(mode) else 'FIFO or special file'}, not a {what}"
        )
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_CONTRACT_BYTES + 1)
    return data


# -- the one reader per side -----------------------------------------------------------
#
# Every hook reads the contract through these: None means nothing at all is at
# the path; anything that is there but not a regular file (a symlink, a
# directory, a submodule, a FIFO) or cannot be read is a ContractError (exit 2).
# A contract that quietly stops being one must never read as "no contract".

_KINDS = {"120000": "symlink", "160000": "submodule", "040000": "directory"}
_COMMITTED: dict[tuple[str, str], bytes | None] = {}  # (commit id, path): commits never change


def bytes_at(rev: str, path: str) -> bytes | None:
    """The contract's bytes as committed at REV; None if nothing is there (fail closed otherwise)."""
    key = (rev, path)
    if key in _COMMITTED:
        return _COMMITTED[key]
    from oracle_guard.repo import git  # only diff-based callers need git

    data = git.read_blobs(rev, [path]).get(path)
    # cat-file reads a symlink's target as a blob and a tree or submodule as nothing: ask for the mode.
    listed = [
        r for r in git.run("--literal-pathspecs", "ls-tree", "-z", "--full-tree", rev, "--", path).split(b"\0") if r
    ]
    wanted = posixpath.normpath(path)
    for record in listed:
        meta, _, name = record.partition(b"\t")
        mode = meta.split()[0].decode()
        if os.fsdecode(name) == wanted and mode in _KINDS:
            raise ContractError(f"{path}: is a {_KINDS[mode]} at {rev[:12]}, not a contract file")
    if data is None and listed:  # something is there, but not a file git can read as one
        raise ContractError(f"{path}: is not a file at {rev[:12]}, not a contract file")
    if data is None:
        _no_folder_in_the_way(rev, wanted)
    if git.OBJECT_ID.match(rev):  # a full object id names bytes that never change
        _COMMITTED[key] = data
    return data


def _no_folder_in_the_way(rev: str, path: str) -> None:
    """Nothing at PATH in REV: fail closed if that is because a folder on the way is a symlink or submodule.

    git stores a symlinked folder as one link, so the file behind it is absent from the tree while a
    checkout (and pytest) still finds one there: the contract moved out of reach, not removed.
    """
    from oracle_guard.repo import git

    folders = folders_above(path)
    if not folders:
        return
    out = git.run("--literal-pathspecs", "ls-tree", "-z", "--full-tree", rev, "--", *folders)
    for record in (r for r in out.split(b"\0") if r):
        meta, _, name = record.partition(b"\t")
        mode = meta.split()[0].decode()
        if os.fsdecode(name) in folders and mode != "040000":  # ls-tree also lists what lies beside them
            kind = _KINDS.get(mode, "file")
            raise ContractError(
                f"{path}: {os.fsdecode(name)}/ is a {kind} at {rev[:12]}, not a folder holding the contract"
            )


def bytes_in_work_tree(path: str) -> bytes | None:
    """The contract's bytes in the work tree; None if absent.  A symlink is refused, not followed.

    So is a symlinked folder on the way: the contract would be read from wherever it points.
    """
    folder = "" if os.path.isabs(path) else os.path.dirname(path)  # contract paths are inside the repository
    while folder:
        try:
            if stat.S_ISLNK(os.lstat(folder).st_mode):
                raise ContractError(f"{path}: {folder}/ is a symlink, not a folder holding the contract")
        except (FileNotFoundError, NotADirectoryError):
            pass
        except (OSError, ValueError):
            break  # read_file names the problem
        folder = os.path.dirname(folder)
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise ContractError(f"{path}: is a symlink, not a contract file (commit the contract itself)")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError):
        pass  # read_file names the problem
    return read_file(path)


def bytes_at_base(rev: str | None, path: str = DEFAULT_PATH) -> bytes | None:
    """The contract's bytes at the base revision (None: no base, or no contract there)."""
    return bytes_at(rev, path) if rev else None


def bytes_at_new(target: str | None, path: str = DEFAULT_PATH) -> bytes | None:
    """The contract's bytes on the new side of a change: the target commit, or the work tree."""
    return bytes_at(target, path) if target else bytes_in_work_tree(path)
