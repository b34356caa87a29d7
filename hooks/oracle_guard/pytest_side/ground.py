"""What the change's code brings about in the gate's own runs, judged against the change (docs/ground.md).

The gate's machinery (pytest_side/barrier.py, repo/interpreters.py) raises; the gates turn each of
these into a finding that names what happened, never into "nothing was judged" (exit 2), which a CI
that reads "not judged" as neutral would let through.  Exit 2 stays for what the base or the user
controls: the base cannot run, bad arguments, no pytest.

- OG920: the interpreter named by ``--python`` or ``VIRTUAL_ENV`` is one git tracks (a commit chose it).
- OG921: the new code wrote where the base side reads (the barrier noticed it after the run).
- OG922: a run of the new code ran past its limit, relative to the base side's time for the same run.
- OG923: the change's own tests cannot run in the gate's scratch tree while the base's ran there.
- OG924-OG926: the environment was changed before the gate ran (pytest_side/environment.py).
"""

from __future__ import annotations

import os

from oracle_guard.pytest_side import environment
from oracle_guard.pytest_side.barrier import Breach, Hung
from oracle_guard.repo.interpreters import ChosenByChange, candidate_interpreters
from oracle_guard.reporting.report import Finding


class NotRunHere(Exception):
    """The change's own tests did not run in the gate's tree (OG923): WHAT, pytest's exit code and last line."""

    def __init__(self, what: str, exit_code: int, tail: str) -> None:
        super().__init__(what)
        self.what, self.exit_code, self.tail = what, exit_code, tail


def _shown(path: str) -> str:
    here = os.getcwd()
    return os.path.relpath(path, here) if path.startswith(here + os.sep) else path


def chosen(exc: ChosenByChange) -> Finding:
    """OG920: the interpreter a commit chose."""
    tracked = _shown(exc.tracked)
    text = (
        f"the gate would run the tests with {exc.python} ({exc.origin}), and {tracked} is tracked by git: a commit"
        " chose the interpreter that judges the change, so it cannot be trusted; nothing ran in it. Remove the"
        " tracked interpreter from the change (and list it in .gitignore), or name an interpreter outside the"
        " change with --python"
    )
    return Finding(tracked if not os.path.isabs(tracked) else ".", 1, 1, "OG920", text)


def breach(exc: Breach, where: str) -> Finding:
    """OG921: the new code wrote where the base side reads."""
    shown = ", ".join(exc.paths[:3]) + (f" and {len(exc.paths) - 3} more" if len(exc.paths) > 3 else "")
    text = (
        f"the new code (or its tests) wrote outside its own scratch tree while the gate ran it: {shown} changed,"
        " which the base side's runs read; a change whose code writes into the base's tree, the gate's trees or"
        " their cache cannot be judged fairly, so it is refused. Make the code and its tests write only in their"
        " own folder or pytest's tmp_path"
    )
    return Finding(where, 1, 1, "OG921", text)


def hung(exc: Hung, where: str) -> Finding:
    """OG922: a run of the new code ran past its limit."""
    test = f", in {exc.test}" if exc.test else ""
    path = exc.test.split("::", 1)[0] if "::" in exc.test and " " not in exc.test else where
    text = (
        f"a run of the new code ({exc.side} side) went {exc.seconds:.0f} s without finishing{test}, where the"
        f" base's took {exc.base_seconds:.1f} s (the limit is relative to the base's time, with a floor); the gate"
        " stopped it. Find what in the new code waits, sleeps or loops under the gate"
        " (a lock, a socket, a check of the environment) and remove it"
    )
    return Finding(path, 1, 1, "OG922", text)


def scratch_only(what: str, where: str, exit_code: int, tail: str) -> Finding:
    """OG923: the change's own tests do not run in the gate's tree, where the base's did."""
    text = (
        f"{what} cannot run in the gate's scratch tree (pytest exited {exit_code}: {tail or 'no output'}), while"
        " the base's tests ran there; the change's tests must run from a clean checkout of the change: make them"
        " independent of the work tree (untracked files, a tool or path only your machine has) and of how"
        " they are run"
    )
    return Finding(where, 1, 1, "OG923", text)


CHECK_ENVIRONMENT = True  # bench/ turns it off to measure what it costs


def before_judging(explicit: str | None) -> list[Finding]:
    """The findings that keep the gate from judging at all: its interpreter or its ground is the change's."""
    try:
        candidates = candidate_interpreters(explicit, dict(os.environ))
    except ChosenByChange as exc:
        return [chosen(exc)]
    if not candidates or not CHECK_ENVIRONMENT:
        return []  # no interpreter: the run says so (exit 2)
    return environment.check(candidates[0][0], os.getcwd())
