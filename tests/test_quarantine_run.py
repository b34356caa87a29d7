"""`oracle-guard quarantine run`: real repro commands (pytest subprocesses) on a temporary project."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from oracle_guard.commands.quarantine_run import main

# The flake reads its seed from the environment the runner sets: seed 1 fails
# with the recorded signature, seed 2 fails differently, seed 3 passes.
FLAKE = """\
import os


def check(value):
    assert value != 1


def test_stream():
    seed = int(os.environ["ORACLE_GUARD_SEED"])
    if seed == 2:
        raise KeyError("chunk")
    check(seed)
"""
RECORDED = "AssertionError in tests/test_q.py:check"
PYTEST = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider -p no:hypothesispytest tests/test_q.py"


def contract(seed: str, signature: str | None = RECORDED, silent: int = 2, repro: str = PYTEST) -> str:
    lines = [
        "version: 1",
        "freezes:",
        "  - id: test_stream",
        "    owner: oncall",
        "    reason: CRLF split across chunks, PAY-9",
        '    expires: "2026-12-05T00:00:00Z"',
        "    remaining_reruns: 1",
        f"    seed: {seed}",
        f"    repro: '{repro}'",
        f"    silent_runs_allowed: {silent}",
    ]
    if signature:
        lines.append(f'    signature: "{signature}"')
    return "\n".join(lines) + "\n"


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_q.py").write_text(FLAKE)
    monkeypatch.chdir(root)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    subprocess.run(("git", "init", "-q", "-b", "main"), check=True)
    subprocess.run(("git", "config", "commit.gpgsign", "false"), check=True)
    return root


def commit(proj: Path, text: str) -> None:
    """Repro commands run only as committed on the main branch."""
    (proj / "tests" / "agent_contract.yaml").write_text(text)
    subprocess.run(("git", "add", "-A"), check=True)
    subprocess.run(("git", "commit", "-q", "--allow-empty", "-m", "contract"), check=True)


def run(proj: Path, text: str, *argv: str) -> tuple[int, dict, str]:
    commit(proj, text)
    code = main(["run", "--now", "2026-12-02T00:00:00Z", *argv])
    report = json.loads((proj / "quarantine-report.json").read_text())
    assert (proj / "tests" / "agent_contract.yaml").read_text() == text  # never edited
    return code, report["entries"][0], report["entries"][0]["message"]


@pytest.mark.slow
def test_known_flake_with_the_recorded_signature_passes(proj: Path) -> None:
    code, entry, _ = run(proj, contract("1"))
    assert code == 0 and entry["verdict"] == "known-flake"
    assert entry["runs"][0]["signatures"] == [RECORDED] and entry["consecutive_passes"] == 0


@pytest.mark.slow
def test_failure_with_another_signature_is_a_new_regression(proj: Path, capsys) -> None:
    code, entry, message = run(proj, contract("2"))
    assert code == 1 and entry["verdict"] == "new-failure"
    assert "KeyError in tests/test_q.py:test_stream" in message
    assert "OG692 freeze test_stream: failed with a different signature" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.parametrize("form", ["json", "sarif"])
def test_a_document_format_prints_one_document(proj: Path, capsys, form: str) -> None:
    """Each entry's progress line goes to stderr: stdout is the document alone."""
    code, entry, _ = run(proj, contract("2"), "--format", form)
    out, err = capsys.readouterr()
    assert code == 1 and entry["verdict"] == "new-failure"
    json.loads(out)
    assert "quarantine test_stream: new-failure" in err


@pytest.mark.slow
def test_failure_without_a_recorded_signature_is_not_trusted(proj: Path) -> None:
    code, entry, message = run(proj, contract("1", signature=None))
    assert code == 1 and entry["verdict"] == "unverified" and RECORDED in message


@pytest.mark.slow
def test_passing_below_the_silent_budget_is_quiet(proj: Path) -> None:
    code, entry, _ = run(proj, contract("3", silent=2))
    assert code == 0 and entry["verdict"] == "quiet" and entry["consecutive_passes"] == 1


@pytest.mark.slow
def test_passing_silent_runs_allowed_times_in_a_row_graduates(proj: Path) -> None:
    code, entry, message = run(proj, contract("3", silent=2), "--runs", "2")
    assert code == 1 and entry["verdict"] == "graduated" and "move it back" in message


@pytest.mark.slow
def test_consecutive_passes_carry_over_from_the_previous_report(proj: Path) -> None:
    assert run(proj, contract("3", silent=2))[0] == 0
    (proj / "quarantine-report.json").rename(proj / "previous.json")
    code, entry, _ = run(proj, contract("3", silent=2), "--previous", "previous.json")
    assert code == 1 and entry["verdict"] == "graduated" and entry["consecutive_passes"] == 2


@pytest.mark.slow
def test_a_failure_resets_the_streak(proj: Path) -> None:
    (proj / "previous.json").write_text(json.dumps({"entries": [{"id": "test_stream", "consecutive_passes": 5}]}))
    code, entry, _ = run(proj, contract("1", silent=2), "--previous", "previous.json")
    assert code == 0 and entry["verdict"] == "known-flake" and entry["consecutive_passes"] == 0


@pytest.mark.slow
def test_repro_that_runs_nothing_is_an_error(proj: Path) -> None:
    code, entry, message = run(proj, contract("1", repro=PYTEST + " -k no_such_test"))
    assert code == 1 and entry["verdict"] == "error" and "ran no test" in message


@pytest.mark.slow
def test_entry_without_repro_is_listed_not_run(proj: Path) -> None:
    text = 'version: 1\nfreezes:\n  - id: t\n    owner: o\n    reason: r\n    expires: "2026-12-05T00:00:00Z"\n    remaining_reruns: 1\n'
    code, entry, _ = run(proj, text)
    assert code == 0 and entry["verdict"] == "no-repro"


@pytest.mark.slow
def test_missing_contract_is_exit_2(proj: Path, capsys) -> None:
    assert main(["run"]) == 2
    assert "no contract here" in capsys.readouterr().err


@pytest.mark.slow
def test_a_patched_or_uncommitted_repro_never_runs(proj: Path, capsys) -> None:
    commit(proj, contract("1"))
    planted = proj / "planted"
    evil = contract("1", repro=f"touch {planted}")
    (proj / "tests" / "agent_contract.yaml").write_text(evil)  # uncommitted
    code = main(["run", "--now", "2026-12-02T00:00:00Z"])
    assert code == 0 and not planted.exists()
    assert "the repro commands committed at main run, not the work tree's" in capsys.readouterr().err
    subprocess.run(("git", "checkout", "-q", "-b", "agent"), check=True)
    commit(proj, evil)  # committed on a branch: still not the reviewed main
    assert main(["run", "--now", "2026-12-02T00:00:00Z"]) == 2 and not planted.exists()
    assert "pass --base origin/main" in capsys.readouterr().err
    assert main(["run", "--now", "2026-12-02T00:00:00Z", "--base", "main"]) == 0 and not planted.exists()
