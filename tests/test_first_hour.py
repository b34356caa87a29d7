"""The first hour: init records the snapshot and prints the config; interpreters; pre-push; environment errors."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import pytest

from oracle_guard.commands import init_contract
from oracle_guard.hook_ids import collection_snapshot
from oracle_guard.hook_ids.collection_snapshot import main as snapshot_main
from oracle_guard.repo import changes
from tests.helpers import Repo

TEST = "import pytest\n\n\ndef test_price():\n    assert 2 + 2 == 4\n\n\ndef test_other():\n    assert 'a'.upper() == 'A'\n"


@pytest.fixture
def this_python(monkeypatch: pytest.MonkeyPatch) -> str:
    """Collection runs in this interpreter (it has pytest), as the active virtualenv."""
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.delenv("PRE_COMMIT", raising=False)
    return sys.executable


@pytest.mark.slow
def test_init_records_the_first_snapshot_so_the_first_commit_is_green(repo: Repo, capsys, this_python: str) -> None:
    repo.write("tests/test_price.py", TEST)
    repo.commit("project")
    assert repo.run(init_contract.main) == 0
    out = capsys.readouterr().out
    assert "recorded tests/collection_snapshot.txt: 2 tests collected by " in out
    snapshot = (repo.path / "tests/collection_snapshot.txt").read_text()
    assert "tests/test_price.py::test_price" in snapshot and "tests/test_price.py::test_other" in snapshot
    repo.commit("adopt oracle-guard")
    repo.write("tests/test_price.py", TEST.replace("2 + 2 == 4", "2 + 2 == 4\n    assert 3 * 3 == 9"))
    repo.stage()
    assert repo.run(snapshot_main) == 0, capsys.readouterr()  # green on the first honest commit


@pytest.mark.slow
def test_init_says_why_no_snapshot_was_recorded_and_still_writes_the_contract(
    repo: Repo, capsys, this_python: str
) -> None:
    repo.write("tests/test_price.py", "import not_installed_anywhere\n\n\ndef test_x():\n    assert 1 < 2\n")
    repo.commit("project")
    assert repo.run(init_contract.main) == 0
    out = capsys.readouterr().out
    assert "not recorded: tests/collection_snapshot.txt (1 collection error(s)" in out
    assert (repo.path / "tests/agent_contract.yaml").exists() and not (
        repo.path / "tests/collection_snapshot.txt"
    ).exists()


def test_init_prints_the_whole_config_or_what_to_add(repo: Repo, capsys) -> None:
    repo.write("tests/test_price.py", TEST)
    repo.commit("project")
    assert repo.run(init_contract.main, "--no-snapshot") == 0
    out = capsys.readouterr().out
    assert (
        "repos:\n  - repo: https://github.com/oracle-guard/oracle-guard\n" in out
        and "      - id: oracle-guard\n" in out
    )
    assert "rev: COMMIT" in out and "v0.1.0" not in out  # no tag that does not exist
    repo.write(
        ".pre-commit-config.yaml",
        "repos:\n  - repo: https://github.com/psf/black\n    rev: 24.1.0\n    hooks:\n      - id: black\n",
    )
    assert repo.run(init_contract.main, "--no-snapshot", "--force") == 0
    out = capsys.readouterr().out
    assert "Add under `repos:` in your .pre-commit-config.yaml" in out and "\nrepos:\n" not in out
    repo.write(
        ".pre-commit-config.yaml",
        "repos:\n  - repo: https://github.com/oracle-guard/oracle-guard\n    rev: abc\n    hooks:\n      - id: oracle-guard\n",
    )
    assert repo.run(init_contract.main, "--no-snapshot", "--force") == 0
    assert "already names oracle-guard" in capsys.readouterr().out


def test_pre_push_ignores_files_git_does_not_track(repo: Repo, monkeypatch) -> None:
    repo.write("tests/test_price.py", TEST)
    base = repo.commit("base")
    repo.write("tests/test_price.py", TEST + "\n\ndef test_more():\n    assert 1 < 2\n")
    head = repo.commit("pushed")
    repo.write(
        "tests/test_scratch.py", "import pytest\n\n\n@pytest.mark.skip\ndef test_wip():\n    assert False\n"
    )  # never added
    monkeypatch.chdir(repo.path)
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", base)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", head)
    pushed = changes.resolve(argparse.Namespace(base=None))
    assert pushed.changed_paths == ["tests/test_price.py"]
    monkeypatch.delenv("PRE_COMMIT_FROM_REF")
    monkeypatch.delenv("PRE_COMMIT_TO_REF")
    gate = changes.resolve(argparse.Namespace(base=base))  # the gate: the work tree, untracked files too
    assert "tests/test_scratch.py" in gate.changed_paths


def _fake_venv(root: Path) -> str:
    (root / ".venv" / "bin").mkdir(parents=True)
    python = root / ".venv" / "bin" / "python"
    python.symlink_to(sys.executable)
    return str(python)


def test_a_worktree_finds_the_main_checkout_s_venv(repo: Repo, tmp_path: Path, monkeypatch) -> None:
    repo.write("tests/test_price.py", TEST)
    repo.commit("base")
    python = _fake_venv(repo.path)
    worktree = tmp_path / "agent"
    repo.git("worktree", "add", "-q", "-b", "agent", str(worktree))
    monkeypatch.chdir(worktree)
    env = {"PATH": ""}
    assert (python, "the main checkout's .venv") in collection_snapshot.candidate_interpreters(None, env)
    own = _fake_venv(worktree)  # the worktree's own venv comes first
    assert collection_snapshot.candidate_interpreters(None, env)[0] == (own, "./.venv")
    monkeypatch.chdir(repo.path)  # the main checkout itself: no second entry
    assert [origin for _, origin in collection_snapshot.candidate_interpreters(None, env)] == ["./.venv"]


@pytest.mark.slow
def test_a_missing_third_party_module_is_an_environment_error_naming_the_interpreter(
    repo: Repo, capsys, this_python: str
) -> None:
    repo.write(
        "tests/test_price.py", "import freezegun_not_installed\n" + TEST
    )  # the project needs it; this interpreter lacks it
    repo.write(
        "tests/collection_snapshot.txt",
        "run   tests/test_price.py::test_price\nrun   tests/test_price.py::test_other\n",
    )
    repo.commit("base, recorded where freezegun_not_installed was installed")
    repo.write(
        "tests/test_price.py",
        "import freezegun_not_installed\n" + TEST + "\n\ndef test_third():\n    assert 3 * 3 == 9\n",
    )
    repo.stage()
    code = repo.run(snapshot_main)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert (
        f"pytest in {this_python} cannot import 'freezegun_not_installed', which is not part of this repository" in err
    )
    assert "the change touches no file that declares dependencies" in err  # so not OG807: the environment's


@pytest.mark.slow
def test_a_module_of_the_repository_that_went_missing_stays_a_finding(repo: Repo, capsys, this_python: str) -> None:
    repo.write("src/prices/__init__.py", "VALUE = 4\n")
    repo.write(
        "tests/conftest.py",
        "import sys, os\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'src'))\n",
    )
    repo.write("tests/test_price.py", "import prices\n" + TEST)
    repo.commit("base")
    assert repo.run(snapshot_main, "--always") == 1
    capsys.readouterr()
    repo.commit("snapshot")
    repo.remove("src/prices/__init__.py")  # the patch deletes the module the tests import
    # and its folder, as a fresh checkout has it: a __pycache__ left by the first collection
    # would keep `prices` importable as a namespace package.
    shutil.rmtree(repo.path / "src" / "prices", ignore_errors=True)
    code = repo.run(snapshot_main)
    out = capsys.readouterr().out
    assert code == 1 and "OG803 collection error in tests/test_price.py" in out and "prices" in out
