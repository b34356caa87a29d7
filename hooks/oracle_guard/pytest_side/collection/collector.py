"""Collection exporter loaded into the *project's* interpreter by collection-snapshot.

It needs only pytest: no oracle-guard import, no third-party package, so it
works in an environment where oracle-guard is not installed.  It is loaded by
file path (never by putting ``hooks/`` on ``sys.path``, which would shadow
the project's own modules named ``git`` or ``contract``) and runs
``pytest.main(args, plugins=[this module])``.

Output, one line per item or error, tab-separated, written at the end of
collection (after every ``pytest_collection_modifyitems`` hook and plugin):

    item<TAB>run|skip-if-env|skip|xfail<TAB>node id
    params<TAB>node id<TAB>argnames and, after an empty field, the id of each parametrize call
    error<TAB>node id or path<TAB>last line of the error

(`params` only for parametrized items: it names the parameter whose id changes
between two collections, oracle_guard/contract/unstable_ids.py.)
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for annotations only: the hook imports this module where pytest may be missing
    import pytest

OUTPUT: str | None = None
_errors: list[tuple[str, str]] = []

# Marker printed when pytest cannot be imported, so the hook can say so in one line.
NO_PYTEST_EXIT = 97


MARK_NAMES = frozenset({"skip", "skipif", "xfail"})

# Bound in pytest_collection_finish: the hook imports this module for RUNNER
# in its own environment, which may have no pytest.
evaluate_skip_marks: Any = None
evaluate_xfail_marks: Any = None


def _status(item: pytest.Item) -> str:
    """What pytest would do with ITEM before running it: run, skip-if-env (run, a false condition), skip or xfail."""
    obj = getattr(item, "obj", None)
    cls = getattr(item, "cls", None)
    # unittest.skip / skipIf on the method or the class, and expectedFailure
    if getattr(obj, "__unittest_skip__", False) or getattr(cls, "__unittest_skip__", False):
        return "skip"
    xfail = "xfail" if getattr(obj, "__unittest_expecting_failure__", False) else "run"
    # One walk over the node chain; most items carry none of these marks.
    if not any(mark.name in MARK_NAMES for mark in item.iter_markers()):
        return xfail
    if evaluate_skip_marks is None:
        return "skip" if item.get_closest_marker("skip") else "xfail" if item.get_closest_marker("xfail") else xfail
    if evaluate_skip_marks(item) is not None:
        return "skip"
    if evaluate_xfail_marks(item) is not None:
        return "xfail"
    if xfail == "run" and any(_conditions(mark) for mark in item.iter_markers() if mark.name in ("skipif", "xfail")):
        return ENV  # runs here; a skipif/xfail condition may be true where other runs happen
    return xfail


# A test that runs here but carries a skipif/xfail condition that is false here:
# the pytest plugin lets that mark skip it in another environment (a CI job
# without an optional dependency, another platform or Python).
ENV = "skip-if-env"


def _conditions(mark: pytest.Mark) -> bool:
    return bool(mark.args) or "condition" in mark.kwargs


def _clean(text: str) -> str:
    return " ".join(text.split())


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        lines = [line for line in str(report.longrepr).splitlines() if line.strip()]
        _errors.append((report.nodeid or str(report.fspath or ""), _clean(lines[-1]) if lines else "collection error"))


def pytest_collection_finish(session: pytest.Session) -> None:
    global evaluate_skip_marks, evaluate_xfail_marks
    try:  # pytest >= 6.2: evaluates skipif/xfail conditions exactly as a run would
        from _pytest.skipping import evaluate_skip_marks, evaluate_xfail_marks
    except ImportError:  # pragma: no cover - very old pytest: unconditional marks only
        pass
    out = []
    for item in session.items:
        try:
            status = _status(item)
        except BaseException as exc:  # a skipif condition that raises fails the test at setup
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            _errors.append((item.nodeid, _clean(f"skip/xfail condition failed: {exc}")))
            continue
        out.append(f"item\t{status}\t{item.nodeid}\n")
        callspec = getattr(item, "callspec", None)
        if callspec is not None:
            fields = [*getattr(callspec, "params", {}), "", *getattr(callspec, "_idlist", ())]
            out.append("\t".join(["params", item.nodeid, *(_clean(str(f)) for f in fields)]) + "\n")
    out += [f"error\t{where}\t{message}\n" for where, message in _errors]
    if OUTPUT:
        with open(OUTPUT, "w", encoding="utf-8", errors="backslashreplace") as f:
            f.writelines(out)


# Run as `python -c <RUNNER> <this file> <output> <pytest args...>`: import this
# module by path and hand it to pytest as a plugin object.
RUNNER = f"""\
import importlib.util, sys
try:
    import pytest
except ImportError as exc:  # not installed, or shadowed by a module of the project
    print(f"{{type(exc).__name__}}: {{exc}}", file=sys.stderr)
    sys.exit({NO_PYTEST_EXIT})
spec = importlib.util.spec_from_file_location("_oracle_guard_collector", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
mod.OUTPUT = sys.argv[2]
sys.exit(int(pytest.main(sys.argv[3:], plugins=[mod])))
"""


if __name__ == "__main__":  # pragma: no cover - the runner above is the entry point
    sys.exit(2)
