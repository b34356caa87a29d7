"""One spelling for a test's statements and checks (part of sametest.py's notion of the same test).

Parameters written in, unittest's ``self.assertEqual(a, b)`` as ``assert a == b``,
``f(*[a, b])`` as ``f(a, b)``, a helper method moved to the module as the same
helper, single-assignment locals (and class attributes read as ``self.x``)
inlined: two spellings of one check compare equal.
"""

from __future__ import annotations

import ast
import copy
from typing import Callable

from oracle_guard.analysis.pysource import FunctionNode, statements


class _Substitute(ast.NodeTransformer):
    def __init__(self, env: dict[str, ast.expr]) -> None:
        self.env = env

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.env:
            return copy.deepcopy(self.env[node.id])
        return node


def _put(node: ast.AST, env: dict[str, ast.expr]) -> ast.AST:
    put: ast.AST = _Normalise().visit(_Substitute(env).visit(copy.deepcopy(node)) if env else copy.deepcopy(node))
    return put


# unittest's assertions as the plain assert they mean: `assertEqual` -> `assert ==` is a refactor.
_UNITTEST: dict[str, Callable[[list[ast.expr]], ast.expr]] = {
    "assertEqual": lambda a: ast.Compare(a[0], [ast.Eq()], [a[1]]),
    "assertEquals": lambda a: ast.Compare(a[0], [ast.Eq()], [a[1]]),
    "assertNotEqual": lambda a: ast.Compare(a[0], [ast.NotEq()], [a[1]]),
    "assertIs": lambda a: ast.Compare(a[0], [ast.Is()], [a[1]]),
    "assertIsNot": lambda a: ast.Compare(a[0], [ast.IsNot()], [a[1]]),
    "assertIn": lambda a: ast.Compare(a[0], [ast.In()], [a[1]]),
    "assertNotIn": lambda a: ast.Compare(a[0], [ast.NotIn()], [a[1]]),
    "assertLess": lambda a: ast.Compare(a[0], [ast.Lt()], [a[1]]),
    "assertLessEqual": lambda a: ast.Compare(a[0], [ast.LtE()], [a[1]]),
    "assertGreater": lambda a: ast.Compare(a[0], [ast.Gt()], [a[1]]),
    "assertGreaterEqual": lambda a: ast.Compare(a[0], [ast.GtE()], [a[1]]),
    "assertIsNone": lambda a: ast.Compare(a[0], [ast.Is()], [ast.Constant(None)]),
    "assertIsNotNone": lambda a: ast.Compare(a[0], [ast.IsNot()], [ast.Constant(None)]),
    "assertTrue": lambda a: a[0],
    "assertFalse": lambda a: ast.UnaryOp(ast.Not(), a[0]),
    "assertIsInstance": lambda a: ast.Call(ast.Name("isinstance", ast.Load()), a[:2], []),
}
_ARITY = {"assertTrue": 1, "assertFalse": 1, "assertIsNone": 1, "assertIsNotNone": 1}


class _Normalise(ast.NodeTransformer):
    """Spellings of one check made one: ``f(*[a, b])`` is ``f(a, b)``; ``self.assertEqual(a, b)`` is ``assert a == b``."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if (
            isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in ("self", "cls")
        ):
            node.func = ast.Name(node.func.attr, ast.Load())  # a helper method moved to the module is the same helper
        if _called_name(node.func) in ("raises", "warns"):
            # `pytest.raises(E, match=None)` is `pytest.raises(E)`: what a parametrized `match` is for the case without one
            node.keywords = [
                k
                for k in node.keywords
                if not (k.arg == "match" and isinstance(k.value, ast.Constant) and k.value.value is None)
            ]
        if any(isinstance(a, ast.Starred) and isinstance(a.value, (ast.List, ast.Tuple)) for a in node.args):
            args: list[ast.expr] = []
            for a in node.args:
                args += (
                    list(a.value.elts)
                    if isinstance(a, ast.Starred) and isinstance(a.value, (ast.List, ast.Tuple))
                    else [a]
                )
            node.args = args
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        """`(1, "int")[0]` is `1`: a parameter that holds a tuple, indexed in the body, written in."""
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        key = node.slice
        if not isinstance(key, ast.Constant) or isinstance(key.value, bool):
            return node
        value = node.value
        if (
            isinstance(value, (ast.Tuple, ast.List))
            and isinstance(key.value, int)
            and not any(isinstance(e, ast.Starred) for e in value.elts)
            and -len(value.elts) <= key.value < len(value.elts)
        ):
            return value.elts[key.value]
        if isinstance(value, ast.Dict) and all(isinstance(k, ast.Constant) for k in value.keys):
            found = [
                v for k, v in zip(value.keys, value.values) if isinstance(k, ast.Constant) and k.value == key.value
            ]
            if len(found) == 1 and type(key.value) in {
                type(k.value) for k in value.keys if isinstance(k, ast.Constant)
            }:
                return found[0]
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if node.attr == "__name__" and isinstance(node.value, ast.Name):
            return ast.Constant(node.value.id)  # `cls.__name__` with the class written in
        return node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        self.generic_visit(node)
        parts = [
            p.value if isinstance(p, ast.FormattedValue) and p.conversion == -1 and p.format_spec is None else p
            for p in node.values
        ]
        strings = [p.value for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str)]
        if len(strings) == len(parts):
            return ast.Constant("".join(strings))
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        call = node.value
        if isinstance(call, ast.Call):
            plain = _plain_assert(call)
            if plain is not None:
                visited: ast.AST = self.visit(plain)
                return visited
        self.generic_visit(node)
        return node


def _called_name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _plain_assert(call: ast.Call) -> ast.Assert | None:
    func = call.func
    if not (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "self"
        and func.attr in _UNITTEST
    ):
        return None
    if call.keywords or len(call.args) < _ARITY.get(func.attr, 2) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    return ast.Assert(test=_UNITTEST[func.attr](list(call.args)), msg=None)


def _body(fn: FunctionNode) -> list[ast.stmt]:
    body = fn.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    return body


def _locals(fn: FunctionNode) -> dict[str, ast.expr]:
    """Locals bound exactly once, by a plain ``name = value``: they can be inlined into checks."""
    bound: dict[str, int] = {}
    values: dict[str, ast.expr] = {}
    for arg in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
        bound[arg.arg] = 2
    for node in ast.walk(fn):
        if node is fn:
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound[node.id] = bound.get(node.id, 0) + 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound[node.name] = 2
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound[node.name] = 2
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound[(alias.asname or alias.name).split(".")[0]] = 2
    for node in statements(fn.body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = node.value
        elif (  # `value, kind = parse(s)`: each name is one item of the value
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], (ast.Tuple, ast.List))
            and all(isinstance(t, ast.Name) for t in node.targets[0].elts)
        ):
            for index, target in enumerate(node.targets[0].elts):
                assert isinstance(target, ast.Name)
                values[target.id] = ast.Subscript(node.value, ast.Constant(index), ast.Load())
    return {name: value for name, value in values.items() if bound.get(name) == 1}


def split_equality(check: ast.AST) -> list[ast.AST]:
    """`assert x == (1, "int")` as `assert x[0] == 1` and `assert x[1] == "int"`: one check per item, so a
    test that compared the items one by one and one that compares the tuple are the same test."""
    if not (isinstance(check, ast.Assert) and isinstance(check.test, ast.Compare) and len(check.test.ops) == 1):
        return [check]
    left, right = check.test.left, check.test.comparators[0]
    if not isinstance(check.test.ops[0], ast.Eq):
        return [check]

    def items(side: ast.expr) -> list[ast.expr] | None:
        if isinstance(side, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in side.elts):
            return list(side.elts)
        return None

    lefts, rights = items(left), items(right)
    if lefts is None and rights is None:
        return [check]
    n = len(lefts if lefts is not None else rights or [])
    if lefts is not None and rights is not None and len(lefts) != len(rights) or not 1 < n <= 16:
        return [check]
    pairs = [
        (
            lefts[i] if lefts is not None else ast.Subscript(left, ast.Constant(i), ast.Load()),
            rights[i] if rights is not None else ast.Subscript(right, ast.Constant(i), ast.Load()),
        )
        for i in range(n)
    ]
    return [ast.Assert(ast.Compare(a, [ast.Eq()], [b]), None) for a, b in pairs]


class _Inline(ast.NodeTransformer):
    def __init__(self, values: dict[str, ast.expr], attributes: dict[str, ast.expr] | None = None) -> None:
        self.values = values
        self.attributes = attributes or {}  # class attributes, read as `self.name`
        self.depth = 0

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if (
            isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
            and node.attr in self.attributes
            and isinstance(node.ctx, ast.Load)
        ):
            return copy.deepcopy(self.attributes[node.attr])  # a local moved to the class is the same value
        self.generic_visit(node)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.values and self.depth < 4:
            self.depth += 1
            try:
                inlined: ast.AST = self.visit(copy.deepcopy(self.values[node.id]))
                return inlined
            finally:
                self.depth -= 1
        return node
