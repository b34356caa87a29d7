"""oracle-shrink: reject tests whose checks got fewer or weaker since the base.

Each test (and each helper that holds checks) is compared with its own base
version: the same qualname in the file's base version, or the removed test
with the same body anywhere in the change (a rename or a move).  A check is
an ``assert``, a ``self.assert*``/``fail*`` call, ``pytest.raises``/``warns``/
``deprecated_call``/``fail``, a mock's ``assert_*`` call, numpy/pandas
``assert_*`` helpers, ``raise AssertionError``, or a call to a helper that
holds checks (same module, same class, or imported from a repository file),
so moving asserts into a helper keeps the count.  Splitting a test, merging
tests into one parametrized test or moving checks to another test keeps the
checks as long as they reappear somewhere in the change.
"""

from __future__ import annotations

import ast
import builtins
import os
import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Callable

from hooks import args as hook_args
from hooks import changes, expectations, git, meaning
from hooks import hypothesis_model as hm
from hooks.context import HookContext
from hooks.pysource import DEEP, TRY_NODES, FunctionNode, Module, Names, SourceError, test_functions
from hooks.report import Finding, guarded, notice
from hooks.tautologies import truthy_constant as _truthy_constant

TRIGGER = re.compile(rb"def |assert|raises|warns|given|settings|parametrize|hypothesis")
TEST_FILE = re.compile(r"(^|/)(tests?|testing)/|(^|/)(test_[^/]*|[^/]*_tests?|conftest)\.pyi?$")
CHECK_PREFIXES = ("assert", "check_", "verify_", "expect_", "fail")

CHECK_CALLS = {"pytest.raises", "pytest.warns", "pytest.deprecated_call", "pytest.fail", "unittest.TestCase.fail"}
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

# unittest assertion -> strength (3 exact, 2 ordered/membership, 1 truthiness/type)
UNITTEST_RANK = {
    "assertEqual": 3,
    "assertEquals": 3,
    "assertIs": 3,
    "assertIsNone": 3,
    "assertListEqual": 3,
    "assertDictEqual": 3,
    "assertTupleEqual": 3,
    "assertSetEqual": 3,
    "assertSequenceEqual": 3,
    "assertMultiLineEqual": 3,
    "assertCountEqual": 3,
    "assertAlmostEqual": 3,
    "assertAlmostEquals": 3,
    "assertIn": 2,
    "assertNotIn": 2,
    "assertNotEqual": 2,
    "assertGreater": 2,
    "assertGreaterEqual": 2,
    "assertLess": 2,
    "assertLessEqual": 2,
    "assertRegex": 2,
    "assertIsNot": 2,
    "assertNotAlmostEqual": 2,
    "assertTrue": 1,
    "assertFalse": 1,
    "assert_": 1,
    "assertIsNotNone": 1,
    "assertIsInstance": 1,
    "assertNotIsInstance": 1,
}
STRENGTH = {3: "exact comparison", 2: "ordering or membership check", 1: "truthiness or type check"}

# Tolerance-taking checks: positional parameters, defaults, and how a value maps to a tolerance.
_DECIMAL = "decimal"
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
    texts: Counter = field(default_factory=Counter)  # unparsed check sites
    text_lines: dict = field(default_factory=dict)  # check text -> first line it is on
    subjects: dict[str, tuple[int, ast.AST]] = field(default_factory=dict)  # subject -> (strongest rank, node)
    subject_ranks: dict[str, list[tuple[int, ast.AST]]] = field(default_factory=dict)  # subject -> every (rank, node)
    tolerances: list[tuple[str, dict[str, float], ast.AST]] = field(default_factory=list)
    swallows: list[tuple[str, ast.AST]] = field(default_factory=list)
    raises: list[RaiseSite] = field(default_factory=list)
    parametrize: dict[str, tuple[list[str] | None, ast.AST]] = field(default_factory=dict)
    tautologies: list[tuple[str, ast.AST]] = field(default_factory=list)
    why: dict[int, str] = field(default_factory=dict)  # id(tautology node) -> why it cannot fail
    approximate: dict[str, ast.AST] = field(default_factory=dict)  # subjects compared with a tolerance
    called: set = field(default_factory=set)
    cls: ast.ClassDef | None = None
    _body_key: str | None = None

    @property
    def body_key(self) -> str:
        """The body without its docstring, positions and name: equal for a renamed or moved test."""
        if self._body_key is None:
            body = self.node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
                body = body[1:]
            self._body_key = ast.dump(ast.Module(body=body, type_ignores=[])) if body else ""
        return self._body_key

    @property
    def cases(self) -> int:
        total = 1
        for values, _ in self.parametrize.values():
            total *= max(len(values), 1) if values is not None else 1
        return total


def _last(name: str) -> str:
    return name.rsplit(".", 1)[-1].lstrip("_")


def _is_check_name(name: str) -> bool:
    last = _last(name)
    return last.startswith(CHECK_PREFIXES) or last.startswith("assert")


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
        return [(key, 1)] if key else []
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


def _builtin_exception(name: str) -> type | None:
    value = getattr(builtins, name, None) if "." not in name else None
    return value if isinstance(value, type) and issubclass(value, BaseException) else None


def broadened_type(base_types: tuple[str, ...], new_types: tuple[str, ...]) -> str | None:
    """A type in NEW_TYPES that catches more than BASE_TYPES did, or None."""
    if not base_types:
        return None
    for t in new_types:
        if t in base_types:
            continue
        t_cls = _builtin_exception(t)
        narrower = False
        for b in base_types:
            b_cls = _builtin_exception(b)
            if t_cls is not None and b_cls is not None and issubclass(t_cls, b_cls):
                narrower = True
            elif t_cls is None and b_cls is not None:
                narrower = True  # a project exception in place of a builtin: (almost always) a subclass
        if narrower:
            continue
        if t_cls is not None:
            return t  # a builtin that is no subclass of what was expected: wider or unrelated
        if len(new_types) > len(base_types):
            return t
        if any(t.rsplit(".", 1)[-1] in _project_ancestors(b.rsplit(".", 1)[-1]) for b in base_types):
            return t  # the project's own base class of what was expected
    return None


_ANCESTORS: dict[tuple[str, str], set[str]] = {}


def _project_ancestors(name: str, depth: int = 0) -> set[str]:
    """Base-class names of the repository's own class NAME (by `git grep`, found once)."""
    key = (os.getcwd(), name)
    if key in _ANCESTORS or depth > 6 or not name.isidentifier():
        return _ANCESTORS.get(key, set())
    _ANCESTORS[key] = set()
    out = git.run("grep", "-h", "-E", rf"^\s*class {name}\(", "--", "*.py", check=False)
    found: set[str] = set()
    for line in os.fsdecode(out).splitlines()[:5]:
        try:
            tree = ast.parse(line.strip().rstrip(":") + ": pass")
        except SyntaxError:
            continue
        for base in getattr(tree.body[0], "bases", []):
            parent = ast.unparse(base).rsplit(".", 1)[-1]
            if parent != name:
                found |= {parent} | _project_ancestors(parent, depth + 1)
    _ANCESTORS[key] = found
    return found


def loosened_match(base: str | None, base_has: bool, new: str | None, new_has: bool) -> str | None:
    if not base_has or base is None:
        return None
    if not new_has:
        return f"`match={base!r}` removed"
    if new is None or new == base:
        return None
    if new in ("", ".*", ".+", ".*?", "^.*$", "(?s).*"):
        return f"`match` loosened from {base!r} to {new!r}"
    if new in base and len(new) < len(base) and any(ch.isalnum() for ch in base.replace(new, "", 1)):
        return f"`match` loosened from {base!r} to {new!r}"  # words cut, not just punctuation
    return None


class Analyzer:
    """Facts of every function in one module; helpers resolved on one side of the change."""

    def __init__(self, module: Module, helpers: HelperIndex | None) -> None:
        self.module = module
        self.names = module.names
        self.helpers = helpers
        self.constants = hm.module_constants(module.tree)
        self.classes = {n.name: n for n in module.tree.body if isinstance(n, ast.ClassDef)}
        self.functions = {n.name: n for n in module.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self._weights: dict[tuple[int, bool], int] = {}
        self.scope = meaning.Scope(self.names, self.constants, self.functions)

    def index(self) -> dict[str, tuple[FunctionNode, ast.ClassDef | None, bool]]:
        """Every function and method: qualname -> (node, enclosing class, collected as a test)."""
        tests = {q for q, _ in test_functions(self.module.tree)}
        found: dict[str, tuple[FunctionNode, ast.ClassDef | None, bool]] = {}

        def visit(body: list[ast.stmt], prefix: str, cls: ast.ClassDef | None) -> None:
            for node in body:
                if isinstance(node, ast.ClassDef):
                    visit(node.body, f"{prefix}{node.name}.", node)
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    q = prefix + node.name
                    found[q] = (node, cls, q in tests)
                elif isinstance(node, ast.Delete):  # `del test_x` after the def: never collected
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            found.pop(prefix + target.id, None)

        visit(self.module.tree.body, "", None)
        return found

    def all_facts(self, resolve_imports: bool = False) -> dict[str, Facts]:
        return {
            q: self.facts(q, node, cls, is_test, resolve_imports) for q, (node, cls, is_test) in self.index().items()
        }

    def text_of(self, node: ast.AST) -> bytes:
        """The source lines of NODE, decorators included."""
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        return b"\n".join(self._lines[first - 1 : getattr(node, "end_lineno", node.lineno)])

    @property
    def _lines(self) -> list[bytes]:
        if not hasattr(self, "_split"):
            self._split = self.module.source.splitlines()
        return self._split

    def context(self) -> bytes:
        """Module-level statements other than functions and classes (constants, settings, profiles)."""
        return b"\n".join(
            self.text_of(n)
            for n in self.module.tree.body
            if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        )

    # -- checks ----------------------------------------------------------------

    def check_weight(
        self, call: ast.Call, cls: ast.ClassDef | None, resolve_imports: bool, depth: int
    ) -> tuple[int, bool]:
        """(how many checks CALL stands for, whether it is a check site at all)."""
        name = self.names.qualify(call.func) or ""
        if name in CHECK_CALLS or name.startswith(
            ("numpy.testing.assert", "pandas.testing.assert", "pandas.util.testing.assert", "torch.testing.assert")
        ):
            return 1, True
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
            method = self._method(cls, func.attr)
            if method is not None:
                weight = self._weight_of(self.module, method, cls, resolve_imports, depth + 1)
                return weight, weight > 0
            return (1, True) if _is_check_name(func.attr) else (0, False)
        if (
            isinstance(func, ast.Name)
            and func.id in self.functions
            and self.names.aliases.get(func.id, func.id) == func.id
        ):
            weight = self._weight_of(self.module, self.functions[func.id], None, resolve_imports, depth + 1)
            return weight, weight > 0
        if (
            resolve_imports
            and self.helpers is not None
            and name
            and not name.startswith(("pytest.", "unittest.", "hypothesis."))
        ):
            found = self.helpers.resolve(self.module.path, name)
            if found is None and isinstance(func, ast.Name) and func.id not in self.names.aliases:
                found = self.helpers.fixture(self.module.path, func.id)  # a checker handed in by a conftest fixture
            if found is not None:
                other, fn = found
                weight = Analyzer(other, self.helpers)._weight_of(other, fn, None, resolve_imports, depth + 1)
                return weight, weight > 0
        if isinstance(func, ast.Attribute) and _is_check_name(func.attr):
            return 1, True  # mock.assert_called_once_with(...), helper.check_x(...)
        if isinstance(func, ast.Name) and _is_check_name(func.id):
            return 1, True
        return 0, False

    def _method(self, cls: ast.ClassDef | None, name: str, depth: int = 0) -> FunctionNode | None:
        if cls is None or depth > 5:
            return None
        for node in cls.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                return node
        for base in cls.bases:
            if isinstance(base, ast.Name) and base.id in self.classes:
                found = self._method(self.classes[base.id], name, depth + 1)
                if found is not None:
                    return found
        return None

    def _weight_of(
        self, module: Module, fn: FunctionNode, cls: ast.ClassDef | None, resolve_imports: bool, depth: int
    ) -> int:
        if depth > 4:
            return 1 if _is_check_name(fn.name) else 0
        key = (id(fn), resolve_imports)
        if key in self._weights:
            return self._weights[key]
        self._weights[key] = 0  # recursion guard
        analyzer = self if module is self.module else Analyzer(module, self.helpers)
        weight = sum(w for w, _, _ in analyzer._check_sites(fn.body, cls, resolve_imports, depth))
        self._weights[key] = weight
        return weight

    def _check_sites(
        self, body: list[ast.stmt], cls: ast.ClassDef | None, resolve_imports: bool, depth: int = 0
    ) -> Iterable[tuple[int, ast.AST, str]]:
        repeat: dict[int, int] = {}  # node -> times a loop over a literal runs it
        for node in live_nodes(body):
            times = repeat.get(id(node), 1)
            if isinstance(node, (ast.For, ast.AsyncFor)):
                n = self._literal_length(node.iter)
                if n:
                    for stmt in node.body:
                        for inner in ast.walk(stmt):
                            repeat[id(inner)] = repeat.get(id(inner), 1) * n
            elif isinstance(node, ast.Assert):
                yield times * self._assert_weight(node.test), node, "assert " + ast.unparse(node.test)
            elif isinstance(node, ast.Raise) and node.exc is not None:
                exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if (self.names.qualify(exc) or "").rsplit(".", 1)[-1] in ("AssertionError", "failureException"):
                    yield times, node, ast.unparse(node)
            elif isinstance(node, ast.Call):
                weight, is_check = self.check_weight(node, cls, resolve_imports, depth)
                if is_check:
                    if any(k.arg in ("match", "expected_regex") for k in node.keywords) or (
                        isinstance(node.func, ast.Attribute)
                        and node.func.attr in ("assertRaisesRegex", "assertWarnsRegex")
                        and len(node.args) > 1
                    ):
                        weight += 1  # the message is checked too
                    elif (
                        isinstance(node.func, ast.Attribute) and node.func.attr in UNITTEST_RANK and len(node.args) >= 2
                    ):
                        weight = max(weight, _pairs(node.args[0], node.args[1]))
                    yield (
                        times * weight,
                        node,
                        ast.unparse(node.func) + "(" + ", ".join(ast.unparse(a) for a in node.args) + ")",
                    )

    def _assert_weight(self, test: ast.expr) -> int:
        """`assert ok(r)` where ok is this module's `return a and b and c`: the predicate's checks."""
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id in self.functions:
            body = [
                b
                for b in self.functions[test.func.id].body
                if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))
            ]
            if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
                return max(_conjuncts(body[0].value), 1)
        return _conjuncts(test)

    def _literal_length(self, node: ast.expr) -> int:
        if isinstance(node, ast.Name) and node.id in self.constants:
            node = self.constants[node.id]
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and not any(isinstance(e, ast.Starred) for e in node.elts):
            return len(node.elts)
        if isinstance(node, ast.Dict):
            return len(node.keys)
        return 0

    def facts(
        self, qualname: str, fn: FunctionNode, cls: ast.ClassDef | None, is_test: bool, resolve_imports: bool
    ) -> Facts:
        f = Facts(qualname, fn, is_test, cls=cls)
        for weight, node, text in self._check_sites(fn.body, cls, resolve_imports):
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
                f.called.add(_last(self.names.qualify(node.func) or ast.unparse(node.func)))
                self._call(f, node, raise_with)
        for deco in fn.decorator_list:
            self._parametrize(f, deco)
        return f

    def _call(self, f: Facts, node: ast.Call, raise_with: dict[int, str]) -> None:
        name = self.names.qualify(node.func) or ""
        attr = node.func.attr if isinstance(node.func, ast.Attribute) else None
        # unittest spellings, equality helpers and this module's own check helpers that cannot fail
        callee = attr or (node.func.id if isinstance(node.func, ast.Name) else "")
        if (
            callee.startswith(CHECK_PREFIXES)
            or callee in self.functions
            or (attr and isinstance(node.func.value, ast.Name) and node.func.value.id in ("self", "cls"))
        ):  # type: ignore[union-attr]
            why = meaning.call_never_fails(node, f.node, self.scope, f.cls)
            if not why and self.helpers is not None and "." in name and meaning.same_or_literal_args(node):
                found = self.helpers.resolve(self.module.path, name)  # a helper imported from a repository file
                why = meaning.call_never_fails(node, f.node, self.scope, f.cls, helper=found[1]) if found else None
            if why:
                f.tautologies.append((ast.unparse(node), node))
                f.why[id(node)] = why
        self_call = attr is not None and isinstance(node.func.value, ast.Name) and node.func.value.id in ("self", "cls")  # type: ignore[union-attr]
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
        elif _last(name or callee) in PROJECT_RAISES and node.args and not name.startswith(("pytest.", "unittest.")):
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
            match = (
                match_node.value if isinstance(match_node, ast.Constant) and isinstance(match_node.value, str) else None
            )
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

    def _exception_value(self, node: ast.expr | None, fn: FunctionNode, depth: int = 0) -> ast.expr | None:
        """See through names bound to exception types or tuples (`ERRORS = (KeyError, Exception)`)."""
        if depth > 4 or node is None:
            return node
        if isinstance(node, ast.Name):
            if (
                _builtin_exception(node.id) is not None
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

    def _has_checks(self, body: list[ast.stmt], cls: ast.ClassDef | None) -> bool:
        return any(w > 0 for w, _, _ in self._check_sites(body, cls, False))

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


def _pairs(left: ast.AST, right: ast.AST) -> int:
    """`(a, b) == (1, 2)` checks two values."""
    if (
        isinstance(left, (ast.Tuple, ast.List))
        and isinstance(right, (ast.Tuple, ast.List))
        and len(left.elts) == len(right.elts)
    ):
        return max(len(left.elts), 1)
    return 1


def _conjuncts(test: ast.expr) -> int:
    """How many checks one assert makes: `a and b` is two, `(a, b) == (1, 2)` is two."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return sum(_conjuncts(v) for v in test.values)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        return _pairs(test.left, test.comparators[0])
    return 1


_TERMINATORS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _never(test: ast.expr) -> bool:
    return isinstance(test, ast.Constant) and not test.value


def _repeat_after_action(fn: FunctionNode, texts: Counter) -> bool:
    """Whether some assert in TEXTS comes again after a statement that can change
    what it looks at (a call, an assignment, a raise): a new check, not a repeat."""
    occurrences: dict[str, list[int]] = {}
    actions: list[int] = []
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue  # a definition runs nothing yet
        if isinstance(node, ast.Assert):
            occurrences.setdefault(" ".join(("assert " + ast.unparse(node.test)).split()), []).append(node.lineno)
        elif (
            isinstance(node, ast.stmt)
            and not isinstance(node, ast.Pass)
            and not _is_check_call(node)
            and not any(isinstance(getattr(node, f, None), list) for f in ("body", "handlers"))
        ):
            actions.append(node.lineno)
        for field_name in ("body", "orelse", "handlers", "finalbody"):
            stack.extend(getattr(node, field_name, None) or [])
        if isinstance(node, (ast.With, ast.AsyncWith)):
            actions.append(node.lineno)  # entering a context runs code
    for text in texts:
        lines = sorted(occurrences.get(text, []))
        if any(any(a < b and a > prev for a in actions) for prev, b in zip(lines, lines[1:])):
            return True
    return False


def _is_check_call(stmt: ast.stmt) -> bool:
    """``self.assertX(...)`` / ``assert_frame_equal(...)``: looks, changes nothing."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    func = stmt.value.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name.startswith("assert")


def live_nodes(body: list[ast.stmt]) -> Iterable[ast.AST]:
    """Nodes of BODY that can run: nothing after a return/raise/break/continue in the
    same block, nothing under ``if False:``, so checks made unreachable do not count."""
    stack: list[ast.AST] = []
    for stmt in reversed(_live_block(body)):
        stack.append(stmt)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _never(node.test):
            children: list[ast.AST] = [node.test] + list(_live_block(node.orelse))
        elif isinstance(node, ast.While) and _never(node.test):
            children = [node.test] + list(_live_block(node.orelse))
        else:
            children = []
            for _, value in ast.iter_fields(node):
                if isinstance(value, list):
                    if value and isinstance(value[0], ast.stmt):
                        children += _live_block(value)
                    else:
                        children += [v for v in value if isinstance(v, ast.AST)]
                elif isinstance(value, ast.AST):
                    children.append(value)
        stack.extend(reversed(children))


def _live_block(stmts: list) -> list:
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, _TERMINATORS) and not (isinstance(stmt, ast.Raise) and _raises_assertion(stmt)):
            return stmts[: i + 1]
    return stmts


def _raises_assertion(stmt: ast.Raise) -> bool:
    exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
    return isinstance(exc, (ast.Name, ast.Attribute)) and (
        ast.unparse(exc).rsplit(".", 1)[-1] in ("AssertionError", "failureException")
    )


# -- helpers imported from other repository files ----------------------------------


class HelperIndex:
    """Finds the function a dotted callee names, in the repository files of one side."""

    def __init__(self, read: Callable[[list[str]], dict[str, bytes | None]]) -> None:
        self.read = read
        self._modules: dict[str, Module | None] = {}

    def _load(self, candidates: list[str]) -> Module | None:
        missing = [c for c in candidates if c not in self._modules]
        if missing:
            for path, data in self.read(missing).items():
                module = None
                if data is not None:
                    try:
                        module = Module.from_source(path, data)
                    except SourceError:
                        module = None
                self._modules[path] = module
        for c in candidates:
            if self._modules.get(c) is not None:
                return self._modules[c]
        return None

    def fixture(self, from_path: str, name: str) -> tuple[Module, FunctionNode] | None:
        """The function NAME in the nearest conftest.py at or above FROM_PATH's folder."""
        folders = []
        d = posixpath.dirname(from_path)
        while True:
            folders.append(d)
            if not d:
                break
            d = posixpath.dirname(d)
        for folder in folders:
            module = self._load([posixpath.join(folder, "conftest.py") if folder else "conftest.py"])
            if module is None:
                continue
            for node in module.tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                    return module, node
        return None

    def resolve(self, from_path: str, dotted: str, depth: int = 0) -> tuple[Module, FunctionNode] | None:
        if depth > 3 or "." not in dotted.lstrip("."):
            return None
        level = len(dotted) - len(dotted.lstrip("."))
        parts = dotted.lstrip(".").split(".")
        func, module_parts = parts[-1], parts[:-1]
        here = posixpath.dirname(from_path)
        if level:
            base = here
            for _ in range(level - 1):
                base = posixpath.dirname(base)
            roots = [base]
        else:
            roots = [""]
            if not module_parts or module_parts[0] != "src":
                roots.append("src")
            d = here
            while d:
                roots.append(d)
                d = posixpath.dirname(d)
        candidates = []
        for root in roots:
            rel = "/".join(module_parts)
            stem = posixpath.join(root, rel) if root else rel
            if not stem:
                continue
            candidates += [stem + ".py", stem + "/__init__.py"]
        module = self._load(candidates)
        if module is None:
            return None
        for node in module.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == func:
                return module, node
        target = module.names.aliases.get(func)
        if target and target != func:
            return self.resolve(module.path, target, depth + 1)
        return None


# -- comparing two sides -------------------------------------------------------------


@dataclass
class Side:
    path: str
    module: Module
    analyzer: Analyzer
    facts: dict[str, Facts]
    hyp: hm.HypothesisModule


def _side(path: str, data: bytes, helpers: HelperIndex | None) -> Side:
    module = Module.from_source(path, data)
    analyzer = Analyzer(module, helpers)
    return Side(path, module, analyzer, {}, hm.model(module))


def _find(side: Side, node: ast.AST, code: str, message: str) -> Finding:
    return side.module.finding(node, code, message)


def _who(f: Facts) -> str:
    return f.qualname if f.is_test else f"helper {f.qualname}"


def _facts_needed(side: Side | None, other: Side | None) -> dict[str, Facts]:
    """Facts of SIDE's functions, leaving out those whose text and module context are unchanged."""
    if side is None:
        return {}
    index = side.analyzer.index()
    skip: set[str] = set()
    if other is not None and side.analyzer.context() == other.analyzer.context():
        other_index = other.analyzer.index()
        for q, (node, _, _) in index.items():
            if q in other_index and side.analyzer.text_of(node) == other.analyzer.text_of(other_index[q][0]):
                skip.add(q)
    side.facts = {
        q: side.analyzer.facts(q, node, cls, is_test, False)
        for q, (node, cls, is_test) in index.items()
        if q not in skip
    }
    return side.facts


def compare_function(base: Facts, new: Facts, base_side: Side, new_side: Side) -> list[Finding]:
    """Weakenings of one function that cannot be paid back by checks elsewhere (all but the count)."""
    out: list[Finding] = []
    who = _who(new)
    # strong comparisons relaxed
    for key, (rank, _) in base.subjects.items():
        now = new.subjects.get(key)
        if now is not None and now[0] < rank:
            shown = new_side.module.segment(now[1])
            out.append(
                _find(
                    new_side,
                    now[1],
                    "OG303",
                    f"{who}: `{shown}` is weaker than the base's {STRENGTH[rank]} of the same value",
                )
            )
        elif now is not None:
            # The same value checked as often, one check of it weaker (`== 0` -> `in (0, 1)`,
            # `a` -> `a or b`) while a stronger copy elsewhere keeps the top rank.
            was = sorted(base.subject_ranks.get(key, []), key=lambda p: p[0])
            now_all = sorted(new.subject_ranks.get(key, []), key=lambda p: p[0])
            pair = (
                next(((b, n) for b, n in zip(was, now_all) if n[0] < b[0]), None) if len(was) == len(now_all) else None
            )
            if pair is not None:
                shown = new_side.module.segment(pair[1][1])
                out.append(
                    _find(
                        new_side,
                        pair[1][1],
                        "OG303",
                        f"{who}: `{shown}` is weaker than the base's {STRENGTH[pair[0][0]]} of the same value",
                    )
                )
    # an exact comparison turned into one within a tolerance
    for key, node in new.approximate.items():
        old_rank = base.subjects.get(key)
        if old_rank is not None and old_rank[0] == 3 and key not in base.approximate:
            out.append(
                _find(
                    new_side,
                    node,
                    "OG304",
                    f"{who}: `{new_side.module.segment(node)}` compares within a tolerance where the base compared exactly",
                )
            )
    # tolerances
    pool: dict[str, list[dict[str, float]]] = {}
    for key, values, _ in base.tolerances:
        pool.setdefault(key, []).append(values)
    for key, values, node in new.tolerances:
        olds = pool.get(key)
        if not olds:
            continue
        old = olds.pop(0)
        for param, value in values.items():
            if param in old and value > old[param] * (1 + 1e-9):
                out.append(
                    _find(
                        new_side,
                        node,
                        "OG304",
                        f"{who}: tolerance `{param}` loosened from {_fmt(old[param])} to {_fmt(value)} in `{new_side.module.segment(node)}`",
                    )
                )
                break
    # swallowed failures
    base_swallows = Counter(k for k, _ in base.swallows)
    for key, node in new.swallows:
        if base_swallows[key] > 0:
            base_swallows[key] -= 1
            continue
        out.append(_find(new_side, node, "OG305", f"{who}: new `{key}` around checks swallows their failures"))
    # broadened raises/warns
    out += _compare_raises(base, new, new_side, who)
    # parametrize cases lost
    for key, (values, node) in new.parametrize.items():
        old = base.parametrize.get(key)
        if old is None or old[0] is None or values is None:
            continue
        if len(values) < len(old[0]) and not set(old[0]) <= set(values):  # dropping a duplicate case loses nothing
            lost = list((Counter(old[0]) - Counter(values)).elements())
            shown = f" (lost `{lost[0]}`)" if lost else ""
            out.append(
                _find(
                    new_side,
                    node,
                    "OG307",
                    f"{who}: parametrize '{key}' has {len(values)} cases, base had {len(old[0])}{shown}",
                )
            )
    # hypothesis
    out += _compare_hypothesis(base, new, base_side, new_side, who)
    # checks that always ran now run only under a new `if` (no else)
    if new.is_test:
        out += _now_conditional(base, new, new_side, who)
    # expected values rewritten in place (same check, other constants)
    if new.is_test:
        loosened = {f.line for f in out if f.code == "OG304"}  # a loosened tolerance is reported once
        for old_check, new_check in expectations.rewritten(base.node, new.node):
            if new_side.module.position(new_check.node)[0] in loosened:
                continue
            shown = new_side.module.segment(new_check.node)
            out.append(
                _find(
                    new_side,
                    new_check.node,
                    "OG314",
                    f"{who}: {expectations.describe(old_check, new_check)} in `{shown}`; restore the base's expected value, or change it in its own reviewed commit",
                )
            )
    out += _meaning_findings(base, new, base_side, new_side, who, out)
    return out


def _meaning_findings(
    base: Facts, new: Facts, base_side: Side, new_side: Side, who: str, found: list[Finding]
) -> list[Finding]:
    """Comparisons that no longer look at what the base looked at (one finding per check site)."""
    if not (new.texts - base.texts) and expectations.same_setup(base.node, new.node):
        return []  # no check is new and nothing they read changed: nothing can look elsewhere now
    seen = {(f.line, f.col) for f in found}
    taut = {id(n) for _, n in new.tautologies}
    out = []
    for node, code, message in meaning.compare(
        base.node, new.node, base_side.analyzer.scope, new_side.analyzer.scope, base.cls, new.cls
    ):
        finding = _find(new_side, node, code, f"{who}: {message}")
        if (finding.line, finding.col) not in seen and id(node) not in taut:
            seen.add((finding.line, finding.col))
            out.append(finding)
    return out


def _now_conditional(base: Facts, new: Facts, new_side: Side, who: str) -> list[Finding]:
    """``assert x`` that ran unconditionally at the base, now only inside ``if <new condition>:``."""

    def asserts(fn: FunctionNode) -> Iterable[tuple[ast.Assert, ast.If | None]]:
        stack: list[tuple[ast.AST, ast.If | None]] = [(s, None) for s in fn.body]
        while stack:
            node, guard = stack.pop()
            if isinstance(node, ast.Assert):
                yield node, guard
            elif isinstance(node, ast.If):
                stack += [(s, guard or node) for s in node.body + node.orelse]
            elif isinstance(node, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While) + TRY_NODES):
                inner = node.body + getattr(node, "orelse", []) + getattr(node, "finalbody", [])
                stack += [(s, guard) for s in inner]

    always = Counter(ast.dump(a.test) for a, guard in asserts(base.node) if guard is None)
    now_always = Counter(ast.dump(a.test) for a, guard in asserts(new.node) if guard is None)
    base_conditions = {ast.dump(n.test) for n in ast.walk(base.node) if isinstance(n, (ast.If, ast.While))}
    out = []
    for node, guard in sorted(asserts(new.node), key=lambda p: p[0].lineno):
        k = ast.dump(node.test)
        if guard is None or guard.orelse or ast.dump(guard.test) in base_conditions or always[k] <= now_always[k]:
            continue
        now_always[k] += 1
        out.append(
            _find(
                new_side,
                node,
                "OG301",
                f"{who}: `{new_side.module.segment(node)}` always ran at the base, now only if `{ast.unparse(guard.test)}`",
            )
        )
    return out


def _fmt(value: float) -> str:
    return f"{value:g}"


def _compare_raises(base: Facts, new: Facts, new_side: Side, who: str) -> list[Finding]:
    out = []
    by_body: dict[str, list[RaiseSite]] = {}
    for site in base.raises:
        by_body.setdefault(site.body, []).append(site)
    unmatched_new = []
    pairs = []
    for site in new.raises:
        olds = by_body.get(site.body)
        if olds:
            pairs.append((olds.pop(0), site))
        else:
            unmatched_new.append(site)
    unmatched_base = [s for sites in by_body.values() for s in sites]
    if len(unmatched_base) == len(unmatched_new):
        pairs += list(zip(unmatched_base, unmatched_new))
    for old, site in pairs:
        if old.kind != site.kind and not (
            old.kind in ("raises", "assertRaises") and site.kind in ("raises", "assertRaises")
        ):
            continue
        wider = broadened_type(old.types, site.types)
        if wider:
            # One finding per site: a dropped `match=` beside a broadened type is part of it.
            lost = loosened_match(old.match, old.has_match, site.match, site.has_match)
            also = f", and {lost}" if lost else ""
            shown = new_side.module.segment(site.node)
            what = "warning" if site.kind == "warns" else "exception"
            if _sibling(wider, old.types):
                out.append(
                    _find(
                        new_side,
                        site.node,
                        "OG306",
                        f"{who}: `{shown}` expects {wider} where the base expected {', '.join(old.types)}{also}: "
                        f"a changed expectation (a behaviour change of the code, not a wider check); restore the base's {what}, or ship the behaviour change in its own reviewed commit",
                    )
                )
            else:
                out.append(
                    _find(
                        new_side,
                        site.node,
                        "OG306",
                        f"{who}: `{shown}` expects {wider}, broader than the base's {', '.join(old.types)}{also}; restore the base's {what}{' and its match=' if lost else ''}",
                    )
                )
            continue
        why = loosened_match(old.match, old.has_match, site.match, site.has_match)
        if why:
            out.append(_find(new_side, site.node, "OG306", f"{who}: {why} in `{new_side.module.segment(site.node)}`"))
    return out


def _sibling(new: str, base_types: tuple[str, ...]) -> bool:
    """NEW is a builtin exception related to none of BASE_TYPES (RuntimeError -> ValueError)."""
    n = _builtin_exception(new)
    if n is None:
        return False
    for b in base_types:
        b_cls = _builtin_exception(b)
        if b_cls is None:
            ancestors = _project_ancestors(b.rsplit(".", 1)[-1])
            known = [_builtin_exception(a) for a in ancestors]
            if not any(k is not None for k in known) or any(k is not None and issubclass(k, n) for k in known):
                return False  # unknown lineage, or a builtin ancestor of the project's exception: broader
        elif issubclass(b_cls, n) or issubclass(n, b_cls):
            return False
    return True


def _compare_hypothesis(base: Facts, new: Facts, base_side: Side, new_side: Side, who: str) -> list[Finding]:
    out: list[Finding] = []
    old_t = base_side.hyp.tests.get(base.qualname)
    new_t = new_side.hyp.tests.get(new.qualname)
    if old_t is None or not old_t.given:
        return out
    if new_t is None or not new_t.given:
        out.append(
            _find(
                new_side,
                new.node,
                "OG310",
                f"{who}: @given removed; the property now runs once instead of on generated examples",
            )
        )
        return out
    base_max = base_side.hyp.effective_max_examples(old_t)
    new_max = new_side.hyp.effective_max_examples(new_t)
    why = hm.weaker_settings(
        old_t.settings, new_t.settings, base_side.module.names, new_side.module.names, base_max, new_max
    )
    if why:
        line = new_t.settings_line or new_t.line
        out.append(
            Finding(
                new_side.path,
                line,
                1 if new_t.settings_line else new_t.col,
                "OG309",
                f"{who}: weaker Hypothesis settings: {why}",
            )
        )
    lost = [e for e in old_t.examples if e not in new_t.examples]
    if lost:
        out.append(_find(new_side, new.node, "OG311", f"{who}: explicit example `{lost[0]}` removed"))
    pairs = list(zip(old_t.given_args, new_t.given_args)) if len(old_t.given_args) == len(new_t.given_args) else []
    pairs += [(old_t.given_kwargs[k], v) for k, v in new_t.given_kwargs.items() if k in old_t.given_kwargs]
    if len(old_t.draws) == len(new_t.draws):  # data.draw(...) in the body, in order
        pairs += list(zip(old_t.draws, new_t.draws))
    for old_s, new_s in pairs:
        why = hm.narrower(old_s, new_s, base_side.module.names, new_side.module.names)
        if why:
            out.append(_find(new_side, new_s, "OG312", f"{who}: strategy narrowed: {why}"))
    if new_t.assumes > old_t.assumes:
        out.append(
            _find(
                new_side,
                new.node,
                "OG313",
                f"{who}: new assume() discards generated examples ({new_t.assumes}, base had {old_t.assumes})",
            )
        )
    elif new_t.filters > old_t.filters:
        out.append(_find(new_side, new.node, "OG313", f"{who}: new .filter() discards generated examples"))
    return out


def compare_profiles(base: Side, new: Side) -> list[Finding]:
    out = []
    for name, profile in new.hyp.profiles.items():
        old = base.hyp.profiles.get(name)
        old_max = (
            old.max_examples if old and old.max_examples is not None else (hm.DEFAULT_MAX_EXAMPLES if old else None)
        )
        new_max = profile.max_examples if profile.max_examples is not None else hm.DEFAULT_MAX_EXAMPLES
        if old_max is not None and new_max < old_max:
            out.append(
                Finding(
                    new.path,
                    profile.line,
                    profile.col,
                    "OG309",
                    f"Hypothesis profile '{name}' lowered to max_examples={new_max} (base {old_max})",
                )
            )
        elif old is not None and old_max is not None:  # fewer steps, or phases that no longer generate
            why = hm.weaker_settings(
                old.settings, profile.settings, base.module.names, new.module.names, old_max, new_max
            )
            if why:
                out.append(
                    Finding(
                        new.path, profile.line, profile.col, "OG309", f"Hypothesis profile '{name}' weakened: {why}"
                    )
                )
    b_loaded, n_loaded = base.hyp.loaded, new.hyp.loaded
    if b_loaded and n_loaded and b_loaded != n_loaded:

        def level(side: Side, name: str) -> int | None:
            p = side.hyp.profiles.get(name)
            return None if p is None else (p.max_examples if p.max_examples is not None else hm.DEFAULT_MAX_EXAMPLES)

        old_level, new_level = level(base, b_loaded), level(new, n_loaded)
        if old_level is not None and new_level is not None and new_level < old_level:
            out.append(
                Finding(
                    new.path,
                    new.hyp.loaded_line,
                    1,
                    "OG309",
                    f"loads Hypothesis profile '{n_loaded}' (max_examples={new_level}) instead of '{b_loaded}' ({old_level})",
                )
            )
    return out


def compare_module_strategies(base: Side, new: Side) -> list[Finding]:
    """Strategies kept in module constants (a shared strategies.py, ``TYPES = (a, b)``
    drawn by ``sampled_from(TYPES)``) narrowed where they are defined."""
    out = []
    old_consts, new_consts = base.analyzer.constants, new.analyzer.constants
    for name, value in new_consts.items():
        old = old_consts.get(name)
        if old is None or ast.dump(old) == ast.dump(value):
            continue
        why = None
        if hm.drawn_strategy(base.module.names, old):
            why = hm.narrower(old, value, base.module.names, new.module.names)
        elif (
            isinstance(old, (ast.Tuple, ast.List, ast.Set))
            and isinstance(value, (ast.Tuple, ast.List, ast.Set))
            and _sampled_from_name(new, name)
        ):
            was, now = {ast.dump(e) for e in old.elts}, {ast.dump(e) for e in value.elts}
            if was - now and not now - was:
                why = (
                    f"`{ast.unparse(value)}` lost {len(was - now)} of the {len(was)} values `sampled_from({name})` drew"
                )
        if why:
            out.append(_find(new, value, "OG312", f"strategy `{name}` narrowed: {why}"))
    return out


def compare_globs(base: Side, new: Side, change_set: changes.ChangeSet) -> list[Finding]:
    """A glob over test data (parametrize over goldens) whose pattern now matches fewer of the base's files."""
    if b"glob" not in new.module.source:
        return []
    old_sites, new_sites = (
        meaning.glob_sites(base.module.tree, base.module.names),
        meaning.glob_sites(new.module.tree, new.module.names),
    )
    if (
        len(old_sites) != len(new_sites)
        or all(o[1] == n[1] for o, n in zip(old_sites, new_sites))
        or not change_set.base
    ):
        return []
    files = os.fsdecode(git.run("ls-tree", "-r", "-z", "--name-only", change_set.base, check=False)).split("\0")
    near = posixpath.dirname(base.path)
    out = []
    for (_, old_pattern, old_words, old_rec), (node, new_pattern, new_words, new_rec) in zip(old_sites, new_sites):
        if old_pattern == new_pattern:
            continue
        was = meaning.glob_matches(files, old_pattern, old_words, old_rec, near)
        now = meaning.glob_matches(was, new_pattern, new_words, new_rec, near)
        if was and len(now) < len(was):
            lost = sorted(was - now)
            out.append(
                _find(
                    new,
                    node,
                    "OG307",
                    f"glob `{new_pattern}` matches {len(now)} of the {len(was)} files the base's `{old_pattern}` matched "
                    f"(lost {lost[0]}{' and more' if len(lost) > 1 else ''}): fewer cases; restore the base's pattern",
                )
            )
    return out


def _sampled_from_name(side: Side, name: str) -> bool:
    for node in ast.walk(side.module.tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == name:
            if (side.module.names.qualify(node.func) or "") == hm.ST + "sampled_from":
                return True
    return False


def new_tautologies(base: Facts | None, new: Facts, new_side: Side) -> list[Finding]:
    seen = Counter(text for text, _ in base.tautologies) if base else Counter()
    out = []
    for text, node in new.tautologies:
        if seen[text] > 0:
            seen[text] -= 1
            continue
        why = new.why.get(id(node), "")
        shown = " ".join(text.split())[:80]
        said = (
            f"`{shown}` {why}"
            if why.startswith("looks only")
            else f"`{shown}` can never fail" + (f" ({why})" if why and why != "it is always true" else "")
        )
        out.append(
            _find(new_side, node, "OG308", f"{_who(new)}: {said}; check a result of the code under test instead")
        )
    return out


@dataclass
class _Lost:
    """Checks a test lost that may have gone to another test in the change."""

    facts: Facts
    side: Side | None  # the new side, when the file still exists
    base_path: str
    texts: Counter
    deficit: int
    removed: bool
    node: ast.AST | None  # where to report on the new side
    base_checks: int = 0
    base_line: int = 0  # where the first lost check stood at the base


def shrink_findings(paths: Sequence[str], change_set: changes.ChangeSet | None) -> list[Finding]:
    findings: list[Finding] = []
    if change_set is None or change_set.base is None:
        reader = changes.ChangeSet(None, "", None) if change_set is None else change_set
        blobs = reader.read_new(list(paths))
        for path in paths:
            data = blobs.get(path)
            if data is None or not TRIGGER.search(data):
                continue
            try:
                side = _side(path, data, None)
            except SourceError as exc:
                findings.append(exc.finding(path))
                continue
            for f in side.analyzer.all_facts().values():
                findings += new_tautologies(None, f, side)
                findings += [
                    _find(side, n, "OG305", f"{_who(f)}: `{k}` around checks swallows their failures")
                    for k, n in f.swallows
                ]
        return findings

    wanted = set(paths)
    others = [p for p in change_set.changed_paths if p not in wanted and p.endswith((".py", ".pyi"))]
    all_new = list(paths) + others
    new_blobs = change_set.read_new(all_new)
    old_of = {p: change_set.old_path(p) for p in all_new}
    deleted = [p for p in change_set.deleted if p.endswith((".py", ".pyi"))]
    base_blobs = change_set.read_base([o for o in old_of.values() if o] + deleted)
    base_helpers = HelperIndex(change_set.read_base)
    new_helpers = HelperIndex(change_set.read_new)

    pairs: list[tuple[str, Side | None, Side | None, bool]] = []  # (path, base, new, reported)
    for path in all_new:
        data = new_blobs.get(path)
        old = old_of[path]
        old_data = base_blobs.get(old) if old else None
        if data is None or data == old_data:
            continue
        reported = path in wanted
        if not reported and b"def test" not in data and (old_data is None or b"def test" not in old_data):
            continue
        if not TRIGGER.search(data) and (old_data is None or not TRIGGER.search(old_data)):
            continue
        try:
            new_side = _side(path, data, new_helpers)
        except SourceError as exc:
            if reported:
                findings.append(exc.finding(path))
            continue
        base_side = None
        if old_data is not None:
            try:
                base_side = _side(old or path, old_data, base_helpers)
            except SourceError:
                base_side = None
        pairs.append((path, base_side, new_side, reported))
    for path in deleted:
        data = base_blobs.get(path)
        if data is None or b"def test" not in data:
            continue
        try:
            pairs.append((path, _side(path, data, base_helpers), None, bool(TEST_FILE.search(path))))
        except SourceError:
            continue

    removed: list[tuple[Facts, Side, Side | None, bool]] = []  # base facts, base side, new side, reported
    added: list[tuple[Facts, Side]] = []
    matched: list[tuple[Facts, Facts, Side, Side, bool]] = []
    for pair_path, base_side, new_side, reported in pairs:
        try:
            base_facts = _facts_needed(base_side, new_side)
            new_facts = _facts_needed(new_side, base_side)
        except RecursionError:  # nested past what the analysis can walk: it cannot pass unseen
            findings.append(Finding(pair_path, 1, 1, "OG001", DEEP))
            continue
        for q, f in new_facts.items():
            if q in base_facts and base_side is not None and new_side is not None:
                matched.append((base_facts[q], f, base_side, new_side, reported))
            elif f.is_test:
                added.append((f, new_side))  # type: ignore[arg-type]
            elif reported and new_side is not None:
                findings += new_tautologies(None, f, new_side)
                findings += [
                    _find(new_side, n, "OG305", f"{_who(f)}: new `{k}` around checks swallows their failures")
                    for k, n in f.swallows
                ]
        for q, f in base_facts.items():
            if q not in new_facts and (f.is_test or f.checks > 0):
                removed.append((f, base_side, new_side, reported))  # type: ignore[arg-type]
        if base_side is not None and new_side is not None and reported:
            findings += compare_profiles(base_side, new_side)
            findings += compare_module_strategies(base_side, new_side)
            findings += compare_globs(base_side, new_side, change_set)

    # A removed test whose body reappears under another name or file was renamed or moved.
    by_body: dict[str, list[int]] = {}
    for i, (f, _) in enumerate(added):
        if f.body_key:
            by_body.setdefault(f.body_key, []).append(i)
    used: set[int] = set()
    still_removed = []
    for f, base_side, new_side, reported in removed:
        hits = [i for i in by_body.get(f.body_key, []) if i not in used] if f.body_key else []
        if hits:
            used.add(hits[0])
            target, target_side = added[hits[0]]
            matched.append((f, target, base_side, target_side, target_side.path in wanted or reported))
        elif f.is_test:
            still_removed.append((f, base_side, new_side, reported))
    fresh = [(f, s) for i, (f, s) in enumerate(added) if i not in used]

    lost: list[_Lost] = []
    pool: Counter = Counter()
    for f, side in fresh:
        pool.update(f.texts)
        if side.path in wanted:
            findings += new_tautologies(None, f, side)
            findings += [
                _find(side, n, "OG305", f"{_who(f)}: new `{k}` around checks swallows their failures")
                for k, n in f.swallows
            ]
    for base_f, new_f, base_side, new_side, reported in matched:
        if new_f.texts != base_f.texts:
            pool.update(new_f.texts - base_f.texts)
        if not reported:
            continue
        found = compare_function(base_f, new_f, base_side, new_side)
        taut = new_tautologies(base_f, new_f, new_side)
        at = {(t.line, t.col) for t in taut}  # one finding per cause: a check that cannot fail is not also "weaker"
        findings += [f for f in found if not (f.code == "OG303" and (f.line, f.col) in at)] + taut
        # A dropped `match=` is reported as OG306 already, not once more as a lost check.
        unmatched = sum(1 for f in found if f.code == "OG306" and "`match" in f.message)
        if (
            new_f.checks + unmatched < base_f.checks
            and (new_f.checks + unmatched) * new_f.cases < base_f.checks * base_f.cases
        ):
            gone = base_f.texts - new_f.texts
            if gone and all(new_f.texts[text] > 0 for text in gone) and not _repeat_after_action(base_f.node, gone):
                continue  # only repeats of a check that is still there were dropped
            # Count again with helpers imported from other files resolved.
            base_n = base_side.analyzer.facts(base_f.qualname, base_f.node, base_f.cls, base_f.is_test, True).checks
            new_n = new_side.analyzer.facts(new_f.qualname, new_f.node, new_f.cls, new_f.is_test, True).checks
            new_n += unmatched
            if new_n < base_n and new_n * new_f.cases < base_n * base_f.cases:
                first = min((base_f.text_lines.get(t, base_f.node.lineno) for t in gone), default=base_f.node.lineno)
                lost.append(
                    _Lost(
                        new_f,
                        new_side,
                        base_side.path,
                        gone,
                        base_n - new_n,
                        False,
                        new_f.node,
                        base_n,
                        first - base_f.node.lineno,
                    )
                )
    # A removed test lives on when hooks/sametest.py finds it in the change (the notion
    # collection-snapshot shares): never paid for by the check pool below.
    gone = [
        _Lost(f, new_side, base_side.path, Counter(f.texts), f.checks * f.cases, True, None, f.checks)
        for f, base_side, new_side, reported in _not_living_on(still_removed, fresh, matched)
        if reported
    ]

    # Checks that reappear in new tests, or grew in other tests, pay back what was lost.
    unpaid: list[_Lost] = []
    for item in lost:
        covered = 0
        for text, n in item.texts.items():
            take = min(n, pool[text])
            if take:
                pool[text] -= take
                covered += take
        if covered < item.deficit or (item.removed and item.deficit == 0):
            unpaid.append(item)
    unpaid += gone
    # A removed test whose twin lives on, unchanged, in a file outside the change was a duplicate.
    unpaid = [item for item in unpaid if not (item.removed and _twin_elsewhere(change_set, item, removed))]
    for item in unpaid:
        f = item.facts
        if item.removed:
            if item.side is not None:
                total = len(item.side.module.source.splitlines()) or 1
                line = min(max(f.node.lineno, 1), total)
                findings.append(
                    Finding(
                        item.side.path,
                        line,
                        1,
                        "OG302",
                        f"test {f.qualname} was removed (base {item.base_path}:{f.node.lineno}, {f.checks} checks)",
                    )
                )
            else:
                findings.append(
                    Finding(
                        item.base_path,
                        1,
                        1,
                        "OG302",
                        f"test {f.qualname} was removed with its file ({f.checks} checks at line {f.node.lineno})",
                    )
                )
            continue
        gone = list(item.texts.elements())
        shown = f"; lost `{gone[0][:70]}`" if gone else ""
        assert item.side is not None
        # Point where the lost check stood: the same offset into the new version of the function.
        end = getattr(f.node, "end_lineno", None) or f.node.lineno
        line = min(max(f.node.lineno + item.base_line, f.node.lineno), end)
        lines = item.side.module.source.splitlines()
        while line < end and line <= len(lines) and not lines[line - 1].strip():
            line += 1  # a blank line: point at the next statement
        text = lines[line - 1] if line <= len(lines) else b""
        col = len(text) - len(text.lstrip()) + 1 if line != f.node.lineno else item.side.module.position(f.node)[1]
        left = item.base_checks - item.deficit
        findings.append(
            Finding(
                item.side.path,
                line,
                col,
                "OG301",
                f"{_who(f)} has {left} check{'' if left == 1 else 's'}, base had {item.base_checks}{shown}",
            )
        )
    return findings


def _not_living_on(removed: list, fresh: list[tuple[Facts, Side]], matched: list) -> list:
    """The removed tests that hooks/sametest.py finds nowhere in the new or changed tests."""
    if not removed:
        return removed
    from hooks import sametest

    cache: dict = {}
    pool: list[sametest.Case] = []
    for f, side in fresh:
        if f.is_test:
            pool += sametest.cases(side.module, f.qualname, None, cache) or []
    for base_f, new_f, base_side, new_side, _ in matched:
        if new_f.is_test:
            before = sametest.cases(base_side.module, base_f.qualname, None, cache) or []
            after = sametest.cases(new_side.module, new_f.qualname, None, cache) or []
            pool += sametest.changed_cases(before, after)[1]  # only what is new in a changed test
    lost = [(item, sametest.cases(item[1].module, item[0].qualname, None, cache)) for item in removed]
    flat = [c for _, found in lost for c in found or []]
    flags = iter(sametest.reappearing(flat, pool))
    out = []
    for item, found in lost:
        alive = [next(flags) for _ in found or []]
        if not found or not all(alive):
            out.append(item)
    return out


def _twin_elsewhere(change_set: changes.ChangeSet, item: _Lost, removed: list) -> bool:
    """Whether a test with the same body exists on the new side in some other file."""
    base_side = next((side for f, side, _, _ in removed if f is item.facts), None)
    f = item.facts
    if base_side is None or not f.body_key or len(removed) > 50:
        return False
    lines = base_side.module.source.splitlines()[f.node.body[0].lineno - 1 : f.node.end_lineno or f.node.lineno]
    probe = max((ln.strip() for ln in lines), key=len, default=b"")
    if len(probe) < 12:
        return False
    args = ["grep", "-F", "-l", "-z", "-e", os.fsdecode(probe)]
    if change_set.target:
        args.append(change_set.target)
    elif change_set.base_label == "HEAD":
        args.append("--cached")
    out = git.run(*args, "--", "*.py", check=False)
    hits = [h.split(":", 1)[1] if change_set.target else h for h in os.fsdecode(out).split("\0") if h][:10]
    blobs = change_set.read_new(hits)
    for path, data in blobs.items():
        if data is None:
            continue
        try:
            module = Module.from_source(path, data)
        except SourceError:
            continue
        for node in ast.walk(module.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                if item.side is not None and path == item.side.path and node.name == f.node.name:
                    continue  # the removed test itself, still defined but deleted (`del test_x`)
                body = (
                    node.body[1:]
                    if node.body
                    and isinstance(node.body[0], ast.Expr)
                    and isinstance(getattr(node.body[0], "value", None), ast.Constant)
                    else node.body
                )
                if ast.dump(ast.Module(body=body, type_ignores=[])) == f.body_key:
                    return True
    return False


def check(ctx: HookContext) -> list[Finding]:
    if ctx.change_set is not None and ctx.change_set.base is None:
        notice("no commits yet: only tautologies and swallowed failures can be checked")
    from hooks import static_approvals

    return static_approvals.unapproved(ctx, shrink_findings(ctx.filenames, ctx.change_set)) + not_a_file(ctx.change_set)


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    parser = hook_args.parser("oracle-shrink", __doc__)
    hook_args.add_filenames(parser)
    hook_args.add_base(parser)
    parser.add_argument(
        "--all", action="store_true", help="no base comparison: report tautologies and swallowed failures in every file"
    )
    hook_args.add_contract(parser)  # accepted for a uniform command line; no contract is needed
    hook_args.add_format(parser)
    args = parser.parse_args(argv)
    paths = changes.enter_repo(args.filenames)
    ctx = hook_args.context(args, None if args.all else changes.resolve(args), paths)
    return hook_args.finish(ctx, check(ctx), "oracle-shrink")


def not_a_file(change_set: changes.ChangeSet | None) -> list[Finding]:
    """A test file that became a FIFO, device or submodule cannot be read, so it cannot pass.

    (Its base content counts as deleted either way; a symlink is judged by the
    file it points to, which the change holds or not.)
    """
    if change_set is None:
        return []
    return [
        Finding(
            path,
            1,
            1,
            "OG003",
            f"is now a {kind}, not a regular file: its tests cannot be checked; commit it as a regular file",
        )
        for path, kind in change_set.special.items()
        if kind != "symlink" and TEST_FILE.search(path)
    ]


if __name__ == "__main__":
    raise SystemExit(main())
