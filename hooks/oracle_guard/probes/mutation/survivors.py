"""The mutants the new tests let live, and the runs of the change's tests that ended themselves (OG930).

A mutant the base's tests caught runs against the new tests in a server process (run.py) that forks a
child per mutant (server.py).  The change's tests can end either: the child (``os._exit``, a signal to
itself), which server.py reads as caught, or the server (a signal to its parent), which leaves the
rest not run.  Neither is a verdict on a mutant, and both are the change's doing: OG930, unless the
base's tests ended the same process the same way (the mutant's doing, or the project's way of running).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Sequence
from typing import NamedTuple

from oracle_guard.probes.mutation import mutants as mutant_gen
from oracle_guard.probes.mutation.run import Cover, Server, Verdict
from oracle_guard.probes.mutation.run import job as _job
from oracle_guard.reporting.report import notice

Pair = tuple[mutant_gen.Mutant, mutant_gen.Mutant]  # (base mutant, its twin in the new tree)
DIED = "the test process died"  # server.py's why for a mutant's child that ended without its verdict
_NONE = Verdict("", "", "")
LIVED = ("survived", "unreached")
BATCH = 8  # mutants a batch when a pass may stop early


class Ended(Exception):
    """The change's tests ended the process that ran a mutant against them (the message says which)."""


class AtBase(NamedTuple):
    """What the base's tests did with the same mutants: their verdicts, and how their server ended by itself."""

    verdicts: dict[str, Verdict]
    gone: int | None


def status(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit {code}"


def lived(verdicts: dict[str, Verdict], pairs: Sequence[Pair]) -> list[Pair]:
    unrun = [b for b, _ in pairs if verdicts[b.key].verdict in ("unrun", "invalid")]
    if unrun:
        notice(
            f"mutation: {len(unrun)} mutant(s) the base's tests caught were not run against the new tests: not judged ({', '.join(m.key for m in unrun[:3])})"
        )
    return [(b, n) for b, n in pairs if verdicts[b.key].verdict in LIVED]


def survivors(
    server: Server,
    cover: Cover,
    pairs: Sequence[Pair],
    deadline: float,
    at_base: AtBase | None = None,
    stop: float | None = None,
) -> list[Pair]:
    """The PAIRS the tests of SERVER let live; with AT_BASE (the change's tests), OG930 when they end its runs.

    STOP: once one has lived, no batch starts after it (those left are unrun: a notice), so what lived is
    still confirmed within the budget; before that the pass runs to DEADLINE (nothing to confirm yet)."""
    jobs = [_job(n, cover, b) for b, n in pairs]
    if stop is None:
        verdicts = server.verdicts(server.submit(jobs, deadline), jobs, deadline)
    else:
        verdicts = {}
        for start in range(0, len(jobs), BATCH):
            chunk = jobs[start : start + BATCH]
            if time.monotonic() >= stop and any(v.verdict in LIVED for v in verdicts.values()):
                verdicts.update({job.id: Verdict("unrun", "", "") for job in jobs[start:]})
                break
            verdicts.update(server.verdicts(server.submit(chunk, deadline), chunk, deadline))
    if at_base is not None:
        _ended(server, verdicts, pairs, at_base)
    return lived(verdicts, pairs)


def _ended(server: Server, verdicts: dict[str, Verdict], pairs: Sequence[Pair], at_base: AtBase) -> None:
    died = [
        b
        for b, _ in pairs
        if verdicts[b.key].verdict == "killed"
        and verdicts[b.key].why.startswith(DIED)
        and not at_base.verdicts.get(b.key, _NONE).why.startswith(DIED)
    ]
    if died:
        first = verdicts[died[0].key]
        raise Ended(
            f"the change's tests ended their own test process in {len(died)} mutant run(s) ({first.why}, in"
            f" {first.by or 'a test'}; e.g. {died[0].description} at {died[0].path}:{died[0].line}), where the"
            " base's tests ran the same mutants to a verdict: an ended process catches no mutant, so these"
            " were not judged; remove what in the tests exits or signals the process they run in"
        )
    unrun = [b for b, _ in pairs if verdicts[b.key].verdict == "unrun"]
    if not unrun or server.gone is None:
        return
    if at_base.gone == server.gone:
        notice(f"mutation: the base's mutation server ended the same way ({status(server.gone)}): not judged")
        return
    raise Ended(
        f"the mutation server running the change's tests ended ({status(server.gone)}) while mutants ran:"
        f" {len(unrun)} mutant(s) the base's tests caught were not judged (e.g. {unrun[0].description} at"
        f" {unrun[0].path}:{unrun[0].line}), while the base's server ran its mutants through; remove what in"
        " the tests ends or signals the processes that run them (their parent, their process group)"
    )
