"""Differential neighbours of the calls the base's tests make, recorded with their arguments as received.

A literal call site (calls.py) needs its arguments spelled in the test; most tests build them
(a helper call, an f-string, a fixture, a parametrize id).  The base side's probe run records
every call its tests make directly into a function of a changed production module, with the
arguments as the function received them (recorder.py, ``Recorder``: exact scalars, str, bytes and
short lists/tuples of them).  The recording comes from the base tree: the trusted code and the
trusted tests.  The new side records too, and adds only the calls the base's tests reach on the new
code alone, at a line where the base recorded a call (``parse(x).title()`` when the base's ``parse``
is a stub): the new code adds no test line to what is judged, and hiding a call only loses it
its own neighbours.  Then one collection-only
probe process per side calls each recorded function at the recorded input and around it, and
calls.judge gives the verdict, exactly as for a literal site.
"""

from __future__ import annotations

import ast
import difflib
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, Callable

from oracle_guard.probes.neighbours import calls
from oracle_guard.reporting.findings import Finding
from oracle_guard.reporting.report import notice

RECORD = True  # bench/probes.py turns it off in-process to price it
MAX_LINES = 5000  # a longer changed file is not diffed for the lines it adds
MAX_FIXED = 100  # tests red at the base and fixed that a recording run of their own is given
MAX_JUDGED = calls.MAX_SITES  # recorded calls probed, those of tests red at the base and fixed first
PER_FUNCTION = 4  # ... and per function


def read_json(path: str) -> Any:
    """What a probe run wrote to PATH, or None when it wrote nothing readable (the run is then judged by that)."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def judge(
    recording: str,
    literal: list[calls.CallSite],
    outcomes: Mapping[str, str],
    changed: Sequence[str],
    work: str,
    base_label: str,
    probe: Callable[[list[str], str], tuple[Any, Any]],
    added: Mapping[str, list[int]],
    recording_new: str | None = None,
) -> tuple[list[calls.CallSite], list[tuple[str, Finding]]]:
    """The recorded call sites, and (node id, finding) for each whose tested input is special-cased (calls.judge).

    OUTCOMES: base node id -> calls.BOTH, calls.FIXED or calls.OPEN; only calls of the first two are judged.

    PROBE(pytest arguments, neighbours configuration) runs the probe process on both trees and
    returns each side's neighbours results.  RECORDING_NEW: the new side's recording, for the calls the
    base's tests reach only on the new code (a method of an object a stub could not make, calls.recorded_sites).
    """
    data = read_json(recording)
    if not isinstance(data, dict) or data.get("complete") is not True:
        notice(f"oracle-replay: the probe run at {base_label} recorded no calls of the changed code")
        return [], []
    passed = {node for node, how in outcomes.items() if how in (calls.BOTH, calls.FIXED)}
    sites = calls.recorded_sites(data, passed, literal, read_json(recording_new) if recording_new else None, outcomes)
    sites = chosen(sites, outcomes)
    if not sites:
        return [], []
    config = os.path.join(work, "neighbours-recorded.json")
    with open(config, "w", encoding="utf-8") as f:
        wanted = [p for p in changed if p.endswith(".py")]
        json.dump({"sites": [s._asdict() for s in sites], "changed": wanted, "added": added}, f)
    modules = sorted({s.node.split("::", 1)[0] for s in sites})
    base, new = probe(["--collect-only", "-q", *modules], config)
    found = calls.judge(sites, base, new, base_label, outcomes)
    ran = set(_ran(base)) & set(_ran(new))
    inputs = sum(len(_ran(base)[s].get("inputs", {})) for s in ran) if ran else 0
    notice(
        f"oracle-replay: recorded {len(sites)} call(s) of the changed code by the base's tests;"
        f" called {len(ran)} of them on {inputs} neighbouring input(s) on both sides"
    )
    return sites, found


def unrecorded_fixed(recording: str, outcomes: Mapping[str, str] | None) -> list[str]:
    """The tests red at the base that pass now of which RECORDING holds no call, MAX_FIXED at most.

    The base side's flip run records only the tests it runs, those holding a flip: a fixed test
    that compares two computed values (``assert plural == pluralize(singular)``) holds none, and
    it is the test a special case is written for.  A run of its own records them (flips/gate.py).
    """
    data = read_json(recording)
    if not isinstance(data, dict) or data.get("complete") is not True or not isinstance(data.get("calls"), list):
        return []
    seen = {str(c.get("node")) for c in data["calls"] if isinstance(c, dict)}
    fixed = [node for node, how in (outcomes or {}).items() if how == calls.FIXED and node not in seen]
    return sorted(fixed)[:MAX_FIXED]


def merge(recording: str, more: str) -> None:
    """Add the calls of recording MORE (a complete one) to RECORDING's, first: those of tests red at the base."""
    data, extra = read_json(recording), read_json(more)
    if not isinstance(data, dict) or data.get("complete") is not True or not isinstance(data.get("calls"), list):
        return
    if not isinstance(extra, dict) or extra.get("complete") is not True or not isinstance(extra.get("calls"), list):
        return
    keys = {calls.call_key(c) for c in data["calls"] if isinstance(c, dict)}
    added = [c for c in extra["calls"] if isinstance(c, dict) and calls.call_key(c) not in keys]
    data["calls"] = [*added, *data["calls"]]
    with open(recording, "w", encoding="utf-8") as f:
        json.dump(data, f)


def chosen(sites: list[calls.CallSite], outcomes: Mapping[str, str]) -> list[calls.CallSite]:
    """The recorded calls the probe calls: those of tests red at the base that pass now first (where a
    special case hides: OG915, OG914), then the rest in the order the tests made them, PER_FUNCTION
    per function and MAX_JUDGED in all (the recorder keeps more, not knowing which tests are red)."""
    order = sorted(range(len(sites)), key=lambda i: (calls.status(sites[i].node, outcomes) != calls.FIXED, i))
    per: dict[tuple[str, str], int] = {}
    found: list[int] = []
    for i in order:
        function = (sites[i].where, sites[i].callee)
        if per.get(function, 0) < PER_FUNCTION and len(found) < MAX_JUDGED:
            per[function] = per.get(function, 0) + 1
            found.append(i)
    return [sites[i] for i in found]  # the probe calls them in this order, within its time: red ones first


def added_lines(trees: Mapping[str, str], changed: Sequence[str]) -> dict[str, list[int]]:
    """Per changed Python file, the lines of its new version the change added or rewrote (1-based).

    The probe traces them while it calls (plugin.py, ``_Lines``): one that runs at the tested input
    and at none of its neighbours is a special case's own line, and sharpens the verdict (calls.py).
    """
    found: dict[str, list[int]] = {}
    for path in changed:
        if not path.endswith(".py"):
            continue
        base, new = (_lines(os.path.join(trees[side], path)) for side in ("base", "new"))
        if new is None or len(new) > MAX_LINES or len(base or []) > MAX_LINES:
            continue
        matcher = difflib.SequenceMatcher(None, base or [], new, autojunk=False)
        lines = [
            j + 1 for tag, _, _, j1, j2 in matcher.get_opcodes() if tag in ("replace", "insert") for j in range(j1, j2)
        ]
        if lines:
            found[path] = lines
    return found


def code_changed(trees: Mapping[str, str], changed: Sequence[str]) -> bool:
    """Whether a changed Python file's code differs between the trees (not only its comments and blank lines).

    A change of comments alone runs the same code on both sides: no recorded call can show a special
    case, so the base's flip run need not record (and its cached verdicts can stand, cached.py).  A file
    either side cannot read or parse counts as changed.
    """
    if "new" not in trees:  # one tree: nothing to compare, record as before
        return True
    for path in changed:
        if not path.endswith(".py"):
            continue
        dumps = []
        for side in ("base", "new"):
            try:
                with open(os.path.join(trees[side], path), "rb") as f:
                    dumps.append(ast.dump(ast.parse(f.read())))
            except (OSError, SyntaxError, ValueError, RecursionError):
                return True
        if dumps[0] != dumps[1]:
            return True
    return False


def _lines(path: str) -> list[str] | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return None


def _ran(side: Any) -> dict[str, Any]:
    sites = side.get("sites") if isinstance(side, dict) else None
    return sites if isinstance(sites, dict) else {}
