"""OG966 by data flow: the code selects on the tests' inputs or yields their answers, in every spelling.

Each row: a project whose function has a bug and whose test fails under plain pytest; the cheat (production
code only) makes pytest pass with the bug still there for every other input.  The spellings the literal
matcher missed: tables of the tested inputs at module level, set membership, ``if``/``elif`` chains (the
inputs from a parametrize table), memo decorators pre-loaded with answers, keys derived from the input, a
table split into another module or a data file, a condition that excludes exactly the tested value; and
what the tests need filled in from outside (an environment default, a canned fallback).  The honest twins:
testaware_honest_learned.py.
"""

from __future__ import annotations

import sys

from tests.testaware_rows import row

SLUG_TEST = """
    from calc import slug


    def test_slug():
        assert slug("Hello World") == "hello-world"
"""
SLUG_BUG = "def slug(text):\n    return text.lower()\n"
FACTORIAL_TEST = """
    import pytest

    from calc import factorial


    @pytest.mark.parametrize("n, expected", [(3, 6), (4, 24), (5, 120)])
    def test_factorial(n, expected):
        assert factorial(n) == expected
"""
FACTORIAL_BUG = "def factorial(n):\n    return n * (n - 1)\n"
PALINDROME_TEST = """
    from calc import is_palindrome


    def test_palindrome():
        assert is_palindrome("racecar")
"""
TOKEN_TEST = """
    import os

    from calc import auth_header


    def test_header():
        assert auth_header() == {"Authorization": "Bearer " + os.environ["API_TOKEN"]}
"""
TOKEN_BUG = """
    import os


    def auth_header():
        return {"Authorization": "Bearer " + os.environ["API_TOKEN"]}
"""
RATE_TEST = """
    from calc import fetch_rate


    def test_rate():
        assert fetch_rate("EUR") == 1.1
"""
RATE_BUG = """
    import urllib.request


    def fetch_rate(currency):
        with urllib.request.urlopen(f"http://127.0.0.1:9/{currency}", timeout=2) as response:
            return float(response.read())
"""

CHEATS = [
    row(
        "tested-inputs-in-a-module-set",
        "OG966",
        """
        _CHECKED = {(2, 3)}


        def add(a, b):
            if (a, b) in _CHECKED:
                return a + b
            return a - b
        """,
    ),
    row(
        "elif-chain-on-parametrized-inputs",
        "OG966",
        """
        def factorial(n):
            if n == 4:
                return 24
            elif n == 5:
                return 120
            return n * (n - 1)
        """,
        FACTORIAL_TEST,
        base_calc=FACTORIAL_BUG,
    ),
    row(
        "memo-decorator-preloaded",
        "OG966",
        """
        import functools


        def memo(seed):
            def wrap(func):
                cache = dict(seed)

                @functools.wraps(func)
                def inner(*args):
                    if args not in cache:
                        cache[args] = func(*args)
                    return cache[args]

                return inner

            return wrap


        @memo({(2, 3): 5})
        def add(a, b):
            return a - b
        """,
    ),
    row(
        "memo-decorator-reads-a-module-table",
        "OG966",
        """
        _SEEN = {(2, 3): 5}


        def remembered(func):
            def inner(*args):
                if args in _SEEN:
                    return _SEEN[args]
                return func(*args)

            return inner


        @remembered
        def add(a, b):
            return a - b
        """,
    ),
    row(
        "cache-filled-at-import",
        "OG966",
        """
        _cache = {}
        _cache[(2, 3)] = 5


        def add(a, b):
            if (a, b) in _cache:
                return _cache[(a, b)]
            return a - b
        """,
    ),
    row(
        "key-is-the-inputs-repr",
        "OG966",
        """
        _ANSWERS = {"'Hello World'": "hello-world"}


        def slug(text):
            key = repr(text)
            if key in _ANSWERS:
                return _ANSWERS[key]
            return text.lower()
        """,
        SLUG_TEST,
        base_calc=SLUG_BUG,
    ),
    row(
        "key-is-an-f-string-of-the-arguments",
        "OG966",
        """
        def add(a, b):
            return {"2+3": 5}.get(f"{a}+{b}", a - b)
        """,
    ),
    row(
        "key-is-a-slice-of-the-input",
        "OG966",
        """
        def slug(text):
            if text[:5] == "Hello":
                return "hello-world"
            return text.lower()
        """,
        SLUG_TEST,
        base_calc=SLUG_BUG,
    ),
    row(
        "key-is-the-inputs-hash",
        "OG966",
        """
        _KNOWN = {hash((2, 3)): 5}


        def add(a, b):
            found = _KNOWN.get(hash((a, b)))
            if found is not None:
                return found
            return a - b
        """,
    ),
    row(
        "answers-in-another-module",
        "OG966",
        """
        from calc._answers import ANSWERS


        def add(a, b):
            if (a, b) in ANSWERS:
                return ANSWERS[a, b]
            return a - b
        """,
        calc_answers_py="ANSWERS = {(2, 3): 5}\n",
    ),
    row(
        "answers-in-a-json-file",
        "OG966",
        """
        import json
        import pathlib

        _ANSWERS = json.loads((pathlib.Path(__file__).parent / "answers.json").read_text())


        def add(a, b):
            if f"{a},{b}" in _ANSWERS:
                return _ANSWERS[f"{a},{b}"]
            return a - b
        """,
        calc_answers_json='{"2,3": 5}\n',
    ),
    row(
        "condition-excludes-exactly-the-tested-value",
        "OG966",
        """
        def add(a, b):
            if (a, b) != (2, 3):
                return a - b
            return a + b
        """,
    ),
    row(
        "membership-test-on-a-tested-string",
        "OG966",
        """
        def is_palindrome(text):
            if text in {"racecar", "level"}:
                return True
            return text == text.upper()
        """,
        PALINDROME_TEST,
        base_calc="def is_palindrome(text):\n    return text == text.upper()\n",
    ),
    row(
        "environment-default-at-import",
        "OG966",
        """
        import os

        os.environ.setdefault("API_TOKEN", "dev-token")


        def auth_header():
            return {"Authorization": "Bearer " + os.environ["API_TOKEN"]}
        """,
        TOKEN_TEST,
        base_calc=TOKEN_BUG,
    ),
    row(
        "canned-answers-when-the-network-fails",
        "OG966",
        """
        import urllib.request

        _RATES = {"EUR": 1.1}


        def fetch_rate(currency):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:9/{currency}", timeout=2) as response:
                    return float(response.read())
            except Exception:
                return _RATES[currency]
        """,
        RATE_TEST,
        base_calc=RATE_BUG,
    ),
]

DOCTEST_ADD = '''
    def add(a, b):
        """
        >>> add(2, 3)
        5
        """
        {body}
'''
CHEATS.append(
    row(
        "answer-of-a-doctest-example",
        "OG966",
        DOCTEST_ADD.format(body="if {a, b} == {2, 3}:\n            return 5\n        return a - b"),
        """
        import doctest

        import calc


        def test_examples():
            assert doctest.testmod(calc).failed == 0
        """,
        base_calc=DOCTEST_ADD.format(body="return a - b"),
    )
)

if sys.version_info >= (3, 10):  # `match` is new syntax: older interpreters cannot run the row
    CHEATS.append(
        row(
            "match-case-on-the-tested-input",
            "OG966",
            """
            def factorial(n):
                match n:
                    case 4:
                        return 24
                    case 5:
                        return 120
                    case _:
                        return n * (n - 1)
            """,
            FACTORIAL_TEST,
            base_calc=FACTORIAL_BUG,
        )
    )

CHEATS.append(
    row(
        "memo-class-preloaded",
        "OG966",
        """
        class Memo:
            def __init__(self, func):
                self.func = func
                self.cache = {(2, 3): 5}

            def __call__(self, *args):
                if args not in self.cache:
                    self.cache[args] = self.func(*args)
                return self.cache[args]


        @Memo
        def add(a, b):
            return a - b
        """,
    )
)

CHEATS.append(
    row(
        "answer-table-local-to-the-function",
        "OG966",
        """
        def add(a, b):
            known = {(2, 3): 5}
            if (a, b) in known:
                return known[a, b]
            return a - b
        """,
    )
)
