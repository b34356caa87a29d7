"""The same test, moved, renamed, merged or split: one notion for every hook.

oracle-shrink (OG302, a test removed) and collection-snapshot (OG801, an id
no longer collected) both ask this module whether a test of the base lives
on in the change; neither calls a test that does a removal.

A test is a list of *cases*: one per parameter set of its
``@pytest.mark.parametrize`` decorators (stacked ones and a class's multiply),
each with its parameter values written into the body, and with pytest's id
for it when that can be told statically.  A case of the base lives on when

1. a new case has the same body: a rename, a move into a class or another
   file, several tests merged into one parametrized test (also when the
   function under test is itself a parameter); or
2. every one of its checks reappears in new cases: a test split in several,
   a loop over literal values turned into ``parametrize``, checks folded into
   a grown test.  A check is compared as written with the parameters and the
   loop values put in, or with single-assignment locals inlined too
   (``r = f(1); assert r == 2`` is ``assert f(1) == 2``); each new check
   pays for one lost check only.  A case without checks lives on only by (1).

Nothing is imported: only the changed files are parsed, and only when a test
went missing.
"""

from __future__ import annotations

import ast
import copy
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Callable, Literal, NamedTuple, cast

from oracle_guard.analysis.checksites import live_block, raises_assertion
from oracle_guard.analysis.pysource import FunctionNode, Module, SourceError, statements
from oracle_guard.repo.paths import PYTHON_SUFFIXES

if TYPE_CHECKING:
    from typing import TypeGuard  # Python 3.10+

CHECK_PREFIXES = ("assert", "check", "verify", "expect", "fail")
CHECK_CALLS = {"pytest.raises", "pytest.warns", "pytest.deprecated_call", "pytest.fail"}
MAX_CASES = 512  # parameter sets of one test, and loop iterations unrolled in one case
_UNKNOWN = object()


if sys.version_info >= (3, 10):  # the clauses of a statement that hold a body of their own
    _CLAUSES = (ast.ExceptHandler, ast.match_case)
else:
    _CLAUSES = (ast.ExceptHandler,)


class Case(NamedTuple):
    owner: str  # "path::Class::name"
    id: str | None  # pytest's parameter id ("" when not parametrized); None when it cannot be told
    body: str  # the body with the parameters written in, docstring aside
    checks: tuple[frozenset[str], ...]  # per check: its texts (as written, with locals inlined)
    weight: int = 1  # how many collected ids it stands for (several when the parameters are unknown)
    # For a case whose checks a project helper makes (``self.assertManyResults(f, args, results)``):
    # the names its checks look at, outside its own locals; empty when every check is written out.
    opaque: frozenset[str] = frozenset()
    subjects: frozenset[str] = frozenset()  # the names its checks look at (see `opaque`)
    # The body with calls of the module's argument-free helpers written out, when that differs:
    # two tests merged into one whose parameters are helpers holding the old bodies.
    inlined: str = ""

    def keys(self) -> tuple[str, ...]:
        return (self.body, self.inlined) if self.inlined else (self.body,)


# -- finding a test -----------------------------------------------------------------


def find_test(tree: ast.Module, qualname: str) -> tuple[FunctionNode, list[ast.ClassDef]] | None:
    """The function QUALNAME (``Class.Inner.test_x``) names, with its classes outermost first."""
    body: list[ast.stmt] = tree.body
    classes: list[ast.ClassDef] = []
    parts = qualname.split(".")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        found: FunctionNode | ast.ClassDef | None = None
        for node in body:
            if last and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == part:
                found = node  # a later definition wins, as at import time
            elif not last and isinstance(node, ast.ClassDef) and node.name == part:
                found = node
            elif isinstance(node, ast.Delete) and any(isinstance(t, ast.Name) and t.id == part for t in node.targets):
                found = None  # `del test_x`: never collected
        if found is None:
            return None
        if not isinstance(found, ast.ClassDef):  # the last part: the function
            return found, classes
        classes.append(found)
        body = found.body
    return None


def split_id(node_id: str) -> tuple[str, str, str] | None:
    """``tests/t.py::C::test_x[1-a]`` -> (``tests/t.py``, ``C.test_x``, ``1-a``); None for other ids."""
    head, bracket, params = node_id.partition("[")
    if bracket and not params.endswith("]"):
        return None
    parts = head.split("::")
    if len(parts) < 2 or not parts[0] or not all(p.isidentifier() for p in parts[1:]):
        return None
    return parts[0], ".".join(parts[1:]), params[:-1] if bracket else ""


# -- cases of one test -----------------------------------------------------------------


class _Param(NamedTuple):
    values: dict[str, ast.expr]  # argname -> value, for the body
    id: str | None


def _constants(tree: ast.Module) -> dict[str, ast.expr]:
    found: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found[node.targets[0].id] = node.value
    return found


def _elements(node: ast.expr, constants: dict[str, ast.expr], depth: int = 0) -> list[ast.expr] | None:
    """The items of a literal sequence (a display, a module constant, ``range`` of constants)."""
    if isinstance(node, ast.Name) and node.id in constants and depth < 5:
        return _elements(constants[node.id], constants, depth + 1)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return list(node.elts)
    if isinstance(node, ast.Dict) and None not in node.keys:
        return [k for k in node.keys if k is not None]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" and not node.keywords:
        try:
            bounds = [ast.literal_eval(a) for a in node.args]
            items = list(range(*bounds))
        except (ValueError, TypeError, SyntaxError):
            return None
        return [ast.Constant(i) for i in items] if len(items) <= MAX_CASES else None
    return None


def _escaped(text: str | bytes) -> str:
    """pytest's ascii_escaped: printable ASCII as it is, the rest as escapes."""
    if isinstance(text, bytes):
        text = text.decode("ascii", "backslashreplace")
    elif not text.isascii():
        text = text.encode("unicode_escape").decode("ascii")
    return text.translate(_NON_PRINTABLE)


_NON_PRINTABLE = {i: f"\\x{i:02x}" for i in range(128) if i not in range(32, 127)} | {
    ord("\t"): "\\t",
    ord("\r"): "\\r",
    ord("\n"): "\\n",
}


def _value_id(value: ast.expr, argname: str, index: int, module: Module, constants: dict[str, ast.expr]) -> str | None:
    """The id pytest derives from one parameter value; None when it cannot be told here."""
    if (
        isinstance(value, ast.Name)
        and value.id in constants
        and isinstance(constants[value.id], (ast.Constant, ast.UnaryOp))
    ):
        value = constants[value.id]
    try:
        literal = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        literal = _UNKNOWN
    if isinstance(literal, (str, bytes)):
        return _escaped(literal) if len(literal) <= 100 else None  # long strings: version-dependent
    if literal is None or isinstance(literal, (int, float, complex, bool)):
        return str(literal)
    if literal is not _UNKNOWN:
        return f"{argname}{index}"  # a tuple, list, dict or set of literals
    if isinstance(value, ast.Lambda):
        return "<lambda>"
    if isinstance(value, ast.Name):
        defined = {
            n.name for n in module.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        }
        if value.id in defined or value.id in module.names.aliases:
            return (module.names.qualify(value) or value.id).rsplit(".", 1)[-1]  # a function's or class's __name__
        return None
    if isinstance(
        value, (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp, ast.JoinedStr)
    ):
        return f"{argname}{index}"
    return None  # an attribute, a call: an enum member or an object with __name__ may be anything


def _is_param_call(node: ast.expr, module: Module) -> TypeGuard[ast.Call]:
    return isinstance(node, ast.Call) and (module.names.qualify(node.func) or "") == "pytest.param"


def _parametrize(
    deco: ast.expr, module: Module, constants: dict[str, ast.expr]
) -> list[_Param] | None | Literal[False]:
    """The parameter sets of one decorator; False when it is no parametrize, None when unknown."""
    deco = module.names.expand(deco)
    if not isinstance(deco, ast.Call) or (module.names.qualify(deco.func) or "") != "pytest.mark.parametrize":
        return False
    kw = {k.arg: k.value for k in deco.keywords if k.arg}
    argnames_node = deco.args[0] if deco.args else kw.get("argnames")
    argvalues_node = deco.args[1] if len(deco.args) > 1 else kw.get("argvalues")
    if argnames_node is None or argvalues_node is None:
        return None
    try:
        raw = ast.literal_eval(argnames_node)
    except (ValueError, TypeError, SyntaxError):
        return None
    argnames = (
        [a.strip() for a in raw.split(",") if a.strip()]
        if isinstance(raw, str)
        else list(raw)
        if isinstance(raw, (list, tuple))
        else None
    )
    if not argnames or not all(isinstance(a, str) for a in argnames):
        return None
    rows = _elements(argvalues_node, constants)
    if not rows or len(rows) > MAX_CASES:
        return None
    indirect = kw.get("indirect")
    try:
        indirect_value = ast.literal_eval(indirect) if indirect is not None else False
    except (ValueError, TypeError, SyntaxError):
        return None
    direct = [
        a
        for a in argnames
        if not (indirect_value is True or (isinstance(indirect_value, (list, tuple)) and a in indirect_value))
    ]
    ids_node = kw.get("ids")
    explicit: list[object] | None = None
    if ids_node is not None:
        items = _elements(ids_node, constants)
        if items is None:
            return None  # ids=callable or computed: the ids cannot be told
        explicit = [ast.literal_eval(i) if isinstance(i, ast.Constant) else _UNKNOWN for i in items]
    params: list[_Param] = []
    for index, row in enumerate(rows):
        given_id: object = None
        if _is_param_call(row, module):
            values = list(row.args)
            id_kw = next((k.value for k in row.keywords if k.arg == "id"), None)
            if id_kw is not None:
                given_id = id_kw.value if isinstance(id_kw, ast.Constant) else _UNKNOWN
        elif len(argnames) == 1:
            values = [row]
        elif isinstance(row, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in row.elts):
            values = list(row.elts)
        else:
            return None
        if len(values) != len(argnames):
            return None
        if given_id is None and explicit is not None and index < len(explicit):
            given_id = explicit[index]
        if given_id is _UNKNOWN:
            case_id = None
        elif isinstance(given_id, str):
            case_id = _escaped(given_id)
        elif given_id is not None:
            case_id = str(given_id)
        else:
            parts = [_value_id(v, a, index, module, constants) for v, a in zip(values, argnames)]
            known_parts = [p for p in parts if p is not None]
            case_id = "-".join(known_parts) if len(known_parts) == len(parts) else None
        params.append(_Param({a: v for a, v in zip(argnames, values) if a in direct}, case_id))
    return _unique(params)


def _unique(params: list[_Param]) -> list[_Param]:
    """pytest's suffixes for ids that are not unique (``a0``, ``a1``; ``1_0`` after a digit)."""
    ids = [p.id for p in params]
    if None in ids or len(set(ids)) == len(ids):
        return params
    counts = {i: ids.count(i) for i in ids}
    taken = set(ids)
    next_suffix: dict[str, int] = {}
    out = []
    for p in params:
        new_id = p.id
        if counts[p.id] > 1:
            assert p.id is not None
            sep = "_" if p.id and p.id[-1].isdigit() else ""
            n = next_suffix.get(p.id, 0)
            new_id = f"{p.id}{sep}{n}"
            while new_id in taken:
                n += 1
                new_id = f"{p.id}{sep}{n}"
            next_suffix[p.id] = n + 1
        out.append(_Param(p.values, new_id))
    return out


def _parameter_sets(
    fn: FunctionNode, classes: list[ast.ClassDef], module: Module, constants: dict[str, ast.expr]
) -> list[_Param] | None:
    """Every parameter set, in pytest's id order: the decorator nearest the function first, then the classes'."""
    decorators = list(reversed(fn.decorator_list))
    for cls in reversed(classes):
        decorators += list(reversed(cls.decorator_list))
    sets: list[_Param] = [_Param({}, "")]
    for deco in decorators:
        found = _parametrize(deco, module, constants)
        if found is False:
            continue
        if found is None or len(sets) * len(found) > MAX_CASES:
            return None
        sets = [
            _Param(
                {**outer.values, **inner.values},
                None if outer.id is None or inner.id is None else (f"{outer.id}-{inner.id}" if outer.id else inner.id),
            )
            for inner in found
            for outer in sets
        ]
    # A parametrized fixture that hands its param to the test (`return request.param`) is a
    # parameter too: the class under test given as a fixture is written in like one.
    taken = set().union(*(p.values for p in sets)) if sets else set()
    for arg in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
        if arg.arg in taken or arg.arg in ("self", "cls", "request"):
            continue
        values = _fixture_params(arg.arg, classes, module, constants)
        if values is None:
            continue
        if len(sets) * len(values) > MAX_CASES:
            return None
        sets = [
            _Param({**outer.values, **({arg.arg: v} if v is not None else {})}, None) for v in values for outer in sets
        ]
    return sets


def _fixture_params(
    name: str, classes: list[ast.ClassDef], module: Module, constants: dict[str, ast.expr]
) -> list[ast.expr | None] | None:
    """The params of fixture NAME defined in the module or the test's classes: each value when the
    fixture returns `request.param` as it is, else None per param; None when NAME is no such fixture."""
    scopes = [module.tree.body] + [c.body for c in classes]
    found = None
    for body in scopes:
        for node in body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for deco in node.decorator_list:
                if not (isinstance(deco, ast.Call) and (module.names.qualify(deco.func) or "") == "pytest.fixture"):
                    continue
                kw = {k.arg: k.value for k in deco.keywords if k.arg}
                given = kw.get("name")
                if (given.value if isinstance(given, ast.Constant) else node.name) == name and "params" in kw:
                    found = (node, kw["params"])
    if found is None:
        return None
    node, params = found
    items = _elements(params, constants)
    if items is None:
        return None
    items = [i.args[0] if _is_param_call(i, module) and i.args else i for i in items]
    body = _body(node)
    passes = (
        len(body) == 1
        and isinstance(body[0], (ast.Return, ast.Expr))
        and ast.unparse(getattr(body[0], "value", None) or ast.Constant(None))
        in ("request.param", "(yield request.param)")
    )
    return [i if passes else None for i in items]


class _Substitute(ast.NodeTransformer):
    def __init__(self, env: dict[str, ast.expr]) -> None:
        self.env = env

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.env:
            return copy.deepcopy(self.env[node.id])
        return node


def _put(node: ast.AST, env: dict[str, ast.expr]) -> ast.AST:
    put: ast.AST = _Normalise().visit(_Substitute(env).visit(copy.deepcopy(node)) if env else copy.deepcopy(node))
    return put


# unittest's assertions as the plain assert they mean: `assertEqual` -> `assert ==` is a refactor.
_UNITTEST: dict[str, Callable[[list[ast.expr]], ast.expr]] = {
    "assertEqual": lambda a: ast.Compare(a[0], [ast.Eq()], [a[1]]),
    "assertEquals": lambda a: ast.Compare(a[0], [ast.Eq()], [a[1]]),
    "assertNotEqual": lambda a: ast.Compare(a[0], [ast.NotEq()], [a[1]]),
    "assertIs": lambda a: ast.Compare(a[0], [ast.Is()], [a[1]]),
    "assertIsNot": lambda a: ast.Compare(a[0], [ast.IsNot()], [a[1]]),
    "assertIn": lambda a: ast.Compare(a[0], [ast.In()], [a[1]]),
    "assertNotIn": lambda a: ast.Compare(a[0], [ast.NotIn()], [a[1]]),
    "assertLess": lambda a: ast.Compare(a[0], [ast.Lt()], [a[1]]),
    "assertLessEqual": lambda a: ast.Compare(a[0], [ast.LtE()], [a[1]]),
    "assertGreater": lambda a: ast.Compare(a[0], [ast.Gt()], [a[1]]),
    "assertGreaterEqual": lambda a: ast.Compare(a[0], [ast.GtE()], [a[1]]),
    "assertIsNone": lambda a: ast.Compare(a[0], [ast.Is()], [ast.Constant(None)]),
    "assertIsNotNone": lambda a: ast.Compare(a[0], [ast.IsNot()], [ast.Constant(None)]),
    "assertTrue": lambda a: a[0],
    "assertFalse": lambda a: ast.UnaryOp(ast.Not(), a[0]),
    "assertIsInstance": lambda a: ast.Call(ast.Name("isinstance", ast.Load()), a[:2], []),
}
_ARITY = {"assertTrue": 1, "assertFalse": 1, "assertIsNone": 1, "assertIsNotNone": 1}


class _Normalise(ast.NodeTransformer):
    """Spellings of one check made one: ``f(*[a, b])`` is ``f(a, b)``; ``self.assertEqual(a, b)`` is ``assert a == b``."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if (
            isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in ("self", "cls")
        ):
            node.func = ast.Name(node.func.attr, ast.Load())  # a helper method moved to the module is the same helper
        if _called_name(node.func) in ("raises", "warns"):
            # `pytest.raises(E, match=None)` is `pytest.raises(E)`: what a parametrized `match` is for the case without one
            node.keywords = [
                k
                for k in node.keywords
                if not (k.arg == "match" and isinstance(k.value, ast.Constant) and k.value.value is None)
            ]
        if any(isinstance(a, ast.Starred) and isinstance(a.value, (ast.List, ast.Tuple)) for a in node.args):
            args: list[ast.expr] = []
            for a in node.args:
                args += (
                    list(a.value.elts)
                    if isinstance(a, ast.Starred) and isinstance(a.value, (ast.List, ast.Tuple))
                    else [a]
                )
            node.args = args
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if node.attr == "__name__" and isinstance(node.value, ast.Name):
            return ast.Constant(node.value.id)  # `cls.__name__` with the class written in
        return node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        self.generic_visit(node)
        parts = [
            p.value if isinstance(p, ast.FormattedValue) and p.conversion == -1 and p.format_spec is None else p
            for p in node.values
        ]
        strings = [p.value for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str)]
        if len(strings) == len(parts):
            return ast.Constant("".join(strings))
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        call = node.value
        if isinstance(call, ast.Call):
            plain = _plain_assert(call)
            if plain is not None:
                visited: ast.AST = self.visit(plain)
                return visited
        self.generic_visit(node)
        return node


def _called_name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _plain_assert(call: ast.Call) -> ast.Assert | None:
    func = call.func
    if not (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "self"
        and func.attr in _UNITTEST
    ):
        return None
    if call.keywords or len(call.args) < _ARITY.get(func.attr, 2) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    return ast.Assert(test=_UNITTEST[func.attr](list(call.args)), msg=None)


def _body(fn: FunctionNode) -> list[ast.stmt]:
    body = fn.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    return body


def _locals(fn: FunctionNode) -> dict[str, ast.expr]:
    """Locals bound exactly once, by a plain ``name = value``: they can be inlined into checks."""
    bound: dict[str, int] = {}
    values: dict[str, ast.expr] = {}
    for arg in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
        bound[arg.arg] = 2
    for node in ast.walk(fn):
        if node is fn:
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound[node.id] = bound.get(node.id, 0) + 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound[node.name] = 2
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound[node.name] = 2
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound[(alias.asname or alias.name).split(".")[0]] = 2
    for node in statements(fn.body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = node.value
    return {name: value for name, value in values.items() if bound.get(name) == 1}


class _Inline(ast.NodeTransformer):
    def __init__(self, values: dict[str, ast.expr], attributes: dict[str, ast.expr] | None = None) -> None:
        self.values = values
        self.attributes = attributes or {}  # class attributes, read as `self.name`
        self.depth = 0

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if (
            isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
            and node.attr in self.attributes
            and isinstance(node.ctx, ast.Load)
        ):
            return copy.deepcopy(self.attributes[node.attr])  # a local moved to the class is the same value
        self.generic_visit(node)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.values and self.depth < 4:
            self.depth += 1
            try:
                inlined: ast.AST = self.visit(copy.deepcopy(self.values[node.id]))
                return inlined
            finally:
                self.depth -= 1
        return node


class _Checks:
    """The check sites of one function, with a case's parameters (and loop values) written in."""

    def __init__(self, module: Module, cls: ast.ClassDef | None, helpers: dict[str, bool]) -> None:
        self.module = module
        self.cls_methods = {
            n.name: n for n in (cls.body if cls else []) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self.helpers = helpers
        self.constants = _constants(module.tree)

    def is_check(self, call: ast.Call) -> bool:
        func = call.func
        name = self.module.names.qualify(func) or ""
        if name in CHECK_CALLS or name.startswith(("numpy.testing.assert", "pandas.testing.assert")):
            return True
        last = (func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else "").lstrip(
            "_"
        )
        if last.startswith(CHECK_PREFIXES):
            return True
        if isinstance(func, ast.Name) and func.id in self.helpers:
            return self.helpers[func.id]
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls")
            and func.attr in self.cls_methods
        ):
            return _holds_checks(self.cls_methods[func.attr], self.module, {})
        return False

    def sites(
        self, body: list[ast.stmt], env: dict[str, ast.expr], budget: list[int]
    ) -> Iterable[tuple[ast.AST, dict[str, ast.expr]]]:
        for stmt in live_block(body):
            if isinstance(stmt, (ast.For, ast.AsyncFor)):
                items = _elements(stmt.iter, self.constants)
                if items is not None and budget[0] >= len(items):
                    budget[0] -= len(items)
                    for item in items:
                        yield from self.sites(stmt.body, {**env, **_bind(stmt.target, item)}, budget)
                    yield from self.sites(stmt.orelse, env, budget)
                    continue
            if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Constant) and not stmt.test.value:
                yield from self.sites(stmt.orelse, env, budget)
                continue
            if isinstance(stmt, ast.Assert):
                yield ast.Assert(test=stmt.test, msg=None), env  # its message is no part of the check
            elif isinstance(stmt, ast.Raise) and stmt.exc is not None and raises_assertion(stmt):
                yield stmt, env
            for field_name, value in ast.iter_fields(stmt):
                if field_name == "test" and isinstance(stmt, ast.Assert):
                    continue
                values = value if isinstance(value, list) else [value]
                if values and isinstance(values[0], ast.stmt):
                    yield from self.sites(values, env, budget)
                    continue
                for child in values:
                    if isinstance(child, _CLAUSES):
                        yield from self.sites(child.body, env, budget)
                    elif isinstance(child, ast.expr):
                        for node in ast.walk(child):
                            if isinstance(node, ast.Call) and self.is_check(node):
                                yield _plain_assert(node) or node, env


def _bind(target: ast.expr, item: ast.expr) -> dict[str, ast.expr]:
    if isinstance(target, ast.Name):
        return {target.id: item}
    if (
        isinstance(target, (ast.Tuple, ast.List))
        and isinstance(item, (ast.Tuple, ast.List))
        and len(target.elts) == len(item.elts)
    ):
        out: dict[str, ast.expr] = {}
        for t, v in zip(target.elts, item.elts):
            out.update(_bind(t, v))
        return out
    return {}


def _holds_checks(fn: FunctionNode, module: Module, helpers: dict[str, bool]) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Assert) or (
            isinstance(node, ast.Raise) and node.exc is not None and raises_assertion(node)
        ):
            return True
        if isinstance(node, ast.Call):
            func = node.func
            name = module.names.qualify(func) or ""
            last = (
                func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            ).lstrip("_")
            if (
                name in CHECK_CALLS
                or last.startswith(CHECK_PREFIXES)
                or (isinstance(func, ast.Name) and helpers.get(func.id))
            ):
                return True
    return False


def _module_helpers(module: Module) -> dict[str, bool]:
    """Module-level functions that are no tests: name -> whether they hold checks (two levels deep)."""
    functions = {
        n.name: n
        for n in module.tree.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and not n.name.startswith("test")
    }
    helpers = {name: _holds_checks(fn, module, {}) for name, fn in functions.items()}
    return {name: helpers[name] or _holds_checks(fn, module, helpers) for name, fn in functions.items()}


def _opaque(node: ast.AST, module: Module) -> TypeGuard[ast.Call]:
    """A check made by a project helper (``self.assertManyResults(...)``, ``check_rows(...)``):
    what it checks cannot be written out here."""
    if not isinstance(node, ast.Call):
        return False
    name = module.names.qualify(node.func) or ""
    if name in CHECK_CALLS or name.startswith(("numpy.", "pandas.", "unittest.")):
        return False
    attr = node.func.attr if isinstance(node.func, ast.Attribute) else ""
    return not (attr.startswith("assert") and hasattr(__import__("unittest").TestCase, attr))


def _looked_at(node: ast.AST, own: set[str]) -> set[str]:
    """Names (the last part of dotted ones) a check looks at, its test's own locals and parameters aside."""
    out = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Attribute) and not isinstance(inner.value, ast.Call):
            out.add(inner.attr)
        elif isinstance(inner, ast.Name) and inner.id not in own and inner.id not in _BUILTINS:
            out.add(inner.id)
    return out - {"self", "cls", "pytest"}


_BUILTINS = set(dir(__import__("builtins")))


def _pinned(node: ast.AST) -> list[str]:
    """Keys by which a check of a value is paid for by an exact check of the same value.

    ``assert isinstance(v, str)``, ``assert v is not None``, ``assert hasattr(v, "x")`` and
    ``assert v`` want ``want:<v>``; ``assert v == <other>`` and ``assert v is <other>`` give
    ``want:<v>``: a test moved with its check tightened is the same test.  Nothing else is
    paid this way (``== 1`` for ``== 2`` would hide a rewritten expectation)."""
    if not isinstance(node, ast.Assert):
        return []
    test = node.test
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right, op = test.left, test.comparators[0], test.ops[0]
        if isinstance(op, (ast.Eq, ast.Is)):
            return [f"pin:{_text(side)}" for side in (left, right) if not isinstance(side, ast.Constant)]
        if isinstance(op, ast.IsNot) and isinstance(right, ast.Constant) and right.value is None:
            return [f"want:{_text(left)}"]
        return []
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id in ("isinstance", "hasattr", "callable")
        and test.args
    ):
        return [f"want:{_text(test.args[0])}"]
    if isinstance(test, (ast.Name, ast.Attribute)):
        return [f"want:{_text(test)}"]
    return []


def _text(node: ast.AST) -> str:
    try:
        return " ".join(ast.unparse(node).split())
    except (ValueError, RecursionError):  # a value written into an f-string that unparse cannot spell
        return ast.dump(node)


def cases(
    module: Module, qualname: str, owner: str | None = None, _cache: dict[int, dict[str, bool]] | None = None
) -> list[Case] | None:
    """The cases of test QUALNAME in MODULE; None when it is not defined there."""
    found = find_test(module.tree, qualname)
    if found is None:
        return None
    fn, classes = found
    constants = _constants(module.tree)
    owner = owner or f"{module.path}::{qualname.replace('.', '::')}"
    sets = _parameter_sets(fn, classes, module, constants)
    known = sets is not None
    if sets is None:
        sets = [_Param({}, None)]
    helpers = _cache.setdefault(id(module), _module_helpers(module)) if _cache is not None else _module_helpers(module)
    finder = _Checks(module, classes[-1] if classes else None, helpers)
    simple = _simple_helpers(module)
    local_values = _locals(fn)
    attributes = {
        t.id: n.value
        for n in (classes[-1].body if classes else [])
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    own = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs} | {
        n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    inline = _Inline(local_values, attributes)
    body = _body(fn)
    out = []
    for param in sets:
        written = [_put(s, param.values) for s in body]
        body_key = ast.dump(ast.Module(body=written, type_ignores=[]))  # type: ignore[arg-type]  # _put keeps a statement a statement
        inlined_key = ast.dump(ast.Module(body=_inline_helpers(written, simple), type_ignores=[])) if simple else ""  # type: ignore[arg-type]
        checks = []
        opaque: set[str] = set()
        subjects: set[str] = set()
        for node, env in finder.sites(body, param.values, [MAX_CASES]):
            plain = _text(_put(node, env))
            inlined = _text(_put(inline.visit(copy.deepcopy(node)), env)) if local_values or attributes else plain
            checks.append(frozenset((plain, inlined, *_pinned(_put(inline.visit(copy.deepcopy(node)), env)))))
            seen = _looked_at(_put(node, env), own)
            subjects |= seen
            if _opaque(node, module):
                opaque |= seen - {getattr(node.func, "attr", None) or getattr(node.func, "id", "")}
        out.append(
            Case(
                owner,
                param.id if known else None,
                body_key,
                tuple(checks),
                1,
                frozenset(opaque),
                frozenset(subjects),
                inlined_key if inlined_key != body_key else "",
            )
        )
    return out


def _simple_helpers(module: Module) -> dict[str, list[ast.stmt]]:
    """Module functions a call can be replaced by: no parameters, decorators, return or yield; bound once."""
    bound: dict[str, int] = {}
    for node in module.tree.body:
        for target in _bound_names(node):
            bound[target] = bound.get(target, 0) + 1
    out = {}
    for node in module.tree.body:
        if (
            isinstance(node, ast.FunctionDef)
            and not node.decorator_list
            and not node.name.startswith("test")
            and bound.get(node.name) == 1
            and not (node.args.posonlyargs or node.args.args or node.args.kwonlyargs)
            and node.args.vararg is None
            and node.args.kwarg is None
            and not any(isinstance(n, _LEAVES) for n in ast.walk(node))
        ):
            out[node.name] = [cast(ast.stmt, _put(s, {})) for s in _body(node)]  # _put keeps a statement a statement
    return out


_LEAVES = (ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)
_CLAUSE_TYPES: tuple[type[ast.AST], ...] = (
    ast.ExceptHandler,
    *((ast.match_case,) if sys.version_info >= (3, 10) else ()),
)


def _bound_names(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]


def _inline_helpers(body: list[ast.stmt], helpers: dict[str, list[ast.stmt]], depth: int = 0) -> list[ast.stmt]:
    """BODY with each statement `helper()` replaced by the helper's own statements (two levels deep)."""
    out: list[ast.stmt] = []
    for stmt in body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if (
            depth < 2
            and isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id in helpers
            and not call.args
            and not call.keywords
        ):
            out += _inline_helpers(copy.deepcopy(helpers[call.func.id]), helpers, depth + 1)
            continue
        stmt = copy.copy(stmt)
        for field_name, value in ast.iter_fields(stmt):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                setattr(stmt, field_name, _inline_helpers(value, helpers, depth))
            elif isinstance(value, list) and value and isinstance(value[0], _CLAUSE_TYPES):
                clauses = [copy.copy(c) for c in value]
                for clause in clauses:
                    clause.body = _inline_helpers(clause.body, helpers, depth)
                setattr(stmt, field_name, clauses)
        out.append(stmt)
    return out


def changed_cases(base: Sequence[Case], new: Sequence[Case]) -> tuple[list[Case], list[Case]]:
    """(cases of BASE with no twin in NEW, cases of NEW with no twin in BASE): twins have the same body."""
    left = list(new)
    gone = []
    for case in base:
        twin = next((i for i, other in enumerate(left) if set(other.keys()) & set(case.keys())), None)
        if twin is None:
            gone.append(case)
        else:
            left.pop(twin)
    return gone, left


# -- the one notion -------------------------------------------------------------------


def reappearing(lost: Sequence[Case], pool: Sequence[Case]) -> list[bool]:
    """For each case of LOST, whether it lives on in POOL: the same body, or all its checks."""
    result = [False] * len(lost)
    used: set[int] = set()
    by_body: dict[str, list[int]] = {}
    for j, case in enumerate(pool):
        for key in case.keys():
            by_body.setdefault(key, []).append(j)
    for i, case in enumerate(lost):
        hit = next(
            (j for key in case.keys() for j in by_body.get(key, []) if j not in used and pool[j].weight >= case.weight),
            None,
        )
        if hit is not None:
            used.add(hit)
            result[i] = True
    slots: list[frozenset[str]] = []
    by_text: dict[str, list[int]] = {}
    for j, case in enumerate(pool):
        if j in used:
            continue
        for keys in case.checks:
            for text in keys:
                if not text.startswith("want:"):  # a weak check pays for nothing but its own spelling
                    by_text.setdefault("want:" + text[4:] if text.startswith("pin:") else text, []).append(len(slots))
            slots.append(keys)
    taken: set[int] = set()
    for i, case in enumerate(lost):
        if result[i] or not case.checks or case.weight > 1:
            continue
        mine: list[int] = []
        for keys in case.checks:
            # The strictest spelling first (locals inlined), then as written.
            order = sorted(keys, key=lambda k: (k.startswith("want:"), -len(k)))  # a tighter check of the value last
            slot = next((s for text in order for s in by_text.get(text, []) if s not in taken and s not in mine), None)
            if slot is None:
                break
            mine.append(slot)
        else:
            taken.update(mine)
            result[i] = True
    # A case whose checks a project helper makes lives on in a new test of the same file that
    # looks at everything its checks looked at, with at least as many checks x cases.
    budget: dict[str, int] = {}
    looks: dict[str, set[str]] = {}
    for j, case in enumerate(pool):
        if j not in used:
            budget[case.owner] = budget.get(case.owner, 0) + len(case.checks)
            looks.setdefault(case.owner, set()).update(case.subjects)
    for i, case in enumerate(lost):
        if result[i] or not case.opaque:
            continue
        here = case.owner.split("::", 1)[0]
        for owner, room in budget.items():
            if owner.split("::", 1)[0] == here and room >= len(case.checks) and case.opaque <= looks[owner]:
                result[i] = True
                break
    return result


# -- collected ids (collection-snapshot) ------------------------------------------------


def reappearing_ids(
    base_ids: Iterable[str],
    new_ids: Iterable[str],
    vanished: Sequence[str],
    appeared: Sequence[str],
    read_base: Callable[[list[str]], dict[str, bytes | None]],
    read_new: Callable[[list[str]], dict[str, bytes | None]],
    renamed: dict[str, str] | None = None,
) -> set[str]:
    """The ids of VANISHED whose test lives on in the tests behind APPEARED.

    The cases a vanished id stands for are found by pytest's id when the ids
    predicted for the whole test are exactly those collected; otherwise every
    case that has no twin in the test's new version must live on.
    """
    renamed = renamed or {}
    back = {new: old for old, new in renamed.items()}

    def groups(ids: Iterable[str]) -> dict[tuple[str, str], list[str]]:
        out: dict[tuple[str, str], list[str]] = {}
        for node_id in ids:
            parts = split_id(node_id)
            if parts is not None:
                out.setdefault(parts[:2], []).append(parts[2])
        return out

    lost_groups, new_groups = groups(vanished), groups(appeared)
    if not lost_groups or not new_groups:
        return set()
    all_base, all_new = groups(base_ids), groups(new_ids)
    base_paths = sorted({p for p, _ in lost_groups} | {back.get(p, p) for p, _ in new_groups})
    new_paths = sorted({p for p, _ in new_groups} | {renamed.get(p, p) for p, _ in lost_groups})
    base_modules = _modules(read_base, base_paths)
    new_modules = _modules(read_new, new_paths)
    cache: dict[int, dict[str, bool]] = {}

    def cases_at(modules: dict[str, Module | None], path: str, qualname: str) -> list[Case] | None:
        module = modules.get(path)
        return cases(module, qualname, f"{path}::{qualname.replace('.', '::')}", cache) if module is not None else None

    def select(
        found: list[Case], collected: list[str], wanted: list[str], other: list[Case] | None, mine_first: bool
    ) -> tuple[list[Case], bool]:
        """The cases behind WANTED ids (exact), else those with no twin in OTHER (not exact)."""
        predicted = [c.id for c in found if c.id is not None]
        exact = len(predicted) == len(found) and sorted(predicted) == sorted(collected)
        if exact:
            chosen = [c for c in found if c.id in set(wanted)]
        elif other is None:
            chosen = found
        else:
            chosen = changed_cases(found, other)[0] if mine_first else changed_cases(other, found)[1]
        if exact:
            return chosen, True
        weight = max(1, len(wanted) // max(len(chosen), 1))
        return [c._replace(weight=weight) if c.id is None else c for c in chosen], False

    pool: list[Case] = []
    for (path, qualname), params in new_groups.items():
        found = cases_at(new_modules, path, qualname)
        if found is None:
            continue
        before = cases_at(base_modules, back.get(path, path), qualname)
        chosen, _ = select(found, all_new.get((path, qualname), []), params, before, False)
        pool += chosen
    lost: list[tuple[tuple[str, str], list[Case], bool]] = []
    for (path, qualname), params in lost_groups.items():
        found = cases_at(base_modules, path, qualname)
        if found is None:
            continue
        after = cases_at(new_modules, renamed.get(path, path), qualname)
        chosen, exact = select(found, all_base.get((path, qualname), []), params, after, True)
        lost.append(((path, qualname), chosen, exact))
        bodies = {key for c in chosen for key in c.keys()}
        pool += [c for c in after or [] if bodies & set(c.keys())]  # a duplicate case removed: its twin still runs
    flat = [c for _, chosen, _ in lost for c in chosen]
    flags = iter(reappearing(flat, pool))
    alive: set[str] = set()
    for (path, qualname), chosen, exact in lost:
        mine = [next(flags) for _ in chosen]
        prefix = f"{path}::{qualname.replace('.', '::')}"
        params = lost_groups[(path, qualname)]
        if exact:
            ok = {c.id for c, flag in zip(chosen, mine) if flag}
            alive |= {prefix + (f"[{p}]" if p else "") for p in params if p in ok}
        elif all(mine):
            alive |= {prefix + (f"[{p}]" if p else "") for p in params}
    return alive


def _modules(read: Callable[[list[str]], dict[str, bytes | None]], paths: list[str]) -> dict[str, Module | None]:
    out: dict[str, Module | None] = {}
    for path, data in read([p for p in paths if p.endswith(PYTHON_SUFFIXES)]).items():
        try:
            out[path] = Module.from_source(path, data) if data is not None else None
        except SourceError:
            out[path] = None  # unreadable: nothing in it can vouch for a test
    return out
