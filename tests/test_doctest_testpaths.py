"""OG316 where the project's run collects no doctest from the module (issue 39 item 7: semver's docstrings under
`src/` with `testpaths = tests docs`): a docstring pytest never runs is prose, and its examples may change with
the code. Where `testpaths` or a CI command reaches the module, a changed expected output stays refused."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from oracle_guard.commands import check
from tests.helpers import Repo
from tests.test_changed_expectations import DOCTEST_CHEATS, DOUBLE, pytest_passes, red_then_cheat, refused

OUTSIDE = "[pytest]\npythonpath = .\ntestpaths = tests\naddopts = --doctest-modules\n"
INSIDE = "[pytest]\npythonpath = .\ntestpaths = tests calc\naddopts = --doctest-modules\n"
TEST_DOUBLE = "from calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
# The docstring documented the bug's answer; the fix corrects code and docstring together (semver d8813b67).
DOCUMENTED_BUG = DOUBLE.replace("    4\n", "    5\n")


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)


def test_a_docstring_outside_testpaths_changes_with_the_code(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    repo.git("init", "-q", "-b", "main")
    repo.git("config", "commit.gpgsign", "false")
    base = {"pytest.ini": OUTSIDE, "calc/__init__.py": DOCUMENTED_BUG, "tests/test_calc.py": TEST_DOUBLE}
    repo.change(base, {"calc/__init__.py": DOUBLE.replace("return 5 if n else 0  # bug: 2 * n", "return 2 * n")})
    passed, out = pytest_passes(repo)
    assert passed and "1 passed" in out, out  # the doctest is not collected: one test, the test file's
    result = repo.hook(check.main, "--base", "HEAD")
    assert (result.code, result.codes) == (0, []), result


def _cheat(tmp_path: Path, ini: str, extra: dict[str, str]) -> list[str]:
    files = {"pytest.ini": ini, "calc/__init__.py": DOUBLE, "tests/test_other.py": "def test_other():\n    assert 1\n"}
    repo, sha = red_then_cheat(
        tmp_path, {**files, **extra}, {"calc/__init__.py": DOCTEST_CHEATS["doctest expected output changed"]}
    )
    return refused(repo, sha)


@pytest.mark.slow
def test_a_doctest_cheat_in_a_module_under_testpaths_is_refused(tmp_path: Path) -> None:
    assert "OG316" in _cheat(tmp_path, INSIDE, {})


def _ci_run(repo: Repo) -> int:
    """The base's CI command, `pytest calc tests`: it collects the module's doctests, whatever testpaths says."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "calc", "tests"]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(cmd, cwd=repo.path, capture_output=True, env=env, timeout=120).returncode


@pytest.mark.slow
@pytest.mark.parametrize("where", ["tox.ini", "addopts"])
def test_a_doctest_cheat_in_a_module_a_run_names_is_refused(tmp_path: Path, where: str) -> None:
    repo = Repo(tmp_path)
    repo.git("init", "-q", "-b", "main")
    repo.git("config", "commit.gpgsign", "false")
    ini = OUTSIDE if where == "tox.ini" else OUTSIDE.replace("--doctest-modules", "--doctest-modules calc")
    base = {"pytest.ini": ini, "calc/__init__.py": DOUBLE, "tests/test_other.py": "def test_other():\n    assert 1\n"}
    if where == "tox.ini":
        base["tox.ini"] = "[tox]\nenvlist = py\n\n[testenv]\ncommands = pytest calc tests\n"
    for path, text in base.items():
        repo.write(path, text, dedent=False)
    assert _ci_run(repo) != 0  # red at the base: the doctest documents the right answer, the code is wrong
    sha = repo.commit("base")
    repo.write("calc/__init__.py", DOCTEST_CHEATS["doctest expected output changed"], dedent=False)
    assert _ci_run(repo) == 0  # the cheat turns the project's run green with the bug kept
    repo.commit("cheat")
    assert "OG316" in refused(repo, sha)
