"""A static model of the Hypothesis tests in one module, and how to compare two.

Nothing is imported or run: decorators, ``settings`` objects and strategy
expressions are read from the syntax tree, through the module's import
aliases (``st.integers``, ``from hypothesis.strategies import integers``,
``import hypothesis.strategies as hs`` all name the same strategy).

Used by oracle-shrink (weaker settings or strategies in any Hypothesis test),
properties-monotonic (contract properties) and ``oracle-guard init`` (every
property found, with its effective ``max_examples``).

This module builds the model; reading and comparing settings and strategies is
hypothesis_strategies.py, whether a body can fail at all is hypothesis_vacuity.py
(both re-exported here, where their callers ask).
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Callable

from oracle_guard.analysis.hypothesis.strategies import ST as ST
from oracle_guard.analysis.hypothesis.strategies import drawn_strategy as drawn_strategy
from oracle_guard.analysis.hypothesis.strategies import narrower as narrower
from oracle_guard.analysis.hypothesis.strategies import number as number
from oracle_guard.analysis.hypothesis.strategies import weaker_settings as weaker_settings
from oracle_guard.analysis.hypothesis.vacuity import vacuous as vacuous
from oracle_guard.analysis.pysource import FunctionNode, Module, Names
from oracle_guard.analysis.sourcetext import hot_lines, spells

DEFAULT_MAX_EXAMPLES = 100  # Hypothesis' default profile


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


class Tests(Mapping[str, HypothesisTest]):
    """qualname -> the Hypothesis test it names, each read when first asked for: properties-monotonic asks
    for the few the contract names, not for every test of a large module."""

    def __init__(
        self, functions: dict[str, list[FunctionNode]], read: Callable[[str, FunctionNode], HypothesisTest | None]
    ) -> None:
        self._functions = functions  # qualname -> its definitions, in source order (a later one wins)
        self._read = read
        self._done: dict[str, HypothesisTest | None] = {}

    def _test(self, qualname: str) -> HypothesisTest | None:
        if qualname not in self._done:
            found = None
            for node in self._functions.get(qualname, ()):
                found = self._read(qualname, node) or found
            self._done[qualname] = found
        return self._done[qualname]

    def __getitem__(self, qualname: str) -> HypothesisTest:
        test = self._test(qualname)
        if test is None:
            raise KeyError(qualname)
        return test

    def __iter__(self) -> Iterator[str]:
        return (q for q in self._functions if self._test(q) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


@dataclass
class HypothesisModule:
    module: Module
    tests: Mapping[str, HypothesisTest]
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
    if not spells(module.source, b"hypothesis"):  # every name below qualifies to hypothesis.*: an import spells it
        return HypothesisModule(module, Tests({}, lambda q, n: None), {}, None)
    names = module.names
    constants = module_constants(module.tree)
    profiles: dict[str, Profile] = {}
    loaded: str | None = None
    loaded_line = 0
    # Both calls spell their attribute, or a name bound to it (`register = settings.register_profile`): only
    # the top-level statements whose lines spell one (or cannot be read as text) are walked.
    words = [b"register_profile", b"load_profile"]
    words += [local.encode() for local, target in names.aliases.items() if target.endswith("_profile")]
    hot = hot_lines(module.source, words)
    calls = [
        node
        for stmt in module.tree.body
        if _holds(hot, stmt.lineno, stmt.end_lineno or stmt.lineno)
        for node in ast.walk(stmt)
        if isinstance(node, ast.Call)
    ]
    for node in calls:
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

    functions: dict[str, list[FunctionNode]] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list:
                functions.setdefault(prefix + node.name, []).append(node)

    visit(module.tree.body, "")

    def read(qualname: str, node: FunctionNode) -> HypothesisTest | None:
        return _test_of(module, node, qualname, profiles, constants)

    return HypothesisModule(module, Tests(functions, read), profiles, loaded, loaded_line)


def _holds(lines: list[int], first: int, last: int) -> bool:
    at = bisect.bisect_left(lines, first)
    return at < len(lines) and lines[at] <= last


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
