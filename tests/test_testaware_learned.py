"""OG966's parts on their own: what the base's tests ask (evidence), what a key is worth at a tested call (keyflow).

The red-team rows of tests/test_test_aware_code.py judge whole changes; these pin the edges a row cannot show
cheaply: parametrize products, doctest examples, bad test files, and a derivation that must not blow up.
"""

from __future__ import annotations

import ast

from oracle_guard.analysis.pysource import Module
from oracle_guard.analysis.testaware import cases, evidence, keyflow
from tests.testaware_rows import src


def _calls(text: str, *names: str, path: str = "tests/test_x.py") -> dict[str, list[evidence.SeenCall]]:
    return evidence.test_calls([(path, src(text).encode())], set(names))


def test_parametrize_rows_bind_the_arguments_and_the_expected_value() -> None:
    found = _calls(
        """
        import pytest

        from calc import add

        CASES = [(2, 3, 5), (4, 4, 8)]


        @pytest.mark.parametrize("a, b, expected", CASES)
        def test_add(a, b, expected):
            result = add(a, b)
            assert result == expected


        @pytest.mark.parametrize("word", ["x", pytest.param("y", id="why")])
        def test_one(word):
            assert add(word, word) == word + word
        """,
        "add",
    )["add"]
    assert [(c.args, c.expected) for c in found[:2]] == [((2, 3), 5), ((4, 4), 8)]
    assert [c.args for c in found[2:]] == [("x", "x"), ("y", "y")]
    assert all(c.test.startswith("tests/test_x.py::test_") for c in found)


def test_stacked_parametrize_tables_are_cut_off_not_enumerated() -> None:
    values = ", ".join(str(n) for n in range(100))
    found = _calls(
        f"""
        import pytest


        @pytest.mark.parametrize("a", [{values}])
        @pytest.mark.parametrize("b", [{values}])
        def test_add(a, b):
            assert add(a, b) == 3
        """,
        "add",
    )["add"]
    assert 0 < len(found) <= 200


def test_a_doctest_example_is_a_call_with_its_expected_value_and_unittest_asserts_count() -> None:
    found = _calls(
        '''
        import unittest


        def add(a, b):
            """
            >>> add(2, 3)
            5
            """


        class TestAdd(unittest.TestCase):
            def test_add(self):
                self.assertEqual(add(4, 4), 8)
                self.assertTrue(add(1, 0))


        def test_more():
            assert add(0.1, 0.2) == pytest.approx(0.3)
            assert list(add([1], [2])) == [1, 2]
        ''',
        "add",
    )["add"]
    assert sorted(repr((c.args, c.expected)) for c in found) == sorted(
        repr(pair) for pair in [((2, 3), 5), ((4, 4), 8), ((1, 0), True), ((0.1, 0.2), 0.3), (([1], [2]), [1, 2])]
    )


def test_test_files_that_do_not_parse_or_decode_give_no_evidence_and_no_error() -> None:
    sources = [("tests/test_a.py", b"def test(:\n"), ("tests/test_b.py", b"\xff\xfe\x00 add(2, 3)\n")]
    assert evidence.test_calls(sources, {"add"}) == {}


def _function(text: str) -> ast.FunctionDef:
    node = ast.parse(src(text)).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


def test_a_key_derived_from_the_arguments_is_evaluated_at_the_tested_call() -> None:
    func = _function(
        """
        def f(text, *args, sep="-", **options):
            key = repr(text[:3]) + sep + str(len(args))
            return key
        """
    )
    scope = keyflow.Scope(func, method=False)
    env = scope.bind(evidence.SeenCall(("Hello", 1, 2), (("flag", True),), evidence.MISSING))
    assert env is not None and env["args"] == (1, 2) and env["options"] == {"flag": True} and env["sep"] == "-"
    assert keyflow.derive(scope.locals["key"], env, scope, {}) == "'Hel'-2"
    assert scope.bind(evidence.SeenCall((), (("nope", 1),), evidence.MISSING)) is not None  # **options takes it


def test_a_derivation_that_would_blow_up_is_no_value() -> None:
    func = _function("def f(text):\n    return text * 10**9\n")
    scope = keyflow.Scope(func, method=False)
    body = func.body[0]
    assert isinstance(body, ast.Return) and body.value is not None
    assert keyflow.derive(body.value, {"text": "ab"}, scope, {}) is evidence.MISSING
    assert keyflow.derive(ast.parse("hash('abc')", mode="eval").body, {}, None, {}) is evidence.MISSING


def test_rows_added_at_import_and_a_table_in_a_module_of_the_change_are_constants() -> None:
    code = src(
        """
        from calc.answers import ANSWERS as KNOWN

        TABLE = {}
        TABLE[(2, 3)] = 5
        TABLE.update({(4, 4): 8})
        """
    ).encode()
    module = Module.from_source("calc/__init__.py", code)
    files = {"calc/answers.py": b"ANSWERS = {'a': 1}\n"}
    consts = keyflow.constants(module, files.get)
    assert consts["TABLE"] == {(2, 3): 5, (4, 4): 8} and consts["KNOWN"] == {"a": 1}


def test_only_functions_holding_a_changed_line_are_judged() -> None:
    new = src(
        """
        def old(a, b):
            if (a, b) == (2, 3):
                return 5
            return a - b


        def new(a, b):
            if (a, b) == (4, 4):
                return 8
            return a - b
        """
    ).encode()
    module = Module.from_source("calc/__init__.py", new)
    before = frozenset(line.strip() for line in new.splitlines()[:5])
    found = places_of(module, keyflow.constants(module, None), cases.changed_lines(module, before))
    assert found == ["new"]


def places_of(module: Module, consts: dict[str, object], changed: list[int] | None) -> list[str]:
    return [c.qualname for c in cases.candidates(module, consts, changed)]
