"""Whose doing a collection that was not judged is: the change's (a finding) or the base's, user's, system's (exit 2).

- OG807: a test module cannot import a third-party module its base version imported too, and the change
  removed that module's mention from a file that declares what the environment installs.
- OG808: the collection outlived its limit, OG809: it flooded its output; the change's when it touches
  code that runs at collection (a Python file, a pytest configuration).
"""

from __future__ import annotations

import os
import re

from oracle_guard.pytest_side.collection import output
from oracle_guard.pytest_side.collection.partial import relevant
from oracle_guard.repo import changes
from oracle_guard.reporting.findings import Finding

# Files that decide what the project's environment installs (pip, tox, nox, pre-commit, CI, lock files).
_DECLARING = {
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    "tox.ini",
    "noxfile.py",
    "Pipfile",
    "environment.yml",
    "environment.yaml",
    ".pre-commit-config.yaml",
    ".gitlab-ci.yml",
}
_DECLARING_PATTERN = re.compile(r"(^|/)(\S*requirements\S*\.(txt|in)|constraints\S*\.txt|[^/]+\.lock|requirements/.+)$")


def _touched(change_set: changes.ChangeSet) -> list[str]:
    renamed = [c.old_path for c in change_set.changes if c.old_path and c.old_path != c.path]
    return list(dict.fromkeys([*change_set.changed_paths, *change_set.deleted, *renamed]))


def declares(path: str) -> bool:
    """Whether PATH says what the environment installs (a CI workflow installs too)."""
    name = path.rpartition("/")[2]
    if name in _DECLARING or _DECLARING_PATTERN.search(path):
        return True
    return path.startswith(".github/workflows/") and path.endswith((".yml", ".yaml"))


def _names(text: bytes) -> set[str]:
    """The words of TEXT as package names compare (PEP 503: case and runs of -_. do not matter)."""
    return {re.sub(r"[-_.]+", "-", w.decode("ascii").lower()) for w in re.findall(rb"[A-Za-z0-9][A-Za-z0-9._-]*", text)}


def removed_from(module: str, change_set: changes.ChangeSet) -> str | None:
    """The file that declared MODULE at the base and, after the change, does not (or is gone); None otherwise."""
    wanted = {re.sub(r"[-_.]+", "-", n.lower()) for n in (module, module.split(".")[0])}
    for path in _touched(change_set):
        if not declares(path):
            continue
        old = change_set.old_path(path) or path
        before = change_set.read_base([old])[old]
        if before is None or not wanted & _names(before):
            continue
        after = changes.read_worktree_file(path) if os.path.lexists(path) else None
        if after is None or not wanted & _names(after):
            return path
    return None


def missing_module(module: str, python: str, change_set: changes.ChangeSet, snapshot: str) -> Finding | None:
    """OG807 when the change removed MODULE from what installs the environment; None: the environment's (exit 2)."""
    path = removed_from(module, change_set)
    if path is None:
        return None
    text = (
        f"pytest in {python} cannot import '{module}', which a test imported at the base too: the change removed it"
        f" from {path}, which declares what the environment installs"
    )
    return Finding(path if os.path.exists(path) else snapshot, 1, 1, "OG807", text)


def not_installed(module: str, python: str, change_set: changes.ChangeSet) -> str:
    """The one line for a module the environment lacks and the change did not remove."""
    edited = [p for p in _touched(change_set) if declares(p)]
    why = (
        f"the change edits {', '.join(edited[:3])} but removes no mention of it"
        if edited
        else "the change touches no file that declares dependencies"
    )
    return (
        f"pytest in {python} cannot import '{module}', which is not part of this repository ({why}): install the"
        f" distribution that provides '{module}' (the project's test dependencies) there, or pass --python PATH to"
        " the interpreter that has it"
    )


def ran_at_collection(change_set: changes.ChangeSet) -> list[str]:
    """The paths the change touches that run at collection (Python files, pytest configuration)."""
    return [p for p in _touched(change_set) if relevant(p, set())]


def _waited(stderr: bytes) -> tuple[str, int] | None:
    """The innermost frame of faulthandler's dump that lies in this repository (not a virtualenv in it)."""
    top = os.path.realpath(".")
    for path, line in output.waited_at(stderr):
        real = os.path.realpath(path)
        if real.startswith(top + os.sep) and "site-packages" not in real.split(os.sep):
            return os.path.relpath(real, top).replace(os.sep, "/"), line
    return None


def stopped(exc: output.Stopped, change_set: changes.ChangeSet, snapshot: str) -> Finding | None:
    """OG808 (hung) or OG809 (flooded) when the change touches code that runs at collection; None: exit 2."""
    ran = ran_at_collection(change_set)
    if not ran:
        return None
    shown = ", ".join(ran[:3]) + (f" and {len(ran) - 3} more" if len(ran) > 3 else "")
    if not exc.hung:
        last = output.last_line(exc.stderr)
        text = f"{exc}, and was stopped; the change's code runs there ({shown})" + (
            f"; it ended: {last}" if last else ""
        )
        return Finding(snapshot, 1, 1, "OG809", text)
    at = _waited(exc.stderr)
    where = (
        f"it was waiting at {at[0]}:{at[1]}"
        if at
        else "where it waited is unknown (no stack dump reached the hook: the code may have disarmed it)"
    )
    text = f"{exc} and was stopped after {exc.seconds:.0f} s: {where}; the change's code runs there ({shown})"
    return Finding(at[0] if at else snapshot, at[1] if at else 1, 1, "OG808", text)
