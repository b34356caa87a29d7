"""Which base tests reach changed production code (analysis/reach.py, pytest_side/selection.py)."""

from __future__ import annotations

import argparse
import os

import pytest

from oracle_guard.analysis import reach
from oracle_guard.pytest_side import scratch, selection
from oracle_guard.repo import changes
from tests.contract_helpers import CONTRACT
from tests.helpers import Repo

SHOP = {
    "src/shop/__init__.py": "from .prices import price\nfrom . import labels\n",
    "src/shop/prices.py": "from shop._money import cents\n\ndef price(c):\n    return cents(c)\n",
    "src/shop/_money.py": "def cents(c):\n    return c\n",
    "src/shop/labels.py": "def label(n):\n    return n.title()\n",
    "src/shop/report.py": "import json\n\ndef render(x):\n    return json.dumps(x)\n",
    "src/tools/cli.py": "import sys\n",
    "tests/test_prices.py": "from shop.prices import price\n\ndef test_price():\n    assert price(1) == 1\n",
    "tests/test_report.py": "from shop import report\n\ndef test_render():\n    assert report.render(1) == '1'\n",
    "tests/test_plain.py": "import json\n\ndef test_json():\n    assert json.loads('1') == 1\n",
}


def selected(files: dict[str, str], changed: list[str], plugins: tuple[str, ...] = ()) -> reach.Reach:
    project = reach.Project({p: t.encode() for p, t in files.items()})
    tests = [p for p in files if reach.is_test_module(p)]
    return reach.tests_reaching(project, changed, tests, plugins)


def test_a_module_reached_through_a_package_init_selects_its_importers() -> None:
    # test_report imports shop, whose __init__ imports prices (-> _money) and labels
    found = selected(SHOP, ["src/shop/_money.py"])
    assert found == reach.Reach(("tests/test_prices.py", "tests/test_report.py"), False, ())
    assert selected(SHOP, ["src/shop/labels.py"]).modules == ("tests/test_prices.py", "tests/test_report.py")


def test_a_leaf_module_selects_only_its_importers() -> None:
    assert selected(SHOP, ["src/shop/report.py"]).modules == ("tests/test_report.py",)
    assert selected(SHOP, ["src/tools/cli.py"]).modules == ()


def test_a_deleted_module_selects_its_importers() -> None:
    assert selected(SHOP, ["src/shop/report.py", "src/shop/reports.py"]).modules == ("tests/test_report.py",)


def test_relative_absolute_and_rootdir_style_imports() -> None:
    files = {
        **SHOP,
        "tests/helpers.py": "from shop.report import render\n",
        "tests/test_helper_user.py": "import helpers\n\ndef test_x():\n    pass\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/deep.py": "from ..top import x\n",
        "pkg/__init__.py": "",
        "pkg/top.py": "x = 1\n",
        "tests/test_deep.py": "from pkg.sub import deep\n",
    }
    assert selected(files, ["src/shop/report.py"]).modules == ("tests/test_helper_user.py", "tests/test_report.py")
    assert selected(files, ["pkg/top.py"]).modules == ("tests/test_deep.py",)


def test_a_conftest_reaching_the_change_selects_every_test_below_it() -> None:
    files = {
        **SHOP,
        "tests/unit/conftest.py": "import shop.report\n",
        "tests/unit/test_u.py": "def test_u():\n    pass\n",
    }
    assert selected(files, ["src/shop/report.py"]).modules == ("tests/test_report.py", "tests/unit/test_u.py")
    files["conftest.py"] = "pytest_plugins = ['shop.report']\n"
    assert len(selected(files, ["src/shop/report.py"]).modules) == 4


def test_a_plugin_every_test_loads_selects_every_test() -> None:
    files = {**SHOP, "src/shop/plugin.py": "from shop import report\n"}
    assert len(selected(files, ["src/shop/report.py"], plugins=("src/shop/plugin.py",)).modules) == 3


def test_strings_naming_modules_or_files_count_as_imports() -> None:
    files = {
        **SHOP,
        "tests/test_mock.py": "from unittest import mock\n\n@mock.patch('shop.report.json')\ndef test_m(j):\n    pass\n",
        "tests/test_cli.py": "import subprocess, sys\n\ndef test_c():\n    subprocess.run([sys.executable, 'src/tools/cli.py'])\n",
    }
    assert "tests/test_mock.py" in selected(files, ["src/shop/report.py"]).modules
    assert selected(files, ["src/tools/cli.py"]).modules == ("tests/test_cli.py",)


def test_a_dynamic_import_is_undecided_and_selected_whatever_changed() -> None:
    files = {
        **SHOP,
        "src/shop/loader.py": "import importlib\n\ndef load(name):\n    return importlib.import_module(name)\n",
        "tests/test_loader.py": "from shop.loader import load\n",
    }
    found = selected(files, ["src/tools/cli.py"])
    assert found.modules == ("tests/test_loader.py",) and not found.everything
    assert found.reasons == ("src/shop/loader.py: import_module() with a computed name",)
    # a constant name is an import like any other
    files["src/shop/loader.py"] = "import importlib\n\nmod = importlib.import_module('shop.report')\n"
    assert selected(files, ["src/tools/cli.py"]).modules == ()
    assert selected(files, ["src/shop/report.py"]).modules == ("tests/test_loader.py", "tests/test_report.py")


def test_imports_the_bytes_do_not_spell_are_read_as_the_parser_reads_them() -> None:
    # `ｒeport` is `report` to Python (NFKC), and so is `+AHI-eport` under a utf-7 declaration
    files = {**SHOP, "tests/test_report.py": "from shop import ｒeport\n\ndef test_render():\n    assert ｒeport\n"}
    assert selected(files, ["src/shop/report.py"]).modules == ("tests/test_report.py",)
    files["tests/test_report.py"] = "# coding: utf-7\nfrom shop import +AHI-eport\n"
    assert selected(files, ["src/shop/report.py"]).modules == ("tests/test_report.py",)
    # a name spelled in pieces or with an escape is a computed one: undecided, so selected whatever changed
    for spelled in ('"shop." "report"', '"shop.\\x72eport"'):
        files["tests/test_report.py"] = f"import importlib\n\nm = importlib.import_module({spelled})\n"
        found = selected(files, ["src/tools/cli.py"])
        assert found.modules == ("tests/test_report.py",), spelled
        assert found.reasons == ("tests/test_report.py: import_module() with a computed name",)
    # the nearest honest spelling: a plain ASCII import is still a precise edge
    files["tests/test_report.py"] = "from shop import report  # für\n"
    assert selected(files, ["src/tools/cli.py"]).modules == ()


def test_a_file_that_does_not_parse_still_has_its_imports_read() -> None:
    files = {**SHOP, "src/shop/broken.py": "def (:\nimport shop.labels\n", "tests/test_b.py": "import shop.broken\n"}
    assert selected(files, ["src/shop/labels.py"]).modules == (
        "tests/test_b.py",
        "tests/test_prices.py",
        "tests/test_report.py",
    )
    assert selected(files, ["src/tools/cli.py"]).modules == ()


def test_import_spellings_on_one_line_in_parentheses_and_after_a_colon() -> None:
    files = {
        **SHOP,
        "tests/test_a.py": "import os; import shop.report as r\n",
        "tests/test_b.py": "try: from shop import (\n    labels,\n    report,\n)\nexcept ImportError: pass\n",
        "tests/test_c.py": "from shop.report \\\n    import render\n",
        "tests/test_d.py": "important = 'import shop.report is only in this string'\n",
    }
    found = selected(files, ["src/shop/report.py"]).modules
    assert found == ("tests/test_a.py", "tests/test_b.py", "tests/test_c.py", "tests/test_report.py")


def test_sys_path_edits_let_an_unresolved_import_match_a_dotted_tail() -> None:
    files = {
        **SHOP,
        "tools/lib/fmt.py": "X = 1\n",
        "tests/test_fmt.py": "import sys\nsys.path.insert(0, 'tools')\nimport lib.fmt\n",
    }
    assert selected(files, ["tools/lib/fmt.py"]).modules == ("tests/test_fmt.py",)


def test_startup_files_and_new_top_level_modules_run_everything() -> None:
    for path in ("src/sitecustomize.py", "src/unittest.py", "json.py"):
        found = selected(SHOP, [path])
        assert found.everything and path in found.reasons[0], path
    assert not selected(SHOP, ["src/shop/new_module.py"]).everything


def test_is_test_module_follows_python_files_testpaths_and_never_collected_folders() -> None:
    assert reach.is_test_module("tests/test_a.py") and reach.is_test_module("a_test.py")
    assert not reach.is_test_module("tests/helpers.py") and not reach.is_test_module(".tox/x/test_a.py")
    assert reach.is_test_module("checks/check_a.py", ["check_*.py"])
    assert not reach.is_test_module("docs/test_a.py", testpaths=["tests"])


# -- the selection of a real change (git) ----------------------------------------

BASE = {
    "src/shop/__init__.py": "def price(c):\n    return c\n",
    "src/other.py": "X = 1\n",
    "tests/test_shop.py": "from shop import price\n\ndef test_price():\n    assert price(1) == 1\n",
    "tests/test_other.py": "import other\n\ndef test_x():\n    assert other.X == 1\n",
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "README.md": "# shop\n",
}


def select(repo: Repo, after: dict[str, str | None], before: dict[str, str] | None = None) -> selection.Selection:
    repo.change({**BASE, **(before or {})}, after)
    old = os.getcwd()
    os.chdir(repo.path)
    try:
        change_set = changes.resolve(argparse.Namespace(base=None))
        side = scratch.TestSide(change_set.base or "", CONTRACT, None)
        return selection.select(change_set, scratch.plan(change_set, side), side)
    finally:
        os.chdir(old)


def test_a_production_only_change_selects_the_tests_that_import_it(repo: Repo) -> None:
    found = select(repo, {"src/shop/__init__.py": "def price(c):\n    return c + 0\n"})
    assert found == selection.Selection(("tests/test_shop.py",), False, (), ())


def test_changed_test_modules_and_reaching_ones_together(repo: Repo) -> None:
    found = select(repo, {"src/other.py": "X = 2\n", "tests/test_shop.py": BASE["tests/test_shop.py"] + "\n"})
    assert found.modules == ("tests/test_other.py", "tests/test_shop.py") and found.changed == ("tests/test_shop.py",)


def test_documentation_outside_packages_selects_nothing_and_package_data_the_tests_reaching_its_package(
    repo: Repo,
) -> None:
    assert select(repo, {"README.md": "# shop!\n"}).empty
    repo.git("reset", "-q", "--hard")
    found = select(repo, {"src/shop/prices.csv": "a,1\n"})  # the package's code may read it: its tests run
    assert found == selection.Selection(("tests/test_shop.py",), False, (), ())


def test_a_data_file_the_code_names_selects_the_tests_reaching_that_code(repo: Repo) -> None:
    before = {"src/other.py": "import os\nX = open(os.path.join('data', 'x.txt')).read()\n", "data/x.txt": "1"}
    found = select(repo, {"data/x.txt": "2"}, before)
    assert found == selection.Selection(("tests/test_other.py",), False, (), ())


RELEASE = "import re\n\nNOTES = open('CHANGELOG.md').read()\nprint(re.findall('## (.*)', NOTES)[0])\n"


UNDECIDED = "import importlib\n\ndef price(c):\n    return c\n\nimportlib.import_module(NAME)\n"


@pytest.mark.parametrize(
    "named, undecided, selected",
    [
        (True, False, ()),  # only a release script reads it, and no test imports that script
        (False, True, ()),  # nothing names it: a computed import (which can load any module) loads no reader
        (True, True, ("tests/test_shop.py",)),  # a computed import could load the release script
    ],
)
def test_a_changelog_no_test_reaches_a_reader_of_replays_nothing(
    repo: Repo, named: bool, undecided: bool, selected: tuple[str, ...]
) -> None:
    before = {"CHANGELOG.md": "## 1.0\n"}
    if named:
        before["scripts/release.py"] = RELEASE
    if undecided:  # every shop test imports a module whose imports cannot be decided
        before["src/shop/__init__.py"] = UNDECIDED
    assert select(repo, {"CHANGELOG.md": "## 1.1\n\n## 1.0\n"}, before).modules == selected
    repo.git("reset", "-q", "--hard")
    found = select(repo, {"src/other.py": "X = 2\n", "CHANGELOG.md": "## 1.2\n"}, before)
    reaching = ("tests/test_other.py", "tests/test_shop.py") if undecided else ("tests/test_other.py",)
    assert found.modules == reaching


@pytest.mark.parametrize(
    "reader, selected",
    [
        ("tests/test_notes.py", ("tests/test_notes.py",)),  # a test opens it itself
        ("src/notes.py", ("tests/test_notes.py",)),  # code a test imports opens it
        ("tests/conftest.py", ("tests/test_notes.py", "tests/test_other.py", "tests/test_shop.py")),
    ],
)
def test_a_changelog_a_test_could_read_selects_those_tests(repo: Repo, reader: str, selected: tuple[str, ...]) -> None:
    test = "import notes\n\ndef test_notes():\n    assert notes.NOTES\n" if reader == "src/notes.py" else ""
    test = test or "def test_notes():\n    assert open('CHANGELOG.md').read()\n"
    before = {
        "scripts/release.py": RELEASE,
        "CHANGELOG.md": "## 1.0\n",
        "tests/test_notes.py": test,
        reader: test if reader == "tests/test_notes.py" else "NOTES = open('CHANGELOG.md').read()\n",
    }
    found = select(repo, {"CHANGELOG.md": "## 1.1\n\n## 1.0\n"}, before)
    assert found == selection.Selection(selected, False, (), ())


PLUGIN = {
    "pyproject.toml": '[project]\nname = "shop"\n\n[project.entry-points.pytest11]\nshop = "shop.plugin"\n',
    "src/shop/plugin.py": "from shop import price\n\ndef pytest_report_header():\n    return f'shop {price(1)}'\n",
}


def test_a_plugin_project_replays_what_a_change_outside_the_plugin_reaches(repo: Repo) -> None:
    found = select(repo, {"src/other.py": "X = 2\n"}, PLUGIN)
    assert found == selection.Selection(("tests/test_other.py",), False, (), ())


def test_a_change_the_plugin_loads_runs_every_test(repo: Repo) -> None:
    found = select(repo, {"src/shop/__init__.py": "def price(c):\n    return c + 0\n"}, PLUGIN)
    assert found.modules == ("tests/test_other.py", "tests/test_shop.py") and not found.everything


def test_a_plugin_entry_point_that_does_not_resolve_runs_everything(repo: Repo) -> None:
    before = {"setup.cfg": "[options.entry_points]\npytest11 =\n    shop = shop.gone\n"}
    found = select(repo, {"src/other.py": "X = 2\n"}, before)
    assert found.everything and "pytest11" in found.reasons[0], found


def test_doctest_modules_or_a_pth_file_run_everything(repo: Repo) -> None:
    before = {"pytest.ini": "[pytest]\npythonpath = src\naddopts = --doctest-modules\n"}
    assert select(repo, {"src/other.py": "X = 2\n"}, before).everything
    repo.git("reset", "-q", "--hard")
    assert select(repo, {"src/hook.pth": "import other\n"}).everything
