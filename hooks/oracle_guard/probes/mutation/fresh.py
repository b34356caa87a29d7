"""Mutants in code that runs at import, judged in fresh pytest processes (cut from gate.py).

A code swap after import cannot reach a table a module builds at import; a
fresh process whose imports load the mutated source can.  Each costs 2-4
pytest processes (twice a side), so at most FRESH_MAX a change, FRESH_WIDTH
at a time.
"""

from __future__ import annotations

import concurrent.futures
import functools
import time
from collections.abc import Sequence
from typing import NamedTuple

from oracle_guard.probes.mutation import mutants as mutant_gen
from oracle_guard.probes.mutation.run import Cover, Server, Verdict, job
from oracle_guard.pytest_side import scratch
from oracle_guard.reporting.report import UsageError, notice

FRESH_MAX = 10  # mutants in code that runs at import, each costing 2-4 pytest processes
Pair = tuple[mutant_gen.Mutant, mutant_gen.Mutant]  # (base mutant, its twin in the new tree)


class FreshSides(NamedTuple):
    python: str
    tree: scratch.Scratch
    production: list[str]
    work: str
    base_cover: Cover
    new_cover: Cover | None
    deadline: float


FRESH_WIDTH = 2  # fresh pytest processes at once: each mostly starts up and collects, one a core


def fresh_base_side(sides: FreshSides, pairs: Sequence[Pair]) -> list[tuple[list[str], str]]:
    """Each mutant's base runs in fresh processes (twice when caught): its notices and the test that caught it.

    Each run is a pytest process whose imports load the mutated source, running the tests that passed
    there unmutated; the mutant is caught when one of them fails or is no longer collected. The mutants
    run FRESH_WIDTH at a time, base side only: the new side's runs come after (fresh_new_side).
    """
    if len(pairs) > FRESH_MAX:
        notice(
            f"mutation: {len(pairs) - FRESH_MAX} mutant(s) in code that runs at import were not run in a fresh process (at most {FRESH_MAX}): not judged at import"
        )
    with concurrent.futures.ThreadPoolExecutor(max_workers=FRESH_WIDTH) as pool:
        return list(pool.map(functools.partial(_base_one, sides), enumerate(pairs[:FRESH_MAX])))


def fresh_new_side(
    sides: FreshSides, pairs: Sequence[Pair], base: list[tuple[list[str], str]], verdicts: dict[str, Verdict]
) -> list[Pair]:
    """The new side's fresh runs of what the base caught (BASE: fresh_base_side's); the pairs the new tests miss."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=FRESH_WIDTH) as pool:
        outcomes = list(pool.map(functools.partial(_new_one, sides), enumerate(zip(pairs[:FRESH_MAX], base))))
    found = []
    for pair, (said, caught_by), (said_new, lived) in zip(pairs, base, outcomes):
        for message in [*said, *said_new]:
            notice(message)
        if caught_by:
            verdicts[pair[0].key] = Verdict("killed", caught_by, "in a fresh process")
        if lived:
            found.append(pair)
    return found


def _where(mutant: mutant_gen.Mutant) -> str:
    return f"{mutant.description} at {mutant.path}:{mutant.line}"


def _base_one(sides: FreshSides, numbered: tuple[int, Pair]) -> tuple[list[str], str]:
    """One mutant's base runs: its notices and the base test that caught it twice ("" if none)."""
    number, (base_m, _) = numbered
    said: list[str] = []
    where = _where(base_m)
    run = functools.partial(_fresh_run, sides, sides.tree.base, sides.base_cover, base_m)
    first = run(f"fresh-base-{number}")
    if not first:  # lives at the base too (never reported), or not run
        if first is None:
            said.append(f"mutation: {where} was not run in a fresh process within the budget: not judged at import")
        return said, ""
    again = run(f"fresh-base-{number}-again")
    if not again:
        said.append(
            f"mutation: flaky verdict: {where} in a fresh process; not reported"
            if again == ""
            else f"mutation: {where} was not run twice within the budget: not judged"
        )
        return said, ""
    return said, first


def _new_one(sides: FreshSides, numbered: tuple[int, tuple[Pair, tuple[list[str], str]]]) -> tuple[list[str], bool]:
    """One caught mutant's new-side runs: its notices and whether the new tests let it live (a finding)."""
    number, ((base_m, new_m), (_, caught_by)) = numbered
    if not caught_by:
        return [], False
    if sides.new_cover is None:
        return [], True
    said: list[str] = []
    where = _where(base_m)
    run = functools.partial(_fresh_run, sides, sides.tree.new, sides.new_cover, new_m, side="new")
    lived = False
    new_first = run(f"fresh-new-{number}")
    new_again: str | None = ""
    if new_first == "":
        new_again = run(f"fresh-new-{number}-again")
        if new_again == "":
            lived = True
        elif new_again:
            said.append(f"mutation: flaky verdict: {where} in a fresh process; not reported")
    if new_first is None or (new_first == "" and new_again is None):
        said.append(
            f"mutation: {where} was not run against the new tests in a fresh process within the budget: not judged"
        )
    return said, lived


def _fresh_run(
    sides: FreshSides, tree: str, cover: Cover, mutant: mutant_gen.Mutant, name: str, side: str = "base"
) -> str | None:
    """The node id of the first test the mutant fails in a fresh process; "" when none does; None: not run."""
    passing = [t.node for t in cover.tests if t.ok]
    if not passing:
        return ""
    if time.monotonic() >= sides.deadline:
        return None
    the_job = job(mutant, cover, mutant)
    server = Server(sides.python, tree, sides.production, passing, sides.work, name, mutant=the_job, side=side)
    try:
        ran = {t.node: t for t in server.cover(sides.deadline).tests}
    except UsageError:  # out of time
        return None
    finally:
        server.close()
    for node in passing:
        if node not in ran or not ran[node].ok:
            return node
    return ""
