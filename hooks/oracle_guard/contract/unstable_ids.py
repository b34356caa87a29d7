"""Tests whose parametrize ids change between two collections of the same tree.

Ids built from times, random values, id()/hash() of objects or memory
addresses differ on every run, so a snapshot that named them would be out of
date on every commit.  The snapshot records such a test by a stable key
instead: its function and the count of its cases per status,

    run   tests/test_x.py::test_when[<unstable id> x3]
    skip  tests/test_x.py::test_when[<unstable id, skip> x1]

so losing a case or skipping one is still seen.  Core module: the hook and
`init` detect the tests (two collections), the snapshot and the pytest
plugin read the keys, oracle-replay pairs such cases by position.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Callable, NamedTuple, Protocol

from oracle_guard.contract.snapshot import STATUSES
from oracle_guard.reporting.findings import Finding
from oracle_guard.reporting.report import UsageError, notice

if TYPE_CHECKING:
    from oracle_guard.repo.changes import ChangeSet

_KEY = re.compile(r"^(?P<function>.+)\[<unstable id(?:, (?P<status>[a-z-]+))?> x(?P<count>\d+)\]$")


class Collected(Protocol):
    """What a collection gives (collection-snapshot's Collection): ids, parameters, errors, exit code."""

    items: dict[str, str]
    params: dict[str, list[str]]
    errors: list[tuple[str, str]]
    exit_code: int


class Key(NamedTuple):
    function: str  # the node id without its parameter part
    status: str
    cases: int


def function_of(node_id: str) -> str:
    """NODE_ID without its `[parameters]` (which may themselves contain `::` or `[`)."""
    head, sep, rest = node_id.partition("::")
    if not sep or not node_id.endswith("]") or "[" not in rest:
        return node_id
    return head + sep + rest.partition("[")[0]


def key(function: str, status: str, count: int) -> str:
    tag = "unstable id" if status == "run" else f"unstable id, {status}"
    return f"{function}[<{tag}> x{count}]"


def parse_key(node_id: str) -> Key | None:
    if "[<unstable id" not in node_id:
        return None  # what _KEY needs, found without its backtracking over the whole id
    match = _KEY.match(node_id)
    if match is None or "::" not in match.group("function"):
        return None
    status = match.group("status") or "run"
    return Key(match.group("function"), status, int(match.group("count"))) if status in STATUSES else None


def recorded(items: Iterable[str]) -> set[str]:
    """The functions ITEMS (snapshot ids) record by key."""
    return {k.function for k in map(parse_key, items) if k is not None}


def differing(first: Iterable[str], second: Iterable[str]) -> set[str]:
    """The parametrized functions whose ids differ between two collections of the same tree."""
    changed = set(first) ^ set(second)
    return {function_of(n) for n in changed if function_of(n) != n and parse_key(n) is None}


def grouped(items: Mapping[str, str], functions: set[str]) -> dict[str, str]:
    """ITEMS (node id -> status) with every case of FUNCTIONS counted under its key, per status."""
    if not functions:
        return dict(items)
    counts: Counter[tuple[str, str]] = Counter()
    result: dict[str, str] = {}
    for node_id, status in items.items():
        parsed = parse_key(node_id)
        if parsed is not None:
            counts[parsed.function, parsed.status] += parsed.cases
        elif function_of(node_id) in functions:
            counts[function_of(node_id), status] += 1
        else:
            result[node_id] = status
    for (function, status), count in counts.items():
        result[key(function, status, count)] = status
    return dict(sorted(result.items()))


def lookup(known: Mapping[str, str]) -> Mapping[str, str]:
    """KNOWN (snapshot id -> status) that also answers for a case of a test recorded by key."""
    return _Known(known)


class _Known(dict[str, str]):  # a generic base class works from 3.9 on
    def __init__(self, known: Mapping[str, str]) -> None:
        super().__init__(known)
        self.by_function: dict[str, str] = {}
        for node_id, status in known.items():
            parsed = parse_key(node_id)
            if parsed is None:
                continue
            old = self.by_function.get(parsed.function)
            # Cases of one test with several statuses: the weakest answers (a known skip is no news).
            if old is None or STATUSES.index(status) > STATUSES.index(old):
                self.by_function[parsed.function] = status

    def get(self, node_id: str, default: str | None = None) -> str | None:  # type: ignore[override]
        if node_id in self:
            return self[node_id]
        return self.by_function.get(function_of(node_id), default)


def describe(function: str, first: Mapping[str, list[str]], second: Mapping[str, list[str]]) -> str:
    """One line for a test whose ids changed: which parameter, two sample ids, and the fix.

    FIRST and SECOND map node id -> [argnames..., "", ids per parametrize call...] as the
    collector reports them (empty when pytest did not say).
    """
    mine = [n for n in first if function_of(n) == function]
    theirs = [n for n in second if function_of(n) == function]
    gone = sorted(set(mine) - set(theirs))
    came = sorted(set(theirs) - set(mine))
    names = _parameters(first.get(gone[0], []) if gone else [], second.get(came[0], []) if came else [])
    what = f"parameter {', '.join(f'`{n}`' for n in names)}" if names else "its parameters"
    sample = f" (`{_params(gone[0])}`, then `{_params(came[0])}`)" if gone and came else ""
    return (
        f"{function}: the ids of {what} change between collections{sample}; the snapshot counts its "
        f"{len(theirs) or len(mine)} case(s) instead: give them stable ids with `ids=` or `pytest.param(..., id=...)`"
    )


def _params(node_id: str) -> str:
    return node_id[len(function_of(node_id)) :][1:-1]


def _parameters(before: list[str], after: list[str]) -> list[str]:
    """The argnames whose parametrize call gave another id, when each call has one argument."""
    if "" not in before or "" not in after:
        return []
    names, ids_before = before[: before.index("")], before[before.index("") + 1 :]
    ids_after = after[after.index("") + 1 :]
    if len(names) != len(ids_before) or len(ids_before) != len(ids_after):
        return names  # a call with several arguments: name them all
    return [n for n, a, b in zip(names, ids_before, ids_after) if a != b] or names


def grouped_lines(base: Mapping[str, tuple[str, int]], functions: set[str]) -> dict[str, tuple[str, int]]:
    """A parsed snapshot (id -> (status, line)) with the cases of FUNCTIONS under their keys, at their first line."""
    statuses = grouped({n: status for n, (status, _) in base.items()}, functions)
    first: dict[str, int] = {}
    for node_id, (status, line) in base.items():
        parsed = parse_key(node_id)
        function = parsed.function if parsed else function_of(node_id) if function_of(node_id) in functions else None
        if function is not None:
            at = key(function, status, 0)
            first[at] = min(first.get(at, line), line)
    result = {}
    for node_id, status in statuses.items():
        parsed = parse_key(node_id)
        line = first.get(key(parsed.function, status, 0), 1) if parsed else base[node_id][1]
        result[node_id] = (status, line)
    return result


def weakened(
    base: Mapping[str, tuple[str, int]],
    items: Mapping[str, str],
    snapshot: str,
    allowed_retire: Callable[[str], bool],
    allowed_skip: Callable[[str], bool],
) -> list[Finding]:
    """Findings for the tests BASE records by key (id -> (status, line)) that lost cases or had some skipped."""
    before: dict[str, Counter[str]] = {}
    lines: dict[str, int] = {}
    for node_id, (_, line) in base.items():
        parsed = parse_key(node_id)
        if parsed is not None:
            before.setdefault(parsed.function, Counter())[parsed.status] += parsed.cases
            lines[parsed.function] = min(lines.get(parsed.function, line), line)
    now: dict[str, Counter[str]] = {}
    for node_id in items:
        parsed = parse_key(node_id)
        if parsed is not None and parsed.function in before:
            now.setdefault(parsed.function, Counter())[parsed.status] += parsed.cases
    findings = []
    for function, old in sorted(before.items()):
        new = now.get(function, Counter())
        lost = sum(old.values()) - sum(new.values())
        line = lines[function]
        if lost > 0 and not allowed_retire(function):
            findings.append(
                Finding(
                    snapshot,
                    line,
                    1,
                    "OG801",
                    f"test no longer collected: {lost} of the {sum(old.values())} cases of {function} (its ids change "
                    f"between collections, so the snapshot counts them; retiring a test needs a signed approval)",
                )
            )
        stronger_lost = any(new[s] < old[s] for s in ("run", "skip-if-env"))
        for status, what in (("xfail", "xfailed"), ("skip", "skipped")):
            gained = new[status] - old[status]
            if gained > 0 and (stronger_lost or status == "skip" and new["xfail"] < old["xfail"]):
                if not allowed_skip(function):
                    findings.append(
                        Finding(
                            snapshot,
                            line,
                            1,
                            "OG802",
                            f"test now {what} at collection: {gained} case(s) of {function} (counted: its ids change "
                            "between collections); restore it or add a freeze entry",
                        )
                    )
    return findings


def paired(first: Iterable[str], second: Iterable[str], functions: set[str]) -> dict[str, str]:
    """Each id of FIRST whose test FUNCTIONS lists -> the id at the same position among SECOND's cases of it.

    Two runs of such a test give each case another id; the cases come in the
    same order (the order of the parametrize lists), so position pairs them.
    """
    theirs: dict[str, list[str]] = {}
    for node_id in second:
        if function_of(node_id) in functions:
            theirs.setdefault(function_of(node_id), []).append(node_id)
    seen: Counter[str] = Counter()
    result = {}
    for node_id in first:
        function = function_of(node_id)
        if function in functions:
            cases = theirs.get(function, [])
            if seen[function] < len(cases):
                result[node_id] = cases[seen[function]]
            seen[function] += 1
    return result


def cases(items: Iterable[str]) -> int:
    """How many tests ITEMS (snapshot ids) stand for: a key counts its cases."""
    return sum(parsed.cases if parsed else 1 for parsed in map(parse_key, items))


def recheck(
    first: Iterable[str], missing: Iterable[str], counted: Iterable[str], again: Callable[[list[str]], Iterable[str]]
) -> frozenset[str]:
    """The tests of MISSING ids whose ids in FIRST differ from AGAIN's second run of them (reported as a notice).

    oracle-replay: a base case that looks uncollected on the new code may only
    have another id on every run; a second run of the same tree tells.
    """
    first = list(first)
    lost = {function_of(n) for n in missing if function_of(n) != n} - set(counted)
    lost = {f for f in lost if any(function_of(n) == f for n in first)}
    if not lost:
        return frozenset()
    moving = frozenset(differing(first, again(sorted(lost))) & lost)
    for function in sorted(moving):
        notice(
            f"oracle-replay: the ids of {function} change between runs: its cases are paired by position "
            "(give them stable ids with `ids=` or `pytest.param(..., id=...)`)"
        )
    return moving


def same_case(node_id: str, first: Iterable[str], second: Iterable[str], counted: Iterable[str]) -> str:
    """NODE_ID's case among SECOND: by position for a counted test (FIRST gives its place), else itself."""
    return paired(first, second, set(counted)).get(node_id, node_id)


def approvable(node_id: str, counted: Iterable[str]) -> str:
    """What an approval names: the test, for one whose case ids change on every run."""
    function = function_of(node_id)
    return function if function in counted else node_id


def counted_at_base(change_set: ChangeSet, contract_path: str) -> set[str]:
    """The tests the base snapshot records by function, because their ids change between collections."""
    from oracle_guard.contract import contract
    from oracle_guard.contract.snapshot import parse_snapshot

    at_base = contract.at_base(change_set.base, contract_path) or contract.Contract(path=contract_path)
    path = at_base.snapshot_path
    try:
        return recorded(parse_snapshot(change_set.read_base([path])[path], path))
    except UsageError:
        return set()  # collection-snapshot reports a broken snapshot; the replay pairs by id


def steady(
    found: Collected,
    base: dict[str, tuple[str, int]],
    written: Mapping[str, object],
    again: Callable[[], Collected | None],
) -> dict[str, tuple[str, int]]:
    """Count the cases of tests whose ids change between collections under their key, in FOUND and BASE.

    Tests the base snapshot records by key are known; a parametrized test with
    ids the base does not have is collected once more (AGAIN), and the ids that
    differ between the two collections of the same tree are unstable.  Each is
    reported once: while the snapshot in the work tree (WRITTEN) does not record it.
    """
    known = recorded(base)
    items = grouped(found.items, known)
    if any(n not in base and function_of(n) != n for n in items):
        second = again()
        if second is not None and not second.errors and second.exit_code == found.exit_code:
            fresh = differing(items, grouped(second.items, known)) - known
            for function in sorted(fresh - recorded(written)):
                notice(describe(function, found.params, second.params))
            known |= fresh
            items = grouped(found.items, known)
    found.items = items
    return grouped_lines(base, known)
