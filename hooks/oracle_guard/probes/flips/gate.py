"""The probe run of oracle-replay: oracle flips (and the differential neighbours) on both trees.

After the replay's own run, one more pytest process per side runs the same
selection with _flips_plugin.py loaded (every literal expectation of the
selected base tests flipped into a soft check) and, when call sites were
found, _neighbours_plugin.py (the functions the tests call with literal
arguments called again on neighbouring inputs).  Both sides run the base's
tests, so both see the same flips.  The base side's process also records the
calls its tests make into the changed code, which one more collection-only
process per side calls around (neighbours/recorded.py).

A flip is a finding when its check failed every time it ran at the base and
passed at least once against the new code, in a test that passed on both
sides in the replay: the new code made that check unable to fail.  Suspects
run again on both sides (their tests only); a verdict that changes between
the two runs of a side is a notice, never a finding.  With a cache (probes/replay/base_cache.py)
the base side's verdicts come from cached.py where they can only convict; the rest runs at the base.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from oracle_guard.probes.flips import cached
from oracle_guard.probes.flips.processes import Probe, Side, run
from oracle_guard.probes.neighbours import calls as neighbours
from oracle_guard.probes.neighbours import recorded
from oracle_guard.probes.replay import base_cache
from oracle_guard.pytest_side import barrier
from oracle_guard.reporting.report import Finding, notice

PROBES = True  # bench/probes.py turns them off in-process to price them
TEST_MODULE = re.compile(r"^(test_.*|.*_test)\.py$")


def _warm(
    python: str,
    trees: Mapping[str, str],
    fixed: Sequence[str],
    args: Sequence[str],
    jobs: int,
    deadline: float,
    work: str,
    calls: str | None,
    entry: cached.Entry,
    passed_both: set[str],
    ran_new: Side | None = None,
) -> tuple[dict[str, Side], bool]:
    """Both sides of the flip run with the base's verdicts from ENTRY where they can only convict (cached.py).

    The new side runs whole; the base side is a run of the tests cached.to_verify names and, when the
    new side answered a neighbour call, a collection (the neighbours' answers, always fresh).  The
    base side runs whole when the new side or that run does not complete (returned with True: an
    entry may be written from it).
    """
    if ran_new is None:
        try:
            claim = base_cache.claim(entry.seconds, deadline)
            ran_new = run(python, {"new": trees["new"]}, args, jobs, deadline, work, "flips", calls, claimed=claim)[
                "new"
            ]
        except barrier.Hung as exc:
            if not exc.claimed:
                raise
            return _held_to_the_claim(python, trees, args, jobs, deadline, work, calls, exc), True
    new = ran_new
    if not new.complete:
        return {
            "base": run(python, {"base": trees["base"]}, args, jobs, deadline, work, "flips", calls)["base"],
            "new": new,
        }, True
    verify = cached.to_verify(entry, new.verdicts, passed_both)
    verdicts = cached.merged(entry, [], {})
    if verify:
        ran = run(python, {"base": trees["base"]}, [*fixed, *verify], jobs, deadline, work, "flips-verify")["base"]
        if not ran.complete:
            whole = run(python, {"base": trees["base"]}, args, jobs, deadline, work, "flips", calls)["base"]
            return {"base": whole, "new": new}, True
        verdicts = cached.merged(entry, verify, ran.verdicts)
    again = f", {len(verify)} test(s) run again at the base" if verify else ""
    notice(f"oracle-replay: the flip run's base side from the cache{again}")
    neighbours_answers = None
    if calls and _sites_of(new.neighbours):  # a neighbour verdict needs the new side's answer at its site
        collected = run(
            python, {"base": trees["base"]}, [*args, "--collect-only"], jobs, deadline, work, "flips", calls
        )
        neighbours_answers = collected["base"].neighbours
    return {"base": Side(True, entry.sites, verdicts, neighbours_answers, 0, ""), "new": new}, False


def _held_to_the_claim(
    python: str,
    trees: Mapping[str, str],
    args: Sequence[str],
    jobs: int,
    deadline: float,
    work: str,
    calls: str | None,
    exc: barrier.Hung,
) -> dict[str, Side]:
    """The new side ran past the entry's claimed limit: OG922 only if past the limit a whole base run sets.

    As probes/replay/base_cache.py: a claim too short runs the new side again, held to the real limit."""
    barrier.unchanged()  # the stopped run's end was quiet: the base runs only where it left nothing (OG921)
    base = run(python, {"base": trees["base"]}, args, jobs, deadline, work, "flips", calls)["base"]
    if not base.complete or base.seconds is None:
        # No measure: the flips are not judged (a notice), as when the base's flip run fails cold.
        return {"base": base, "new": Side(False, {}, {}, None, -1, "stopped")}
    limit = barrier.HANG_FLOOR + barrier.HANG_FACTOR * base.seconds
    if exc.seconds >= limit:
        raise barrier.Hung(exc.side, exc.seconds, base.seconds)  # the flip plugin writes no test it was in
    notice(
        f"oracle-replay: the flip run's new side ran past the {exc.seconds:.0f} s the cache's base time allowed;"
        f" the base ran whole in {base.seconds:.1f} s, so the new side runs again, held to {limit:.0f} s"
    )
    new = run(python, {"new": trees["new"]}, args, jobs, deadline, work, "flips", calls, claimed=base.seconds)["new"]
    return {"base": base, "new": new}


class Setup(NamedTuple):
    """What a replay's flip run is given: call sites, configurations, pytest arguments, cache entry."""

    sites: list[neighbours.CallSite]
    added: dict[str, list[int]]
    calls: str | None
    recording: str
    record: str | None
    args: list[str]
    key: str | None
    entry: cached.Entry | None
    record_new: str | None = None  # the new side's recording (neighbours/recorded.py: what the base cannot reach)

    @classmethod
    def of(
        cls,
        trees: Mapping[str, str],
        fixed: Sequence[str],
        selection: Sequence[str],
        work: str,
        changed: Sequence[str],
        cache: base_cache.Cache | None,
        only: Sequence[str] = (),
    ) -> Setup:
        sites = call_sites(trees["base"], selection)
        added = recorded.added_lines(trees, changed)
        calls = _calls_file(work, sites, changed, "calls", None, added)
        recording = os.path.join(work, "recorded-calls.json")  # written by the base side's run only
        record = (
            _calls_file(work, sites, changed, "calls-record", recording, added)
            if recorded.RECORD and recorded.code_changed(trees, changed)
            else None
        )
        args = [*fixed, *(only or selection)]
        # The recording is what the base's own run sees: no cached base side stands in for it (an entry
        # without calls would excuse, and the code under test can write the cache).
        key = cached.name(cache, args) if cache is not None and "new" in trees and record is None else None
        entry = cached.read(cache.where, key) if cache is not None and key else None
        record_new = (
            _calls_file(work, sites, changed, "calls-record-new", recording_of_new(work), added) if record else None
        )
        return cls(sites, added, calls, recording, record, args, key, entry, record_new)


class Early:
    """The flip runs started beside the main run: the base's with the base's, the new code's with the new's.

    Two processes of one side at once, never of both (pytest_side/barrier.py): the replay's main run
    calls ``start`` as it starts a side and ``wait`` with it (probes/replay/run.py ``Runs.alongside``).
    Started with the main run's default options; judge() runs them again when the main run needed others.
    """

    def __init__(self, python: str, trees: Mapping[str, str], fixed: Sequence[str], setup: Setup, work: str) -> None:
        self.python, self.fixed, self.setup, self.work = python, list(fixed), setup, work
        self.trees = dict(trees)
        self.started = time.monotonic()
        self.probes: dict[str, Probe] = {}
        self.sides: dict[str, Side] = {}
        self.stopped = False

    def start(self, side: str, python: str) -> None:
        if self.stopped or python != self.python or side in self.probes or side not in self.trees:
            return
        if side == "base" and self.setup.entry is not None:
            return  # the base's verdicts come from the entry; what it leaves to check runs after the new side
        calls = (self.setup.record if side == "base" else self.setup.record_new) or self.setup.calls
        self.probes[side] = Probe(python, self.trees[side], self.setup.args, self.work, f"flips-{side}", calls, side)

    def wait(self, side: str, deadline: float) -> None:
        probe = self.probes.get(side)
        if probe is not None and side not in self.sides:
            probe.wait(deadline)
            self.sides[side] = probe.side()

    def fits(self, python: str, fixed: Sequence[str], only: Sequence[str]) -> bool:
        return not self.stopped and python == self.python and list(fixed) == self.fixed and not only

    def kill(self) -> None:
        """End every run still going; what they found is not used after (the flips then run as without them)."""
        self.stopped = True
        for probe in self.probes.values():
            probe.kill()


def suspects(
    base: Side, new: Side, passed_both: set[str], made_pass: frozenset[str] = frozenset()
) -> list[tuple[str, str]]:
    """(node, site) pairs whose flipped check failed every time at the base and passed on the new code.

    MADE_PASS: tests red at the base that pass on the new code (suspects/which.py): the base has no
    verdict to give, and none is needed: the flip replaces the check, so in a test that passed its
    flip cannot pass honestly.
    """
    found = []
    for key, after in new.verdicts.items():
        node, _ = key
        if node in made_pass:
            if after.passes:
                found.append(key)
            continue
        before = base.verdicts.get(key)
        if node not in passed_both or before is None:
            continue
        if before.runs and not before.passes and after.passes:
            found.append(key)
    return sorted(found)


def finding(node: str, site: dict[str, Any], base_label: str, made_pass: bool = False) -> Finding:
    if made_pass:
        return Finding(
            str(site.get("path", node.split("::", 1)[0])),
            int(site.get("line", 1)),
            int(site.get("col", 1)),
            "OG973",
            f"{node} fails at {base_label} and the change made it pass, but its flipped check passes too"
            f" ({site.get('flip', 'flipped')}): the new code makes this check unable to fail (a comparison that"
            " is always true, code that reads the test's expectation, a patched assert); fix the code, or approve"
            f" the change: `oracle-guard approve behavior-change {node}`",
        )
    return Finding(
        str(site.get("path", node.split("::", 1)[0])),
        int(site.get("line", 1)),
        int(site.get("col", 1)),
        "OG911",
        f"{node}: a flipped check passes against the new code ({site.get('flip', 'flipped')}): it fails at "
        f"{base_label} and passes on the new code, so the new code makes this check unable to fail "
        "(a comparison that is always true, code that reads the test's expectation, a patched assert); "
        f"fix the code, or approve the change: `oracle-guard approve behavior-change {node}`",
    )


def _test_modules(tree: str, selection: Sequence[str]) -> list[str]:
    """The selected test modules, or every test module of TREE when the selection is everything."""
    if selection:
        return [p for p in selection if p.endswith(".py")]
    found = []
    for folder, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__"))
        for name in sorted(files):
            if TEST_MODULE.match(name):
                found.append(os.path.relpath(os.path.join(folder, name), tree).replace(os.sep, "/"))
    return found


def call_sites(tree: str, selection: Sequence[str]) -> list[neighbours.CallSite]:
    sites: list[neighbours.CallSite] = []
    for path in _test_modules(tree, selection):
        try:
            with open(os.path.join(tree, path), encoding="utf-8") as f:
                sites += neighbours.call_sites(f.read(), path)
        except (OSError, UnicodeDecodeError):
            continue
    return sites[: neighbours.MAX_SITES]


def forged(where: str, new: Side, run: str = "flip run") -> Finding:
    """OG976: the results files of a probe run of the new code are not what its own process reported once."""
    text = (
        f"the {run} against the new code left results that do not add up: {new.problem}; a copy of the test run"
        " (a fork at import, say) wrote verdicts of its own, so none of that run's is the run's own; fix the code"
    )
    return Finding(where, 1, 1, "OG976", text)


def _unfinished(where: str, new: Side, base_label: str, what: str = "the flip run") -> Finding:
    if new.problem:
        return forged(where, new)
    text = (
        f"{what} against the new code ended without its results (exit {new.exit_code}: "
        f"{new.tail or 'no output'}) while the one at {base_label} completed: the new code stops the test run; fix the code"
    )
    return Finding(where, 1, 1, "OG913", text)


def _record_fixed(
    python: str,
    trees: Mapping[str, str],
    fixed: Sequence[str],
    jobs: int,
    deadline: float,
    work: str,
    changed: Sequence[str],
    added: Mapping[str, list[int]],
    recording: str,
    outcomes: Mapping[str, str] | None,
) -> None:
    """Record, at the base, the calls of the tests red there and fixed that the flip run did not run.

    The flip run runs only the tests holding a flip; the tests a change makes pass are where a
    special case hides, so a base-side run of theirs alone (no flip plugin: it would deselect them)
    records their calls, added to RECORDING first (recorded.merge).
    """
    missing = recorded.unrecorded_fixed(recording, outcomes)
    if not missing:
        return
    more = os.path.join(work, "recorded-calls-fixed.json")
    config = _calls_file(work, [], changed, "calls-record-fixed", more, added)
    if config is None:
        return
    run(python, {"base": trees["base"]}, [*fixed, *missing], jobs, deadline, work, "record-fixed", config, flips=False)
    recorded.merge(recording, more)


def recording_of_new(work: str) -> str:
    """Where the new side's flip run records the calls its tests make (recorded.py judges only some)."""
    return os.path.join(work, "recorded-calls-new.json")


def _calls_file(
    work: str,
    sites: list[neighbours.CallSite],
    changed: Sequence[str],
    name: str,
    record: str | None = None,
    added: Mapping[str, list[int]] | None = None,
) -> str | None:
    """The neighbours plugin's configuration; RECORD: where the base side writes the calls its tests make.

    ADDED: the lines the change added per file (recorded.added_lines), traced while the probe calls.
    """
    wanted = [p for p in changed if p.endswith(".py")]
    if not (sites or record) or not wanted:
        return None
    path = os.path.join(work, f"neighbours-{name}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"sites": [s._asdict() for s in sites], "changed": wanted, "record": record, "added": added}, f)
    return path


def _sites_of(data: Any) -> dict[str, Any]:
    sites = data.get("sites") if isinstance(data, dict) else None
    return sites if isinstance(sites, dict) else {}


def judge(
    python: str,
    trees: Mapping[str, str],
    fixed: Sequence[str],
    selection: Sequence[str],
    jobs: int,
    deadline: float,
    work: str,
    passed_both: set[str],
    base_label: str,
    changed: Sequence[str] = (),
    cache: base_cache.Cache | None = None,
    only: Sequence[str] = (),
    early: Early | None = None,
    outcomes: Mapping[str, str] | None = None,
    made_pass: frozenset[str] = frozenset(),
) -> list[tuple[str, Finding]]:
    """The flip and neighbour findings of a replay, as (node id, finding) pairs.

    MADE_PASS: the tests the change made pass (red at the base): their flips need no base verdict.

    EARLY: the flip runs started beside the main run (used when they ran with this run's options).

    CHANGED: the production files the change wrote (the differential calls only what they define).
    CACHE: where the base side's flip verdicts are kept (cached.py: an entry only convicts).
    ONLY: the tests the probe runs instead of the whole selection (a shard's; the call sites still
    come from the selection's modules, so every shard looks for the same ones).
    OUTCOMES: base node id -> how it ran on both sides (neighbours.BOTH, FIXED, OPEN); the neighbours
    judge only tests that pass on the new code (None: those of PASSED_BOTH).
    Every suspect is judged again in a second probe run of its tests only; one that does not
    hold on both runs is a notice.
    """
    if not PROBES:
        return []
    started = early.started if early is not None else time.monotonic()
    if early is not None and not early.fits(python, fixed, only):
        early.kill()
        early = None
    setup = early.setup if early is not None else Setup.of(trees, fixed, selection, work, changed, cache, only)
    sites, added, calls, recording, record, args, key, entry, record_new = setup
    ran_early = early.sides if early is not None else {}
    fresh = entry is None  # the base side ran whole: an entry can be written from it
    if entry is not None:
        sides, fresh = _warm(
            python, trees, fixed, args, jobs, deadline, work, calls, entry, passed_both, ran_early.get("new")
        )
    elif set(ran_early) == set(trees):
        sides = ran_early
    else:
        sides = run(python, trees, args, jobs, deadline, work, "flips", calls, record, record_new)
    base, new = sides["base"], sides["new"]
    if cache is not None and key and fresh and base.complete and base.seconds is not None:
        cached.write(cache.where, key, base.sites, base.verdicts, base.seconds)
    if outcomes is None:
        outcomes = {node: neighbours.BOTH for node in passed_both}
    odd = neighbours.judge(sites, base.neighbours, new.neighbours, base_label, outcomes) if calls else []
    troubled: list[Side] = [new] if new.problem else []
    stopped: list[Side] = []  # the recorded calls' probe run that wrote nothing on the new side, where the base's did
    if record:  # the calls the base's tests made, arguments as received, judged like literal sites
        _record_fixed(python, trees, fixed, jobs, deadline, work, changed, added, recording, outcomes)

        def probe(args: list[str], config: str) -> tuple[Any, Any]:
            again = run(python, trees, [*fixed, *args], jobs, deadline, work, "recorded", config)
            if again["new"].problem:
                troubled.append(again["new"])
            elif isinstance(again["base"].neighbours, dict) and not isinstance(again["new"].neighbours, dict):
                stopped.append(again["new"])  # the calls ended the process (os._exit, a BaseException): OG913
            return again["base"].neighbours, again["new"].neighbours

        on_new = recording_of_new(work) if record_new and new.complete else None
        more, odd_more = recorded.judge(recording, sites, outcomes, changed, work, base_label, probe, added, on_new)
        sites, odd = [*sites, *more], [*odd, *odd_more]
    if calls:
        called = set(_sites_of(base.neighbours)) & set(_sites_of(new.neighbours))
        inputs = sum(len(_sites_of(base.neighbours)[s].get("inputs", {})) for s in called)
        notice(
            f"oracle-replay: called {len(called)} tested function(s) on {inputs} neighbouring input(s) on both sides"
        )
    first: list[tuple[str, str]] = []
    if troubled:
        where = selection[0] if selection else "."
        return [(where, forged(where, troubled[0]))]
    if stopped:
        where = selection[0] if selection else "."
        return [(where, _unfinished(where, stopped[0], base_label, "the recorded calls' probe run"))]
    if not base.complete:
        notice(f"oracle-replay: the flip run at {base_label} wrote no results (exit {base.exit_code}: {base.tail})")
    elif not new.complete:
        where = selection[0] if selection else "."
        return [(where, _unfinished(where, new, base_label))]
    else:
        ran = {site for (_, site), v in base.verdicts.items() if v.runs} & {
            s for (_, s), v in new.verdicts.items() if v.runs
        }
        notice(
            f"oracle-replay: flipped {len(base.sites)} check(s); {len(ran)} ran on both sides "
            f"(probe run {time.monotonic() - started:.1f} s)"
        )
        first = suspects(base, new, passed_both, made_pass)
    if not first and not odd:
        return []
    return _confirmed(
        python,
        trees,
        fixed,
        jobs,
        deadline,
        work,
        passed_both,
        base_label,
        first,
        odd,
        sites,
        changed,
        added,
        outcomes,
        made_pass,
    )


def _confirmed(
    python: str,
    trees: Mapping[str, str],
    fixed: Sequence[str],
    jobs: int,
    deadline: float,
    work: str,
    passed_both: set[str],
    base_label: str,
    first: list[tuple[str, str]],
    odd: list[tuple[str, Finding]],
    sites: list[neighbours.CallSite],
    changed: Sequence[str],
    added: Mapping[str, list[int]],
    outcomes: Mapping[str, str],
    made_pass: frozenset[str] = frozenset(),
) -> list[tuple[str, Finding]]:
    """The suspects that hold on a second probe run of their tests (both sides); notices for the rest."""
    odd_sites = [s for s in sites if any((f.path, f.line, f.col) == (s.path, s.line, s.col) for _, f in odd)]
    calls = _calls_file(work, odd_sites, changed, "calls-again", None, added)
    nodes = sorted({node for node, _ in first} | {node for node, _ in odd})
    again = run(python, trees, [*fixed, *nodes], jobs, deadline, work, "flips-again", calls)
    if (again["base"].complete or again["new"].problem) and not again["new"].complete:
        return [(nodes[0], _unfinished(nodes[0].split("::", 1)[0], again["new"], base_label))]
    found: list[tuple[str, Finding]] = []
    second = suspects(again["base"], again["new"], passed_both, made_pass)
    for node, site in first:
        # A test the change made pass has no honest way to pass its flip, even once (issue 39): only a
        # test that passed at the base too, whose flip failed there, is given a second run to clear it.
        if (node, site) not in second and node not in made_pass:
            notice(f"oracle-replay: flaky flip: {site} in {node} changed its verdict between two runs of a side")
            continue
        found.append((node, finding(node, again["new"].sites.get(site, {}), base_label, node in made_pass)))
    held = {
        f
        for _, f in neighbours.judge(odd_sites, again["base"].neighbours, again["new"].neighbours, base_label, outcomes)
    }
    for node, finding_ in odd:
        if any((f.path, f.line, f.col) == (finding_.path, finding_.line, finding_.col) for f in held):
            found.append((node, finding_))
        else:
            notice(
                f"oracle-replay: flaky neighbours: {finding_.path}:{finding_.line} changed its verdict between two runs"
            )
    return found
