"""The red-team recipes of bench/redteam_recipes.py as a test table.

bench/redteam.py applies each recipe to a throwaway clone of click or attrs.
Here every row is applied, by the same code (bench/redteam_edits.py), to a
small stand-in tree of our own: a few short test modules written around the
exact snippets the recipes edit, plus the project's SETUP commit.  One git
repository per project is built once; each recipe is committed on its own
branch from that base and judged in-process by the full `oracle-guard check
--base <base>`, the bench's verdict.  A weakening must be rejected with the
codes pinned in CAUGHT_WITH (the codes the real project gets too); an
honest change must pass without a finding.  A row that cannot be pinned so is
in EXCLUDED with the reason (none today).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from oracle_guard.commands import check
from tests.helpers import GIT_ENV

# The bench scripts import each other by bare name, as `python bench/redteam.py` does.
sys.path.append(str(Path(__file__).resolve().parents[1] / "bench"))
from redteam_edits import apply_edits
from redteam_recipes import RECIPES, SETUP, Recipe

# ----------------------------------------------------------------------------- stand-ins
# Our own short test modules; each snippet a recipe edits (a Sub's `old`, a
# CutDef's function, a Regex's pattern) is in them, in the shape it has in the
# real project (indentation, enclosing class or `with`, how often it occurs).

CLICK: dict[str, str] = {
    "pyproject.toml": r"""[project]
name = "click-standin"
version = "0"

[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "-m 'not stress'"
markers = ["stress: long-running tests, run on request"]
filterwarnings = [
    "error",
]
""",
    ".github/workflows/tests.yaml": r"""name: Tests
on:
  pull_request:
  push:
    branches: [main]
jobs:
  tests:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: astral-sh/setup-uv@v6
      - run: uv run --locked --no-default-groups --group dev tox run
""",
    "tox.ini": r"""[tox]
envlist = py3{13,12,11,10}

[testenv]
commands = pytest -v --tb=short {posargs}
""",
    # The exception hierarchy the gate reads (by `git grep`) to tell a superclass from a sibling.
    "src/click/__init__.py": "from .exceptions import BadParameter, ClickException, UsageError\n",
    "src/click/exceptions.py": r'''class ClickException(Exception):
    """An error click shows to the user instead of a traceback."""

    exit_code = 1


class UsageError(ClickException):
    exit_code = 2


class BadParameter(UsageError):
    """A parameter's value was rejected."""
''',
    "tests/conftest.py": r"""import pytest

from click.testing import CliRunner


@pytest.fixture(scope="function")
def runner(request):
    return CliRunner()
""",
    "tests/test_basic.py": r'''import enum
import os

import pytest

import click
from click._utils import UNSET


class Shape(enum.Enum):
    ROUND = "round"
    SQUARE = "square"


def test_basic_functionality(runner):
    @click.command()
    def cli():
        """Hello World!"""
        click.echo("I EXECUTED")

    result = runner.invoke(cli, ["--help"])
    assert not result.exception
    assert "Hello World!" in result.output
    assert "Show this message and exit." in result.output
    assert result.exit_code == 0
    assert "I EXECUTED" not in result.output

    result = runner.invoke(cli, [])
    assert not result.exception
    assert "I EXECUTED" in result.output
    assert result.exit_code == 0


def test_repr():
    @click.command()
    def command():
        pass

    @click.group()
    def group():
        pass

    @group.command()
    def subcommand():
        pass

    assert repr(command) == "<Command command>"
    assert repr(group) == "<Group group>"
    assert repr(subcommand) == "<Command subcommand>"


def test_return_values():
    @click.command()
    def cli():
        return 42

    with cli.make_context("cli", []) as ctx:
        rv = cli.invoke(ctx)
        assert rv == 42


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (["--s=hi"], "S:[hi]"),
        (["--s"], "Error: Option '--s' requires an argument."),
        (["--s="], "S:[]"),
    ],
)
def test_string_option(runner, args, expect):
    @click.command()
    @click.option("--s", default="unset")
    def cli(s):
        click.echo(f"S:[{s}]")

    result = runner.invoke(cli, args)
    assert expect in result.output


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (None, "I:[7]"),
        (["--i=12"], "I:[12]"),
        (["--i=x"], "Error: Invalid value for '--i': 'x' is not a valid integer."),
    ],
)
def test_int_option(runner, args, expect):
    @click.command()
    @click.option("--i", default=7)
    def cli(i):
        click.echo(f"I:[{i}]")

    result = runner.invoke(cli, args)
    assert expect in result.output


@pytest.mark.parametrize(
    ("extra", "params", "args", "expect"),
    [
        ([], [click.Option(["--foo"])], ["--foo", "value"], "value\n"),
        (["--man"], [click.Option(["--foo", "man"])], ["--foo", "value"], "value\n"),
    ],
)
def test_option_names(runner, extra, params, args, expect):
    cli = click.Command("cli", params=params, callback=lambda **kw: click.echo(next(iter(kw.values()))))
    result = runner.invoke(cli, args)
    assert result.output == expect
    assert cli.params[0].secondary_opts == extra[1:]


def test_choice_of_enum(runner):
    @click.command()
    @click.option("--shape", type=click.Choice(Shape), default=UNSET)
    def cli(shape):
        click.echo(shape.value)

    result = runner.invoke(cli, ["--shape", "round"])
    assert result.output == "round\n"


def test_path_exists(runner, tmp_path):
    @click.command()
    @click.argument("p", type=click.Path(exists=True))
    def cli(p):
        click.echo(os.path.basename(p))

    result = runner.invoke(cli, [str(tmp_path)])
    assert result.output == tmp_path.name + "\n"
''',
    "tests/test_arguments.py": r"""import pytest

import click
from click._utils import UNSET


def test_nargs_tuple(runner):
    @click.command()
    @click.argument("point", nargs=2, type=int)
    def cli(point):
        click.echo(sum(point))

    result = runner.invoke(cli, ["3", "4"])
    assert result.output == "7\n"


def test_nargs_default_too_long():
    with pytest.raises(ValueError, match="nargs.*must be 2.*but it was 3"):
        click.Argument(["a"], nargs=2, default=(1, 2, 3))


def test_unset_default():
    assert click.Argument(["a"], required=False).default is UNSET


def test_multiple_param_decls_not_allowed(runner):
    with pytest.raises(TypeError):

        @click.command()
        @click.argument("x", click.Choice(["a", "b"]))
        def copy(x):
            click.echo(x)


def test_multiple_not_allowed():
    with pytest.raises(TypeError, match="multiple"):
        click.Argument(["a"], multiple=True)
""",
    "tests/test_chain.py": r"""import pytest

import click


@pytest.mark.parametrize("order", [["a", "b"], ["b", "a", "b"]])
def test_commands_run_in_order(runner, order):
    @click.group(chain=True)
    def cli():
        pass

    for name in "ab":
        cli.command(name)(lambda name=name: click.echo(name))

    result = runner.invoke(cli, order)
    assert result.output.split() == order
""",
    "tests/test_commands.py": r"""import click


def test_command_help(runner):
    @click.command(help="Greets.")
    def greet():
        pass

    result = runner.invoke(greet, ["--help"])
    assert "Greets." in result.output
""",
    "tests/test_termui.py": r"""import pytest

import click
from click._compat import WIN


@pytest.mark.skipif(WIN, reason="No sed on Windows.")
def test_fast_edit(runner):
    assert click.edit("a\nb", editor="sed -i~ 's/$/!/'") == "a!\nb!\n"


def test_progressbar_length(runner):
    with click.progressbar(range(3), file=None) as bar:
        assert bar.length == 3
        assert bar.is_hidden is not WIN or bar.is_hidden
""",
}

ATTRS: dict[str, str] = {
    "pyproject.toml": r"""[project]
name = "attrs-standin"
version = "0"

[tool.pytest]
strict = true
addopts = ["-ra"]
testpaths = ["tests"]
""",
    "tests/__init__.py": "",
    "tests/conftest.py": r"""import sys

from hypothesis import HealthCheck, settings


def pytest_configure(config):
    settings.register_profile(
        "patient",
        settings(
            suppress_health_check=[HealthCheck.too_slow],
            deadline=None,
        ),
    )
    settings.load_profile("patient")


collect_ignore = []
if sys.version_info < (3, 10):
    collect_ignore.extend(["test_forward_references.py"])
""",
    "tests/utils.py": r"""import attr


def simple_attr(name, default=attr.NOTHING, validator=None):
    return attr.Attribute(
        name=name, default=default, validator=validator, repr=True, cmp=None, eq=True, hash=None, init=True, inherited=False
    )
""",
    "tests/strategies.py": r"""from hypothesis import strategies as st

import attr

int_attrs = st.integers().map(lambda n: attr.ib(default=n))
text_attrs = st.text().map(lambda s: attr.ib(default=s))
bool_attrs = st.booleans().map(lambda b: attr.ib(default=b))

simple_attrs_without_metadata = st.one_of(int_attrs, text_attrs, bool_attrs)
""",
    "tests/test_make.py": r"""from hypothesis import given
from hypothesis.strategies import lists

import attr

from .strategies import simple_attrs_without_metadata


@given(lists(simple_attrs_without_metadata, min_size=2, max_size=5))
def test_fields_keep_their_order(attribs):
    C = attr.make_class("C", {f"a{i}": a for i, a in enumerate(attribs)})
    assert [a.name for a in attr.fields(C)] == [f"a{i}" for i in range(len(attribs))]
""",
    "tests/test_validators.py": r"""import pytest

import attr
from attr import _config

from .utils import simple_attr


class TestDisabled:
    def test_off_inside(self):
        with attr.validators.disabled():
            assert _config._run_validators is False

    def test_back_on_after_an_error(self):
        with pytest.raises(ValueError, match="haha"), attr.validators.disabled():
            raise ValueError("haha!")

        assert _config._run_validators is True


def test_simple_attr_defaults():
    assert simple_attr("x").validator is None
""",
    "tests/test_funcs.py": r'''from collections import OrderedDict

import pytest

from hypothesis import assume, given
from hypothesis import strategies as st

import attr

from attr import asdict

MAPPING_TYPES = (dict, OrderedDict)
SEQUENCE_TYPES = (list, tuple)


@pytest.fixture(name="C")
def _point_class():
    @attr.s
    class C:
        x = attr.ib()
        y = attr.ib()

    return C


class TestAsDict:
    @given(st.sampled_from(MAPPING_TYPES))
    def test_shallow(self, C, dict_factory):
        assert {"x": 1, "y": 2} == asdict(C(1, 2), recurse=False, dict_factory=dict_factory)

    @given(st.sampled_from(MAPPING_TYPES))
    def test_recurse(self, C, dict_class):
        res = asdict(C(C(1, 2), 3), dict_factory=dict_class)
        assert {"x": {"x": 1, "y": 2}, "y": 3} == res
        assert isinstance(res["x"], dict_class)

    @given(st.sampled_from(MAPPING_TYPES))
    def test_filter(self, C, dict_factory):
        res = asdict(C(C(1, 2), 3), filter=lambda a, _: a.name == "x", dict_factory=dict_factory)
        assert {"x": {"x": 1}} == res

    @given(container=st.sampled_from(SEQUENCE_TYPES))
    def test_lists_tuples(self, container, C):
        """
        If recurse is True, also recurse into lists.
        """
        res = asdict(C(1, container([C(2, 3), "a"])))
        assert {"x": 1, "y": [{"x": 2, "y": 3}, "a"]} == res

    @given(st.sampled_from(MAPPING_TYPES))
    def test_dicts(self, C, dict_factory):
        res = asdict(C(1, {"a": C(4, 5)}), dict_factory=dict_factory)
        assert {"x": 1, "y": {"a": {"x": 4, "y": 5}}} == res
        assert isinstance(res, dict_factory)

    @given(set_type=st.sampled_from((set, frozenset)))
    def test_sets_as_lists(self, C, set_type):
        d = asdict(C(1, set_type([1, 2, 3])), retain_collection_types=False)
        assert {"x": 1, "y": [1, 2, 3]} == d
''',
}

STANDINS: dict[str, dict[str, str]] = {"click": CLICK, "attrs": ATTRS}

# ----------------------------------------------------------------------------- verdicts
# The codes the full check reports for each weakening on its stand-in.  The
# real projects (`python bench/redteam.py PROJECT CLONE`) report the same.
CAUGHT_WITH: dict[str, str] = {
    "click/mark_skip": "OG101",
    "click/mark_skipif_true": "OG101",
    "click/mark_xfail_bare": "OG101",
    "click/mark_from_import": "OG101",
    "click/mark_alias_module": "OG101",
    "click/mark_in_variable": "OG110",
    "click/mark_skipif_platform_existing": "OG101",
    "click/pytestmark_module": "OG101",
    "click/param_mark_xfail": "OG101",
    "click/dynamic_add_marker": "OG101",
    "click/dynamic_applymarker": "OG101",
    "click/conftest_modifyitems_skip": "OG101",
    "click/getattr_mark": "OG101",
    "click/runtime_skip": "OG201",
    "click/runtime_xfail": "OG201",
    "click/runtime_importorskip": "OG201",
    "click/runtime_raise_skiptest": "OG201 OG301",
    "click/runtime_skiptest_method": "OG201",
    "click/early_return": "OG301",
    "click/delete_assert": "OG301",
    "click/delete_test": "OG302",
    "click/delete_test_file": "OG302",
    "click/tautology_self_compare": "OG314",
    "click/tautology_assert_true": "OG308",
    "click/eq_to_truthiness": "OG303",
    "click/eq_to_is_not_none": "OG303",
    "click/eq_to_isinstance": "OG303",
    "click/try_except_swallow": "OG305",
    "click/contextlib_suppress": "OG305",
    "click/raises_broadened_exception": "OG306",
    "click/raises_tuple_grown": "OG306",
    "click/raises_match_removed": "OG306",
    "click/raises_match_loosened": "OG306",
    "click/raises_match_dotstar": "OG306",
    "click/parametrize_case_removed": "OG307",
    "click/expected_value_rewritten": "OG314",
    "click/tolerance_loosened_approx": "OG304",
    "click/tolerance_loosened_isclose": "OG304",
    "click/tolerance_loosened_abs": "OG304",
    "click/unittest_assert_weakened": "OG303",
    "click/config_addopts_deselect": "OG851",
    "click/config_addopts_k": "OG851",
    "click/config_addopts_ignore": "OG851",
    "click/config_addopts_m": "OG851",
    "click/config_testpaths_narrowed": "OG852",
    "click/conftest_collect_ignore": "OG857",
    "click/ci_workflow_k": "OG859",
    "click/raises_to_project_superclass": "OG306",
    "click/raises_base_exception": "OG306",
    "click/assertraisesregex_to_assertraises": "OG306",
    "click/assertraises_broadened": "OG306",
    "click/raises_replaced_by_try_except": "OG301",
    "click/warns_broadened": "OG306",
    "click/unittest_skip_decorator": "OG101",
    "click/unittest_expected_failure": "OG101",
    "click/module_level_skip": "OG201",
    "click/module_level_importorskip": "OG201",
    "click/module_dunder_test_false": "OG101",
    "click/class_dunder_test_false": "OG101",
    "click/shadowed_by_duplicate_name": "OG301",
    "click/del_test_at_module_level": "OG302",
    "click/renamed_uncollectable": "OG302",
    "click/fixture_runtime_skip": "OG201",
    "click/conftest_runtest_setup_skip": "OG201",
    "click/conftest_ignore_collect": "OG858",
    "click/conftest_modifyitems_deselect": "OG858",
    "click/param_marks_list": "OG101",
    "click/add_marker_string": "OG101",
    "click/skipif_string_condition": "OG101",
    "click/mark_applied_by_call": "OG101",
    "click/xfail_raises_assertion": "OG101",
    "click/filterwarnings_ignore_mark": "OG101",
    "click/config_filterwarnings_error_removed": "OG856",
    "click/assert_guarded_by_env": "OG301",
    "click/assert_or_true": "OG308",
    "click/assert_membership_widened": "OG303",
    "click/assert_or_weakened": "OG303",
    "click/assert_to_print": "OG301",
    "attrs/hyp_max_examples_lowered": "OG309",
    "attrs/hyp_profile_lowered": "OG309",
    "attrs/hyp_phases_explicit_only": "OG309",
    "attrs/hyp_given_removed": "OG310",
    "attrs/hyp_just": "OG312",
    "attrs/hyp_bounds_narrowed": "OG312",
    "attrs/hyp_sampled_from_shrunk": "OG312",
    "attrs/hyp_filter_added": "OG312",
    "attrs/hyp_assume_added": "OG313",
    "attrs/hyp_shared_strategy_narrowed": "OG312",
    "attrs/hyp_constant_tuple_shrunk": "OG312",
    "attrs/hyp_example_removed": "OG311",
    "attrs/attrs_delete_assert_is_true": "OG301",
    "attrs/attrs_skipif_from_import_alias": "OG101",
    "attrs/attrs_class_skip": "OG101",
    "attrs/attrs_conftest_collect_ignore_grown": "OG857",
    "attrs/attrs_isinstance_weaken": "OG301 OG303",
    "attrs/hyp_const_max_lowered": "OG309",
    "attrs/hyp_settings_var_lowered": "OG309",
    "attrs/hyp_inline_settings_lowered": "OG309",
    "attrs/hyp_settings_removed": "OG309",
    "attrs/hyp_draw_narrowed": "OG312",
    "attrs/hyp_one_of_dropped": "OG308 OG312",
    "attrs/hyp_text_max_size": "OG312",
    "attrs/hyp_floats_no_nan": "OG312",
    "attrs/hyp_from_type_to_just": "OG308 OG312",
    "attrs/hyp_positional_bounds": "OG312",
    "attrs/hyp_reject_added": "OG313",
    "attrs/hyp_early_return": "OG202",
    "attrs/hyp_list_max_size": "OG312",
    "attrs/config_strict_off": "OG855",
}

# Rows not judged here, with the reason.
EXCLUDED: dict[str, str] = {}


def recipe_id(recipe: Recipe) -> str:
    return f"{recipe.project}/{recipe.name}"


WEAK = [r for r in RECIPES if r.kind == "weak" and recipe_id(r) not in EXCLUDED]
HONEST = [r for r in RECIPES if r.kind == "honest" and recipe_id(r) not in EXCLUDED]

# ----------------------------------------------------------------------------- the gate


def git(root: Path, *args: str) -> str:
    # The module's repositories are built before the autouse fixture cleans GIT_* for each test.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))} | GIT_ENV
    return subprocess.run(
        ["git", "-c", "commit.gpgsign=false", *args], cwd=root, env=env, check=True, capture_output=True, text=True
    ).stdout


class Project(NamedTuple):
    root: Path
    base: str


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Project]:
    """One repository per project: the stand-in tree plus its SETUP edits, committed as the base."""
    built = {}
    for project, files in STANDINS.items():
        root = tmp_path_factory.mktemp(project)
        git(root, "init", "-q", "-b", "main")
        for path, text in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text, encoding="utf-8")
        apply_edits(str(root), SETUP[project])
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "redteam base")
        built[project] = Project(root, git(root, "rev-parse", "HEAD").strip())
    return built


def judge(project: Project, recipe: Recipe, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """As bench/redteam.py does: RECIPE committed on its own branch from the base, then the full check.

    Returns the exit code, the output and the codes it names (sorted, space-separated).
    """
    git(project.root, "checkout", "-q", "-f", "-B", f"redteam/{recipe.name}", project.base)
    git(project.root, "clean", "-qfdx")
    apply_edits(str(project.root), recipe.edits)
    git(project.root, "add", "-A")
    git(project.root, "commit", "-q", "-m", recipe.name)
    capsys.readouterr()
    here = os.getcwd()
    os.chdir(project.root)
    try:
        code = check.main(["--base", project.base, "-q"])  # findings only: no success line
    finally:
        os.chdir(here)
    out = capsys.readouterr()
    text = (out.out + out.err).strip()
    return code, text, " ".join(sorted(set(re.findall(r"\b(OG\d+)\b", text))))


@pytest.mark.slow
@pytest.mark.parametrize("recipe", WEAK, ids=recipe_id)
def test_weakening_is_rejected(
    recipe: Recipe, projects: dict[str, Project], capsys: pytest.CaptureFixture[str]
) -> None:
    code, text, codes = judge(projects[recipe.project], recipe, capsys)
    assert (code, codes) == (1, CAUGHT_WITH[recipe_id(recipe)]), text


@pytest.mark.slow
@pytest.mark.parametrize("recipe", HONEST, ids=recipe_id)
def test_honest_change_passes(recipe: Recipe, projects: dict[str, Project], capsys: pytest.CaptureFixture[str]) -> None:
    code, text, _ = judge(projects[recipe.project], recipe, capsys)
    assert (code, text) == (0, "")


def test_every_recipe_is_a_row_or_an_exclusion() -> None:
    """A recipe added to the bench needs its pinned codes here (or a reason to leave it out)."""
    ids = [recipe_id(r) for r in RECIPES]
    assert len(ids) == len(set(ids))
    assert set(EXCLUDED) <= set(ids)
    assert sorted(CAUGHT_WITH) == sorted(recipe_id(r) for r in WEAK)
    assert all(re.fullmatch(r"OG\d{3}( OG\d{3})*", codes) for codes in CAUGHT_WITH.values())
    assert {r.project for r in RECIPES} == set(STANDINS) == set(SETUP)
