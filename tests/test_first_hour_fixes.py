"""The first hour's rough edges: init's config, check's notices, a wrong --contract, quarantine and guard leftovers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from oracle_guard.commands import check, guard, init_contract, one_hook
from oracle_guard.commands.quarantine_run import main as quarantine_main
from oracle_guard.contract.snapshot import format_snapshot
from oracle_guard.hook_ids.collection_snapshot import main as snapshot_main
from oracle_guard.hook_ids.forbid_skip_marks import main as skip_main
from tests.helpers import Repo

TEST = "import pytest\n\n\ndef test_price():\n    assert 2 + 2 == 4\n\n\ndef test_other():\n    assert 'a'.upper() == 'A'\n"
LEDGER = "version: 1\nfixtures: []\nfreezes: []\nmax_active_freezes: 3\n"


@pytest.fixture
def this_python(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    return sys.executable


# -- init's config -------------------------------------------------------------------------------------


def test_init_prints_oracle_replay_at_pre_push_and_how_to_install_that_hook(repo: Repo) -> None:
    repo.write("tests/test_price.py", TEST)
    repo.commit("project")
    result = repo.hook(init_contract.main, "--no-snapshot")
    assert result.code == 0
    assert "      - id: oracle-guard\n      - id: oracle-replay  # stages: [pre-push, manual]; runs pytest twice\n" in (
        result.out
    )
    assert "`pre-commit install --hook-type pre-push`" in result.out
    repo.write(
        ".pre-commit-config.yaml",
        "repos:\n  - repo: https://github.com/oracle-guard/oracle-guard\n    rev: abc\n    hooks:\n      - id: oracle-guard\n",
    )
    result = repo.hook(init_contract.main, "--no-snapshot", "--force")
    assert "already names oracle-guard" in result.out and "add `- id: oracle-replay`" in result.out
    repo.write(
        ".pre-commit-config.yaml",
        "repos:\n  - repo: https://github.com/oracle-guard/oracle-guard\n    rev: abc\n    hooks:\n"
        "      - id: oracle-guard\n      - id: oracle-replay\n",
    )
    result = repo.hook(init_contract.main, "--no-snapshot", "--force")
    assert "already names oracle-guard" in result.out and "add `- id: oracle-replay`" not in result.out


# -- "recording the first snapshot" only when one is written -------------------------------------------


@pytest.mark.slow
def test_only_a_written_snapshot_is_announced_as_the_first(repo: Repo, this_python: str) -> None:
    repo.write("tests/test_price.py", TEST)
    base = repo.commit("no snapshot committed yet")
    repo.write(
        "tests/collection_snapshot.txt",
        format_snapshot({"tests/test_price.py::test_price": "run", "tests/test_price.py::test_other": "run"}),
    )
    gate = repo.hook(check.main, "--base", base)
    assert gate.code == 0 and "recording the first snapshot" not in gate.err  # check writes nothing
    (repo.path / "tests/collection_snapshot.txt").unlink()
    repo.write("tests/test_price.py", TEST + "\n\ndef test_third():\n    assert 3 * 3 == 9\n")
    hook = repo.staged_hook(snapshot_main)
    assert hook.code == 1 and "no tests/collection_snapshot.txt at HEAD: recording the first snapshot" in hook.err
    assert (repo.path / "tests/collection_snapshot.txt").exists()


# -- a wrong --contract: one clear line -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("contract", "said"),
    [
        ("nope/contract.yaml", "--contract nope/contract.yaml: no such file in the work tree or at "),
        ("/tmp/elsewhere.yaml", "--contract /tmp/elsewhere.yaml: must be a path inside the repository"),
        ("../up.yaml", "--contract ../up.yaml: must be a path inside the repository"),
    ],
    ids=["missing", "absolute", "outside"],
)
@pytest.mark.parametrize(
    "argv", [("check",), ("check", "--replay"), ("collection-snapshot",), ("hook",)], ids=lambda a: "-".join(a)
)
def test_a_wrong_contract_path_is_one_error_line(repo: Repo, contract: str, said: str, argv: tuple[str, ...]) -> None:
    repo.write("tests/test_price.py", TEST)
    base = repo.commit("base")
    repo.write("tests/test_price.py", TEST + "\n\ndef test_third():\n    assert 3 * 3 == 9\n")
    repo.stage()
    main = {"check": check.main, "collection-snapshot": snapshot_main, "hook": one_hook.main}[argv[0]]
    extra = ["--base", base] if argv[0] == "check" else []
    result = repo.hook(main, *argv[1:], *extra, "--contract", contract)
    assert result.code == 2 and result.out == "" and result.err.count("\n") == 1, result
    assert said in result.err and "fatal" not in result.err
    assert not (repo.path / "nope").exists() and not (repo.path / "collection_snapshot.txt").exists()


def test_a_contract_elsewhere_that_exists_is_used(repo: Repo) -> None:
    repo.write("ci/contract.yaml", LEDGER)
    repo.write("tests/test_price.py", TEST)
    base = repo.commit("base")
    repo.write("tests/test_price.py", TEST.replace("def test_price", "@pytest.mark.skip\ndef test_price"))
    repo.stage()
    result = repo.hook(skip_main, "--contract", "ci/contract.yaml", "tests/test_price.py")
    assert result.code == 1 and result.codes == ["OG101"]
    honest = repo.hook(check.main, "--base", base, "--contract", "ci/contract.yaml", "--skip", "collection-snapshot")
    assert honest.code == 1 and "OG101" in honest.codes and "--contract" not in honest.err


# -- quarantine run on an empty ledger ------------------------------------------------------------------


def test_quarantine_run_on_an_empty_ledger_writes_nothing_unless_asked(repo: Repo) -> None:
    repo.write("tests/agent_contract.yaml", LEDGER)
    repo.commit("adopted")
    result = repo.hook(quarantine_main, "run")
    assert result.code == 0 and "nothing ran, no report written" in result.err
    assert repo.git("status", "--porcelain", "--ignored") == ""
    asked = repo.hook(quarantine_main, "run", "--report", "out/report.json")
    assert asked.code == 0 and "report written to out/report.json" in asked.err
    assert (repo.path / "out/report.json").read_text().count('"entries": []') == 1


# -- guard uninstall restores the shared config ---------------------------------------------------------


def _local_config(where: Path) -> list[str]:
    proc = subprocess.run(["git", "-C", str(where), "config", "--local", "--list"], capture_output=True, text=True)
    return proc.stdout.splitlines()


def _guarded_project(repo: Repo, tmp_path: Path) -> tuple[Path, Path]:
    repo.write("tests/test_price.py", TEST)
    repo.write("tests/agent_contract.yaml", LEDGER)
    repo.commit("base")
    agent, other = tmp_path / "agent", tmp_path / "other"
    repo.git("worktree", "add", "-q", "-b", "agent", str(agent))
    repo.git("worktree", "add", "-q", "-b", "other", str(other))
    return agent, other


def test_guard_uninstall_restores_what_install_changed(repo: Repo, tmp_path: Path) -> None:
    agent, other = _guarded_project(repo, tmp_path)
    before = _local_config(repo.path)
    assert guard.main(["install", str(agent)]) == 0 and guard.main(["install", str(other)]) == 0
    assert "extensions.worktreeconfig=true" in _local_config(repo.path)
    result = repo.hook(guard.main, "uninstall", str(agent))
    assert "extensions.worktreeconfig=true" in _local_config(repo.path)  # the other worktree's guard needs it
    assert "disabled extensions.worktreeConfig" not in result.out
    result = repo.hook(guard.main, "uninstall", str(other))
    assert "disabled extensions.worktreeConfig again" in result.out
    assert _local_config(repo.path) == before
    for where in (agent, other):
        git_path = repo.git("-C", str(where), "rev-parse", "--git-path", "config.worktree").strip()
        assert not (where / git_path).exists()


def test_guard_uninstall_keeps_a_worktree_config_the_user_had(repo: Repo, tmp_path: Path) -> None:
    agent, _ = _guarded_project(repo, tmp_path)
    repo.git("config", "extensions.worktreeConfig", "true")
    before = _local_config(repo.path)
    assert guard.main(["install", str(agent)]) == 0
    result = repo.hook(guard.main, "uninstall", str(agent))
    assert "disabled extensions.worktreeConfig" not in result.out and _local_config(repo.path) == before
