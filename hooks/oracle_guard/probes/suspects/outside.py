"""The suspects' recorded calls, made again in a plain interpreter: no pytest, no plugins, no test modules.

Run by gate.py as ``python -s outside.py CONFIG OUTPUT`` (CONFIG: ``{"paths": [...], "calls": [...]}``)
with an environment of its own (no PYTEST_*, no PYTHON* but the test run's hash seed), in the folder
pytest ran in.  The calls are made in the order the tests made them, each once, with its arguments
unpickled afresh, the variables the test itself set and the folder it was in (gate.py runs this
twice, to know which answers are stable).  A module whose name looks like a test's (test_*, *_test,
conftest, tests/test/testing) is never imported, and a call whose arguments need one is not made;
nor is a call the test made while it replaced code or values (monkeypatch, mocker).
Output: ``{"answers": [answer | ["broken", why] | null, ...], "errors": {module: error}}``.
"""

from __future__ import annotations

import base64
import contextlib
import importlib
import importlib.util
import io
import json
import os
import pickle
import re
import sys
from typing import Any

PROGRESS = ".progress"  # beside the output: the index of each call before it is made
TEST_PART = re.compile(r"^(test_.*|.*_test|conftest|tests|test|testing)$")


def _load_answers() -> Any:
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "answers.py")
    spec = importlib.util.spec_from_file_location("_oracle_guard_answers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _NoTests(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if any(TEST_PART.match(part) for part in module.split(".")):
            raise pickle.UnpicklingError(f"{module} is test code")
        return super().find_class(module, name)


def _function(module: Any, qualname: str, first: int | None = None) -> Any:
    """The callable the recorded frame ran, as the project's own callers reach it: of a property's
    accessors, which share its name, the one whose code starts at FIRST (an assignment runs the setter)."""
    owner: Any = module
    *path, last = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    found = owner.__dict__.get(last) if isinstance(owner, type) else None
    if found is None:
        found = getattr(owner, last)
    if isinstance(found, (staticmethod, classmethod)):
        return found.__func__
    if isinstance(found, property):
        accessors = [found.fget, found.fset, found.fdel]
        ran = [f for f in accessors if getattr(getattr(f, "__code__", None), "co_firstlineno", None) == first]
        return ran[0] if ran else found.fget
    return found


def _set_env(values: dict[str, Any]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def main(argv: list[str]) -> int:
    calls_path, output = argv
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]  # this folder is not the project's
    answers = _load_answers()
    with open(calls_path, encoding="utf-8") as f:
        config = json.load(f)
    calls = config["calls"]
    # The test run's own import path (the tree and its src/, as the replay sets it), then each callee's root.
    for root in [*reversed(config.get("paths", [])), *sorted({c["root"] for c in calls}, reverse=True)]:
        if root in sys.path:
            sys.path.remove(root)
        sys.path.insert(0, root)
    results: list[Any] = []
    errors: dict[str, str] = {}
    home = os.getcwd()
    # Which call is being made, before it is: a call that ends the interpreter (os._exit, a signal) leaves its
    # index there, and the gate judges that as its answer outside (probes/suspects/gate.py).
    progress = open(output + PROGRESS, "w", encoding="utf-8")
    for call in calls:  # in the recorded order: state the code keeps builds up as in the test run
        progress.write(f"{len(results)}\n")
        progress.flush()
        module_name = call["module"]
        if call.get("replaced") or any(TEST_PART.match(p) for p in module_name.split(".")):
            results.append(None)
            continue
        try:
            module = importlib.import_module(module_name)
            function = _function(module, call["qualname"], call.get("first"))
        except Exception as exc:  # the module does not import, or the name is gone outside the test run
            errors[module_name] = f"{type(exc).__name__}: {exc}"
            results.append(["broken", f"{type(exc).__name__}: {exc}"[:300]])
            continue
        try:
            args, kwargs = _NoTests(io.BytesIO(base64.b64decode(call["args"]))).load()
        except Exception:  # arguments that need test code, or no longer load
            results.append(None)
            continue
        saved = {k: os.environ.get(k) for k in call.get("env", {})}
        _set_env(call.get("env", {}))  # what the test itself set (monkeypatch apart): an input, not a signal
        with contextlib.suppress(OSError):
            os.chdir(call.get("cwd") or home)
        try:
            try:
                results.append(answers.of_call(lambda: function(*args, **kwargs)))  # noqa: B023 - called at once
            except SystemExit:  # a command line's exit: an answer, as the test run records it (not the run's end)
                results.append(["raised", answers.type_name(SystemExit)])
        finally:
            _set_env(saved)
            os.chdir(home)
    progress.close()
    with open(output, "w", encoding="utf-8") as f:
        json.dump({"answers": results, "errors": errors}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
