"""The suspects' state run, loaded by file path into the project's pytest (standard library and pytest only).

The tests given on the command line (the suspects) run three times in one process: in their
order, then each again, then all in reverse order.  Every run tears down every fixture, of any
scope, after the test (``nextitem=None``), so what carries over from one run to the next is only
state the modules keep.  A doctest among them runs a fourth time with every expected output
changed (``~flip~`` appended): it must fail.  During the first pass alone a ``sys.settrace`` function records each call
that test code makes into a changed production file (ORACLE_GUARD_SUSPECTS names them): the
callee, its arguments as received (pickled before the body runs) and its answer
(answers.py).  The later passes run untraced, so a test that passes only when not watched shows
as a difference between passes too.

Output (JSON, written at session end): ``{"outcomes": {node: [pass outcomes]}, "calls": [...],
"unwatched": [nodes whose test removed the tracer], "flipped": {doctest: outcome}, "hashseed", "complete": true}``.
"""

from __future__ import annotations

import base64
import dis
import json
import os
import pickle
import re
import sys
from types import CodeType, FrameType
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # for annotations only
    import pytest

OUTPUT: str | None = None
TEST_FILE = re.compile(r"^(test_.*|.*_test|conftest)\.py$")
TEST_FOLDERS = {"tests", "test", "testing"}
MAX_CALLS = 400
MAX_BYTES = 5_000_000  # of pickled arguments, over the run
VENDORED = re.compile(r"[\\/](site-packages|dist-packages|\.?venv[^\\/]*|\.tox|\.nox)[\\/]")
MAX_PICKLE = 100_000
VARARGS, VARKEYWORDS = 0x04, 0x08
SUSPENDS = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async generator: no one answer


if "kit" not in globals():  # imported by the gate, for its path; the probes' runner gives its copy (probes/kit.py)
    from oracle_guard.probes import kit
answers = kit.sibling(__file__, "answers")


def _config() -> dict[str, Any]:
    path = os.environ.get("ORACLE_GUARD_SUSPECTS", "")
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


CONFIG = _config()
CHANGED = {os.path.realpath(p) for p in CONFIG.get("changed", [])}
ROOT = os.path.realpath(os.getcwd())


def _test_code(filename: str) -> bool:
    path = os.path.realpath(filename)
    if path in CHANGED:
        return False
    if TEST_FILE.match(os.path.basename(path)):
        return True
    rel = os.path.relpath(path, ROOT)
    return not rel.startswith("..") and bool(TEST_FOLDERS & set(rel.split(os.sep)[:-1]))


def _qualname(frame: FrameType) -> str | None:
    code = frame.f_code
    name = getattr(code, "co_qualname", None)  # Python 3.11+
    if name is None:
        found = frame.f_globals.get(code.co_name)
        name = code.co_name if getattr(found, "__code__", None) is code else None
    return None if name is None or "<" in name else str(name)


def _arguments(frame: FrameType) -> tuple[list[Any], dict[str, Any]]:
    code = frame.f_code
    names = code.co_varnames
    local = frame.f_locals
    count, kwonly = code.co_argcount, code.co_kwonlyargcount
    args = [local[n] for n in names[:count]]
    at = count + kwonly
    kwargs = {n: local[n] for n in names[count:at]}
    if code.co_flags & VARARGS:
        args += list(local[names[at]])
        at += 1
    if code.co_flags & VARKEYWORDS:
        kwargs.update(local[names[at]])
    return args, kwargs


class Recorder:
    """Calls from test code into the changed files, while one test of the first pass runs."""

    def __init__(self) -> None:
        self.node = ""
        self.env: dict[str, str] = {}  # the environment as the test started: what the test itself set differs
        self.replaced = False  # the test replaces code or values (monkeypatch, mocker): its calls are not made again
        self.argv: list[str] = []  # sys.argv as the test started: a call made with another is given its input there
        self.calls: list[dict[str, Any]] = []
        self.gaps: set[str] = set()  # tests that made a call that could not be recorded
        self.bytes = 0
        self.skipped = 0
        self.busy = False
        self.wanted: dict[CodeType, bool] = {}
        self.pending: dict[int, dict[str, Any]] = {}  # frame id -> the call being recorded
        self.raised: dict[int, str | None] = {}  # frame id -> the exception passing through it
        self.callers: dict[CodeType, bool] = {}  # a caller's code object -> whether it is test code

    def _target(self, code: CodeType) -> bool:
        """A function of the project's own production code (every call is made again, in order: the state
        it keeps builds up outside as it did inside); only those of the changed files are compared."""
        known = self.wanted.get(code)
        if known is None:
            path = os.path.realpath(code.co_filename)
            own = path.startswith(ROOT + os.sep) and not VENDORED.search(path) and not _test_code(path)
            known = self.wanted[code] = own and not code.co_flags & SUSPENDS
        return known

    def _test_caller(self, code: CodeType) -> bool:
        """Whether CODE is test code, once per code object (a realpath() per call was most of a traced run)."""
        known = self.callers.get(code)
        if known is None:
            known = self.callers[code] = _test_code(code.co_filename)
        return known

    def trace(self, frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        if event != "call" or self.busy or not self._target(frame.f_code):
            return None
        caller = frame.f_back
        if caller is None or not self._test_caller(caller.f_code) or len(self.calls) >= MAX_CALLS:
            return None
        qualname = _qualname(frame)
        module = frame.f_globals.get("__name__")
        data = b""
        if qualname is not None and isinstance(module, str) and module != "__main__":
            self.busy = True
            try:
                data = pickle.dumps(_arguments(frame), protocol=4)
            except Exception:
                data = b""
            finally:
                self.busy = False
        if not data or len(data) > MAX_PICKLE or self.bytes + len(data) > MAX_BYTES:
            self.skipped += 1
            self.gaps.add(self.node)  # a call not made again: what this test's later calls see is unknown
            return None
        self.bytes += len(data)
        assert isinstance(module, str) and qualname is not None
        file = getattr(sys.modules.get(module), "__file__", None) or frame.f_code.co_filename
        depth = module.count(".") + (2 if os.path.basename(file).startswith("__init__.") else 1)
        root = os.path.realpath(file)
        for _ in range(depth):
            root = os.path.dirname(root)
        self.pending[id(frame)] = {
            "node": self.node,
            "module": module,
            "qualname": qualname,
            "first": frame.f_code.co_firstlineno,  # which of a property's accessors (one qualname) ran
            "root": root,
            "args": base64.b64encode(data).decode("ascii"),
            "line": caller.f_lineno,
            "caller": os.path.relpath(caller.f_code.co_filename, ROOT).replace(os.sep, "/"),
            "env": {k: os.environ.get(k) for k in _env_changes(self.env)},
            "cwd": os.getcwd(),
            "replaced": self.replaced or _patching() or _inputs_replaced(self.argv),
            "compare": os.path.realpath(frame.f_code.co_filename) in CHANGED and self.node not in self.gaps,
        }
        self.raised[id(frame)] = None
        frame.f_trace_lines = False  # only how it ends is read: its exceptions and its return
        return self.local

    def local(self, frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        key = id(frame)
        if event == "exception":
            self.raised[key] = answers.type_name(arg[0])  # the latest to pass through: the one that may leave
        elif event == "return":
            call = self.pending.pop(key, None)
            # A frame left by an exception has a "return" event too, with None: what tells them apart is the
            # instruction it ended on.  A "line" event after an exception is no sign it was handled: an except
            # clause that does not match runs its header line, then the exception goes on (isodate's __radd__,
            # `except AttributeError` around a TypeError, was recorded as returning None: a false OG971).
            raised = None if _returned(frame) else self.raised.get(key) or "BaseException"
            self.raised.pop(key, None)
            if call is not None:
                self.busy = True
                try:
                    call["answer"] = ["raised", raised] if raised else ["value", answers.of_value(arg)]
                except Exception:
                    call["answer"] = ["value", [answers.type_name(type(arg)), None]]
                finally:
                    self.busy = False
                self.calls.append(call)
        return self.local


RETURNS = frozenset(dis.opmap[name] for name in ("RETURN_VALUE", "RETURN_CONST") if name in dis.opmap)


def _returned(frame: FrameType) -> bool:
    """Whether FRAME is left by a return instruction, not by an exception passing through it."""
    code = frame.f_code.co_code
    return 0 <= frame.f_lasti < len(code) and code[frame.f_lasti] in RETURNS


def _env_changes(before: dict[str, str]) -> list[str]:
    """The variables the test set or removed since it started; pytest's own (PYTEST_*) are the run's signal."""
    now = os.environ
    names = {k for k in now if now[k] != before.get(k)} | {k for k in before if k not in now}
    return sorted(k for k in names if not k.startswith("PYTEST_"))


def _patching() -> bool:
    """Whether unittest.mock patches started with start() (pytest-mock's, among others) are active."""
    mock = sys.modules.get("unittest.mock")
    return bool(getattr(getattr(mock, "_patch", None), "_active_patches", None))


def _inputs_replaced(argv: list[str]) -> bool:
    """Whether the test gave the call the process's own inputs: another ``sys.argv`` (``patch("sys.argv", ...)``),
    or a ``sys.stdin`` that is neither the process's nor pytest's stand-in while it captures (a ``StringIO``).
    A command line's entry point called in process reads them: a plain interpreter cannot be given them
    (tabulate 17bf1cf0's `_main()` under ``patch``: honest, and refused as OG971 before)."""
    stdin = sys.stdin
    return sys.argv != argv or not (stdin is sys.__stdin__ or type(stdin).__name__ == "DontReadFromInput")


REPLACING = ("monkeypatch", "mocker", "module_mocker", "class_mocker", "package_mocker", "session_mocker")


def _replaces(item: Any) -> bool:
    """The test asks for a fixture that replaces code or values: its calls depend on what it replaced."""
    return bool(set(getattr(item, "fixturenames", ())) & set(REPLACING))


RECORDER = Recorder()
OUTCOMES: dict[str, list[str]] = {}
FAILED_AT: dict[str, list[str]] = {}  # node -> where each run failed ("" for one that did not)
UNWATCHED: set[str] = set()
FLIPPED: dict[str, str] = {}  # doctest node -> its outcome with every expected output flipped
FLIP = "~flip~"


def _outcome(reports: list[Any]) -> str:
    if any(r.failed for r in reports):
        return "failed"
    if any(r.skipped for r in reports):
        return "skipped"
    return "passed" if any(r.when == "call" and r.passed for r in reports) else "failed"


def _failed_at(reports: list[Any]) -> str:
    """Where a failed run's exception was raised (file name and line): a test whose base fails somewhere else
    when run again (a parametrized context manager used up) is not repeatable, whatever the code does."""
    for report in reports:
        crash = getattr(getattr(report, "longrepr", None), "reprcrash", None) if report.failed else None
        if crash is not None:
            return f"{os.path.basename(str(crash.path))}:{crash.lineno}"
    return ""


def _examples(item: Any) -> list[Any]:
    """A doctest item's examples whose expected output can be flipped (an exception's message is not its output)."""
    examples = getattr(getattr(item, "dtest", None), "examples", None) or []
    return [e for e in examples if getattr(e, "want", "") and getattr(e, "exc_msg", None) is None]


def _flippable(item: Any) -> bool:
    return type(item).__name__ == "DoctestItem" and bool(_examples(item))


def _flipped_doctest(item: Any, runtestprotocol: Callable[..., list[Any]]) -> str:
    """The outcome of ITEM with every expected output changed: an honest doctest fails it."""
    examples = _examples(item)
    wants = [e.want for e in examples]
    for example in examples:
        example.want = example.want.rstrip("\n") + FLIP + "\n"
    try:
        return _outcome(runtestprotocol(item, log=False, nextitem=None))
    finally:
        for example, want in zip(examples, wants):
            example.want = want


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Only the suspects, when gate.py named them here rather than on the command line (too many)."""
    wanted = set(CONFIG.get("nodes") or ())
    if not wanted:
        return
    rel = os.path.relpath(str(getattr(config, "rootpath", ROOT)), ROOT)

    def repo_id(item: pytest.Item) -> str:
        return item.nodeid if rel in ("", ".") else f"{rel}/{item.nodeid}".replace(os.sep, "/")

    kept = [i for i in items if repo_id(i) in wanted or repo_id(i).split("[", 1)[0] in wanted]
    chosen = {id(i) for i in kept}
    dropped = [i for i in items if id(i) not in chosen]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_configure(config: pytest.Config) -> None:
    kit.one_process(config)


def pytest_runtestloop(session: pytest.Session) -> bool:
    from _pytest.runner import runtestprotocol

    items = list(session.items)
    order = [(0, i) for i in items] + [(1, i) for i in items] + [(2, i) for i in reversed(items)]
    order += [(3, i) for i in items if _flippable(i)]
    globs = {id(i): dict(g) for i in items if isinstance(g := getattr(getattr(i, "dtest", None), "globs", None), dict)}
    for run, item in order:
        if run and hasattr(item, "_initrequest"):
            item._initrequest()  # a fresh request: the fixtures of the run before are torn down
        if id(item) in globs:  # doctest clears an example's namespace after each run: each run gets it whole
            namespace = getattr(item, "dtest").globs  # noqa: B009 - a DoctestItem's, not every Item's
            namespace.clear()
            namespace.update(globs[id(item)])
        if run == 3:
            FLIPPED[item.nodeid] = _flipped_doctest(item, runtestprotocol)
            continue
        tracer = RECORDER.trace if run == 0 else None
        if tracer is not None:
            RECORDER.node, RECORDER.env, RECORDER.replaced = item.nodeid, dict(os.environ), _replaces(item)
            RECORDER.argv = list(sys.argv)
            sys.settrace(tracer)
        try:
            reports = runtestprotocol(item, log=False, nextitem=None)
        finally:
            if tracer is not None:
                if sys.gettrace() is not tracer:
                    UNWATCHED.add(item.nodeid)
                sys.settrace(None)
        OUTCOMES.setdefault(item.nodeid, []).append(_outcome(reports))
        FAILED_AT.setdefault(item.nodeid, []).append(_failed_at(reports))
    return True


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not OUTPUT:
        return
    data = {
        "outcomes": OUTCOMES,
        "failed_at": FAILED_AT,
        "calls": RECORDER.calls,
        "skipped": RECORDER.skipped,
        "unwatched": sorted(UNWATCHED),
        "flipped": FLIPPED,
        "hashseed": os.environ.get("PYTHONHASHSEED"),
        "rootdir": os.path.relpath(str(getattr(session.config, "rootpath", ROOT))),
        "complete": True,
    }
    kit.write_results(OUTPUT, data)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(2)
