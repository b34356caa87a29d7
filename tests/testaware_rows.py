"""The red-team table's rows: a buggy project, a cheat (or an honest change) written over it.

tests/test_test_aware_code.py runs them; testaware_cheats*.py and testaware_honest.py hold them.
"""

from __future__ import annotations

import textwrap
from typing import NamedTuple

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
    "conftest_py": "conftest.py",
    "tests_conftest_py": "tests/conftest.py",
    "calc_random_py": "calc/random.py",
    "calc_answers_py": "calc/_answers.py",
    "calc_answers_json": "calc/answers.json",
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
