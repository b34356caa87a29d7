"""Outcome recorder loaded into the *project's* interpreter by oracle-replay.

Like oracle_guard/pytest_side/collection/collector.py it needs only pytest (and Hypothesis if the project
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

Spread out (docs/oracle-replay.md, "A big suite"): with ``--oracle-guard-shard K/N`` it first writes
every selected id (``pool``), then keeps the tests whose ``shard_of`` is K.  Under pytest-xdist
(``-n``) the controller writes the ledger from the reports the workers send, and each worker
(which loads this file by name, ``-p _oracle_guard_replay``) runs the canaries itself after its
last test, outside the distributed items, and sends their outcomes back: every process that ran
tests also ran the canaries.

outcome: passed, failed, error, skipped, xfailed, xpassed.
"""

from __future__ import annotations

import hashlib
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

SHARD_OPTION = "--oracle-guard-shard"
NAME = "_oracle_guard_replay"  # the module name every process loads this file as

_items: dict[str, list[Any]] = {}  # node id -> [outcome, path, line, message]
_written: set[str] = set()  # node ids whose item line is out
_stream: list[Any] = []  # the open ledger (a list: no `global` needed)
_aside: list[Any] = []  # an xdist worker's canary items, run after its last test
_worker_canaries: dict[str, list[str]] = {}  # controller: canary node id -> outcome per worker
_silent_workers: list[str] = []  # controller: workers that finished without canary outcomes
_seen_collection: list[bool] = []
_pool: list[str] = []  # controller: the selected ids before the shard was kept, from a worker


def shard_of(node: str, count: int) -> int:
    """The shard (1..COUNT) of NODE, a node id relative to the repository: a stable hash of its test.

    The parametrization is left out, so every case of a test lands in one shard (cases whose ids
    change between runs pair by position, contract/unstable_ids.py).
    """
    test = node.split("[", 1)[0]
    return int(hashlib.sha256(test.encode("utf-8")).hexdigest()[:16], 16) % count + 1


def parse_shard(text: str) -> tuple[int, int] | None:
    """(K, N) from "K/N" with 1 <= K <= N; None when it is not that."""
    index, slash, count = text.partition("/")
    if not slash or not index.isdigit() or not count.isdigit():
        return None
    k, n = int(index), int(count)
    return (k, n) if 1 <= k <= n else None


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(SHARD_OPTION, default=None, help="oracle-guard replay: keep only shard K/N of the tests")


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _repo_id(config: pytest.Config, node: str) -> str:
    """NODE relative to the folder pytest runs in (the tree's top), as ledger.py reads it."""
    root = os.path.relpath(str(getattr(config, "rootpath", None) or config.rootdir))  # type: ignore[attr-defined]
    return node if root in ("", ".") else os.path.normpath(os.path.join(root, node)).replace(os.sep, "/")


def _write(line: str) -> None:
    if _stream:
        _stream[0].write(line.replace("\r", " ").replace("\n", " ") + "\n")
        _stream[0].flush()


def pytest_configure(config: pytest.Config) -> None:
    global CANARIES
    if _is_worker(config):  # an xdist worker: the controller writes the ledger; the canaries come from it
        CANARIES = config.workerinput.get("oracle_guard_canaries") or None  # type: ignore[attr-defined]
        return
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
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep this shard's tests, then plant the canaries last, after every plugin and `-k`/`-m`/`--deselect` chose."""
    shard = parse_shard(config.getoption(SHARD_OPTION) or "") if config.getoption(SHARD_OPTION) else None
    if shard is not None:
        for item in items:
            _write(f"pool\t{item.nodeid}")
        if hasattr(config, "workeroutput"):  # the controller writes the pool from the first worker's
            config.workeroutput["oracle_guard_pool"] = [item.nodeid for item in items]
        kept = [i for i in items if shard_of(_repo_id(config, i.nodeid), shard[1]) == shard[0]]
        dropped = [i for i in items if i not in kept]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = kept
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
        # Under xdist each worker runs them itself after its last test (pytest_runtestloop).
        (_aside if _is_worker(config) else items).extend(_leaves(module))
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
    _record(_items.setdefault(report.nodeid, ["passed", path, (line or 0) + 1, ""]), report)


def _record(entry: list[Any], report: pytest.TestReport) -> None:
    """Fold one phase's REPORT into ENTRY ([outcome, path, line, message])."""
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


def pytest_runtest_logstart(nodeid: str) -> None:
    """Which test is running: a run the gate stops for its time names it (pytest_side/ground.py, OG922)."""
    _write(f"started\t{nodeid}")


def pytest_runtest_logfinish(nodeid: str) -> None:
    entry = _items.get(nodeid)
    if entry is not None and nodeid not in _written:
        _written.add(nodeid)
        outcome, path, line, message = entry
        _write(f"item\t{outcome}\t{path}\t{line}\t{nodeid}\t{message}")


@pytest_hookimpl(hookwrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Any:
    """An xdist worker: after its last test, the canaries, in this process; their outcomes go to the controller."""
    yield
    if not _aside or not hasattr(session.config, "workeroutput"):
        return
    from _pytest.runner import runtestprotocol

    outcomes = {}
    for index, item in enumerate(_aside):
        later = _aside[index + 1] if index + 1 < len(_aside) else None
        entry = ["passed", "", 0, ""]
        for report in runtestprotocol(item, log=False, nextitem=later):
            _record(entry, report)
        outcomes[item.nodeid] = entry[0]
    session.config.workeroutput["oracle_guard_canaries"] = outcomes


@pytest_hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist's controller, per worker: where the canaries are."""
    node.workerinput["oracle_guard_canaries"] = CANARIES or ""


@pytest_hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """xdist's controller: the collected ids (every worker collects the same, or xdist stops)."""
    if not _seen_collection:
        _seen_collection.append(True)
        for nodeid in ids:
            _write(f"collected\t{nodeid}")


@pytest_hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist's controller: the canary outcomes of a worker that finished (a crashed one's tests failed already)."""
    if error is not None:
        return
    pool = getattr(node, "workeroutput", {}).get("oracle_guard_pool")
    if isinstance(pool, list) and not _pool:
        _pool.extend(str(nodeid) for nodeid in pool)
    if not CANARIES:
        return
    outcomes = getattr(node, "workeroutput", {}).get("oracle_guard_canaries")
    if not isinstance(outcomes, dict):
        _silent_workers.append(str(getattr(node.gateway, "id", "?")))
        return
    for nodeid, outcome in outcomes.items():
        _worker_canaries.setdefault(str(nodeid), []).append(str(outcome))


@pytest_hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The outcomes not yet out (a crashed worker's test), the workers' canaries, and the completion marker last."""
    if not _stream:
        return
    for nodeid in list(_items):
        pytest_runtest_logfinish(nodeid)
    for nodeid in _pool:
        _write(f"pool\t{nodeid}")
    if not _silent_workers:  # a worker that ran tests but no canaries: every canary counts as not run
        path = CANARIES or ""
        for nodeid, outcomes in _worker_canaries.items():
            for outcome in outcomes:  # one line per worker: ledger.py keeps the first unexpected one
                _write(f"canary\t{outcome}\t{path}\t1\t{nodeid}\t")
    _write(f"done\t{int(session.exitstatus)}")
    _stream.pop().close()


RUNNER = f"""\
def _oracle_guard_run():
    import importlib.util, os, sys
    report = globals().pop("_oracle_guard_imports")  # defined before this text by pytest_side/barrier.py
    globals().pop("_oracle_guard_run")  # __main__ holds what `python -m pytest` leaves there, no more
    try:
        import pytest
    except ImportError as exc:  # not installed, or shadowed by a module of the project
        print(f"{{type(exc).__name__}}: {{exc}}", file=sys.stderr)
        sys.exit({NO_PYTEST_EXIT})
    spec = importlib.util.spec_from_file_location("_oracle_guard_replay", sys.argv[1])
    mod = importlib.util.module_from_spec(spec)
    sys.modules["_oracle_guard_replay"] = mod  # `-p _oracle_guard_replay` finds it loaded here
    spec.loader.exec_module(mod)
    sys.path.insert(0, os.path.dirname(sys.argv[1]))  # and xdist's workers (this sys.path) import it by name
    mod.OUTPUT = sys.argv[2]
    mod.CANARIES = sys.argv[3] or None
    spec = importlib.util.spec_from_file_location("_oracle_guard_probe_kit", sys.argv[4])  # probes/kit.py
    kit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kit)
    args = sys.argv[5:]
    kit.look_plain(kit.typed(args))  # sys.argv and __main__ as `python -m pytest` shows them
    code = int(pytest.main(args, plugins=[mod]))
    report()
    sys.exit(code)


_oracle_guard_run()
"""

if __name__ == "__main__":  # pragma: no cover
    sys.exit(2)
