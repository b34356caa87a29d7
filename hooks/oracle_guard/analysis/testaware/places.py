"""Where a tested input could pick a production function's result: the production side of OG966.

Each condition (``if``/``elif``, a conditional expression, ``while``) that compares a parameter-derived
value with a non-trivial literal, each ``match`` on one, each lookup of a constant table with a
parameter-derived key (in the function, in a memoising decorator's wrapper, behind an ``except``):
oracle_guard/analysis/testaware/cases.py evaluates them at the base tests' calls.
"""

from __future__ import annotations

import ast
import bisect
import sys
from collections.abc import Iterator
from typing import Any, Callable, NamedTuple

from oracle_guard.analysis.pysource import Module
from oracle_guard.analysis.testaware.evidence import MISSING, SeenCall
from oracle_guard.analysis.testaware.keyflow import Scope, derive, own_nodes

# `match` statements exist from Python 3.10; on 3.9 no node is one.
MATCH: tuple[type[ast.AST], ...] = (ast.Match,) if sys.version_info >= (3, 10) else ()

_PINS = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot, ast.In, ast.NotIn)
_BROAD = frozenset(
    "Exception BaseException OSError IOError ConnectionError TimeoutError URLError HTTPError RequestException "
    "socket.error error timeout".split()
)


class Candidate(NamedTuple):
    """A place in a production function where a tested input could pick the result."""

    function: str  # the name tests call it by
    qualname: str
    node: ast.AST  # where to report, and its identity
    kind: str  # "branch", "match", "table", "fallback"
    scope: Scope
    key: ast.AST | None  # the condition (branch), the subject (match), the key (table)
    pins: frozenset[Any]  # the non-trivial literals a condition compares a derived value with
    table: dict[Any, Any] | None  # the rows (table, fallback)
    binder: Callable[[SeenCall], dict[str, Any] | None] | None = None  # a decorator's wrapper sees the args
    other_exit: bool = True  # a table: the function computes otherwise too (a memo, a default, another return)
    func: ast.AST | None = None  # the function it is in


def trivial(value: Any) -> bool:
    """A base case every implementation spells (None, booleans, 0, 1, -1, empty values): never a learned input."""
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, (int, float)):
        return value in (0, 1, -1)
    if isinstance(value, (str, bytes, tuple, list, frozenset, dict)):
        return len(value) == 0 or (isinstance(value, tuple) and all(trivial(v) for v in value))
    return False


def hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _members(value: Any) -> list[Any]:
    """What ``x in VALUE`` can select: a collection's members (a string's are substrings: none)."""
    return list(value) if isinstance(value, (frozenset, set, list, dict, tuple)) else []


# -- the production side --------------------------------------------------------------------------------------


def _pins(test: ast.AST, scope: Scope, consts: dict[str, Any]) -> frozenset[Any]:
    """The non-trivial literals TEST compares a parameter-derived value with by (in)equality or membership."""
    found: set[Any] = set()
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        for op, left, right in zip(node.ops, sides, sides[1:]):
            if not isinstance(op, _PINS):
                continue
            pairs = [(left, right)] if isinstance(op, (ast.In, ast.NotIn)) else [(left, right), (right, left)]
            for key, literal in pairs:
                if scope.flows_from_params(key) and not scope.flows_from_params(literal):
                    fixed = derive(literal, {}, scope, consts)  # a literal, a module constant, a local table
                    if fixed is MISSING:
                        continue
                    members = _members(fixed) if isinstance(op, (ast.In, ast.NotIn)) else [fixed]
                    found.update(m for m in members if hashable(m) and not trivial(m))
    return frozenset(found)


def _lookups(node: ast.AST, scope: Scope, consts: dict[str, Any]) -> Iterator[tuple[ast.AST, ast.AST, dict[Any, Any]]]:
    """``TABLE[key]``, ``TABLE.get(key)``, ``key in TABLE`` on a constant dict: (where, key, rows)."""
    table_node, key = None, None
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        table_node, key = node.value, node.slice
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
        table_node, key = node.func.value, node.args[0]
    if table_node is None or key is None or not scope.flows_from_params(key):
        return
    rows: Any = MISSING
    if isinstance(table_node, (ast.Name, ast.Dict)):
        rows = derive(table_node, {}, scope, consts)
    elif isinstance(table_node, ast.Attribute) and isinstance(table_node.value, ast.Name):
        rows = consts.get(f"{table_node.value.id}.{table_node.attr}", MISSING)  # a memo class's own table
    if isinstance(rows, dict) and rows:
        yield node, key, rows


def first_return(body: list[ast.stmt]) -> ast.expr | None:
    for stmt in body:
        if isinstance(stmt, ast.Return):
            return stmt.value
        if isinstance(stmt, (ast.Raise, ast.Continue, ast.Break)):
            return None
    return None


def other_exit(func: ast.AST, branch: ast.AST) -> bool:
    """Whether FUNC has a way out besides BRANCH: the general computation the branch skips."""
    inside = {id(n) for n in ast.walk(branch)}
    return any(isinstance(n, (ast.Return, ast.Raise)) and id(n) not in inside for n in own_nodes(func)) or (
        isinstance(func, ast.Lambda)
    )


def _statement_of(func: ast.AST, node: ast.AST) -> ast.AST:
    """The return or raise of FUNC that holds NODE (a lookup in it is that way out), else NODE."""
    for stmt in own_nodes(func):
        if isinstance(stmt, (ast.Return, ast.Raise)) and any(n is node for n in ast.walk(stmt)):
            return stmt
    return node


def _computed_default(node: ast.AST, scope: Scope) -> bool:
    """``TABLE.get(key, <computed from the parameters>)``: the table answers first, the computation otherwise."""
    return isinstance(node, ast.Call) and len(node.args) > 1 and scope.flows_from_params(node.args[1])


def _handler_broad(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(ast.unparse(t).rpartition(".")[2] in _BROAD or ast.unparse(t) in _BROAD for t in types)


def _maybe(node: ast.AST, consts: dict[str, Any]) -> bool:
    """A cheap look before any data flow: a condition comparing with a non-trivial constant, a match, a lookup in
    a constant dict (most functions have none, and are never scoped)."""
    if isinstance(node, (ast.If, ast.IfExp, ast.While)):
        for sub in ast.walk(node.test):
            if isinstance(sub, ast.Compare) and any(isinstance(op, _PINS) for op in sub.ops):
                for side in [sub.left, *sub.comparators]:
                    if isinstance(side, ast.Constant) and not trivial(side.value):
                        return True
                    if isinstance(side, (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Subscript, ast.UnaryOp)):
                        return True
                    if isinstance(side, ast.Name):  # a module constant or a local table: the scope decides
                        return True
        return False
    if isinstance(node, MATCH):
        return True
    table = None
    if isinstance(node, ast.Subscript):
        table = node.value
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        table = node.func.value
    # A name: a module table, or a dict the function itself binds (the scope resolves it, if it is one).
    return isinstance(table, (ast.Dict, ast.Name))


def _function_candidates(
    func: ast.FunctionDef | ast.AsyncFunctionDef, name: str, qual: str, method: bool, consts: dict[str, Any]
) -> list[Candidate]:
    nodes = own_nodes(func)
    maybe = [n for n in nodes if _maybe(n, consts)]
    if not maybe:
        return []
    scope = Scope(func, method, nodes)
    if not scope.params:
        return []  # nothing the tests pass can pick a branch or a row
    found: list[Candidate] = []
    handlers = set()
    for node in nodes:
        if isinstance(node, ast.ExceptHandler) and _handler_broad(node):
            handlers |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    for node in maybe:
        if isinstance(node, (ast.If, ast.IfExp, ast.While)):
            pins = _pins(node.test, scope, consts)
            if pins:
                found.append(Candidate(name, qual, node, "branch", scope, node.test, pins, None, func=func))
        elif isinstance(node, MATCH):
            assert isinstance(node, ast.Match)
            if scope.flows_from_params(node.subject):
                found.append(Candidate(name, qual, node, "match", scope, node.subject, frozenset(), None, func=func))
        else:
            for where, key, rows in _lookups(node, scope, consts):
                kind = "fallback" if id(where) in handlers else "table"
                other = other_exit(func, _statement_of(func, where)) or _computed_default(where, scope)
                found.append(Candidate(name, qual, where, kind, scope, key, frozenset(), rows, None, other, func))
    return found


def _memo_candidates(
    module: Module, func: ast.FunctionDef | ast.AsyncFunctionDef, qual: str, consts: dict[str, Any]
) -> list[Candidate]:
    """A memoising decorator pre-loaded with answers: ``@memo({(5,): 120})``, or a decorator of this module (a
    function or a class) whose wrapper looks its ``*args`` up in a constant table."""
    found = []
    decorators = {
        n.name: n for n in module.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    for decorator in func.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(decorator, ast.Call):
            for arg in [*decorator.args, *(k.value for k in decorator.keywords)]:
                rows = derive(arg, {}, None, consts)
                if isinstance(rows, dict) and rows:
                    wrapper = ast.Lambda(args=func.args, body=ast.Constant(None))
                    scope = Scope(wrapper, False)
                    found.append(Candidate(func.name, qual, arg, "memo", scope, None, frozenset(), rows))
        outer = decorators.get(target.id) if isinstance(target, ast.Name) else None
        for inner in ast.walk(outer) if outer is not None else ():
            if (
                not isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef))
                or inner is outer
                or not inner.args.vararg
            ):
                continue
            scope = Scope(inner, isinstance(outer, ast.ClassDef))
            tables = {**consts, **_own_tables(outer, consts)} if isinstance(outer, ast.ClassDef) else consts
            for node in own_nodes(inner):
                for where, key, rows in _lookups(node, scope, tables):
                    vararg, kwarg = scope.vararg, scope.kwarg

                    def binder(
                        call: SeenCall, vararg: str | None = vararg, kwarg: str | None = kwarg
                    ) -> dict[str, Any]:
                        env: dict[str, Any] = {vararg or "\0": tuple(call.args)}
                        if kwarg:
                            env[kwarg] = dict(call.kwargs)
                        return env

                    found.append(Candidate(func.name, qual, where, "table", scope, key, frozenset(), rows, binder))
    return found


def _own_tables(cls: ast.ClassDef, consts: dict[str, Any]) -> dict[str, Any]:
    """``self.NAME`` -> the dict a class's methods (or its body) bind NAME to: a memo class's pre-loaded cache."""
    found: dict[str, Any] = {}
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            name = None
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                name = target.attr
            elif isinstance(target, ast.Name) and node in cls.body:
                name = target.id
            rows = derive(node.value, {}, None, consts) if name else MISSING
            if name and isinstance(rows, dict):
                found[f"self.{name}"] = rows
    return found


def changed_lines(module: Module, before: frozenset[bytes] | None) -> list[int] | None:
    """The sorted lines of MODULE not in its base version, or None when every function must be judged: a new file,
    or a changed module-level statement that may hold a table (imports, definitions and docstrings hold none)."""
    if before is None:
        return None
    lines = module.source.splitlines()
    changed = [n for n, line in enumerate(lines, 1) if line.strip() and line.strip() not in before]
    for stmt in module.tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        at = bisect.bisect_left(changed, stmt.lineno)
        if at < len(changed) and changed[at] <= (stmt.end_lineno or stmt.lineno):
            return None
    return changed


def _touched(func: ast.FunctionDef | ast.AsyncFunctionDef, changed: list[int] | None) -> bool:
    """Whether the change may have added something to FUNC (a decorated function is always judged: its decorator
    may be what changed)."""
    if changed is None or func.decorator_list:
        return True
    at = bisect.bisect_left(changed, func.lineno)
    return at < len(changed) and changed[at] <= (func.end_lineno or func.lineno)


def candidates(module: Module, consts: dict[str, Any], changed: list[int] | None = None) -> list[Candidate]:
    """The places in MODULE's functions (those holding a CHANGED line, when given) where a tested input could
    pick the result."""
    found: list[Candidate] = []
    stack: list[tuple[ast.AST, str, bool]] = [(module.tree, "", False)]
    while stack:
        parent, prefix, in_class = stack.pop()
        for func in ast.iter_child_nodes(parent):
            if isinstance(func, ast.ClassDef):
                stack.append((func, f"{prefix}{func.name}.", True))
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            stack.append((func, f"{prefix}{func.name}.", False))
            called = func.name
            if in_class and func.name in ("__init__", "__new__") and isinstance(parent, ast.ClassDef):
                called = parent.name  # tests call the class
            elif func.name.startswith("__") and func.name.endswith("__"):
                continue  # an operator or protocol method: no test calls it by that name
            if not _touched(func, changed):
                continue
            found += _function_candidates(func, called, prefix + func.name, in_class, consts)
            if func.decorator_list:
                found += _memo_candidates(module, func, prefix + func.name, consts)
    return found
