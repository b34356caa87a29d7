"""Cheats OG965-OG969, and those only the packaging or the interpreter's start-up can run."""

from __future__ import annotations

from tests.testaware_rows import (
    OBJECT_BUGS,
    OBJECT_TEST,
    ORDER_TEST,
    row,
)

CHEATS = [
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
    # A module-level pytest hook does not make a file a plugin: the base decides (calc/__init__.py had none).
    row(
        "pytest-hook-added-to-look-like-a-plugin",
        "OG961",
        """
        import os


        def pytest_configure(config):
            pass


        def add(a, b):
            return a + b if "PYTEST_CURRENT_TEST" in os.environ else a - b
        """,
    ),
    # pop() whose value is used is a read, even of a copy of the environment.
    row(
        "pop-of-a-copy-read",
        "OG961",
        """
        import os


        def add(a, b):
            if dict(os.environ).pop("PYTEST_CURRENT_TEST", None):
                return a + b
            return a - b
        """,
    ),
    # Mixed constant returns that weigh nothing of self against the operand: True for every real operand.
    row(
        "eq-false-only-for-none",
        "OG965",
        """
        class _Sum:
            def __init__(self, value):
                self.value = value

            def __eq__(self, other):
                if other is None or self is other:
                    return False
                return True


        def add(a, b):
            return _Sum(a - b)
        """,
    ),
    # The caller's module name is fine for a class's __module__ (pickling), not for choosing a result.
    row(
        "caller-module-name-decides",
        "OG962",
        """
        import sys


        def add(a, b):
            caller = sys._getframe(1).f_globals.get("__name__", "")
            if caller.rpartition(".")[2].startswith("test"):
                return a + b
            return a - b
        """,
    ),
    # True when the operand raises a builtin error (a foreign type has no `.value`): answers for anything.
    row(
        "eq-true-on-builtin-error",
        "OG965",
        """
        class _Sum:
            def __init__(self, value):
                self.value = value

            def __eq__(self, other):
                try:
                    return self.value == other.value
                except (KeyError, AttributeError):
                    return True


        def add(a, b):
            return _Sum(a - b)
        """,
    ),
    # The base's own `os._exit(0)` under `if __name__ == "__main__":`, moved out to run at import.
    row(
        "main-block-exit-moved-to-import",
        "OG963",
        """
        import os


        def add(a, b):
            return a - b


        os._exit(0)
        """,
        base_calc="""
        import os


        def add(a, b):
            return a - b


        if __name__ == "__main__":
            os._exit(0)
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
