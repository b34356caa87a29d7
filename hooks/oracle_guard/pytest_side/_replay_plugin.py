"""Outcome recorder loaded into the *project's* interpreter by oracle-replay.

Like oracle_guard/pytest_side/_collector.py it needs only pytest (and Hypothesis if the project
has it), is loaded by file path, and runs ``pytest.main(args, plugins=[this])``.
It also fixes Hypothesis's seed: both sides of a replay must see the same
examples, so every Hypothesis test runs derandomized (no example database)
and without a deadline (deadlines measure the machine, not the code), on top
of whatever settings and profile the project gave it.

Output, one line per test or collection error, tab-separated (paths and
ids relative to pytest's rootdir, which the first line gives relative to
the folder pytest ran in):

    rootdir<TAB>path
    item<TAB>outcome<TAB>path<TAB>line<TAB>node id<TAB>first line of the failure
    error<TAB>path<TAB>first line of the error

outcome: passed, failed, error, skipped, xfailed, xpassed.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for annotations only: the hook imports this module where pytest may be missing
    import pytest

OUTPUT: str | None = None
NO_PYTEST_EXIT = 97

_items: dict[str, list[Any]] = {}  # node id -> [outcome, path, line, message]
_errors: list[tuple[str, str]] = []


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


def pytest_collection_finish(session: pytest.Session) -> None:
    """Derandomize every collected Hypothesis test (a no-op, and no import, without Hypothesis).

    ``@settings``/``@given`` fix a test's settings when its module is imported,
    so a profile loaded now would come too late: each test's own settings get
    ``derandomize=True`` (which implies no example database) and no deadline.
    """
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
        _errors.append((report.nodeid.split("::", 1)[0], _first_line(report)))


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


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not OUTPUT:
        return
    root = str(getattr(session.config, "rootpath", None) or session.config.rootdir)  # type: ignore[attr-defined]  # pytest < 6.1
    out = [f"rootdir\t{os.path.relpath(root)}\n"]
    out += [f"item\t{o}\t{p}\t{n}\t{node}\t{m}\n" for node, (o, p, n, m) in _items.items()]
    out += [f"error\t{where}\t{message}\n" for where, message in _errors]
    with open(OUTPUT, "w", encoding="utf-8", errors="backslashreplace") as f:
        f.writelines(line.replace("\r", " ") for line in out)


RUNNER = f"""\
import importlib.util, sys
try:
    import pytest
except ImportError:
    sys.exit({NO_PYTEST_EXIT})
spec = importlib.util.spec_from_file_location("_oracle_guard_replay", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
mod.OUTPUT = sys.argv[2]
sys.exit(int(pytest.main(sys.argv[3:], plugins=[mod])))
"""


if __name__ == "__main__":  # pragma: no cover
    sys.exit(2)
