"""The flip run's base side, kept per base: a second replay on the same base runs the flips on the new code only.

An entry holds one complete base-side flip run: each flipped check's counts (node id, site -> runs,
passes) and the sites.  Its name is probes/replay/base_cache.py's key (the base tree, the interpreter
and its distributions, oracle-guard's version) with the flip run's own inputs added: its pytest
arguments and the sources of the plugins it loads (flips, rewrite, neighbours).  It lives in the same
folder as the replay's entries, which is never inside the work tree.

Why an entry can convict and never excuse.  The code under test runs as the same user and can
write any entry, so an entry is a claim.  A flip is a finding when its check ran and failed every
time at the base and passed at least once on the new code (gate.suspects), and every suspect is run
again on both sides, fresh, before it is reported (gate._confirmed).  So the entry is read for one
claim only, "this flipped check ran and failed every time at the base", and only where the new side's
fresh run says the same check passed: a false claim there makes a suspect that the fresh base run of
_confirmed clears (a "flaky flip" notice), never a finding, and never hides one.  Every other base
answer the judgement needs is run at the base, by its test's id, before judging:

- a flipped check that passed on the new code and that the entry says passed at the base, did not
  run there, or does not hold at all (each would excuse the new side's pass);
- nothing else is needed: a flipped check that failed on the new code is no finding whatever the
  base says, and tests that did not pass on both sides in the main run are not judged.

What is never taken from an entry: whether the base's flip run completed (an entry is written only
from a complete one, and a new side that does not complete has its base side run whole, as OG913 is
judged against a base that really ran), and the differential neighbours' answers.  A neighbour
verdict is "the base and the new code answer alike", so a cached base answer would be believed
exactly where it excuses (equal to the new one); the neighbours' base side is always called fresh,
in a collection of the base (the neighbours run at the end of collection: no test runs there).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from oracle_guard.probes.replay import base_cache

PROBE = "flips"


class Verdict(NamedTuple):
    runs: int
    passes: int


class Entry(NamedTuple):
    sites: dict[str, dict[str, Any]]
    verdicts: dict[tuple[str, str], Verdict]
    # The cold base-side flip run's time, measured from outside: the claimed measure of the new side's
    # hang limit when the base side does not run (gate._warm checks it against a real base run first).
    seconds: float


def sources() -> list[str]:
    """The plugin files a flip run loads: a change to any of them is another entry."""
    from oracle_guard.probes.flips import plugin as flips_plugin
    from oracle_guard.probes.neighbours import plugin as neighbours_plugin

    folder = os.path.dirname(os.path.abspath(flips_plugin.__file__))
    return [
        os.path.abspath(flips_plugin.__file__),
        os.path.join(folder, "rewrite.py"),
        os.path.abspath(neighbours_plugin.__file__),
        os.path.join(os.path.dirname(os.path.abspath(neighbours_plugin.__file__)), "recorder.py"),
    ]


def name(cache: base_cache.Cache | None, args: Sequence[str]) -> str | None:
    return cache.probe_key(PROBE, args, sources()) if cache is not None else None


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def read(where: str, key: str) -> Entry | None:
    """The entry KEY; None when it is missing, unreadable or not exactly of our format (a cold run)."""
    data = base_cache.load(where, key)
    if data is None or data.get("probe") != PROBE:
        return None
    sites, records, seconds = data.get("sites"), data.get("verdicts"), data.get("seconds")
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not math.isfinite(seconds) or seconds < 0:
        return None  # no base time: a warm run could not hold a hang of the new code to a limit (OG922)
    if not isinstance(sites, dict) or not all(isinstance(v, dict) for v in sites.values()):
        return None
    if not isinstance(records, list):
        return None
    verdicts = {}
    for record in records:
        if not isinstance(record, list) or len(record) != 4:
            return None
        node, site, runs, passes = record
        runs, passes = _count(runs), _count(passes)
        if not isinstance(node, str) or not isinstance(site, str) or runs is None or passes is None or passes > runs:
            return None
        verdicts[(node, site)] = Verdict(runs, passes)
    return Entry(dict(sites), verdicts, float(seconds))


def write(
    where: str, key: str, sites: Mapping[str, Any], verdicts: Mapping[tuple[str, str], Any], seconds: float
) -> None:
    """Keep a complete base-side flip run as entry KEY, with the SECONDS it took (the caller checks it completed)."""
    data = {
        "format": base_cache.FORMAT,
        "key": key,
        "probe": PROBE,
        "sites": dict(sites),
        "verdicts": [[node, site, int(v.runs), int(v.passes)] for (node, site), v in verdicts.items()],
        "seconds": seconds,
    }
    base_cache.store(where, key, data)


def convicts(entry: Entry, key: tuple[str, str]) -> bool:
    """Whether the entry claims the flipped check ran and failed every time at the base (the only claim read)."""
    before = entry.verdicts.get(key)
    return before is not None and before.runs > 0 and before.passes == 0


def to_verify(entry: Entry, new: Mapping[tuple[str, str], Any], passed_both: set[str]) -> list[str]:
    """The tests to run again at the base: each holds a flip that passed on the new code the entry does not convict."""
    return sorted(
        {
            node
            for (node, site), after in new.items()
            if after.passes and node in passed_both and not convicts(entry, (node, site))
        }
    )


def merged(
    entry: Entry, verify: Sequence[str], ran: Mapping[tuple[str, str], Verdict]
) -> dict[tuple[str, str], Verdict]:
    """The base's verdicts: the fresh run's for the tests in VERIFY, the entry's (convicting only) for the rest."""
    again = set(verify)
    verdicts = {k: v for k, v in entry.verdicts.items() if k[0] not in again}
    verdicts.update({k: Verdict(v.runs, v.passes) for k, v in ran.items() if k[0] in again})
    return verdicts
