"""What a suspect's repeated runs in one process say: of the code's state, or only of the test's own.

Each run's outcome and the place it failed ("file:line", "" for a run that did not fail) come from
plugin.py; gate.py asks these questions of the new code's runs and of the same runs at the base.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def varied(outcomes: list[str]) -> bool:
    """Passed on some run of the process and not on another (one outcome throughout is not state)."""
    return "passed" in outcomes and len(set(outcomes)) > 1


def varied_suspects(
    outcomes: Mapping[str, list[str]], unwatched: set[str], odd: Mapping[str, tuple[str, str]]
) -> list[str]:
    """The odd suspects whose outcome varied between the runs (not those that hid from watching)."""
    return sorted(
        n for n, (code, _) in odd.items() if code == "OG972" and n not in unwatched and varied(outcomes.get(n, []))
    )


def fails_elsewhere(places: list[str]) -> bool:
    """Failed on every run, but not at one place throughout (the base of a red suspect)."""
    return len(places) > 1 and all(places) and len(set(places)) > 1


def own_repeats(new: Iterable[list[str]], at_base: list[str]) -> bool:
    """Every place a test failed on the new code (NEW: each run's places) is one it fails over the base's code
    (AT_BASE) only when run again.

    The change's own test, run again over code the change did not write, fails at a place its first
    run did not (a parametrized generator context manager used up, say): the test is not repeatable
    by itself, and where the new code's runs fail there, the repeats say nothing of the code.  A
    test red over the base's code fails at its check every time, so a code that passes it once and
    fails it again at that check is still judged.
    """
    again_only = {place for place in at_base[1:] if place and place != at_base[0]} if at_base else set()
    failed = {place for places in new for place in places if place}
    return bool(failed) and failed <= again_only
