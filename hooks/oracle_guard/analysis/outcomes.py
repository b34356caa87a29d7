"""What a test demands of each call it checks: a value, or an exception (OG314).

A test handed a failing ``assert parse("-1") == "neg"`` can go green by
expecting what the code does instead: ``with pytest.raises(ValueError):
parse("-1")``.  Nothing is lost by count and no constant was rewritten, yet the
same call on the same inputs is now expected to do something else.  The
reverse (a raises check turned into a value check of the call that no longer
raises) is the same cheat.  Each call is keyed by its text with the test's
local names resolved, so ``r = parse("-1"); assert r == "neg"`` demands a value
of ``parse("-1")`` as ``assert parse("-1") == "neg"`` does.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from oracle_guard.analysis.meaning import checks as meaning
from oracle_guard.analysis.pysource import FunctionNode

# Context managers and callables that expect an exception, by qualified or method name.
RAISES = {"pytest.raises"}
UNITTEST_RAISES = {"assertRaises", "assertRaisesRegex", "assertRaisesRegexp"}


class Demand(NamedTuple):
    call: str  # the call's key: ast.dump with the test's locals resolved
    shown: str  # the call as written
    node: ast.AST  # the check site
    raises: str  # the expected exception for a raises demand, "" for a value demand
    callnode: ast.Call


def _resolve(node: ast.expr, env: dict[str, ast.expr]) -> ast.expr:
    for _ in range(4):
        if isinstance(node, ast.Name) and node.id in env and isinstance(env[node.id], ast.Call):
            node = env[node.id]
        else:
            break
    return node


def _raises_kind(call: ast.Call, scope: meaning.Scope) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in UNITTEST_RAISES:
        return True
    return (scope.names.qualify(func) or "") in RAISES


def demands(fn: FunctionNode, scope: meaning.Scope, cls: ast.ClassDef | None) -> list[Demand]:
    """Every call FN checks, with what it demands of it."""
    env = meaning.bindings(fn, scope)[0]
    out: list[Demand] = []
    for cmp in meaning.comparisons(fn, scope, cls):
        for side in (cmp.left, cmp.right):
            side = _resolve(side, env)
            if isinstance(side, ast.Call) and not _raises_kind(side, scope):
                out.append(Demand(ast.dump(side), ast.unparse(side), cmp.node, "", side))
    for node in ast.walk(fn):
        if isinstance(node, ast.Assert):
            test = node.test.operand if isinstance(node.test, ast.UnaryOp) else node.test
            test = _resolve(test, env)
            if isinstance(test, ast.Call):  # `assert ok(x)`: the truth of its value
                out.append(Demand(ast.dump(test), ast.unparse(test), node, "", test))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                expr = item.context_expr
                if isinstance(expr, ast.Call) and _raises_kind(expr, scope) and expr.args:
                    expected = ast.unparse(expr.args[0])
                    for inner in node.body:
                        for call in _calls_of(inner):
                            out.append(Demand(ast.dump(call), ast.unparse(call), expr, expected, call))
        elif isinstance(node, ast.Call) and _raises_kind(node, scope) and len(node.args) >= 2:
            # pytest.raises(E, f, *args) / self.assertRaises(E, f, *args): the call is f(*args)
            keywords = [k for k in node.keywords if k.arg not in ("match", "msg")]
            call = ast.Call(func=node.args[1], args=list(node.args[2:]), keywords=keywords)
            out.append(Demand(ast.dump(call), ast.unparse(call), node, ast.unparse(node.args[0]), call))
    return out


def _locals(fn: FunctionNode) -> set[str]:
    """The names FN binds: its parameters and what it assigns."""
    found = {a.arg for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs}
    found |= {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return found


def _arrangement(fn: FunctionNode, checked: set[str], scope: meaning.Scope, used: set[str]) -> list[str]:
    """FN's statements that touch the names USED, but its checks: asserts, check calls, raises blocks
    and the bare or assigned calls a check demands (``r = f(x)`` before ``assert r == 1``) left out."""
    out: list[str] = []
    stack = list(reversed(fn.body))
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, ast.Assert):
            continue
        if isinstance(stmt, (ast.With, ast.AsyncWith)) and any(
            isinstance(i.context_expr, ast.Call) and _raises_kind(i.context_expr, scope) for i in stmt.items
        ):
            continue
        value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
        if isinstance(value, ast.Call):
            func = value.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name.startswith("assert") or _raises_kind(value, scope) or ast.dump(value) in checked:
                continue
        if isinstance(stmt, (ast.With, ast.AsyncWith, ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try)):
            stack += list(reversed(stmt.body))
            continue
        if any(isinstance(n, ast.Name) and n.id in used for n in ast.walk(stmt)):
            out.append(ast.dump(stmt))
    return out


def _calls_of(stmt: ast.stmt) -> list[ast.Call]:
    """The calls a statement inside a raises block makes at its top (``f(x)``, ``r = f(x)``)."""
    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign, ast.Return)) else None
    if isinstance(value, ast.Await):
        value = value.value
    return [value] if isinstance(value, ast.Call) else []


def _mentions_raises(fn: FunctionNode) -> bool:
    for node in ast.walk(fn):
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
        if name == "raises" or name in UNITTEST_RAISES:
            return True
    return False


def changed(
    base_fn: FunctionNode,
    new_fn: FunctionNode,
    base_scope: meaning.Scope,
    new_scope: meaning.Scope,
    base_cls: ast.ClassDef | None,
    new_cls: ast.ClassDef | None,
) -> list[tuple[ast.AST, str]]:
    """(new check site, message) for each call whose demand flipped between a value and an exception."""
    if not (_mentions_raises(base_fn) or _mentions_raises(new_fn)):
        return []  # neither side expects an exception: nothing can have flipped
    base = demands(base_fn, base_scope, base_cls)
    new = demands(new_fn, new_scope, new_cls)
    checked = {d.call for d in base} | {d.call for d in new}
    local = _locals(base_fn) | _locals(new_fn)

    def same_question(call: ast.Call) -> bool:
        # What the test arranged for the call (the statements on the locals it uses) is unchanged:
        # with other arrangements (`s.push(1)` gone before `s.pop()`) it asks another question.
        used = {n.id for n in ast.walk(call) if isinstance(n, ast.Name)} & local
        return not used or _arrangement(base_fn, checked, base_scope, used) == _arrangement(
            new_fn, checked, new_scope, used
        )

    base_value = {d.call: d for d in base if not d.raises}
    base_raises = {d.call: d for d in base if d.raises}
    new_value = {d.call for d in new if not d.raises}
    new_raises = {d.call for d in new if d.raises}
    out: list[tuple[ast.AST, str]] = []
    seen: set[str] = set()
    for d in new:
        if d.call in seen:
            continue
        if not same_question(d.callnode):
            continue
        if d.raises and d.call in base_value and d.call not in base_raises and d.call not in new_value:
            seen.add(d.call)
            was = ast.unparse(base_value[d.call].node).splitlines()[0][:80]
            out.append(
                (
                    d.node,
                    f"expected outcome rewritten: `{d.shown}` must now raise {d.raises} where the base checked its "
                    f"value (`{was}`)",
                )
            )
        elif not d.raises and d.call in base_raises and d.call not in base_value and d.call not in new_raises:
            seen.add(d.call)
            out.append(
                (
                    d.node,
                    f"expected outcome rewritten: `{d.shown}` is now checked for a value where the base expected it "
                    f"to raise {base_raises[d.call].raises}",
                )
            )
    return out
