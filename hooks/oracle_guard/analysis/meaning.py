"""What a check means, not how it is spelled.

oracle-shrink counts and ranks checks; this module answers the questions a
count cannot: can this check fail at all (a value compared with itself, a
check of the test's own inputs), and does it still look at the whole value
the base looked at (the actual value normalised, sliced or replaced by the
code's own result before comparing).  Every spelling reduces to one form
first: ``self.assertEqual(a, b)``, ``assert a == b`` and a project helper
whose body asserts ``a == b`` are the same comparison.

Nothing here imports a hook; oracle-shrink hands in the module's names,
constants and functions.
"""

from __future__ import annotations

import ast
import builtins
import copy
from collections.abc import Iterable
from typing import NamedTuple

from oracle_guard.analysis.pysource import FunctionNode, Names

# Builtins whose result is a builtin value (its equality is Python's, never a user's __eq__).
VALUE_BUILTINS = {
    "len": "int",
    "str": "str",
    "repr": "str",
    "ascii": "str",
    "int": "int",
    "bool": "bool",
    "bytes": "bytes",
    "list": "list",
    "tuple": "tuple",
    "set": "set",
    "frozenset": "frozenset",
    "dict": "dict",
    "sorted": "list",
    "id": "int",
    "hash": "int",
    "ord": "int",
    "chr": "str",
    "hex": "str",
    "oct": "str",
    "bin": "str",
    "format": "str",
    "isinstance": "bool",
    "issubclass": "bool",
    "callable": "bool",
    "hasattr": "bool",
    "all": "bool",
    "any": "bool",
}
# Builtins a check may apply to the test's own inputs without running any code under test.
INPUT_BUILTINS = set(VALUE_BUILTINS) | {
    "type",
    "abs",
    "min",
    "max",
    "sum",
    "round",
    "float",
    "range",
    "enumerate",
    "zip",
    "reversed",
}
TYPE_NAMES = {
    "str",
    "int",
    "float",
    "bool",
    "bytes",
    "list",
    "tuple",
    "dict",
    "set",
    "frozenset",
    "complex",
    "bytearray",
    "object",
    "type",
}

# Hypothesis strategies -> the builtin type every value they draw has.
STRATEGY_TYPES = {
    "text": "str",
    "characters": "str",
    "from_regex": "str",
    "emails": "str",
    "integers": "int",
    "booleans": "bool",
    "binary": "bytes",
    "floats": "float",
    "lists": "list",
    "tuples": "tuple",
    "dictionaries": "dict",
    "sets": "set",
    "frozensets": "frozenset",
    "complex_numbers": "complex",
}
_ST = "hypothesis.strategies."

# unittest spelling -> the comparison it makes
UNITTEST_OPS: dict[str, type] = {
    "assertEqual": ast.Eq,
    "assertEquals": ast.Eq,
    "assertListEqual": ast.Eq,
    "assertTupleEqual": ast.Eq,
    "assertDictEqual": ast.Eq,
    "assertSetEqual": ast.Eq,
    "assertSequenceEqual": ast.Eq,
    "assertMultiLineEqual": ast.Eq,
    "assertCountEqual": ast.Eq,
    "assertIs": ast.Is,
    "assertIsNot": ast.IsNot,
    "assertNotEqual": ast.NotEq,
    "assertIn": ast.In,
    "assertNotIn": ast.NotIn,
    "assertGreater": ast.Gt,
    "assertGreaterEqual": ast.GtE,
    "assertLess": ast.Lt,
    "assertLessEqual": ast.LtE,
}
# Equality helpers that are not resolved to a body: numpy/pandas and the usual project spellings.
EQUALITY_HELPERS = {
    "assert_equal",
    "assert_equals",
    "assert_eq",
    "assert_same",
    "assert_array_equal",
    "assert_frame_equal",
    "assert_series_equal",
    "assert_identical",
    "check_equal",
    "expect_equal",
    "assert_is",
}

# Transforms that make the actual value agree with more than it used to.
NORMALISERS = {"sorted", "set", "frozenset", "str", "round", "int", "float", "abs", "len", "bool", "repr"}
NORMALISING_METHODS = {
    "lower",
    "upper",
    "casefold",
    "strip",
    "lstrip",
    "rstrip",
    "title",
    "capitalize",
    "swapcase",
    "split",
    "rsplit",
    "splitlines",
    "partition",
    "rpartition",
    "replace",
    "expandtabs",
}
PREFIX_METHODS = {"startswith", "endswith"}
# Parsing both sides compares structure, not the text the base compared.
PARSERS = {"json.loads", "yaml.safe_load", "yaml.load", "tomllib.loads", "tomli.loads", "ast.literal_eval"}


class Scope(NamedTuple):
    """What a rule needs to know about the module a function lives in."""

    names: Names
    constants: dict[str, ast.expr]
    functions: dict[str, FunctionNode]


class Cmp(NamedTuple):
    """One comparison a check makes, each side peeled to its core and the transforms on it."""

    left: ast.expr
    lchain: tuple[str, ...]
    op: str
    right: ast.expr
    rchain: tuple[str, ...]
    node: ast.AST  # the check site


# -- what a function binds ---------------------------------------------------------


def local_values(fn: FunctionNode) -> dict[str, ast.expr]:
    """Names assigned exactly once in FN (and never a parameter or loop target): name -> value."""
    counts: dict[str, int] = {}
    values: dict[str, ast.expr] = {}
    params = {a.arg for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs}
    for node in ast.walk(fn):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            targets = [node.target]
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            targets = [node.target]
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            targets = [i.optional_vars for i in node.items if i.optional_vars is not None]
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name):
                    counts[n.id] = counts.get(n.id, 0) + (1 if isinstance(node, ast.Assign) and t is n else 2)
                    if isinstance(node, ast.Assign) and t is n:
                        values[n.id] = node.value
    return {k: v for k, v in values.items() if counts.get(k) == 1 and k not in params}


def _literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _literal(node.operand)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _literal(k) for k in node.keys) and all(_literal(v) for v in node.values)
    return False


def _literal_type(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant):
        return type(node.value).__name__
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _literal_type(node.operand)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)) and _literal(node):
        return type(node).__name__.lower()
    return None


def input_types(fn: FunctionNode, scope: Scope) -> dict[str, set[str]]:
    """Parameters bound by the test's own data -> the builtin types their values have.

    A ``@given`` argument drawn from a builtin strategy, a ``parametrize`` argument
    whose every value is a literal.  Fixtures are not inputs: they run code.
    """
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    out: dict[str, set[str]] = {}
    for deco in fn.decorator_list:
        deco = scope.names.expand(deco)
        if not isinstance(deco, ast.Call):
            continue
        name = scope.names.qualify(deco.func) or ""
        if name in ("hypothesis.given", "hypothesis.core.given"):
            bound = list(zip(params[len(params) - len(deco.args) :], deco.args)) if deco.args else []
            bound += [(k.arg, k.value) for k in deco.keywords if k.arg]
            for param, strategy in bound:
                kind = _strategy_type(strategy, scope)
                if kind:
                    out[param] = {kind}
        elif name == "pytest.mark.parametrize" and len(deco.args) >= 2:
            argnames, argvalues = deco.args[0], deco.args[1]
            if isinstance(argvalues, ast.Name):
                argvalues = scope.constants.get(argvalues.id, argvalues)
            if isinstance(argnames, ast.Constant) and isinstance(argnames.value, str):
                names_ = [p.strip() for p in argnames.value.split(",") if p.strip()]
            elif isinstance(argnames, (ast.Tuple, ast.List)) and all(
                isinstance(e, ast.Constant) for e in argnames.elts
            ):
                names_ = [str(e.value) for e in argnames.elts if isinstance(e, ast.Constant)]  # all are (above)
            else:
                continue
            if not isinstance(argvalues, (ast.List, ast.Tuple)) or not argvalues.elts:
                continue
            rows = []
            for row in argvalues.elts:
                if isinstance(row, ast.Call) and (scope.names.qualify(row.func) or "") == "pytest.param":
                    row = (
                        ast.Tuple(elts=list(row.args), ctx=ast.Load())
                        if len(names_) > 1
                        else (row.args[0] if row.args else row)
                    )
                rows.append(row.elts if len(names_) > 1 and isinstance(row, (ast.Tuple, ast.List)) else [row])
            for i, param in enumerate(names_):
                kinds = {_literal_type(r[i]) if len(r) > i else None for r in rows}
                if None not in kinds:
                    out[param] = {k for k in kinds if k is not None}
    return out


def _strategy_type(node: ast.AST, scope: Scope) -> str | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "filter":
        return _strategy_type(node.func.value, scope)  # filtering keeps the type
    if not isinstance(node, ast.Call):
        return None
    name = scope.names.qualify(node.func) or ""
    if not name.startswith(_ST):
        return None
    short = name[len(_ST) :]
    if (
        short == "from_regex"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, bytes)
    ):
        return "bytes"
    if short == "just" and node.args:
        return _literal_type(node.args[0])
    return STRATEGY_TYPES.get(short)


# -- can this check fail? -------------------------------------------------------------


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


_CACHE: dict[int, tuple[FunctionNode, dict[str, ast.expr], dict[str, set[str]]]] = {}


class _LazyValues(dict[str, ast.expr]):
    """local_values(fn), walked only when a rule first asks for a name."""

    def __init__(self, fn: FunctionNode) -> None:
        super().__init__()
        self._fn: FunctionNode | None = fn

    def _load(self) -> None:
        if self._fn is not None:
            fn, self._fn = self._fn, None
            self.update(local_values(fn))

    def __contains__(self, key: object) -> bool:
        self._load()
        return super().__contains__(key)

    def __getitem__(self, key: str) -> ast.expr:
        self._load()
        return super().__getitem__(key)

    def get(self, key: str, default: ast.expr | None = None) -> ast.expr | None:  # type: ignore[override]  # dict.get's overloads: this one is used
        self._load()
        return super().get(key, default)


def bindings(fn: FunctionNode, scope: Scope) -> tuple[dict[str, ast.expr], dict[str, set[str]]]:
    """(local values, input types) of FN, worked out once per function (the values when first asked)."""
    hit = _CACHE.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1], hit[2]
    if len(_CACHE) > 512:
        _CACHE.clear()
    env, inputs = _LazyValues(fn), input_types(fn, scope) if fn.decorator_list else {}
    _CACHE[id(fn)] = (fn, env, inputs)
    return env, inputs


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


# -- comparisons, normalised or replaced -------------------------------------------------


def peel(node: ast.expr, env: dict[str, ast.expr], scope: Scope, depth: int = 0) -> tuple[ast.expr, tuple[str, ...]]:
    """(core, transforms outermost first): ``sorted(r.strip())`` -> (r, ('sorted', '.strip'))."""
    chain: list[str] = []
    for _ in range(12):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in NORMALISERS
            and node.args
            and _builtin_name(node.func.id, scope)
        ):
            chain.append(node.func.id)
            node = node.args[0]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in NORMALISING_METHODS
        ):
            chain.append("." + node.func.attr)
            node = node.func.value
        elif isinstance(node, ast.Call) and node.args and (scope.names.qualify(node.func) or "") in PARSERS:
            chain.append(scope.names.qualify(node.func) or "")
            node = node.args[0]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "filter"
            and len(node.args) == 2
            and _builtin_name("filter", scope)
        ):
            chain.append("filter")
            node = node.args[1]
        elif (
            isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp))
            and len(node.generators) == 1
            and node.generators[0].ifs
        ):
            chain.append("[... if ...]")  # only the items a condition lets through
            node = node.generators[0].iter
        elif isinstance(node, ast.Subscript) and (isinstance(node.slice, ast.Slice) or _literal(node.slice)):
            chain.append("[:]" if isinstance(node.slice, ast.Slice) else "[]")
            node = node.value
        elif isinstance(node, ast.Name) and node.id in env and depth < 4 and not _literal(env[node.id]):
            node = env[node.id]
            depth += 1
        else:
            break
    return node, tuple(chain)


def comparisons(fn: FunctionNode, scope: Scope, cls: ast.ClassDef | None) -> list[Cmp]:
    """Every comparison FN's checks make, helpers of this module inlined once."""
    env = bindings(fn, scope)[0]
    out: list[Cmp] = []

    def add(test: ast.AST, site: ast.AST, depth: int) -> None:
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            for v in test.values:
                add(v, site, depth)
        elif isinstance(test, ast.Compare) and len(test.ops) == 1:
            op = type(test.ops[0]).__name__
            (lc, lch), (rc, rch) = peel(test.left, env, scope), peel(test.comparators[0], env, scope)
            out.append(Cmp(lc, lch, op, rc, rch, site))
        elif (
            isinstance(test, ast.Call)
            and isinstance(test.func, ast.Attribute)
            and test.func.attr in PREFIX_METHODS
            and test.args
        ):
            lc, lch = peel(test.func.value, env, scope)
            rc, rch = peel(test.args[0], env, scope)
            out.append(Cmp(lc, lch + ("." + test.func.attr,), "Eq", rc, rch, site))
        elif isinstance(test, ast.Call) and depth < 2:
            func = test.func
            attr = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            cond = as_condition(test, attr) if attr.startswith("assert") else None
            if cond is None and attr in EQUALITY_HELPERS and len(test.args) >= 2:
                cond = ast.Compare(left=test.args[0], ops=[ast.Eq()], comparators=[test.args[1]])
            if cond is not None:
                add(cond, site, depth)
                return
            helper = _helper(test, scope, cls)
            if helper is not None:
                for _, inner in inlined_checks(helper, test):
                    add(inner, site, depth + 1)

    for node in ast.walk(fn):
        if isinstance(node, ast.Assert):
            add(node.test, node, 0)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            add(node.value, node, 0)
    return out


_EXACT = ("Eq", "Is")


def compare(
    base_fn: FunctionNode,
    new_fn: FunctionNode,
    base_scope: Scope,
    new_scope: Scope,
    base_cls: ast.ClassDef | None,
    new_cls: ast.ClassDef | None,
) -> list[tuple[ast.AST, str, str]]:
    """(new node, code, message) for comparisons that no longer look at what the base looked at."""
    new = comparisons(new_fn, new_scope, new_cls)
    # Only a transform on a side, or a side compared with itself, can be reported: most checks have neither.
    if not any(
        c.op in _EXACT
        and (c.lchain or c.rchain or (type(c.left) is type(c.right) and ast.dump(c.left) == ast.dump(c.right)))
        for c in new
    ):
        return []
    base = comparisons(base_fn, base_scope, base_cls)
    if not base:
        return []
    # core -> chains the base compared it exactly with, and whether it had a self-comparison
    base_chains: dict[str, set[tuple[str, ...]]] = {}
    base_other: dict[str, str] = {}  # core -> what the base compared it with (not itself)
    base_self: set[str] = set()
    for c in base:
        if c.op not in _EXACT:
            continue
        lk, rk = ast.dump(c.left), ast.dump(c.right)
        if lk == rk:
            base_self.add(lk)
            continue
        for core, chain, other, other_chain in (
            (c.left, c.lchain, c.right, c.rchain),
            (c.right, c.rchain, c.left, c.lchain),
        ):
            if not _literal(core):
                key = ast.dump(core)
                base_chains.setdefault(key, set()).add(chain)
                base_other.setdefault(key, _show(other, other_chain))
    new_chains: dict[str, set[tuple[str, ...]]] = {}
    new_other: set[str] = set()
    for c in new:
        if c.op in _EXACT and ast.dump(c.left) != ast.dump(c.right):
            for core, chain in ((c.left, c.lchain), (c.right, c.rchain)):
                new_chains.setdefault(ast.dump(core), set()).add(chain)
                new_other.add(ast.dump(core))
    # `r == [(a, b)]` taken apart into `len(r) == 1` and `r[0][0] == a`, ...: as strong, item by item.
    decomposed = {
        key
        for key, chains in new_chains.items()
        if ("len",) in chains and any(ch and all(t == "[]" for t in ch) for ch in chains)
    }
    out: list[tuple[ast.AST, str, str]] = []
    reported: set[int] = set()
    for c in new:
        if c.op not in _EXACT or id(c.node) in reported:
            continue
        lk, rk = ast.dump(c.left), ast.dump(c.right)
        if lk == rk and c.lchain == c.rchain:
            # The expected value is now the code's own result: `expected = f(x); assert f(x) == expected`.
            if lk in base_other and lk not in base_self and lk not in new_other:
                reported.add(id(c.node))
                out.append(
                    (
                        c.node,
                        "OG314",
                        f"expected value replaced by the code's own result: compares `{ast.unparse(c.left)}` with itself, "
                        f"where the base compared it with `{base_other[lk]}`; restore the base's expected value",
                    )
                )
            continue
        for core, chain in ((c.left, c.lchain), (c.right, c.rchain)):
            key = ast.dump(core)
            was = base_chains.get(key)
            if not chain or was is None or chain in was or new_chains.get(key, set()) & was:
                continue
            if key in decomposed and chain[0] in ("len", "[]") and all(t == "[]" for t in chain[1:]):
                continue
            shown = ", ".join(t if t.startswith((".", "[")) else t + "()" for t in chain)
            before = _show(core, min(was, key=len))
            reported.add(id(c.node))
            out.append(
                (
                    c.node,
                    "OG303",
                    f"the actual value is normalised before comparing ({shown}) where the base compared "
                    f"`{before}` as it is; compare the whole value as the base did, or normalise both sides at the base first",
                )
            )
            break
    return out


def _show(core: ast.expr, chain: tuple[str, ...]) -> str:
    text = ast.unparse(core)
    for t in reversed(chain):
        text = f"{text}{t}()" if t.startswith(".") else f"{text}{t}" if t.startswith("[") else f"{t}({text})"
    return text.replace("[:]", "[...]").replace("[]", "[...]")[:80]


# -- globs over test data ---------------------------------------------------------------


_GLOB_META = ("*", "?", "[")


def glob_sites(tree: ast.Module, names: Names) -> list[tuple[ast.Call, str, tuple[str, ...], bool]]:
    """(call, pattern, directory words, recursive) of every glob over files, in source order."""
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = names.qualify(node.func) or ""
        attr = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        if attr not in ("glob", "rglob", "iglob") and name not in ("glob.glob", "glob.iglob"):
            continue
        strings = [
            n.value for a in node.args for n in ast.walk(a) if isinstance(n, ast.Constant) and isinstance(n.value, str)
        ]
        pattern = next((s for s in reversed(strings) if any(m in s for m in _GLOB_META)), None)
        if pattern is None:
            continue
        words = [s for s in strings if s != pattern]
        if isinstance(node.func, ast.Attribute) and attr in ("glob", "rglob") and name not in ("glob.glob",):
            words += [
                n.value for n in ast.walk(node.func.value) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            ]
        recursive = attr == "rglob" or "**" in pattern or any(k.arg == "recursive" for k in node.keywords)
        out.append((node, pattern, tuple(w.strip("/") for w in words if w.strip("/")), recursive))
    out.sort(key=lambda t: (t[0].lineno, t[0].col_offset))
    return out


def glob_matches(files: Iterable[str], pattern: str, words: tuple[str, ...], recursive: bool, near: str) -> set[str]:
    """The files PATTERN matches among FILES in a folder named by WORDS (or under NEAR)."""
    import fnmatch

    last = pattern.rsplit("/", 1)[-1]
    out = set()
    for path in files:
        folder, _, base = path.rpartition("/")
        parts = folder.split("/")
        if words:
            if not all(any(w == "/".join(parts[i : i + w.count("/") + 1]) for i in range(len(parts))) for w in words):
                continue
        elif near and not path.startswith(near + "/"):
            continue
        if "/" in pattern.replace("**/", "") and not recursive:
            if fnmatch.fnmatch(path, "*" + pattern.lstrip("*")) or fnmatch.fnmatch(path, pattern):
                out.add(path)
        elif fnmatch.fnmatch(base, last):
            out.add(path)
    return out
