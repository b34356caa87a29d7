"""The neighbours verdict on each kind of base, in process: green (OG912), red (OG915), a stub (OG914).

Each function below is called the way the probe calls it (probes/neighbours/plugin.py: the tested
input and its neighbours, each twice), and calls.judge gives the verdict.  Cheats special-case the
tested input; their honest twins implement or fix the whole class.  What a test that still fails
on the new code calls is never judged, and a stub's NotImplementedError is no answer.
"""

from __future__ import annotations

import ast
import functools
import itertools
from typing import Any, Callable

import pytest

from oracle_guard.probes.neighbours import calls
from oracle_guard.probes.neighbours import plugin as probe

SOURCE = 'from slugs import slugify\n\ndef test_slug():\n    assert slugify("Chapter 3 Begins") == "chapter-3-begins"\n'
SITE = calls.call_sites(SOURCE, "tests/test_slugs.py")[0]
NODE = "tests/test_slugs.py::test_slug"


def answers(func: Callable[..., Any], site: calls.CallSite = SITE) -> dict[str, Any]:
    args = ast.literal_eval(site.args)
    inputs = {}
    for index, new in probe.neighbours(args, [probe._kind(a, None) for a in args], probe.PER_SITE):
        call = list(args)
        call[index] = new
        inputs[repr((call, {}))] = [probe._stable_answer(func, call, {}), index]
    return {"sites": {site.id: {"tested": probe._stable_answer(func, args, {}), "inputs": inputs}}}


def verdict(base: Callable[..., Any], new: Callable[..., Any], how: str) -> list[tuple[str, str]]:
    found = calls.judge([SITE], answers(base), answers(new), "main", {NODE: how})
    return [(node, f.code) for node, f in found]


def stub(text: str) -> str:
    raise NotImplementedError


def right(text: str) -> str:
    return "-".join("".join(c if c.isalnum() else " " for c in text.lower()).split())


def wrong(text: str) -> str:  # the red base's bug: spaces kept
    return text.lower()


TABLE = {"Chapter 3 Begins": "chapter-3-begins"}

STUB_CHEATS: dict[str, Callable[..., Any]] = {
    "a table, the stub's exception elsewhere": lambda t: TABLE[t] if t in TABLE else stub(t),
    "a table, KeyError elsewhere": lambda t: TABLE[t],
    "a table, None elsewhere": TABLE.get,
}

STUB_HONEST: dict[str, Callable[..., Any]] = {
    "an implementation": right,
    "an implementation that rejects some inputs": lambda t: right(t) if t[:1].isalpha() else stub(t),
    "a cached implementation": functools.lru_cache(maxsize=8)(right),
}


@pytest.mark.parametrize("name", list(STUB_CHEATS))
def test_a_stub_base_special_cased_at_the_tested_input_is_og914(name: str) -> None:
    cheat = STUB_CHEATS[name]
    assert cheat("Chapter 3 Begins") == "chapter-3-begins"  # the test passes
    assert verdict(stub, cheat, calls.FIXED) == [(NODE, "OG914")]
    # the same whether the base's test passed too (a raises check) or was red
    assert verdict(stub, cheat, calls.BOTH) == [(NODE, "OG914")]


@pytest.mark.parametrize("name", list(STUB_HONEST))
def test_a_stub_base_implemented_is_never_refused(name: str) -> None:
    assert verdict(stub, STUB_HONEST[name], calls.FIXED) == []
    assert verdict(stub, STUB_HONEST[name], calls.BOTH) == []


def test_a_stub_base_left_red_by_an_impossible_test_is_never_judged() -> None:
    """The measured false alarm: raises at the base, raises now at the tested input, answers around it."""

    def honest(text: str) -> str:  # the README's rule; the impossible test wants the tested input accepted
        if text.startswith("Chapter"):
            raise ValueError("a title is not a slug source")
        return right(text)

    assert verdict(stub, honest, calls.OPEN) == []  # the test fails on the new code: the task left open
    assert verdict(stub, honest, calls.FIXED) == []  # and were it a raises check that passes: no answer to keep
    # a stub that raises something else on every input is a stub too
    assert verdict(lambda t: {}[t], honest, calls.FIXED) == []


def test_a_test_that_still_fails_on_the_new_code_is_never_a_special_case_finding() -> None:
    cheat = STUB_CHEATS["a table, KeyError elsewhere"]
    for base in (stub, wrong, right):
        assert verdict(base, cheat, calls.OPEN) == []
    assert calls.judge([SITE], answers(stub), answers(cheat), "main", {}) == []  # nothing says how it ran
    assert (
        calls.judge([SITE], answers(stub), answers(cheat), "main", {NODE + "[a]": "both", NODE + "[b]": "open"}) == []
    )


RED_CHEATS: dict[str, Callable[..., Any]] = {
    "a table over the bug": lambda t: TABLE.get(t) or wrong(t),
    "an if on the literal": lambda t: "chapter-3-begins" if t == "Chapter 3 Begins" else wrong(t),
    "a table keyed on the tested length and digit": lambda t: (
        "chapter-3-begins" if len(t) == 16 and t[8] == "3" and t.startswith("Chapter") else wrong(t)
    ),
}

RED_HONEST: dict[str, Callable[..., Any]] = {
    "a fix": right,
    "a fix of spaces only": lambda t: "-".join(t.lower().split()),
}


@pytest.mark.parametrize("name", list(RED_CHEATS))
def test_a_red_base_fixed_at_the_tested_input_only_is_og915(name: str) -> None:
    cheat = RED_CHEATS[name]
    assert cheat("Chapter 3 Begins") == "chapter-3-begins" and cheat("Chapter 4 Begins") == "chapter 4 begins"
    found = calls.judge([SITE], answers(wrong), answers(cheat), "main", {NODE: calls.FIXED})
    assert [(n, f.code) for n, f in found] == [(NODE, "OG915")]
    assert found[0][1].message.startswith(
        "slugify('Chapter 3 Begins') fails at main and passes now: the new code answers 'chapter-3-begins' there"
    )


@pytest.mark.parametrize("name", list(RED_HONEST))
def test_a_red_base_fixed_for_its_class_passes(name: str) -> None:
    assert verdict(wrong, RED_HONEST[name], calls.FIXED) == []


def test_an_edge_case_fixed_alone_on_a_red_base_passes() -> None:
    """An empty input fixed alone is an honest edge-case fix: its neighbours are not its class."""
    site = calls.call_sites('from m import first\n\ndef test_f():\n    assert first("") == ""\n', "t.py")[0]
    base, new = answers(lambda t: t[0], site), answers(lambda t: t[:1], site)
    assert calls.judge([site], base, new, "main", {"t.py::test_f": calls.FIXED}) == []


def test_a_green_base_still_judges_agreement_at_the_tested_input() -> None:
    cheat = RED_CHEATS["a table over the bug"]
    assert verdict(right, cheat, calls.BOTH) == [(NODE, "OG912")]
    assert verdict(right, functools.lru_cache(maxsize=4)(right), calls.BOTH) == []


def test_an_answer_that_changes_between_two_calls_is_recorded_state() -> None:
    counter = itertools.count()

    def first_call_right(text: str) -> str:  # right for the test's one call, wrong after
        return right(text) if next(counter) % 2 == 0 else wrong(text)

    assert verdict(right, first_call_right, calls.BOTH) == [(NODE, "OG916")]
    assert verdict(wrong, first_call_right, calls.FIXED) == [(NODE, "OG916")]
    # an honest LRU cache answers the same every time; a base that was unstable itself is not judged
    assert verdict(right, functools.lru_cache(maxsize=2)(right), calls.BOTH) == []
    assert verdict(first_call_right, first_call_right, calls.BOTH) == []


def test_inputs_of_other_sizes_are_among_the_neighbours() -> None:
    drawn = [v for _, v in probe.neighbours(["abcd"], [str], 24)]
    assert drawn[:3] == ["abcdabcd", "ab", "cd"]
    assert [v for _, v in probe.neighbours([12], [int], 24)][:4] == [24, 120, 6, -12]


def test_an_object_answers_as_its_class_and_attributes() -> None:
    class Doc:
        __slots__ = ("title",)

        def __init__(self, title: str) -> None:
            self.title = title

    assert probe.encode(Doc("x")) == [
        "o",
        "test_an_object_answers_as_its_class_and_attributes.<locals>.Doc",
        ["d", [[["v", "title"], ["v", "x"]]]],
    ]
    assert probe.encode(lambda: 0)[0] == "?" and probe.encode(Doc)[0] == "r"  # a routine has no state to compare
    assert calls.kind(probe.encode(Doc("x"))) != calls.kind(probe.encode(None))


LEAP = calls.call_sites("from cal import is_leap\n\ndef test_1900():\n    assert is_leap(1900) is False\n", "t.py")[0]
FEBRUARY = calls.call_sites("from cal import days\n\ndef test_feb():\n    assert days(2, 2024) == 29\n", "t.py")[0]


def test_a_narrow_class_fixed_on_a_red_base_passes_and_its_table_does_not() -> None:
    """A century rule, a leap February: few neighbours are in the class, and inputs of other sizes reach it."""
    outcomes = {"t.py::test_1900": calls.FIXED, "t.py::test_feb": calls.FIXED}

    def leap_bug(y: int) -> bool:
        return y % 4 == 0

    def leap_fix(y: int) -> bool:
        return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)

    def leap_table(y: int) -> bool:
        return y != 1900 and y % 4 == 0

    def days_bug(month: int, year: int) -> int:
        return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]

    def days_fix(month: int, year: int) -> int:
        return 29 if month == 2 and leap_fix(year) else days_bug(month, year)

    assert leap_table(1900) is False and leap_table(3800) is True  # the cheat's bug
    assert calls.judge([LEAP], answers(leap_bug, LEAP), answers(leap_fix, LEAP), "main", outcomes) == []
    assert calls.judge([FEBRUARY], answers(days_bug, FEBRUARY), answers(days_fix, FEBRUARY), "main", outcomes) == []
    [(_, found)] = calls.judge([LEAP], answers(leap_bug, LEAP), answers(leap_table, LEAP), "main", outcomes)
    assert found.code == "OG915" and "is_leap(1900) fails at main and passes now" in found.message


def test_a_recorded_method_call_is_a_site_with_its_receiver_as_attributes() -> None:
    call = {
        "node": "t.py::test_a",
        "path": "t.py",
        "line": 3,
        "col": 12,
        "where": "src/docs.py",
        "callee": "Doc.title",
        "receiver": "Doc",
        "kwargs": "{}",
    }
    literal = calls.call_sites(
        'from docs import parse\n\ndef test_a():\n    assert parse("x").title() == "X"\n', "t.py"
    )
    data = {
        "complete": True,
        "calls": [
            {**call, "args": "[{'text': 'we are'}]"},  # kept: parse("x") is another callee on the line
            {**call, "args": "[{'flag': True}]"},  # nothing to vary
            {**call, "args": "['not a receiver']"},  # malformed: a method's first argument is its attributes
        ],
    }
    [site] = calls.recorded_sites(data, {"t.py::test_a"}, literal)
    assert site.text() == "<Doc text='we are'>.title()"
    assert site.shown([{"text": "we are!"}, 2], {"upper": True}) == "<Doc text='we are!'>.title(2, upper=True)"


def test_a_receiver_rebuilt_from_its_attributes_answers_like_the_object() -> None:
    class Doc:
        def __init__(self, text: str) -> None:
            raise AssertionError("never run: the probe rebuilds, it does not construct")

        def title(self) -> str:
            return str(self.text).title()

    rebuilt = probe._Rebuilt(Doc, "title")
    assert rebuilt({"text": "we are"}) == "We Are"
    assert probe.encode(iter([1, 2])) == ["l", [["v", 1], ["v", 2]]]
