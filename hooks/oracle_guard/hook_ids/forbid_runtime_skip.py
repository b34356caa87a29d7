"""forbid-runtime-skip: reject runtime skips that are new since the base.

``pytest.skip()``, ``pytest.xfail()``, ``pytest.importorskip()``,
``pytest.exit()``, ``os._exit()`` (also handed on: ``atexit.register(os._exit, 0)``),
``self.skipTest()``, raising
``unittest.SkipTest`` / ``pytest.skip.Exception`` (or a local subclass of
either), through any import alias; and a test that returns before its first
check.  A conditional skip is keyed by its condition, so widening the
condition (``if sys.platform == "win32"`` -> ``if True``) is a new skip, and
the message quotes the condition.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Sequence

from oracle_guard.analysis import deferred
from oracle_guard.analysis.pysource import (
    TRY_NODES,
    FunctionNode,
    Module,
    PrunedVisitor,
    ScopeNode,
    is_test_name,
    statements,
)
from oracle_guard.analysis.sourcetext import hot_lines
from oracle_guard.repo.context import HookContext
from oracle_guard.reporting.report import Finding, guarded
from oracle_guard.rules.pydiff import Occurrence, Rule, check_context, run

SKIP_CALLS = {
    "pytest.skip": "pytest.skip()",
    "pytest.xfail": "pytest.xfail()",
    "pytest.importorskip": "pytest.importorskip()",
    "pytest.exit": "pytest.exit()",
    "os._exit": "os._exit()",
}
# A skip call that ends the process wherever it runs: handed on (`atexit.register(os._exit, 0)`) it still does.
HANDED_ON = frozenset({"os._exit"})
SKIP_EXCEPTIONS = {
    "unittest.SkipTest",
    "pytest.skip.Exception",
    "pytest.xfail.Exception",
    "pytest.exit.Exception",
}
SKIP_METHODS = {"skipTest"}  # self.skipTest(...), on any TestCase-like object
CHECK_CALL = re.compile(r"(^|\.)(assert\w*|fail\w*|raises|warns|deprecated_call|check\w*|verify\w*|expect\w*)$", re.I)
# Where a runtime skip can be spelled (`importorskip`, `skipTest` contain `skip`).
TOKENS = (b"skip", b"xfail", b"exit", b"SkipTest", b"Skipped", b"XFailed")
_DEF_LINE = re.compile(rb"[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)")


def _line_at(source: bytes, pos: int) -> tuple[int, bytes]:
    """Start offset and leading whitespace of the line holding POS."""
    start = source.rfind(b"\n", 0, pos) + 1
    text = source[start:pos]
    return start, text[: len(text) - len(text.lstrip(b" \t"))]


def _returns_in_a_test(source: bytes) -> bool:
    """Whether a `return` line sits directly in a `test*` function (by indentation).

    Only `return` occurrences are looked at, each walking back to the nearest
    `def` indented less: far cheaper than a regex over every line of the file.
    """
    pos = source.find(b"return")
    while pos != -1:
        start, indent = _line_at(source, pos)
        own = _DEF_LINE.match(source, start)
        if own and own.end() < pos:  # `def test_x(): return` on one line
            if own.group(1).startswith(b"test"):
                return True
        elif indent:  # the line's indentation tells which def holds it (`if x: return` too)
            back = start
            while True:
                d = source.rfind(b"def", 0, back)
                if d == -1:
                    break
                line_start, def_indent = _line_at(source, d)
                match = _DEF_LINE.match(source, line_start)
                if match and match.end(1) > d and len(def_indent) < len(indent):
                    if match.group(1).startswith(b"test"):
                        return True
                    break
                back = d
        pos = source.find(b"return", pos + 6)
    return False


class RuntimeSkipRule(Rule):
    TRIGGER = re.compile(b"|".join(re.escape(t) for t in TOKENS))

    def could_match(self, source: bytes) -> bool:
        return any(token in source for token in TOKENS) or _returns_in_a_test(source)

    def occurrences(self, module: Module) -> list[Occurrence]:
        finder = _Finder(module)
        for node in module.visited():
            finder.visit(node)
        returns = hot_lines(module.source, (b"return",))
        for qual, func in _test_functions(module.visited()):
            i = bisect.bisect_left(returns, func.lineno)
            if i == len(returns) or returns[i] > (func.end_lineno or func.lineno):
                continue  # no `return` spelled in it
            if not _is_fixture(func, module):  # `@pytest.fixture def test_data(): return ...` is no test
                finder.early_returns(qual, func)
        return finder.found

    def context(self, module: Module) -> object | None:
        """What a statement's skips depend on beyond itself and the names: the skip exceptions defined here."""
        return sorted(_Finder(module).skip_exceptions)


def _test_functions(body: list[ast.stmt]) -> list[tuple[str, FunctionNode]]:
    found = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_test_name(node.name):
                found.append((prefix + node.name, node))
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(body, "")
    return found


def _is_fixture(func: FunctionNode, module: Module) -> bool:
    for deco in func.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = module.names.qualify(target) or ""
        if name == "pytest.fixture" or name.endswith(("_pytest.fixtures.fixture", "pytest_asyncio.fixture")):
            return True
    return False


def _negate(text: str) -> str:
    return text[4:] if text.startswith("not ") else f"not ({text})"


class _Finder(PrunedVisitor):
    def __init__(self, module: Module) -> None:
        self.module = module
        self.names = module.names
        self.scopes: list[ScopeNode] = []
        self.conditions: list[str] = []
        self.found: list[Occurrence] = []
        local = self._local_skip_exceptions(module.tree)
        self.skip_exceptions = set(SKIP_EXCEPTIONS) | local
        # Statements are visited only where a token or a local name for a skip is spelled.
        bound = [n for n, v in self.names.aliases.items() if v in SKIP_CALLS or v in self.skip_exceptions]
        bound += [
            n
            for n, call in self.names.bindings.items()
            if (self.names.qualify(call.func) or "") in self.skip_exceptions
        ]
        self.hot = hot_lines(module.source, TOKENS + tuple(n.encode() for n in bound + sorted(local)))

    def _local_skip_exceptions(self, tree: ast.Module) -> set[str]:
        """Classes defined here that derive from a skip exception, to a fixed point."""
        local: set[str] = set()
        classes = [n for n in statements(tree.body) if isinstance(n, ast.ClassDef)]
        changed = True
        while changed:
            changed = False
            for cls in classes:
                if cls.name in local:
                    continue
                for base in cls.bases:
                    name = self.names.qualify(base) or ""
                    if name in SKIP_EXCEPTIONS or name in local:
                        local.add(cls.name)
                        changed = True
        return local

    # -- bookkeeping -----------------------------------------------------------

    def _owner(self) -> str:
        return ".".join(s.name for s in self.scopes) or "<module>"

    def _add(
        self, node: ast.AST, kind: str, detail: str, what: str, owner: str | None = None, code: str = "OG201"
    ) -> None:
        owner = owner or self._owner()
        condition = " and ".join(self.conditions)
        where = "this module" if owner == "<module>" else owner
        when = f" when `{condition}`" if condition else ""
        line, col = self.module.position(node)
        self.found.append(
            Occurrence(
                (owner, kind, detail, condition), owner, line, col, code, f"new runtime skip {what} in {where}{when}"
            )
        )

    def _visit_scope(self, node: ScopeNode) -> None:
        saved = self.conditions
        self.scopes.append(node)
        self.conditions = []  # a condition outside a def does not guard its body's calls
        self.generic_visit(node)
        self.scopes.pop()
        self.conditions = saved

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _visit_scope

    def visit_If(self, node: ast.If) -> None:
        test = " ".join(ast.unparse(node.test).split())
        self.visit(node.test)
        self.conditions.append(test)
        for stmt in node.body:
            self.visit(stmt)
        self.conditions[-1] = _negate(test)
        for stmt in node.orelse:
            self.visit(stmt)
        self.conditions.pop()

    def visit_IfExp(self, node: ast.IfExp) -> None:
        test = " ".join(ast.unparse(node.test).split())
        self.visit(node.test)
        self.conditions.append(test)
        self.visit(node.body)
        self.conditions[-1] = _negate(test)
        self.visit(node.orelse)
        self.conditions.pop()

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        caught = ast.unparse(node.type) if node.type is not None else "any exception"
        self.conditions.append(f"except {caught}")
        self.generic_visit(node)
        self.conditions.pop()

    # -- what counts ------------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> None:
        name = self.names.qualify(node.func) or ""
        if name in SKIP_CALLS:
            detail = ast.unparse(node.args[0]) if name == "pytest.importorskip" and node.args else ""
            self._add(node, name, detail, f"`{self.module.segment(node)}`")
        elif isinstance(node.func, ast.Attribute) and node.func.attr in SKIP_METHODS:
            self._add(node, "skipTest", "", f"`{self.module.segment(node)}`")
        for exit_name, _, _ in deferred.handed_on(node, self.names, HANDED_ON):
            # atexit.register(os._exit, 0): the same exit as a call, run after pytest's summary.
            self._add(node, f"{exit_name} handed on", name, f"`{self.module.segment(node)}` (a deferred process exit)")
        self.generic_visit(node)

    def visit_Raise(self, node: ast.Raise) -> None:
        if node.exc is not None:
            exc = self.names.expand(node.exc)  # `e = unittest.SkipTest(...)`, then `raise e`
            target = exc.func if isinstance(exc, ast.Call) else exc
            name = self.names.qualify(target) or ""
            if name in self.skip_exceptions:
                self._add(node, "raise " + name, "", f"`{self.module.segment(node)}`")
        self.generic_visit(node)

    def early_returns(self, qual: str, func: FunctionNode) -> None:
        """A `return` reached before the test's first check skips the rest silently."""
        body = func.body
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            body = body[1:]  # the docstring
        self._scan_returns(qual, body, [], top=True)

    def _scan_returns(self, qual: str, body: list[ast.stmt], conds: list[str], top: bool) -> bool:
        """Walk statements in order; True once a check has been seen."""
        for index, stmt in enumerate(body):
            if isinstance(stmt, ast.Return):
                trailing = top and index == len(body) - 1 and index > 0
                if not trailing:
                    condition = " and ".join(conds)
                    when = f" when `{condition}`" if condition else ""
                    line, col = self.module.position(stmt)
                    self.found.append(
                        Occurrence(
                            (qual, "early-return", "", condition),
                            qual,
                            line,
                            col,
                            "OG202",
                            f"new early return in {qual} before its first check{when}",
                        )
                    )
                return False
            if isinstance(stmt, ast.If):
                test = " ".join(ast.unparse(stmt.test).split())
                if _has_check(stmt.test):
                    return True
                checked = self._scan_returns(qual, stmt.body, conds + [test], top=False)
                checked_else = self._scan_returns(qual, stmt.orelse, conds + [_negate(test)], top=False)
                if checked or checked_else:
                    return True
                continue
            # Blocks run their body first: look for a return inside before any check.
            if isinstance(stmt, (ast.With, ast.AsyncWith)):
                if _has_check(ast.Tuple([i.context_expr for i in stmt.items], ast.Load())):  # with pytest.raises(...)
                    return True
                if self._scan_returns(qual, stmt.body, conds, top=False):
                    return True
                continue
            if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
                loop = (
                    f"while {ast.unparse(stmt.test)}"
                    if isinstance(stmt, ast.While)
                    else f"for {ast.unparse(stmt.target)} in {ast.unparse(stmt.iter)}"
                )
                if self._scan_returns(qual, stmt.body, conds + [" ".join(loop.split())], top=False) or _has_check(stmt):
                    return True
                continue
            if isinstance(stmt, TRY_NODES):
                checked = self._scan_returns(qual, stmt.body, conds, top=False)
                for handler in stmt.handlers:
                    caught = ast.unparse(handler.type) if handler.type is not None else "any exception"
                    checked = self._scan_returns(qual, handler.body, conds + [f"except {caught}"], top=False) or checked
                checked = self._scan_returns(qual, stmt.orelse + stmt.finalbody, conds, top=False) or checked
                if checked:
                    return True
                continue
            if _has_check(stmt):
                return True
        return False


def _has_check(node: ast.AST) -> bool:
    """An assert, a raise, or a call that looks like a check (assert*, raises, ...)."""
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Assert, ast.Raise)):
            return True
        if isinstance(sub, ast.Call):
            func = sub.func
            text = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if CHECK_CALL.search(text):
                return True
    return False


RULE = RuntimeSkipRule()


def check(ctx: HookContext) -> list[Finding]:
    return check_context(RULE, ctx)


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    return run(argv, "forbid-runtime-skip", __doc__, RULE)


if __name__ == "__main__":
    raise SystemExit(main())
