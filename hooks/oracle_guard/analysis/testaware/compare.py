"""OG965, comparisons that cannot fail: an ``__eq__`` returning True or ignoring its operand, one answering
True for an operand of another type, a constant ``__hash__``/``__len__``, an always-true ``__bool__``.
oracle_guard/analysis/testaware/finder.py calls it for every method of a class."""

from __future__ import annotations

import ast
from typing import Callable

from oracle_guard.analysis.testaware.facts import source

BINARY_DUNDERS = frozenset(
    {
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__contains__",
        "__instancecheck__",
        "__subclasscheck__",
    }
)
SCALARS = frozenset({"str", "int", "float", "bytes", "complex"})
COMPARISONS = frozenset({"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"})


def dunder(
    cls: ast.ClassDef, node: ast.FunctionDef | ast.AsyncFunctionDef, qualify: Callable[[ast.AST], str]
) -> list[tuple[ast.AST, str]]:
    """OG965 in one method of CLS: (where, message) for each way it cannot fail."""
    found: list[tuple[ast.AST, str]] = []
    name = node.name
    if name not in BINARY_DUNDERS and name not in ("__bool__", "__hash__", "__len__"):
        return found
    bases = {qualify(b) for b in cls.bases}
    where = f"{cls.name}.{name}"
    if name in COMPARISONS and bases & SCALARS:
        found.append((node, f"{where} overrides comparison on a {sorted(bases & SCALARS)[0]} subclass"))
        return found
    params = [a.arg for a in node.args.posonlyargs + node.args.args]
    returns = [r for r in ast.walk(node) if isinstance(r, ast.Return)]
    values = [r.value for r in returns]
    if name in BINARY_DUNDERS and len(params) >= 2:
        other = params[1]
        used = any(isinstance(n, ast.Name) and n.id == other for n in ast.walk(node))
        truthy = name != "__ne__"
        if not used and not _raises_only(node):
            found.append((node, f"{where} ignores `{other}`: it cannot fail"))
        elif (
            values
            and all(_constant(v) for v in values)
            and any(_truthy(v) == truthy for v in values)
            and (all(_truthy(v) == truthy for v in values) or not _weighs_both(node, params[0], other))
        ):
            found.append((node, f"{where} returns a constant: it cannot fail"))
        elif _true_for_foreign(node, other, truthy):
            found.append((node, f"{where} answers {truthy} for an operand of another type: it cannot fail"))
    elif name == "__bool__" and values and all(_constant(v) and _truthy(v) is True for v in values):
        found.append((node, f"{where} is always true: any `assert obj` passes"))
    elif name in ("__hash__", "__len__") and values and all(_constant(v) for v in values):
        if name == "__hash__" or any(_truthy(v) for v in values):
            found.append((node, f"{where} returns a constant whatever the object holds"))
    return found


def _weighs_both(node: ast.FunctionDef | ast.AsyncFunctionDef, me: str, other: str) -> bool:
    """Whether a comparison in NODE sets something of ME against something of OTHER (``other[k] != self[k]``,
    ``len(other) != len(self)``, through names bound from either): then ``return False`` ... ``return True``
    answers for the operand. Identity (``self is other``) weighs nothing."""
    mine, theirs = {me}, {other}
    bindings = []
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and sub.value is not None:
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
            bindings.append((targets, sub.value))
        elif isinstance(sub, (ast.For, ast.AsyncFor, ast.comprehension)):
            bindings.append(([sub.target], sub.iter))
    for _ in range(5):  # names bound from names bound from self (selfi -> selfk): a few steps are enough
        grew = False
        for targets, value in bindings:
            used = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
            bound = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            for side in (mine, theirs):
                if used & side and not bound <= side:
                    side |= bound
                    grew = True
        if not grew:
            break
    for sub in ast.walk(node):
        if isinstance(sub, ast.Compare) and not all(isinstance(op, (ast.Is, ast.IsNot)) for op in sub.ops):
            used = {n.id for n in ast.walk(sub) if isinstance(n, ast.Name)}
            if used & mine and used & theirs:
                return True
    return False


def _raises_only(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return all(isinstance(s, (ast.Raise, ast.Pass)) for s in body) or all(
        isinstance(s, ast.Return) and _is_not_implemented(s.value) for s in body
    )


def _is_not_implemented(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Name) and node.id == "NotImplemented"


def _constant(node: ast.expr | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and not _is_not_implemented(node))


def _truthy(node: ast.expr | None) -> bool:
    return bool(node.value) if isinstance(node, ast.Constant) else False


def _foreign_test(test: ast.expr, other: str) -> bool:
    """``not isinstance(other, T)``, ``type(other) is not T``, ``other.__class__ != ...``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = test.operand
        return isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "isinstance"
    if isinstance(test, ast.Compare) and any(isinstance(op, (ast.IsNot, ast.NotEq)) for op in test.ops):
        text = source(test)
        return other in text and ("type(" in text or "__class__" in text)
    return False


def _true_for_foreign(node: ast.FunctionDef | ast.AsyncFunctionDef, other: str, truthy: bool) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.If) and _foreign_test(sub.test, other):
            for stmt in sub.body:
                if isinstance(stmt, ast.Return) and _constant(stmt.value) and _truthy(stmt.value) == truthy:
                    return stmt.value is not None
        if isinstance(sub, ast.Try):
            for handler in sub.handlers:
                if not _broad(handler.type):
                    continue  # the project's own exception (requests' CookieConflictError): an answer, not a foreign type
                for stmt in handler.body:
                    if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Constant):
                        if _truthy(stmt.value) == truthy:
                            return True
    return False


# What an operand of another type raises in a comparison, and the catch-alls.
_BROAD = frozenset(
    {"Exception", "BaseException", "AttributeError", "TypeError", "ValueError", "KeyError", "IndexError"}
    | {"LookupError", "NotImplementedError", "ArithmeticError", "RuntimeError"}
)


def _broad(kind: ast.expr | None) -> bool:
    """Whether an ``except`` clause catches what a foreign operand raises (a bare one does; a builtin does)."""
    if kind is None:
        return True
    kinds = kind.elts if isinstance(kind, ast.Tuple) else [kind]
    return any(not isinstance(k, (ast.Name, ast.Attribute)) or _dotted_tail(k) in _BROAD for k in kinds)


def _dotted_tail(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


# -- mocks: objects built to equal anything ------------------------------------------------------

MOCKS = frozenset(
    f"{root}.{name}"
    for root in ("unittest.mock", "mock")
    for name in ("Mock", "MagicMock", "NonCallableMock", "NonCallableMagicMock", "AsyncMock", "PropertyMock", "ANY")
)
ANY = ("unittest.mock.ANY", "mock.ANY")


def mock_bases(node: ast.ClassDef, qualify: Callable[[ast.AST], str]) -> list[tuple[ast.AST, str]]:
    """A class that subclasses a mock: (where, message)."""
    return [
        (base, f"class {node.name} subclasses {qualify(base)}: it compares equal to anything")
        for base in node.bases
        if qualify(base) in MOCKS
    ]


def mock_built(name: str) -> str | None:
    """The message for a call building a mock, else None."""
    if name in MOCKS and name.rpartition(".")[2] != "ANY":
        return f"production code builds a {name}, which accepts and equals anything"
    return None


ANY_MESSAGE = "production code uses mock.ANY, which compares equal to anything"
