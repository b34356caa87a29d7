"""Output (issue 30, item 4): a clean run says so in one line (quiet with -q), and an error is printed once.

ruff says "All checks passed!"; `check` and the `oracle-guard` hook said nothing on success, so a run that
checked everything looked like one that checked nothing.  Machine formats stay one document on stdout.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from oracle_guard.commands import check, one_hook
from tests.helpers import Repo

TEST = "from shop import price\n\n\ndef test_price():\n    assert price(2) == 4\n"
ZERO = "\n\ndef test_zero():\n    assert price(0) == 0\n"
SNAPSHOT = (
    "# oracle-guard collection snapshot: <status> <pytest node id>, sorted by id. Written by collection-snapshot; stage it.\n"
    "run   tests/test_shop.py::test_price\n"
)


def honest_branch(repo: Repo) -> str:
    repo.write("shop.py", "def price(quantity):\n    return 2 * quantity\n")
    repo.write("tests/test_shop.py", TEST)
    base = repo.commit("base")
    repo.write("tests/test_shop.py", TEST + ZERO)
    repo.commit("a new test")
    return base


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_a_clean_check_says_so_in_one_line_and_q_silences_it(repo: Repo, fmt: str) -> None:
    base = honest_branch(repo)
    code, out, err, _ = repo.hook(check.main, "--base", base, "--skip", "collection-snapshot", "--format", fmt)
    assert code == 0 and not err and out.count("\n") == 1, out
    assert out == (
        f"oracle-guard: all checks passed (9 hooks against {base}; not run: oracle-replay (opt-in: --replay),"
        " collection-snapshot's pytest run (--skip))\n"
    )
    for quiet in ("-q", "--quiet"):
        assert repo.hook(check.main, "--base", base, "--skip", "collection-snapshot", "--format", fmt, quiet) == (
            0,
            "",
            "",
            [],
        )


def test_a_check_with_findings_prints_no_success_line(repo: Repo) -> None:
    base = honest_branch(repo)
    repo.write(
        "tests/test_shop.py", TEST.replace("def test_price", "import pytest\n\n\n@pytest.mark.skip\ndef test_price")
    )
    repo.commit("skip it")
    code, out, _, _ = repo.hook(check.main, "--base", base, "--skip", "collection-snapshot")
    assert code == 1 and "all checks passed" not in out and "OG101" in out


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_machine_formats_stay_one_document_on_a_clean_run(repo: Repo, fmt: str) -> None:
    base = honest_branch(repo)
    code, out, _, _ = repo.hook(check.main, "--base", base, "--skip", "collection-snapshot", "--format", fmt)
    assert code == 0 and "all checks passed" not in out
    json.loads(out)  # one document, nothing after it ("Extra data" would fail here)


def test_the_agent_format_keeps_its_own_verdict(repo: Repo) -> None:
    base = honest_branch(repo)
    code, out, _, _ = repo.hook(check.main, "--base", base, "--skip", "collection-snapshot", "--format", "agent")
    assert (code, out) == (0, "oracle-guard: no weakening found\n")


def test_the_hook_says_so_too_and_q_silences_it(repo: Repo) -> None:
    honest_branch(repo)
    repo.write("tests/test_shop.py", TEST + ZERO + "\n\ndef test_one():\n    assert price(1) == 2\n")
    repo.stage()
    code, out, err, _ = repo.hook(one_hook.main, "--skip", "collection-snapshot")
    assert code == 0 and not err and out.startswith("oracle-guard: all checks passed (") and out.count("\n") == 1
    assert repo.hook(one_hook.main, "--skip", "collection-snapshot", "-q") == (0, "", "", [])


@pytest.fixture
def without_pytest(tmp_path: Path) -> str:
    """An interpreter whose environment has no pytest: a virtualenv made without pip."""
    venv = tmp_path / "no-pytest"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return str(venv / "bin" / "python")


def adopted_with_a_code_change(repo: Repo) -> str:
    repo.write("shop.py", "def price(quantity):\n    return 2 * quantity\n")
    repo.write("tests/test_shop.py", TEST)
    repo.write("tests/collection_snapshot.txt", SNAPSHOT)
    repo.write("tests/agent_contract.yaml", "version: 1\n")
    base = repo.commit("adopted")
    repo.write("shop.py", "def price(quantity):\n    return quantity + quantity\n")
    repo.commit("the same price, spelled otherwise")
    return base


def test_check_replay_prints_a_missing_pytest_once(repo: Repo, without_pytest: str) -> None:
    base = adopted_with_a_code_change(repo)
    code, out, err, _ = repo.hook(check.main, "--base", base, "--replay", "--python", without_pytest)
    assert code == 2 and "all checks passed" not in out
    assert err.count("pytest is not installed") == 1 and err.count("\n") == 1, err


def test_check_replay_in_json_lists_a_missing_pytest_once(repo: Repo, without_pytest: str) -> None:
    base = adopted_with_a_code_change(repo)
    code, out, err, _ = repo.hook(
        check.main, "--base", base, "--replay", "--python", without_pytest, "--format", "json"
    )
    doc = json.loads(out)
    assert code == 2 and doc["summary"]["exit_code"] == 2
    assert len(doc["errors"]) == 1 and "pytest is not installed" in doc["errors"][0]
    assert err.count("pytest is not installed") == 1
