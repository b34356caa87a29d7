"""Which mutants run first: the budget (mutants and seconds) must be spent where a catch can be lost.

A mutant is worth its run when the base's catch of it could be the change's loss:

1. it is reached by a test the change touched (edited, deleted, or in a module it rewrote): only such a
   test can stop catching it;
2. it is in a production file the change touches: that code is what the change is about;
3. few of the base's passing tests that the change did NOT touch reach it: each of those runs the same
   on both sides, so a mutant one of them catches is caught on both, and can never be a finding.

Ties keep the old deterministic sample's order (the lowest SHA-256 of the mutant's key), so the same
change always runs the same mutants in the same order.  What the budget leaves is a notice, never a pass
(probes/mutation/gate.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from oracle_guard.probes.mutation.mutants import Mutant
from oracle_guard.probes.mutation.run import Cover


def touches(node: str, touched: Iterable[str]) -> bool:
    """Whether the test NODE is one of TOUCHED: a node id, or a module path standing for all its tests."""
    for entry in touched:
        if node == entry or node.startswith((entry + "::", entry + "[")):
            return True
    return False


def order(
    mutants: Sequence[Mutant], cover: Cover, touched: Sequence[str], changed_files: Iterable[str]
) -> list[Mutant]:
    """MUTANTS, most informative first (the module's docstring says what that is)."""
    changed = set(changed_files)
    passing = [t for t in cover.tests if t.ok]
    mine = [touches(t.node, touched) for t in passing]
    by_line: dict[str, dict[int, list[int]]] = {}  # path -> line -> indexes of the passing tests that ran it
    for index, test in enumerate(passing):
        for path, lines in test.lines.items():
            table = by_line.setdefault(path, {})
            for line in lines:
                table.setdefault(line, []).append(index)

    def rank(mutant: Mutant) -> tuple[int, int, int, str]:
        table = by_line.get(mutant.path, {})
        reaching: set[int] = set()
        for line in range(mutant.span[0], mutant.span[1] + 1):
            reaching.update(table.get(line, ()))
        by_touched = any(mine[i] for i in reaching)
        untouched = sum(1 for i in reaching if not mine[i])
        digest = hashlib.sha256(f"\0{mutant.key}".encode()).hexdigest()  # mutants.sample's order
        return (0 if by_touched else 1, 0 if mutant.path in changed else 1, untouched, digest)

    return sorted(mutants, key=rank)
