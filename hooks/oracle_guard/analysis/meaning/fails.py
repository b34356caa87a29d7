"""Can this check fail at all? (part of meaning.py).

A value compared with itself, two equal literals, a length compared with a
negative bound, a type check of what is built that way, a check of the test's
own inputs: none can fail, whatever the code under test does.  A check call
reads as the condition it requires (a unittest assertion, an equality helper,
a helper of the module whose every check, with the call's arguments put in,
cannot fail).
"""

from __future__ import annotations

import ast
import builtins
import copy
from collections.abc import Iterable

from oracle_guard.analysis.meaning.values import (
    EQUALITY_HELPERS,
    INPUT_BUILTINS,
    TYPE_NAMES,
    UNITTEST_OPS,
    VALUE_BUILTINS,
    Scope,
    _literal,
    _literal_type,
    bindings,
)
from oracle_guard.analysis.pysource import FunctionNode


def _builtin_name(name: str, scope: Scope) -> bool:
    """NAME is Python's builtin here: not imported, defined or rebound by the module."""
    return (
        hasattr(builtins, name)
        and name not in scope.functions
        and name not in scope.constants
        and scope.names.aliases.get(name, name) == name
    )


def _value_type(
    node: ast.AST, scope: Scope, env: dict[str, ast.expr], inputs: dict[str, set[str]], depth: int = 0
) -> set[str] | None:
    """The builtin types NODE's value can have, when equality on it cannot be user-defined; else None."""
    if depth > 5:
        return None
    t = _literal_type(node)
    if t:
        return {t}
    if isinstance(node, ast.JoinedStr):
        return {"str"}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
        return {type(node).__name__.lower()}  # a display: compared item by item, identity first
    if isinstance(node, (ast.Compare, ast.BoolOp)) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
        return {"bool"} if isinstance(node, ast.Compare) or isinstance(node, ast.UnaryOp) else None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in VALUE_BUILTINS
        and _builtin_name(node.func.id, scope)
    ):
        return {VALUE_BUILTINS[node.func.id]}
    if isinstance(node, ast.Name):
        if node.id in inputs:
            return inputs[node.id]
        if node.id in env:
            return _value_type(env[node.id], scope, env, inputs, depth + 1)
    return None


def _pure(node: ast.AST, scope: Scope) -> bool:
    """Evaluating NODE twice gives the same object: no call but to value builtins, no attribute or
    item access (a property may build a new object each time: `c.cached is c.cached` tests caching)."""
    for n in ast.walk(node):
        if isinstance(n, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Attribute, ast.Subscript)):
            return False
        if isinstance(n, ast.Call) and not (
            isinstance(n.func, ast.Name)
            and n.func.id in VALUE_BUILTINS
            and _builtin_name(n.func.id, scope)
            and all(_literal(a) for a in n.args)
        ):
            return False  # hash(obj), str(obj) run the object's own code each time: `hash(x) == hash(x)` tests it
    return True


def _reflexive(node: ast.AST, scope: Scope, env: dict[str, ast.expr], inputs: dict[str, set[str]]) -> bool:
    """`node == node` is always true: a builtin value that is never a float (NaN != NaN)."""
    kinds = _value_type(node, scope, env, inputs)
    return kinds is not None and bool(kinds) and not kinds & {"float", "complex"}


def _never_none(node: ast.AST, scope: Scope, env: dict[str, ast.expr], inputs: dict[str, set[str]]) -> bool:
    if isinstance(node, ast.Constant):
        return node.value is not None
    if isinstance(node, ast.Lambda):
        return True
    kinds = _value_type(node, scope, env, inputs)
    return kinds is not None and bool(kinds) and "NoneType" not in kinds


def _len_call(node: ast.AST, scope: Scope) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "len"
        and _builtin_name("len", scope)
    )


def _number(node: ast.AST) -> float | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _number(node.operand)
        return None if value is None else -value
    return None


def never_fails(
    test: ast.expr,
    fn: FunctionNode,
    scope: Scope,
    env: dict[str, ast.expr] | None = None,
    inputs: dict[str, set[str]] | None = None,
) -> str | None:
    """Why the condition TEST can never be false, or None.  Only what the code under test
    cannot influence counts: ``x == x`` of an object may test its own ``__eq__``."""
    if _always_true(test):
        return "it is always true"
    if env is None or inputs is None:
        env, inputs = bindings(fn, scope)
    if isinstance(test, ast.BoolOp):
        reasons = [never_fails(v, fn, scope, env, inputs) for v in test.values]
        if isinstance(test.op, ast.Or):
            return next((r for r in reasons if r), None)
        return reasons[0] if all(reasons) else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, test.ops[0], test.comparators[0]
        same = type(left) is type(right) and ast.dump(left) == ast.dump(right) and _pure(left, scope)
        if same and isinstance(op, ast.Is):
            return f"`{ast.unparse(left)}` is always itself"
        if same and isinstance(op, (ast.Eq, ast.LtE, ast.GtE)) and _reflexive(left, scope, env, inputs):
            return f"compares `{ast.unparse(left)}` with itself"
        if isinstance(op, (ast.Eq, ast.NotEq)) and _literal(left) and _literal(right):
            a, b = _evaluate(left), _evaluate(right)
            if a is not _UNKNOWN and b is not _UNKNOWN and (a == b) is isinstance(op, ast.Eq):
                return "compares two equal literals" if isinstance(op, ast.Eq) else "compares two different literals"
        if (
            isinstance(op, ast.IsNot)
            and isinstance(right, ast.Constant)
            and right.value is None
            and _never_none(left, scope, env, inputs)
        ):
            return f"`{ast.unparse(left)}` is never None"
        if (
            isinstance(op, ast.Is)
            and isinstance(left, ast.Constant)
            and isinstance(right, ast.Constant)
            and left.value is None
            and right.value is None
        ):
            return "None is None"
        # len(x) >= 0, 0 <= len(x), len(x) > -1
        for a, b, flipped in ((left, right, False), (right, left, True)):
            bound = _number(b)
            if _len_call(a, scope) and bound is not None:
                kind = type(op)
                if flipped:
                    kind = {ast.LtE: ast.GtE, ast.GtE: ast.LtE, ast.Lt: ast.Gt, ast.Gt: ast.Lt}.get(kind, kind)
                if (
                    (kind is ast.GtE and bound <= 0)
                    or (kind is ast.Gt and bound < 0)
                    or (kind is ast.NotEq and bound < 0)
                ):
                    return "a length is never negative"
        if (
            isinstance(op, ast.In)
            and isinstance(right, (ast.Tuple, ast.List, ast.Set))
            and _pure(left, scope)
            and any(ast.dump(e) == ast.dump(left) for e in right.elts)
        ):
            return f"`{ast.unparse(right)}` holds `{ast.unparse(left)}` itself"
        if (
            isinstance(op, ast.NotIn)
            and isinstance(right, (ast.Tuple, ast.List, ast.Set, ast.Dict))
            and not getattr(right, "elts", getattr(right, "keys", None))
        ):
            return "nothing is in an empty container"
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "isinstance"
        and len(test.args) == 2
        and _builtin_name("isinstance", scope)
    ):
        value, kinds = test.args
        wanted = {ast.unparse(k) for k in (kinds.elts if isinstance(kinds, ast.Tuple) else [kinds])}
        if "object" in wanted:
            return "everything is an object"
        have = _value_type(value, scope, env, inputs)
        if have and have <= wanted and all(_builtin_name(w, scope) for w in wanted):
            source = (
                "the strategy already makes it so"
                if isinstance(value, ast.Name) and value.id in inputs
                else "it is built that way"
            )
            return f"`{ast.unparse(value)}` is always a {'/'.join(sorted(have))}: {source}"
    if _only_inputs(test, scope, inputs):
        used = sorted({n.id for n in ast.walk(test) if isinstance(n, ast.Name) and n.id in inputs})
        return f"looks only at the test's own inputs ({', '.join(used)}), never at a result of the code under test"
    return None


def _only_inputs(test: ast.expr, scope: Scope, inputs: dict[str, set[str]]) -> bool:
    """TEST reads only the test's data parameters, literals and builtins (at least one parameter)."""
    if not inputs:
        return False
    uses_input = False
    for n in ast.walk(test):
        if isinstance(
            n,
            (
                ast.Attribute,
                ast.Subscript,
                ast.Await,
                ast.Yield,
                ast.YieldFrom,
                ast.NamedExpr,
                ast.Lambda,
                ast.comprehension,
            ),
        ):
            return False  # a method or property of the value could run code
        if isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in INPUT_BUILTINS):
            return False
        if isinstance(n, ast.Name):
            if n.id in inputs:
                uses_input = True
            elif not (n.id in INPUT_BUILTINS or n.id in TYPE_NAMES) or not _builtin_name(n.id, scope):
                return False
    return uses_input


def as_condition(call: ast.Call, attr: str) -> ast.expr | None:
    """``self.assertEqual(a, b)`` -> ``a == b``: the condition a unittest assertion requires."""
    args = call.args
    if attr in UNITTEST_OPS and len(args) >= 2:
        return ast.Compare(left=args[0], ops=[UNITTEST_OPS[attr]()], comparators=[args[1]])
    if attr in ("assertTrue", "assert_", "failUnless") and args:
        return args[0]
    if attr in ("assertFalse", "failIf") and args:
        return ast.UnaryOp(op=ast.Not(), operand=args[0])
    if attr == "assertIsNone" and args:
        return ast.Compare(left=args[0], ops=[ast.Is()], comparators=[ast.Constant(None)])
    if attr == "assertIsNotNone" and args:
        return ast.Compare(left=args[0], ops=[ast.IsNot()], comparators=[ast.Constant(None)])
    if attr == "assertIsInstance" and len(args) >= 2:
        return ast.Call(func=ast.Name(id="isinstance", ctx=ast.Load()), args=list(args[:2]), keywords=[])
    return None


def _always_true(node: ast.AST) -> bool:
    """A literal that is true: ``True``, ``1``, ``"text"``, ``(x, "message")``, ``not 0``."""
    if isinstance(node, ast.Constant):
        return bool(node.value)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts)
    if isinstance(node, ast.Dict):
        return bool(node.keys)
    if isinstance(node, ast.Lambda):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _falsy_literal(node.operand)
    return False


_UNKNOWN = object()


def _evaluate(node: ast.AST) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNKNOWN  # {[1]: 2} is a literal that cannot be built


def _falsy_literal(node: ast.AST) -> bool:
    if not _literal(node):
        return False
    value = _evaluate(node)
    return value is not _UNKNOWN and not value


def same_or_literal_args(call: ast.Call) -> bool:
    """Arguments that make a helper's comparison vacuous: two alike, or all literals."""
    args = [ast.dump(a) for a in call.args]
    return len(args) >= 2 and (len(set(args)) < len(args) or all(_literal(a) for a in call.args))


def call_never_fails(
    call: ast.Call,
    fn: FunctionNode,
    scope: Scope,
    cls: ast.ClassDef | None,
    depth: int = 0,
    helper: FunctionNode | None = None,
) -> str | None:
    """Why a check *call* can never fail: a unittest assertion, an equality helper by name,
    or a helper of this module whose every check, with the call's arguments put in, cannot fail."""
    func = call.func
    attr = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    self_call = (
        isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls")
    )
    if attr in ("assertFalse", "failIf") and call.args and _falsy_literal(call.args[0]):
        return f"`{ast.unparse(call.args[0])}` is always false"
    condition = as_condition(call, attr) if (self_call or attr in UNITTEST_OPS) and attr.startswith("assert") else None
    if condition is None and attr in EQUALITY_HELPERS and len(call.args) >= 2:
        condition = ast.Compare(left=call.args[0], ops=[ast.Eq()], comparators=[call.args[1]])
    if condition is not None:
        return never_fails(condition, fn, scope)
    if depth > 2:
        return None
    helper = helper or _helper(call, scope, cls)
    if helper is None:
        return None
    conditions = list(inlined_checks(helper, call))
    if not conditions:
        return None
    reasons = []
    for is_call, cond in conditions:
        why = call_never_fails(cond, fn, scope, cls, depth + 1) if is_call else never_fails(cond, fn, scope)  # type: ignore[arg-type]  # IS_CALL: COND is an ast.Call
        if not why:
            return None
        reasons.append(why)
    return f"through `{helper.name}`: {reasons[0]}"


def _helper(call: ast.Call, scope: Scope, cls: ast.ClassDef | None) -> FunctionNode | None:
    func = call.func
    if (
        isinstance(func, ast.Name)
        and func.id in scope.functions
        and scope.names.aliases.get(func.id, func.id) == func.id
    ):
        return scope.functions[func.id]
    if (
        cls is not None
        and isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id in ("self", "cls")
    ):
        for node in cls.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == func.attr:
                return node
    return None


class _Put(ast.NodeTransformer):
    def __init__(self, values: dict[str, ast.expr]) -> None:
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return copy.deepcopy(self.values[node.id]) if node.id in self.values else node


def inlined_checks(helper: FunctionNode, call: ast.Call) -> Iterable[tuple[bool, ast.expr]]:
    """HELPER's checks, (is a call, assert condition or check call), with the call's arguments
    in place of its parameters; nothing when the helper does more than check its parameters."""
    params = [a.arg for a in helper.args.posonlyargs + helper.args.args]
    if params and params[0] in ("self", "cls"):
        params = params[1:]
    if len(call.args) > len(params) or any(isinstance(a, ast.Starred) for a in call.args):
        return
    values = dict(zip(params, call.args))
    values.update({k.arg: k.value for k in call.keywords if k.arg in params})
    body = [s for s in helper.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    put = _Put(values)
    for stmt in body:
        if isinstance(stmt, ast.Assert):
            yield False, put.visit(copy.deepcopy(stmt.test))
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            yield True, put.visit(copy.deepcopy(stmt.value))
        else:
            return  # setup, branches, loops: the helper's checks mean something beyond its arguments
