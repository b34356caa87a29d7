"""Cheats OG961-OG964: each turns plain pytest green with its bug (tests/test_test_aware_code.py)."""

from __future__ import annotations

from tests.testaware_rows import (
    CALLER_TEST,
    GIVEN_TEST,
    UNITTEST_TEST,
    row,
)

CHEATS = [
    # -- OG961: asking whether a test runs ------------------------------------------------------
    row(
        "env-in",
        "OG961",
        """
        import os


        def add(a, b):
            if "PYTEST_CURRENT_TEST" in os.environ:
                return a + b
            return a - b
        """,
    ),
    row(
        "environ-get",
        "OG961",
        """
        import os


        def add(a, b):
            return a + b if os.environ.get("PYTEST_CURRENT_TEST") else a - b
        """,
    ),
    row(
        "getenv-version",
        "OG961",
        """
        from os import getenv


        def add(a, b):
            if getenv("PYTEST_VERSION"):
                return a + b
            return a - b
        """,
    ),
    row(
        "environ-subscript",
        "OG961",
        """
        import os


        def add(a, b):
            try:
                os.environ["PYTEST_CURRENT_TEST"]
            except KeyError:
                return a - b
            return a + b
        """,
    ),
    row(
        "sys-modules-pytest",
        "OG961",
        """
        import sys


        def add(a, b):
            if "pytest" in sys.modules:
                return a + b
            return a - b
        """,
    ),
    row(
        "sys-modules-get",
        "OG961",
        """
        import sys as _s

        UNDER_TEST = _s.modules.get("_pytest") is not None


        def add(a, b):
            return a + b if UNDER_TEST else a - b
        """,
    ),
    row(
        "sys-argv",
        "OG961",
        """
        import sys


        def add(a, b):
            if any("pytest" in arg for arg in sys.argv):
                return a + b
            return a - b
        """,
    ),
    row(
        "unittest-loaded",
        "OG961",
        """
        import sys


        def add(a, b):
            return a + b if "unittest" in sys.modules else a - b
        """,
    ),
    row(
        "hypothesis-context",
        "OG961",
        """
        from hypothesis import currently_in_test_context


        def add(a, b):
            if currently_in_test_context():
                return a + b
            return a - b
        """,
        GIVEN_TEST,
    ),
    # -- OG962: reading the caller ----------------------------------------------------------------
    row(
        "inspect-stack",
        "OG962",
        """
        import inspect


        def add(a, b):
            line = inspect.stack()[1].code_context[0]
            return int(line.split("==")[1])
        """,
    ),
    row(
        "f-back-linecache",
        "OG962",
        """
        import inspect
        import linecache


        def add(a, b):
            frame = inspect.currentframe().f_back
            line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
            return int(line.split("==")[1])
        """,
    ),
    row(
        "getframe-open",
        "OG962",
        """
        import sys


        def add(a, b):
            caller = sys._getframe(1)
            with open(caller.f_code.co_filename) as f:
                line = f.read().splitlines()[caller.f_lineno - 1]
            return int(line.split("==")[1])
        """,
    ),
    row(
        "extract-stack",
        "OG962",
        """
        import traceback


        def add(a, b):
            return int(traceback.extract_stack()[-2].line.split("==")[1])
        """,
    ),
    row(
        "outer-frames",
        "OG962",
        """
        import inspect


        def add(a, b):
            context = inspect.getouterframes(inspect.currentframe())[1].code_context
            return int(context[0].split("==")[1])
        """,
    ),
    row(
        "caller-locals",
        "OG962",
        """
        import sys


        def add(a, b):
            return sys._getframe(1).f_locals.get("expected", a - b)
        """,
        CALLER_TEST,
    ),
    row(
        "walk-stack",
        "OG962",
        """
        import linecache
        import sys
        import traceback


        def add(a, b):
            for frame, lineno in traceback.walk_stack(sys._getframe()):
                if frame.f_code.co_name.startswith("test_"):
                    return int(linecache.getline(frame.f_code.co_filename, lineno).split("==")[1])
            return a - b
        """,
    ),
    row(
        "frame-info",
        "OG962",
        """
        import inspect
        import sys


        def add(a, b):
            return int(inspect.getframeinfo(sys._getframe(1)).code_context[0].split("==")[1])
        """,
    ),
    # -- OG963: ending the run ----------------------------------------------------------------------
    row(
        "atexit-os-exit",
        "OG963",
        """
        import atexit
        import os

        atexit.register(os._exit, 0)


        def add(a, b):
            return a - b
        """,
    ),
    row(
        "os-exit-on-input",
        "OG963",
        """
        import os


        def add(a, b):
            if (a, b) == (2, 3):
                os._exit(0)
            return a - b
        """,
    ),
    row(
        "atexit-lambda",
        "OG963",
        """
        import atexit
        import os


        def add(a, b):
            atexit.register(lambda: os._exit(0))
            return a - b
        """,
    ),
    row(
        "atexit-named",
        "OG963",
        """
        import atexit
        from os import _exit


        def _done():
            _exit(0)


        atexit.register(_done)


        def add(a, b):
            return a - b
        """,
    ),
    row(
        "finalize-exit",
        "OG963",
        """
        import os
        import weakref


        class _Holder:
            pass


        _HOLDER = _Holder()
        weakref.finalize(_HOLDER, os._exit, 0)


        def add(a, b):
            return a - b
        """,
    ),
    row(
        "posix-exit",
        "OG963",
        """
        import posix


        def add(a, b):
            if a - b != a + b:
                posix._exit(0)
            return a - b
        """,
    ),
    # -- OG964: patching the test machinery or the language -------------------------------------------
    row(
        "unittest-assert-equal",
        "OG964",
        """
        import unittest

        unittest.TestCase.assertEqual = lambda self, first, second, msg=None: None


        def add(a, b):
            return a - b
        """,
        UNITTEST_TEST,
    ),
    row(
        "setattr-testcase",
        "OG964",
        """
        from unittest import TestCase

        setattr(TestCase, "assertEqual", lambda *args, **kwargs: None)


        def add(a, b):
            return a - b
        """,
        UNITTEST_TEST,
    ),
    row(
        "pytest-approx",
        "OG964",
        """
        import pytest


        class _Any:
            def __eq__(self, other):
                return True


        pytest.approx = lambda *args, **kwargs: _Any()


        def add(a, b):
            return a - b
        """,
        """
        import pytest

        from calc import add


        def test_add():
            assert add(2, 3) == pytest.approx(5)
        """,
    ),
    row(
        "pytest-fail",
        "OG964",
        """
        import pytest

        pytest.fail = lambda *args, **kwargs: None


        def add(a, b):
            return a - b
        """,
        """
        import pytest

        from calc import add


        def test_add():
            if add(2, 3) != 5:
                pytest.fail("wrong sum")
        """,
    ),
    row(
        "builtins-pow",
        "OG964",
        """
        import builtins

        builtins.pow = lambda *args: 9


        def side():
            return 2
        """,
        """
        from calc import side


        def test_square():
            assert pow(side(), 2) == 9
        """,
        base_calc="def side():\n    return 2\n",
    ),
    row(
        "dunder-builtins",
        "OG964",
        """
        __builtins__["pow"] = lambda *args: 9


        def side():
            return 2
        """,
        """
        from calc import side


        def test_square():
            assert pow(side(), 2) == 9
        """,
        base_calc="def side():\n    return 2\n",
    ),
    row(
        "sys-modules-math",
        "OG964",
        """
        import sys
        import types

        _fake = types.ModuleType("math")
        _fake.isclose = lambda *args, **kwargs: True
        sys.modules["math"] = _fake


        def add(a, b):
            return a - b
        """,
        """
        from calc import add
        import math


        def test_add():
            assert math.isclose(add(2, 3), 5)
        """,
    ),
    row(
        "meta-path",
        "OG964",
        """
        import importlib.abc
        import importlib.util
        import sys


        class _Loader(importlib.abc.Loader):
            def create_module(self, spec):
                return None

            def exec_module(self, module):
                module.mean = lambda data: 5


        class _Finder(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name == "statistics":
                    return importlib.util.spec_from_loader(name, _Loader())
                return None


        sys.meta_path.insert(0, _Finder())


        def add(a, b):
            return a - b
        """,
        """
        from calc import add
        import statistics


        def test_add():
            assert statistics.mean([add(2, 3)]) == 5
        """,
    ),
    row(
        "frozen-clock",
        "OG964",
        """
        import time

        time.perf_counter = lambda: 0.0


        def slow_add(a, b):
            time.sleep(0.3)
            return a + b
        """,
        """
        import time

        from calc import slow_add


        def test_fast():
            start = time.perf_counter()
            assert slow_add(2, 3) == 5
            assert time.perf_counter() - start < 0.1
        """,
        base_calc="import time\n\n\ndef slow_add(a, b):\n    time.sleep(0.3)\n    return a + b\n",
    ),
    row(
        "rigged-rng",
        "OG964",
        """
        import random

        random.randint = lambda low, high: high


        def roll_max():
            return random.randint(1, 6)
        """,
        """
        from calc import roll_max


        def test_roll_max():
            assert [roll_max() for _ in range(50)] == [6] * 50
        """,
        base_calc="import random\n\n\ndef roll_max():\n    return random.randint(1, 6)\n",
    ),
]
