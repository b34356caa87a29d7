"""The static Hypothesis model: properties found, settings resolved, strategies compared."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracle_guard.analysis.hypothesis import model as hm
from oracle_guard.analysis.pysource import Module

SOURCE = b"""
import hypothesis
import hypothesis.strategies as hs
from hypothesis import example, given, settings, strategies as st
from hypothesis.strategies import integers

settings.register_profile("ci", max_examples=1000)
settings.register_profile("quick", max_examples=10)
settings.load_profile("quick")
SLOW = settings(max_examples=300)


@settings(SLOW, deadline=None)
@given(st.integers(0, 10), y=hs.text(alphabet="abc"))
@example(1, "a")
def test_parent(x, y):
    hypothesis.assume(x > 1)
    assert x


@hypothesis.settings(max_examples=2 * 25)
@hypothesis.given(integers())
def test_explicit(x):
    assert x == x + 0


@given(st.data())
def test_profile(data):
    n = data.draw(st.integers().filter(bool))
    assert n


class TestCls:
    @given(st.none())
    def test_method(self, x):
        assert x is None


@settings(max_examples=5)
def test_settings_only():
    assert True


def test_plain():
    assert 1
"""


def module(src: bytes = SOURCE) -> Module:
    return Module.from_source("tests/test_h.py", src)


def test_properties_in_reports_effective_max_examples() -> None:
    assert hm.properties_in(module()) == [
        ("test_parent", 300, 16),
        ("test_explicit", 50, 23),
        ("test_profile", 10, 28),
        ("TestCls.test_method", 10, 35),
    ]


def test_default_is_100_without_profile() -> None:
    src = b"from hypothesis import given\nimport hypothesis.strategies as st\n\n@given(st.integers())\ndef test_a(n):\n    assert n\n"
    assert hm.properties_in(module(src)) == [("test_a", 100, 5)]


def test_model_records_examples_assumes_filters_and_given_kwargs() -> None:
    found = hm.model(module())
    parent = found.tests["test_parent"]
    assert parent.examples == ["example(1, 'a')"] and parent.assumes == 1 and set(parent.given_kwargs) == {"y"}
    assert found.tests["test_profile"].filters == 1
    assert not found.tests["test_settings_only"].given and "test_plain" not in found.tests
    assert found.profiles["ci"].max_examples == 1000 and found.loaded == "quick"


def test_profile_name_from_environment_default() -> None:
    src = b"import os\nfrom hypothesis import settings\nsettings.register_profile('dev', max_examples=7)\nsettings.load_profile(os.getenv('HYPOTHESIS_PROFILE', 'dev'))\n"
    assert hm.model(module(src)).loaded == "dev"


def strategies(base: str, new: str) -> str | None:
    b = Module.from_source("a.py", f"from hypothesis import strategies as st\nX = {base}\n".encode())
    n = Module.from_source(
        "b.py",
        f"import hypothesis.strategies as st\nfrom hypothesis.strategies import integers, just, sampled_from\nX = {new}\n".encode(),
    )
    return hm.narrower(b.tree.body[-1].value, n.tree.body[-1].value, b.names, n.names)  # type: ignore[attr-defined]


NARROWER = [
    ("st.integers()", "st.integers(min_value=0)"),
    ("st.integers()", "integers(0)"),
    ("st.integers(0, 100)", "st.integers(0, 10)"),
    ("st.floats()", "st.floats(allow_nan=False)"),
    ("st.floats(0, 1)", "st.floats(0.5, 1)"),
    ("st.text()", "st.text(max_size=3)"),
    ("st.text('abcdef')", "st.text(alphabet='abc')"),
    ("st.lists(st.integers(), min_size=1)", "st.lists(st.integers(), min_size=2)"),
    ("st.lists(st.integers())", "st.lists(st.integers(), unique=True)"),
    ("st.lists(st.integers())", "st.lists(st.integers(-5, 5))"),
    ("st.binary()", "st.binary(max_size=2)"),
    ("st.integers()", "st.integers().filter(lambda n: n > 0)"),
    ("st.text()", "just('')"),
    ("st.text()", "st.none()"),
    ("st.text()", "st.nothing()"),
    ("st.sampled_from([1, 2, 3])", "sampled_from([1])"),
    ("st.sampled_from([1, 2, 3])", "st.sampled_from((1, 3))"),
    ("st.integers()", "st.sampled_from([1, 2])"),
    ("st.one_of(st.integers(), st.text(), st.none())", "st.one_of(st.integers(), st.text())"),
    ("st.integers() | st.text()", "st.integers()"),
    ("st.dictionaries(st.text(), st.integers())", "st.dictionaries(st.text(), st.integers(), max_size=1)"),
]
SAME_OR_WIDER = [
    ("st.integers(0, 10)", "st.integers()"),
    ("st.integers(0, 10)", "integers(min_value=0, max_value=10)"),
    ("st.integers(0, 10)", "st.integers(-10, 20)"),
    ("st.text(alphabet='abc')", "st.text()"),
    ("st.text('ab')", "st.text('abc')"),
    ("st.lists(st.integers(), max_size=3)", "st.lists(st.integers(), max_size=30)"),
    ("st.lists(st.integers())", "st.lists(st.integers(), min_size=0)"),
    ("st.sampled_from([1, 2])", "st.sampled_from([1, 2, 3])"),
    ("st.integers()", "st.integers() | st.none()"),
    ("st.integers().filter(bool)", "st.integers()"),
    ("st.just(1)", "st.just(1)"),
    ("st.floats(allow_nan=False)", "st.floats()"),
    ("st.text()", "st.text(max_size=None)"),
]


@pytest.mark.parametrize("base,new", NARROWER)
def test_narrower_strategies(base: str, new: str) -> None:
    assert strategies(base, new) is not None


@pytest.mark.parametrize("base,new", SAME_OR_WIDER)
def test_same_or_wider_strategies(base: str, new: str) -> None:
    assert strategies(base, new) is None


def test_weaker_settings() -> None:
    names = module().names
    phases = ast.parse("[Phase.explicit, Phase.reuse]", mode="eval").body
    full = ast.parse("[Phase.explicit, Phase.generate]", mode="eval").body
    assert hm.weaker_settings({}, {}, names, names, 100, 10) == "max_examples 10 (base 100)"
    assert hm.weaker_settings({}, {}, names, names, 100, 200) is None
    assert "no longer generate" in (hm.weaker_settings({}, {"phases": phases}, names, names, 100, 100) or "")
    assert hm.weaker_settings({}, {"phases": full}, names, names, 100, 100) is None
    steps = {"stateful_step_count": ast.Constant(10)}
    assert hm.weaker_settings({}, steps, names, names, 100, 100) == "stateful_step_count 10 (base 50)"
    assert hm.weaker_settings(steps, {"stateful_step_count": ast.Constant(20)}, names, names, 100, 100) is None


@settings(max_examples=50, deadline=None)
@given(st.integers(-1000, 1000), st.integers(0, 1000))
def test_integer_bounds_widening_is_never_narrower(low: int, widen: int) -> None:
    """Moving a bound outward (or removing it) is never reported; moving it inward always is."""
    assert strategies(f"st.integers({low}, {low + 10})", f"st.integers({low - widen}, {low + 10 + widen})") is None
    assert (
        strategies(f"st.integers({low}, {low + 10})", f"st.integers({low + 1 + widen % 5}, {low + 10})") is None
    ) is False


def test_number_evaluates_constant_expressions() -> None:
    consts = {"TOL": ast.parse("1e-3", mode="eval").body}
    assert hm.number(ast.parse("10 ** -3", mode="eval").body) == pytest.approx(1e-3)
    assert hm.number(ast.parse("1 / 1000", mode="eval").body) == pytest.approx(1e-3)
    assert hm.number(ast.parse("TOL * 2", mode="eval").body, consts) == pytest.approx(2e-3)
    assert hm.number(ast.parse("f(1)", mode="eval").body) is None


VACUITY = [
    # (body, vacuous): vacuous means nothing in the body can fail
    ("pass", True),
    ("'''Nothing.'''", True),
    ("assert True", True),
    ("y = x\n    assert y == y", True),
    ("assume(x)\n    note(x)\n    print(x)", True),
    ("if x:\n        return\n    assert True", True),
    ("try:\n        f(x)\n    except Exception:\n        pass", True),
    ("with contextlib.suppress(Exception, KeyError):\n        f(x)", True),
    ("return\n    f(x)", True),
    ("f(x)", False),  # crash-only: the code under test may raise
    ("try:\n        f(x)\n    except ValueError:\n        pass", False),  # only ValueError may escape
    ("try:\n        f(x)\n    except Exception:\n        raise AssertionError(x)", False),
    ("x.attribute", False),
    ("y = x[0]", False),
    ("y = f'{x}'", False),
    ("assert x > 0", False),
    ("with open(x):\n        pass", False),
    ("for y in x:\n        g(y)", False),
    ("raise ValueError(x)", False),
]


@pytest.mark.parametrize("body,expected", VACUITY, ids=[b.split("\n")[0][:40] for b, _ in VACUITY])
def test_vacuous_means_nothing_in_the_body_can_fail(body: str, expected: bool) -> None:
    from oracle_guard.analysis.hypothesis import model as hm
    from oracle_guard.analysis.pysource import Module

    source = f"import contextlib\nfrom hypothesis import assume, given, note, strategies as st\n\n@given(st.integers())\ndef test_p(x):\n    {body}\n"
    module = Module.from_source("tests/test_p.py", source.encode())
    fn = module.tree.body[-1]
    assert hm.vacuous(fn, module.names) is expected


def test_names_the_bytes_do_not_spell_are_found_as_the_parser_reads_them() -> None:
    # `ｈｙｐｏｔｈｅｓｉｓ` is `hypothesis` to Python (NFKC): a text shortcut must not hide the property
    source = (
        "from ｈｙｐｏｔｈｅｓｉｓ import given, settings, strategies as st\n\n"
        'settings.ｒｅｇｉｓｔｅｒ_profile("ci", max_examples=7)\n'
        'settings.load_ｐｒｏｆｉｌｅ("ci")\n\n\n'
        "@given(st.integers())\ndef test_x(x):\n    assert x == x\n"
    ).encode()
    found = hm.model(Module.from_source("tests/test_x.py", source))
    assert list(found.tests) == ["test_x"] and found.tests["test_x"].given
    assert found.profiles["ci"].max_examples == 7 and found.loaded == "ci"
    # the nearest honest module: no Hypothesis anywhere, nothing found (and nothing walked)
    assert hm.model(Module.from_source("tests/test_y.py", "def test_ü():\n    assert 1\n".encode())).tests == {}


def test_tests_are_read_on_demand_and_a_later_definition_wins() -> None:
    source = (
        b"from hypothesis import given, settings, strategies as st\n\n\n"
        b"@given(st.integers())\ndef test_a(x):\n    assert x == x\n\n\n"
        b"def test_plain():\n    assert 1\n\n\n"
        b"@settings(max_examples=5)\n@given(st.text())\ndef test_a(s):\n    assert s == s\n\n\n"
        b"class TestK:\n    @given(st.booleans())\n    def test_b(self, b):\n        assert b in (True, False)\n"
    )
    found = hm.model(Module.from_source("tests/test_m.py", source))
    assert found.tests["test_a"].max_examples == 5  # the later definition is the one pytest runs
    assert "test_plain" not in found.tests and found.tests.get("test_plain") is None
    assert list(found.tests) == ["test_a", "TestK.test_b"] and len(found.tests) == 2


def test_a_profile_registered_through_a_bound_name_inside_a_function_is_found() -> None:
    source = (
        b"from hypothesis import settings\n\nregister = settings.register_profile\n\n\n"
        b'def setup():\n    register("ci", max_examples=9)\n\n\nsettings.load_profile("ci")\n'
    )
    found = hm.model(Module.from_source("tests/conftest.py", source))
    assert found.profiles["ci"].max_examples == 9 and found.loaded == "ci"
