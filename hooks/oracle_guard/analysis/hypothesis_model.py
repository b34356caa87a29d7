"""A static model of the Hypothesis tests in one module, and how to compare two.

Nothing is imported or run: decorators, ``settings`` objects and strategy
expressions are read from the syntax tree, through the module's import
aliases (``st.integers``, ``from hypothesis.strategies import integers``,
``import hypothesis.strategies as hs`` all name the same strategy).

Used by oracle-shrink (weaker settings or strategies in any Hypothesis test),
properties-monotonic (contract properties) and ``oracle-guard init`` (every
property found, with its effective ``max_examples``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable

from oracle_guard.analysis.pysource import FunctionNode, Module, Names

DEFAULT_MAX_EXAMPLES = 100  # Hypothesis' default profile
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


@dataclass
class HypothesisTest:
    qualname: str
    line: int
    col: int
    node: FunctionNode
    given: bool = False
    given_args: list[ast.expr] = field(default_factory=list)
    given_kwargs: dict[str, ast.expr] = field(default_factory=dict)
    settings: dict[str, ast.expr] = field(default_factory=dict)  # merged with settings(parent)
    settings_line: int = 0
    max_examples: int | None = None  # explicit, None when inherited from the profile
    examples: list[str] = field(default_factory=list)  # unparsed @example(...) calls
    assumes: int = 0
    filters: int = 0  # .filter(...) on strategies drawn in the body (data.draw)
    draws: list[ast.expr] = field(default_factory=list)  # data.draw(<strategy>) in source order


@dataclass
class Profile:
    name: str
    line: int
    col: int
    settings: dict[str, ast.expr]
    max_examples: int | None


@dataclass
class HypothesisModule:
    module: Module
    tests: dict[str, HypothesisTest]
    profiles: dict[str, Profile]
    loaded: str | None  # the profile loaded at import time, when it can be told
    loaded_line: int = 0

    def effective_max_examples(
        self, test: HypothesisTest, outer_profiles: dict[str, Profile] | None = None, outer_loaded: str | None = None
    ) -> int:
        if test.max_examples is not None:
            return test.max_examples
        profiles = {**(outer_profiles or {}), **self.profiles}
        loaded = self.loaded or outer_loaded
        profile = profiles.get(loaded) if loaded else None
        if profile is not None and profile.max_examples is not None:
            return profile.max_examples
        return DEFAULT_MAX_EXAMPLES


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


def module_constants(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level ``NAME = <expr>`` assignments (the last one wins)."""
    found: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            found[node.target.id] = node.value
    return found


def _int(node: ast.AST | None, constants: dict[str, ast.expr]) -> int | None:
    value = number(node, constants)
    return None if value is None else int(value)


def _settings_call(names: Names, node: ast.expr) -> ast.Call | None:
    node = names.expand(node)
    if isinstance(node, ast.Call) and (names.qualify(node.func) or "") in (
        "hypothesis.settings",
        "hypothesis.settings.settings",
    ):
        return node
    return None


def _settings_kwargs(names: Names, call: ast.Call, profiles: dict[str, Profile], depth: int = 0) -> dict[str, ast.expr]:
    """Keywords of ``settings(...)`` with those of its parent underneath."""
    merged: dict[str, ast.expr] = {}
    parent = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "parent"), None)
    if parent is not None and depth < 10:
        parent_call = _settings_call(names, parent)
        if parent_call is not None:
            merged.update(_settings_kwargs(names, parent_call, profiles, depth + 1))
        elif isinstance(parent, ast.Call) and (names.qualify(parent.func) or "").endswith("settings.get_profile"):
            profile = _constant_str(parent.args[0]) if parent.args else None
            if profile in profiles:
                merged.update(profiles[profile].settings)
    merged.update({k.arg: k.value for k in call.keywords if k.arg and k.arg != "parent"})
    return merged


def _constant_str(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    # os.getenv("HYPOTHESIS_PROFILE", "dev") / os.environ.get(..., "dev"): the default is what runs locally
    if (
        isinstance(node, ast.Call)
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return node.args[1].value
    return None


def model(module: Module) -> HypothesisModule:
    """Every Hypothesis test (a function with @given, @settings or @example) and profile in MODULE."""
    if b"hypothesis" not in module.source:  # every name below qualifies to hypothesis.*: an import must spell it
        return HypothesisModule(module, {}, {}, None)
    names = module.names
    constants = module_constants(module.tree)
    profiles: dict[str, Profile] = {}
    loaded: str | None = None
    loaded_line = 0
    for node in ast.walk(module.tree):
        if not isinstance(node, ast.Call):
            continue
        callee = names.qualify(node.func) or ""
        if callee.endswith("settings.register_profile") and callee.startswith("hypothesis") and node.args:
            name = _constant_str(node.args[0])
            if name is not None:
                kwargs = _settings_kwargs(names, node, profiles) if len(node.args) < 2 else {}
                if len(node.args) >= 2:  # register_profile(name, parent)
                    parent_call = _settings_call(names, node.args[1])
                    if parent_call is not None:
                        kwargs.update(_settings_kwargs(names, parent_call, profiles))
                kwargs.update({k.arg: k.value for k in node.keywords if k.arg and k.arg != "parent"})
                line, col = module.position(node)
                profiles[name] = Profile(name, line, col, kwargs, _int(kwargs.get("max_examples"), constants))
        elif callee.endswith("settings.load_profile") and callee.startswith("hypothesis") and node.args:
            loaded = _constant_str(node.args[0])
            loaded_line = node.lineno

    tests: dict[str, HypothesisTest] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                test = _test_of(module, node, prefix + node.name, profiles, constants)
                if test is not None:
                    tests[test.qualname] = test

    visit(module.tree.body, "")
    return HypothesisModule(module, tests, profiles, loaded, loaded_line)


def _test_of(
    module: Module, node: FunctionNode, qualname: str, profiles: dict[str, Profile], constants: dict[str, ast.expr]
) -> HypothesisTest | None:
    names = module.names
    line, col = module.position(node)
    test = HypothesisTest(qualname, line, col, node)
    relevant = False
    for deco in node.decorator_list:
        expanded = names.expand(deco)
        call = expanded if isinstance(expanded, ast.Call) else None
        callee = names.qualify(call.func if call else expanded) or ""
        if callee in ("hypothesis.given", "hypothesis.given.given"):
            relevant = test.given = True
            if call is not None:
                test.given_args = [names.expand(a) for a in call.args]
                test.given_kwargs = {k.arg: names.expand(k.value) for k in call.keywords if k.arg}
        elif callee in ("hypothesis.settings", "hypothesis.settings.settings") and call is not None:
            relevant = True
            test.settings = _settings_kwargs(names, call, profiles)
            test.settings_line = deco.lineno
        elif callee in ("hypothesis.example", "hypothesis.example.example"):
            relevant = True
            test.examples.append(ast.unparse(deco))
        elif isinstance(deco, ast.Call) and isinstance(deco.func, ast.Attribute) and deco.func.attr in ("via", "xfail"):
            wrapped = names.qualify(deco.func.value.func) if isinstance(deco.func.value, ast.Call) else None
            if wrapped == "hypothesis.example":
                relevant = True
                test.examples.append(ast.unparse(deco))
    if not relevant:
        return None
    if "max_examples" in test.settings:
        test.max_examples = _int(test.settings["max_examples"], constants)
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call):
            callee = names.qualify(inner.func) or ""
            if callee in (
                "hypothesis.assume",
                "hypothesis.control.assume",
                "hypothesis.reject",
                "hypothesis.control.reject",
            ):
                test.assumes += 1
            elif (
                isinstance(inner.func, ast.Attribute)
                and inner.func.attr == "filter"
                and not any(inner is d or _contains(d, inner) for d in node.decorator_list)
            ):
                test.filters += 1
            elif isinstance(inner.func, ast.Attribute) and inner.func.attr == "draw" and inner.args:
                test.draws.append(inner.args[0])
    test.draws.sort(key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
    test.draws = [names.expand(d) for d in test.draws]
    return test


def _contains(tree: ast.AST, target: ast.AST) -> bool:
    return any(n is target for n in ast.walk(tree))


def properties_in(module: Module) -> list[tuple[str, int, int]]:
    """(qualname, effective max_examples, line) of every @given test in MODULE."""
    found = model(module)
    return [(t.qualname, found.effective_max_examples(t), t.line) for t in found.tests.values() if t.given]


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


__all__ = [
    "DEFAULT_MAX_EXAMPLES",
    "HypothesisModule",
    "HypothesisTest",
    "Profile",
    "drawn_strategy",
    "model",
    "module_constants",
    "narrower",
    "number",
    "properties_in",
    "weaker_settings",
]
