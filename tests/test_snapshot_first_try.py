"""Issue 30, item 2: a commit that adds or renames tests goes through on its first try, through real pre-commit.

The hook compares what pytest collects with the snapshot committed at the base; when nothing the base
lists is lost, it writes the new ids and stages the snapshot with the commit (pre-commit fails a hook
that leaves the work tree different from the index, not one that stages what it writes). A removal
is still refused, and the merge gate finds the snapshot the commit recorded up to date.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import Repo

pytestmark = pytest.mark.slow  # real pre-commit and pytest subprocesses

SNAPSHOT = "tests/collection_snapshot.txt"
TESTS = "tests/test_calc.py"
CODE = "def add(a, b):\n    return a + b\n"
SUITE = "from calc import add\n\n\ndef test_small():\n    assert add(1, 2) == 3\n\n\ndef test_large():\n    assert add(100, 200) == 300\n"
CONFIG = """\
repos:
  - repo: local
    hooks:
      - id: oracle-guard
        name: oracle-guard
        entry: {python} -m oracle_guard hook --python {python}
        language: system
        pass_filenames: false
        always_run: true
        require_serial: true
"""


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_DIR", "GIT_INDEX", "PRE_COMMIT"))}
    env.update(PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never", GIT_CONFIG_NOSYSTEM="1")
    return env


def _git_commit(repo: Repo, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`git commit`, with the pre-commit hook `pre-commit install` put in place, as a user types it."""
    return subprocess.run(("git", "commit", "-q", *args), cwd=repo.path, env=_env(home), capture_output=True, text=True)


@pytest.fixture
def adopted(repo: Repo, tmp_path: Path) -> tuple[Repo, Path]:
    """A project with its snapshot committed and pre-commit installed."""
    home = tmp_path / "pre-commit-home"
    repo.write(".gitignore", "__pycache__/\n")  # as projects have: pytest's bytecode is never committed
    repo.write("calc.py", CODE)
    repo.write(TESTS, SUITE)
    repo.write("tests/__init__.py", "")
    repo.write(".pre-commit-config.yaml", CONFIG.format(python=sys.executable))
    repo.stage()
    first = subprocess.run(
        (sys.executable, "-m", "oracle_guard", "hook", "--python", sys.executable),
        cwd=repo.path,
        env=_env(home),
        capture_output=True,
        text=True,
    )
    assert "updated with what pytest collects now (2 tests)" in first.stdout, first.stdout + first.stderr
    repo.commit("adopt oracle-guard")
    subprocess.run(
        (sys.executable, "-m", "pre_commit", "install"), cwd=repo.path, env=_env(home), check=True, capture_output=True
    )
    return repo, home


def _committed(repo: Repo, path: str) -> str:
    return repo.git("show", f"HEAD:{path}")


def test_a_commit_that_adds_a_test_goes_through_on_its_first_try(adopted: tuple[Repo, Path]) -> None:
    repo, home = adopted
    repo.write(TESTS, SUITE + "\n\ndef test_negative():\n    assert add(-1, -2) == -3\n")
    repo.write("NOTES.txt", "an unstaged file\n")
    repo.git("add", TESTS)
    proc = _git_commit(repo, home, "-m", "a new test")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "tests/test_calc.py::test_negative" in _committed(repo, SNAPSHOT)
    assert repo.git("status", "--porcelain") == "?? NOTES.txt\n"  # nothing left to stage, nothing else touched
    gate = subprocess.run(
        (sys.executable, "-m", "oracle_guard", "check", "--base", "HEAD~1", "--python", sys.executable),
        cwd=repo.path,
        env=_env(home),
        capture_output=True,
        text=True,
    )
    assert gate.returncode == 0 and "OG805" not in gate.stdout, gate.stdout + gate.stderr


def test_a_commit_that_renames_a_test_goes_through_on_its_first_try(adopted: tuple[Repo, Path]) -> None:
    repo, home = adopted
    repo.write(TESTS, SUITE.replace("def test_large", "def test_large_numbers"))
    repo.git("add", TESTS)
    proc = _git_commit(repo, home, "-m", "a clearer name")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    snapshot = _committed(repo, SNAPSHOT)
    assert "test_large_numbers" in snapshot and "::test_large\n" not in snapshot


def test_a_commit_that_removes_a_test_is_refused_and_records_nothing(adopted: tuple[Repo, Path]) -> None:
    repo, home = adopted
    head = repo.git("rev-parse", "HEAD")
    repo.write(TESTS, SUITE[: SUITE.index("\n\ndef test_large")] + "\n")
    repo.git("add", TESTS)
    proc = _git_commit(repo, home, "-m", "drop a test")
    said = proc.stdout + proc.stderr  # git hands the hook's output to stderr
    assert proc.returncode != 0 and "OG801 test no longer collected: tests/test_calc.py::test_large" in said, said
    assert repo.git("rev-parse", "HEAD") == head
    assert "test_large" in (repo.path / SNAPSHOT).read_text() and SNAPSHOT not in repo.git(
        "diff", "--cached", "--name-only"
    )


def test_a_test_added_and_another_removed_is_refused(adopted: tuple[Repo, Path]) -> None:
    """A new id does not pay for a lost one: the snapshot only grows."""
    repo, home = adopted
    swapped = SUITE.replace(
        "def test_large():\n    assert add(100, 200) == 300", "def test_zero():\n    assert add(0, 0) == 0"
    )
    repo.write(TESTS, swapped)
    repo.git("add", TESTS)
    proc = _git_commit(repo, home, "-m", "swap a test")
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "OG801 test no longer collected: tests/test_calc.py::test_large" in said, said
