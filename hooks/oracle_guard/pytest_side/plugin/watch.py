"""Run-time half of pytest_tamper: the outcome a report states is the outcome the call had.

Registered beside the gate (``oracle_guard_pytest``) when it is active.  It

- records the raw outcome of each test phase (setup, call, teardown) from
  the innermost hook wrapper, registered after collection so that no
  conftest wrapper sits inside it, and compares it with the report pytest
  makes of that phase: a failure or skip that a conftest or plugin turned
  into a pass (``report.outcome = ...``, a wrapper that swallows the
  exception, ``force_result``) fails the session, whatever the route;
- notices reports changed after they were made, tests collected but never
  run, options of the gate changed during the session, and the gate
  unregistered;
- has the last word on the exit status: from a ``config.add_cleanup``
  callback (after every ``pytest_sessionfinish``) it sets 1 where failed
  tests, unexpected skips or tampering would otherwise exit 0, and a process
  that is leaving through ``SystemExit`` before the session finished exits 1.

Legitimate differences pass: xfail (strict or not, the skip gate judges
those), skips raised in the phase, unittest errors and skips (recorded on
the item rather than raised), subtests (reports made while the call runs),
reruns (each attempt is compared with its own report; outcomes such as
``rerun`` are not judged).  Under pytest-xdist each worker compares and the
controller fails the session.
"""

from __future__ import annotations

import atexit
import os
import sys
from collections.abc import Generator
from typing import Any

import pytest
from _pytest.outcomes import XFailed

TAMPER_KEY = "oracle_guard_tampered"
_JUDGED = ("passed", "failed", "skipped")


def _kind(exc: BaseException | None) -> str:
    if exc is None:
        return "passed"
    if isinstance(exc, XFailed):
        return "xfailed"
    if isinstance(exc, pytest.skip.Exception):
        return "skipped"
    return "failed"


def _name(exc: BaseException | None) -> str:
    return type(exc).__name__ if exc is not None else "nothing"


class _Recorder:
    """The innermost wrapper of each phase: what the test and its fixtures really did."""

    def __init__(self, watch: Watch) -> None:
        self.watch = watch

    def _start(self, item: Any, when: str) -> tuple[str, str]:
        key = (item.nodeid, when)
        self.watch.active.add(key)
        return key

    def _stop(self, key: tuple[str, str], exc: BaseException | None) -> None:
        self.watch.active.discard(key)
        self.watch.raw[key] = (_kind(exc), _name(exc))

    # New-style wrappers (pluggy 1.1+): a test costs three of these calls, a third of the old-style's cost.
    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_setup(self, item: Any) -> Generator[None, Any, Any]:
        key = self._start(item, "setup")
        try:
            result = yield
        except BaseException as exc:
            self._stop(key, exc)
            raise
        self._stop(key, None)
        return result

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_call(self, item: Any) -> Generator[None, Any, Any]:
        key = self._start(item, "call")
        try:
            result = yield
        except BaseException as exc:
            self._stop(key, exc)
            raise
        self._stop(key, None)
        return result

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_teardown(self, item: Any, nextitem: Any) -> Generator[None, Any, Any]:
        key = self._start(item, "teardown")
        try:
            result = yield
        except BaseException as exc:
            self._stop(key, exc)
            raise
        self._stop(key, None)
        return result


class Watch:
    def __init__(self, config: Any, guard: Any) -> None:
        self.config, self.guard = config, guard
        self.worker = hasattr(config, "workerinput")
        self.raw: dict[tuple[str, str], tuple[str, str]] = {}
        self.active: set[tuple[str, str]] = set()
        self.made: dict[int, tuple[Any, str]] = {}  # id(report) -> (report, outcome when made)
        self.problems: list[str] = []
        self.failed = 0
        self.reported: set[str] = set()
        self.last: dict[tuple[str, str], str] = {}  # (node id, phase) -> outcome of its latest report
        self.session: Any = None
        self.recorder: _Recorder | None = None
        self.done = False
        # The gate's per-report methods, looked up once: the watch's hooks call them for every report.
        self._annotate = getattr(guard, "annotate", None)
        self._logreport = getattr(guard, "logreport", None)
        config.add_cleanup(self._last_word)
        atexit.register(self._at_exit)

    def _tampered(self, node_id: str, message: str, report: Any = None) -> None:
        text = f"{node_id}: {message}"
        if self.worker and report is not None:  # the controller judges: carry it over
            report.user_properties = [*report.user_properties, (TAMPER_KEY, text)]
        elif text not in self.problems:
            self.problems.append(text)

    # -- where the raw outcomes come from -------------------------------------------

    def pytest_sessionstart(self, session: Any) -> None:
        self.session = session

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: Any) -> None:
        # Registered now, after every conftest of the collected tree: no wrapper of theirs is inside ours.
        self.recorder = _Recorder(self)
        if self.config.pluginmanager.register(self.recorder, "oracle_guard_recorder") is None:
            self.problems.append("the session: oracle-guard's recorder is blocked (`-p no:oracle_guard_recorder`)")
        rerun_watch = getattr(self.guard, "rerun_watch", None)
        if rerun_watch is not None:
            rerun_watch.count(session.items)  # once here, not a hook call per test

    # -- each report against its phase ------------------------------------------------

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item: Any, call: Any) -> Generator[None, Any, Any]:
        key = (item.nodeid, call.when)
        nested = key in self.active  # a subtest's report, made while the call runs
        raw = None if nested else self.raw.pop(key, None)
        pending = list(getattr(item, "_excinfo", None) or []) if not nested else []
        report = yield
        if raw is None:  # not seen by the recorder (a subtest, or a phase a wrapper ended early)
            exc = call.excinfo.value if call.excinfo is not None else None
            raw = (_kind(exc), _name(exc))
        if pending and raw[0] == "passed":  # unittest records what it caught on the item
            raw = (_kind(pending[0].value), _name(pending[0].value))
        problem = self._judge(item, call.when, raw, report)
        if problem:
            self._tampered(item.nodeid, problem, report)
        if self._annotate is not None:
            self._annotate(item, call.when, report)  # the gate's marks (skipif condition, runs counted)
        self.made[id(report)] = (report, report.outcome)
        return report

    def _judge(self, item: Any, when: str, raw: tuple[str, str], report: Any) -> str | None:
        said, (kind, name) = report.outcome, raw
        if said not in _JUDGED or said == "failed" or kind == said:
            return None
        xfail = hasattr(report, "wasxfail")
        if kind == "xfailed" and said == "skipped" and xfail:
            return None  # pytest.xfail() in the phase
        if kind == "failed" and said == "skipped" and xfail and item.get_closest_marker("xfail") is not None:
            return None  # an xfail-marked test failed as expected; the skip gate judges the xfail
        if kind == "failed" and said == "passed" and self._frozen(item):
            return None  # a retry within a freeze: the gate's rerun accounting judges its budget
        if kind == "passed" and said == "passed":
            return None
        shown = {
            "passed": "passed",
            "failed": f"raised {name}",
            "skipped": "was skipped",
            "xfailed": "called pytest.xfail",
        }[kind]
        word = "xfailed" if said == "skipped" and xfail else said
        return f"the {when} {shown} but its report says {word} (a conftest or plugin changed the outcome)"

    def _frozen(self, item: Any) -> bool:
        entry_for = getattr(self.guard, "_entry_for", None)
        entry = entry_for(item.nodeid) if entry_for is not None else None
        return entry is not None and entry.active(self.guard.now)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_logreport(self, report: Any) -> Generator[None, Any, Any]:
        before = report.outcome
        if self._logreport is not None:
            self._logreport(report)  # the gate's skip and rerun judgments, on the report as it was made
        result = yield
        made = self.made.pop(id(report), None)  # judged once: the session keeps no second copy of every report
        expected = made[1] if made is not None and made[0] is report else before
        # Failing more (subtests) is fine; other words (`rerun`) are judged by the last report of the test.
        if report.outcome != expected and expected in _JUDGED and report.outcome in ("passed", "skipped"):
            self._tampered(
                report.nodeid,
                f"its {report.when} report was changed from {expected} to {report.outcome} after it was made",
                report,
            )
        if self.worker:
            return result
        for key, value in report.user_properties:
            if key == TAMPER_KEY and value not in self.problems:
                self.problems.append(str(value))
        self.reported.add(report.nodeid)
        self.last[(report.nodeid, report.when)] = report.outcome
        if report.outcome == "failed" and not hasattr(report, "wasxfail"):
            self.failed += 1
        return result

    # -- the verdict --------------------------------------------------------------------

    def _late_problems(self) -> list[str]:
        """What only the end of the session shows."""
        from oracle_guard.pytest_side.plugin.options import tampered_options

        found = []
        changed = tampered_options(self.config)
        if changed:
            found.append(f"the session: {', '.join(changed)} was changed by a conftest or plugin during the session")
        pm = self.config.pluginmanager
        for plugin, name in ((self.guard, "gate"), (self, "watch"), (self.recorder, "recorder")):
            if plugin is not None and not pm.is_registered(plugin):
                found.append(f"the session: oracle-guard's {name} was unregistered by a conftest or plugin")
        unfinished = sorted(key for key, outcome in self.last.items() if outcome not in _JUDGED)
        if unfinished:
            (node_id, when) = unfinished[0]
            found.append(
                f"{node_id}: its last {when} report says {self.last[unfinished[0]]!r}, not a result ({len(unfinished)} in all)"
            )
        session = self.session
        if session is not None and not self.worker and not (session.shouldstop or session.shouldfail):
            never = [item.nodeid for item in session.items if item.nodeid not in self.reported]
            if never and session.exitstatus == 0:
                found.append(
                    f"{never[0]}: collected but never run ({len(never)} test(s) in all): a conftest or plugin skipped running them"
                )
        return [p for p in found if p not in self.problems]

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: Any) -> None:
        if self.worker:
            return
        self.problems += self._late_problems()
        if self.problems and session.exitstatus == 0:
            session.exitstatus = 1

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.worker or not self.problems:
            return
        terminalreporter.section("oracle-guard tampering")
        for problem in self.problems:
            terminalreporter.write_line(f"ERROR: oracle-guard: {problem}")
        terminalreporter.write_line(f"oracle-guard: {len(self.problems)} outcome(s) changed or hidden: session failed")

    def _last_word(self) -> None:
        """After every sessionfinish hook: nothing may turn a failed session into exit 0."""
        if isinstance(sys.exc_info()[1], SystemExit):
            return  # leaving through SystemExit: _at_exit has the last word
        self.done = True
        atexit.unregister(self._at_exit)
        session = self.session
        if session is None or self.worker or session.exitstatus != 0:
            return
        late = self._late_problems()
        self.problems += late
        unexpected = getattr(self.guard, "unexpected", [])
        if not (self.problems or self.failed or unexpected):
            return
        reasons = [
            f"{n} {what}"
            for n, what in (
                (self.failed, "failed test(s)"),
                (len(unexpected), "unexpected skip(s)"),
                (len(self.problems), "changed outcome(s)"),
            )
            if n
        ]
        for problem in late:
            sys.stderr.write(f"ERROR: oracle-guard: {problem}\n")
        sys.stderr.write(
            f"ERROR: oracle-guard: the session was about to exit 0 with {', '.join(reasons)}: a conftest or plugin reset the exit status; exit status 1\n"
        )
        session.exitstatus = 1

    def _at_exit(self) -> None:
        if self.done or self.session is None or self.worker:
            return
        sys.stdout.flush()
        sys.stderr.write(
            "ERROR: oracle-guard: the process is leaving through SystemExit before the pytest session finished (sys.exit or SystemExit in a conftest or plugin); exit status 1\n"
        )
        sys.stderr.flush()
        os._exit(1)
