"""Run-time half of the rerun rule: every retry of a test is counted against the freeze ledger.

Called by the gate (oracle_guard/pytest_side/plugin/gate.py) and the watch.  Whichever plugin
does the retrying (pytest-rerunfailures, pytest-retry, flaky, a conftest, the
gate's own freeze reruns), the test body runs through ``item.runtest``, and
the reports of the failed attempts reach ``pytest_runtest_logreport`` with an
outcome of their own (``rerun``, ``retried``) or as a repeated call report.
A test that ran more often than ``1 + remaining_reruns`` of a valid freeze
that covers it (none: once) fails the session.
"""

from __future__ import annotations

from typing import Any, Callable

CALLS_KEY = "oracle_guard_calls"
PLAIN_OUTCOMES = ("passed", "failed", "skipped")


class RerunWatch:
    """Not a plugin of its own: the watch (pytest_watch.py) calls it from its hooks, so a test costs no hook
    call of its own here, and no `-p no:NAME` can switch the count off while the gate runs."""

    def __init__(self, guard: Any) -> None:
        self.guard = guard
        self.calls: dict[str, int] = {}  # node id -> test-body runs seen
        self.call_reports: dict[str, int] = {}
        self.rerun_reports: dict[str, int] = {}
        self.unexpected: dict[str, dict[str, Any]] = {}
        self._subtest_types: dict[type, bool] = {}  # report class -> a subtest's report

    # -- counting, where the test runs (an xdist worker included) ----------------

    @staticmethod
    def count(items: Any) -> None:
        """Count every run of each item's body: every retrying plugin ends up in `item.runtest`.

        Done once for the collected items (the watch's `pytest_collection_finish`), not in a hook per test.
        """
        for item in items:
            if getattr(item, "_oracle_guard_counted", False) or not hasattr(item, "runtest"):
                continue
            item._oracle_guard_runs = 0
            item.runtest = _counted(item, item.runtest)
            item._oracle_guard_counted = True

    @staticmethod
    def annotate(item: Any, when: str, report: Any) -> None:
        """The teardown report carries the runs counted (it crosses xdist's transport)."""
        if when == "teardown":
            report.user_properties = [*report.user_properties, (CALLS_KEY, getattr(item, "_oracle_guard_runs", 0))]

    # -- judging, where reports arrive (the controller under xdist) ---------------

    def logreport(self, report: Any) -> None:
        if self.guard.worker:
            return
        kind = type(report)
        subtest = self._subtest_types.get(kind)
        if subtest is None:
            subtest = self._subtest_types[kind] = kind.__name__.lower().startswith("subtest")
        if subtest:
            return  # pytest's subtests (and pytest-subtests) report each subtest under the test's id
        node = report.nodeid
        if report.when == "call":
            if report.outcome in PLAIN_OUTCOMES:
                self.call_reports[node] = self.call_reports.get(node, 0) + 1
            else:  # rerunfailures' "rerun", pytest-retry's "retried" (configurable)
                self.rerun_reports[node] = self.rerun_reports.get(node, 0) + 1
        for key, value in report.user_properties:
            if key == CALLS_KEY:
                self.calls[node] = max(self.calls.get(node, 0), int(value))
        if self.runs(node) > 1:  # the common case, one run, needs no freeze lookup
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

    def sessionfinish(self, session: Any) -> None:
        if not self.guard.worker and self.unexpected and session.exitstatus == 0:
            session.exitstatus = 1

    def terminal_summary(self, terminalreporter: Any) -> None:
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


def _counted(item: Any, original: Callable[[], Any]) -> Callable[[], Any]:
    def counted() -> Any:
        item._oracle_guard_runs += 1
        return original()

    return counted
