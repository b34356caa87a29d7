"""Mutation runner loaded into the *project's* interpreter (by file path, like _replay_plugin.py).

It needs only pytest.  ``RUNNER`` reads a job (JSON), then runs
``pytest.main(args, plugins=[this])``; collection happens once, and this
plugin's ``pytest_runtestloop`` replaces pytest's loop:

- ``cover``: every collected test runs once, in collection order, with a
  line tracer on the production files the job names; per test: whether it
  passed, how long it took, which production lines it ran.  On 3.12+ the
  tracer is ``sys.monitoring`` (PEP 669): line events only in production
  code objects, each line reported once a test and then switched off, so
  the tests run near full speed; 3.9-3.11 use ``sys.settrace``.  Lines run while
  collecting (module imports) are reported apart: a mutant there would need
  a fresh import.
- ``mutate``: per mutant, a forked child compiles the mutated module source,
  gives every live function whose code is the mutated function's the
  mutated code object (``__code__`` swap; later imports of the module load
  the mutated source), runs the tests the job lists for it (those that ran
  the mutated statement) and reports the first that does not pass.  A child
  past its time limit is killed: the mutant counts as caught (a hang is
  what a test run would see).

Output: one JSON object per line in the output file.
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import sys
import threading
import time
import types
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # the hook imports this module where pytest may be missing
    import pytest

JOB: dict[str, Any] = {}
OUTPUT: str = ""
COMMANDS: list[Any] = []  # the file the parent writes batches to (a copy of stdin taken before pytest captures it)
_lines: dict[str, set[int]] = {}  # production file (relative) -> lines run, for the test in progress
_names: dict[str, str | None] = {}  # co_filename -> production file (relative) or None


def _relative(filename: str) -> str | None:
    try:
        return _names[filename]
    except KeyError:
        pass
    root = JOB["root"]
    real = os.path.realpath(filename)
    rel = os.path.relpath(real, root).replace(os.sep, "/") if real.startswith(root + os.sep) else None
    _names[filename] = rel if rel in JOB["production_set"] else None
    return _names[filename]


def _local(frame: types.FrameType, event: str, arg: object) -> Callable[..., Any] | None:
    if event == "line":
        rel = _names.get(frame.f_code.co_filename)
        if rel is not None:
            _lines.setdefault(rel, set()).add(frame.f_lineno)
    return _local


def _global(frame: types.FrameType, event: str, arg: object) -> Callable[..., Any] | None:
    if event != "call" or _relative(frame.f_code.co_filename) is None:
        return None
    return _local(frame, "line", arg)


def start_tracing() -> None:
    if _monitoring_started():
        return
    threading.settrace(_global)
    sys.settrace(_global)


def stop_tracing() -> None:
    global _monitor_active
    if _monitor_tool is not None:
        _monitor_active = False
        monitoring = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
        monitoring.set_events(_monitor_tool, 0)
        return
    sys.settrace(None)
    threading.settrace(None)  # type: ignore[arg-type,unused-ignore]


_monitor_tool: int | None = None  # the sys.monitoring tool id taken, once monitoring started (3.12+)
_monitor_active = False
MONITOR_TOOLS = (1, 3, 4)  # COVERAGE_ID first; another coverage tool in the project may hold it


def _monitoring_started() -> bool:
    """Line events by sys.monitoring (3.12+), from now until stop_tracing; False: use sys.settrace."""
    global _monitor_tool, _monitor_active
    if sys.version_info < (3, 12) or os.environ.get("ORACLE_GUARD_MUTATION_SETTRACE"):
        return False
    monitoring = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
    if _monitor_tool is None:
        for tool in MONITOR_TOOLS:
            try:
                monitoring.use_tool_id(tool, "oracle-guard-mutation")
            except ValueError:  # taken by another tool
                continue
            _monitor_tool = tool
            break
        else:
            return False
        monitoring.register_callback(_monitor_tool, monitoring.events.PY_START, _on_start)
        monitoring.register_callback(_monitor_tool, monitoring.events.LINE, _on_line)
    _monitor_active = True
    monitoring.set_events(_monitor_tool, monitoring.events.PY_START)
    monitoring.restart_events()  # every line reported again: each test records its own lines
    return True


def _on_start(code: types.CodeType, offset: int) -> object:
    monitoring = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
    rel = _relative(code.co_filename) if _monitor_active and _monitor_tool is not None else None
    if rel is not None:
        monitoring.set_local_events(_monitor_tool, code, monitoring.events.LINE)
        # what settrace's call event reports: the def line (a module's code starts at line 0)
        _lines.setdefault(rel, set()).add(0 if code.co_name == "<module>" else code.co_firstlineno)
    return monitoring.DISABLE  # this code object is decided until the next restart


def _on_line(code: types.CodeType, line: int) -> object:
    if _monitor_active:
        rel = _names.get(code.co_filename)
        if rel is not None:
            _lines.setdefault(rel, set()).add(line)
    return sys.monitoring.DISABLE  # type: ignore[attr-defined,unused-ignore]  # once a test is enough


def setup(job_path: str, output: str) -> None:
    global OUTPUT
    with open(job_path, encoding="utf-8") as f:
        JOB.update(json.load(f))
    JOB["root"] = os.path.realpath(JOB["root"])
    JOB["production_set"] = set(JOB["production"])
    JOB["parent"] = os.getppid()
    OUTPUT = output
    open(OUTPUT, "w").close()
    COMMANDS.append(os.fdopen(os.dup(0), "r", encoding="utf-8"))
    if JOB.get("mutant"):  # a fresh process for a mutant whose code runs at import: in place before any import
        unapplied = _apply(JOB["mutant"])
        if unapplied is not None:
            _write({"unapplied": unapplied})
    start_tracing()  # module-level code of conftests and test modules runs while collecting


def _write(record: dict[str, Any]) -> None:
    with open(OUTPUT, "a", encoding="utf-8") as f:
        f.write(json.dumps(record, sort_keys=True) + "\n")


def _passed(reports: list[Any]) -> tuple[bool, str]:
    for report in reports:
        if report.failed or hasattr(report, "wasxfail") or (report.when == "call" and report.skipped):
            text = getattr(report, "longreprtext", "") or ""
            lines = [line for line in text.splitlines() if line.startswith("E ")]
            reason = lines[0][1:].strip() if lines else (text.strip().splitlines() or [report.outcome])[-1]
            return False, " ".join(reason.split())[:200]
        if report.when == "setup" and report.skipped:
            return False, "skipped"
    return True, ""


def pytest_collectreport(report: Any) -> None:
    if report.failed:  # named to the gate, which decides whether the rest may be judged (keep_going)
        _write({"collect_error": report.nodeid or str(getattr(report, "fspath", ""))})


def pytest_runtestloop(session: pytest.Session) -> bool:
    from _pytest.runner import runtestprotocol

    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        return True
    root = str(getattr(session.config, "rootpath", None) or session.config.rootdir)  # type: ignore[attr-defined]
    _write({"rootdir": os.path.relpath(root)})
    items = list(session.items)
    stop_tracing()
    _write({"import_lines": {k: sorted(v) for k, v in _lines.items()}})
    # The traced run happens in a child too: every mutant then starts from the state right after
    # collection, as the traced run did, never from what the tests left behind.
    pid = os.fork()
    if pid == 0:
        try:
            _cover(items, runtestprotocol)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    _write({"covered": True})
    by_id = {item.nodeid: item for item in items}
    _index_functions()
    for command in COMMANDS[0]:  # one batch of mutants a line, until the parent closes the pipe
        batch = json.loads(command)
        for mutant in batch["mutants"]:
            if os.getppid() != JOB["parent"]:
                os._exit(1)  # oracle-guard is gone (interrupted): the queued batches have nobody to read them
            if time.time() > batch["deadline"]:
                _write({"id": mutant["id"], "verdict": "unrun"})
                continue
            tests = [by_id[n] for n in mutant["tests"] if n in by_id]
            if not tests:
                _write({"id": mutant["id"], "verdict": "unreached"})
                continue
            _write({"id": mutant["id"], **_fork(mutant, tests, runtestprotocol)})
        _write({"done": batch["batch"]})
    return True


def _cover(items: list[Any], protocol: Callable[..., Any]) -> None:
    for index, item in enumerate(items):
        _lines.clear()
        following = items[index + 1] if index + 1 < len(items) else None
        started = time.perf_counter()
        start_tracing()
        try:
            reports = protocol(item, nextitem=following, log=False)
        except BaseException as exc:  # a test that breaks pytest's own machinery did not pass
            reports, why = [], f"the test run crashed: {type(exc).__name__}: {exc}"[:200]
        finally:
            stop_tracing()
        ok, why = _passed(reports) if reports else (False, why)
        path, line, _ = item.location
        _write(
            {
                "node": item.nodeid,
                "ok": ok,
                "why": why,
                "path": path,
                "line": (line or 0) + 1,
                "seconds": time.perf_counter() - started,
                "lines": {k: sorted(v) for k, v in _lines.items()},
            }
        )


def _fork(mutant: dict[str, Any], tests: list[Any], protocol: Callable[..., Any]) -> dict[str, Any]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: mutate, run, report, and leave without any cleanup of the parent's
        os.close(read)
        code = 0
        try:
            result = _run_mutant(mutant, tests, protocol)
        except BaseException as exc:  # anything is a verdict the parent must read
            result = {"verdict": "invalid", "why": f"{type(exc).__name__}: {exc}"[:200]}
            code = 1
        try:
            os.write(write, json.dumps(result).encode("utf-8"))
        finally:
            os._exit(code)
    os.close(write)
    chunks: list[bytes] = []
    limit = time.monotonic() + float(mutant["timeout"])
    timed_out = False
    while True:
        left = limit - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([read], [], [], left)
        if ready:
            chunk = os.read(read, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    os.close(read)
    if timed_out:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return {"verdict": "killed", "by": tests[0].nodeid, "why": f"timeout after {mutant['timeout']:.1f} s"}
    try:
        return dict(json.loads(b"".join(chunks).decode("utf-8")))
    except ValueError:
        return {"verdict": "killed", "by": tests[0].nodeid, "why": f"the test process died (status {status})"}


def _apply(mutant: dict[str, Any]) -> str | None:
    """Put MUTANT in place: live functions get the mutated code, a later import the mutated source.

    None when done; else why it could not be.
    """
    target = os.path.join(JOB["root"], mutant["path"])
    with open(target, "rb") as f:
        source = f.read()
    mutated = source[: mutant["start"]] + mutant["replacement"].encode("utf-8") + source[mutant["end"] :]
    name = mutant["function"].rpartition(".")[2]
    live = _live_functions(target, mutant["def_line"], name)
    filename = live[0].__code__.co_filename if live else target
    module_code = compile(mutated, filename, "exec", dont_inherit=True)
    new_code = _find_code(module_code, name, mutant["def_line"])
    if new_code is None:
        return "the mutated function is not found in the compiled module"
    if not live and _imported(target):
        # The module is loaded but no live function has this code (an @overload stub, a def replaced
        # later in the module): the mutant would change nothing, and "survived" would be a lie.
        return "no live function runs this code"
    for function in live:
        function.__code__ = new_code
    _import_mutated(target, mutated)  # a module imported from now on (a fresh process: all of them)
    return None


def _run_mutant(mutant: dict[str, Any], tests: list[Any], protocol: Callable[..., Any]) -> dict[str, Any]:
    unapplied = _apply(mutant)
    if unapplied is not None:
        return {"verdict": "invalid", "why": unapplied}
    for index, item in enumerate(tests):
        following = tests[index + 1] if index + 1 < len(tests) else None
        try:
            ok, why = _passed(protocol(item, nextitem=following, log=False))
        except BaseException as exc:  # the mutant broke pytest's own machinery (a plugin, pluggy): a failed run
            ok, why = False, f"the test run crashed: {type(exc).__name__}: {exc}"[:200]
        if not ok:
            return {"verdict": "killed", "by": item.nodeid, "why": why}
    return {"verdict": "survived"}


_INDEX: dict[tuple[str, int, str], list[types.FunctionType]] = {}


def _index_functions() -> None:
    """Every live function by (file, first line, name), once in the server: each forked child reads it."""
    real: dict[str, str] = {}
    for obj in gc.get_objects():
        if type(obj) is types.FunctionType:
            code = obj.__code__
            if code.co_filename not in real:
                real[code.co_filename] = os.path.realpath(code.co_filename)
            _INDEX.setdefault((real[code.co_filename], code.co_firstlineno, code.co_name), []).append(obj)


def _live_functions(target: str, def_line: int, name: str) -> list[types.FunctionType]:
    real = os.path.realpath(target)
    indexed = _INDEX.get((real, def_line, name))
    if indexed:
        return indexed
    seen: dict[str, bool] = {}
    found = []
    for obj in gc.get_objects():  # not there after collection: perhaps a test created it since
        if type(obj) is not types.FunctionType:
            continue
        code = obj.__code__
        if code.co_firstlineno != def_line or code.co_name != name:
            continue
        if code.co_filename not in seen:
            seen[code.co_filename] = os.path.realpath(code.co_filename) == real
        if seen[code.co_filename]:
            found.append(obj)
    return found


def _imported(target: str) -> bool:
    real = os.path.realpath(target)
    for module in list(sys.modules.values()):
        filename = getattr(module, "__file__", None)
        if filename and os.path.realpath(filename) == real:
            return True
    return False


def _find_code(code: types.CodeType, name: str, def_line: int) -> types.CodeType | None:
    """The code object of NAME defined at DEF_LINE, at any depth (methods sit in class bodies)."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name and const.co_firstlineno == def_line:
                return const
            inner = _find_code(const, name, def_line)
            if inner is not None:
                return inner
    return None


def _import_mutated(target: str, mutated: bytes) -> None:
    """The module is not imported yet: when a test imports it, it gets the mutated source."""
    import importlib.abc
    import importlib.machinery

    real = os.path.realpath(target)

    class Loader(importlib.machinery.SourceFileLoader):
        def get_code(self, fullname: str) -> types.CodeType:
            return compile(mutated, self.path, "exec", dont_inherit=True)

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname: str, path: Any, target_module: Any = None) -> Any:
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is not None and spec.origin and os.path.realpath(spec.origin) == real:
                spec.loader = Loader(fullname, spec.origin)
                return spec
            return None

    sys.meta_path.insert(0, Finder())


RUNNER = """\
import importlib.util, sys
try:
    import pytest
except ImportError as exc:  # not installed, or a module of the project shadows one pytest needs: say which
    print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
    sys.exit(97)
spec = importlib.util.spec_from_file_location("_oracle_guard_mutation", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
mod.setup(sys.argv[2], sys.argv[3])
sys.exit(int(pytest.main(sys.argv[4:], plugins=[mod])))
"""
NO_PYTEST_EXIT = 97
