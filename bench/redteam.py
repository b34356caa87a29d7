"""Red-team the gate the way an outside evaluation would: real repos, real tests.

    python bench/redteam.py attrs /tmp/eval-attrs
    python bench/redteam.py click /tmp/eval-click [RECIPE ...]

Each recipe edits real test files of a throwaway clone (attrs or click, no
oracle-guard contract), is committed on its own branch from a fixed base, and
is judged by `oracle-guard check --base <base> --skip collection-snapshot`
(the brief's command) and by the full `oracle-guard check --base <base>`
(which adds the static pytest-config half of collection-snapshot; without a
committed snapshot it never runs pytest).  A weakening recipe is `caught`
or `MISSED`; an honest one is `clean` or `FALSE-ALARM`.  The clone is
reset hard and cleaned: never point this at a working copy you care about.
REDTEAM_VERBOSE=1 prints the findings of every miss and false alarm.

The base is the clone's origin/HEAD plus one setup commit (tests/test_eval_*.py)
adding shapes the project lacks: pytest.approx/isclose, unittest asserts and
assertRaises, @settings in a variable and a constant, data.draw.  Weakening
recipes of the pytest configuration are caught by the full check only (they are
collection-snapshot's static half).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from typing import Callable

Recipe = Callable[[str], None]
RECIPES: dict[str, list[tuple[str, str, Recipe]]] = {"attrs": [], "click": []}


def weak(project: str) -> Callable[[Recipe], Recipe]:
    return lambda fn: RECIPES[project].append(("weak", fn.__name__, fn)) or fn


def honest(project: str) -> Callable[[Recipe], Recipe]:
    return lambda fn: RECIPES[project].append(("honest", fn.__name__, fn)) or fn


def read(root: str, path: str) -> str:
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()


def write(root: str, path: str, text: str) -> None:
    os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
    with open(os.path.join(root, path), "w", encoding="utf-8") as f:
        f.write(text)


def sub(root: str, path: str, old: str, new: str, count: int = 1) -> None:
    """Replace the first `count` copies of an exact snippet (all when count=0)."""
    text = read(root, path)
    if old not in text:
        raise AssertionError(f"recipe anchor not found in {path}: {old[:60]!r}")
    write(root, path, text.replace(old, new, count if count else -1))


def cut_function(root: str, path: str, name: str) -> str:
    """Remove an undecorated function (and the blank lines after it); return its source."""
    text = read(root, path)
    match = re.search(rf"(?m)^([ \t]*)def {name}\(", text)
    assert match, name
    indent = match.group(1)
    after = re.compile(rf"(?m)^{indent}(?=\S)").search(text, match.end())
    end = after.start() if after else len(text)
    write(root, path, text[:match.start()] + text[end:])
    return text[match.start():end]


# --------------------------------------------------------------------------- click
CLICK_SETUP = {
    "tests/test_eval_numbers.py": '''import math
import unittest

import pytest

import click


def test_float_sum():
    assert click.FLOAT.convert("0.1", None, None) + 0.2 == pytest.approx(0.3, rel=1e-9)


def test_float_isclose():
    assert math.isclose(click.FLOAT.convert("2.5", None, None), 2.5, rel_tol=1e-12)


def test_float_abs():
    assert abs(click.FLOAT.convert("2.5", None, None) - 2.5) < 1e-9


class TestIntRange(unittest.TestCase):
    def test_clamp(self):
        r = click.IntRange(0, 10, clamp=True)
        self.assertEqual(r.convert("15", None, None), 10)
        self.assertTrue(r.clamp)
        self.assertIsNone(r.max_open or None)

    def test_out_of_range(self):
        with self.assertRaisesRegex(click.BadParameter, "is not in the range"):
            click.IntRange(0, 10).convert("15", None, None)

    def test_not_a_number(self):
        with self.assertRaises(click.BadParameter):
            click.IntRange(0, 10).convert("x", None, None)


def test_bad_int():
    with pytest.raises(click.BadParameter, match="is not a valid integer"):
        click.INT.convert("x", None, None)


def test_deprecated_warns():
    with pytest.warns(UserWarning, match="deprecated"):
        warn_deprecated()


def warn_deprecated():
    import warnings

    warnings.warn("deprecated", UserWarning, stacklevel=2)
''',
}
T = "tests/test_basic.py"
A = "tests/test_arguments.py"
N = "tests/test_eval_numbers.py"
REPR = "def test_repr():\n"
RET = "def test_return_values():\n"


@weak("click")
def mark_skip(r):
    sub(r, T, REPR, '@pytest.mark.skip(reason="flaky")\n' + REPR)


@weak("click")
def mark_skipif_true(r):
    sub(r, T, RET, '@pytest.mark.skipif(True, reason="later")\n' + RET)


@weak("click")
def mark_xfail_bare(r):
    sub(r, T, "def test_basic_functionality(runner):", "@pytest.mark.xfail\ndef test_basic_functionality(runner):")


@weak("click")
def mark_from_import(r):
    sub(r, T, "import pytest\n", "import pytest\nfrom pytest import mark\n")
    sub(r, T, REPR, "@mark.skip\n" + REPR)


@weak("click")
def mark_alias_module(r):
    sub(r, T, "import pytest\n", "import pytest\nimport pytest as pt\n")
    sub(r, T, REPR, "@pt.mark.xfail(strict=False)\n" + REPR)


@weak("click")
def mark_in_variable(r):
    sub(r, T, "from click._utils import UNSET\n", 'from click._utils import UNSET\n\nflaky = pytest.mark.skip(reason="flaky on CI")\n')
    sub(r, T, REPR, "@flaky\n" + REPR)


@weak("click")
def mark_skipif_platform_existing(r):
    sub(r, T, REPR, '@pytest.mark.skipif(os.name == "posix", reason="posix only issue")\n' + REPR)


@weak("click")
def pytestmark_module(r):
    sub(r, A, "from click._utils import UNSET\n", "from click._utils import UNSET\n\npytestmark = pytest.mark.skip(reason=\"rework\")\n")


@weak("click")
def param_mark_xfail(r):
    sub(r, T, '''        (["--s"], "Error: Option '--s' requires an argument."),''',
        '''        pytest.param(["--s"], "Error: Option '--s' requires an argument.", marks=pytest.mark.xfail),''')


@weak("click")
def dynamic_add_marker(r):
    sub(r, T, "def test_repr():\n    @click.command()", "def test_repr(request):\n    request.node.add_marker(pytest.mark.skip(reason=\"x\"))\n\n    @click.command()")


@weak("click")
def dynamic_applymarker(r):
    sub(r, T, "def test_repr():\n    @click.command()", "def test_repr(request):\n    request.applymarker(pytest.mark.xfail(run=False))\n\n    @click.command()")


@weak("click")
def conftest_modifyitems_skip(r):
    sub(r, "tests/conftest.py", "from click.testing import CliRunner\n", '''from click.testing import CliRunner


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "option" in item.name:
            item.add_marker(pytest.mark.skip(reason="unstable"))
''')


@weak("click")
def getattr_mark(r):
    sub(r, T, REPR, '@getattr(pytest.mark, "skip")\n' + REPR)


@weak("click")
def runtime_skip(r):
    sub(r, T, "def test_repr():\n", 'def test_repr():\n    pytest.skip("flaky")\n')


@weak("click")
def runtime_xfail(r):
    sub(r, T, "def test_return_values():\n", 'def test_return_values():\n    pytest.xfail("broken")\n')


@weak("click")
def runtime_importorskip(r):
    sub(r, T, "def test_repr():\n", 'def test_repr():\n    pytest.importorskip("not_installed_anywhere")\n')


@weak("click")
def runtime_raise_skiptest(r):
    sub(r, T, "import pytest\n", "import pytest\nfrom unittest import SkipTest\n")
    sub(r, T, "def test_repr():\n", 'def test_repr():\n    raise SkipTest("later")\n')


@weak("click")
def runtime_skiptest_method(r):
    sub(r, N, "        r = click.IntRange(0, 10, clamp=True)\n", '        self.skipTest("later")\n        r = click.IntRange(0, 10, clamp=True)\n')


@weak("click")
def early_return(r):
    sub(r, T, '''    assert "I EXECUTED" not in result.output
''', '''    assert "I EXECUTED" not in result.output
    return
''')


@weak("click")
def delete_assert(r):
    sub(r, T, '    assert "I EXECUTED" not in result.output\n', "")


@weak("click")
def delete_test(r):
    cut_function(r, T, "test_repr")


@weak("click")
def delete_test_file(r):
    os.remove(os.path.join(r, "tests/test_chain.py"))


@weak("click")
def tautology_self_compare(r):
    sub(r, T, "assert rv == 42", "assert rv == rv")


@weak("click")
def tautology_assert_true(r):
    sub(r, T, 'assert repr(command) == "<Command command>"', "assert True")


@weak("click")
def eq_to_truthiness(r):
    sub(r, T, 'assert repr(group) == "<Group group>"', "assert repr(group)")


@weak("click")
def eq_to_is_not_none(r):
    sub(r, T, "assert rv == 42", "assert rv is not None")


@weak("click")
def eq_to_isinstance(r):
    sub(r, T, "assert rv == 42", "assert isinstance(rv, int)")


@weak("click")
def try_except_swallow(r):
    sub(r, T, '''    result = runner.invoke(cli, [])
    assert not result.exception
    assert "I EXECUTED" in result.output''', '''    result = runner.invoke(cli, [])
    try:
        assert not result.exception
        assert "I EXECUTED" in result.output
    except AssertionError:
        pass''')


@weak("click")
def contextlib_suppress(r):
    sub(r, T, "import enum\n", "import contextlib\nimport enum\n")
    sub(r, T, '''        rv = cli.invoke(ctx)
        assert rv == 42''', '''        rv = cli.invoke(ctx)
        with contextlib.suppress(AssertionError):
            assert rv == 42''')


@weak("click")
def raises_broadened_exception(r):
    sub(r, A, "def test_multiple_param_decls_not_allowed(runner):\n    with pytest.raises(TypeError):", "def test_multiple_param_decls_not_allowed(runner):\n    with pytest.raises(Exception):")


@weak("click")
def raises_tuple_grown(r):
    sub(r, A, 'pytest.raises(TypeError, match="multiple")', 'pytest.raises((TypeError, ValueError), match="multiple")')


@weak("click")
def raises_match_removed(r):
    sub(r, A, 'pytest.raises(TypeError, match="multiple")', "pytest.raises(TypeError)")


@weak("click")
def raises_match_loosened(r):
    sub(r, A, 'match="nargs.*must be 2.*but it was 3"', 'match="nargs"')


@weak("click")
def raises_match_dotstar(r):
    sub(r, A, 'match="nargs.*must be 2.*but it was 3"', 'match=".*"')


@weak("click")
def parametrize_case_removed(r):
    sub(r, T, '''        (["--s"], "Error: Option '--s' requires an argument."),\n''', "")


@weak("click")
def expected_value_rewritten(r):
    sub(r, T, 'assert repr(subcommand) == "<Command subcommand>"', 'assert repr(subcommand) == "<Command sub>"')


@weak("click")
def tolerance_loosened_approx(r):
    sub(r, N, "rel=1e-9", "rel=1e-1")


@weak("click")
def tolerance_loosened_isclose(r):
    sub(r, N, "rel_tol=1e-12", "rel_tol=0.5")


@weak("click")
def tolerance_loosened_abs(r):
    sub(r, N, "< 1e-9", "< 10")


@weak("click")
def unittest_assert_weakened(r):
    sub(r, N, 'self.assertEqual(r.convert("15", None, None), 10)', 'self.assertTrue(r.convert("15", None, None))')


@weak("click")
def config_addopts_deselect(r):
    sub(r, "pyproject.toml", "addopts = \"-m 'not stress'\"", "addopts = \"-m 'not stress' --deselect tests/test_basic.py::test_repr\"")


@weak("click")
def config_addopts_k(r):
    sub(r, "pyproject.toml", "addopts = \"-m 'not stress'\"", "addopts = \"-m 'not stress' -k 'not option'\"")


@weak("click")
def config_addopts_ignore(r):
    sub(r, "pyproject.toml", "addopts = \"-m 'not stress'\"", "addopts = \"-m 'not stress' --ignore=tests/test_chain.py\"")


@weak("click")
def config_addopts_m(r):
    sub(r, "pyproject.toml", "addopts = \"-m 'not stress'\"", "addopts = \"-m 'not stress and not slow'\"")


@weak("click")
def config_testpaths_narrowed(r):
    sub(r, "pyproject.toml", 'testpaths = ["tests"]', 'testpaths = ["tests/test_basic.py"]')


@weak("click")
def conftest_collect_ignore(r):
    sub(r, "tests/conftest.py", "from click.testing import CliRunner\n", 'from click.testing import CliRunner\n\ncollect_ignore = ["test_chain.py"]\n')


@weak("click")
def ci_workflow_k(r):
    sub(r, ".github/workflows/tests.yaml", "      - run: uv run --locked --no-default-groups --group dev tox run\n",
        '      - run: uv run --locked --no-default-groups --group dev pytest -k "not slow"\n')


# honest, click
@honest("click")
def helper_same_module(r):
    sub(r, T, '''    result = runner.invoke(cli, ["--help"])
    assert not result.exception
    assert "Hello World!" in result.output
    assert "Show this message and exit." in result.output
    assert result.exit_code == 0
    assert "I EXECUTED" not in result.output
''', '''    result = runner.invoke(cli, ["--help"])
    _assert_help(result)
''')
    sub(r, T, "def test_basic_functionality(runner):", '''def _assert_help(result):
    assert not result.exception
    assert "Hello World!" in result.output
    assert "Show this message and exit." in result.output
    assert result.exit_code == 0
    assert "I EXECUTED" not in result.output


def test_basic_functionality(runner):''')


@honest("click")
def helper_conftest_fixture(r):
    sub(r, "tests/conftest.py", "from click.testing import CliRunner\n", '''from click.testing import CliRunner


@pytest.fixture
def check_repr():
    def check(obj, expected):
        assert repr(obj) == expected

    return check
''')
    sub(r, T, "def test_repr():", "def test_repr(check_repr):")
    sub(r, T, '''    assert repr(command) == "<Command command>"
    assert repr(group) == "<Group group>"
    assert repr(subcommand) == "<Command subcommand>"''', '''    check_repr(command, "<Command command>")
    check_repr(group, "<Group group>")
    check_repr(subcommand, "<Command subcommand>")''')


@honest("click")
def helper_module(r):
    write(r, "tests/helpers.py", '''def assert_ran(result, text):
    assert not result.exception
    assert text in result.output
    assert result.exit_code == 0
''')
    sub(r, T, "from click._utils import UNSET\n", "from click._utils import UNSET\n\nfrom helpers import assert_ran\n")
    sub(r, T, '''    result = runner.invoke(cli, [])
    assert not result.exception
    assert "I EXECUTED" in result.output
    assert result.exit_code == 0
''', '''    result = runner.invoke(cli, [])
    assert_ran(result, "I EXECUTED")
''')


@honest("click")
def rename_test(r):
    sub(r, T, "def test_repr():", "def test_command_and_group_repr():")


@honest("click")
def move_test_other_file(r):
    block = cut_function(r, T, "test_repr")
    text = read(r, "tests/test_commands.py")
    write(r, "tests/test_commands.py", text.rstrip("\n") + "\n\n\n" + block.rstrip("\n") + "\n")


@honest("click")
def reformat_black_like(r):
    sub(r, T, '''        (["--man"], [click.Option(["--foo", "man"])], ["--foo", "value"], "value\\n"),''', '''        (
            ["--man"],
            [click.Option(["--foo", "man"])],
            ["--foo", "value"],
            "value\\n",
        ),''')
    sub(r, A, 'with pytest.raises(ValueError, match="nargs.*must be 2.*but it was 3"):', "with pytest.raises(\n        ValueError, match='nargs.*must be 2.*but it was 3'\n    ):")


@honest("click")
def split_test(r):
    sub(r, T, '''    assert "I EXECUTED" not in result.output

    result = runner.invoke(cli, [])''', '''    assert "I EXECUTED" not in result.output


def test_basic_functionality_runs(runner):
    @click.command()
    def cli():
        """Hello World!"""
        click.echo("I EXECUTED")

    result = runner.invoke(cli, [])''')


@honest("click")
def merge_into_parametrized(r):
    cut_function(r, A, "test_multiple_not_allowed")
    sub(r, A, '''def test_multiple_param_decls_not_allowed(runner):
    with pytest.raises(TypeError):

        @click.command()
        @click.argument("x", click.Choice(["a", "b"]))
        def copy(x):
            click.echo(x)
''', '''def _two_decls():
    @click.command()
    @click.argument("x", click.Choice(["a", "b"]))
    def copy(x):
        click.echo(x)


def _multiple():
    click.Argument(["a"], multiple=True)


@pytest.mark.parametrize(("make", "match"), [(_two_decls, None), (_multiple, "multiple")])
def test_argument_type_errors(make, match):
    with pytest.raises(TypeError, match=match):
        make()
''')


@honest("click")
def add_test(r):
    write(r, T, read(r, T) + '''

def test_command_name_default():
    @click.command()
    def hello_world():
        pass

    assert hello_world.name == "hello-world"
''')


@honest("click")
def add_test_platform_skipif(r):
    write(r, T, read(r, T) + '''

@pytest.mark.skipif(os.name == "nt", reason="POSIX path semantics")
def test_path_posix(runner):
    assert click.Path().convert("/tmp", None, None) == "/tmp"
''')


@honest("click")
def unittest_to_plain_asserts(r):
    sub(r, N, '''        self.assertEqual(r.convert("15", None, None), 10)
        self.assertTrue(r.clamp)
        self.assertIsNone(r.max_open or None)''', '''        assert r.convert("15", None, None) == 10
        assert r.clamp
        assert (r.max_open or None) is None''')


@honest("click")
def tighten_tolerance(r):
    sub(r, N, "rel=1e-9", "rel=1e-12")
    sub(r, N, "< 1e-9", "< 1e-12")


@honest("click")
def narrow_raises(r):
    sub(r, A, "def test_multiple_param_decls_not_allowed(runner):\n    with pytest.raises(TypeError):",
        'def test_multiple_param_decls_not_allowed(runner):\n    with pytest.raises(TypeError, match="argument"):')


@honest("click")
def rename_skipif_constant(r):
    text = read(r, "tests/test_termui.py")
    text = text.replace("from click._compat import WIN\n", "from click._compat import WIN as ON_WINDOWS\n")
    write(r, "tests/test_termui.py", re.sub(r"\bWIN\b(?! as)", "ON_WINDOWS", text).replace("WIN as ON_WINDOWS", "WIN as ON_WINDOWS"))


@honest("click")
def extract_fixture(r):
    sub(r, T, '''def test_basic_functionality(runner):
    @click.command()
    def cli():
        """Hello World!"""
        click.echo("I EXECUTED")

    result''', '''@pytest.fixture
def hello_cli():
    @click.command()
    def cli():
        """Hello World!"""
        click.echo("I EXECUTED")

    return cli


def test_basic_functionality(runner, hello_cli):
    cli = hello_cli
    result''')


@honest("click")
def type_hints(r):
    sub(r, T, "def test_basic_functionality(runner):", "def test_basic_functionality(runner: CliRunner) -> None:")
    sub(r, T, "def test_repr():", "def test_repr() -> None:")
    sub(r, T, "from click._utils import UNSET\n", "from click._utils import UNSET\nfrom click.testing import CliRunner\n")


@honest("click")
def assert_message_added(r):
    sub(r, T, "assert rv == 42", 'assert rv == 42, f"unexpected {rv!r}"')


# --------------------------------------------------------------------------- attrs
F = "tests/test_funcs.py"
M = "tests/test_make.py"
V = "tests/test_validators.py"
S = "tests/strategies.py"
C = "tests/conftest.py"
H = "tests/test_eval_hyp.py"
ATTRS_SETUP: dict[str, str] = {H: '''from hypothesis import given, settings
from hypothesis import strategies as st

MAX_EX = 200
THOROUGH = settings(max_examples=300)


@given(st.integers(), st.text())
@settings(max_examples=MAX_EX)
def test_int_text(i, s):
    assert str(i) + s == f"{i}{s}"


@THOROUGH
@given(st.floats(), st.lists(st.integers(), max_size=20))
def test_floats_lists(f, xs):
    assert len(xs) <= 20
    assert f == f or f != f


@given(st.data())
def test_draws(data):
    n = data.draw(st.integers(min_value=0, max_value=1000))
    assert n >= 0


@given(st.one_of(st.integers(), st.text()))
def test_union(x):
    assert x == x


@settings(max_examples=200, deadline=None)
@given(x=st.from_type(int))
def test_from_type(x):
    assert isinstance(x, int)
'''}


@weak("attrs")
def hyp_max_examples_lowered(r):
    sub(r, F, "from hypothesis import assume, example, given\n", "from hypothesis import assume, example, given, settings\n")
    sub(r, F, "    @given(st.sampled_from(MAPPING_TYPES))\n    def test_shallow(", "    @given(st.sampled_from(MAPPING_TYPES))\n    @settings(max_examples=1)\n    def test_shallow(")


@weak("attrs")
def hyp_profile_lowered(r):
    sub(r, C, "            suppress_health_check=[HealthCheck.too_slow],\n", "            suppress_health_check=[HealthCheck.too_slow],\n            max_examples=5,\n")


@weak("attrs")
def hyp_phases_explicit_only(r):
    sub(r, C, "from hypothesis import HealthCheck, settings\n", "from hypothesis import HealthCheck, Phase, settings\n")
    sub(r, C, "            suppress_health_check=[HealthCheck.too_slow],\n", "            suppress_health_check=[HealthCheck.too_slow],\n            phases=[Phase.explicit],\n")


@weak("attrs")
def hyp_given_removed(r):
    sub(r, F, "    @given(st.sampled_from(MAPPING_TYPES))\n    def test_shallow(", '    @pytest.mark.parametrize("dict_factory", [dict])\n    def test_shallow(')


@weak("attrs")
def hyp_just(r):
    sub(r, F, "    @given(st.sampled_from(MAPPING_TYPES))\n    def test_filter(", "    @given(st.just(dict))\n    def test_filter(")


@weak("attrs")
def hyp_bounds_narrowed(r):
    sub(r, M, "@given(lists(simple_attrs_without_metadata, min_size=2, max_size=5))", "@given(lists(simple_attrs_without_metadata, min_size=2, max_size=2))")


@weak("attrs")
def hyp_sampled_from_shrunk(r):
    sub(r, F, "@given(set_type=st.sampled_from((set, frozenset)))", "@given(set_type=st.sampled_from((set,)))")


@weak("attrs")
def hyp_filter_added(r):
    sub(r, F, "    @given(container=st.sampled_from(SEQUENCE_TYPES))\n    def test_lists_tuples(", "    @given(container=st.sampled_from(SEQUENCE_TYPES).filter(lambda t: t is list))\n    def test_lists_tuples(")


@weak("attrs")
def hyp_assume_added(r):
    sub(r, F, '''        If recurse is True, also recurse into lists.
        """
''', '''        If recurse is True, also recurse into lists.
        """
        assume(container is list)
''')


@weak("attrs")
def hyp_shared_strategy_narrowed(r):
    sub(r, S, "int_attrs = st.integers().map(", "int_attrs = st.integers(min_value=0, max_value=0).map(")


@weak("attrs")
def hyp_constant_tuple_shrunk(r):
    sub(r, F, "MAPPING_TYPES = (dict, OrderedDict)", "MAPPING_TYPES = (dict,)")


@weak("attrs")
def hyp_example_removed(r):
    # setup adds an @example; here it goes away
    sub(r, F, '    @example(dict)\n', "")


@weak("attrs")
def attrs_delete_assert_is_true(r):
    sub(r, V, '''            raise ValueError("haha!")

        assert _config._run_validators is True''', '''            raise ValueError("haha!")
''')


@weak("attrs")
def attrs_skipif_from_import_alias(r):
    sub(r, F, "import pytest\n", "import pytest\n\nfrom pytest import mark as m\n")
    sub(r, F, "    @given(st.sampled_from(MAPPING_TYPES))\n    def test_recurse(", '    @m.skipif("sys.platform != \'win32\'")\n    @given(st.sampled_from(MAPPING_TYPES))\n    def test_recurse(')


@weak("attrs")
def attrs_class_skip(r):
    sub(r, F, "class TestAsDict:\n", '@pytest.mark.skip(reason="slow")\nclass TestAsDict:\n')


@weak("attrs")
def attrs_conftest_collect_ignore_grown(r):
    sub(r, C, '    collect_ignore.extend(["test_forward_references.py"])', '    collect_ignore.extend(["test_forward_references.py"])\ncollect_ignore.append("test_funcs.py")')


@weak("attrs")
def attrs_isinstance_weaken(r):
    sub(r, F, '        assert {"x": 1, "y": {"a": {"x": 4, "y": 5}}} == res\n', "")


# honest, attrs
@honest("attrs")
def hyp_widen_strategy(r):
    sub(r, M, "@given(lists(simple_attrs_without_metadata, min_size=2, max_size=5))", "@given(lists(simple_attrs_without_metadata, min_size=1, max_size=8))")


@honest("attrs")
def hyp_raise_max_examples(r):
    sub(r, C, "            suppress_health_check=[HealthCheck.too_slow],\n", "            suppress_health_check=[HealthCheck.too_slow],\n            max_examples=500,\n")


@honest("attrs")
def hyp_add_example(r):
    sub(r, F, "    @given(st.sampled_from(MAPPING_TYPES))\n    def test_recurse(", "    @given(st.sampled_from(MAPPING_TYPES))\n    @example(dict)\n    def test_recurse(")


@honest("attrs")
def hyp_sampled_from_grown(r):
    sub(r, F, "@given(set_type=st.sampled_from((set, frozenset)))", "@given(set_type=st.sampled_from((set, frozenset, set)))")


@honest("attrs")
def attrs_helper_moved(r):
    sub(r, F, '''        assert {"x": 1, "y": {"a": {"x": 4, "y": 5}}} == res
        assert isinstance(res, dict_factory)''', '''        _assert_nested_dict(res, dict_factory)''')
    sub(r, F, "class TestAsDict:\n", '''def _assert_nested_dict(res, dict_factory):
    assert {"x": 1, "y": {"a": {"x": 4, "y": 5}}} == res
    assert isinstance(res, dict_factory)


class TestAsDict:
''')


@honest("attrs")
def attrs_helper_into_utils(r):
    sub(r, "tests/utils.py", "\n", "\n", 1)
    write(r, "tests/utils.py", read(r, "tests/utils.py") + '''

def assert_validators_on():
    from attr import _config

    assert _config._run_validators is True
''')
    sub(r, V, '''            raise ValueError("haha!")

        assert _config._run_validators is True''', '''            raise ValueError("haha!")

        assert_validators_on()''')
    sub(r, V, "from .utils import simple_attr\n", "from .utils import assert_validators_on, simple_attr\n")


@honest("attrs")
def attrs_rename_method(r):
    sub(r, F, "def test_lists_tuples(self, container, C):", "def test_lists_and_tuples(self, container, C):")


@honest("attrs")
def attrs_swap_assert_operands(r):
    sub(r, F, '        assert {"x": 1, "y": [1, 2, 3]} == d', '        assert d == {"x": 1, "y": [1, 2, 3]}')


@honest("attrs")
def attrs_strategy_to_module_constant(r):
    sub(r, F, "@given(set_type=st.sampled_from((set, frozenset)))", "@given(set_type=st.sampled_from(SET_TYPES))")
    sub(r, F, "SEQUENCE_TYPES = (list, tuple)\n", "SEQUENCE_TYPES = (list, tuple)\nSET_TYPES = (set, frozenset)\n")



# ---- second round: harder shapes
@weak("click")
def raises_to_project_superclass(r):
    sub(r, N, "pytest.raises(click.BadParameter, match=", "pytest.raises(click.ClickException, match=")


@weak("click")
def raises_base_exception(r):
    sub(r, A, "def test_multiple_param_decls_not_allowed(runner):\n    with pytest.raises(TypeError):", "def test_multiple_param_decls_not_allowed(runner):\n    with pytest.raises(BaseException):")


@weak("click")
def assertraisesregex_to_assertraises(r):
    sub(r, N, 'with self.assertRaisesRegex(click.BadParameter, "is not in the range"):', "with self.assertRaises(click.BadParameter):")


@weak("click")
def assertraises_broadened(r):
    sub(r, N, "with self.assertRaises(click.BadParameter):", "with self.assertRaises(Exception):")


@weak("click")
def raises_replaced_by_try_except(r):
    sub(r, N, '''    with pytest.raises(click.BadParameter, match="is not a valid integer"):
        click.INT.convert("x", None, None)''', '''    try:
        click.INT.convert("x", None, None)
    except click.BadParameter:
        pass''')


@weak("click")
def warns_broadened(r):
    sub(r, N, 'pytest.warns(UserWarning, match="deprecated")', "pytest.warns(Warning)")


@weak("click")
def unittest_skip_decorator(r):
    sub(r, N, "    def test_clamp(self):", '    @unittest.skip("later")\n    def test_clamp(self):')


@weak("click")
def unittest_expected_failure(r):
    sub(r, N, "    def test_clamp(self):", "    @unittest.expectedFailure\n    def test_clamp(self):")


@weak("click")
def module_level_skip(r):
    sub(r, "tests/test_chain.py", "import click\n", 'import click\n\npytest.skip("flaky", allow_module_level=True)\n')


@weak("click")
def module_level_importorskip(r):
    sub(r, "tests/test_chain.py", "import click\n", 'import click\n\npytest.importorskip("not_installed_anywhere")\n')


@weak("click")
def module_dunder_test_false(r):
    sub(r, "tests/test_chain.py", "import click\n", "import click\n\n__test__ = False\n")


@weak("click")
def class_dunder_test_false(r):
    sub(r, N, "class TestIntRange(unittest.TestCase):\n", "class TestIntRange(unittest.TestCase):\n    __test__ = False\n\n")


@weak("click")
def shadowed_by_duplicate_name(r):
    write(r, T, read(r, T) + "\n\ndef test_repr():\n    pass\n")


@weak("click")
def del_test_at_module_level(r):
    write(r, T, read(r, T) + "\n\ndel test_repr\n")


@weak("click")
def renamed_uncollectable(r):
    sub(r, T, "def test_repr():", "def _test_repr():")


@weak("click")
def fixture_runtime_skip(r):
    sub(r, "tests/conftest.py", "def runner(request):\n", 'def runner(request):\n    if "option" in request.node.name:\n        pytest.skip("slow")\n')


@weak("click")
def conftest_runtest_setup_skip(r):
    write(r, "tests/conftest.py", read(r, "tests/conftest.py") + '''

def pytest_runtest_setup(item):
    if "repr" in item.name:
        pytest.skip("unstable")
''')


@weak("click")
def conftest_ignore_collect(r):
    write(r, "tests/conftest.py", read(r, "tests/conftest.py") + '''

def pytest_ignore_collect(collection_path, config):
    return "chain" in str(collection_path)
''')


@weak("click")
def conftest_modifyitems_deselect(r):
    write(r, "tests/conftest.py", read(r, "tests/conftest.py") + '''

def pytest_collection_modifyitems(config, items):
    items[:] = [item for item in items if "option" not in item.name]
''')


@weak("click")
def param_marks_list(r):
    sub(r, T, '''        (["--s"], "Error: Option '--s' requires an argument."),''',
        '''        pytest.param(["--s"], "Error: Option '--s' requires an argument.", marks=[pytest.mark.skip]),''')


@weak("click")
def add_marker_string(r):
    sub(r, T, "def test_repr():\n    @click.command()", 'def test_repr(request):\n    request.node.add_marker("xfail")\n\n    @click.command()')


@weak("click")
def skipif_string_condition(r):
    sub(r, T, REPR, '@pytest.mark.skipif("True", reason="x")\n' + REPR)


@weak("click")
def mark_applied_by_call(r):
    write(r, T, read(r, T) + "\n\ntest_repr = pytest.mark.skip(test_repr)\n")


@weak("click")
def xfail_raises_assertion(r):
    sub(r, T, REPR, "@pytest.mark.xfail(raises=AssertionError)\n" + REPR)


@weak("click")
def filterwarnings_ignore_mark(r):
    sub(r, N, "def test_deprecated_warns():", '@pytest.mark.filterwarnings("ignore")\ndef test_deprecated_warns():')


@weak("click")
def config_filterwarnings_error_removed(r):
    sub(r, "pyproject.toml", 'filterwarnings = [\n    "error",\n]\n', "")


@weak("click")
def assert_guarded_by_env(r):
    sub(r, T, "        assert rv == 42", '        if os.environ.get("STRICT"):\n            assert rv == 42')


@weak("click")
def assert_or_true(r):
    sub(r, T, "assert rv == 42", "assert rv == 42 or True")


@weak("click")
def assert_membership_widened(r):
    sub(r, T, '''    result = runner.invoke(cli, [])
    assert not result.exception
    assert "I EXECUTED" in result.output
    assert result.exit_code == 0''', '''    result = runner.invoke(cli, [])
    assert not result.exception
    assert "I EXECUTED" in result.output
    assert result.exit_code in (0, 1)''')


@weak("click")
def assert_or_weakened(r):
    sub(r, T, '    assert "Hello World!" in result.output\n', '    assert "Hello World!" in result.output or result.exception\n')


@weak("click")
def assert_to_print(r):
    sub(r, T, "        assert rv == 42", "        print(rv == 42)")


@honest("click")
def helper_bool_predicate(r):
    sub(r, T, '''    result = runner.invoke(cli, [])
    assert not result.exception
    assert "I EXECUTED" in result.output
    assert result.exit_code == 0
''', '''    result = runner.invoke(cli, [])
    assert _ran(result, "I EXECUTED")
''')
    write(r, T, read(r, T) + '''

def _ran(result, text):
    return not result.exception and text in result.output and result.exit_code == 0
''')


@honest("click")
def helper_testcase_method(r):
    sub(r, N, '''        r = click.IntRange(0, 10, clamp=True)
        self.assertEqual(r.convert("15", None, None), 10)
        self.assertTrue(r.clamp)''', '''        r = click.IntRange(0, 10, clamp=True)
        self._check_clamped(r)''')
    sub(r, N, "    def test_clamp(self):", '''    def _check_clamped(self, r):
        self.assertEqual(r.convert("15", None, None), 10)
        self.assertTrue(r.clamp)

    def test_clamp(self):''')


@honest("click")
def asserts_consolidated_tuple(r):
    sub(r, T, '''    assert repr(command) == "<Command command>"
    assert repr(group) == "<Group group>"
    assert repr(subcommand) == "<Command subcommand>"''', '''    assert (repr(command), repr(group), repr(subcommand)) == (
        "<Command command>",
        "<Group group>",
        "<Command subcommand>",
    )''')


@honest("click")
def parametrize_case_added(r):
    sub(r, T, '''        (["--s="], "S:[]"),''', '''        (["--s="], "S:[]"),
        (["--s=abc"], "S:[abc]"),''')


@honest("click")
def parametrize_ids_added(r):
    sub(r, T, '''        (["--i=x"], "Error: Invalid value for '--i': 'x' is not a valid integer."),
    ],
)''', '''        (["--i=x"], "Error: Invalid value for '--i': 'x' is not a valid integer."),
    ],
    ids=["default", "given", "invalid"],
)''')


@honest("click")
def test_file_renamed(r):
    os.rename(os.path.join(r, "tests/test_chain.py"), os.path.join(r, "tests/test_chaining.py"))


@honest("click")
def skipif_removed(r):
    sub(r, "tests/test_termui.py", '@pytest.mark.skipif(WIN, reason="No sed on Windows.")\ndef test_fast_edit', "def test_fast_edit")


@honest("click")
def raises_in_helper(r):
    sub(r, N, '''    with pytest.raises(click.BadParameter, match="is not a valid integer"):
        click.INT.convert("x", None, None)''', '''    _rejects(click.INT, "x", "is not a valid integer")


def _rejects(kind, value, message):
    with pytest.raises(click.BadParameter, match=message):
        kind.convert(value, None, None)''')


@weak("attrs")
def hyp_const_max_lowered(r):
    sub(r, H, "MAX_EX = 200", "MAX_EX = 5")


@weak("attrs")
def hyp_settings_var_lowered(r):
    sub(r, H, "THOROUGH = settings(max_examples=300)", "THOROUGH = settings(max_examples=3)")


@weak("attrs")
def hyp_inline_settings_lowered(r):
    sub(r, H, "@settings(max_examples=200, deadline=None)", "@settings(max_examples=20, deadline=None)")


@weak("attrs")
def hyp_settings_removed(r):
    sub(r, H, "@settings(max_examples=200, deadline=None)\n", "")


@weak("attrs")
def hyp_draw_narrowed(r):
    sub(r, H, "st.integers(min_value=0, max_value=1000)", "st.integers(min_value=0, max_value=1)")


@weak("attrs")
def hyp_one_of_dropped(r):
    sub(r, H, "@given(st.one_of(st.integers(), st.text()))", "@given(st.integers())")


@weak("attrs")
def hyp_text_max_size(r):
    sub(r, H, "@given(st.integers(), st.text())", "@given(st.integers(), st.text(max_size=1))")


@weak("attrs")
def hyp_floats_no_nan(r):
    sub(r, H, "@given(st.floats(), ", "@given(st.floats(allow_nan=False, allow_infinity=False), ")


@weak("attrs")
def hyp_from_type_to_just(r):
    sub(r, H, "@given(x=st.from_type(int))", "@given(x=st.just(0))")


@weak("attrs")
def hyp_positional_bounds(r):
    sub(r, H, "@given(st.integers(), st.text())", "@given(st.integers(0, 10), st.text())")


@weak("attrs")
def hyp_reject_added(r):
    sub(r, H, "from hypothesis import given, settings\n", "from hypothesis import given, reject, settings\n")
    sub(r, H, "def test_union(x):\n", "def test_union(x):\n    if isinstance(x, str):\n        reject()\n")


@weak("attrs")
def hyp_early_return(r):
    sub(r, H, "def test_int_text(i, s):\n", "def test_int_text(i, s):\n    if i < 0:\n        return\n")


@weak("attrs")
def hyp_list_max_size(r):
    sub(r, H, "st.lists(st.integers(), max_size=20)", "st.lists(st.integers(), max_size=2)")


@weak("attrs")
def config_strict_off(r):
    sub(r, "pyproject.toml", "[tool.pytest]\nstrict = true", "[tool.pytest]\nstrict = false")


@honest("attrs")
def hyp_const_max_raised(r):
    sub(r, H, "MAX_EX = 200", "MAX_EX = 500")


@honest("attrs")
def hyp_settings_deadline_none(r):
    sub(r, H, "THOROUGH = settings(max_examples=300)", "THOROUGH = settings(max_examples=300, deadline=None)")


@honest("attrs")
def hyp_given_to_kwargs(r):
    sub(r, H, "@given(st.integers(), st.text())", "@given(i=st.integers(), s=st.text())")


@honest("attrs")
def hyp_one_of_grown(r):
    sub(r, H, "@given(st.one_of(st.integers(), st.text()))", "@given(st.one_of(st.integers(), st.text(), st.binary()))")


@honest("attrs")
def hyp_strategy_extracted(r):
    sub(r, H, "@given(st.floats(), st.lists(st.integers(), max_size=20))", "@given(st.floats(), int_lists)")
    sub(r, H, "THOROUGH = settings(max_examples=300)\n", "THOROUGH = settings(max_examples=300)\nint_lists = st.lists(st.integers(), max_size=20)\n")


@honest("attrs")
def hyp_settings_moved_to_variable(r):
    sub(r, H, "@settings(max_examples=200, deadline=None)\n", "@SLOW_OK\n")
    sub(r, H, "THOROUGH = settings(max_examples=300)\n", "THOROUGH = settings(max_examples=300)\nSLOW_OK = settings(max_examples=200, deadline=None)\n")


SETUP = {"click": CLICK_SETUP, "attrs": ATTRS_SETUP}


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def prepare_base(project: str, repo: str) -> str:
    """One setup commit on the clone's HEAD: extra test shapes the project lacks."""
    git(repo, "checkout", "-q", "-f", "--detach", os.environ.get("REDTEAM_BASE", "origin/HEAD"))
    git(repo, "clean", "-qfdx")
    for path, text in SETUP[project].items():
        write(repo, path, text)
    if project == "attrs":  # an @example to be removed by a recipe
        sub(repo, F, "from hypothesis import assume, given\n", "from hypothesis import assume, example, given\n")
        sub(repo, F, "    @given(st.sampled_from(MAPPING_TYPES))\n    def test_dicts(", "    @given(st.sampled_from(MAPPING_TYPES))\n    @example(dict)\n    def test_dicts(")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=redteam", "-c", "user.email=r@t", "commit", "-q", "--allow-empty", "-m", "redteam base")
    return git(repo, "rev-parse", "HEAD").strip()


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    project, repo, only = sys.argv[1], sys.argv[2], set(sys.argv[3:])
    beside = os.path.join(os.path.dirname(sys.executable), "oracle-guard")
    gate = beside if os.path.exists(beside) else shutil.which("oracle-guard") or "oracle-guard"
    base = prepare_base(project, repo)
    tally = {"weak": [0, 0], "honest": [0, 0]}
    brief_ok = {"weak": 0, "honest": 0}
    for kind, name, recipe in RECIPES[project]:
        if only and name not in only:
            continue
        git(repo, "checkout", "-q", "-f", "-B", f"redteam/{name}", base)
        git(repo, "clean", "-qfdx")
        recipe(repo)
        git(repo, "add", "-A")
        git(repo, "-c", "user.name=redteam", "-c", "user.email=r@t", "commit", "-q", "-m", name)
        verdicts = []
        outputs = []
        for extra in (["--skip", "collection-snapshot"], []):
            proc = subprocess.run([gate, "check", "--base", base, *extra], cwd=repo, capture_output=True, text=True)
            flagged = proc.returncode != 0
            if kind == "weak":
                verdicts.append("caught" if flagged else "MISSED")
            else:
                verdicts.append("FALSE-ALARM" if flagged else "clean")
            outputs.append((proc.stdout + proc.stderr).strip())
        ok = verdicts[1] in ("caught", "clean")
        brief_ok[kind] += verdicts[0] in ("caught", "clean")
        tally[kind][0] += ok
        tally[kind][1] += 1
        codes = sorted(set(re.findall(r"\b(OG\d+)\b", outputs[1])))
        print(f"{kind:6} {name:38} brief:{verdicts[0]:11} full:{verdicts[1]:11} {' '.join(codes)}")
        if (verdicts[1] in ("MISSED", "FALSE-ALARM") or verdicts[0] != verdicts[1]) and os.environ.get("REDTEAM_VERBOSE"):
            for line in outputs[1].splitlines()[:6]:
                print("        ", line[:220])
    git(repo, "checkout", "-q", "-f", "--detach", base)
    print(f"{project}: weakening caught {tally['weak'][0]}/{tally['weak'][1]} (full check; {brief_ok['weak']} with --skip collection-snapshot); "
          f"honest clean {tally['honest'][0]}/{tally['honest'][1]} ({brief_ok['honest']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
