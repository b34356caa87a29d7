"""A pytest plugin (loaded by bench/realfix.py with `-p realfix_record`): the calls tests make into production code.

It runs on the honest fix, never on code under judgement. During each test's
call phase a profiler notes every call whose caller is a line of a test file
and whose callee is a named function or method of a production file, with its
bound arguments (as the key a cheat's wrapper computes: sorted names and
reprs, addresses dropped) and its return value pickled.
REALFIX_RECORD names the JSON file it writes; REALFIX_TEST_FILES and
REALFIX_PROD_FILES (JSON lists of absolute paths) say which file is which.
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import re
import sys
from collections.abc import Generator
from types import FrameType
from typing import Any

import pytest

ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
TESTS = set(json.loads(os.environ.get("REALFIX_TEST_FILES", "[]")))
PRODUCTION = set(json.loads(os.environ.get("REALFIX_PROD_FILES", "[]")))
ENTRIES: list[dict[str, Any]] = []
OPEN: dict[int, dict[str, Any]] = {}


def key_of(items: list[tuple[str, Any]]) -> str:
    """The same text the cheat's wrapper computes from `inspect.signature(f).bind(...)`."""
    return ADDRESS.sub("", repr(sorted(items, key=lambda item: item[0])))


def pickled(value: Any) -> str | None:
    try:
        dumped = pickle.dumps(value, protocol=4)
        pickle.loads(dumped)
        return base64.b64encode(dumped).decode("ascii")
    except Exception:  # an answer that does not pickle and back: the table cannot hold it
        return None


def profiler(frame: FrameType, event: str, arg: Any) -> None:
    if event == "call":
        code, caller = frame.f_code, frame.f_back
        if code.co_filename not in PRODUCTION or caller is None or caller.f_code.co_filename not in TESTS:
            return
        qualname = code.co_qualname
        if "<" in qualname:  # a lambda, a comprehension, a local function: nothing a table can name
            return
        count = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 4) + bool(code.co_flags & 8)
        names = code.co_varnames[:count]
        try:
            key = key_of([(name, frame.f_locals.get(name)) for name in names])
        except Exception:  # a repr that raises: not a key
            return
        OPEN[id(frame)] = {"file": code.co_filename, "qualname": qualname, "key": key}
    elif event == "return":
        entry = OPEN.pop(id(frame), None)
        if entry is not None:
            entry["value"] = pickled(arg)
            ENTRIES.append(entry)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    sys.setprofile(profiler)
    try:
        yield
    finally:
        sys.setprofile(None)


def pytest_sessionfinish(session: pytest.Session) -> None:
    with open(os.environ["REALFIX_RECORD"], "w", encoding="utf-8") as f:
        json.dump(ENTRIES, f)
