"""Run-time half of the rerun rule: every retry of a test is counted against the freeze ledger.

Registered by the gate (oracle_guard/pytest_side/pytest_plugin.py) beside it.  Whichever plugin
does the retrying (pytest-rerunfailures, pytest-retry, flaky, a conftest, the
gate's own freeze reruns), the test body runs through ``item.runtest``, and
the reports of the failed attempts reach ``pytest_runtest_logreport`` with an
outcome of their own (``rerun``, ``retried``) or as a repeated call report.
A test that ran more often than ``1 + remaining_reruns`` of a valid freeze
that covers it (none: once) fails the session.
"""

from __future__ import annotations

from typing import Any

import pytest

CALLS_KEY = "oracle_guard_calls"
PLAIN_OUTCOMES = ("passed", "failed", "skipped")


class RerunWatch:
    def __init__(self, guard: Any) -> None:
        self.guard = guard
        self.calls: dict[str, int] = {}  # node id -> test-body runs seen
        self.call_reports: dict[str, int] = {}
        self.rerun_reports: dict[str, int] = {}
        self.unexpected: dict[str, dict[str, Any]] = {}

    # -- counting, where the test runs (an xdist worker included) ----------------

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Any:
        if not getattr(item, "_oracle_guard_counted", False) and hasattr(item, "runtest"):
            original = item.runtest
            item._oracle_guard_runs = 0

            def counted() -> Any:
                item._oracle_guard_runs += 1
                return original()

            item.runtest = counted  # every retrying plugin ends up here
            item._oracle_guard_counted = True
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: Any, call: Any) -> Any:
        outcome = yield
        if call.when == "teardown":
            report = outcome.get_result()
            report.user_properties = [*report.user_properties, (CALLS_KEY, getattr(item, "_oracle_guard_runs", 0))]

    # -- judging, where reports arrive (the controller under xdist) ---------------

    def pytest_runtest_logreport(self, report: Any) -> None:
        if self.guard.worker:
            return
        node = report.nodeid
        if type(report).__name__.lower().startswith("subtest"):
            return  # pytest's subtests (and pytest-subtests) report each subtest under the test's id
        if report.when == "call":
            if report.outcome in PLAIN_OUTCOMES:
                self.call_reports[node] = self.call_reports.get(node, 0) + 1
            else:  # rerunfailures' "rerun", pytest-retry's "retried" (configurable)
                self.rerun_reports[node] = self.rerun_reports.get(node, 0) + 1
        for key, value in report.user_properties:
            if key == CALLS_KEY:
                self.calls[node] = max(self.calls.get(node, 0), int(value))
        self._judge(node)

    def runs(self, node: str) -> int:
        reported = self.call_reports.get(node, 0) + self.rerun_reports.get(node, 0)
        return max(self.calls.get(node, 0), reported)

    def _judge(self, node: str) -> None:
        runs = self.runs(node)
        if runs <= 1:
            return
        entry = self.guard.contract.freeze_for(node, self.guard.now)
        allowed = entry.remaining_reruns if entry is not None else 0
        if runs - 1 > allowed:
            self.unexpected[node] = {
                "nodeid": node,
                "runs": runs,
                "allowed_reruns": allowed,
                "freeze": entry.id if entry is not None else None,
            }

    def report(self) -> list[dict[str, Any]]:
        return [self.unexpected[n] for n in sorted(self.unexpected)]

    def pytest_sessionfinish(self, session: Any, exitstatus: int) -> None:
        if not self.guard.worker and self.unexpected and session.exitstatus == 0:
            session.exitstatus = 1

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.guard.worker or not self.unexpected:
            return
        terminalreporter.section("oracle-guard reruns")
        for item in self.report():
            why = (
                f"freeze {item['freeze']} allows {item['allowed_reruns']}"
                if item["freeze"]
                else "no valid freeze covers it"
            )
            terminalreporter.write_line(f"RERUN {item['nodeid']}: ran {item['runs']} times, {why}")
        terminalreporter.write_line(
            f"oracle-guard: {len(self.unexpected)} test(s) rerun outside the freeze ledger: session failed; "
            "remove the rerun setting, or add a freeze entry (owner, expiry, remaining_reruns) for the test"
        )
