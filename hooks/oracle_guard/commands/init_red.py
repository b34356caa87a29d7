"""`oracle-guard init`'s one run of the suite: the tests that fail at adoption are named, as the task.

Agents start on a red base (a stub, a bug report turned into a failing test).  init says how many tests
fail there and that they are the task: a change must make them pass as they are (`check --replay` judges
their base versions and ends with what became of them), never rewrite, skip or delete them.  The run is
pytest in the work tree, as the user runs it; what cannot run is said in one line, never fatal to init.
"""

from __future__ import annotations

import os
import re
import subprocess

from oracle_guard.repo.interpreters import candidate_interpreters

TIMEOUT_SECONDS = 900
# pytest's -rfE short summary: one line per failed or erroring test (or module that does not collect).
_RED_LINE = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M)
_COUNTS = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b")
ARGS = ("-m", "pytest", "-q", "-rfE", "--continue-on-collection-errors", "-p", "no:cacheprovider")


def own_module_not_importable(messages: list[str]) -> tuple[str, str] | None:
    """(name, where this repository holds it) when the errors' first ModuleNotFoundError names a module of this
    repository: the project is not installed in the interpreter (a src layout), not a red base to record."""
    from oracle_guard.hook_ids.collection_snapshot import _NO_MODULE
    from oracle_guard.repo import git

    for message in messages:
        match = _NO_MODULE.search(message)
        if match is None:
            continue
        name = match.group(1).split(".")[0]
        specs = [f":(glob)**/{name}/__init__.py", f":(glob)**/{name}.py"]
        listed = git.run("ls-files", "--cached", "-z", "--", *specs, check=False).split(b"\0")
        held = sorted(os.fsdecode(p) for p in listed if p)
        if held:
            return name, held[0]
    return None


def not_installed(name: str, where: str, python: str) -> str:
    """What to do when the project's own module does not import in PYTHON."""
    return (
        f"'{name}' does not import in {python}, though this repository holds it ({where}): the project is not"
        f" installed there. Install it (`{python} -m pip install -e .`) or point VIRTUAL_ENV at the environment"
        " that has it, then run `oracle-guard collection-snapshot --always`"
    )


def red_tests(python: str | None) -> str:
    """One line (or two) for init's report: how many tests fail here, and that they are the task."""
    if python is None:
        found = candidate_interpreters(None, dict(os.environ))
        if not found:
            return "not run: the suite (found no Python interpreter for this project)"
        python = found[0][0]
    try:
        proc = subprocess.run(
            (python, *ARGS),
            capture_output=True,
            text=True,
            errors="replace",
            stdin=subprocess.DEVNULL,
            timeout=TIMEOUT_SECONDS,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"not run: the suite with {python} ({exc}); `pytest` says which tests fail, and they are the task"
    tail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    counts: dict[str, int] = {}
    for n, what in _COUNTS.findall(tail):
        counts[what.rstrip("s") if what.startswith("error") else what] = int(n)
    red = sorted(set(_RED_LINE.findall(proc.stdout)))
    if proc.returncode not in (0, 1, 5) or (proc.returncode == 1 and not red):
        return f"not run: the suite with {python} (pytest exited {proc.returncode}: {tail or 'no output'})"
    total = sum(counts.values())
    errors = [line for line in proc.stdout.splitlines() if line.startswith("ERROR ")]
    own = own_module_not_importable([proc.stdout]) if errors and len(errors) == len(red) else None
    if own is not None:  # every red one is a module that does not collect because the project does not import
        return (
            f"not run: the suite ('{own[0]}', this repository's own module, does not import in {python}); once the"
            " project is installed there, `pytest` says which tests fail"
        )
    if not red:
        return f"ran the suite with {python}: {tail or 'no tests ran'}; no test fails at adoption"
    shown = ", ".join(red[:3]) + (f" and {len(red) - 3} more" if len(red) > 3 else "")
    return (
        f"the base is red: {len(red)} of {total} test{'s' if total != 1 else ''} fail here ({shown}; {tail}): they are"
        " the task. A change must make them pass as they are, not rewrite, skip or delete them: `oracle-guard check"
        " --replay` judges their base versions and ends with how many now pass"
    )
