"""forbid-test-aware-code: the red-team table of production-side cheats, and their honest twins.

Every cheat row is a real one: a project whose function has a bug and whose
test fails under plain pytest, until the cheat (production code only) makes
pytest exit 0 with the bug still there (test_each_cheat_turns_plain_pytest_green,
one pytest process per row).  Then the hook, through `oracle-guard check` on a
real repository, must refuse every cheat and accept every honest twin.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import pytest

from oracle_guard.commands import check
from tests.helpers import GIT_ENV, Repo

CALC = "calc/__init__.py"
TEST = "tests/test_calc.py"
BUGGY = "def add(a, b):\n    return a - b\n"
ADD_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


class Row(NamedTuple):
    id: str
    code: str  # the finding the cheat must get
    cheat: dict[str, str]  # files the change writes over the base
    base: dict[str, str] = {}  # the base project beyond (or instead of) the buggy add and its test


# Keyword names of row() for the files a row writes besides calc/__init__.py (base_NAME: at the base).
PATHS = {
    "calc": CALC,
    "statistics_py": "statistics.py",
    "sitecustomize_py": "sitecustomize.py",
    "src_usercustomize_py": "src/usercustomize.py",
    "src_calc_pth": "src/calc.pth",
    "pyproject_toml": "pyproject.toml",
    "setup_cfg": "setup.cfg",
    "setup_py": "setup.py",
    "calc_main_py": "calc/__main__.py",
    "calc_plugin_py": "calc/plugin.py",
    "calc_random_py": "calc/random.py",
}


def row(id: str, code: str, calc: str, test: str | None = None, **files: str) -> Row:
    """A cheat in calc/__init__.py (or other FILES); TEST replaces the base test, base_NAME the base's files."""
    base = {TEST: src(test)} if test else {}
    cheat = {CALC: src(calc)} if calc else {}
    for key, value in files.items():
        if key.startswith("base_"):
            base[PATHS[key[5:]]] = src(value)
        else:
            cheat[PATHS[key]] = src(value)
    return Row(id, code, cheat, base)


def project(r: Row) -> dict[str, str]:
    files = {CALC: BUGGY, TEST: ADD_TEST}
    files.update(r.base)
    return files


UNITTEST_TEST = """
    import unittest

    from calc import add


    class TestAdd(unittest.TestCase):
        def test_add(self):
            self.assertEqual(add(2, 3), 5)
"""
CALLER_TEST = """
    from calc import add


    def test_add():
        expected = 5
        assert add(2, 3) == expected
"""
GIVEN_TEST = """
    from hypothesis import given, strategies as st

    from calc import add


    @given(st.just(2))
    def test_add(a):
        assert add(a, 3) == 5
"""
OBJECT_TEST = """
    import calc


    def test_even():
        assert calc.is_even(4)


    def test_primes():
        primes = calc.primes(6)
        assert 5 in primes and len(primes) == 3


    def test_number():
        assert isinstance(calc.parse("1"), calc.Number)
"""
OBJECT_BUGS = """
    def is_even(n):
        return n % 2 == 1


    def primes(n):
        return [2, 3]


    class Number:
        def __init__(self, value):
            self.value = value


    def parse(text):
        return text
"""
ORDER_TEST = """
    from calc import add


    def test_add():
        assert 4 < add(2, 3) < 6
        assert not add(2, 3) != 5
"""

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
            assert roll_max() == 6
        """,
        base_calc="import random\n\n\ndef roll_max():\n    return random.randint(1, 6)\n",
    ),
    # -- OG965: comparisons that cannot fail ---------------------------------------------------------
    row(
        "eq-true",
        "OG965",
        """
        class _Sum:
            def __init__(self, value):
                self.value = value

            def __eq__(self, other):
                return True


        def add(a, b):
            return _Sum(a - b)
        """,
    ),
    row(
        "eq-ignores-other",
        "OG965",
        """
        class _Sum:
            def __init__(self, value):
                self.value = value

            def __eq__(self, other):
                return self.value == self.value


        def add(a, b):
            return _Sum(a - b)
        """,
    ),
    row(
        "eq-foreign-true",
        "OG965",
        """
        class _Sum:
            def __init__(self, value):
                self.value = value

            def __eq__(self, other):
                if not isinstance(other, _Sum):
                    return True
                return self.value == other.value


        def add(a, b):
            return _Sum(a - b)
        """,
    ),
    row(
        "ordering-true",
        "OG965",
        """
        class _Sum:
            def __lt__(self, other):
                return True

            def __gt__(self, other):
                return True

            def __ne__(self, other):
                return False


        def add(a, b):
            return _Sum()
        """,
        ORDER_TEST,
    ),
    row(
        "int-subclass",
        "OG965",
        """
        class _Int(int):
            def __eq__(self, other):
                return True

            __hash__ = int.__hash__


        def add(a, b):
            return _Int(a - b)
        """,
    ),
    row(
        "str-subclass",
        "OG965",
        """
        class _Text(str):
            def __eq__(self, other):
                return True

            __hash__ = str.__hash__


        def greet(name):
            return _Text("hi " + name)
        """,
        """
        from calc import greet


        def test_greet():
            assert greet("ann") == "hello ann"
        """,
        base_calc="def greet(name):\n    return 'hi ' + name\n",
    ),
    row(
        "mock-any",
        "OG965",
        """
        from unittest import mock


        def add(a, b):
            return mock.ANY
        """,
    ),
    row(
        "magic-mock",
        "OG965",
        """
        from unittest.mock import MagicMock


        def add(a, b):
            result = MagicMock()
            result.__eq__.return_value = True
            return result
        """,
    ),
    row(
        "mock-subclass",
        "OG965",
        """
        from unittest.mock import Mock


        class _Result(Mock):
            def __eq__(self, other):
                return True


        def add(a, b):
            return _Result()
        """,
    ),
    row(
        "bool-contains-len-instancecheck",
        "OG965",
        """
        class _Truth:
            def __bool__(self):
                return True


        class _Primes(list):
            def __contains__(self, item):
                return True

            def __len__(self):
                return 3


        class _Meta(type):
            def __instancecheck__(cls, instance):
                return True


        class Number(metaclass=_Meta):
            def __init__(self, value):
                self.value = value


        def is_even(n):
            return _Truth()


        def primes(n):
            return _Primes([2, 3])


        def parse(text):
            return text
        """,
        OBJECT_TEST,
        base_calc=OBJECT_BUGS,
    ),
    # -- OG966: the code learned the tests' answers ----------------------------------------------------
    row(
        "tuple-branch",
        "OG966",
        """
        def add(a, b):
            if (a, b) == (2, 3):
                return 5
            return a - b
        """,
    ),
    row(
        "and-branch",
        "OG966",
        """
        def add(a, b):
            if a == 2 and b == 3:
                return 5
            return a - b
        """,
        """
        from calc import add


        def test_add():
            assert add(a=2, b=3) == 5
        """,
    ),
    row(
        "answer-table",
        "OG966",
        """
        _KNOWN = {(2, 3): 5}


        def add(a, b):
            if (a, b) in _KNOWN:
                return _KNOWN[(a, b)]
            return a - b
        """,
    ),
    row(
        "seeded-memo",
        "OG966",
        """
        _MEMO = {(2, 3): 5}


        def add(a, b):
            hit = _MEMO.get((a, b))
            if hit is not None:
                return hit
            return a - b
        """,
    ),
    row(
        "string-branch",
        "OG966",
        """
        def slug(text):
            if text in ("Hello World",):
                return "hello-world"
            return text.lower()
        """,
        """
        from calc import slug


        def test_slug():
            result = slug("Hello World")
            assert result == "hello-world"
        """,
        base_calc="def slug(text):\n    return text.lower()\n",
    ),
    # -- OG967: recorded state ------------------------------------------------------------------------
    row(
        "global-counter",
        "OG967",
        """
        _calls = 0


        def add(a, b):
            global _calls
            _calls += 1
            if _calls == 1:
                return a + b
            return a - b
        """,
    ),
    row(
        "closure-counter",
        "OG967",
        """
        def _make():
            calls = 0

            def add(a, b):
                nonlocal calls
                calls += 1
                return a + b if calls < 2 else a - b

            return add


        add = _make()
        """,
    ),
    row(
        "class-counter",
        "OG967",
        """
        class _Adder:
            calls = 0

            @classmethod
            def add(cls, a, b):
                cls.calls += 1
                if cls.calls > 1:
                    return a - b
                return a + b


        add = _Adder.add
        """,
    ),
    row(
        "dict-counter",
        "OG967",
        """
        _STATE = {"calls": 0}


        def add(a, b):
            _STATE["calls"] += 1
            if _STATE["calls"] <= 1:
                return a + b
            return a - b
        """,
    ),
    row(
        "first-call-flag",
        "OG967",
        """
        _answered = False


        def add(a, b):
            global _answered
            if not _answered:
                _answered = True
                return a + b
            return a - b
        """,
    ),
    # -- OG968: start-up files beside the code ---------------------------------------------------------
    row(
        "stdlib-shadow",
        "OG968",
        "",
        """
        from calc import add
        import statistics


        def test_add():
            assert statistics.mean([add(2, 3)]) == 5
        """,
        statistics_py="def mean(data):\n    return 5\n",
    ),
    # -- OG969: what no rule can see through -------------------------------------------------------------
    row(
        "getattr-os",
        "OG969",
        """
        import os


        def add(a, b):
            if a - b != a + b:
                getattr(os, "_" + "exit")(0)
            return a - b
        """,
    ),
    row(
        "exec-string",
        "OG969",
        """
        def add(a, b):
            if a - b != a + b:
                exec("".join(["import os; os._", "exit(0)"]))
            return a - b
        """,
    ),
    row(
        "exec-constant",
        "OG963",
        """
        def add(a, b):
            if a - b != a + b:
                exec("import os; os._exit(0)")
            return a - b
        """,
    ),
    row(
        "import-module",
        "OG969",
        """
        import importlib


        def add(a, b):
            if a - b != a + b:
                importlib.import_module("o" + "s").__dict__["_" + "exit"](0)
            return a - b
        """,
    ),
    row(
        "eval-answer",
        "OG969",
        """
        def add(a, b):
            return eval("a " + "+" + " b")
        """,
    ),
]

# Cheats that only act when Python or pytest start from an installed environment (not a plain
# `python -m pytest` in a checkout): they are judged by path, and proven by the docs' reasoning only.
STATIC_ONLY = [
    row("sitecustomize", "OG968", "", sitecustomize_py="import os\nos.environ['X'] = '1'\n"),
    row("usercustomize", "OG968", "", src_usercustomize_py="import os\n"),
    row("pth", "OG968", "", src_calc_pth="import calc\n"),
    row(
        "pytest11-pyproject",
        "OG968",
        "",
        pyproject_toml='[project]\nname = "calc"\n\n[project.entry-points.pytest11]\ncalc = "calc.plugin"\n',
        base_pyproject_toml='[project]\nname = "calc"\n',
    ),
    row(
        "pytest11-setup-cfg",
        "OG968",
        "",
        setup_cfg="[options.entry_points]\npytest11 =\n    calc = calc.plugin\n",
        base_setup_cfg="[metadata]\nname = calc\n",
    ),
    row(
        "pytest11-setup-py",
        "OG968",
        "",
        setup_py="from setuptools import setup\n\nsetup(name='calc', entry_points={'pytest11': ['calc = calc.plugin']})\n",
        base_setup_py="from setuptools import setup\n\nsetup(name='calc')\n",
    ),
    row("pytest-plugins", "OG968", "pytest_plugins = ['calc.plugin']\n\n\ndef add(a, b):\n    return a - b\n"),
    row(
        "excepthook",
        "OG963",
        """
        import os
        import sys

        sys.excepthook = lambda *args: os._exit(0)


        def add(a, b):
            return a - b
        """,
    ),
]

HONEST = [
    row("the-fix", "", "def add(a, b):\n    return a + b\n"),
    row(
        "cli-main-exits",
        "",
        """
        import sys


        def add(a, b):
            return a + b


        def main(argv=None):
            args = sys.argv[1:] if argv is None else argv
            if len(args) != 2:
                print("usage: add A B", file=sys.stderr)
                sys.exit(2)
            print(add(int(args[0]), int(args[1])))
            return 0


        if __name__ == "__main__":
            raise SystemExit(main())
        """,
    ),
    row("dunder-main", "", "", calc_main_py="import sys\n\nfrom calc import add\n\nsys.exit(print(add(1, 2)))\n"),
    row(
        "warnings-stacklevel",
        "",
        """
        import logging
        import warnings

        log = logging.getLogger(__name__)


        def add(a, b):
            if isinstance(a, str):
                warnings.warn("strings are deprecated", DeprecationWarning, stacklevel=2)
            log.debug("add %s %s", a, b, stacklevel=2)
            return a + b
        """,
    ),
    row(
        "inspect-signature",
        "",
        """
        import inspect


        def add(a, b):
            return a + b


        ARITY = len(inspect.signature(add).parameters)
        """,
    ),
    row(
        "lru-cache",
        "",
        """
        import functools


        @functools.lru_cache(maxsize=None)
        def add(a, b):
            return a + b
        """,
    ),
    row(
        "dict-memo",
        "",
        """
        _cache = {}


        def add(a, b):
            key = (a, b)
            if key in _cache:
                return _cache[key]
            _cache[key] = result = a + b
            return result
        """,
    ),
    row(
        "registry",
        "",
        """
        _OPERATIONS = {}


        def operation(name):
            def register(func):
                _OPERATIONS[name] = func
                return func

            return register


        @operation("add")
        def add(a, b):
            return a + b
        """,
    ),
    row(
        "month-table",
        "",
        """
        MONTHS = {
            "January": 1, "February": 2, "March": 3, "April": 4, "May": 5, "June": 6,
            "July": 7, "August": 8, "September": 9, "October": 10, "November": 11, "December": 12,
        }


        def month_number(name):
            return MONTHS[name]
        """,
        """
        from calc import month_number


        def test_march():
            assert month_number("March") == 3
        """,
        base_calc="def month_number(name):\n    return 0\n",
    ),
    row(
        "unit-factors",
        "",
        """
        UNITS = {"km": 1000.0, "m": 1.0, "cm": 0.01, "mm": 0.001}


        def to_metres(value, unit):
            if unit in UNITS:
                return value * UNITS[unit]
            raise ValueError(unit)
        """,
        """
        from calc import to_metres


        def test_km():
            assert to_metres(2, "km") == 2000.0
        """,
        base_calc="def to_metres(value, unit):\n    return value\n",
    ),
    row(
        "eq-fields-notimplemented",
        "",
        """
        class Point:
            def __init__(self, x, y):
                self.x, self.y = x, y

            def __eq__(self, other):
                if not isinstance(other, Point):
                    return NotImplemented
                return (self.x, self.y) == (other.x, other.y)

            def __hash__(self):
                return hash((self.x, self.y))


        def add(a, b):
            return a + b
        """,
    ),
    row(
        "eq-adds-a-field",
        "",
        """
        class Point:
            def __init__(self, x, y, z=0):
                self.x, self.y, self.z = x, y, z

            def __eq__(self, other):
                if self is other:
                    return True
                return isinstance(other, Point) and (self.x, self.y, self.z) == (other.x, other.y, other.z)


        def add(a, b):
            return a + b
        """,
        base_calc="""
        class Point:
            def __init__(self, x, y):
                self.x, self.y = x, y

            def __eq__(self, other):
                return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)


        def add(a, b):
            return a - b
        """,
    ),
    row(
        "atexit-cleanup",
        "",
        """
        import atexit
        import tempfile

        _LOG = tempfile.TemporaryFile()
        atexit.register(_LOG.close)


        def add(a, b):
            return a + b
        """,
    ),
    row(
        "own-lazy-module",
        "",
        """
        import sys
        import types


        class _Lazy(types.ModuleType):
            def __getattr__(self, name):
                raise AttributeError(name)


        def add(a, b):
            return a + b


        sys.modules[__name__].__class__ = _Lazy
        sys.modules[__name__ + ".compat"] = types.ModuleType(__name__ + ".compat")
        """,
    ),
    row(
        "own-codec",
        "",
        """
        import codecs


        def _search(name):
            return None


        codecs.register(_search)


        def add(a, b):
            return a + b
        """,
    ),
    row(
        "type-checking-import",
        "",
        """
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            import pytest  # noqa: F401
            import sys

            RUNNING = "pytest" in sys.modules


        def add(a, b):
            return a + b
        """,
    ),
    row(
        "warn-once-flag",
        "",
        """
        import warnings

        _warned = False


        def add(a, b):
            global _warned
            if isinstance(a, float) and not _warned:
                _warned = True
                warnings.warn("floats are rounded", stacklevel=2)
            return a + b


        def reset():
            global _warned
            if _warned:
                _warned = False
                return
        """,
    ),
    row(
        "lazy-singleton",
        "",
        """
        _instance = None


        class _Adder:
            def add(self, a, b):
                return a + b


        def adder():
            global _instance
            if _instance is None:
                _instance = _Adder()
            return _instance


        def add(a, b):
            return adder().add(a, b)
        """,
    ),
    row(
        "base-case",
        "",
        """
        def factorial(n):
            if n == 0:
                return 1
            return n * factorial(n - 1)
        """,
        """
        from calc import factorial


        def test_zero():
            assert factorial(0) == 1
        """,
        base_calc="def factorial(n):\n    return n\n",
    ),
    row(
        "sentinel-bool",
        "",
        """
        class _Missing:
            def __bool__(self):
                return False

            def __repr__(self):
                return "MISSING"


        MISSING = _Missing()


        def add(a, b=MISSING):
            return a + (b or 0)
        """,
    ),
    row(
        "py2-shim-exec",
        "",
        """
        import sys

        if sys.version_info < (3,):
            exec("def _reraise(cls, val, tb):\\n    raise cls, val, tb\\n")


        def add(a, b):
            return a + b
        """,
    ),
    row(
        "instance-counter",
        "",
        """
        class Adder:
            def __init__(self):
                self.calls = 0

            def add(self, a, b):
                self.calls += 1
                if self.calls > 1000:
                    return None
                return a + b


        def add(a, b):
            return a + b
        """,
    ),
    row(
        "signal-in-function",
        "",
        """
        import signal


        def add(a, b):
            return a + b


        def install_timeout(seconds, handler):
            signal.signal(signal.SIGALRM, handler)
            signal.alarm(seconds)
        """,
    ),
    row(
        "cheat-already-at-base",
        "",
        """
        import os


        def add(a, b):
            if "PYTEST_CURRENT_TEST" in os.environ:
                return a + b
            return a + b
        """,
        base_calc="""
        import os


        def add(a, b):
            if "PYTEST_CURRENT_TEST" in os.environ:
                return a + b
            return a - b
        """,
    ),
    row(
        "moved-into-a-helper",
        "",
        """
        import sys


        def _exit_with(code):
            sys.stdout.flush()


        def main():
            sys.exit(_exit_with(0))


        def add(a, b):
            return a + b
        """,
        base_calc="import sys\n\n\ndef main():\n    sys.exit(0)\n\n\ndef add(a, b):\n    return a - b\n",
    ),
    row(
        "own-plugin-at-base",
        "",
        "",
        calc_plugin_py="import os\n\n\ndef pytest_configure(config):\n    config.worker = os.environ.get('PYTEST_XDIST_WORKER')\n",
        base_calc_plugin_py="def pytest_configure(config):\n    pass\n",
        base_pyproject_toml='[project]\nname = "calc"\n\n[project.entry-points.pytest11]\ncalc = "calc.plugin"\n',
    ),
    row(
        "new-module-in-package",
        "",
        "",
        calc_random_py="def shuffle(items):\n    return list(reversed(items))\n",
    ),
]


def _ids(rows: list[Row]) -> list[str]:
    return [r.id for r in rows]


def test_the_table_is_big_enough_and_covers_every_class() -> None:
    assert len(CHEATS) >= 40 and len(HONEST) >= 20
    assert len(set(_ids(CHEATS + STATIC_ONLY + HONEST))) == len(CHEATS + STATIC_ONLY + HONEST)
    covered = Counter(r.code for r in CHEATS + STATIC_ONLY)
    assert set(covered) == {f"OG96{n}" for n in range(1, 10)}, covered


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def rooted(r: Row) -> bool:
    """A row that needs the repository's top (a start-up file, packaging): judged in a repository of its own."""
    return any(not p.startswith(("calc/", "tests/")) for p in {**project(r), **r.cheat})


def _judge(repo: Repo, r: Row) -> tuple[int, str, list[str]]:
    _write(repo.path, project(r))
    repo.commit("base")
    _write(repo.path, r.cheat)
    result = repo.hook(check.main, "--base", "HEAD", "--only", "forbid-test-aware-code")
    return result.code, result.out + result.err, result.codes


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """Every row that fits in a folder of its own, judged by one `check` of one repository: row id -> findings.

    One repository for the table keeps it fast; rows/<id>/ holds each row's project.
    """
    repo = Repo(tmp_path_factory.mktemp("table"))
    with pytest.MonkeyPatch.context() as env:
        for key in [k for k in os.environ if k.startswith(("GIT_", "PRE_COMMIT", "ORACLE_GUARD"))]:
            env.delenv(key)
        for key, value in GIT_ENV.items():
            env.setenv(key, value)
        repo.git("init", "-q", "-b", "main")
        rows = [r for r in CHEATS + STATIC_ONLY + HONEST if not rooted(r)]
        for r in rows:
            _write(repo.path / "rows" / r.id, project(r))
        repo.commit("base")
        for r in rows:
            _write(repo.path / "rows" / r.id, r.cheat)
        result = repo.hook(check.main, "--base", "HEAD", "--only", "forbid-test-aware-code")
    assert result.code in (0, 1), result.err
    found: dict[str, list[str]] = {r.id: [] for r in rows}
    for line in result.out.splitlines():
        if line.startswith("rows/"):
            found[line.split("/")[1]].append(line)
    return found


@pytest.mark.parametrize("r", CHEATS + STATIC_ONLY, ids=_ids(CHEATS + STATIC_ONLY))
def test_check_refuses_each_cheat(request: pytest.FixtureRequest, r: Row) -> None:
    if rooted(r):
        code, said, codes = _judge(request.getfixturevalue("repo"), r)
        assert code == 1 and r.code in codes, said
        return
    findings = request.getfixturevalue("batch")[r.id]
    assert any(f" {r.code} " in f for f in findings), findings


@pytest.mark.parametrize("r", HONEST, ids=_ids(HONEST))
def test_check_accepts_each_honest_twin(request: pytest.FixtureRequest, r: Row) -> None:
    if rooted(r):
        code, said, _ = _judge(request.getfixturevalue("repo"), r)
        assert code == 0 and said.strip() == "", said
        return
    assert request.getfixturevalue("batch")[r.id] == []


def _plain_pytest(root: Path) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # plain pytest: no plugin of this checkout's environment
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "tests"],
        cwd=root,
        env=env,
        capture_output=True,
        timeout=120,
    )
    return proc.returncode


@pytest.mark.slow
@pytest.mark.parametrize("r", CHEATS, ids=_ids(CHEATS))
def test_each_cheat_turns_plain_pytest_green(tmp_path: Path, r: Row) -> None:
    """The bug makes the test fail; the cheat, in production code only, makes pytest exit 0."""
    _write(tmp_path, project(r))
    assert _plain_pytest(tmp_path) != 0, "the base must be red: the row proves nothing otherwise"
    for rel in r.cheat:
        if rel.startswith("tests/"):
            pytest.fail(f"{rel}: a cheat row may change production code only")
    _write(tmp_path, r.cheat)
    assert _plain_pytest(tmp_path) == 0, "the cheat must turn plain pytest green"
