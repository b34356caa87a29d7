"""The checks of one test case, with its parameters and loop values written in (part of sametest.py).

Asserts, ``raise AssertionError``, pytest's and unittest's checks, and calls of
helpers that hold checks; literal loops unrolled; each check spelled as written,
with locals inlined, and as the keys by which a stricter check of the same value
pays for it.  A check a project helper makes is opaque: what it looks at is kept.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from oracle_guard.analysis.checksites import live_block, raises_assertion
from oracle_guard.analysis.pysource import FunctionNode, Module
from oracle_guard.analysis.sametest.params import _constants, _elements
from oracle_guard.analysis.sametest.spelling import _plain_assert

if TYPE_CHECKING:
    from typing import TypeGuard  # Python 3.10+

CHECK_PREFIXES = ("assert", "check", "verify", "expect", "fail")
CHECK_CALLS = {"pytest.raises", "pytest.warns", "pytest.deprecated_call", "pytest.fail"}


if sys.version_info >= (3, 10):  # the clauses of a statement that hold a body of their own
    _CLAUSES = (ast.ExceptHandler, ast.match_case)
else:
    _CLAUSES = (ast.ExceptHandler,)


class _Checks:
    """The check sites of one function, with a case's parameters (and loop values) written in."""

    def __init__(self, module: Module, cls: ast.ClassDef | None, helpers: dict[str, bool]) -> None:
        self.module = module
        self.cls_methods = {
            n.name: n for n in (cls.body if cls else []) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self.helpers = helpers
        self.constants = _constants(module.tree)

    def is_check(self, call: ast.Call) -> bool:
        func = call.func
        name = self.module.names.qualify(func) or ""
        if name in CHECK_CALLS or name.startswith(("numpy.testing.assert", "pandas.testing.assert")):
            return True
        last = (func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else "").lstrip(
            "_"
        )
        if last.startswith(CHECK_PREFIXES):
            return True
        if isinstance(func, ast.Name) and func.id in self.helpers:
            return self.helpers[func.id]
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls")
            and func.attr in self.cls_methods
        ):
            return _holds_checks(self.cls_methods[func.attr], self.module, {})
        return False

    def sites(
        self, body: list[ast.stmt], env: dict[str, ast.expr], budget: list[int]
    ) -> Iterable[tuple[ast.AST, dict[str, ast.expr]]]:
        for stmt in live_block(body):
            if isinstance(stmt, (ast.For, ast.AsyncFor)):
                items = _elements(stmt.iter, self.constants)
                if items is not None and budget[0] >= len(items):
                    budget[0] -= len(items)
                    for item in items:
                        yield from self.sites(stmt.body, {**env, **_bind(stmt.target, item)}, budget)
                    yield from self.sites(stmt.orelse, env, budget)
                    continue
            if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Constant) and not stmt.test.value:
                yield from self.sites(stmt.orelse, env, budget)
                continue
            if isinstance(stmt, ast.Assert):
                yield ast.Assert(test=stmt.test, msg=None), env  # its message is no part of the check
            elif isinstance(stmt, ast.Raise) and stmt.exc is not None and raises_assertion(stmt):
                yield stmt, env
            for field_name, value in ast.iter_fields(stmt):
                if field_name == "test" and isinstance(stmt, ast.Assert):
                    continue
                values = value if isinstance(value, list) else [value]
                if values and isinstance(values[0], ast.stmt):
                    yield from self.sites(values, env, budget)
                    continue
                for child in values:
                    if isinstance(child, _CLAUSES):
                        yield from self.sites(child.body, env, budget)
                    elif isinstance(child, ast.expr):
                        for node in ast.walk(child):
                            if isinstance(node, ast.Call) and self.is_check(node):
                                yield _plain_assert(node) or node, env


def _bind(target: ast.expr, item: ast.expr) -> dict[str, ast.expr]:
    if isinstance(target, ast.Name):
        return {target.id: item}
    if (
        isinstance(target, (ast.Tuple, ast.List))
        and isinstance(item, (ast.Tuple, ast.List))
        and len(target.elts) == len(item.elts)
    ):
        out: dict[str, ast.expr] = {}
        for t, v in zip(target.elts, item.elts):
            out.update(_bind(t, v))
        return out
    return {}


def _holds_checks(fn: FunctionNode, module: Module, helpers: dict[str, bool]) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Assert) or (
            isinstance(node, ast.Raise) and node.exc is not None and raises_assertion(node)
        ):
            return True
        if isinstance(node, ast.Call):
            func = node.func
            name = module.names.qualify(func) or ""
            last = (
                func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            ).lstrip("_")
            if (
                name in CHECK_CALLS
                or last.startswith(CHECK_PREFIXES)
                or (isinstance(func, ast.Name) and helpers.get(func.id))
            ):
                return True
    return False


def _module_helpers(module: Module) -> dict[str, bool]:
    """Module-level functions that are no tests: name -> whether they hold checks (two levels deep)."""
    functions = {
        n.name: n
        for n in module.tree.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and not n.name.startswith("test")
    }
    helpers = {name: _holds_checks(fn, module, {}) for name, fn in functions.items()}
    return {name: helpers[name] or _holds_checks(fn, module, helpers) for name, fn in functions.items()}


def _opaque(node: ast.AST, module: Module) -> TypeGuard[ast.Call]:
    """A check made by a project helper (``self.assertManyResults(...)``, ``check_rows(...)``):
    what it checks cannot be written out here."""
    if not isinstance(node, ast.Call):
        return False
    name = module.names.qualify(node.func) or ""
    if name in CHECK_CALLS or name.startswith(("numpy.", "pandas.", "unittest.")):
        return False
    attr = node.func.attr if isinstance(node.func, ast.Attribute) else ""
    return not (attr.startswith("assert") and hasattr(__import__("unittest").TestCase, attr))


def _looked_at(node: ast.AST, own: set[str]) -> set[str]:
    """Names (the last part of dotted ones) a check looks at, its test's own locals and parameters aside."""
    out = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Attribute) and not isinstance(inner.value, ast.Call):
            out.add(inner.attr)
        elif isinstance(inner, ast.Name) and inner.id not in own and inner.id not in _BUILTINS:
            out.add(inner.id)
    return out - {"self", "cls", "pytest"}


_BUILTINS = set(dir(__import__("builtins")))


def _pinned(node: ast.AST) -> list[str]:
    """Keys by which a check of a value is paid for by an exact check of the same value.

    ``assert isinstance(v, str)``, ``assert v is not None``, ``assert hasattr(v, "x")`` and
    ``assert v`` want ``want:<v>``; ``assert v == <other>`` and ``assert v is <other>`` give
    ``want:<v>``: a test moved with its check tightened is the same test.  Nothing else is
    paid this way (``== 1`` for ``== 2`` would hide a rewritten expectation)."""
    if not isinstance(node, ast.Assert):
        return []
    test = node.test
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right, op = test.left, test.comparators[0], test.ops[0]
        if isinstance(op, (ast.Eq, ast.Is)):
            return [f"pin:{_text(side)}" for side in (left, right) if not isinstance(side, ast.Constant)]
        if isinstance(op, ast.IsNot) and isinstance(right, ast.Constant) and right.value is None:
            return [f"want:{_text(left)}"]
        return []
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id in ("isinstance", "hasattr", "callable")
        and test.args
    ):
        return [f"want:{_text(test.args[0])}"]
    if isinstance(test, (ast.Name, ast.Attribute)):
        return [f"want:{_text(test)}"]
    return []


def _text(node: ast.AST) -> str:
    try:
        return " ".join(ast.unparse(node).split())
    except (ValueError, RecursionError):  # a value written into an f-string that unparse cannot spell
        return ast.dump(node)
