"""End to end through real pre-commit: `try-repo` and `run` on temporary repositories.

pre-commit installs this project into its own virtualenv once per test
session (the first test pays ~30 s); every hook id then runs as users run it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import Repo

pytestmark = pytest.mark.slow  # real pre-commit, its own virtualenv: minutes on a busy machine

PROJECT = Path(__file__).resolve().parents[1]

HONEST = """\
import pytest


def test_price():
    assert 2 + 2 == 4


def test_other():
    assert "a".upper() == "A"
"""
SKIPPED = HONEST.replace("def test_price", '@pytest.mark.skip(reason="flaky")\ndef test_price')
RUNTIME = HONEST.replace("    assert 2 + 2 == 4", '    pytest.skip("later")\n    assert 2 + 2 == 4')


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A committed copy of this project as it is now, so pre-commit caches one env."""
    dest = tmp_path_factory.mktemp("hook-repo") / "oracle-guard"
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=PROJECT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, files):
        src = PROJECT / os.fsdecode(name)
        if src.is_file():
            (dest / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / os.fsdecode(name))
    copy = Repo(dest)
    copy.git("init", "-q")
    copy.git("config", "commit.gpgsign", "false")
    sha = copy.commit("snapshot for pre-commit")
    return str(dest), sha


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("pre-commit-home"))


def pre_commit(repo: Repo, home: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_DIR", "GIT_INDEX", "PRE_COMMIT"))}
    env["PRE_COMMIT_HOME"] = home
    env["PRE_COMMIT_COLOR"] = "never"
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args], cwd=repo.path, env=env, capture_output=True, text=True
    )


def try_repo(
    repo: Repo, hook_repo: tuple[str, str], home: str, hook: str, *run_args: str
) -> subprocess.CompletedProcess[str]:
    path, sha = hook_repo
    return pre_commit(repo, home, "try-repo", path, hook, "--ref", sha, "--verbose", *run_args)


def test_staged_skip_mark_is_rejected(repo: Repo, hook_repo, pre_commit_home) -> None:
    repo.write("tests/test_price.py", HONEST)
    repo.commit("base")
    repo.write("tests/test_price.py", SKIPPED)
    repo.stage()
    proc = try_repo(repo, hook_repo, pre_commit_home, "forbid-skip-marks")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "tests/test_price.py:4:2: OG101 new skip mark on test_price" in proc.stdout


def test_staged_honest_change_passes(repo: Repo, hook_repo, pre_commit_home) -> None:
    repo.write("tests/test_price.py", SKIPPED)
    repo.commit("base with an old, known skip")
    repo.write("tests/test_price.py", SKIPPED + "\n\ndef test_new():\n    assert [1, 2][::-1] == [2, 1]\n")
    repo.stage()
    proc = try_repo(repo, hook_repo, pre_commit_home, "forbid-skip-marks")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Passed" in proc.stdout


def test_staged_rename_with_its_mark_passes(repo: Repo, hook_repo, pre_commit_home) -> None:
    repo.write("tests/test_price.py", SKIPPED)
    repo.commit("base")
    repo.git("mv", "tests/test_price.py", "tests/test_pricing.py")
    proc = try_repo(repo, hook_repo, pre_commit_home, "forbid-skip-marks")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_range_mode_runtime_skip_is_rejected(repo: Repo, hook_repo, pre_commit_home) -> None:
    repo.write("tests/test_price.py", HONEST)
    base = repo.commit("base")
    repo.write("tests/test_price.py", RUNTIME)
    repo.commit("weaken")
    repo.write("README", "unrelated\n")
    repo.commit("later commit")
    proc = try_repo(repo, hook_repo, pre_commit_home, "forbid-runtime-skip", "--from-ref", base, "--to-ref", "HEAD")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "tests/test_price.py:5:5: OG201 new runtime skip `pytest.skip('later')` in test_price" in proc.stdout


def test_range_mode_mark_moved_to_another_file_passes(repo: Repo, hook_repo, pre_commit_home) -> None:
    repo.write("tests/test_price.py", SKIPPED)
    base = repo.commit("base")
    repo.write("tests/test_price.py", "def test_other():\n    assert 'a'.upper() == 'A'\n")
    repo.write(
        "tests/test_moved.py",
        'import pytest\n\n\n@pytest.mark.skip(reason="flaky")\ndef test_price():\n    assert 2 + 2 == 4\n',
    )
    repo.commit("move test_price with its mark")
    proc = try_repo(repo, hook_repo, pre_commit_home, "forbid-skip-marks", "--from-ref", base, "--to-ref", "HEAD")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_pre_commit_run_with_a_config(repo: Repo, hook_repo, pre_commit_home) -> None:
    path, sha = hook_repo
    repo.write(
        ".pre-commit-config.yaml",
        f"repos:\n  - repo: {path}\n    rev: {sha}\n    hooks:\n      - id: forbid-skip-marks\n      - id: forbid-runtime-skip\n",
    )
    repo.write("tests/test_price.py", HONEST)
    repo.commit("base")
    repo.write("tests/test_price.py", SKIPPED.replace("    assert 2 + 2 == 4", "    return\n    assert 2 + 2 == 4"))
    repo.stage()
    proc = pre_commit(repo, pre_commit_home, "run")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "OG101 new skip mark on test_price" in proc.stdout
    assert "OG202 new early return in test_price before its first check" in proc.stdout


def test_the_project_passes_its_own_hooks(hook_repo, pre_commit_home) -> None:
    """oracle-guard guards itself: every oracle-guard hook of its own config passes on its own tree."""
    path, _ = hook_repo
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_DIR", "GIT_INDEX", "PRE_COMMIT"))}
    env.update(PRE_COMMIT_HOME=pre_commit_home, PRE_COMMIT_COLOR="never")
    # The config's linters need the lint extra, which a test run need not have; CI runs them itself (.ci/run).
    env["SKIP"] = "ruff-check,ruff-format,mypy"
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")  # `python` = this interpreter
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=path, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The config runs the one hook the README recommends (every check in one process) at pre-commit.
    assert proc.stdout.count("Passed") == 1, proc.stdout
    assert "oracle-guard (own checkout, every check)" in proc.stdout and "Failed" not in proc.stdout, proc.stdout
    assert proc.stdout.count("Skipped") == 3, proc.stdout


def _one_hook_env(home: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("GIT_DIR", "GIT_INDEX", "PRE_COMMIT", "VIRTUAL_ENV"))
    }
    env.update(PRE_COMMIT_HOME=home, PRE_COMMIT_COLOR="never")
    env["PATH"] = (
        os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    )  # collection-snapshot's python3 has pytest
    return env


def _config(repo: Repo, hook_repo: tuple[str, str]) -> None:
    path, sha = hook_repo
    # As every project has: pytest's bytecode is not committed (where Python writes it, a staged .pyc
    # that the next collection rewrites would read as "files were modified by this hook").
    repo.write(".gitignore", "__pycache__/\n")
    repo.write(
        ".pre-commit-config.yaml", f"repos:\n  - repo: {path}\n    rev: {sha}\n    hooks:\n      - id: oracle-guard\n"
    )


def _run(repo: Repo, home: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=repo.path,
        env=_one_hook_env(home),
        capture_output=True,
        text=True,
    )


def test_one_process_hook_through_try_repo(repo: Repo, hook_repo, pre_commit_home) -> None:
    path, sha = hook_repo
    repo.write("tests/test_price.py", HONEST)
    repo.stage()
    first = _run(repo, pre_commit_home, "try-repo", path, "oracle-guard", "--ref", sha, "--verbose")
    assert first.returncode == 1 and "updated with what pytest collects now (2 tests)" in first.stdout, (
        first.stdout + first.stderr
    )
    repo.commit("base with the first snapshot")
    repo.write("tests/test_price.py", SKIPPED.replace("    assert 2 + 2 == 4", "    return\n    assert 2 + 2 == 4"))
    repo.stage()
    proc = _run(repo, pre_commit_home, "try-repo", path, "oracle-guard", "--ref", sha, "--verbose")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "OG101 new skip mark on test_price" in proc.stdout and "OG202 new early return in test_price" in proc.stdout
    assert (
        "oracle-guard: 4 findings (OG101 x1, OG202 x1, OG301 x1, OG802 x1)" in proc.stdout
    )  # OG802: pytest saw the skip too


def test_one_process_hook_by_stage(repo: Repo, hook_repo, pre_commit_home) -> None:
    _config(repo, hook_repo)
    repo.write("tests/test_price.py", HONEST)
    repo.stage()
    _run(repo, pre_commit_home, "run")  # records the first snapshot
    base = repo.commit("base")
    repo.write("tests/test_price.py", HONEST + "\n\ndef test_third():\n    assert 3 * 3 == 9\n")
    repo.stage()
    honest = _run(repo, pre_commit_home, "run")  # a new test: recorded and staged in the same run
    assert honest.returncode == 0 and "Passed" in honest.stdout, honest.stdout + honest.stderr
    assert "tests/collection_snapshot.txt" in repo.git("diff", "--cached", "--name-only")
    repo.commit("honest")
    repo.write("tests/test_price.py", RUNTIME)
    repo.commit("weaken")
    pushed = _run(repo, pre_commit_home, "run", "--hook-stage", "pre-push", "--from-ref", base, "--to-ref", "HEAD")
    assert pushed.returncode == 1 and "OG201 new runtime skip" in pushed.stdout, pushed.stdout + pushed.stderr
    manual = _run(repo, pre_commit_home, "run", "--hook-stage", "manual", "--from-ref", base, "--to-ref", "HEAD")
    assert manual.returncode == 1 and "OG201" in manual.stdout
    repo.write("MSG", "a message\n")
    msg = _run(repo, pre_commit_home, "run", "--hook-stage", "commit-msg", "--commit-msg-filename", "MSG")
    assert msg.returncode == 0 and "oracle-guard" not in msg.stdout, msg.stdout  # never handed the message file


def test_pre_commit_run_reaches_the_switch_rules(repo: Repo, hook_repo, pre_commit_home) -> None:
    """collection-snapshot's static layer (OG86x) runs under pre-commit without starting pytest."""
    from oracle_guard.contract.snapshot import format_snapshot

    workflow = "jobs:\n  t:\n    steps:\n      - run: {}\n"
    repo.write("tests/test_price.py", HONEST)
    repo.write(
        "tests/collection_snapshot.txt",
        format_snapshot({"tests/test_price.py::test_price": "run", "tests/test_price.py::test_other": "run"}),
    )
    repo.write(".github/workflows/ci.yml", workflow.format("pytest -q"))
    repo.commit("base")
    repo.write(".github/workflows/ci.yml", workflow.format("pytest -q --reruns 3"))
    repo.stage()
    proc = try_repo(repo, hook_repo, pre_commit_home, "collection-snapshot")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert ".github/workflows/ci.yml:4:1: OG860 pytest command now reruns failing tests: `--reruns 3`" in proc.stdout


def test_oracle_replay_in_pre_push_range_mode(repo: Repo, hook_repo, pre_commit_home) -> None:
    """The manifest's oracle-replay, as pre-push runs it: the base's test judges the pushed commit."""
    repo.write("src/calc.py", "def add(a, b):\n    return a + b\n")
    repo.write("tests/test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n")
    repo.write("pytest.ini", "[pytest]\npythonpath = src\n")
    base = repo.commit("base")
    repo.write("src/calc.py", "def add(a, b):\n    return a + b + 1\n")
    repo.write("tests/test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) > 0\n")
    repo.commit("agent: make add pass")
    (repo.path / ".venv").symlink_to(sys.prefix)  # the project's ./.venv: this interpreter, which has pytest
    proc = try_repo(
        repo,
        hook_repo,
        pre_commit_home,
        "oracle-replay",
        "--hook-stage",
        "pre-push",
        "--from-ref",
        base,
        "--to-ref",
        "HEAD",
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "tests/test_calc.py:4:1: OG901 tests/test_calc.py::test_add passed at" in proc.stdout
    assert "(./.venv) ran 1 changed test module(s)" in proc.stdout
