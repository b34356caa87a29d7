"""Outcome recorder loaded into the *project's* interpreter by oracle-replay.

Like oracle_guard/pytest_side/_collector.py it needs only pytest (and Hypothesis if the project
has it), is loaded by file path, and runs ``pytest.main(args, plugins=[this])``.
It also fixes Hypothesis's seed: both sides of a replay must see the same
examples, so every Hypothesis test runs derandomized (no example database)
and without a deadline (deadlines measure the machine, not the code), on top
of whatever settings and profile the project gave it.

It streams the run's ledger (format in ledger.py, which reads it from
outside): the collected ids once collection ends, each test's outcome as it
ends, collection errors as they happen, and last a completion marker with
pytest's exit status.  With a canary module (by path, outside the user's
tree) its tests are collected after every other plugin chose the items and
run last, rewritten like any test module.

outcome: passed, failed, error, skipped, xfailed, xpassed.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for annotations only: the hook imports this module where pytest may be missing
    import pytest

if __name__ == "_oracle_guard_replay":  # loaded by RUNNER into the project's pytest
    from pytest import hookimpl as pytest_hookimpl
else:  # imported by the hook for RUNNER's text: no pytest import there

    def pytest_hookimpl(**_: Any) -> Any:  # type: ignore[misc]
        return lambda function: function


OUTPUT: str | None = None
CANARIES: str | None = None  # the canary module's path
NO_PYTEST_EXIT = 97

_items: dict[str, list[Any]] = {}  # node id -> [outcome, path, line, message]
_stream: list[Any] = []  # the open ledger (a list: no `global` needed)


def _write(line: str) -> None:
    if _stream:
        _stream[0].write(line.replace("\r", " ").replace("\n", " ") + "\n")
        _stream[0].flush()


def pytest_configure(config: pytest.Config) -> None:
    if OUTPUT and not _stream:
        _stream.append(open(OUTPUT, "w", encoding="utf-8", errors="backslashreplace"))
        root = str(getattr(config, "rootpath", None) or config.rootdir)  # type: ignore[attr-defined]  # pytest < 6.1
        _write(f"rootdir\t{os.path.relpath(root)}")


def _clean(text: str) -> str:
    return " ".join(text.split())[:300]


def _first_line(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (path, line, reason)
        reason = str(longrepr[2])
        return _clean(reason[len("Skipped: ") :] if reason.startswith("Skipped: ") else reason)
    text = getattr(report, "longreprtext", None) or str(longrepr or "")
    lines = [line for line in text.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("E "):
            return _clean(line[1:])
    return _clean(lines[-1]) if lines else ""


@pytest_hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, items: list[pytest.Item]) -> None:
    """Plant the canaries last, after every plugin and `-k`/`-m`/`--deselect` chose the items."""
    if not CANARIES:
        return
    import pathlib

    import pytest

    name = os.path.splitext(os.path.basename(CANARIES))[0]
    try:
        pytest.register_assert_rewrite(name)  # rewritten like a test module whatever python_files says
    except Exception:  # pragma: no cover - warns when already imported
        pass
    try:
        module = pytest.Module.from_parent(session, path=pathlib.Path(CANARIES))
        items.extend(_leaves(module))
    except Exception as exc:  # the canaries themselves did not collect: the ledger shows them missing
        _write(f"error\t{CANARIES}\t{_clean(repr(exc))}")


def _leaves(node: pytest.Collector) -> list[pytest.Item]:
    import pytest

    found: list[pytest.Item] = []
    for child in node.collect():
        if isinstance(child, pytest.Item):
            found.append(child)
        elif isinstance(child, pytest.Collector):
            found.extend(_leaves(child))
    return found


def pytest_collection_finish(session: pytest.Session) -> None:
    """Derandomize every collected Hypothesis test (a no-op, and no import, without Hypothesis).

    ``@settings``/``@given`` fix a test's settings when its module is imported,
    so a profile loaded now would come too late: each test's own settings get
    ``derandomize=True`` (which implies no example database) and no deadline.
    """
    for item in session.items:
        _write(f"collected\t{item.nodeid}")
    if "hypothesis" not in sys.modules:
        return
    try:
        from hypothesis import settings
    except ImportError:  # pragma: no cover
        return
    for item in session.items:
        func = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
        current = getattr(func, "_hypothesis_internal_use_settings", None)
        if func is not None and isinstance(current, settings):  # (None has no settings: for the type checker)
            try:
                func._hypothesis_internal_use_settings = settings(current, derandomize=True, deadline=None)
            except Exception:  # pragma: no cover - a Hypothesis too old for one of these settings
                pass


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _write(f"error\t{report.nodeid.split('::', 1)[0]}\t{_first_line(report)}")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    path, line, _ = report.location
    entry = _items.setdefault(report.nodeid, ["passed", path, (line or 0) + 1, ""])
    wasxfail = hasattr(report, "wasxfail")
    if report.when == "call":
        if report.passed:
            outcome = "xpassed" if wasxfail else "passed"
        elif report.skipped:
            outcome = "xfailed" if wasxfail else "skipped"
        else:
            outcome = "failed"
        if entry[0] == "passed":
            entry[0] = outcome
            entry[3] = "" if outcome == "passed" else _first_line(report) or getattr(report, "wasxfail", "")
    elif report.failed:
        entry[0], entry[3] = "error", _first_line(report)
    elif report.skipped and report.when == "setup":
        entry[0] = "xfailed" if wasxfail else "skipped"
        entry[3] = _first_line(report) or getattr(report, "wasxfail", "")


def pytest_runtest_logfinish(nodeid: str) -> None:
    entry = _items.get(nodeid)
    if entry is not None:
        outcome, path, line, message = entry
        _write(f"item\t{outcome}\t{path}\t{line}\t{nodeid}\t{message}")


@pytest_hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The completion marker, last thing this plugin writes."""
    if _stream:
        _write(f"done\t{int(session.exitstatus)}")
        _stream.pop().close()


RUNNER = f"""\
import importlib.util, sys
try:
    import pytest
except ImportError as exc:  # not installed, or shadowed by a module of the project
    print(f"{{type(exc).__name__}}: {{exc}}", file=sys.stderr)
    sys.exit({NO_PYTEST_EXIT})
spec = importlib.util.spec_from_file_location("_oracle_guard_replay", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
mod.OUTPUT = sys.argv[2]
mod.CANARIES = sys.argv[3] or None
sys.exit(int(pytest.main(sys.argv[4:], plugins=[mod])))
"""


if __name__ == "__main__":  # pragma: no cover
    sys.exit(2)
