"""The suspects' recorded calls, called again in a plain interpreter: no pytest, no plugins, no test modules.

Run by gate.py as ``python -s outside.py CONFIG OUTPUT`` (CONFIG: ``{"paths": [...], "calls": [...]}``) with an environment of its own (no PYTEST_*,
no PYTHON* but the test run's hash seed), in the folder pytest ran in.  Each call is made twice,
each time with its arguments unpickled afresh; a module whose name looks like a test's
(test_*, *_test, conftest, tests/test/testing) is never imported, and a call whose arguments need
one is skipped.  Output: ``{"answers": [[first, second] | null, ...], "errors": {module: error}}``.
"""

from __future__ import annotations

import base64
import importlib
import importlib.util
import io
import json
import os
import pickle
import re
import sys
from typing import Any

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


def _function(module: Any, qualname: str) -> Any:
    """The callable the recorded frame ran, as the project's own callers reach it."""
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
        return found.fget
    return found


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
    for call in calls:
        module_name = call["module"]
        if any(TEST_PART.match(p) for p in module_name.split(".")):
            results.append(None)
            continue
        try:
            module = importlib.import_module(module_name)
            function = _function(module, call["qualname"])
        except Exception as exc:  # the module does not import, or the name is gone outside the test run
            errors[module_name] = f"{type(exc).__name__}: {exc}"
            results.append(["broken", f"{type(exc).__name__}: {exc}"[:300]])
            continue
        data = base64.b64decode(call["args"])
        pair: list[Any] = []
        for _ in range(2):
            try:
                args, kwargs = _NoTests(io.BytesIO(data)).load()
            except Exception:  # arguments that need test code, or no longer load
                pair.clear()
                break
            pair.append(answers.of_call(lambda: function(*args, **kwargs)))  # noqa: B023 - called at once
        results.append(pair or None)
    with open(output, "w", encoding="utf-8") as f:
        json.dump({"answers": results, "errors": errors}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
