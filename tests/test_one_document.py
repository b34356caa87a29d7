"""One run, one document: `check --replay` in every format, and exit codes equal to the process's status."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest

from oracle_guard.commands import check, init_contract, one_hook
from oracle_guard.hook_ids import replay
from oracle_guard.hook_ids.collection_snapshot import main as snapshot_main
from oracle_guard.reporting import output
from oracle_guard.reporting.report import Finding, UsageError
from tests.helpers import Repo

SCHEMA = json.loads((Path(__file__).resolve().parent / "data" / "sarif-schema-2.1.0.json").read_text())
CALC = "def double(x):\n    return 2 * x\n"
TESTS = """\
import pytest

from calc import double


def test_double():
    assert double(2) == 4


def test_zero():
    assert double(0) == 0
"""


@pytest.fixture
def project(repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A project adopted with its snapshot; then a change the hooks (a skip) and the replay (a broken double) refuse."""
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    repo.write("calc.py", CALC)
    repo.write("pytest.ini", "[pytest]\npythonpath = .\n")
    repo.write("tests/test_calc.py", TESTS)
    repo.commit("project")
    assert repo.hook(init_contract.main).code == 0
    base = repo.commit("adopt")
    repo.write("calc.py", "def double(x):\n    return x * x + 1\n")  # the base's tests fail on it
    repo.write("tests/test_calc.py", TESTS.replace("def test_zero", "@pytest.mark.skip\ndef test_zero"))
    repo.commit("agent")
    return base


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_check_replay_prints_one_document_whose_exit_code_is_the_status(repo: Repo, project: str, fmt: str) -> None:
    result = repo.hook(check.main, "--base", project, "--replay", "--format", fmt)
    doc = json.loads(result.out)  # one document: "Extra data" would fail here
    assert result.code == 1
    if fmt == "json":
        assert doc["summary"]["exit_code"] == 1
        hooks = {(f["code"], f["hook"]) for f in doc["findings"]}
    else:
        jsonschema.Draft4Validator(SCHEMA).validate(doc)
        assert len(doc["runs"]) == 1 and doc["runs"][0]["invocations"][0]["exitCode"] == 1
        hooks = {(r["ruleId"], r["properties"]["hook"]) for r in doc["runs"][0]["results"]}
    assert ("OG101", "forbid-skip-marks") in hooks and ("OG901", "oracle-replay") in hooks
    assert all(hook for _, hook in hooks)


@pytest.mark.slow
def test_check_replay_in_the_agent_format_is_one_verdict(repo: Repo, project: str) -> None:
    result = repo.hook(check.main, "--base", project, "--replay", "--format", "agent")
    assert result.code == 1 and "no weakening found" not in result.out
    assert result.out.count("this change weakens the tests") == 1
    assert "OG101" in result.out and "OG901" in result.out
    assert "`oracle-guard approve behavior-change tests/test_calc.py::test_double`" in result.out
    text = repo.hook(check.main, "--base", project, "--replay")  # lines: the hooks', then the replay's
    assert text.code == 1 and "OG101" in text.codes and "OG901" in text.codes


def test_a_replay_error_is_inside_the_one_document(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(args: object) -> list[Finding]:
        raise UsageError("the replay took over 1 s (--timeout) and was stopped; nothing was judged")

    monkeypatch.setattr(replay, "findings_of", broken)
    repo.write("tests/test_calc.py", TESTS)
    base = repo.commit("base")
    repo.write("tests/test_calc.py", TESTS.replace("def test_zero", "@pytest.mark.skip\ndef test_zero"))
    repo.commit("agent")
    result = repo.hook(check.main, "--base", base, "--replay", "--format", "json", "--skip", "collection-snapshot")
    doc = json.loads(result.out)
    # The hooks' finding makes the exit 1 although the replay could not run; its error is in the document.
    assert result.code == 1 and doc["summary"]["exit_code"] == 1 and "nothing was judged" in doc["errors"][0]
    assert [f["code"] for f in doc["findings"]] == ["OG101"]  # the hooks' findings are not lost
    assert result.err.count("\n") == 1


def test_a_replay_error_alone_is_exit_2_in_the_one_document(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(args: object) -> list[Finding]:
        raise UsageError("the replay took over 1 s (--timeout) and was stopped; nothing was judged")

    monkeypatch.setattr(replay, "findings_of", broken)
    repo.write("tests/test_calc.py", TESTS)
    base = repo.commit("base")
    repo.write("tests/test_calc.py", "# the same tests\n" + TESTS)
    repo.commit("agent")
    result = repo.hook(check.main, "--base", base, "--replay", "--format", "json", "--skip", "collection-snapshot")
    doc = json.loads(result.out)
    assert result.code == 2 and doc["summary"]["exit_code"] == 2 and "nothing was judged" in doc["errors"][0]
    assert doc["findings"] == []


@pytest.mark.slow
@pytest.mark.parametrize("main", [snapshot_main, one_hook.main], ids=["collection-snapshot", "oracle-guard"])
def test_a_rewritten_snapshot_alone_exits_1_in_the_document_too(repo: Repo, project: str, main) -> None:  # type: ignore[no-untyped-def]
    repo.write("tests/test_calc.py", TESTS + "\n\ndef test_three():\n    assert double(3) == 6\n")
    repo.write("calc.py", CALC)
    repo.stage()
    result = repo.hook(main, "--format", "json")  # a commit: the new id is recorded and staged with it
    doc = json.loads(result.out)
    assert result.code == 0 and doc["findings"] == [] and doc["summary"]["exit_code"] == 0
    assert any("staged it with this commit" in n for n in doc["notices"]), doc["notices"]
    repo.write("tests/test_calc.py", TESTS + "\n\ndef test_four():\n    assert double(4) == 8\n")
    repo.stage()
    # Against an explicit base the work tree is judged, not a commit: the snapshot is rewritten, not staged.
    agent = repo.hook(main, "--base", "HEAD", "--format", "agent")
    assert agent.code == 1 and "no weakening found, but it updated tests/collection_snapshot.txt" in agent.out
    repo.stage()
    assert repo.hook(main, "--format", "json").code == 0


def test_a_document_states_the_status_it_is_given() -> None:
    finding = Finding("tests/a.py", 1, 1, "OG101", "x")
    assert output.json_document([], [], [], status=1)["summary"]["exit_code"] == 1
    assert output.json_document([("h", finding)], [], [])["summary"]["exit_code"] == 1
    sarif = output.sarif_document([], ["broken"], [], status=2)
    assert sarif["runs"][0]["invocations"][0]["exitCode"] == 2
    jsonschema.Draft4Validator(SCHEMA).validate(sarif)
