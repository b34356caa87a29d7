"""The run-time gate counts every rerun against the freeze ledger, whichever plugin retries.

Real pytest subprocesses on temporary projects; the retrying plugins are
stand-ins in the project's conftest that retry the way pytest-rerunfailures
(reports with outcome `rerun`, or repeated call reports) and pytest-retry /
flaky (the body run again inside one protocol) do.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_pytest_plugin import FLAKY, FREEZE, NOW, PASSING, proj, pytest_run, write  # noqa: F401  (proj is a fixture)

pytestmark = pytest.mark.slow

# Retries a failing test up to 3 times, logging every attempt, as pytest-rerunfailures does.
RERUNFAILURES_LIKE = """\
import pytest
from _pytest.runner import runtestprotocol


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for attempt in range(4):
        reports = runtestprotocol(item, nextitem=nextitem, log=False)
        failed = any(r.failed for r in reports)
        for report in reports:
            if failed and attempt < 3 and report.when == "call" and {mark_rerun}:
                report.outcome = "rerun"
            item.ihook.pytest_runtest_logreport(report=report)
        if not failed:
            break
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True
"""
# Runs the body again inside the call phase, reporting once, as pytest-retry and flaky can.
SILENT_RETRY = """\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    outcome = yield
    for _ in range(3):
        if outcome.excinfo is None:
            break
        try:
            item.runtest()
        except Exception:
            continue
        outcome.force_result(None)
        break
"""
CONTRACT = "version: 1\n"


@pytest.mark.parametrize("mark_rerun", ["True", "False"], ids=["outcome-rerun", "repeated-call-reports"])
def test_a_plugin_rerunning_an_unfrozen_test_fails_the_session(proj: Path, mark_rerun: str) -> None:
    write(
        proj,
        {
            "tests/conftest.py": RERUNFAILURES_LIKE.format(mark_rerun=mark_rerun),
            "tests/test_f.py": FLAKY.format(fail_times=1),
            "tests/agent_contract.yaml": CONTRACT,
        },
    )
    proc = pytest_run(proj, *NOW, "--oracle-guard-report", "report.json")
    assert (proj / "tests/attempts.txt").read_text() == "2"  # the plugin did rerun it, and it passed the second time
    assert proc.returncode == 1, proc.stdout
    assert "RERUN tests/test_f.py::test_flaky: ran 2 times, no valid freeze covers it" in proc.stdout
    assert "1 test(s) rerun outside the freeze ledger: session failed" in proc.stdout
    report = json.loads((proj / "report.json").read_text())
    assert report["unexpected_reruns"] == [
        {"nodeid": "tests/test_f.py::test_flaky", "runs": 2, "allowed_reruns": 0, "freeze": None}
    ]


def test_a_silent_retry_inside_the_call_is_counted(proj: Path) -> None:
    write(
        proj,
        {
            "tests/conftest.py": SILENT_RETRY,
            "tests/test_f.py": FLAKY.format(fail_times=1),
            "tests/agent_contract.yaml": CONTRACT,
        },
    )
    proc = pytest_run(proj, *NOW)
    assert (proj / "tests/attempts.txt").read_text() == "2"
    assert proc.returncode == 1 and "RERUN tests/test_f.py::test_flaky: ran 2 times" in proc.stdout, proc.stdout


@pytest.mark.parametrize(("fail_times", "expected"), [(1, 0), (2, 1)])
def test_a_frozen_test_may_be_retried_by_any_plugin_within_its_budget(
    proj: Path, fail_times: int, expected: int
) -> None:
    contract = FREEZE.format(id="test_flaky", expires="2026-12-05T00:00:00Z", reruns=1)
    write(
        proj,
        {
            "tests/conftest.py": SILENT_RETRY,
            "tests/test_f.py": FLAKY.format(fail_times=fail_times),
            "tests/agent_contract.yaml": contract,
        },
    )
    proc = pytest_run(proj, *NOW)
    assert proc.returncode == expected, proc.stdout
    if expected:
        assert "freeze test_flaky allows 1" in proc.stdout


def test_tests_that_pass_first_time_are_untouched_by_a_rerun_plugin(proj: Path) -> None:
    write(
        proj,
        {
            "tests/conftest.py": RERUNFAILURES_LIKE.format(mark_rerun="True"),
            "tests/test_ok.py": PASSING,
            "tests/agent_contract.yaml": CONTRACT,
        },
    )
    proc = pytest_run(proj, *NOW)
    assert proc.returncode == 0 and "oracle-guard reruns" not in proc.stdout, proc.stdout


def test_the_gates_own_freeze_reruns_stay_within_the_budget(proj: Path) -> None:
    contract = FREEZE.format(id="test_flaky", expires="2026-12-05T00:00:00Z", reruns=2)
    write(proj, {"tests/test_f.py": FLAKY.format(fail_times=2), "tests/agent_contract.yaml": contract})
    proc = pytest_run(proj, *NOW, "--oracle-guard-report", "report.json")
    assert proc.returncode == 0, proc.stdout
    assert json.loads((proj / "report.json").read_text())["unexpected_reruns"] == []


def test_subtests_are_not_reruns(proj: Path) -> None:
    subtests = """\
import unittest


def test_sub(subtests):
    for i in range(3):
        with subtests.test(i=i):
            assert i >= 0


class TestU(unittest.TestCase):
    def test_u(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertGreaterEqual(i, 0)
"""
    write(proj, {"tests/test_s.py": subtests, "tests/agent_contract.yaml": CONTRACT})
    proc = pytest_run(proj, *NOW)
    assert proc.returncode == 0 and "oracle-guard reruns" not in proc.stdout, proc.stdout


def test_the_rerun_count_has_no_plugin_name_to_block(proj: Path) -> None:
    # The count lives in the watch (no `oracle_guard_reruns` plugin any more): naming it blocks nothing.
    write(
        proj,
        {
            "tests/conftest.py": SILENT_RETRY,
            "tests/test_f.py": FLAKY.format(fail_times=1),
            "tests/agent_contract.yaml": CONTRACT,
        },
    )
    proc = pytest_run(proj, *NOW, "-p", "no:oracle_guard_reruns")
    assert (proj / "tests/attempts.txt").read_text() == "2"  # retried, and green the second time
    assert proc.returncode == 1 and "RERUN tests/test_f.py::test_flaky: ran 2 times" in proc.stdout, proc.stdout


@pytest.mark.parametrize(("blocked", "code"), [(True, 4), (False, 0)], ids=["blocked", "honest"])
def test_the_freeze_reruns_cannot_be_blocked_quietly(proj: Path, blocked: bool, code: int) -> None:
    # Registered only when the contract has a freeze; blocked, the frozen test would fail without its reruns.
    contract = FREEZE.format(id="test_flaky", expires="2026-12-05T00:00:00Z", reruns=1)
    write(proj, {"tests/test_f.py": FLAKY.format(fail_times=1), "tests/agent_contract.yaml": contract})
    proc = pytest_run(proj, *NOW, *(["-p", "no:oracle_guard_freezes"] if blocked else []))
    assert proc.returncode == code, proc.stdout + proc.stderr
    if blocked:
        assert "its plugin 'oracle_guard_freezes' is blocked" in proc.stderr
    else:
        assert (proj / "tests/attempts.txt").read_text() == "2"  # one rerun, within the freeze's budget
