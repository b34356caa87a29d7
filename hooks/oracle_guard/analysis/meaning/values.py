"""What a check's words name, and what a test function binds (part of meaning.py).

The vocabulary every meaning rule reads (builtins whose values are builtin,
unittest's comparisons, equality helpers, normalising transforms, parsers),
``Scope`` (the module a function lives in), and a function's bindings: locals
assigned once, and parameters bound by the test's own data (``@given`` strategies,
literal ``parametrize`` values) with the builtin types their values have.
"""

from __future__ import annotations

import ast
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
# Transforms of the actual value that keep only part of it (an order, a case, a type, a count, a total).
NORMALISERS = {
    "sorted",
    "set",
    "frozenset",
    "str",
    "round",
    "int",
    "float",
    "abs",
    "len",
    "bool",
    "repr",
    "sum",  # an exact list reduced to its total: [3, 1, 2] and [6] and [2, 2, 2] all pass
    "min",
    "max",
    "any",
    "all",
}
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
