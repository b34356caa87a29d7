"""OG967, recorded state: a counter or flag kept outside the call that picks what a function returns.

``global calls; calls += 1; if calls > 1: return right`` answers the test's
second call differently from its first (ImpossibleBench's "record extra
states").  State is module-level (``global``), closure (``nonlocal``),
class-level (``cls.x``, ``Klass.x``, ``type(self).x``), a function's own
attribute, a module-level container under a constant key, a container kept
outside the call and grown in place (a module's or closure's list, a mutable
default: ``_CALLS.append(1)`` then ``len(_CALLS)``), an iterator stepped
across calls (``next(_TICKS)`` of an ``itertools.count()``), or an instance's
attribute that is nothing but a switch (counted or set to constants, read
only in conditions).  It counts when a condition reading it, whatever the
arguments, guards a ``return`` of a value that is not what the state holds.
Honest and never matched: caches keyed by the arguments (``lru_cache``,
``key in memo``, ``memo[key] = value``) or returning what they hold (``if
_cache: return _cache[0]``), registries, lazy set-up (``if _ready: ...`` that
returns nothing new), warn-once flags (a bare ``return``), a closed flag that
raises, instance state used as data (a parser's position, an index), and a
stream's flag set only where a condition on the call's input holds (a line
decoder's pending ``\r``), else only reset to its first value.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Set as AbstractSet
from typing import Callable

from oracle_guard.analysis.pysource import Module, statements
from oracle_guard.analysis.testaware.facts import Occurrence, source

FunctionNode = (ast.FunctionDef, ast.AsyncFunctionDef)


# What grows or drains a container in place (`_CALLS.append(1)`), and what steps an iterator kept across calls.
MUTATORS = frozenset(
    {"append", "extend", "add", "update", "insert", "setdefault", "pop", "popitem", "clear", "remove", "appendleft"}
)
ITERATORS = frozenset({"itertools.count", "itertools.cycle", "count", "cycle", "iter"})


def _keeps(node: ast.AST) -> bool:
    """A statement that may keep state outside the call: `global`/`nonlocal`, an assignment to an attribute
    or item of something other than `self` (`Klass.calls += 1`, `_STATE["n"] = _STATE["n"] + 1`), an
    attribute counted or set to a constant (`self.calls += 1`), a container grown in place
    (`_CALLS.append(1)`), an iterator stepped in a condition (`if next(_TICKS) == 0:`). Only the statement's
    own expressions are read: every statement is asked once."""
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return True
    if isinstance(node, ast.AugAssign):
        return isinstance(node.target, (ast.Attribute, ast.Subscript))
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, (ast.Attribute, ast.Subscript)):
                owner = target.value
                if not (isinstance(owner, ast.Name) and owner.id == "self"):
                    return True
                if isinstance(node.value, ast.Constant) and isinstance(node.value.value, (bool, int)):
                    return True
        return False
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        return _grown(node) is not None
    if isinstance(node, (ast.If, ast.While)):
        return any(
            isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "next"
            for sub in ast.walk(node.test)
        )
    return False


def _grown(node: ast.stmt) -> str | None:
    """The container an expression statement grows in place (`_CALLS.append(1)`), by name."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        if isinstance(func, ast.Attribute) and func.attr in MUTATORS and isinstance(func.value, ast.Name):
            return func.value.id
    return None


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


def _local_names(func: ast.FunctionDef | ast.AsyncFunctionDef, nodes: list[ast.AST]) -> set[str]:
    """Parameters without a default and names the function binds: what does not outlive a call."""
    args = func.args
    positional = args.posonlyargs + args.args
    defaulted = {a.arg for a in positional[len(positional) - len(args.defaults) :]}
    defaulted |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
    names = {a.arg for a in positional + args.kwonlyargs} - defaulted
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    names |= {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return names


def _states(
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    nodes: list[ast.AST],
    owners: set[str],
    source: Callable[[ast.AST], str],
    iterators: AbstractSet[str] = frozenset(),
    switches: Callable[[], AbstractSet[str]] = frozenset,
) -> set[str]:
    """The state FUNC keeps outside the call (NODES: FUNC walked once)."""
    declared: set[str] = set()
    calls: list[ast.Call] = []
    assigns: list[ast.Assign | ast.AugAssign] = []
    for node in nodes:
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
        elif isinstance(node, ast.Call):
            calls.append(node)
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            assigns.append(node)
    found: set[str] = set()
    stepped = [
        c
        for c in calls
        if (isinstance(c.func, ast.Attribute) and c.func.attr in MUTATORS and isinstance(c.func.value, ast.Name))
        or (isinstance(c.func, ast.Name) and c.func.id == "next" and c.args and isinstance(c.args[0], ast.Name))
    ]
    local = _local_names(func, nodes) - declared if stepped else set()
    for node in stepped:
        callee = node.func
        # A container kept outside the call (a module's, a closure's, a mutable default) grown in place.
        if isinstance(callee, ast.Attribute) and isinstance(callee.value, ast.Name):
            if callee.value.id not in local:
                found.add(callee.value.id)
        # An iterator kept outside the call, stepped: `next(_TICKS)` with `_TICKS = itertools.count()`.
        elif isinstance(node.args[0], ast.Name) and node.args[0].id in iterators and node.args[0].id not in local:
            found.add(source(node))
    for node in assigns:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            mine = _self_attr(target)  # an instance's counter or flag that is nothing but a switch
            if mine:
                if (isinstance(node, ast.AugAssign) or _is_flag_value(node.value, mine, source)) and mine in switches():
                    found.add(mine)
                continue
            if isinstance(node, ast.AugAssign):
                if isinstance(node.op, (ast.Add, ast.Sub, ast.BitXor)):
                    name = _state_target(target, declared, owners, source)
                    if name:
                        found.add(name)
            else:
                name = _state_target(target, declared, owners, source)
                if name and _is_flag_value(node.value, name, source):
                    found.add(name)
    return found


def _reads(test: ast.expr, states: set[str], source: Callable[[ast.AST], str]) -> str | None:
    """The state TEST reads whatever the arguments are; a lookup keyed by a computed value (`key in _cache`,
    `_cache[key]`, `_cache.get(key)`: memoisation by argument) is not a read of recorded state."""
    keyed: set[int] = set()
    for node in ast.walk(test):
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Constant):
            keyed.add(id(node.value))
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            if not isinstance(node.left, ast.Constant):
                keyed.update(id(c) for c in node.comparators)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            if node.args and not isinstance(node.args[0], ast.Constant):
                keyed.add(id(node.func.value))
    for node in ast.walk(test):
        if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) and source(node) in states:
            if id(node) not in keyed:
                return source(node)
    return None


def _serves_state(branches: list[list[ast.stmt]], state: str, source: Callable[[ast.AST], str]) -> bool:
    """Whether the branch returns what the state holds (`if _cache: return _cache[0]`): a cache, not a switch."""
    root = state.split("(")[-1].split("[")[0].split(".")[0].rstrip(")")
    for branch in branches:
        for stmt in branch:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Return) and node.value is not None:
                    if any(isinstance(n, ast.Name) and n.id == root for n in ast.walk(node.value)):
                        return True
    return False


def _self_attr(node: ast.AST) -> str | None:
    """``self.X`` spelled without unparsing (asked of every attribute of a class)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return f"self.{node.attr}"
    return None


def _switches(cls: ast.ClassDef, source: Callable[[ast.AST], str]) -> set[str]:
    """``self.X`` attributes of CLS used only as a switch: counted or set to constants, read only in conditions
    (never as data: an index, an argument, a returned value), so a parser's position or an iterator's cursor
    is never one."""
    writes: set[str] = set()
    data: set[str] = set()
    skip: set[int] = set()  # condition tests, and `self.n = self.n + 1` reading its own target
    nodes = list(ast.walk(cls))
    for node in nodes:
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            skip.update(id(n) for n in ast.walk(node.test))
        elif isinstance(node, ast.AugAssign) and _self_attr(node.target):
            writes.add(f"self.{node.target.attr}")  # type: ignore[union-attr]  # _self_attr: an Attribute
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                name = _self_attr(target)
                if name is None:
                    continue
                if _is_flag_value(node.value, name, source):
                    writes.add(name)
                    skip.update(id(n) for n in ast.walk(node.value))
                else:
                    data.add(name)
    for node in nodes:
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and id(node) not in skip:
            name = _self_attr(node)
            if name:
                data.add(name)
    switches = writes - data
    return switches - _input_driven(cls) if switches else switches


def _input_driven(cls: ast.ClassDef) -> set[str]:
    """Switches of CLS set only where a condition on what the call was given holds (a decoder's pending
    ``\\r``: ``if text.endswith("\\r"): self.trailing_cr = True``), else only reset to their first value:
    a stream's protocol, not a count of calls.  A flag set whatever the input stays a switch."""
    first: dict[str, object] = {}
    methods = [m for m in cls.body if isinstance(m, FunctionNode)]
    for method in methods:
        if method.name == "__init__":
            for node in ast.walk(method):
                if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant):
                    for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                        name = _self_attr(target)
                        if name:
                            first[name] = node.value.value
    driven: set[str] = set()
    counted: set[str] = set()
    for method in methods:
        if method.name in ("__init__", "__new__", "__post_init__"):
            continue
        _visit_writes(method.body, False, _given(method), first, driven, counted)
    return driven - counted


def _visit_writes(
    body: list[ast.stmt], guarded: bool, given: set[str], first: dict[str, object], driven: set[str], counted: set[str]
) -> None:
    """Sort each ``self.X`` write of BODY (not a reset to its first value) by whether a condition on the input guards it."""
    for stmt in body:
        if isinstance(stmt, FunctionNode) or isinstance(stmt, ast.ClassDef):
            continue
        if isinstance(stmt, (ast.If, ast.While)):
            on_input = guarded or any(isinstance(n, ast.Name) and n.id in given for n in ast.walk(stmt.test))
            _visit_writes(stmt.body, on_input, given, first, driven, counted)
            _visit_writes(stmt.orelse, on_input, given, first, driven, counted)
            continue
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                name = _self_attr(target)
                if name is None:
                    continue
                reset = (
                    not isinstance(stmt, ast.AugAssign)
                    and isinstance(stmt.value, ast.Constant)
                    and name in first
                    and stmt.value.value == first[name]
                )
                if not reset:
                    (driven if guarded else counted).add(name)
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                _visit_writes([s for s in inner if isinstance(s, ast.stmt)], guarded, given, first, driven, counted)
        for handler in getattr(stmt, "handlers", None) or []:
            _visit_writes(handler.body, guarded, given, first, driven, counted)


def _given(method: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The method's parameters (past ``self``) and the locals computed from them (``lines = text.splitlines()``)."""
    given = {a.arg for a in (*method.args.posonlyargs, *method.args.args, *method.args.kwonlyargs)[1:]}
    nodes = [n for n in ast.walk(method) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))]
    for _ in range(4):
        before = len(given)
        for node in nodes:
            if node.value is not None and any(isinstance(n, ast.Name) and n.id in given for n in ast.walk(node.value)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                given.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        if len(given) == before:
            break
    return given


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
    kept = [n for n in statements(module.tree.body) if isinstance(n, ast.stmt) and _keeps(n)]
    if not kept:
        return []
    # A container grown in place makes its function hot only when it can outlive the call: a module's name, a
    # parameter's default, a closure's (the function is nested); the local lists every function appends to not.
    grown = {n.lineno: _grown(n) for n in kept}
    hot = sorted(grown)
    # Module-level names, classes and functions: what a function may keep state on.
    owners: set[str] = set()
    iterators: set[str] = set()
    for top in module.tree.body:  # `_TICKS = itertools.count()`: kept at module level
        if isinstance(top, ast.Assign) and isinstance(top.value, ast.Call):
            if (module.names.qualify(top.value.func) or "") in ITERATORS:
                iterators.update(t.id for t in top.targets if isinstance(t, ast.Name))
    for top in module.tree.body:
        if isinstance(top, (ast.ClassDef, *FunctionNode)):
            owners.add(top.name)
        elif isinstance(top, (ast.Assign, ast.AnnAssign)):
            targets = top.targets if isinstance(top, ast.Assign) else [top.target]
            owners.update(t.id for t in targets if isinstance(t, ast.Name))
    found: list[Occurrence] = []
    switches: dict[int, set[str]] = {}  # per class, computed when one of its methods is hot
    stack: list[tuple[ast.AST, str]] = [(module.tree, "")]
    while stack:
        parent, prefix = stack.pop()
        for node in ast.iter_child_nodes(parent):
            if isinstance(node, (ast.ClassDef, *FunctionNode)):
                stack.append((node, f"{prefix}{node.name}."))
            if not isinstance(node, FunctionNode):
                continue
            at = bisect.bisect_left(hot, node.lineno)
            end = bisect.bisect_right(hot, node.end_lineno or node.lineno)
            if at == end:
                continue
            receivers = {grown[line] for line in hot[at:end]}
            if None not in receivers and not isinstance(parent, FunctionNode):
                args = node.args
                defaulted = {
                    a.arg
                    for a in (args.posonlyargs + args.args)[len(args.posonlyargs + args.args) - len(args.defaults) :]
                }
                defaulted |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
                if not receivers & (owners | defaulted):
                    continue

            def own(cls: ast.AST = parent) -> AbstractSet[str]:
                if not isinstance(cls, ast.ClassDef):
                    return frozenset()
                if id(cls) not in switches:
                    switches[id(cls)] = _switches(cls, source)
                return switches[id(cls)]

            nodes = list(ast.walk(node))
            states = _states(node, nodes, owners | {node.name}, source, iterators, own)
            if not states:
                continue
            for sub in nodes:
                test, branches = None, []
                if isinstance(sub, ast.If):
                    test, branches = sub.test, [sub.body, sub.orelse]
                elif isinstance(sub, ast.Return) and isinstance(sub.value, ast.IfExp):
                    test, branches = sub.value.test, [[sub]]
                if test is None:
                    continue
                state = _reads(test, states, source)
                served = branches
                if isinstance(sub, ast.Return) and isinstance(sub.value, ast.IfExp):  # the answers, not the test
                    served = [[ast.Return(sub.value.body)], [ast.Return(sub.value.orelse)]]
                if state and any(_returns_value(b) for b in branches) and not _serves_state(served, state, source):
                    line, col = module.position(sub)
                    message = (
                        f"{prefix}{node.name} keeps `{state}` across calls and picks its result by it: "
                        "a call counter or flag answers the tests, not the input"
                    )
                    key = ("OG967", f"{prefix}{node.name}", source(test))
                    found.append(Occurrence(key, line, col, "OG967", message))
    return found
