"""The flip rewrite and the neighbours verdict, in process (no pytest subprocess, no git)."""

from __future__ import annotations

import ast
import textwrap
import unittest
from typing import Any

import pytest

from oracle_guard.probes.flips import plugin as plugin
from oracle_guard.probes.flips import rewrite as flips
from oracle_guard.probes.neighbours import calls as neighbours
from oracle_guard.probes.neighbours import plugin as probe


def run_flipped(source: str, code_under_test: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """Rewrite SOURCE, run each of its tests once, return {site kind@line: (runs, passes)}."""
    tree, sites, _ = flips.rewrite(textwrap.dedent(source).encode(), "tests/test_x.py")
    recorder = plugin.Recorder()
    namespace: dict[str, Any] = {flips.NAME: recorder, "pytest": pytest, "unittest": unittest, **code_under_test}
    exec(compile(tree, "tests/test_x.py", "exec"), namespace)
    for name, obj in list(namespace.items()):
        if name.startswith("test") and callable(obj):
            recorder.node = name
            obj(*([namespace["PARAM"]] if "PARAM" in namespace else []))
        elif isinstance(obj, type) and issubclass(obj, unittest.TestCase) and obj is not unittest.TestCase:
            for method in [m for m in dir(obj) if m.startswith("test")]:
                recorder.node = method
                getattr(obj(method), method)()
    by_kind = {}
    for (_, key), (runs, passes) in recorder.records.items():
        info = sites[key]
        by_kind[f"{info['kind']}@{info['line']}"] = (runs, passes)
    return by_kind


TESTS = """\
def test_checks():
    assert price(150) == "$1.50"
    assert count() != 4
    assert count() < 10
    assert "Mug" in label("blue mug")
    expected = "Blue Mug"
    assert label("blue mug") == expected


def test_raises():
    with pytest.raises(KeyError, match="nope"):
        fetch("nope")
"""


def honest() -> dict[str, Any]:
    def fetch(key: str) -> None:
        raise KeyError(key)

    return {
        "price": lambda cents: f"${cents / 100:.2f}",
        "count": lambda: 3,
        "label": lambda name: name.title(),
        "fetch": fetch,
    }


def test_every_flipped_check_fails_on_honest_code() -> None:
    verdicts = run_flipped(TESTS, honest())
    assert verdicts == {
        "literal@2": (1, 0),
        "complement@3": (1, 0),
        "complement@4": (1, 0),
        "literal@5": (1, 0),
        "expected@7": (1, 0),
        "raises@11": (1, 0),
        "match@11": (1, 0),
    }


class AlwaysEqual(str):
    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    def __contains__(self, item: object) -> bool:
        return True

    __hash__ = str.__hash__


class Boundless(int):
    def __lt__(self, other: object) -> bool:
        return True

    def __ge__(self, other: object) -> bool:
        return True


def test_comparisons_that_cannot_fail_pass_their_flips() -> None:
    import sys

    def caller_reader(name: str) -> str:
        seen = sys._getframe(1).f_locals
        return seen.get("expected", name)

    def swallowing(key: str) -> None:
        return None

    code = {
        "price": lambda cents: AlwaysEqual("$1"),
        "count": lambda: Boundless(3),
        "label": caller_reader,
        "fetch": swallowing,
        "pytest": type("P", (), {"raises": staticmethod(lambda *a, **k: __import__("contextlib").nullcontext())}),
    }
    verdicts = run_flipped(TESTS, code)
    assert verdicts["literal@2"] == (1, 1)  # always-equal str
    assert verdicts["complement@4"] == (1, 1)  # < and >= both true
    assert verdicts["literal@5"] == (1, 0)  # caller_reader returns the name: 'Mug~flip~' is not in it
    assert verdicts["expected@7"] == (1, 1)  # it returned the flipped expectation
    assert verdicts["raises@11"] == (1, 1) and verdicts["match@11"] == (1, 1)  # a raises() that accepts anything


def test_a_patched_unittest_assert_passes_its_flip(monkeypatch: pytest.MonkeyPatch) -> None:
    source = """\
    class T(unittest.TestCase):
        def test_discount(self):
            self.assertEqual(discount(150), 15)
            self.assertTrue(discount(150))
    """
    assert run_flipped(source, {"discount": lambda c: c // 10}) == {"literal@3": (1, 0), "complement@4": (1, 0)}
    monkeypatch.setattr(unittest.TestCase, "assertEqual", lambda self, a, b, msg=None: None)
    assert run_flipped(source, {"discount": lambda c: c // 5})["literal@3"] == (1, 1)


def test_a_parameter_used_only_as_the_expectation_is_flipped_at_run_time() -> None:
    source = """\
    def test_p(PARAM):
        assert label("a") == PARAM
    """
    assert run_flipped(source, {"label": str.upper, "PARAM": "A"}) == {"parameter@2": (1, 0)}
    # a value with no flip leaves the check a plain assert: nothing recorded, and it still fails when false
    assert run_flipped(source, {"label": lambda s: None, "PARAM": None}) == {}
    with pytest.raises(AssertionError):
        run_flipped(source, {"label": lambda s: 1, "PARAM": None})


def test_names_read_elsewhere_are_not_flipped() -> None:
    source = """\
    def test_uses(PARAM):
        expected = "A"
        assert label(expected) == expected
        assert label(PARAM) == PARAM
    """
    tree, sites, _ = flips.rewrite(textwrap.dedent(source).encode(), "t.py")
    assert sites == {}
    assert "flip" not in ast.unparse(tree)


def test_sites_are_capped_per_test_by_a_stable_choice() -> None:
    source = "def test_many():\n" + "".join(f"    assert f({i}) == {i}\n" for i in range(40))
    _, first, _ = flips.rewrite(source.encode(), "t.py")
    _, second, _ = flips.rewrite(source.encode(), "t.py")
    assert len(first) == flips.MAX_PER_TEST and first == second


def test_the_flipped_source_is_what_linecache_would_show() -> None:
    _, _, lines = flips.rewrite(TESTS.encode(), "t.py")
    assert lines is not None
    assert lines[1] == "    assert price(150) == '$1.50~flip~'\n"
    assert lines[5] == "    expected = 'Blue Mug~flip~'\n"
    assert lines[2] == "    assert count() != 4\n"  # an operator flip leaves the text


@pytest.mark.parametrize(
    "value, flipped",
    [
        (True, False),
        (3, 4),
        (0.25, 1.25),
        ("a", "a~flip~"),
        (b"a", b"a~flip~"),
        ([], ["~flip~"]),
        ({}, {"~flip~": None}),
    ],
)
def test_flip_values(value: object, flipped: object) -> None:
    assert flips.flip_value(value) == (flipped, True)


def test_a_container_flip_changes_every_element_it_can() -> None:
    # Every part, not one: an honest equality may leave one part out (semver's build metadata), none leaves all.
    assert flips.flip_value((1, "b", None)) == ((2, "b~flip~", None), True)
    assert flips.flip_value({"core": "1.2.3", "build": "b1", "n": [1]}) == (
        {"core": "1.2.3~flip~", "build": "b1~flip~", "n": [2]},
        True,
    )
    assert flips.flip_value((None, None)) == ((None, None, "~flip~"), True)  # nothing to change: one more item


# -- neighbours ------------------------------------------------------------------------------------------

CALLS = """\
from shop import price, label
import shop


def test_it():
    assert price(150) == "$1.50"
    assert shop.label("blue mug", upper=False) == "Blue Mug"
    assert price(compute()) == "x"
    assert len("abc") == 3
"""


def test_call_sites_are_calls_of_imported_names_with_literal_arguments() -> None:
    sites = neighbours.call_sites(CALLS, "tests/test_shop.py")
    assert [(s.callee, s.args, s.kwargs, s.line) for s in sites] == [
        ("price", "[150]", "{}", 6),
        ("shop.label", "['blue mug']", "{'upper': False}", 7),
    ]
    assert sites[0].node == "tests/test_shop.py::test_it"


def answers(func: Any, site: neighbours.CallSite) -> dict[str, Any]:
    args = ast.literal_eval(site.args)
    inputs = {}
    for index, new in probe.neighbours(args, [probe._kind(a, None) for a in args], 24):
        call = list(args)
        call[index] = new
        inputs[repr((call, {}))] = [probe._stable_answer(func, call, {}), index]
    return {"sites": {site.id: {"tested": probe._stable_answer(func, args, {}), "inputs": inputs}}}


def base_price(cents: int) -> str:
    return f"${cents / 100:.2f}"


TABLE = {150: "$1.50"}


@pytest.mark.parametrize(
    "new_price, found",
    [
        (lambda c: TABLE.get(c) or f"${c // 100}", True),  # a lookup table over a broken rule
        (lambda c: f"${divmod(c, 100)[0]}.{divmod(c, 100)[1]:02d}", False),  # a refactor
        (lambda c: base_price(c) if c % 7 else f"${c / 100:.1f}", False),  # a change on a class of inputs
        (lambda c: f"USD {c / 100:.2f}", False),  # a new format: the tested input changes too
    ],
)
def test_isolated_points_of_agreement_are_a_finding(new_price: Any, found: bool) -> None:
    site = neighbours.call_sites("from shop import price\n\ndef test_p():\n    price(150)\n", "t.py")[0]
    result = neighbours.judge([site], answers(base_price, site), answers(new_price, site), "main")
    assert bool(result) == found
    if found:
        node, finding = result[0]
        assert (node, finding.code, finding.line) == ("t.py::test_p", "OG912", 4)
        assert finding.message.startswith("price(150) gives main's answer on the new code, but the new code disagrees")


class Point:
    def __init__(self, x: int, ys: list[int]) -> None:
        self.x, self.ys = x, ys


def test_answers_compare_floats_closely_and_exceptions_by_their_type() -> None:
    assert neighbours.same(["f", 0.1 + 0.2], ["f", 0.3])
    assert neighbours.same(["raise", "ValueError"], ["raise", "ValueError"])
    assert not neighbours.same(["raise", "ValueError"], ["raise", "ParseError"])  # two answers, not one
    assert not neighbours.same(["raise", "NotImplementedError"], ["raise", "ValueError"])
    assert not neighbours.same(["v", "a"], ["raise", "ValueError"])
    assert not neighbours.same(["v", 1], ["v", "1"]) and not neighbours.same(["v", 1], ["v", True])  # type and value
    assert neighbours.same(probe.encode(Point(1, [2])), probe.encode(Point(1, [2])))  # an object: class and state
    assert not neighbours.same(probe.encode(Point(1, [2])), probe.encode(Point(1, [3])))
    assert probe.encode(object())[0] == "?"  # a default repr holds an address, and there is no state to read


def test_what_looks_like_a_path_is_never_varied() -> None:
    assert [probe._kind(v, None) for v in ("data/x.txt", b"C:\\x", "~/.rc", "https://a", ".env", "blue mug")] == [
        None,
        None,
        None,
        None,
        None,
        str,
    ]
    assert probe._kind(2, float) is float and probe._kind(True, None) is None


def test_the_tests_holding_a_flip_are_named_by_their_first_line() -> None:
    source = "import pytest\n\n\n@pytest.mark.parametrize('x', [1])\ndef test_a(x):\n    assert f(x) == 2\n\n\ndef test_b():\n    assert f(1)\n"
    tree, _, _ = flips.rewrite(source.encode(), "t.py")
    assert flips.flipped_tests(tree) == {("test_a", 4)}  # test_b has nothing to flip: the probe run skips it
