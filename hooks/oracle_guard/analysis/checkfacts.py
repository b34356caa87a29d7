"""Facts about one test or helper function, gathered for comparing it with its base version.

How many checks it makes (oracle_guard.analysis.checksites), which values it checks and how
strongly, its tolerances, the failures it swallows, the exceptions it expects,
its parametrize cases and its checks that can never fail.  ``Side`` is one
version of a module with its analyzer and Hypothesis model.  A core module:
oracle-shrink's comparisons (oracle_guard.analysis.check_weakenings) read these facts.
"""

from __future__ import annotations

import ast
import builtins
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from oracle_guard.analysis.checksites import CHECK_PREFIXES, UNITTEST_RANK, CheckSites, HelperIndex, last_name
from oracle_guard.analysis.hypothesis import model as hm
from oracle_guard.analysis.meaning import checks as meaning
from oracle_guard.analysis.pysource import TRY_NODES, FunctionNode, Module, Names, body_fingerprint
from oracle_guard.analysis.tautologies import truthy_constant as _truthy_constant
from oracle_guard.reporting.report import Finding

RAISES_CALLS = {"pytest.raises": "match", "pytest.warns": "match"}
UNITTEST_RAISES = {
    "assertRaises": None,
    "assertRaisesRegex": 1,
    "assertRaisesRegexp": 1,
    "assertWarns": None,
    "assertWarnsRegex": 1,
}
BROAD = {"Exception", "BaseException", "AssertionError"}
# A project's own raises helpers: raises(KeyError, f, *args), assert_raises(...), check_raises(...)
PROJECT_RAISES = {
    "raises",
    "assert_raises",
    "assertRaises",
    "check_raises",
    "expect_raises",
    "must_raise",
    "assert_raises_regex",
    "assertRaisesRegex",
}


# Tolerance-taking checks: positional parameters, defaults, and how a value maps to a tolerance.
TOLERANCES: dict[str, tuple[tuple[str, ...], dict[str, float], int]] = {
    # name: (positional parameter names, defaults, number of leading compared arguments)
    "pytest.approx": (("expected", "rel", "abs"), {"rel": 1e-6, "abs": 1e-12}, 1),
    "math.isclose": (("a", "b"), {"rel_tol": 1e-9, "abs_tol": 0.0}, 2),
    "numpy.isclose": (("a", "b", "rtol", "atol"), {"rtol": 1e-5, "atol": 1e-8}, 2),
    "numpy.allclose": (("a", "b", "rtol", "atol"), {"rtol": 1e-5, "atol": 1e-8}, 2),
    "numpy.testing.assert_allclose": (("actual", "desired", "rtol", "atol"), {"rtol": 1e-7, "atol": 0.0}, 2),
    "numpy.testing.assert_almost_equal": (("actual", "desired", "decimal"), {"decimal": 7}, 2),
    "numpy.testing.assert_array_almost_equal": (("x", "y", "decimal"), {"decimal": 6}, 2),
    "numpy.testing.assert_approx_equal": (("actual", "desired", "significant"), {"significant": 7}, 2),
    "pandas.testing.assert_frame_equal": (("left", "right"), {"rtol": 1e-5, "atol": 1e-8}, 2),
    "pandas.testing.assert_series_equal": (("left", "right"), {"rtol": 1e-5, "atol": 1e-8}, 2),
    "torch.testing.assert_close": (("actual", "expected"), {}, 2),
    "assertAlmostEqual": (("first", "second", "places", "msg", "delta"), {"places": 7}, 2),
    "assertAlmostEquals": (("first", "second", "places", "msg", "delta"), {"places": 7}, 2),
}
_DIGITS = {"decimal", "places", "significant"}  # more digits = tighter


# -- facts about one function ----------------------------------------------------


@dataclass
class RaiseSite:
    node: ast.Call
    kind: str
    types: tuple[str, ...]
    match: str | None  # the pattern when a constant; "" for none
    has_match: bool
    body: str


@dataclass
class Facts:
    qualname: str
    node: FunctionNode
    is_test: bool
    checks: int = 0
    texts: Counter[str] = field(default_factory=Counter)  # unparsed check sites
    text_lines: dict[str, int] = field(default_factory=dict)  # check text -> first line it is on
    subjects: dict[str, tuple[int, ast.AST]] = field(default_factory=dict)  # subject -> (strongest rank, node)
    subject_ranks: dict[str, list[tuple[int, ast.AST]]] = field(default_factory=dict)  # subject -> every (rank, node)
    tolerances: list[tuple[str, dict[str, float], ast.AST]] = field(default_factory=list)
    swallows: list[tuple[str, ast.AST]] = field(default_factory=list)
    raises: list[RaiseSite] = field(default_factory=list)
    parametrize: dict[str, tuple[list[str] | None, ast.AST]] = field(default_factory=dict)
    tautologies: list[tuple[str, ast.AST]] = field(default_factory=list)
    why: dict[int, str] = field(default_factory=dict)  # id(tautology node) -> why it cannot fail
    approximate: dict[str, ast.AST] = field(default_factory=dict)  # subjects compared with a tolerance
    called: set[str] = field(default_factory=set)
    cls: ast.ClassDef | None = None
    _body_key: str | None = None

    @property
    def body_key(self) -> str:
        """The body without its docstring, positions and name: equal for a renamed or moved test."""
        if self._body_key is None:
            self._body_key = body_fingerprint(self.node, any_leading_constant=True)
        return self._body_key

    @property
    def cases(self) -> int:
        total = 1
        for values, _ in self.parametrize.values():
            total *= max(len(values), 1) if values is not None else 1
        return total


def _strip_len(node: ast.AST) -> ast.AST:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("len", "bool", "list", "set", "sorted", "tuple")
        and len(node.args) == 1
    ):
        return node.args[0]
    return node


def _subject_key(node: ast.AST) -> str | None:
    node = _strip_len(node)
    if isinstance(node, ast.Constant):
        return None
    if isinstance(node, ast.Call) and (
        getattr(node.func, "attr", None) == "approx" or getattr(node.func, "id", None) == "approx"
    ):
        return None
    return ast.dump(node)


def _type_of(node: ast.AST) -> ast.expr | None:
    """X of ``type(X)``, else None."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "type"
        and len(node.args) == 1
    ):
        return node.args[0]
    return None


def _type_rank(kind: ast.AST) -> int:
    """A type check's rank: 0 for ``bool``, whose truth is the whole value (checking only that it is a
    bool demands less than ``assert ok(x)`` did), else 1 (beside truthiness)."""
    return 0 if isinstance(kind, ast.Name) and kind.id == "bool" else 1


def _assert_strength(test: ast.expr) -> list[tuple[str, int]]:
    """(subject, rank) pairs an assert expression checks."""
    if isinstance(test, ast.BoolOp):
        found = [pair for value in test.values for pair in _assert_strength(value)]
        return found if isinstance(test.op, ast.And) else [(s, 1) for s, _ in found]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        key = _subject_key(test.operand)
        return [(key, 1)] if key else []
    if isinstance(test, ast.Compare):
        sides = [test.left] + list(test.comparators)
        typed = _type_of(test.left)
        if typed is not None and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.Eq)):
            # `type(x) is str` asks only what kind of value x is: a type check, whatever the operator
            key = _subject_key(typed)
            return [(key, _type_rank(test.comparators[0]))] if key else []
        ranks = []
        for op, right in zip(test.ops, test.comparators):
            none_right = isinstance(right, ast.Constant) and right.value is None
            if isinstance(op, ast.IsNot) and none_right:
                ranks.append(1)
            elif isinstance(op, (ast.Eq, ast.Is)):
                ranks.append(3)
            else:
                ranks.append(2)
        rank = min(ranks)  # `a == b == c` is exact; `0 < x <= 9` is an ordering
        return [(k, rank) for k in (_subject_key(s) for s in sides) if k]
    if (
        isinstance(test, ast.Call)
        and ast.unparse(test.func).rsplit(".", 1)[-1] in ("isclose", "allclose")
        and len(test.args) >= 2
    ):
        return [(k, 3) for k in (_subject_key(a) for a in test.args[:2]) if k]
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id in ("isinstance", "hasattr", "callable", "bool", "issubclass")
        and test.args
    ):
        key = _subject_key(test.args[0])
        rank = _type_rank(test.args[1]) if test.func.id == "isinstance" and len(test.args) > 1 else 1
        return [(key, rank)] if key else []
    key = _subject_key(test)
    return [(key, 1)] if key else []


def _type_names(names: Names, node: ast.AST | None) -> tuple[str, ...]:
    if node is None:
        return ()
    elts = node.elts if isinstance(node, ast.Tuple) else [node]
    out = []
    for e in elts:
        name = names.qualify(e) or ast.unparse(e)
        out.append(name[len("builtins.") :] if name.startswith("builtins.") else name)
    return tuple(out)


def builtin_exception(name: str) -> type | None:
    """The builtin exception class NAME names, or None (a project's own, or no exception)."""
    value = getattr(builtins, name, None) if "." not in name else None
    return value if isinstance(value, type) and issubclass(value, BaseException) else None


class Analyzer(CheckSites):
    """Facts of every function in one module; helpers resolved on one side of the change."""

    def __init__(self, module: Module, helpers: HelperIndex | None) -> None:
        super().__init__(module, helpers)
        self.scope = meaning.Scope(self.names, self.constants, self.functions)

    def all_facts(self, resolve_imports: bool = False) -> dict[str, Facts]:
        return {
            q: self.facts(q, node, cls, is_test, resolve_imports) for q, (node, cls, is_test) in self.index().items()
        }

    def facts(
        self, qualname: str, fn: FunctionNode, cls: ast.ClassDef | None, is_test: bool, resolve_imports: bool
    ) -> Facts:
        f = Facts(qualname, fn, is_test, cls=cls)
        for weight, node, text in self._check_sites(fn.body, cls, resolve_imports, fn=fn):
            f.checks += weight
            key = " ".join(text.split())
            f.texts[key] += 1
            f.text_lines.setdefault(key, getattr(node, "lineno", fn.lineno))
        raise_with: dict[int, str] = {}
        for node in _walk_body(fn):
            if isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if isinstance(item.context_expr, ast.Call):
                        raise_with[id(item.context_expr)] = ast.dump(ast.Module(body=node.body, type_ignores=[]))
                self._suppress(f, node, cls)
            elif isinstance(node, TRY_NODES):
                self._swallow(f, node, cls)
            elif isinstance(node, ast.Assert):
                self._assertion(f, node, node.test)
            elif isinstance(node, ast.Compare):
                self._abs_tolerance(f, node)
        for node in _walk_body(fn):
            if isinstance(node, ast.Call):
                f.called.add(last_name(self.names.qualify(node.func) or ast.unparse(node.func)))
                self._call(f, node, raise_with)
        for deco in fn.decorator_list:
            self._parametrize(f, deco)
        return f

    def _call(self, f: Facts, node: ast.Call, raise_with: dict[int, str]) -> None:
        name = self.names.qualify(node.func) or ""
        attr = node.func.attr if isinstance(node.func, ast.Attribute) else None
        # unittest spellings, equality helpers and this module's own check helpers that cannot fail
        callee = attr or (node.func.id if isinstance(node.func, ast.Name) else "")
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
        self_call = attr is not None and isinstance(receiver, ast.Name) and receiver.id in ("self", "cls")
        if callee.startswith(CHECK_PREFIXES) or callee in self.functions or self_call:
            why = meaning.call_never_fails(node, f.node, self.scope, f.cls)
            if not why and self.helpers is not None and "." in name and meaning.same_or_literal_args(node):
                found = self.helpers.resolve(self.module.path, name)  # a helper imported from a repository file
                why = meaning.call_never_fails(node, f.node, self.scope, f.cls, helper=found[1]) if found else None
            if why:
                f.tautologies.append((ast.unparse(node), node))
                f.why[id(node)] = why
        if self_call and attr in UNITTEST_RANK and node.args:
            rank = UNITTEST_RANK[attr]
            args = node.args[:2] if rank >= 2 else node.args[:1]
            for arg in args:
                key = _subject_key(arg)
                if key:
                    self._subject(f, key, rank, node)
        # tolerances
        spec_name = attr if self_call and attr in TOLERANCES else name
        if spec_name in TOLERANCES:
            params, defaults, compared = TOLERANCES[spec_name]
            given: dict[str, ast.expr] = {}
            for i, arg in enumerate(node.args):
                if i < len(params):
                    given[params[i]] = arg
            given.update({k.arg: k.value for k in node.keywords if k.arg})
            values: dict[str, float] = {}
            for param in set(defaults) | {
                p
                for p in given
                if p
                in ("rel", "abs", "rel_tol", "abs_tol", "rtol", "atol", "delta", "places", "decimal", "significant")
            }:
                value = hm.number(given[param], self.constants) if param in given else defaults.get(param)
                if value is None:
                    continue
                values[param] = 10.0**-value if param in _DIGITS else value
            if "delta" in values:
                values.pop("places", None)
            key = spec_name + "|" + "|".join(ast.dump(a) for a in node.args[:compared])
            f.tolerances.append((key, values, node))
        # raises
        kind = None
        if name in RAISES_CALLS:
            kind = name
        elif self_call and attr in UNITTEST_RAISES:
            kind = attr
        elif (
            last_name(name or callee) in PROJECT_RAISES and node.args and not name.startswith(("pytest.", "unittest."))
        ):
            kind = "raises"  # the project's own raises(KeyError, f, ...) / assert_raises / check_raises
        if kind is not None and (node.args or node.keywords):
            expected = (
                node.args[0]
                if node.args
                else next((k.value for k in node.keywords if k.arg in ("expected_exception", "expected_warning")), None)
            )
            match_node: ast.expr | None = None
            if kind in RAISES_CALLS:
                match_node = next((k.value for k in node.keywords if k.arg == "match"), None)
            elif UNITTEST_RAISES.get(kind) is not None:
                match_node = (
                    node.args[1]
                    if len(node.args) > 1
                    else next((k.value for k in node.keywords if k.arg == "expected_regex"), None)
                )
            match = self._pattern_text(match_node, f.node)
            body = raise_with.get(
                id(node), ast.dump(ast.Module(body=[ast.Expr(a) for a in node.args[1:]], type_ignores=[]))
            )
            expected = self._exception_value(expected, f.node)
            f.raises.append(
                RaiseSite(
                    node,
                    kind.rsplit(".", 1)[-1].replace("Regexp", "").replace("Regex", ""),
                    _type_names(self.names, expected),
                    match,
                    match_node is not None,
                    body,
                )
            )

    def _pattern_text(self, node: ast.expr | None, fn: FunctionNode, depth: int = 0) -> str | None:
        """The regex a `match=` names when it is static: a string, `re.compile("...")`, a name bound to either."""
        if node is None or depth > 4:
            return None
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, str) else None
        if isinstance(node, ast.Call) and node.args and (self.names.qualify(node.func) or "") == "re.compile":
            return self._pattern_text(node.args[0], fn, depth + 1)
        if isinstance(node, ast.Name):
            value = meaning.bindings(fn, self.scope)[0].get(node.id) or self.constants.get(node.id)
            return self._pattern_text(value, fn, depth + 1) if value is not None else None
        return None

    def _exception_value(self, node: ast.expr | None, fn: FunctionNode, depth: int = 0) -> ast.expr | None:
        """See through names bound to exception types or tuples (`ERRORS = (KeyError, Exception)`)."""
        if depth > 4 or node is None:
            return node
        if isinstance(node, ast.Name):
            if (
                builtin_exception(node.id) is not None
                and node.id not in self.constants
                and node.id not in self.names.aliases
            ):
                return node
            value = meaning.bindings(fn, self.scope)[0].get(node.id) or self.constants.get(node.id)
            return self._exception_value(value, fn, depth + 1) if value is not None else node
        if isinstance(node, ast.Tuple):
            elts: list[ast.expr] = []
            for e in node.elts:
                e = self._exception_value(e, fn, depth + 1) or e
                elts += e.elts if isinstance(e, ast.Tuple) else [e]
            return ast.Tuple(elts=elts, ctx=ast.Load())
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = (
                self._exception_value(node.left, fn, depth + 1),
                self._exception_value(node.right, fn, depth + 1),
            )
            if isinstance(left, ast.Tuple) and isinstance(right, ast.Tuple):
                return ast.Tuple(elts=left.elts + right.elts, ctx=ast.Load())
        return node

    def _subject(self, f: Facts, key: str, rank: int, node: ast.AST) -> None:
        f.subject_ranks.setdefault(key, []).append((rank, node))
        old = f.subjects.get(key)
        if old is None or rank > old[0]:
            f.subjects[key] = (rank, node)

    def _assertion(self, f: Facts, node: ast.Assert, test: ast.expr) -> None:
        for key, rank in _assert_strength(test):
            self._subject(f, key, rank, node)
        for part in test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]:
            for subject in self._approximated(part):
                f.approximate.setdefault(subject, node)
        why = "it is always true" if _truthy_constant(test) else meaning.never_fails(test, f.node, self.scope)
        if why:
            f.tautologies.append(("assert " + ast.unparse(test), node))
            f.why[id(node)] = why

    def _approximated(self, test: ast.expr) -> list[str]:
        """Subjects TEST compares within a tolerance: `x == approx(3)`, `isclose(x, 3)`."""
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            sides = [test.left, test.comparators[0]]
            if any(isinstance(s, ast.Call) and (self.names.qualify(s.func) or "") == "pytest.approx" for s in sides):
                return [k for k in (_subject_key(s) for s in sides) if k]
        if isinstance(test, ast.Call) and (self.names.qualify(test.func) or "") in (
            "math.isclose",
            "numpy.isclose",
            "numpy.allclose",
            "cmath.isclose",
        ):
            return [k for k in (_subject_key(a) for a in test.args[:2]) if k]
        return []

    def _abs_tolerance(self, f: Facts, node: ast.Compare) -> None:
        """``abs(a - b) < eps`` and ``eps > abs(a - b)``."""
        if len(node.ops) != 1:
            return
        left, right, op = node.left, node.comparators[0], node.ops[0]
        if isinstance(op, (ast.Gt, ast.GtE)):
            left, right = right, left
        elif not isinstance(op, (ast.Lt, ast.LtE)):
            return
        if isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "abs":
            value = hm.number(right, self.constants)
            if value is not None:
                f.tolerances.append(("abs|" + ast.dump(left), {"eps": value}, node))

    def _broad(self, node: ast.AST | None) -> str | None:
        if node is None:
            return ""
        for name in _type_names(self.names, node):
            if name.rsplit(".", 1)[-1] in BROAD:
                return name
        return None

    def _swallow(self, f: Facts, node: ast.Try, cls: ast.ClassDef | None) -> None:
        if not self._has_checks(node.body, cls):
            return
        for handler in node.handlers:
            caught = self._broad(handler.type)
            if caught is None:
                continue
            reraises = any(
                isinstance(n, ast.Raise)
                or (isinstance(n, ast.Call) and (self.names.qualify(n.func) or "").endswith(("pytest.fail", ".fail")))
                for n in ast.walk(handler)
            )
            if not reraises:
                f.swallows.append((f"except {caught}".rstrip() + ("" if caught else ":"), handler))

    def _suppress(self, f: Facts, node: ast.With | ast.AsyncWith, cls: ast.ClassDef | None) -> None:
        for item in node.items:
            call = item.context_expr
            if isinstance(call, ast.Call) and (self.names.qualify(call.func) or "") == "contextlib.suppress":
                caught = [
                    n for n in _type_names(self.names, ast.Tuple(elts=list(call.args))) if n.rsplit(".", 1)[-1] in BROAD
                ]
                if caught and self._has_checks(node.body, cls):
                    f.swallows.append((f"contextlib.suppress({caught[0]})", node))

    def _parametrize(self, f: Facts, deco: ast.expr) -> None:
        deco = self.names.expand(deco)
        if not isinstance(deco, ast.Call) or (self.names.qualify(deco.func) or "") != "pytest.mark.parametrize":
            return
        argnames = deco.args[0] if deco.args else next((k.value for k in deco.keywords if k.arg == "argnames"), None)
        argvalues = (
            deco.args[1] if len(deco.args) > 1 else next((k.value for k in deco.keywords if k.arg == "argvalues"), None)
        )
        if argnames is None:
            return
        if isinstance(argnames, ast.Constant) and isinstance(argnames.value, str):
            key = ",".join(p.strip() for p in argnames.value.split(","))
        else:
            key = ast.unparse(argnames)
        if isinstance(argvalues, ast.Name) and argvalues.id in self.constants:
            argvalues = self.constants[argvalues.id]
        values = [ast.unparse(e) for e in argvalues.elts] if isinstance(argvalues, (ast.List, ast.Tuple)) else None
        f.parametrize[key] = (values, deco)


def _walk_body(fn: FunctionNode) -> Iterable[ast.AST]:
    """Nodes of FN's body (not its decorators or defaults)."""
    for stmt in fn.body:
        yield from ast.walk(stmt)


# -- one version of a module ---------------------------------------------------------


@dataclass
class Side:
    """One version (base or new) of a changed module, parsed once."""

    path: str
    module: Module
    analyzer: Analyzer
    facts: dict[str, Facts]
    hyp: hm.HypothesisModule


def parse_side(path: str, data: bytes, helpers: HelperIndex | None) -> Side:
    """Parse DATA (raises SourceError); facts are filled in by the caller, for the functions it needs."""
    module = Module.from_source(path, data)
    analyzer = Analyzer(module, helpers)
    return Side(path, module, analyzer, {}, hm.model(module))


def finding_at(side: Side, node: ast.AST, code: str, message: str) -> Finding:
    return side.module.finding(node, code, message)


def who_of(f: Facts) -> str:
    """How findings name the function: a test by its qualname, anything else as a helper."""
    return f.qualname if f.is_test else f"helper {f.qualname}"
