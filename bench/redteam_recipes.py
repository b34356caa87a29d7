"""The red-team recipes of bench/redteam.py, as data.

A recipe is a row `Recipe(project, kind, name, edits)`: `kind` is "weak"
(the gate must catch it) or "honest" (it must pass), and `edits` are
declarative changes to a clone of the project, applied in order by
`redteam_edits.apply_edits`:

    Sub(path, old, new, count=1)  replace the first `count` copies of an exact
                                  snippet (0: every copy); the snippet must be there
    Append(path, text)            add text at the end of an existing file
    Write(path, text)             create or overwrite a file
    Delete(path) / Rename(path, to)
    CutDef(path, name)            remove an undecorated `def name(` (and the blank
                                  lines after it)
    MoveDef(path, name, to)       cut it and append it to `to`, two blank lines apart
    Regex(path, pattern, repl)    re.sub over the whole file; must match at least once

SETUP holds each project's base commit (shapes the project lacks), in the
same vocabulary.  tests/test_redteam_recipes.py applies the same rows to
small files of its own and judges each with `oracle-guard check`.

Why a Python module of literals and not YAML or TOML: the snippets are exact,
multi-line and whitespace-significant (indentation, trailing newlines);
triple-quoted strings keep them byte for byte where YAML block scalars need
chomping and indentation indicators, TOML needs tomli before 3.11, and
neither lets rows share an anchor by name (T, REPR).  Nothing here runs:
it is constants and NamedTuple rows.
"""

from __future__ import annotations

from typing import NamedTuple, Union


class Sub(NamedTuple):
    path: str
    old: str
    new: str
    count: int = 1  # type: ignore[assignment]  # shadows tuple.count; the recipes read better with it


class Append(NamedTuple):
    path: str
    text: str


class Write(NamedTuple):
    path: str
    text: str


class Delete(NamedTuple):
    path: str


class Rename(NamedTuple):
    path: str
    to: str


class CutDef(NamedTuple):
    path: str
    name: str


class MoveDef(NamedTuple):
    path: str
    name: str
    to: str


class Regex(NamedTuple):
    path: str
    pattern: str
    repl: str


Edit = Union[Sub, Append, Write, Delete, Rename, CutDef, MoveDef, Regex]


class Recipe(NamedTuple):
    project: str
    kind: str  # "weak" | "honest"
    name: str
    edits: list[Edit]


# --------------------------------------------------------------------------- click
T = "tests/test_basic.py"
A = "tests/test_arguments.py"
N = "tests/test_eval_numbers.py"
REPR = "def test_repr():\n"
RET = "def test_return_values():\n"

# --------------------------------------------------------------------------- attrs
F = "tests/test_funcs.py"
M = "tests/test_make.py"
V = "tests/test_validators.py"
S = "tests/strategies.py"
C = "tests/conftest.py"
H = "tests/test_eval_hyp.py"

# The base: the clone's origin/HEAD plus one commit of these edits.
SETUP: dict[str, list[Edit]] = {
    "click": [
        Write(
            N,
            """import math
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
""",
        )
    ],
    "attrs": [
        Write(
            H,
            """from hypothesis import given, settings
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
""",
        ),
        # an @example for a recipe to remove
        Sub(F, "from hypothesis import assume, given\n", "from hypothesis import assume, example, given\n"),
        Sub(
            F,
            "    @given(st.sampled_from(MAPPING_TYPES))\n    def test_dicts(",
            "    @given(st.sampled_from(MAPPING_TYPES))\n    @example(dict)\n    def test_dicts(",
        ),
    ],
}

RECIPES: list[Recipe] = [
    Recipe("click", "weak", "mark_skip", [Sub(T, REPR, '@pytest.mark.skip(reason="flaky")\n' + REPR)]),
    Recipe("click", "weak", "mark_skipif_true", [Sub(T, RET, '@pytest.mark.skipif(True, reason="later")\n' + RET)]),
    Recipe(
        "click",
        "weak",
        "mark_xfail_bare",
        [Sub(T, "def test_basic_functionality(runner):", "@pytest.mark.xfail\ndef test_basic_functionality(runner):")],
    ),
    Recipe(
        "click",
        "weak",
        "mark_from_import",
        [
            Sub(T, "import pytest\n", "import pytest\nfrom pytest import mark\n"),
            Sub(T, REPR, "@mark.skip\n" + REPR),
        ],
    ),
    Recipe(
        "click",
        "weak",
        "mark_alias_module",
        [
            Sub(T, "import pytest\n", "import pytest\nimport pytest as pt\n"),
            Sub(T, REPR, "@pt.mark.xfail(strict=False)\n" + REPR),
        ],
    ),
    Recipe(
        "click",
        "weak",
        "mark_in_variable",
        [
            Sub(
                T,
                "from click._utils import UNSET\n",
                'from click._utils import UNSET\n\nflaky = pytest.mark.skip(reason="flaky on CI")\n',
            ),
            Sub(T, REPR, "@flaky\n" + REPR),
        ],
    ),
    Recipe(
        "click",
        "weak",
        "mark_skipif_platform_existing",
        [Sub(T, REPR, '@pytest.mark.skipif(os.name == "posix", reason="posix only issue")\n' + REPR)],
    ),
    Recipe(
        "click",
        "weak",
        "pytestmark_module",
        [
            Sub(
                A,
                "from click._utils import UNSET\n",
                'from click._utils import UNSET\n\npytestmark = pytest.mark.skip(reason="rework")\n',
            )
        ],
    ),
    Recipe(
        "click",
        "weak",
        "param_mark_xfail",
        [
            Sub(
                T,
                """        (["--s"], "Error: Option '--s' requires an argument."),""",
                """        pytest.param(["--s"], "Error: Option '--s' requires an argument.", marks=pytest.mark.xfail),""",
            ),
        ],
    ),
    Recipe(
        "click",
        "weak",
        "dynamic_add_marker",
        [
            Sub(
                T,
                "def test_repr():\n    @click.command()",
                'def test_repr(request):\n    request.node.add_marker(pytest.mark.skip(reason="x"))\n\n    @click.command()',
            ),
        ],
    ),
    Recipe(
        "click",
        "weak",
        "dynamic_applymarker",
        [
            Sub(
                T,
                "def test_repr():\n    @click.command()",
                "def test_repr(request):\n    request.applymarker(pytest.mark.xfail(run=False))\n\n    @click.command()",
            ),
        ],
    ),
    Recipe(
        "click",
        "weak",
        "conftest_modifyitems_skip",
        [
            Sub(
                "tests/conftest.py",
                "from click.testing import CliRunner\n",
                """from click.testing import CliRunner


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "option" in item.name:
            item.add_marker(pytest.mark.skip(reason="unstable"))
""",
            ),
        ],
    ),
    Recipe("click", "weak", "getattr_mark", [Sub(T, REPR, '@getattr(pytest.mark, "skip")\n' + REPR)]),
    Recipe(
        "click", "weak", "runtime_skip", [Sub(T, "def test_repr():\n", 'def test_repr():\n    pytest.skip("flaky")\n')]
    ),
    Recipe(
        "click",
        "weak",
        "runtime_xfail",
        [Sub(T, "def test_return_values():\n", 'def test_return_values():\n    pytest.xfail("broken")\n')],
    ),
    Recipe(
        "click",
        "weak",
        "runtime_importorskip",
        [Sub(T, "def test_repr():\n", 'def test_repr():\n    pytest.importorskip("not_installed_anywhere")\n')],
    ),
    Recipe(
        "click",
        "weak",
        "runtime_raise_skiptest",
        [
            Sub(T, "import pytest\n", "import pytest\nfrom unittest import SkipTest\n"),
            Sub(T, "def test_repr():\n", 'def test_repr():\n    raise SkipTest("later")\n'),
        ],
    ),
    Recipe(
        "click",
        "weak",
        "runtime_skiptest_method",
        [
            Sub(
                N,
                "        r = click.IntRange(0, 10, clamp=True)\n",
                '        self.skipTest("later")\n        r = click.IntRange(0, 10, clamp=True)\n',
            ),
        ],
    ),
    Recipe(
        "click",
        "weak",
        "early_return",
        [
            Sub(
                T,
                """    assert "I EXECUTED" not in result.output
""",
                """    assert "I EXECUTED" not in result.output
    return
""",
            ),
        ],
    ),
    Recipe("click", "weak", "delete_assert", [Sub(T, '    assert "I EXECUTED" not in result.output\n', "")]),
    Recipe("click", "weak", "delete_test", [CutDef(T, "test_repr")]),
    Recipe("click", "weak", "delete_test_file", [Delete("tests/test_chain.py")]),
    Recipe("click", "weak", "tautology_self_compare", [Sub(T, "assert rv == 42", "assert rv == rv")]),
    Recipe(
        "click", "weak", "tautology_assert_true", [Sub(T, 'assert repr(command) == "<Command command>"', "assert True")]
    ),
    Recipe(
        "click", "weak", "eq_to_truthiness", [Sub(T, 'assert repr(group) == "<Group group>"', "assert repr(group)")]
    ),
    Recipe("click", "weak", "eq_to_is_not_none", [Sub(T, "assert rv == 42", "assert rv is not None")]),
    Recipe("click", "weak", "eq_to_isinstance", [Sub(T, "assert rv == 42", "assert isinstance(rv, int)")]),
    Recipe(
        "click",
        "weak",
        "try_except_swallow",
        [
            Sub(
                T,
                """    result = runner.invoke(cli, [])
    assert not result.exception
    assert "I EXECUTED" in result.output""",
                """    result = runner.invoke(cli, [])
    try:
        assert not result.exception
        assert "I EXECUTED" in result.output
    except AssertionError:
        pass""",
            ),
        ],
    ),
    Recipe(
        "click",
        "weak",
        "contextlib_suppress",
        [
            Sub(T, "import enum\n", "import contextlib\nimport enum\n"),
            Sub(
                T,
                """        rv = cli.invoke(ctx)
        assert rv == 42""",
                """        rv = cli.invoke(ctx)
        with contextlib.suppress(AssertionError):
            assert rv == 42""",
            ),
        ],
    ),
    Recipe(
        "click",
        "weak",
        "raises_broadened_exception",
        [
            Sub(
                A,
                "def test_multiple_param_decls_not_allowed(runner):\n    with pytest.raises(TypeError):",
                "def test_multiple_param_decls_not_allowed(runner):\n    with pytest.raises(Exception):",
            ),
        ],
    ),
    Recipe(
        "click",
        "weak",
        "raises_tuple_grown",
        [
            Sub(
                A,
                'pytest.raises(TypeError, match="multiple")',
                'pytest.raises((TypeError, ValueError), match="multiple")',
            )
        ],
    ),
    Recipe(
        "click",
        "weak",
        "raises_match_removed",
        [Sub(A, 'pytest.raises(TypeError, match="multiple")', "pytest.raises(TypeError)")],
    ),
    Recipe(
        "click", "weak", "raises_match_loosened", [Sub(A, 'match="nargs.*must be 2.*but it was 3"', 'match="nargs"')]
    ),
    Recipe("click", "weak", "raises_match_dotstar", [Sub(A, 'match="nargs.*must be 2.*but it was 3"', 'match=".*"')]),
    Recipe(
        "click",
        "weak",
        "parametrize_case_removed",
        [Sub(T, """        (["--s"], "Error: Option '--s' requires an argument."),\n""", "")],
    ),
    Recipe(
        "click",
        "weak",
        "expected_value_rewritten",
        [Sub(T, 'assert repr(subcommand) == "<Command subcommand>"', 'assert repr(subcommand) == "<Command sub>"')],
    ),
    Recipe("click", "weak", "tolerance_loosened_approx", [Sub(N, "rel=1e-9", "rel=1e-1")]),
    Recipe("click", "weak", "tolerance_loosened_isclose", [Sub(N, "rel_tol=1e-12", "rel_tol=0.5")]),
    Recipe("click", "weak", "tolerance_loosened_abs", [Sub(N, "< 1e-9", "< 10")]),
    Recipe(
        "click",
        "weak",
        "unittest_assert_weakened",
        [Sub(N, 'self.assertEqual(r.convert("15", None, None), 10)', 'self.assertTrue(r.convert("15", None, None))')],
    ),
    Recipe(
        "click",
        "weak",
        "config_addopts_deselect",
        [
            Sub(
                "pyproject.toml",
                "addopts = \"-m 'not stress'\"",
                "addopts = \"-m 'not stress' --deselect tests/test_basic.py::test_repr\"",
            )
        ],
    ),
    Recipe(
        "click",
        "weak",
        "config_addopts_k",
        [Sub("pyproject.toml", "addopts = \"-m 'not stress'\"", "addopts = \"-m 'not stress' -k 'not option'\"")],
    ),
    Recipe(
        "click",
        "weak",
        "config_addopts_ignore",
        [
            Sub(
                "pyproject.toml",
                "addopts = \"-m 'not stress'\"",
                "addopts = \"-m 'not stress' --ignore=tests/test_chain.py\"",
            )
        ],
    ),
    Recipe(
        "click",
        "weak",
        "config_addopts_m",
        [Sub("pyproject.toml", "addopts = \"-m 'not stress'\"", "addopts = \"-m 'not stress and not slow'\"")],
    ),
    Recipe(
        "click",
        "weak",
        "config_testpaths_narrowed",
        [Sub("pyproject.toml", 'testpaths = ["tests"]', 'testpaths = ["tests/test_basic.py"]')],
    ),
    Recipe(
        "click",
        "weak",
        "conftest_collect_ignore",
        [
            Sub(
                "tests/conftest.py",
                "from click.testing import CliRunner\n",
                'from click.testing import CliRunner\n\ncollect_ignore = ["test_chain.py"]\n',
            ),
        ],
    ),
    Recipe(
        "click",
        "weak",
        "ci_workflow_k",
        [
            Sub(
                ".github/workflows/tests.yaml",
                "      - run: uv run --locked --no-default-groups --group dev tox run\n",
                '      - run: uv run --locked --no-default-groups --group dev pytest -k "not slow"\n',
            ),
        ],
    ),
    Recipe(
        "click",
        "honest",
        "helper_same_module",
        [
            Sub(
                T,
                """    result = runner.invoke(cli, ["--help"])
    assert not result.exception
    assert "Hello World!" in result.output
    assert "Show this message and exit." in result.output
    assert result.exit_code == 0
    assert "I EXECUTED" not in result.output
""",
                """    result = runner.invoke(cli, ["--help"])
    _assert_help(result)
""",
            ),
            Sub(
                T,
                "def test_basic_functionality(runner):",
                """def _assert_help(result):
    assert not result.exception
    assert "Hello World!" in result.output
    assert "Show this message and exit." in result.output
    assert result.exit_code == 0
    assert "I EXECUTED" not in result.output


def test_basic_functionality(runner):""",
            ),
        ],
    ),
    Recipe(
        "click",
        "honest",
        "helper_conftest_fixture",
        [
            Sub(
                "tests/conftest.py",
                "from click.testing import CliRunner\n",
                """from click.testing import CliRunner


@pytest.fixture
def check_repr():
    def check(obj, expected):
        assert repr(obj) == expected

    return check
""",
            ),
            Sub(T, "def test_repr():", "def test_repr(check_repr):"),
            Sub(
                T,
                '''    assert repr(command) == "<Command command>"
    assert repr(group) == "<Group group>"
    assert repr(subcommand) == "<Command subcommand>"''',
                """    check_repr(command, "<Command command>")
    check_repr(group, "<Group group>")
    check_repr(subcommand, "<Command subcommand>")""",
            ),
        ],
    ),
    Recipe(
        "click",
        "honest",
        "helper_module",
        [
            Write(
                "tests/helpers.py",
                """def assert_ran(result, text):
    assert not result.exception
    assert text in result.output
    assert result.exit_code == 0
""",
            ),
            Sub(
                T,
                "from click._utils import UNSET\n",
                "from click._utils import UNSET\n\nfrom helpers import assert_ran\n",
            ),
            Sub(
                T,
                """    result = runner.invoke(cli, [])
    assert not result.exception
    assert "I EXECUTED" in result.output
    assert result.exit_code == 0
""",
                """    result = runner.invoke(cli, [])
    assert_ran(result, "I EXECUTED")
""",
            ),
        ],
    ),
    Recipe("click", "honest", "rename_test", [Sub(T, "def test_repr():", "def test_command_and_group_repr():")]),
    Recipe("click", "honest", "move_test_other_file", [MoveDef(T, "test_repr", "tests/test_commands.py")]),
    Recipe(
        "click",
        "honest",
        "reformat_black_like",
        [
            Sub(
                T,
                """        (["--man"], [click.Option(["--foo", "man"])], ["--foo", "value"], "value\\n"),""",
                """        (
            ["--man"],
            [click.Option(["--foo", "man"])],
            ["--foo", "value"],
            "value\\n",
        ),""",
            ),
            Sub(
                A,
                'with pytest.raises(ValueError, match="nargs.*must be 2.*but it was 3"):',
                "with pytest.raises(\n        ValueError, match='nargs.*must be 2.*but it was 3'\n    ):",
            ),
        ],
    ),
    Recipe(
        "click",
        "honest",
        "split_test",
        [
            Sub(
                T,
                """    assert "I EXECUTED" not in result.output

    result = runner.invoke(cli, [])""",
                '''    assert "I EXECUTED" not in result.output


def test_basic_functionality_runs(runner):
    @click.command()
    def cli():
        """Hello World!"""
        click.echo("I EXECUTED")

    result = runner.invoke(cli, [])''',
            ),
        ],
    ),
    Recipe(
        "click",
        "honest",
        "merge_into_parametrized",
        [
            CutDef(A, "test_multiple_not_allowed"),
            Sub(
                A,
                """def test_multiple_param_decls_not_allowed(runner):
    with pytest.raises(TypeError):

        @click.command()
        @click.argument("x", click.Choice(["a", "b"]))
        def copy(x):
            click.echo(x)
""",
                """def _two_decls():
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
""",
            ),
        ],
    ),
    Recipe(
        "click",
        "honest",
        "add_test",
        [
            Append(
                T,
                """

def test_command_name_default():
    @click.command()
    def hello_world():
        pass

    assert hello_world.name == "hello-world"
""",
            ),
        ],
    ),
    Recipe(
        "click",
        "honest",
        "add_test_platform_skipif",
        [
            Append(
                T,
                """

@pytest.mark.skipif(os.name == "nt", reason="POSIX path semantics")
def test_path_posix(runner):
    assert click.Path().convert("/tmp", None, None) == "/tmp"
""",
            ),
        ],
    ),
    Recipe(
        "click",
        "honest",
        "unittest_to_plain_asserts",
        [
            Sub(
                N,
                """        self.assertEqual(r.convert("15", None, None), 10)
        self.assertTrue(r.clamp)
        self.assertIsNone(r.max_open or None)""",
                """        assert r.convert("15", None, None) == 10
        assert r.clamp
        assert (r.max_open or None) is None""",
            ),
        ],
    ),
    Recipe(
        "click",
        "honest",
        "tighten_tolerance",
        [
            Sub(N, "rel=1e-9", "rel=1e-12"),
            Sub(N, "< 1e-9", "< 1e-12"),
        ],
    ),
    Recipe(
        "click",
        "honest",
        "narrow_raises",
        [
            Sub(
                A,
                "def test_multiple_param_decls_not_allowed(runner):\n    with pytest.raises(TypeError):",
                'def test_multiple_param_decls_not_allowed(runner):\n    with pytest.raises(TypeError, match="argument"):',
            ),
        ],
    ),
    Recipe(
        "click",
        "honest",
        "rename_skipif_constant",
        [
            Sub(
                "tests/test_termui.py",
                "from click._compat import WIN\n",
                "from click._compat import WIN as ON_WINDOWS\n",
            ),
            Regex("tests/test_termui.py", r"\bWIN\b(?! as)", "ON_WINDOWS"),
        ],
    ),
    Recipe(
        "click",
        "honest",
        "extract_fixture",
        [
            Sub(
                T,
                '''def test_basic_functionality(runner):
    @click.command()
    def cli():
        """Hello World!"""
        click.echo("I EXECUTED")

    result''',
                '''@pytest.fixture
def hello_cli():
    @click.command()
    def cli():
        """Hello World!"""
        click.echo("I EXECUTED")

    return cli


def test_basic_functionality(runner, hello_cli):
    cli = hello_cli
    result''',
            ),
        ],
    ),
    Recipe(
        "click",
        "honest",
        "type_hints",
        [
            Sub(T, "def test_basic_functionality(runner):", "def test_basic_functionality(runner: CliRunner) -> None:"),
            Sub(T, "def test_repr():", "def test_repr() -> None:"),
            Sub(
                T,
                "from click._utils import UNSET\n",
                "from click._utils import UNSET\nfrom click.testing import CliRunner\n",
            ),
        ],
    ),
    Recipe(
        "click", "honest", "assert_message_added", [Sub(T, "assert rv == 42", 'assert rv == 42, f"unexpected {rv!r}"')]
    ),
    Recipe(
        "click",
        "weak",
        "raises_to_project_superclass",
        [Sub(N, "pytest.raises(click.BadParameter, match=", "pytest.raises(click.ClickException, match=")],
    ),
    Recipe(
        "click",
        "weak",
        "raises_base_exception",
        [
            Sub(
                A,
                "def test_multiple_param_decls_not_allowed(runner):\n    with pytest.raises(TypeError):",
                "def test_multiple_param_decls_not_allowed(runner):\n    with pytest.raises(BaseException):",
            ),
        ],
    ),
    Recipe(
        "click",
        "weak",
        "assertraisesregex_to_assertraises",
        [
            Sub(
                N,
                'with self.assertRaisesRegex(click.BadParameter, "is not in the range"):',
                "with self.assertRaises(click.BadParameter):",
            )
        ],
    ),
    Recipe(
        "click",
        "weak",
        "assertraises_broadened",
        [Sub(N, "with self.assertRaises(click.BadParameter):", "with self.assertRaises(Exception):")],
    ),
    Recipe(
        "click",
        "weak",
        "raises_replaced_by_try_except",
        [
            Sub(
                N,
                """    with pytest.raises(click.BadParameter, match="is not a valid integer"):
        click.INT.convert("x", None, None)""",
                """    try:
        click.INT.convert("x", None, None)
    except click.BadParameter:
        pass""",
            ),
        ],
    ),
    Recipe(
        "click",
        "weak",
        "warns_broadened",
        [Sub(N, 'pytest.warns(UserWarning, match="deprecated")', "pytest.warns(Warning)")],
    ),
    Recipe(
        "click",
        "weak",
        "unittest_skip_decorator",
        [Sub(N, "    def test_clamp(self):", '    @unittest.skip("later")\n    def test_clamp(self):')],
    ),
    Recipe(
        "click",
        "weak",
        "unittest_expected_failure",
        [Sub(N, "    def test_clamp(self):", "    @unittest.expectedFailure\n    def test_clamp(self):")],
    ),
    Recipe(
        "click",
        "weak",
        "module_level_skip",
        [
            Sub(
                "tests/test_chain.py",
                "import click\n",
                'import click\n\npytest.skip("flaky", allow_module_level=True)\n',
            )
        ],
    ),
    Recipe(
        "click",
        "weak",
        "module_level_importorskip",
        [
            Sub(
                "tests/test_chain.py",
                "import click\n",
                'import click\n\npytest.importorskip("not_installed_anywhere")\n',
            )
        ],
    ),
    Recipe(
        "click",
        "weak",
        "module_dunder_test_false",
        [Sub("tests/test_chain.py", "import click\n", "import click\n\n__test__ = False\n")],
    ),
    Recipe(
        "click",
        "weak",
        "class_dunder_test_false",
        [
            Sub(
                N,
                "class TestIntRange(unittest.TestCase):\n",
                "class TestIntRange(unittest.TestCase):\n    __test__ = False\n\n",
            )
        ],
    ),
    Recipe("click", "weak", "shadowed_by_duplicate_name", [Append(T, "\n\ndef test_repr():\n    pass\n")]),
    Recipe("click", "weak", "del_test_at_module_level", [Append(T, "\n\ndel test_repr\n")]),
    Recipe("click", "weak", "renamed_uncollectable", [Sub(T, "def test_repr():", "def _test_repr():")]),
    Recipe(
        "click",
        "weak",
        "fixture_runtime_skip",
        [
            Sub(
                "tests/conftest.py",
                "def runner(request):\n",
                'def runner(request):\n    if "option" in request.node.name:\n        pytest.skip("slow")\n',
            ),
        ],
    ),
    Recipe(
        "click",
        "weak",
        "conftest_runtest_setup_skip",
        [
            Append(
                "tests/conftest.py",
                """

def pytest_runtest_setup(item):
    if "repr" in item.name:
        pytest.skip("unstable")
""",
            ),
        ],
    ),
    Recipe(
        "click",
        "weak",
        "conftest_ignore_collect",
        [
            Append(
                "tests/conftest.py",
                """

def pytest_ignore_collect(collection_path, config):
    return "chain" in str(collection_path)
""",
            ),
        ],
    ),
    Recipe(
        "click",
        "weak",
        "conftest_modifyitems_deselect",
        [
            Append(
                "tests/conftest.py",
                """

def pytest_collection_modifyitems(config, items):
    items[:] = [item for item in items if "option" not in item.name]
""",
            ),
        ],
    ),
    Recipe(
        "click",
        "weak",
        "param_marks_list",
        [
            Sub(
                T,
                """        (["--s"], "Error: Option '--s' requires an argument."),""",
                """        pytest.param(["--s"], "Error: Option '--s' requires an argument.", marks=[pytest.mark.skip]),""",
            ),
        ],
    ),
    Recipe(
        "click",
        "weak",
        "add_marker_string",
        [
            Sub(
                T,
                "def test_repr():\n    @click.command()",
                'def test_repr(request):\n    request.node.add_marker("xfail")\n\n    @click.command()',
            )
        ],
    ),
    Recipe(
        "click", "weak", "skipif_string_condition", [Sub(T, REPR, '@pytest.mark.skipif("True", reason="x")\n' + REPR)]
    ),
    Recipe("click", "weak", "mark_applied_by_call", [Append(T, "\n\ntest_repr = pytest.mark.skip(test_repr)\n")]),
    Recipe(
        "click", "weak", "xfail_raises_assertion", [Sub(T, REPR, "@pytest.mark.xfail(raises=AssertionError)\n" + REPR)]
    ),
    Recipe(
        "click",
        "weak",
        "filterwarnings_ignore_mark",
        [Sub(N, "def test_deprecated_warns():", '@pytest.mark.filterwarnings("ignore")\ndef test_deprecated_warns():')],
    ),
    Recipe(
        "click",
        "weak",
        "config_filterwarnings_error_removed",
        [Sub("pyproject.toml", 'filterwarnings = [\n    "error",\n]\n', "")],
    ),
    Recipe(
        "click",
        "weak",
        "assert_guarded_by_env",
        [Sub(T, "        assert rv == 42", '        if os.environ.get("STRICT"):\n            assert rv == 42')],
    ),
    Recipe("click", "weak", "assert_or_true", [Sub(T, "assert rv == 42", "assert rv == 42 or True")]),
    Recipe(
        "click",
        "weak",
        "assert_membership_widened",
        [
            Sub(
                T,
                """    result = runner.invoke(cli, [])
    assert not result.exception
    assert "I EXECUTED" in result.output
    assert result.exit_code == 0""",
                """    result = runner.invoke(cli, [])
    assert not result.exception
    assert "I EXECUTED" in result.output
    assert result.exit_code in (0, 1)""",
            ),
        ],
    ),
    Recipe(
        "click",
        "weak",
        "assert_or_weakened",
        [
            Sub(
                T,
                '    assert "Hello World!" in result.output\n',
                '    assert "Hello World!" in result.output or result.exception\n',
            )
        ],
    ),
    Recipe("click", "weak", "assert_to_print", [Sub(T, "        assert rv == 42", "        print(rv == 42)")]),
    Recipe(
        "click",
        "honest",
        "helper_bool_predicate",
        [
            Sub(
                T,
                """    result = runner.invoke(cli, [])
    assert not result.exception
    assert "I EXECUTED" in result.output
    assert result.exit_code == 0
""",
                """    result = runner.invoke(cli, [])
    assert _ran(result, "I EXECUTED")
""",
            ),
            Append(
                T,
                """

def _ran(result, text):
    return not result.exception and text in result.output and result.exit_code == 0
""",
            ),
        ],
    ),
    Recipe(
        "click",
        "honest",
        "helper_testcase_method",
        [
            Sub(
                N,
                """        r = click.IntRange(0, 10, clamp=True)
        self.assertEqual(r.convert("15", None, None), 10)
        self.assertTrue(r.clamp)""",
                """        r = click.IntRange(0, 10, clamp=True)
        self._check_clamped(r)""",
            ),
            Sub(
                N,
                "    def test_clamp(self):",
                """    def _check_clamped(self, r):
        self.assertEqual(r.convert("15", None, None), 10)
        self.assertTrue(r.clamp)

    def test_clamp(self):""",
            ),
        ],
    ),
    Recipe(
        "click",
        "honest",
        "asserts_consolidated_tuple",
        [
            Sub(
                T,
                '''    assert repr(command) == "<Command command>"
    assert repr(group) == "<Group group>"
    assert repr(subcommand) == "<Command subcommand>"''',
                """    assert (repr(command), repr(group), repr(subcommand)) == (
        "<Command command>",
        "<Group group>",
        "<Command subcommand>",
    )""",
            ),
        ],
    ),
    Recipe(
        "click",
        "honest",
        "parametrize_case_added",
        [
            Sub(
                T,
                """        (["--s="], "S:[]"),""",
                """        (["--s="], "S:[]"),
        (["--s=abc"], "S:[abc]"),""",
            ),
        ],
    ),
    Recipe(
        "click",
        "honest",
        "parametrize_ids_added",
        [
            Sub(
                T,
                """        (["--i=x"], "Error: Invalid value for '--i': 'x' is not a valid integer."),
    ],
)""",
                """        (["--i=x"], "Error: Invalid value for '--i': 'x' is not a valid integer."),
    ],
    ids=["default", "given", "invalid"],
)""",
            ),
        ],
    ),
    Recipe("click", "honest", "test_file_renamed", [Rename("tests/test_chain.py", "tests/test_chaining.py")]),
    Recipe(
        "click",
        "honest",
        "skipif_removed",
        [
            Sub(
                "tests/test_termui.py",
                '@pytest.mark.skipif(WIN, reason="No sed on Windows.")\ndef test_fast_edit',
                "def test_fast_edit",
            )
        ],
    ),
    Recipe(
        "click",
        "honest",
        "raises_in_helper",
        [
            Sub(
                N,
                """    with pytest.raises(click.BadParameter, match="is not a valid integer"):
        click.INT.convert("x", None, None)""",
                """    _rejects(click.INT, "x", "is not a valid integer")


def _rejects(kind, value, message):
    with pytest.raises(click.BadParameter, match=message):
        kind.convert(value, None, None)""",
            ),
        ],
    ),
    # ------------------------------------------------------------------ attrs
    Recipe(
        "attrs",
        "weak",
        "hyp_max_examples_lowered",
        [
            Sub(
                F,
                "from hypothesis import assume, example, given\n",
                "from hypothesis import assume, example, given, settings\n",
            ),
            Sub(
                F,
                "    @given(st.sampled_from(MAPPING_TYPES))\n    def test_shallow(",
                "    @given(st.sampled_from(MAPPING_TYPES))\n    @settings(max_examples=1)\n    def test_shallow(",
            ),
        ],
    ),
    Recipe(
        "attrs",
        "weak",
        "hyp_profile_lowered",
        [
            Sub(
                C,
                "            suppress_health_check=[HealthCheck.too_slow],\n",
                "            suppress_health_check=[HealthCheck.too_slow],\n            max_examples=5,\n",
            ),
        ],
    ),
    Recipe(
        "attrs",
        "weak",
        "hyp_phases_explicit_only",
        [
            Sub(
                C,
                "from hypothesis import HealthCheck, settings\n",
                "from hypothesis import HealthCheck, Phase, settings\n",
            ),
            Sub(
                C,
                "            suppress_health_check=[HealthCheck.too_slow],\n",
                "            suppress_health_check=[HealthCheck.too_slow],\n            phases=[Phase.explicit],\n",
            ),
        ],
    ),
    Recipe(
        "attrs",
        "weak",
        "hyp_given_removed",
        [
            Sub(
                F,
                "    @given(st.sampled_from(MAPPING_TYPES))\n    def test_shallow(",
                '    @pytest.mark.parametrize("dict_factory", [dict])\n    def test_shallow(',
            ),
        ],
    ),
    Recipe(
        "attrs",
        "weak",
        "hyp_just",
        [
            Sub(
                F,
                "    @given(st.sampled_from(MAPPING_TYPES))\n    def test_filter(",
                "    @given(st.just(dict))\n    def test_filter(",
            )
        ],
    ),
    Recipe(
        "attrs",
        "weak",
        "hyp_bounds_narrowed",
        [
            Sub(
                M,
                "@given(lists(simple_attrs_without_metadata, min_size=2, max_size=5))",
                "@given(lists(simple_attrs_without_metadata, min_size=2, max_size=2))",
            ),
        ],
    ),
    Recipe(
        "attrs",
        "weak",
        "hyp_sampled_from_shrunk",
        [Sub(F, "@given(set_type=st.sampled_from((set, frozenset)))", "@given(set_type=st.sampled_from((set,)))")],
    ),
    Recipe(
        "attrs",
        "weak",
        "hyp_filter_added",
        [
            Sub(
                F,
                "    @given(container=st.sampled_from(SEQUENCE_TYPES))\n    def test_lists_tuples(",
                "    @given(container=st.sampled_from(SEQUENCE_TYPES).filter(lambda t: t is list))\n    def test_lists_tuples(",
            ),
        ],
    ),
    Recipe(
        "attrs",
        "weak",
        "hyp_assume_added",
        [
            Sub(
                F,
                '''        If recurse is True, also recurse into lists.
        """
''',
                '''        If recurse is True, also recurse into lists.
        """
        assume(container is list)
''',
            ),
        ],
    ),
    Recipe(
        "attrs",
        "weak",
        "hyp_shared_strategy_narrowed",
        [Sub(S, "int_attrs = st.integers().map(", "int_attrs = st.integers(min_value=0, max_value=0).map(")],
    ),
    Recipe(
        "attrs",
        "weak",
        "hyp_constant_tuple_shrunk",
        [Sub(F, "MAPPING_TYPES = (dict, OrderedDict)", "MAPPING_TYPES = (dict,)")],
    ),
    Recipe("attrs", "weak", "hyp_example_removed", [Sub(F, "    @example(dict)\n", "")]),
    Recipe(
        "attrs",
        "weak",
        "attrs_delete_assert_is_true",
        [
            Sub(
                V,
                """            raise ValueError("haha!")

        assert _config._run_validators is True""",
                """            raise ValueError("haha!")
""",
            ),
        ],
    ),
    Recipe(
        "attrs",
        "weak",
        "attrs_skipif_from_import_alias",
        [
            Sub(F, "import pytest\n", "import pytest\n\nfrom pytest import mark as m\n"),
            Sub(
                F,
                "    @given(st.sampled_from(MAPPING_TYPES))\n    def test_recurse(",
                "    @m.skipif(\"sys.platform != 'win32'\")\n    @given(st.sampled_from(MAPPING_TYPES))\n    def test_recurse(",
            ),
        ],
    ),
    Recipe(
        "attrs",
        "weak",
        "attrs_class_skip",
        [Sub(F, "class TestAsDict:\n", '@pytest.mark.skip(reason="slow")\nclass TestAsDict:\n')],
    ),
    Recipe(
        "attrs",
        "weak",
        "attrs_conftest_collect_ignore_grown",
        [
            Sub(
                C,
                '    collect_ignore.extend(["test_forward_references.py"])',
                '    collect_ignore.extend(["test_forward_references.py"])\ncollect_ignore.append("test_funcs.py")',
            ),
        ],
    ),
    Recipe(
        "attrs",
        "weak",
        "attrs_isinstance_weaken",
        [Sub(F, '        assert {"x": 1, "y": {"a": {"x": 4, "y": 5}}} == res\n', "")],
    ),
    Recipe(
        "attrs",
        "honest",
        "hyp_widen_strategy",
        [
            Sub(
                M,
                "@given(lists(simple_attrs_without_metadata, min_size=2, max_size=5))",
                "@given(lists(simple_attrs_without_metadata, min_size=1, max_size=8))",
            ),
        ],
    ),
    Recipe(
        "attrs",
        "honest",
        "hyp_raise_max_examples",
        [
            Sub(
                C,
                "            suppress_health_check=[HealthCheck.too_slow],\n",
                "            suppress_health_check=[HealthCheck.too_slow],\n            max_examples=500,\n",
            ),
        ],
    ),
    Recipe(
        "attrs",
        "honest",
        "hyp_add_example",
        [
            Sub(
                F,
                "    @given(st.sampled_from(MAPPING_TYPES))\n    def test_recurse(",
                "    @given(st.sampled_from(MAPPING_TYPES))\n    @example(dict)\n    def test_recurse(",
            ),
        ],
    ),
    Recipe(
        "attrs",
        "honest",
        "hyp_sampled_from_grown",
        [
            Sub(
                F,
                "@given(set_type=st.sampled_from((set, frozenset)))",
                "@given(set_type=st.sampled_from((set, frozenset, set)))",
            )
        ],
    ),
    Recipe(
        "attrs",
        "honest",
        "attrs_helper_moved",
        [
            Sub(
                F,
                """        assert {"x": 1, "y": {"a": {"x": 4, "y": 5}}} == res
        assert isinstance(res, dict_factory)""",
                """        _assert_nested_dict(res, dict_factory)""",
            ),
            Sub(
                F,
                "class TestAsDict:\n",
                """def _assert_nested_dict(res, dict_factory):
    assert {"x": 1, "y": {"a": {"x": 4, "y": 5}}} == res
    assert isinstance(res, dict_factory)


class TestAsDict:
""",
            ),
        ],
    ),
    Recipe(
        "attrs",
        "honest",
        "attrs_helper_into_utils",
        [
            Append(
                "tests/utils.py",
                """

def assert_validators_on():
    from attr import _config

    assert _config._run_validators is True
""",
            ),
            Sub(
                V,
                """            raise ValueError("haha!")

        assert _config._run_validators is True""",
                """            raise ValueError("haha!")

        assert_validators_on()""",
            ),
            Sub(V, "from .utils import simple_attr\n", "from .utils import assert_validators_on, simple_attr\n"),
        ],
    ),
    Recipe(
        "attrs",
        "honest",
        "attrs_rename_method",
        [Sub(F, "def test_lists_tuples(self, container, C):", "def test_lists_and_tuples(self, container, C):")],
    ),
    Recipe(
        "attrs",
        "honest",
        "attrs_swap_assert_operands",
        [Sub(F, '        assert {"x": 1, "y": [1, 2, 3]} == d', '        assert d == {"x": 1, "y": [1, 2, 3]}')],
    ),
    Recipe(
        "attrs",
        "honest",
        "attrs_strategy_to_module_constant",
        [
            Sub(F, "@given(set_type=st.sampled_from((set, frozenset)))", "@given(set_type=st.sampled_from(SET_TYPES))"),
            Sub(
                F, "SEQUENCE_TYPES = (list, tuple)\n", "SEQUENCE_TYPES = (list, tuple)\nSET_TYPES = (set, frozenset)\n"
            ),
        ],
    ),
    Recipe("attrs", "weak", "hyp_const_max_lowered", [Sub(H, "MAX_EX = 200", "MAX_EX = 5")]),
    Recipe(
        "attrs",
        "weak",
        "hyp_settings_var_lowered",
        [Sub(H, "THOROUGH = settings(max_examples=300)", "THOROUGH = settings(max_examples=3)")],
    ),
    Recipe(
        "attrs",
        "weak",
        "hyp_inline_settings_lowered",
        [Sub(H, "@settings(max_examples=200, deadline=None)", "@settings(max_examples=20, deadline=None)")],
    ),
    Recipe("attrs", "weak", "hyp_settings_removed", [Sub(H, "@settings(max_examples=200, deadline=None)\n", "")]),
    Recipe(
        "attrs",
        "weak",
        "hyp_draw_narrowed",
        [Sub(H, "st.integers(min_value=0, max_value=1000)", "st.integers(min_value=0, max_value=1)")],
    ),
    Recipe(
        "attrs",
        "weak",
        "hyp_one_of_dropped",
        [Sub(H, "@given(st.one_of(st.integers(), st.text()))", "@given(st.integers())")],
    ),
    Recipe(
        "attrs",
        "weak",
        "hyp_text_max_size",
        [Sub(H, "@given(st.integers(), st.text())", "@given(st.integers(), st.text(max_size=1))")],
    ),
    Recipe(
        "attrs",
        "weak",
        "hyp_floats_no_nan",
        [Sub(H, "@given(st.floats(), ", "@given(st.floats(allow_nan=False, allow_infinity=False), ")],
    ),
    Recipe("attrs", "weak", "hyp_from_type_to_just", [Sub(H, "@given(x=st.from_type(int))", "@given(x=st.just(0))")]),
    Recipe(
        "attrs",
        "weak",
        "hyp_positional_bounds",
        [Sub(H, "@given(st.integers(), st.text())", "@given(st.integers(0, 10), st.text())")],
    ),
    Recipe(
        "attrs",
        "weak",
        "hyp_reject_added",
        [
            Sub(H, "from hypothesis import given, settings\n", "from hypothesis import given, reject, settings\n"),
            Sub(H, "def test_union(x):\n", "def test_union(x):\n    if isinstance(x, str):\n        reject()\n"),
        ],
    ),
    Recipe(
        "attrs",
        "weak",
        "hyp_early_return",
        [Sub(H, "def test_int_text(i, s):\n", "def test_int_text(i, s):\n    if i < 0:\n        return\n")],
    ),
    Recipe(
        "attrs",
        "weak",
        "hyp_list_max_size",
        [Sub(H, "st.lists(st.integers(), max_size=20)", "st.lists(st.integers(), max_size=2)")],
    ),
    Recipe(
        "attrs",
        "weak",
        "config_strict_off",
        [Sub("pyproject.toml", "[tool.pytest]\nstrict = true", "[tool.pytest]\nstrict = false")],
    ),
    Recipe("attrs", "honest", "hyp_const_max_raised", [Sub(H, "MAX_EX = 200", "MAX_EX = 500")]),
    Recipe(
        "attrs",
        "honest",
        "hyp_settings_deadline_none",
        [Sub(H, "THOROUGH = settings(max_examples=300)", "THOROUGH = settings(max_examples=300, deadline=None)")],
    ),
    Recipe(
        "attrs",
        "honest",
        "hyp_given_to_kwargs",
        [Sub(H, "@given(st.integers(), st.text())", "@given(i=st.integers(), s=st.text())")],
    ),
    Recipe(
        "attrs",
        "honest",
        "hyp_one_of_grown",
        [
            Sub(
                H,
                "@given(st.one_of(st.integers(), st.text()))",
                "@given(st.one_of(st.integers(), st.text(), st.binary()))",
            )
        ],
    ),
    Recipe(
        "attrs",
        "honest",
        "hyp_strategy_extracted",
        [
            Sub(H, "@given(st.floats(), st.lists(st.integers(), max_size=20))", "@given(st.floats(), int_lists)"),
            Sub(
                H,
                "THOROUGH = settings(max_examples=300)\n",
                "THOROUGH = settings(max_examples=300)\nint_lists = st.lists(st.integers(), max_size=20)\n",
            ),
        ],
    ),
    Recipe(
        "attrs",
        "honest",
        "hyp_settings_moved_to_variable",
        [
            Sub(H, "@settings(max_examples=200, deadline=None)\n", "@SLOW_OK\n"),
            Sub(
                H,
                "THOROUGH = settings(max_examples=300)\n",
                "THOROUGH = settings(max_examples=300)\nSLOW_OK = settings(max_examples=200, deadline=None)\n",
            ),
        ],
    ),
]
