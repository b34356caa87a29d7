"""Which attributes a test's checks compare, through the helpers it calls: for shared helpers that loop.

``assert_same(a, b, ["name", "email"])`` where ``assert_same`` loops over the names
and compares ``getattr(a, name) == getattr(b, name)`` checks as many values as the
two asserts it replaced (oracle_guard.analysis.checksites counts them); it checks the
*same* values only if every attribute the base compared is still passed.  This module
names the attributes on both sides: ``a.email`` in a check (an attribute of a local
value, not of an imported module), ``getattr(a, "email")``, and ``getattr(a, name)``
with ``name`` looping over strings the caller passes.  oracle-shrink asks only for a
test whose new version passes names to such a helper, so no other test pays for it.
"""

from __future__ import annotations

import ast

from oracle_guard.analysis.checksites import CheckSites, live_nodes
from oracle_guard.analysis.pysource import FunctionNode

MAX_DEPTH = 3  # helpers of helpers of helpers: as deep as check counting follows them for names
NameSet = frozenset[str]


def passes_names(sites: CheckSites, fn: FunctionNode) -> bool:
    """Whether FN hands a call names spelled out (a literal of strings, a module constant bound to one, or
    two string arguments): a cheap test before following any helper."""
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        if sum(1 for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)) >= 2:
            return True
        for value in [*node.args, *(k.value for k in node.keywords)]:
            if isinstance(value, ast.Name) and isinstance(
                sites.constants.get(value.id), (ast.List, ast.Tuple, ast.Set)
            ):
                return True
            if isinstance(value, (ast.List, ast.Tuple, ast.Set)) and any(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
            ):
                return True
    return False


def _spelled_loops(sites: CheckSites, fn: FunctionNode, cls: ast.ClassDef | None) -> dict[str, NameSet]:
    """Loop variable -> the strings FN's own source says its loop runs over (a literal, a default, a module
    constant, a class attribute: oracle_guard.analysis.loopitems)."""
    found: dict[str, NameSet] = {}
    for node in ast.walk(fn):
        if isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.target, ast.Name):
            items = sites.loops.items(node.iter, fn, cls) or []
            strings = frozenset(e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str))
            if strings:
                found[node.target.id] = strings
    return found


def loops_over_names(sites: CheckSites, fn: FunctionNode, cls: ast.ClassDef | None) -> bool:
    """Whether FN itself loops over names its source spells (then what it compares can be named)."""
    return bool(_spelled_loops(sites, fn, cls))


def compared_names(sites: CheckSites, fn: FunctionNode, cls: ast.ClassDef | None) -> tuple[NameSet, bool]:
    """(attribute names FN's checks compare, whether any came from names passed to a looping helper)."""
    return _names(sites, fn, cls, {}, 0)


def _names(
    sites: CheckSites, fn: FunctionNode, cls: ast.ClassDef | None, passed: dict[str, NameSet], depth: int
) -> tuple[NameSet, bool]:
    loops = dict(_spelled_loops(sites, fn, cls))  # loop variable -> the strings its loop runs over
    for node in ast.walk(fn):
        if (
            isinstance(node, (ast.For, ast.AsyncFor))
            and isinstance(node.target, ast.Name)
            and isinstance(node.iter, ast.Name)
            and node.iter.id in passed
        ):
            loops[node.target.id] = passed[node.iter.id]
    found: set[str] = set()
    via_loop = False
    for node in live_nodes(fn.body):
        if isinstance(node, ast.Assert):
            names, looped = _attributes(sites, node.test, loops)
        elif isinstance(node, ast.Call):
            names, looped = _call_names(sites, node, cls, loops, depth)
        else:
            continue
        found |= names
        via_loop = via_loop or looped
    return frozenset(found), via_loop


def _call_names(
    sites: CheckSites, call: ast.Call, cls: ast.ClassDef | None, loops: dict[str, NameSet], depth: int
) -> tuple[NameSet, bool]:
    """Names a call compares: a unittest-style assertion's arguments, or what the helper it calls compares."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr.startswith("assert"):
        names: set[str] = set()
        looped = False
        for arg in call.args:
            found, via = _attributes(sites, arg, loops)
            names |= found
            looped = looped or via
        if not (isinstance(func.value, ast.Name) and func.value.id in ("self", "cls")):
            return frozenset(names), looped
        if sites._method(cls, func.attr) is None:
            return frozenset(names), looped  # self.assertEqual(...): unittest's own
    if depth >= MAX_DEPTH:
        return frozenset(), False
    callee = _callee(sites, call, cls)
    if callee is None:
        return frozenset(), False
    other, helper, helper_cls, bound_first = callee
    strings = {
        name: frozenset(e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str))
        for name, items in sites.passed_items(call, helper, bound_first).items()
    }
    return _names(other, helper, helper_cls, strings, depth + 1)


def _callee(
    sites: CheckSites, call: ast.Call, cls: ast.ClassDef | None
) -> tuple[CheckSites, FunctionNode, ast.ClassDef | None, bool] | None:
    """The helper CALL runs: a method through self/cls, a function of the module, or one imported from the repository."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
        method = sites._method(cls, func.attr)
        return (sites, method, cls, True) if method is not None else None
    if (
        isinstance(func, ast.Name)
        and func.id in sites.functions
        and sites.names.aliases.get(func.id, func.id) == func.id
    ):
        return sites, sites.functions[func.id], None, False
    name = sites.names.qualify(func) or ""
    if sites.helpers is None or not name or name.startswith(("pytest.", "unittest.", "hypothesis.")):
        return None
    found = sites.helpers.resolve(sites.module.path, name)
    if found is None:
        return None
    other, helper = found
    return CheckSites(other, sites.helpers), helper, None, False


def _attributes(sites: CheckSites, expr: ast.AST, loops: dict[str, NameSet]) -> tuple[NameSet, bool]:
    """Attributes of local values EXPR compares (`a.email`, `getattr(a, "email")`, `getattr(a, name)`).

    A method called (`obj.compute()`) is not one: its result may be checked under another name later.
    """
    found: set[str] = set()
    looped = False
    called = {id(n.func) for n in ast.walk(expr) if isinstance(n, ast.Call)}  # `obj.compute()`: a method, no value
    for node in ast.walk(expr):
        if (
            isinstance(node, ast.Attribute)
            and id(node) not in called
            and isinstance(node.value, ast.Name)
            and node.value.id not in sites.names.aliases  # `math.pi`: a module's, not a compared value's
            and node.value.id not in ("self", "cls")
        ):
            found.add(node.attr)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
        ):
            key = node.args[1]
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                found.add(key.value)
            elif isinstance(key, ast.Name) and key.id in loops:
                found |= loops[key.id]
                looped = True
    return frozenset(found), looped
