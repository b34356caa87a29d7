"""Production code that knows it is being tested: one walk of a module, each node handed to the rule modules.

Each rule finds *occurrences* in one parsed production module, keyed by what
they are (code, enclosing scope, the source of the node) and never by line,
so the hook can drop those the base already had: only what a change adds or
alters is judged.  One module per class (docs/forbid-test-aware-code.md):

- OG961 ``runner``: asks whether a test runs (``PYTEST_CURRENT_TEST``, ``"pytest" in sys.modules``, ``sys.argv``)
- OG962 ``caller``: reads the caller (``inspect.stack()``, ``f_back``, ``sys._getframe(1)``, ``linecache``)
- OG963 ``exits``: ends the process or swallows the outcome (``os._exit``, excepthooks, ``atexit`` exits)
- OG964 ``patches``: patches the test machinery or the language (``unittest``, ``builtins``, ``sys.modules``)
- OG965 ``compare``: a comparison that cannot fail (``__eq__`` returning True, ``mock.ANY``)
- OG967 ``state``: recorded state, a call counter or flag that picks the result
- OG968 ``patches`` (``pytest_plugins`` in a production module; the start-up files: ``startup``, by path)
- OG969 ``dynamic``: dynamic code no rule can see through (``getattr(sys, name)``, ``eval``, ``exec``)

OG966 (special-cased test inputs) needs the base's tests: oracle_guard/analysis/testaware/cases.py.
The shared walk (scopes, entry points, where a finding goes) is ``walker``.
"""

from __future__ import annotations

import ast

from oracle_guard.analysis.pysource import Module
from oracle_guard.analysis.testaware import caller, compare, dynamic, exits, exprs, patches, runner
from oracle_guard.analysis.testaware import state as testaware_state
from oracle_guard.analysis.testaware.facts import PLUGIN, Facts, Occurrence
from oracle_guard.analysis.testaware.walker import Walker, is_main_guard, is_type_checking


class _Finder(Walker):
    def nested(self, inner: Module) -> list[Occurrence]:
        finder = _Finder(inner, self.facts)
        finder.entry_file = self.entry_file
        finder.visit(inner.tree)
        return finder.found

    def _mock(self, node: ast.AST, message: str) -> None:
        """A mock in production code; in a pytest plugin (a mocking plugin: pytest-mock) building them is the job."""
        self.add(node, "OG965", message, when=PLUGIN)

    # -- scopes ----------------------------------------------------------------------

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._function(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        cls = self.scopes[-1] if self.scopes and isinstance(self.scopes[-1], ast.ClassDef) else None
        if cls is not None:
            found = compare.dunder(cls, node, self.qualify)
            if not found and node.name in compare.NARROWING and not self.facts.raw:
                base = self.facts.base_class(".".join(s.name for s in self.scopes))
                narrower = compare.narrowed(cls, node, base) if base is not None else None
                found = [(node, narrower)] if narrower else []
            for where, message in found:
                self.add(where, "OG965", message, where)
        self.visit_scoped(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for where, message in compare.mock_bases(node, self.qualify):
            self._mock(where, message)
        self.visit_scoped(node)

    def visit_If(self, node: ast.If) -> None:
        if is_type_checking(node.test):
            for child in node.orelse:
                self.visit(child)
            return  # what only a type checker reads never runs
        if is_main_guard(node.test):
            self.visit(node.test)
            self.main_guard += 1
            for child in node.body:
                self.visit(child)
            self.main_guard -= 1
            for child in node.orelse:
                self.visit(child)
            return
        runner.probe(self, node.test, decision=True)
        self.generic_visit(node)

    # -- expressions -----------------------------------------------------------------

    def visit_Constant(self, node: ast.Constant) -> None:
        runner.runner_variable(self, node, node.value)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        runner.runner_variable(self, node, exprs.folded(node))  # `"PY" + "TEST_CURRENT_TEST"`
        self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        runner.runner_variable(self, node, exprs.folded(node))  # `f"PY{'TEST'}_CURRENT_TEST"`
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        runner.subscript(self, node)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        runner.compare(self, node)
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        runner.probe(self, node.test, decision=True)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        runner.probe(self, node.test, decision=True)
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None:
            runner.probe(self, node.value)
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        runner.dropped(self, node)
        runner.probe(self, node.value)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        runner.deleted(self, node)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if exits.attribute(self, node) or caller.attribute(self, node) or runner.attribute(self, node):
            pass
        elif self.qualify(node) in compare.ANY:
            self._mock(node, compare.ANY_MESSAGE)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and self.names.aliases.get(node.id) in compare.ANY:
            self._mock(node, compare.ANY_MESSAGE)
        patches.name(self, node)

    def visit_Raise(self, node: ast.Raise) -> None:
        exits.raised(self, node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = self.qualify(node.func)
        # The rules' names are disjoint: the first module that knows the callee judges it.
        if not (
            exits.call(self, node, name)
            or runner.call(self, node, name)
            or caller.call(self, node, name)
            or patches.call(self, node, name)
        ):
            built = compare.mock_built(name)
            if built:
                self._mock(node, built)
        dynamic.call(self, node, name)
        self.generic_visit(node)

    # -- assignments -----------------------------------------------------------------

    def visit_Assign(self, node: ast.Assign) -> None:
        runner.probe(self, node.value)
        for target in node.targets:
            patches.stored(self, target, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        patches.stored(self, node.target, node)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            patches.stored(self, node.target, node)
        self.generic_visit(node)


def occurrences(module: Module, facts: Facts) -> list[Occurrence]:
    """Every test-aware construct in MODULE (classes 1-5, 7, 8's pytest_plugins, 9)."""
    finder = _Finder(module, facts)
    finder.visit(module.tree)
    finder.found += testaware_state.toggles(module)
    seen: set[tuple[int, str]] = set()
    unique = []
    # One construct, one finding (`atexit.register(os._exit, 0)`): the one that counts everywhere first.
    for occurrence in sorted(finder.found, key=lambda o: o.when != ""):
        if (occurrence.line, occurrence.code) not in seen:
            seen.add((occurrence.line, occurrence.code))
            unique.append(occurrence)
    return unique


__all__ = ["Facts", "Occurrence", "occurrences"]
