"""The flip rewrite of a test module's AST (pure: the standard library only, no pytest).

Loaded by file path by _flips_plugin.py inside the project's interpreter, and
imported by oracle-guard's own tests.  See _flips_plugin.py for what a flip is.
"""

from __future__ import annotations

import ast
import copy
import hashlib
from collections.abc import Sequence
from typing import Any, Callable

NAME = "__oracle_guard_flips__"  # a dunder: not mangled inside class bodies
MAX_PER_TEST = 12
SUFFIX = "~flip~"
UNITTEST_FLIPS = {
    "assertTrue": "assertFalse",
    "assertFalse": "assertTrue",
    "assertIsNone": "assertIsNotNone",
    "assertIsNotNone": "assertIsNone",
    "assertNotEqual": "assertEqual",
    "assertLess": "assertGreaterEqual",
    "assertLessEqual": "assertGreater",
    "assertGreater": "assertLessEqual",
    "assertGreaterEqual": "assertLess",
}
EQUAL_METHODS = ("assertEqual", "assertEquals", "failUnlessEqual")
COMPLEMENT: dict[type, type] = {ast.Lt: ast.GtE, ast.LtE: ast.Gt, ast.Gt: ast.LtE, ast.GtE: ast.Lt, ast.NotEq: ast.Eq}
UNSAFE_IN_LAMBDA = (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)


# -- flipping values ---------------------------------------------------------------------------


def _stable(text: str) -> int:
    return int(hashlib.sha1(text.encode("utf-8")).hexdigest()[:8], 16)


def flip_value(value: Any, salt: str = "") -> tuple[Any, bool]:
    """(a value no honest equality can confuse with VALUE, True), or (VALUE, False) when none is known."""
    if isinstance(value, bool):
        return (not value), True
    if isinstance(value, int):
        return value + 1, True
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return value, False
        return value + max(1.0, abs(value)), True
    if isinstance(value, str):
        return value + SUFFIX, True
    if isinstance(value, bytes):
        return value + SUFFIX.encode(), True
    # A container gets every element it can flip changed, not one: an honest equality may leave a part out
    # (semver's Version equals a dict whatever its build metadata), none leaves every part out.
    if isinstance(value, (tuple, list)):
        items, changed = list(value), False
        for index in _order(len(items), salt):
            items[index], ok = flip_value(items[index], salt)
            changed = changed or ok
        if changed:
            return (tuple(items) if isinstance(value, tuple) else items), True
        return (tuple([*items, SUFFIX]) if isinstance(value, tuple) else [*items, SUFFIX]), True
    if isinstance(value, dict):
        flipped_dict, changed = dict(value), False
        for key in value:
            flipped_dict[key], ok = flip_value(value[key], salt)
            changed = changed or ok
        return (flipped_dict, True) if changed else ({**value, SUFFIX: None}, True)
    if isinstance(value, (set, frozenset)):
        return type(value)([*value, SUFFIX]), True
    return value, False


def _order(count: int, salt: str) -> list[int]:
    start = _stable(salt) % count if count else 0
    return [(start + i) % count for i in range(count)]


def _literal(node: ast.expr) -> tuple[Any, bool]:
    """(value, True) for a literal expectation: a constant (not None), or a container of constants."""
    if isinstance(node, ast.Constant) and node.value is None:
        return None, False
    if isinstance(node, (ast.Constant, ast.UnaryOp, ast.Tuple, ast.List, ast.Set, ast.Dict)):
        try:
            return ast.literal_eval(node), True
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None, False
    return None, False


def _as_node(value: Any) -> ast.expr | None:
    try:
        node = ast.parse(repr(value), mode="eval").body
        return node if ast.literal_eval(node) == value else None
    except (SyntaxError, ValueError):
        return None


# -- the rewrite ---------------------------------------------------------------------------------


class Site:
    """One flipped check: where it is, what was flipped, and how its source text changes."""

    def __init__(self, path: str, node: ast.AST, kind: str, text: str) -> None:
        self.key = f"{path}:{node.lineno}:{node.col_offset}:{kind}"  # type: ignore[attr-defined]
        self.info = {"path": path, "line": node.lineno, "col": node.col_offset + 1, "kind": kind, "flip": text}  # type: ignore[attr-defined]


def _call(attr: str, *args: ast.expr) -> ast.Call:
    return ast.Call(
        func=ast.Attribute(value=ast.Name(id=NAME, ctx=ast.Load()), attr=attr, ctx=ast.Load()),
        args=list(args),
        keywords=[],
    )


def _lambda(body: ast.expr) -> ast.Lambda:
    no_args = ast.arguments(
        posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
    )
    return ast.Lambda(args=no_args, body=body)


def _lambda_safe(node: ast.AST) -> bool:
    return not any(isinstance(n, UNSAFE_IN_LAMBDA) for n in ast.walk(node))


def _raises_call(node: ast.expr) -> str | None:
    """'pytest', 'unittest' or 'unittest-regex' when NODE is a raises(...) context expression."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name == "raises":
        return "pytest"
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        if name == "assertRaises":
            return "unittest"
        if name == "assertRaisesRegex" and len(node.args) >= 2:
            return "unittest-regex"
    return None


class _TestRewriter:
    """The flips of one test function: candidate groups of sites, then the chosen ones applied.

    A group is one flip: a literal in one check, or an expectation name together
    with every check that reads it (once the name holds the flip, each of those
    checks must be soft, or the test would stop at the first).
    """

    def __init__(self, path: str, func: ast.FunctionDef) -> None:
        self.path = path
        self.func = func
        self.groups: list[tuple[str, list[Site], Callable[[], list[tuple[ast.AST, str]]]]] = []
        self.bindings: dict[str, ast.expr] = {}  # name -> the literal bound to it once
        self.params: list[str] = []  # parameters read only as == operands of asserts
        self.uses: dict[str, list[Callable[[], Site]]] = {}
        self._expectation_names()

    def _expectation_names(self) -> None:
        """Names whose every load is a whole operand of an == check: the test's expectations."""
        bound: dict[str, ast.expr | None] = {}
        for stmt in self.func.body:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and _literal(stmt.value)[1]
            ):
                name = stmt.targets[0].id
                bound[name] = None if name in bound else stmt.value
        args = self.func.args
        params = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs] if a.arg not in ("self", "cls")]
        stores: dict[str, int] = {}
        for node in ast.walk(self.func):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                stores[node.id] = stores.get(node.id, 0) + 1
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                stores.update(dict.fromkeys(node.names, 99))
        in_asserts, in_calls = self._expectation_operands()
        loads: dict[str, list[int]] = {}
        for node in ast.walk(self.func):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                loads.setdefault(node.id, []).append(id(node))
        for name, literal in bound.items():
            uses = loads.get(name, [])
            if (
                literal is not None
                and stores.get(name) == 1
                and uses
                and all(u in in_asserts or u in in_calls for u in uses)
            ):
                self.bindings[name] = literal
        for name in params:
            uses = loads.get(name, [])
            if name not in stores and uses and all(u in in_asserts for u in uses):
                self.params.append(name)

    def _expectation_operands(self) -> tuple[set[int], set[int]]:
        in_asserts: set[int] = set()
        in_calls: set[int] = set()
        for stmt in ast.walk(self.func):
            if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare) and len(stmt.test.ops) == 1:
                if isinstance(stmt.test.ops[0], ast.Eq) and _lambda_safe(stmt.test):
                    pair = (stmt.test.left, stmt.test.comparators[0])
                    in_asserts.update(id(n) for n in pair if isinstance(n, ast.Name))
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                call = stmt.value
                if _self_method(call) in EQUAL_METHODS and len(call.args) >= 2 and _lambda_safe(call):
                    in_calls.update(id(n) for n in call.args[:2] if isinstance(n, ast.Name))
        return in_asserts, in_calls

    def _expectation(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name) and (node.id in self.bindings or node.id in self.params):
            return node.id
        return None

    def collect(self) -> None:
        for parent in ast.walk(self.func):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(parent, field, None)
                if not isinstance(block, list):
                    continue
                for index, stmt in enumerate(block):
                    if isinstance(stmt, ast.Assert):
                        self._candidate_assert(block, index, stmt)
                    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                        self._candidate_unittest(block, index, stmt.value)
                    elif isinstance(stmt, ast.With) and len(stmt.items) == 1:
                        self._candidate_raises(stmt)
        for name, literal in self.bindings.items():
            self._group_binding(name, literal)
        for name in self.params:
            self._group_parameter(name)

    def _single(self, site: Site, action: Callable[[], None], edits: Sequence[tuple[ast.AST, str]] = ()) -> None:
        def apply() -> list[tuple[ast.AST, str]]:
            action()
            return list(edits)

        self.groups.append((site.key, [site], apply))

    def _soft(self, block: list[ast.stmt], index: int, stmt: ast.stmt, call: ast.Call) -> Callable[[], None]:
        def action() -> None:
            block[index] = ast.copy_location(ast.Expr(call), stmt)

        return action

    def _candidate_assert(self, block: list[ast.stmt], index: int, stmt: ast.Assert) -> None:
        test = stmt.test
        if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not _lambda_safe(test):
            return
        left, op, right = test.left, test.ops[0], test.comparators[0]
        literal_left, literal_right = _literal(left)[1], _literal(right)[1]
        if isinstance(op, ast.Eq):
            names = [n for n in (self._expectation(right), self._expectation(left)) if n]
            if len(names) == 1:
                name = names[0]
                kind = "expected" if name in self.bindings else "parameter"

                def use(name: str = name, kind: str = kind) -> Site:
                    site = Site(self.path, stmt, kind, "")
                    if kind == "expected":
                        call = _call("check", ast.Constant(site.key), _lambda(test))
                    else:
                        flag = ast.Name(id=_flag(name), ctx=ast.Load())
                        call = _call("check_param", ast.Constant(site.key), flag, _lambda(test))
                    self._soft(block, index, stmt, call)()
                    return site

                self.uses.setdefault(name, []).append(use)
                return
            if literal_left == literal_right:
                return
            side = right if literal_right else left
            value, _ = _literal(side)
            flipped, ok = flip_value(value, f"{self.path}:{side.lineno}")
            node = _as_node(flipped) if ok else None
            if node is None:
                return
            check = ast.Compare(
                left=node if side is left else left, ops=[ast.Eq()], comparators=[node if side is right else right]
            )
            site = Site(self.path, stmt, "literal", f"{value!r} flipped to {flipped!r}")
            call = _call("check", ast.Constant(site.key), _lambda(check))
            self._single(site, self._soft(block, index, stmt, call), [(side, repr(flipped))])
        elif type(op) in COMPLEMENT and literal_left != literal_right:
            flipped_op = COMPLEMENT[type(op)]()
            check = ast.Compare(left=left, ops=[flipped_op], comparators=[right])
            site = Site(self.path, stmt, "complement", f"`{_op_text(op)}` checked as `{_op_text(flipped_op)}`")
            self._single(site, self._soft(block, index, stmt, _call("check", ast.Constant(site.key), _lambda(check))))
        elif isinstance(op, ast.In) and isinstance(left, ast.Constant) and isinstance(left.value, (str, bytes)):
            if literal_right:
                return
            flipped, _ = flip_value(left.value)
            check = ast.Compare(left=ast.Constant(flipped), ops=[ast.In()], comparators=[right])
            site = Site(self.path, stmt, "literal", f"{left.value!r} flipped to {flipped!r}")
            call = _call("check", ast.Constant(site.key), _lambda(check))
            self._single(site, self._soft(block, index, stmt, call), [(left, repr(flipped))])

    def _candidate_unittest(self, block: list[ast.stmt], index: int, call: ast.Call) -> None:
        method = _self_method(call)
        if method is None or any(isinstance(a, ast.Starred) for a in call.args) or not _lambda_safe(call):
            return
        assert isinstance(call.func, ast.Attribute)
        stmt, args = block[index], list(call.args)
        if method in EQUAL_METHODS and len(args) >= 2:
            names = [n for n in (self._expectation(args[1]), self._expectation(args[0])) if n in self.bindings]
            if len(names) == 1:

                def use() -> Site:
                    site = Site(self.path, stmt, "expected", "")
                    self._soft(block, index, stmt, _call("call", ast.Constant(site.key), call.func, *args[:2]))()
                    return site

                self.uses.setdefault(names[0], []).append(use)
                return
            literal = [position for position in (1, 0) if _literal(args[position])[1]]
            if len(literal) != 1:
                return
            position = literal[0]
            value, _ = _literal(args[position])
            flipped, ok = flip_value(value, f"{self.path}:{args[position].lineno}")
            node = _as_node(flipped) if ok else None
            if node is None:
                return
            new_args = list(args[:2])
            new_args[position] = node
            site = Site(self.path, stmt, "literal", f"{value!r} flipped to {flipped!r}")
            soft = _call("call", ast.Constant(site.key), call.func, *new_args)
            self._single(site, self._soft(block, index, stmt, soft), [(args[position], repr(flipped))])
        elif method in UNITTEST_FLIPS and args:
            flipped_func = ast.Attribute(value=call.func.value, attr=UNITTEST_FLIPS[method], ctx=ast.Load())
            site = Site(self.path, stmt, "complement", f"{method} checked as {UNITTEST_FLIPS[method]}")
            count = 1 if method in ("assertTrue", "assertFalse", "assertIsNone", "assertIsNotNone") else 2
            soft = _call("call", ast.Constant(site.key), flipped_func, *args[:count])
            self._single(site, self._soft(block, index, stmt, soft))

    def _candidate_raises(self, stmt: ast.With) -> None:
        item = stmt.items[0]
        kind = _raises_call(item.context_expr)
        if kind is None or not _lambda_safe(item.context_expr):
            return
        call = item.context_expr
        assert isinstance(call, ast.Call)
        flipped_type = copy.deepcopy(call)
        flipped_type.args = [ast.Attribute(value=ast.Name(id=NAME, ctx=ast.Load()), attr="Flipped", ctx=ast.Load())]
        flipped_type.keywords = []
        variants = [(flipped_type, Site(self.path, call, "raises", "the expected exception type flipped"))]
        if kind == "pytest":
            keyword = next((k for k in call.keywords if k.arg == "match"), None)
            pattern = keyword.value if keyword else None
        else:
            pattern = call.args[1] if kind == "unittest-regex" else None
        if isinstance(pattern, ast.Constant) and isinstance(pattern.value, str):
            flipped_match = copy.deepcopy(call)
            new_pattern = ast.Constant(pattern.value + SUFFIX)
            if kind == "pytest":
                flipped_match.keywords = [
                    k if k.arg != "match" else ast.keyword(arg="match", value=new_pattern) for k in call.keywords
                ]
            else:
                flipped_match.args = [call.args[0], new_pattern, *call.args[2:]]
            text = f"match {pattern.value!r} flipped to {new_pattern.value!r}"
            variants.append((flipped_match, Site(self.path, pattern, "match", text)))
        for flipped, site in variants:

            def action(flipped: ast.Call = flipped, site: Site = site) -> None:
                wrapper = _call("raises", ast.Constant(site.key), _lambda(flipped))
                inner = ast.With(items=[ast.withitem(context_expr=wrapper)], body=stmt.body)
                stmt.body = [ast.copy_location(inner, stmt)]

            self._single(site, action)

    def _group_binding(self, name: str, literal: ast.expr) -> None:
        value, _ = _literal(literal)
        flipped, ok = flip_value(value, f"{self.path}:{literal.lineno}")
        node = _as_node(flipped) if ok else None
        uses = self.uses.get(name, [])
        if node is None or not uses:
            return
        text = f"`{name} = {value!r}` flipped to {flipped!r}"

        def apply() -> list[tuple[ast.AST, str]]:
            for stmt in self.func.body:
                if isinstance(stmt, ast.Assign) and stmt.value is literal:
                    stmt.value = ast.copy_location(node, literal)
            return [(literal, repr(flipped))]

        self._group(f"{self.path}:{literal.lineno}:{name}", text, uses, apply)

    def _group_parameter(self, name: str) -> None:
        uses = self.uses.get(name, [])
        if not uses:
            return

        def apply() -> list[tuple[ast.AST, str]]:
            target = ast.Tuple(
                elts=[ast.Name(id=name, ctx=ast.Store()), ast.Name(id=_flag(name), ctx=ast.Store())], ctx=ast.Store()
            )
            prelude = ast.Assign(targets=[target], value=_call("flip", ast.Name(id=name, ctx=ast.Load())))
            body = self.func.body
            start = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else 0
            self.func.body = [*body[:start], ast.copy_location(prelude, body[0]), *body[start:]]
            return []

        self._group(f"{self.path}:{self.func.lineno}:{name}", f"parameter `{name}` flipped", uses, apply)

    def _group(
        self, key: str, text: str, uses: list[Callable[[], Site]], bind: Callable[[], list[tuple[ast.AST, str]]]
    ) -> None:
        sites: list[Site] = []

        def apply() -> list[tuple[ast.AST, str]]:
            sites.clear()
            for use in uses:
                site = use()
                site.info["flip"] = text
                sites.append(site)
            return bind()

        self.groups.append((key, sites, apply))

    def apply(self, sites: dict[str, dict[str, Any]]) -> list[tuple[ast.AST, str]]:
        chosen = sorted(self.groups, key=lambda g: _stable(g[0]))[:MAX_PER_TEST]
        edits: list[tuple[ast.AST, str]] = []
        for _, group_sites, action in chosen:
            edits += action()
            sites.update((s.key, s.info) for s in group_sites)
        return edits


def _flag(name: str) -> str:
    return f"__og_flipped_{name}__"


def _self_method(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        return func.attr
    return None


def _op_text(op: ast.cmpop) -> str:
    return {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}[type(op)]


def rewrite(source: bytes, path: str) -> tuple[ast.Module, dict[str, dict[str, Any]], list[str] | None]:
    """The flipped module, its sites, and the flipped source lines (None when the text cannot be edited)."""
    tree = ast.parse(source, path)
    sites: dict[str, dict[str, Any]] = {}
    edits: list[tuple[ast.AST, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef)):
            for func in node.body:
                if isinstance(func, ast.FunctionDef) and func.name.startswith("test"):
                    rewriter = _TestRewriter(path, func)
                    rewriter.collect()
                    edits += rewriter.apply(sites)
    ast.fix_missing_locations(tree)
    return tree, sites, _edited_lines(source, edits)


def flipped_tests(tree: ast.Module) -> set[tuple[str, int]]:
    """(name, first line as the code object counts it) of the test functions holding a flip."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            if any(isinstance(n, ast.Name) and n.id == NAME for n in ast.walk(node)):
                found.add((node.name, min([d.lineno for d in node.decorator_list] + [node.lineno])))
    return found


def _edited_lines(source: bytes, edits: list[tuple[ast.AST, str]]) -> list[str] | None:
    lines = source.splitlines(keepends=True)
    for node, text in sorted(edits, key=lambda e: (e[0].lineno, e[0].col_offset), reverse=True):  # type: ignore[attr-defined]
        start, end = node.lineno, getattr(node, "end_lineno", None)  # type: ignore[attr-defined]
        if end != start:
            continue  # a literal over several lines keeps its text
        line = lines[start - 1]
        lines[start - 1] = line[: node.col_offset] + text.encode("utf-8") + line[node.end_col_offset :]  # type: ignore[attr-defined]
    try:
        return [line.decode("utf-8") for line in lines]
    except UnicodeDecodeError:
        return None
