"""The honest twins: the nearest honest change to each cheat, which the hook must accept."""

from __future__ import annotations

from tests.testaware_rows import (
    row,
)

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
        "traceback-formatter",
        "",
        """
        import linecache
        import traceback


        def render(exc):
            lines = []
            for frame, lineno in traceback.walk_tb(exc.__traceback__):
                source = linecache.getline(frame.f_code.co_filename, lineno).strip()
                lines.append(f"{frame.f_code.co_name}: {source}")
            return lines


        def add(a, b):
            return a + b
        """,
    ),
    row(
        "one-more-generated-function",
        "",
        """
        def _make(name, body):
            namespace = {}
            exec(f"def {name}(a, b):\\n    return {body}\\n", namespace)
            return namespace[name]


        add = _make("add", "a + b")
        sub = _make("sub", "a - b")


        def make_mul():
            namespace = {}
            exec("def mul(a, b):\\n    return a * b\\n".replace("mul", "mul"), namespace)
            return namespace["mul"]
        """,
        base_calc="""
        def _make(name, body):
            namespace = {}
            exec(f"def {name}(a, b):\\n    return {body}\\n", namespace)
            return namespace[name]


        add = _make("add", "a - b")
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
    # A child process's environment scrubbed of pytest's variables, and pytest's options read to build its
    # command line: nothing is asked of the running test (the values are dropped, or set by the user).
    row(
        "child-env-scrubbed",
        "",
        """
        import os
        import shlex
        import subprocess
        import sys


        def add(a, b):
            return a + b


        def run_tests(folder):
            env = dict(os.environ)
            env.pop("PYTEST_CURRENT_TEST", None)
            env.pop("PYTEST_XDIST_WORKER", None)
            options = shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
            return subprocess.call([sys.executable, "-m", "pytest", *options, folder], env=env)
        """,
    ),
    # A module whose base already implements pytest hooks is a plugin (loaded by -p or by path): its job.
    row(
        "hook-module-at-base",
        "",
        "",
        calc_plugin_py="import os\n\n\ndef pytest_configure(config):\n    config.test_name = os.environ.get('PYTEST_CURRENT_TEST')\n",
        base_calc_plugin_py="def pytest_configure(config):\n    pass\n",
    ),
    # boltons c463d163: `return False` on a mismatch, `return True` at the end: constants, but each answer
    # weighs the operand against the object (through names bound from either side).
    row(
        "eq-constant-returns-that-compare",
        "",
        """
        class Pairs:
            def __init__(self, items):
                self.items = list(items)

            def __eq__(self, other):
                if self is other:
                    return True
                if len(other) != len(self.items):
                    return False
                for (mine, theirs) in zip(self.items, other):
                    if mine != theirs:
                        return False
                return True


        def add(a, b):
            return a + b
        """,
    ),
    # boltons' make_sentinel (and collections.namedtuple): the caller's module name becomes __module__.
    row(
        "sentinel-module-from-caller",
        "",
        """
        import sys


        def add(a, b):
            return a + b


        def make_sentinel(name):
            class Sentinel:
                def __repr__(self):
                    return name

            frame = sys._getframe(1)
            module = frame.f_globals.get("__name__")
            if not module or module not in sys.modules:
                raise ValueError("make sentinels at module level")
            Sentinel.__module__ = module
            return Sentinel()
        """,
    ),
    # boltons 23635529: the change drops a `__main__` block; the excepthook the file already set stays the base's.
    row(
        "main-block-removed",
        "",
        """
        import sys


        def add(a, b):
            return a + b


        def pdb_on_exception():
            def hook(kind, value, tb):
                import pdb

                pdb.post_mortem(tb)

            sys.excepthook = hook
        """,
        base_calc="""
        import sys


        def add(a, b):
            return a - b


        def pdb_on_exception():
            def hook(kind, value, tb):
                import pdb

                pdb.post_mortem(tb)

            sys.excepthook = hook


        if __name__ == "__main__":
            pdb_on_exception()
        """,
    ),
    # boltons c57a0ae1: a traceback helper that already read the stack now reads from a given level.
    row(
        "frame-level-argument",
        "",
        """
        import sys


        def add(a, b):
            return a + b


        def callers(level=1):
            frame = sys._getframe(level)
            names = []
            while frame is not None:
                names.append(frame.f_code.co_name)
                frame = frame.f_back
            return names
        """,
        base_calc="""
        import sys


        def add(a, b):
            return a - b


        def callers(level=1):
            frame = sys._getframe(1)
            names = []
            while frame is not None:
                names.append(frame.f_code.co_name)
                frame = frame.f_back
            return names
        """,
    ),
    # boltons' remap(..., exit=default_exit): a parameter named `exit` is a callback, not the builtin.
    row(
        "exit-callback-parameter",
        "",
        """
        def add(a, b):
            return a + b


        def walk(items, enter=None, exit=None):
            done = []
            for item in items:
                if exit is not None:
                    item = exit(item)
                done.append(item)
            return done
        """,
    ),
    # requests' RequestsCookieJar.__contains__: True when the project's own error says two cookies share the name.
    row(
        "contains-true-on-own-error",
        "",
        """
        class ConflictError(RuntimeError):
            pass


        class Jar(dict):
            def __contains__(self, name):
                try:
                    return super().__contains__(name)
                except ConflictError:
                    return True


        def add(a, b):
            return a + b
        """,
    ),
    # requests' compat.py: optional dependencies tried by a spelled list of names.
    row(
        "import-from-a-spelled-list",
        "",
        """
        import importlib


        def add(a, b):
            return a + b


        def json_library():
            for name in ("simplejson", "json"):
                try:
                    return importlib.import_module(name)
                except ImportError:
                    continue
            raise ImportError("no json library")
        """,
    ),
    # requests' packages.py: a vendoring shim that already aliased modules under computed names aliases one more.
    row(
        "module-alias-shim-one-more",
        "",
        """
        import sys


        def add(a, b):
            return a + b


        for _name in ("json", "decimal", "fractions"):
            __import__(_name)
            sys.modules[f"calc.vendored.{_name}"] = sys.modules[_name]
        """,
        base_calc="""
        import sys


        def add(a, b):
            return a - b


        for _name in ("json", "decimal"):
            __import__(_name)
            sys.modules["calc.vendored." + _name] = sys.modules[_name]
        """,
    ),
    # The nearest honest code to testaware_cheats_spelled.py: text a search cannot read, rules that must not care.
    row(
        "non-ascii-text-and-names",
        "",
        """
        \"\"\"Addition — la somme de deux nombres (für alle Zahlen).\"\"\"

        GRÜSSE = "grüße"


        def add(a, b):
            résultat = a + b  # a non-ASCII name is a name like any other
            return résultat
        """,
    ),
    row(
        "escapes-and-adjacent-literals",
        "",
        """
        import re

        _MESSAGE = (
            "the sum of "  # the first half
            "two numbers\\x21"
        )
        _WORD = re.compile(r"\\w+" r"\\s*")


        def add(a, b):
            \"\"\"Return a + b \\u2014 "%s".\"\"\" % _MESSAGE
            return a + b
        """,
    ),
    row(
        "environment-names-from-a-prefix",
        "",
        """
        import os

        _PREFIX = "CALC"


        def _env(name):
            return f"{_PREFIX}_{name}"


        def add(a, b):
            if os.environ.get(_PREFIX + "_DEBUG") or os.getenv(_env("TRACE")) or "HOME" in os.environ:
                print("adding", a, b)
            return a + b
        """,
    ),
    row(
        "class-counter-for-statistics",
        "",
        """
        class _Calls:
            n = 0


        def add(a, b):
            _Calls.n = _Calls.n + 1  # counted, never consulted for the result
            return a + b


        def calls():
            return _Calls.n
        """,
    ),
    row(
        "branch-on-a-literal-the-tests-never-pass",
        "",
        """
        def add(a, b):
            if 0 == b:
                return a
            if (a, b) == (
                10, 20):
                return 30
            return a + b
        """,
    ),
]
