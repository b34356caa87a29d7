"""The gate's ground before it judges: the interpreter's installed files and no process left behind.

A CI job that runs the change's own tests before the gate lets the change's code act first: write a
``.pth`` or ``sitecustomize.py`` into site-packages (run by every later Python start, the gate's
pytest included), rewrite an installed module pytest imports, or leave a detached process that
writes into the gate's trees while they run.  Before any run, for the interpreter the gate will use:

- every file a distribution's ``RECORD`` lists with a hash has that hash (OG924);
- every start-up file of its site folders (``*.pth``, ``sitecustomize``, ``usercustomize``) is listed by
  a distribution's ``RECORD`` (or a legacy ``installed-files.txt``) (OG925);
- no process of this user is left running, orphaned (its parent gone: it was detached), with its folder,
  program or arguments in the work tree or the interpreter's virtualenv (OG926; Linux, from /proc).

Only folders this user can write are checked: a root-owned system site-packages is not the change's to
write.  The interpreter is asked for its folders with ``-I -S`` (no site, no start-up file runs).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterable

from oracle_guard.reporting.report import Finding

FOLDERS = """
import json, site, sys, sysconfig
paths = sysconfig.get_paths()
found = [paths.get("purelib"), paths.get("platlib")] + list(getattr(site, "getsitepackages", lambda: [])())
try:
    found.append(site.getusersitepackages())
except Exception:
    pass
print(json.dumps({"prefix": sys.prefix, "site": [p for p in found if p]}))
"""
STARTUP = ("sitecustomize", "usercustomize")


def site_folders(python: str) -> tuple[str, list[str]]:
    """The interpreter's prefix and its site folders that exist, asked with no start-up file run."""
    try:
        out = subprocess.run(
            [python, "-I", "-S", "-c", FOLDERS],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
            check=False,
        ).stdout
        data = json.loads(out)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return "", []  # the run itself says what is wrong with the interpreter
    prefix = str(data.get("prefix", ""))
    found = [p for p in data.get("site", []) if isinstance(p, str)]
    venv = os.path.dirname(os.path.dirname(os.path.abspath(python)))
    if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):  # with -S, site.py never made it the prefix
        own = [os.path.join(venv, os.path.relpath(p, prefix)) for p in found if _inside(p, [prefix])]
        found = own if _isolated_venv(venv) else [*own, *found]
        prefix = venv
    folders = [os.path.realpath(p) for p in found if os.path.isdir(p)]
    return prefix, list(dict.fromkeys(folders))


def _isolated_venv(prefix: str) -> bool:
    """Whether PREFIX is a virtualenv without the system's site-packages (pyvenv.cfg, as site.py reads it)."""
    try:
        with open(os.path.join(prefix, "pyvenv.cfg"), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return False
    for line in lines:
        key, eq, value = line.partition("=")
        if eq and key.strip().lower() == "include-system-site-packages":
            return value.strip().lower() != "true"
    return True


def _records(folder: str) -> tuple[dict[str, tuple[str, str]], set[str]]:
    """Of FOLDER's distributions: path -> (distribution, hash spec) for hashed files; every listed path."""
    hashed: dict[str, tuple[str, str]] = {}
    listed: set[str] = set()
    try:
        names = os.listdir(folder)
    except OSError:
        return hashed, listed
    for name in names:
        meta = os.path.join(folder, name)
        if name.endswith(".dist-info"):
            try:
                with open(os.path.join(meta, "RECORD"), encoding="utf-8", newline="") as f:
                    rows = list(csv.reader(f))
            except (OSError, csv.Error, UnicodeDecodeError):
                continue
            for row in rows:
                if not row or not row[0]:
                    continue
                path = os.path.normpath(os.path.join(folder, row[0]))
                listed.add(path)
                # Scripts beside the folder (``../../../bin``) are rewritten at install by some installers
                # (conda's prefix): only what the interpreter imports from here is held to its hash.
                if len(row) > 1 and "=" in row[1] and _inside(path, [folder]):
                    hashed[path] = (name[: -len(".dist-info")], row[1])
        elif name.endswith(".egg-info"):
            try:
                with open(os.path.join(meta, "installed-files.txt"), encoding="utf-8") as f:
                    listed.update(os.path.normpath(os.path.join(meta, line.strip())) for line in f if line.strip())
            except OSError:
                continue
    return hashed, listed


def _digest(path: str, spec: str) -> bool | None:
    """Whether PATH has the hash SPEC (``sha256=<urlsafe b64>``); None when it is gone or the algorithm unknown."""
    algorithm, _, expected = spec.partition("=")
    try:
        h = hashlib.new(algorithm)
    except ValueError:
        return None
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    return base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode() == expected.rstrip("=")


def _startup_files(folder: str) -> list[str]:
    found: list[str] = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return found
    for name in names:
        path = os.path.join(folder, name)
        if name.endswith(".pth") or name in (f"{s}.py" for s in STARTUP):
            found.append(path)
        elif name in STARTUP and os.path.isfile(os.path.join(path, "__init__.py")):
            found.append(os.path.join(path, "__init__.py"))
    return found


def installed(python: str, folders: list[str]) -> list[Finding]:
    """OG924 and OG925 for the writable site FOLDERS of PYTHON."""
    found: list[Finding] = []
    for folder in folders:
        if not os.access(folder, os.W_OK):
            continue  # not the change's to write
        hashed, listed = _records(folder)
        for path in _startup_files(folder):
            if os.path.normpath(path) not in listed:
                found.append(
                    Finding(
                        ".",
                        1,
                        1,
                        "OG925",
                        f"{path} runs at every start of {python} and no installed distribution's RECORD lists it:"
                        " it was put there after the install (by an earlier run of the change's code?), and the gate"
                        " would run in it. Remove it, reinstall the environment from the base's files, and run the"
                        " gate before the change's own tests (docs/ci.md)",
                    )
                )
        for path, (dist, spec) in sorted(hashed.items()):
            if _digest(path, spec) is False:
                found.append(
                    Finding(
                        ".",
                        1,
                        1,
                        "OG924",
                        f"{path} of the installed distribution {dist} differs from the hash its RECORD lists: the"
                        f" environment of {python} was changed after the install (by an earlier run of the change's"
                        " code?), and the gate would run in it. Reinstall the environment from the base's files"
                        f" (`{python} -m pip install --force-reinstall {dist.split('-')[0]}`), and run the gate"
                        " before the change's own tests (docs/ci.md)",
                    )
                )
    return found


def _ancestors() -> set[int]:
    found, pid = set(), os.getpid()
    while pid > 1 and pid not in found:
        found.add(pid)
        pid = _parent(pid)
    return found


def _stat(pid: int) -> tuple[int, int]:
    """(parent, session) of PID, from /proc; (0, 0) when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return 0, 0
    fields = stat[stat.rfind(b")") + 2 :].split()
    return (int(fields[1]), int(fields[3])) if len(fields) > 3 else (0, 0)


def _parent(pid: int) -> int:
    return _stat(pid)[0]


def _orphaned(pid: int, mine: set[int], sessions: set[int]) -> bool:
    """Whether PID outlived the process that started it: handed to init, or to a subreaper of ours (the gate
    is one once it ran, pytest_side/barrier.py) from a session none of ours is in (it detached)."""
    parent, session = _stat(pid)
    return parent == 1 or (parent in mine and session not in sessions)


def _inside(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def leftovers(roots: Iterable[str]) -> list[tuple[int, str]]:
    """(pid, what ties it to ROOTS) of this user's orphaned processes whose folder, program or arguments lie in ROOTS."""
    if not sys.platform.startswith("linux") or not os.path.isdir("/proc"):
        return []
    roots = [os.path.realpath(r) for r in roots if r]
    mine, uid = _ancestors(), os.getuid()
    sessions = {_stat(p)[1] for p in mine}
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in mine or int(name) == 1:
            continue
        pid = int(name)
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid or not _orphaned(pid, mine, sessions):
                continue  # another user's, or still its starter's child: not left behind
            cwd = os.readlink(f"/proc/{pid}/cwd")
            exe = os.readlink(f"/proc/{pid}/exe")
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = [os.fsdecode(a) for a in f.read().split(b"\0") if a]
        except OSError:
            continue
        if _inside(cwd, roots):
            found.append((pid, f"runs in {cwd}"))
        elif _inside(exe, roots):
            found.append((pid, f"runs {exe}"))
        elif any(_inside(a, roots) or _inside(os.path.realpath(a), roots) for a in argv if os.path.isabs(a)):
            found.append((pid, f"was started as `{' '.join(argv)[:200]}`"))
    return found


def check(python: str, top: str) -> list[Finding]:
    """The findings that the ground the gate stands on was changed before it ran (none: it may judge)."""
    prefix, folders = site_folders(python)
    found = installed(python, folders)
    roots = [top] + ([prefix] if prefix and os.path.isfile(os.path.join(prefix, "pyvenv.cfg")) else [])
    for pid, why in leftovers(roots):
        found.append(
            Finding(
                ".",
                1,
                1,
                "OG926",
                f"process {pid} is still running, detached, and {why}: left by an earlier run of the change's code?"
                " It could change the gate's trees or environment while they run. End it (`kill {pid}`), and run the"
                " gate before the change's own tests, in a fresh job (docs/ci.md)",
            )
        )
    return found
