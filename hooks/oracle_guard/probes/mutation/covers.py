"""The mutation check's test runs judged as runs: one that hangs (OG922) or does not run (OG923) on the new side.

Cut from gate.py (docs/module-size.md): what a side's run of the whole selection says before any mutant.
"""

from __future__ import annotations

import time

from oracle_guard.probes.mutation.run import Cover, Server
from oracle_guard.pytest_side import barrier, ground
from oracle_guard.reporting.report import UsageError


def _cover_within(server: Server, base: Cover, deadline: float) -> Cover:
    """The new tests' first run, each test held to a limit relative to the base's tests: OG922 past it.

    The server reports each test as it finishes: a gap longer than barrier.HANG_FLOOR plus
    barrier.HANG_FACTOR times the base's slowest test (collection included) is a run that hangs.
    The budget (DEADLINE) never cuts a gap short: it is far shorter than the floor, so a test that
    stalls only under the mutation server would end as "the budget ran out", a notice, and a
    weakened test would evade OG910.  A gap still open when the budget runs out is given the rest of
    its limit: a test that then finishes was slow, not stalled (the notice, as before); one that
    does not is OG922.
    """
    slowest = max((t.seconds for t in base.tests), default=0.0)
    limit = barrier.HANG_FLOOR + barrier.HANG_FACTOR * slowest
    records = server._records

    def covered() -> bool:
        return any("covered" in r for r in records)

    seen = [0]

    def moved() -> bool:
        return covered() or len(records) > seen[0]

    while not covered():
        seen[0] = len(records)
        step = time.monotonic() + limit
        server._until(moved, step)
        if covered() or server.proc.poll() is not None:
            break  # done or ended (cover() says which)
        if len(records) > seen[0] and time.monotonic() >= deadline:
            break  # it moved, past the whole budget: slow, not stalled (cover() says the budget ran out)
        if len(records) == seen[0]:
            server.kill()
            hung = barrier.Hung("new", limit, slowest)
            finished = [r["node"] for r in records if "node" in r]
            hung.test = f"the test after {finished[-1]}" if finished else "the collection or the first test"
            raise hung
    return server.cover(deadline)


def _ran(cover: Cover, what: str, python: str, red_at_base: frozenset[str] | None = None, new: bool = False) -> Cover:
    """COVER, when pytest got as far as running the tests; a side that cannot be judged stops the check.

    RED_AT_BASE: the modules that did not collect at the base either; any other module that does not
    collect on the new side stops it too (None: the base side, whose own errors are its state).
    NEW: the change's own tests, where the base's ran: judged against the change (OG923), not exit 2.
    """
    if not cover.covered and new:
        raise ground.NotRunHere(what, cover.exit_code, cover.tail)
    if not cover.covered:
        raise UsageError(
            f"{what} do not run in {python} (pytest exited {cover.exit_code}: {cover.tail or 'no output'}); fix the collection error: nothing was judged"
        )
    new_errors = sorted(set(cover.errors) - red_at_base) if red_at_base is not None else []
    if new_errors and new:  # modules the base collects that the change broke: the change's doing (OG923)
        raise ground.NotRunHere(
            what, cover.exit_code, f"{', '.join(new_errors[:3])} do not collect (they do at the base)"
        )
    if new_errors:
        raise UsageError(
            f"{what} do not collect in {python}: {', '.join(new_errors[:3])} (collected at the base); fix the collection error: nothing was judged"
        )
    return cover
