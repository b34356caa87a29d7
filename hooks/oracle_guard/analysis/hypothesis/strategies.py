"""Hypothesis settings and strategies read as values, and compared: which side tests less.

``number`` reads a numeric setting or bound (``1e-6``, ``10**-3``, a module
constant); ``weaker_settings`` says why new settings run fewer or no generated
examples; ``narrower`` why a strategy draws from less than it did (tighter bounds,
a restricting keyword, lost alternatives, fewer elements); ``drawn_strategy``
whether an expression is a Hypothesis strategy at all.  Nothing is imported or run.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from oracle_guard.analysis.pysource import Names

ST = "hypothesis.strategies."

# Positional parameters of the strategies whose bounds we compare.
_SIGNATURES: dict[str, tuple[str, ...]] = {
    "integers": ("min_value", "max_value"),
    "floats": (
        "min_value",
        "max_value",
        "allow_nan",
        "allow_infinity",
        "allow_subnormal",
        "width",
        "exclude_min",
        "exclude_max",
    ),
    "decimals": ("min_value", "max_value", "allow_nan", "allow_infinity", "places"),
    "fractions": ("min_value", "max_value", "max_denominator"),
    "text": ("alphabet", "min_size", "max_size"),
    "binary": ("min_size", "max_size"),
    "lists": ("elements", "min_size", "max_size", "unique_by", "unique"),
    "sets": ("elements", "min_size", "max_size"),
    "frozensets": ("elements", "min_size", "max_size"),
    "iterables": ("elements", "min_size", "max_size", "unique_by", "unique"),
    "dictionaries": ("keys", "values", "dict_class", "min_size", "max_size"),
    "dates": ("min_value", "max_value"),
    "times": ("min_value", "max_value", "timezones"),
    "datetimes": ("min_value", "max_value", "timezones", "allow_imaginary"),
    "timedeltas": ("min_value", "max_value"),
    "from_regex": ("regex", "fullmatch"),
    "sampled_from": ("elements",),
    "just": ("value",),
    "characters": (),
}
_LOWER_BOUNDS = {"min_value", "min_size", "min_codepoint", "min_magnitude", "min_leaves"}
_UPPER_BOUNDS = {"max_value", "max_size", "max_codepoint", "max_magnitude", "max_leaves", "max_denominator"}
# Keyword values that exclude part of what the strategy would draw by default.
_RESTRICTING = {
    "allow_nan": False,
    "allow_infinity": False,
    "allow_subnormal": False,
    "allow_imaginary": False,
    "unique": True,
    "exclude_min": True,
    "exclude_max": True,
    "fullmatch": True,
}
_NO_OP_BOUNDS = {"min_size": 0, "min_leaves": 0, "min_magnitude": 0}
_CONSTANT_STRATEGIES = {"just", "none", "nothing"}
_FILTERS = {"filter", "map", "flatmap"}


def number(node: ast.AST | None, names: dict[str, ast.expr] | None = None, depth: int = 0) -> float | None:
    """The value of a numeric constant expression (``1e-6``, ``10**-3``, ``1/1000``), or None."""
    if node is None or depth > 10:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = number(node.operand, names, depth + 1)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.BinOp):
        left, right = number(node.left, names, depth + 1), number(node.right, names, depth + 1)
        if left is None or right is None:
            return None
        try:
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Sub):
                return left - right
            if isinstance(node.op, ast.Mult):
                return left * right
            if isinstance(node.op, ast.Div):
                return left / right
            if isinstance(node.op, ast.Pow) and abs(right) < 400:
                return float(left**right)
        except (ZeroDivisionError, OverflowError, ValueError, TypeError):
            return None
    if isinstance(node, ast.Name) and names and node.id in names:
        return number(names[node.id], names, depth + 1)
    return None


# -- comparisons -----------------------------------------------------------------


def _phases_drop_generate(names: Names, node: ast.expr | None) -> bool:
    if node is None:
        return False
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return not any((names.qualify(e) or "").endswith("Phase.generate") for e in node.elts)
    return False


def weaker_settings(
    base: dict[str, ast.expr],
    new: dict[str, ast.expr],
    base_names: Names,
    new_names: Names,
    base_max: int,
    new_max: int,
) -> str | None:
    """Why NEW settings test less than BASE, or None."""
    if new_max < base_max:
        return f"max_examples {new_max} (base {base_max})"
    old_steps, new_steps = number(base.get("stateful_step_count")), number(new.get("stateful_step_count"))
    if new_steps is not None and new_steps < (old_steps if old_steps is not None else 50):  # Hypothesis' default is 50
        return f"stateful_step_count {int(new_steps)} (base {int(old_steps) if old_steps is not None else 50})"
    if _phases_drop_generate(new_names, new.get("phases")) and not _phases_drop_generate(
        base_names, base.get("phases")
    ):
        return f"phases={ast.unparse(new['phases'])} no longer generate examples"
    return None


@dataclass
class _Strategy:
    name: str  # e.g. "integers"; "" when not a Hypothesis strategy
    call: ast.Call | None
    node: ast.expr
    chain: list[str]  # methods applied on top: filter, map, flatmap


def _strategy(names: Names, node: ast.expr) -> _Strategy:
    node = names.expand(node)
    chain: list[str] = []
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _FILTERS:
        chain.append(node.func.attr)
        node = names.expand(node.func.value)
    if isinstance(node, ast.Call):
        callee = names.qualify(node.func) or ""
        if callee.startswith(ST):
            return _Strategy(callee[len(ST) :], node, node, chain)
        return _Strategy("", node, node, chain)
    callee = names.qualify(node) or ""
    if callee.startswith(ST):  # st.none without a call is an error, but be lenient
        return _Strategy(callee[len(ST) :], None, node, chain)
    return _Strategy("", None, node, chain)


def drawn_strategy(names: Names, node: ast.expr) -> bool:
    """Whether NODE is a Hypothesis strategy (or a union of them) by its syntax."""
    return any(_strategy(names, alt).name for alt in _alternatives(names, node))


def _arguments(s: _Strategy) -> dict[str, ast.expr]:
    if s.call is None:
        return {}
    params = _SIGNATURES.get(s.name, ())
    found: dict[str, ast.expr] = {}
    for i, arg in enumerate(s.call.args):
        found[params[i] if i < len(params) else f"#{i}"] = arg
    for k in s.call.keywords:
        if k.arg:
            found[k.arg] = k.value
    return found


def _alternatives(names: Names, node: ast.expr) -> list[ast.expr]:
    """The branches of ``one_of(a, b)`` or ``a | b``."""
    node = names.expand(node)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _alternatives(names, node.left) + _alternatives(names, node.right)
    if isinstance(node, ast.Call) and (names.qualify(node.func) or "") == ST + "one_of":
        args = node.args
        if len(args) == 1 and isinstance(args[0], (ast.List, ast.Tuple)):
            args = args[0].elts
        out: list[ast.expr] = []
        for a in args:
            out += _alternatives(names, a)
        return out
    return [node]


def _literal_elements(node: ast.expr | None) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [ast.dump(e) for e in node.elts]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return list(node.value)
    return None


def _key(node: ast.AST) -> str:
    return ast.dump(node)


def narrower(base: ast.expr, new: ast.expr, base_names: Names, new_names: Names, depth: int = 0) -> str | None:
    """Why strategy NEW draws from less than BASE did, or None (same, wider or unknown)."""
    if depth > 8:
        return None
    base_alts, new_alts = _alternatives(base_names, base), _alternatives(new_names, new)
    if len(base_alts) > 1 or len(new_alts) > 1:
        base_keys = {_key(a) for a in base_alts}
        new_keys = {_key(a) for a in new_alts}
        if len(new_alts) < len(base_alts) and new_keys < base_keys | new_keys and not (new_keys - base_keys):
            return f"`{ast.unparse(new)}` lost alternatives of `{ast.unparse(base)}`"
        if len(new_alts) == len(base_alts):
            for base_alt, new_alt in zip(base_alts, new_alts):
                why = narrower(base_alt, new_alt, base_names, new_names, depth + 1)
                if why:
                    return why
        if len(new_alts) == 1 and len(base_alts) > 1:
            return f"`{ast.unparse(new)}` replaced the alternatives of `{ast.unparse(base)}`"
        return None
    b, n = _strategy(base_names, base), _strategy(new_names, new)
    if n.chain.count("filter") > b.chain.count("filter"):
        return f"`.filter(...)` added to `{ast.unparse(base)}`"
    if not n.name:
        return None
    shown = ast.unparse(n.node)
    if n.name in _CONSTANT_STRATEGIES and (b.name != n.name or _key(b.node) != _key(n.node)):
        return f"`{shown}` replaced `{ast.unparse(b.node)}`"
    if n.name == "sampled_from":
        new_elems = _literal_elements(_arguments(n).get("elements"))
        base_elems = _literal_elements(_arguments(b).get("elements")) if b.name == "sampled_from" else None
        if new_elems is not None:
            if base_elems is not None:
                lost = set(base_elems) - set(new_elems)
                if lost and not set(new_elems) - set(base_elems):
                    return f"`{shown}` lost {len(lost)} of the {len(set(base_elems))} values of `{ast.unparse(b.node)}`"
                if len(set(new_elems)) == 1 and len(set(base_elems)) > 1:
                    return f"`{shown}` draws one value where `{ast.unparse(b.node)}` drew {len(set(base_elems))}"
                return None
            if b.name != "sampled_from" or len(set(new_elems)) <= 1:
                if b.name or len(set(new_elems)) <= 1:
                    return f"`{shown}` replaced `{ast.unparse(b.node)}` with a fixed list"
        return None
    if b.name != n.name:
        return None
    base_args, new_args = _arguments(b), _arguments(n)
    for param, value in new_args.items():
        old = base_args.get(param)
        if param in _RESTRICTING:
            restricted = isinstance(value, ast.Constant) and value.value is _RESTRICTING[param]
            was = old is not None and isinstance(old, ast.Constant) and old.value is _RESTRICTING[param]
            if restricted and not was:
                return f"`{param}={_RESTRICTING[param]}` added to `{ast.unparse(b.node)}`"
            continue
        if param in _LOWER_BOUNDS or param in _UPPER_BOUNDS:
            new_value = number(value)
            if isinstance(value, ast.Constant) and value.value is None:
                continue  # an explicit "no bound"
            if old is None or (isinstance(old, ast.Constant) and old.value is None):
                if new_value is not None and _NO_OP_BOUNDS.get(param) == new_value:
                    continue
                return f"`{param}={ast.unparse(value)}` added to `{ast.unparse(b.node)}`"
            old_value = number(old)
            if new_value is None or old_value is None:
                continue
            if (param in _LOWER_BOUNDS and new_value > old_value) or (param in _UPPER_BOUNDS and new_value < old_value):
                return f"`{param}` tightened from {ast.unparse(old)} to {ast.unparse(value)}"
            continue
        if param == "alphabet":
            if old is None:
                return f"`alphabet={ast.unparse(value)}` added to `{ast.unparse(b.node)}`"
            old_chars, new_chars = _literal_elements(old), _literal_elements(value)
            if old_chars is not None and new_chars is not None:
                if set(new_chars) < set(old_chars):
                    return f"alphabet restricted from {ast.unparse(old)} to {ast.unparse(value)}"
                continue
            if isinstance(value, ast.expr) and isinstance(old, ast.expr):
                why = narrower(old, value, base_names, new_names, depth + 1)
                if why:
                    return why
            continue
        if (
            old is not None
            and isinstance(value, ast.expr)
            and isinstance(old, ast.expr)
            and isinstance(value, (ast.Call, ast.BinOp, ast.Name, ast.Attribute))
        ):
            why = narrower(old, value, base_names, new_names, depth + 1)
            if why:
                return why
    return None
