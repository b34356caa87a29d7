"""OG967, recorded state: a counter or flag kept outside the call that picks what a function returns.

``global calls; calls += 1; if calls > 1: return right`` answers the test's
second call differently from its first (ImpossibleBench's "record extra
states").  State is module-level (``global``), closure (``nonlocal``),
class-level (``cls.x``, ``Klass.x``, ``type(self).x``), a function's own
attribute, or a module-level container under a constant key; it is a counter
or flag when the function adds to it or sets it to a constant.  It counts
when a condition reading it guards a ``return`` of a value.  Honest and
never matched: caches keyed by the arguments (``lru_cache``, ``memo[key] =
value``), registries, lazy set-up (``if _ready: ...`` that returns nothing
new), warn-once flags (a bare ``return``), and instance state (``self.x``).
"""

from __future__ import annotations

import ast
import bisect
from typing import Callable

from oracle_guard.analysis.pysource import Module, statements
from oracle_guard.analysis.testaware.facts import Occurrence, source

FunctionNode = (ast.FunctionDef, ast.AsyncFunctionDef)


def _keeps(node: ast.AST) -> bool:
    """A statement that may keep state outside the call: `global`/`nonlocal`, or an assignment to an attribute
    or item of something other than `self` (`Klass.calls += 1`, `_STATE["n"] = _STATE["n"] + 1`)."""
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return True
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
    for target in targets:
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            owner = target.value
            if not (isinstance(owner, ast.Name) and owner.id == "self"):
                return True
    return False


def _is_flag_value(value: ast.expr, name: str, source: Callable[[ast.AST], str]) -> bool:
    """A constant, ``not X`` or ``X + 1``: what a counter or a flag is set to."""
    if isinstance(value, ast.Constant) and isinstance(value.value, (bool, int, float)):
        return True
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
        return source(value.operand) == name
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub)):
        return source(value.left) == name and isinstance(value.right, ast.Constant)
    return False


def _state_target(
    target: ast.expr, declared: set[str], owners: set[str], source: Callable[[ast.AST], str]
) -> str | None:
    """The spelling of TARGET when it is state kept outside the call, else None."""
    if isinstance(target, ast.Name):
        return target.id if target.id in declared else None
    if isinstance(target, ast.Attribute):
        owner = source(target.value)
        if owner in owners or owner in ("cls", "type(self)", "self.__class__", "__class__"):
            return source(target)
        return None
    if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
        if isinstance(target.value, ast.Name) and target.value.id in owners:
            return source(target)
    return None


def _states(
    func: ast.FunctionDef | ast.AsyncFunctionDef, owners: set[str], source: Callable[[ast.AST], str]
) -> set[str]:
    declared: set[str] = set()
    for node in ast.walk(func):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
    found: set[str] = set()
    for node in ast.walk(func):
        if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Add, ast.Sub, ast.BitXor)):
            name = _state_target(node.target, declared, owners, source)
            if name:
                found.add(name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                name = _state_target(target, declared, owners, source)
                if name and _is_flag_value(node.value, name, source):
                    found.add(name)
    return found


def _reads(test: ast.expr, states: set[str], source: Callable[[ast.AST], str]) -> str | None:
    for node in ast.walk(test):
        if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) and source(node) in states:
            return source(node)
    return None


def _returns_value(body: list[ast.stmt]) -> bool:
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Return) and node.value is not None:
                if not (isinstance(node.value, ast.Constant) and node.value.value is None):
                    return True
    return False


def toggles(module: Module) -> list[Occurrence]:
    """OG967 occurrences in MODULE."""
    # Only functions with a line that could keep state are walked.
    hot = sorted({n.lineno for n in statements(module.tree.body) if isinstance(n, ast.stmt) and _keeps(n)})
    if not hot:
        return []
    # Module-level names, classes and functions: what a function may keep state on.
    owners: set[str] = set()
    for top in module.tree.body:
        if isinstance(top, (ast.ClassDef, *FunctionNode)):
            owners.add(top.name)
        elif isinstance(top, (ast.Assign, ast.AnnAssign)):
            targets = top.targets if isinstance(top, ast.Assign) else [top.target]
            owners.update(t.id for t in targets if isinstance(t, ast.Name))
    found: list[Occurrence] = []
    stack: list[tuple[ast.AST, str]] = [(module.tree, "")]
    while stack:
        parent, prefix = stack.pop()
        for node in ast.iter_child_nodes(parent):
            if isinstance(node, (ast.ClassDef, *FunctionNode)):
                stack.append((node, f"{prefix}{node.name}."))
            if not isinstance(node, FunctionNode):
                continue
            at = bisect.bisect_left(hot, node.lineno)
            if at == len(hot) or hot[at] > (node.end_lineno or node.lineno):
                continue
            states = _states(node, owners | {node.name}, source)
            if not states:
                continue
            for sub in ast.walk(node):
                test, branches = None, []
                if isinstance(sub, ast.If):
                    test, branches = sub.test, [sub.body, sub.orelse]
                elif isinstance(sub, ast.Return) and isinstance(sub.value, ast.IfExp):
                    test, branches = sub.value.test, [[sub]]
                if test is None:
                    continue
                state = _reads(test, states, source)
                if state and any(_returns_value(b) for b in branches):
                    line, col = module.position(sub)
                    message = (
                        f"{prefix}{node.name} keeps `{state}` across calls and picks its result by it: "
                        "a call counter or flag answers the tests, not the input"
                    )
                    key = ("OG967", f"{prefix}{node.name}", source(test))
                    found.append(Occurrence(key, line, col, "OG967", message))
    return found
