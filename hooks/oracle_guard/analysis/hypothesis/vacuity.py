"""Whether a property's body can fail at all (properties-monotonic's vacuous property).

A body with no call into the code under test, no check that can be false and
nothing that can raise is no oracle, however many examples run it.
"""

from __future__ import annotations

import ast
from typing import Callable

from oracle_guard.analysis.pysource import FunctionNode, Names

# -- vacuity -----------------------------------------------------------------------

# Calls that cannot make a property fail: they record, filter or look at a type.
_INERT_CALLS = {
    "hypothesis.assume",
    "hypothesis.reject",
    "hypothesis.note",
    "hypothesis.event",
    "hypothesis.target",
    "print",
    "isinstance",
    "issubclass",
    "type",
    "id",
    "callable",
}
_BROAD = {"Exception", "BaseException"}


def vacuous(fn: FunctionNode, names: Names, tautology: Callable[[ast.expr], bool] | None = None) -> bool:
    """Whether nothing in FN's body can fail: no call into the code under test, no
    check that can be false, nothing that can raise.  A crash-only property (it calls
    the code and relies on its exceptions: "only ParseError may escape") is an oracle;
    ``pass``, ``assert True``, ``out = s; assert out == s`` and a body whose every
    failure is swallowed by ``except Exception: pass`` are not.  TAUTOLOGY says which
    assert conditions can never be false (oracle-shrink's OG308 notion)."""
    return _inert_block(fn.body, names, tautology or _always_true)


def _always_true(test: ast.expr) -> bool:
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Eq, ast.Is, ast.LtE, ast.GtE))
    ):
        return isinstance(test.left, ast.Name) and ast.dump(test.left) == ast.dump(test.comparators[0])
    return False


def _inert_block(body: list[ast.stmt], names: Names, tautology: Callable[[ast.expr], bool]) -> bool:
    for stmt in body:
        if isinstance(stmt, (ast.Return, ast.Continue, ast.Break)):
            return stmt.value is None or _harmless(stmt.value, names) if isinstance(stmt, ast.Return) else True
        if not _inert(stmt, names, tautology):
            return False
    return True


def _inert(stmt: ast.stmt, names: Names, tautology: Callable[[ast.expr], bool]) -> bool:
    if isinstance(stmt, (ast.Pass, ast.FunctionDef, ast.AsyncFunctionDef, ast.Global, ast.Nonlocal)):
        return True  # defining a function runs nothing
    if isinstance(stmt, ast.Expr):
        return _harmless(stmt.value, names)
    if isinstance(stmt, ast.Assert):
        return _harmless(stmt.test, names) and tautology(stmt.test)
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return all(isinstance(t, ast.Name) for t in targets) and (stmt.value is None or _harmless(stmt.value, names))
    if isinstance(stmt, ast.If):
        if isinstance(stmt.test, ast.Constant):
            return _inert_block(stmt.body if stmt.test.value else stmt.orelse, names, tautology)
        return (
            _harmless(stmt.test, names)
            and _inert_block(stmt.body, names, tautology)
            and _inert_block(stmt.orelse, names, tautology)
        )
    if isinstance(stmt, ast.For):
        return (
            _harmless(stmt.iter, names)
            and isinstance(stmt.target, ast.Name)
            and _inert_block(stmt.body + stmt.orelse, names, tautology)
        )
    if isinstance(stmt, ast.Try):
        swallowed = any(h.type is None or _broad(h.type, names) for h in stmt.handlers)
        handlers = all(_inert_block(h.body, names, tautology) for h in stmt.handlers)
        body = swallowed or _inert_block(stmt.body + stmt.orelse, names, tautology)
        return (
            body
            and handlers
            and _inert_block(stmt.orelse if swallowed else [], names, tautology)
            and _inert_block(stmt.finalbody, names, tautology)
        )
    if isinstance(stmt, ast.With):
        suppress = [
            i.context_expr
            for i in stmt.items
            if isinstance(i.context_expr, ast.Call)
            and (names.qualify(i.context_expr.func) or "") == "contextlib.suppress"
        ]
        if len(suppress) == len(stmt.items) and all(any(_broad(a, names) for a in call.args) for call in suppress):
            return True  # every failure inside is swallowed
        return False  # entering a context runs code
    return False  # a call, a raise, an import, a del, a loop over something computed: it can fail


def _broad(node: ast.expr, names: Names) -> bool:
    elts = node.elts if isinstance(node, ast.Tuple) else [node]
    return any((names.qualify(e) or "").rsplit(".", 1)[-1] in _BROAD for e in elts)


def _harmless(node: ast.expr, names: Names) -> bool:
    """An expression that cannot raise: names, literals, and comparisons or calls of them that only look."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call):
            if (names.qualify(inner.func) or "") not in _INERT_CALLS:
                return False
        elif not isinstance(
            inner,
            (
                ast.Name,
                ast.Constant,
                ast.Tuple,
                ast.List,
                ast.Set,
                ast.Dict,
                ast.BoolOp,
                ast.UnaryOp,
                ast.Compare,
                ast.expr_context,
                ast.boolop,
                ast.unaryop,
                ast.cmpop,
                ast.keyword,
                ast.Starred,
            ),
        ):
            return False  # attribute access, subscripts, arithmetic and formatting run the objects' own code
    return True
