"""Landlock through ctypes, and the launcher that restricts itself and then becomes the confined command.

Run as a script (``python -I -S landlock.py --write DIR ... --write-file FILE ... -- CMD ...``) it takes
Landlock's rules for itself and ``execvp``s CMD, which keeps them, as does every process CMD starts:
everything stays readable and executable, writes go only to the named folders and files (and a few
devices a Python process needs), and from ABI 6 on, signals and abstract unix sockets cannot leave the
process's own domain (the gate's and the base's processes are outside it).  A launcher rather than
``preexec_fn``: the mutation probe starts processes from threads, where ``preexec_fn`` may deadlock.

This file imports nothing but the standard library: it runs in the gate's own interpreter with ``-S``
(no site-packages).  No maintained binding is used: the PyPI ``landlock`` package is not always
installable, and three syscalls and one prctl are less to trust than a dependency.
"""

from __future__ import annotations

import ctypes
import os
import platform
import stat
import sys
from collections.abc import Sequence

# The syscall numbers are the generic ones, shared by x86_64 and aarch64 (and most others since 5.x).
_SYSCALLS = {"create_ruleset": 444, "add_rule": 445, "restrict_self": 446}
_MACHINES = ("x86_64", "amd64", "aarch64", "arm64")
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_O_PATH = getattr(os, "O_PATH", 0)

# Filesystem access rights, by the ABI that brought them.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER = 1 << 13  # ABI 2: links and renames across folders
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6
_ABI1 = (1 << 13) - 1
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # the only ones a rule on a file may grant
READ = EXECUTE | READ_FILE | READ_DIR
# Devices any process may write (Python, pytest and subprocess open /dev/null for writing), and the shared
# memory folder multiprocessing's semaphores live in.
DEVICES = ("/dev/null", "/dev/zero", "/dev/full")
SHARED_FOLDERS = ("/dev/shm",)

RESTRICT_FAILED = 125  # the launcher's exit when it could not confine: the command never ran
NOT_RUN = 127


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux") or platform.machine().lower() not in _MACHINES:
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def abi() -> int:
    """Landlock's ABI version on this kernel, 0 when there is none (not Linux, too old, or switched off)."""
    libc = _libc()
    if libc is None:
        return 0
    version = int(libc.syscall(_SYSCALLS["create_ruleset"], None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION))
    return max(version, 0)


def handled_fs(version: int) -> int:
    """Every filesystem right the ABI knows: what is not granted below is denied."""
    rights = _ABI1
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    if version >= 5:
        rights |= IOCTL_DEV
    return rights


def scopes(version: int) -> int:
    return SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if version >= 6 else 0


def _fail(what: str) -> OSError:
    err = ctypes.get_errno()
    return OSError(err, f"{what}: {os.strerror(err)}")


def restrict(folders: Sequence[str], files: Sequence[str], shared: bool = False) -> int:
    """Confine this process (and what it starts) to writing FOLDERS and FILES; returns the ABI it used.

    SHARED: the shared memory folder too (only when nothing the gate keeps lies there).

    Raises OSError when it cannot: the caller must not run the command unconfined.
    """
    libc = _libc()
    version = abi()
    if libc is None or version < 1:
        raise OSError(0, "Landlock is not available on this system")
    handled = handled_fs(version)
    attr = _RulesetAttr(handled, 0, scopes(version))
    ruleset = int(
        libc.syscall(_SYSCALLS["create_ruleset"], ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), 0)
    )
    if ruleset < 0:
        raise _fail("landlock_create_ruleset")
    try:
        _add(libc, ruleset, "/", READ & handled)
        for device in DEVICES:
            if os.path.exists(device):
                _add(libc, ruleset, device, (READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV) & handled)
        for folder in [*folders, *(f for f in SHARED_FOLDERS if shared and os.path.isdir(f))]:
            _add(libc, ruleset, folder, handled)
        for path in files:
            _add(libc, ruleset, path, _FILE_RIGHTS & handled)
        if int(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) != 0:
            raise _fail("prctl(PR_SET_NO_NEW_PRIVS)")
        if int(libc.syscall(_SYSCALLS["restrict_self"], ruleset, 0)) != 0:
            raise _fail("landlock_restrict_self")
    finally:
        os.close(ruleset)
    return version


def _add(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    fd = os.open(path, _O_PATH | os.O_CLOEXEC)
    try:
        rule = _PathBeneathAttr(rights, fd)
        if int(libc.syscall(_SYSCALLS["add_rule"], ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0)) != 0:
            raise _fail(f"landlock_add_rule({path})")
    finally:
        os.close(fd)


def _close_inherited(keep: Sequence[int] = ()) -> None:
    """Close every descriptor but 0-2: Landlock governs what is opened, not what is already open.

    An inherited descriptor of a file outside the grants (a caller's ``pass_fds``, a leaked one)
    would stay writable; the result files are opened by the confined command itself, by name.
    KEEP: sockets the caller hands on (a probe's receipt socket, probes/receipts.py); never a file.
    """
    kept = {fd for fd in keep if _socket(fd)}
    try:
        open_now = [int(fd) for fd in os.listdir("/proc/self/fd")]  # the listing's own is closed after it
    except OSError:
        os.closerange(3, 65536)
        return
    for fd in open_now:
        if fd > 2 and fd not in kept:
            try:
                os.close(fd)
            except OSError:
                pass


def _socket(fd: int) -> bool:
    try:
        return stat.S_ISSOCK(os.fstat(fd).st_mode)
    except OSError:
        return False


def main(argv: Sequence[str]) -> int:
    """``--write DIR``/``--write-file FILE`` (repeated), ``--shared``, ``--failed FILE``, ``--keep FD``, ``-- CMD...``.

    Restrict, then become CMD.  ``--failed``: where to say why it could not confine (a file outside
    every folder it grants: the confined command cannot write it, so what it holds is the launcher's).
    """
    args = list(argv)
    folders: list[str] = []
    files: list[str] = []
    shared = False
    failed = ""
    keep: list[int] = []
    while args and args[0] != "--":
        flag = args.pop(0)
        if flag == "--shared":
            shared = True
            continue
        if flag == "--keep" and args and args[0].isdigit():
            keep.append(int(args.pop(0)))
            continue
        if flag not in ("--write", "--write-file", "--failed") or not args:
            print(f"oracle-guard confine: bad argument {flag!r}", file=sys.stderr)
            return NOT_RUN
        if flag == "--failed":
            failed = args.pop(0)
            continue
        (folders if flag == "--write" else files).append(args.pop(0))
    command = args[1:]
    if not command:
        print("oracle-guard confine: no command after --", file=sys.stderr)
        return NOT_RUN
    try:
        restrict(folders, files, shared)
    except OSError as exc:
        why = f"{exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}"
        print(f"oracle-guard confine: not run, it could not be confined: {why}", file=sys.stderr)
        if failed:
            try:
                with open(failed, "w", encoding="utf-8") as out:
                    out.write(why)
            except OSError:
                pass
        return RESTRICT_FAILED
    _close_inherited(keep)
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"oracle-guard confine: cannot run {command[0]}: {exc.strerror or exc}", file=sys.stderr)
    return NOT_RUN


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
