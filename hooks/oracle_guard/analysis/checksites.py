"""Check sites: where a test checks something, and how many checks each site stands for.

A check is an ``assert``, a ``self.assert*``/``fail*`` call, ``pytest.raises``/
``warns``/``deprecated_call``/``fail``, a mock's ``assert_*`` call, numpy/pandas/
torch ``assert_*`` helpers, ``raise AssertionError``, or a call to a helper that
holds checks (same module, same class, or imported from a repository file
through HelperIndex).  Checks that cannot run (after a ``return``, under
``if False:``) do not count.  A core module: oracle-shrink counts with it, and
no hook needs to import another hook for the notion.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterable
from typing import Callable

from oracle_guard.analysis.hypothesis import model as hm
from oracle_guard.analysis.loopitems import LoopItems, distinct
from oracle_guard.analysis.pysource import FunctionNode, Module, SourceError, test_functions
from oracle_guard.repo.paths import conftests_above, folders_above

Lengths = tuple[tuple[str, int], ...]  # (parameter, items passed for it), sorted: a cache key

CHECK_PREFIXES = ("assert", "check_", "verify_", "expect_", "fail")
CHECK_CALLS = {"pytest.raises", "pytest.warns", "pytest.deprecated_call", "pytest.fail", "unittest.TestCase.fail"}

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


def last_name(name: str) -> str:
    """`self._assert_ok` -> `assert_ok`: the called name, leading underscores aside."""
    return name.rsplit(".", 1)[-1].lstrip("_")


def is_check_name(name: str) -> bool:
    """Whether a callee's name says it checks (`assert_x`, `check_x`, `verify_x`, `fail`)."""
    last = last_name(name)
    return last.startswith(CHECK_PREFIXES) or last.startswith("assert")


class CheckSites:
    """Where one module's functions check something, and how many checks each site stands for."""

    def __init__(self, module: Module, helpers: HelperIndex | None) -> None:
        self.module = module
        self.names = module.names
        self.helpers = helpers
        self.constants = hm.module_constants(module.tree)
        self.classes = {n.name: n for n in module.tree.body if isinstance(n, ast.ClassDef)}
        self.functions = {n.name: n for n in module.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self._weights: dict[tuple[int, int, bool, Lengths], int] = {}
        self._loops: LoopItems | None = None

    @property
    def loops(self) -> LoopItems:
        """What this module's loops run over (built on the first loop that asks: most tests have none)."""
        if self._loops is None:
            self._loops = LoopItems(self.module.tree, self.constants, self.classes)
        return self._loops

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

    def text_of(self, node: ast.stmt) -> bytes:
        """The source lines of NODE, decorators included."""
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        return b"\n".join(self._lines[first - 1 : getattr(node, "end_lineno", node.lineno)])

    @property
    def _lines(self) -> list[bytes]:
        if not hasattr(self, "_split"):
            self._split = self.module.source.splitlines()
        return self._split

    def context(self) -> bytes:
        """Module-level statements other than functions (constants, settings, profiles), and of each class its
        header and attributes: a method's checks may loop over a class attribute, or come from a base class."""
        parts = []
        for n in self.module.tree.body:
            if isinstance(n, ast.ClassDef):
                parts.append(_class_context(n).encode())
            elif not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                parts.append(self.text_of(n))
        return b"\n".join(parts)

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
                passed = self._passed_lengths(call, method, bound_first=True)
                weight = self._weight_of(self.module, method, cls, resolve_imports, depth + 1, passed)
                return weight, weight > 0
            return (1, True) if is_check_name(func.attr) else (0, False)
        if (
            isinstance(func, ast.Name)
            and func.id in self.functions
            and self.names.aliases.get(func.id, func.id) == func.id
        ):
            fn = self.functions[func.id]
            passed = self._passed_lengths(call, fn)
            weight = self._weight_of(self.module, fn, None, resolve_imports, depth + 1, passed)
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
                other, helper = found
                passed = self._passed_lengths(call, helper)
                weight = CheckSites(other, self.helpers)._weight_of(
                    other, helper, None, resolve_imports, depth + 1, passed
                )
                return weight, weight > 0
        if isinstance(func, ast.Attribute) and is_check_name(func.attr):
            return 1, True  # mock.assert_called_once_with(...), helper.check_x(...)
        if isinstance(func, ast.Name) and is_check_name(func.id):
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

    def _passed_lengths(self, call: ast.Call, fn: FunctionNode, bound_first: bool = False) -> Lengths:
        """How many distinct items CALL passes for each parameter FN loops over (`for name in names:`).

        A shared helper `assert_same(a, b, ["name", "email"])` that loops over its
        names makes one check per name, as the two asserts it replaced did.
        """
        given = self.passed_items(call, fn, bound_first)
        return tuple(sorted((name, len({ast.dump(e) for e in items})) for name, items in given.items() if items))

    def passed_items(self, call: ast.Call, fn: FunctionNode, bound_first: bool = False) -> dict[str, list[ast.expr]]:
        """The items CALL passes for each parameter FN loops over, when they are spelled out (else absent).

        A literal list, tuple, set or dict (its keys), a module constant bound to one, a keyword
        argument, or the extra positional arguments of `*names`.  BOUND_FIRST: a method called
        through `self`/`cls`, whose first parameter is bound.
        """
        looped = {
            n.iter.id for n in ast.walk(fn) if isinstance(n, (ast.For, ast.AsyncFor)) and isinstance(n.iter, ast.Name)
        }
        if not looped:
            return {}
        params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
        if (
            bound_first
            and params
            and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)
        ):
            params = params[1:]  # self or cls
        given: dict[str, list[ast.expr]] = {}
        extra: list[ast.expr] = []
        for index, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                extra = []
                break  # positions after a *spread are unknown
            if index < len(params):
                if params[index] in looped:
                    given[params[index]] = self._literal_items(arg)
            else:
                extra.append(arg)
        for keyword in call.keywords:
            if keyword.arg in looped:
                given[keyword.arg] = self._literal_items(keyword.value)
        vararg = fn.args.vararg.arg if fn.args.vararg else None
        if vararg in looped and extra:
            given[vararg] = extra
        return {name: items for name, items in given.items() if items}

    def _literal_items(self, node: ast.expr) -> list[ast.expr]:
        """The items of a literal list/tuple/set, the keys of a dict (or a module constant bound to one); [] if unknown."""
        return self.loops.items(node, None, None) or []

    def _weight_of(
        self,
        module: Module,
        fn: FunctionNode,
        cls: ast.ClassDef | None,
        resolve_imports: bool,
        depth: int,
        passed: Lengths = (),
    ) -> int:
        if depth > 4:
            return 1 if is_check_name(fn.name) else 0
        key = (id(fn), id(cls), resolve_imports, passed)  # a class attribute is read from the class the test runs in
        if key in self._weights:
            return self._weights[key]
        self._weights[key] = 0  # recursion guard
        analyzer = self if module is self.module else CheckSites(module, self.helpers)
        weight = sum(w for w, _, _ in analyzer._check_sites(fn.body, cls, resolve_imports, depth, dict(passed), fn))
        self._weights[key] = weight
        return weight

    def _check_sites(
        self,
        body: list[ast.stmt],
        cls: ast.ClassDef | None,
        resolve_imports: bool,
        depth: int = 0,
        passed: dict[str, int] | None = None,
        fn: FunctionNode | None = None,
    ) -> Iterable[tuple[int, ast.AST, str]]:
        """Each check site of BODY (of FN) with its weight; PASSED: how many items each looped-over parameter holds."""
        repeat: dict[int, int] = {}  # node -> times a loop over a literal runs it
        for node in live_nodes(body):
            times = repeat.get(id(node), 1)
            if isinstance(node, (ast.For, ast.AsyncFor)):
                n = (
                    passed[node.iter.id]
                    if passed and isinstance(node.iter, ast.Name) and node.iter.id in passed
                    else distinct(self.loops.items(node.iter, fn, cls))
                )
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

    def _has_checks(self, body: list[ast.stmt], cls: ast.ClassDef | None) -> bool:
        return any(w > 0 for w, _, _ in self._check_sites(body, cls, False))


def _class_context(cls: ast.ClassDef, depth: int = 0) -> str:
    """A class without its methods: name, bases, decorators, attributes (nested classes likewise)."""
    body = [
        ast.dump(n) if not isinstance(n, ast.ClassDef) else _class_context(n, depth + 1) if depth < 5 else n.name
        for n in cls.body
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    header = [cls.name, *map(ast.dump, cls.bases), *map(ast.dump, cls.keywords), *map(ast.dump, cls.decorator_list)]
    return repr((header, body))


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


def live_nodes(body: list[ast.stmt]) -> Iterable[ast.AST]:
    """Nodes of BODY that can run: nothing after a return/raise/break/continue in the
    same block, nothing under ``if False:``, so checks made unreachable do not count."""
    stack: list[ast.AST] = []
    for stmt in reversed(live_block(body)):
        stack.append(stmt)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _never(node.test):
            children: list[ast.AST] = [node.test] + list(live_block(node.orelse))
        elif isinstance(node, ast.While) and _never(node.test):
            children = [node.test] + list(live_block(node.orelse))
        else:
            children = []
            for _, value in ast.iter_fields(node):
                if isinstance(value, list):
                    if value and isinstance(value[0], ast.stmt):
                        children += live_block(value)
                    else:
                        children += [v for v in value if isinstance(v, ast.AST)]
                elif isinstance(value, ast.AST):
                    children.append(value)
        stack.extend(reversed(children))


def live_block(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of one block that can run: up to a return, raise (not of an
    AssertionError: that is a check), break or continue."""
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, _TERMINATORS) and not (isinstance(stmt, ast.Raise) and raises_assertion(stmt)):
            return stmts[: i + 1]
    return stmts


def raises_assertion(stmt: ast.Raise) -> bool:
    """``raise AssertionError(...)`` / ``raise self.failureException``: a check, not an exit."""
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
        for conftest in conftests_above(from_path):
            module = self._load([conftest])
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
            roots += folders_above(from_path)
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
