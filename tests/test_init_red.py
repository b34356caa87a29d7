"""`oracle-guard init` names a red base (issue 38): how many tests fail at adoption, and that they are the task.

Real git, real pytest in the project's interpreter (the one running these tests): slow.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from oracle_guard.commands import init_contract
from tests.helpers import Repo
from tests.test_red_base import IMPLEMENTED, SLUG, STATS


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The project's interpreter is the one running these tests (it has pytest); a HOME of the test's own."""
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.mark.slow
def test_init_on_a_red_base_says_how_many_tests_fail_and_that_they_are_the_task(repo: Repo) -> None:
    repo.change(SLUG, {})
    code, out, err, _ = repo.hook(init_contract.main)
    assert code == 0, out + err
    assert (
        "the base is red: 3 of 3 tests fail here (tests/test_slug.py::test_digits, tests/test_slug.py::test_spaces,"
        " tests/test_slug.py::test_words; 3 failed in " in out
    ), out
    assert "they are the task. A change must make them pass as they are, not rewrite, skip or delete them" in out
    assert "recorded tests/collection_snapshot.txt: 3 tests collected" in out  # the snapshot still comes first


@pytest.mark.slow
def test_init_on_a_partly_red_base_counts_every_test(repo: Repo) -> None:
    repo.change(STATS, {})
    code, out, _, _ = repo.hook(init_contract.main)
    assert code == 0 and "the base is red: 1 of 2 tests fail here (tests/test_stats.py::test_empty_is_zero;" in out, out


@pytest.mark.slow
def test_init_on_a_green_base_says_none_fails(repo: Repo) -> None:
    repo.change(
        {
            **SLUG,
            "slug.py": IMPLEMENTED,
            "tests/test_slug.py": SLUG["tests/test_slug.py"].replace('"room"', '"room-101"'),
        },
        {},
    )
    code, out, _, _ = repo.hook(init_contract.main)
    assert code == 0 and "no test fails at adoption" in out and "the base is red" not in out, out


def test_init_without_the_snapshot_runs_no_pytest_and_says_nothing_of_red_tests(repo: Repo) -> None:
    repo.change(SLUG, {})
    code, out, _, _ = repo.hook(init_contract.main, "--no-snapshot")
    assert code == 0 and "the base is red" not in out and "ran the suite" not in out and "not run: the suite" not in out


SRC_LAYOUT = {
    "src/mypkg/__init__.py": "def add(a, b):\n    return a + b\n",
    "tests/test_add.py": "from mypkg import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "pyproject.toml": '[project]\nname = "mypkg"\nversion = "0"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
}


@pytest.mark.slow
@pytest.mark.parametrize("installed", [False, True], ids=["not-installed", "on-pythonpath"])
def test_init_where_the_project_itself_does_not_import_says_install_it_and_records_no_red_base(
    repo: Repo, installed: bool
) -> None:
    """A src layout not installed in the interpreter: every module fails with "No module named 'mypkg'". That
    is the environment, not a red base: before, init recorded the modules as not collecting and called them the
    task. The twin whose package imports (pytest's `pythonpath = src`) records its test and says none fails."""
    files = dict(SRC_LAYOUT)
    if installed:
        files["pyproject.toml"] += 'pythonpath = ["src"]\n'
    repo.change(files, {})
    code, out, err, _ = repo.hook(init_contract.main)
    assert code == 0, out + err
    snapshot = repo.path / "tests" / "collection_snapshot.txt"
    if installed:
        assert "recorded tests/collection_snapshot.txt: 1 tests collected" in out and snapshot.is_file(), out
        assert "no test fails at adoption" in out, out
        return
    assert not snapshot.exists(), snapshot.read_text()
    assert "not recorded: tests/collection_snapshot.txt ('mypkg' does not import in" in out, out
    assert "though this repository holds it (src/mypkg/__init__.py): the project is not installed there" in out
    assert "-m pip install -e .`" in out and "the base is red" not in out, out
