"""The time budget of `check --mutate` (--mutate-timeout): how it is shared out, and the notice of what it left.

Cut from gate.py (docs/module-size.md).  Each pass of mutants (the base's, then the new side's) stops in
time for the runs after it, so what it found still gets its second runs within the budget; a mutant a
pass never ran is a notice, neither caught nor passed.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

from oracle_guard.probes.mutation import mutants as mutant_gen
from oracle_guard.probes.mutation.run import BudgetSpent, Cover, Server, Verdict
from oracle_guard.reporting.report import notice

Pair = tuple[mutant_gen.Mutant, mutant_gen.Mutant]  # (base mutant, its twin in the new tree)

BASE_SHARE = 0.6  # of the budget left after the base's first run, for the base's mutants
COVER_RUNS = 3  # test runs still to come after the base's mutants: the new tests, the whole new suite, the base again


def traced(pairs: Sequence[Pair], new: bool = False) -> list[str]:
    """The files a run after the base's first one traces: those of the mutants it judges (NEW: their twins').

    A mutant's tests are those that ran a line of its own file (Cover.reaching), so the rest of the
    production files need no tracer; under settrace (3.9-3.11) tracing every file made the whole new
    suite's run several times a plain one, which the budget then lacked for the mutants themselves.
    """
    return sorted({(n if new else b).path for b, n in pairs})


def share(deadline: float, cover_seconds: float, runs: int = COVER_RUNS) -> float:
    """When the base's mutants must stop: the new side and the second runs need the rest of the budget.

    The base's first run (COVER_SECONDS) estimates each of the RUNS still to come (two when the new side
    runs the whole suite from the start: no second new run then).  A new-side pass that has let a mutant
    live stops at the same share of what is left, measured on its own run.  A mutant a pass never ran is
    left untried (a notice), never passed.
    """
    now = time.monotonic()
    return now + max(0.0, deadline - now - runs * cover_seconds) * BASE_SHARE


def left(args: argparse.Namespace, verdicts: dict[str, Verdict], pairs: Sequence[Pair]) -> None:
    """Say what the time budget left untried: the last mutants in priority order, neither caught nor passed."""
    unrun = [b for b, _ in pairs if verdicts[b.key].verdict == "unrun"]
    if not unrun:
        return
    files = sorted({m.path for m in unrun})
    shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more file(s)" if len(files) > 3 else "")
    notice(
        f"mutation: {len(unrun)} of {len(pairs)} mutant(s) were not run within --mutate-timeout {args.mutate_timeout:g}: "
        f"they are not judged, neither caught nor passed (the last in priority order, in {shown}); "
        "a larger --mutate-timeout runs more"
    )


def cover_again(server: Server, deadline: float, pairs: Sequence[Pair]) -> Cover:
    """A second run's cover; out of budget, exit 2 that says so: these mutants lived on the new side."""
    try:
        return server.cover(deadline)
    except BudgetSpent:
        raise BudgetSpent(
            f"the mutation check ran out of its time budget (--mutate-timeout) before the {len(pairs)} mutant(s) "
            f"the new tests let live (e.g. {pairs[0][0].description} at {pairs[0][0].path}:{pairs[0][0].line}) "
            "were run a second time: nothing was passed; a larger --mutate-timeout judges them"
        ) from None
