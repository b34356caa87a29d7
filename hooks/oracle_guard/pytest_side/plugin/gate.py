"""The run-time gate of the pytest plugin, registered by ``oracle_guard_pytest``.

The entry point (top-level ``oracle_guard_pytest``) registers the options and
stays inert unless the contract exists or ``--oracle-guard`` is given; only
then is this module imported.  Active, in the CI test run, the gate:

(a) fails the session when a test ends skipped or xfailed, unless the
    collection snapshot committed at HEAD (the file itself outside git) lists it as skip/xfail, a valid
    freeze entry covers it, or ``--oracle-guard-allow-skips`` (local use) is
    given;
(b) reruns a frozen test up to its ``remaining_reruns`` and then lets it
    fail; an expired freeze gives no reruns and the session says so;
(c) writes a JSON report of reruns consumed per freeze id
    (``--oracle-guard-report PATH``).  It never edits the contract: CI
    publishes the report and a human lowers the budget;
(d) fails the session when any plugin reran a test that no valid freeze
    covers, or more often than its ``remaining_reruns`` (oracle_guard/pytest_side/plugin/reruns.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

import pytest  # already imported: pytest is what loads this module

RERUNS_KEY = "oracle_guard_reruns"
CONDITION_KEY = "oracle_guard_skip_if_env"
ENV = "skip-if-env"  # oracle_guard.pytest_side.collection.collector.ENV


def _by_condition(item: Any, report: Any) -> bool:
    """Whether a skipif (or xfail) mark's own condition, true here, skipped (or xfailed) ITEM.

    Not a plain skip mark, not pytest.skip() in the test or a fixture: only
    the condition the snapshot saw false where it was recorded.
    """
    try:
        from _pytest.skipping import evaluate_condition
    except ImportError:  # pragma: no cover - pytest < 6.2
        return False
    xfailed = hasattr(report, "wasxfail")
    # Skip marks are evaluated first thing at setup: a skip at setup while a skipif
    # condition holds is that mark's; one in the test's call is pytest.skip().
    if not xfailed and (report.when != "setup" or any(True for _ in item.iter_markers(name="skip"))):
        return False
    for mark in item.iter_markers(name="xfail" if xfailed else "skipif"):
        conditions = mark.args if "condition" not in mark.kwargs else (mark.kwargs["condition"],)
        if not conditions:
            return False  # an unconditional mark: not what the snapshot recorded
        if any(evaluate_condition(item, mark, condition)[0] for condition in conditions):
            return True
    return False


class Guard:
    """The active gate; one per session (and one per xdist worker, for reruns)."""

    def __init__(self, config: Any, contract_path: str, shown_path: str) -> None:
        from oracle_guard.reporting.findings import UsageError

        self.root = str(config.rootpath)
        try:
            self.now = _now(config.getoption("oracle_guard_now"))
            self.contract = _contract(contract_path, shown_path)
            self._snapshot = self._committed_snapshot()
            self._known: Mapping[str, str] | None = None
        except UsageError as exc:
            raise pytest.UsageError(f"oracle-guard: {exc}") from None
        except OSError as exc:  # a snapshot that is a directory, an unreadable file: one line, not INTERNALERROR
            raise pytest.UsageError(
                f"oracle-guard: {exc.filename or shown_path}: cannot read it ({exc.strerror})"
            ) from None
        self.worker = hasattr(config, "workerinput")  # xdist worker: reruns only, the controller judges
        self.allow_skips = config.getoption("oracle_guard_allow_skips")
        self.report_path = config.getoption("oracle_guard_report")
        self.unexpected: list[dict[str, str]] = []
        self.reruns: dict[str, int] = {}
        self.expired_hits: dict[str, list[str]] = {}
        self.frozen_tests: dict[str, list[str]] = {}
        # (d) a rerun by any plugin counts against the ledger (oracle_guard/pytest_side/plugin/reruns.py);
        # the watch calls it and the gate's own per-test methods: no hook call per test of their own.
        from oracle_guard.pytest_side.plugin.reruns import RerunWatch

        self.rerun_watch = RerunWatch(self)
        # A test runs through the gate's own protocol only where a freeze can give it reruns.
        self.freeze_reruns = FreezeReruns(self) if self.contract.freezes else None

    # -- what the base already knew ------------------------------------------

    def _committed_snapshot(self) -> bytes | None:
        """The snapshot committed at HEAD, read and checked now (a bad one stops the run before any test)."""
        from oracle_guard.contract.snapshot import check_snapshot

        data = _committed(self.root, self.contract.snapshot_path)
        check_snapshot(data, self.contract.snapshot_path)
        return data

    @property
    def known(self) -> Mapping[str, str]:
        """What the base knew, asked only when a test skips or xfails: most sessions never build the lookup."""
        if self._known is None:
            from oracle_guard.contract.snapshot import parse_snapshot
            from oracle_guard.contract.unstable_ids import lookup

            parsed = parse_snapshot(self._snapshot, self.contract.snapshot_path)
            # A test whose ids change between runs is recorded by its function: its cases answer by that.
            self._known = lookup({node_id: status for node_id, (status, _) in parsed.items()})
        return self._known

    def _entry_for(self, node_id: str) -> Any:
        """The covering freeze entry: an active one first, else an expired one."""
        active = self.contract.freeze_for(node_id, self.now)
        if active is not None:
            return active
        return next((f for f in self.contract.freezes if f.covers(node_id)), None)

    # -- (a) skips and xfails, however they happened ----------------------------

    # Called by the watch's hooks (pytest_watch.py), once per report: no hook call of their own per test.

    def annotate(self, item: Any, when: str, report: Any) -> None:
        """Mark a skip or xfail that a skipif/xfail condition the snapshot knows caused (from makereport)."""
        if (
            (report.skipped or hasattr(report, "wasxfail"))
            and self.known.get(item.nodeid) == ENV
            and _by_condition(item, report)
        ):
            report.user_properties = [*report.user_properties, (CONDITION_KEY, True)]  # survives xdist's transport
        self.rerun_watch.annotate(item, when, report)

    def logreport(self, report: Any) -> None:
        """Judge a report as it was made (from logreport, before any other plugin's implementation)."""
        if self.worker:
            return
        self.rerun_watch.logreport(report)
        if report.when == "teardown":
            for key, value in report.user_properties:
                if key == RERUNS_KEY:
                    freeze_id, used, budget = value
                    self.reruns[freeze_id] = self.reruns.get(freeze_id, 0) + used
                    self.frozen_tests.setdefault(freeze_id, []).append(report.nodeid)
        xfail = hasattr(report, "wasxfail")
        if not (report.skipped or xfail):
            return  # the common case: nothing to judge, and the snapshot is not asked
        if self.known.get(report.nodeid) == ENV and any(key == CONDITION_KEY for key, _ in report.user_properties):
            return  # the snapshot's skip-if-env: its own skipif/xfail condition holds in this environment
        if xfail and report.when in ("setup", "call"):
            self._judge(report.nodeid, "xfailed" if report.skipped else "xpassed", "xfail", str(report.wasxfail))
        elif report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            self._judge(report.nodeid, "skipped", "skip", reason)

    def pytest_collectreport(self, report: Any) -> None:
        # A module skipped while collecting (pytest.skip(allow_module_level=True),
        # importorskip): new only if the snapshot has tests from it.
        if self.worker or not report.skipped or not report.nodeid:
            return
        prefix = report.nodeid + "::"
        if any(node_id.startswith(prefix) and status in ("run", ENV) for node_id, status in self.known.items()):
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            self._judge(report.nodeid, "skipped", "skip", reason, module=True)

    def _judge(self, node_id: str, outcome: str, status: str, reason: str, module: bool = False) -> None:
        if not module and self.known.get(node_id) in (status, "skip"):
            return  # known at the base (platform skip, optional dependency)
        entry = self._entry_for(node_id)
        if entry is not None and entry.active(self.now):
            return
        if entry is not None:
            self.expired_hits.setdefault(entry.id, []).append(node_id)
        if self.allow_skips:
            return
        self.unexpected.append({"nodeid": node_id, "outcome": outcome, "reason": " ".join(reason.split())})

    # -- summary, exit status and (c) the machine report --------------------------

    def pytest_sessionfinish(self, session: Any, exitstatus: int) -> None:
        if self.worker:
            return
        if self.unexpected and session.exitstatus == 0:
            session.exitstatus = 1
        self.rerun_watch.sessionfinish(session)
        if self.report_path:
            import json

            with open(self.report_path, "w", encoding="utf-8") as f:
                json.dump(self.report(), f, indent=2, sort_keys=True)
                f.write("\n")

    def report(self) -> dict[str, Any]:
        freezes = []
        for entry in self.contract.freezes:
            expired = not entry.active(self.now)
            freezes.append(
                {
                    "id": entry.id,
                    "remaining_reruns": entry.remaining_reruns,
                    "reruns_consumed": self.reruns.get(entry.id, 0),
                    "expired": expired,
                    "tests": sorted(set(self.frozen_tests.get(entry.id, []) + self.expired_hits.get(entry.id, []))),
                }
            )
        return {
            "version": 1,
            "contract": self.contract.path,
            "now": self.now.isoformat(),
            "freezes": freezes,
            "unexpected_skips": self.unexpected,
            "unexpected_reruns": self.rerun_watch.report(),
        }

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.worker:
            return
        lines = []
        for item in self.unexpected:
            lines.append(
                f"{item['outcome'].upper()} {item['nodeid']}: not skipped/xfailed in the snapshot and no valid freeze ({item['reason']})"
            )
        for entry in self.contract.freezes:
            used = self.reruns.get(entry.id, 0)
            if used:
                lines.append(f"freeze {entry.id}: {used} of {entry.remaining_reruns} reruns used")
            if not entry.active(self.now) and (entry.id in self.frozen_tests or entry.id in self.expired_hits):
                lines.append(f"freeze {entry.id}: expired ({entry.expires}) or out of reruns: no reruns given")
        if lines:
            terminalreporter.section("oracle-guard")
            for line in lines:
                terminalreporter.write_line(line)
            if self.unexpected:
                terminalreporter.write_line(
                    f"oracle-guard: {len(self.unexpected)} test(s) skipped or xfailed without a freeze entry: session failed"
                )
        self.rerun_watch.terminal_summary(terminalreporter)


class FreezeReruns:
    """(b) reruns within the freeze budget: registered only when the contract has a freeze."""

    def __init__(self, guard: Guard) -> None:
        self.guard = guard

    @pytest.hookimpl(tryfirst=True)  # before the default runner and other rerun plugins
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> bool | None:
        entry = self.guard._entry_for(item.nodeid)
        if entry is None:
            return None
        from _pytest.runner import runtestprotocol

        budget = entry.remaining_reruns if entry.active(self.guard.now) else 0
        item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        used = 0
        while True:
            reports = runtestprotocol(item, nextitem=nextitem, log=False)
            if not any(r.failed for r in reports) or used >= budget:
                break
            used += 1
            if hasattr(item, "_initrequest"):
                item._initrequest()  # fresh function-scoped fixtures for the next attempt
        for report in reports:
            report.user_properties = [*report.user_properties, (RERUNS_KEY, [entry.id, used, budget])]
            item.ihook.pytest_runtest_logreport(report=report)
        item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True


def _now(text: str | None) -> datetime:
    if not text:
        return datetime.now(timezone.utc)
    from oracle_guard.contract import contract

    return contract.parse_now(text)


def _contract(path: str, shown_path: str) -> Any:
    """The contract at PATH: a bare one (no entries) without YAML, anything else through the strict loader."""
    from oracle_guard.contract import bare

    if not os.path.isfile(path):
        return bare.Bare(shown_path)  # --oracle-guard without a contract: nothing frozen, the default snapshot
    with open(path, "rb") as f:
        data = f.read()
    found = bare.recognize(data, shown_path)
    if found is not None:
        return found
    from oracle_guard.contract import contract

    return contract.loads(data, shown_path)  # messages name the path as the user wrote it


def _committed(root: str, rel: str) -> bytes | None:
    """The snapshot as committed at HEAD: an uncommitted edit cannot excuse a skip.

    Outside a git repository (an unpacked sdist) the file itself is used.
    """
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        shown = subprocess.run(["git", "-C", root, "show", f"HEAD:./{rel}"], capture_output=True, env=env)
        if shown.returncode == 0:
            return shown.stdout
        has_head = subprocess.run(
            ["git", "-C", root, "rev-parse", "--verify", "-q", "HEAD"], capture_output=True, env=env
        )
        if has_head.returncode == 0:
            return None  # committed history without the snapshot: nothing is known
    except OSError:  # no git here
        pass
    try:
        with open(os.path.join(root, rel), "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None
