"""The walk the static rules share: scopes, entry points, where a finding goes, which lines to visit.

oracle_guard/analysis/testaware/finder.py builds on it and hands each node to the rule modules
(runner, caller, exits, patches, compare, dynamic); they read the walk's state, never walk themselves.
"""

from __future__ import annotations

import ast
import re
from typing import Union

from oracle_guard.analysis.pysource import Module, PrunedVisitor
from oracle_guard.analysis.sourcetext import hot_lines
from oracle_guard.analysis.testaware import exprs
from oracle_guard.analysis.testaware.facts import PLUGIN, Facts, Occurrence, source

Scope = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef]

MACHINERY = ("unittest", "pytest", "_pytest", "hypothesis", "builtins", "__builtins__", "nose")
RIGGED = ("random", "time", "datetime")  # rigged RNG, frozen clock
SENSITIVE = frozenset(
    {"sys", "os", "builtins", "__builtins__", "inspect", "traceback", "atexit", "signal", "threading", "gc"}
    | set(MACHINERY)
    | set(RIGGED)
)
# What a pytest plugin does by its job and is not judged for there (asked only on a hit): reading frames,
# code no rule can see through. Its hooks that decide outcomes are judged instead (the hook's OG963).
PLUGIN_JOBS = frozenset({"OG962", "OG969"})
ENTRY_NAME = re.compile(r"(^|_)(main|cli)(_|$)")

# Words on a line where a rule can match; a statement whose lines hold none is never walked.
HOT_WORDS = tuple(
    w.encode()
    for w in (
        "PYTEST_ pytest unittest hypothesis currently_in_test_context modules argv inspect traceback linecache "
        "_getframe f_back f_locals f_globals f_code f_lineno tb_frame _exit exit quit SystemExit atexit excepthook "
        "unraisablehook breakpointhook signal settrace setprofile setattr delattr getattr hasattr builtins "
        "AssertionError meta_path path_hooks random time datetime __eq__ __ne__ __lt__ __le__ __gt__ __ge__ "
        "__hash__ __bool__ __len__ __contains__ __instancecheck__ __subclasscheck__ Mock ANY eval exec "
        "import_module __import__ pytest_plugins TestCase environ getenv getcwd cwd exists isfile isdir listdir "
        "scandir glob sys._"
    ).split()
)
INTERESTING_ROOTS = SENSITIVE | {"unittest", "mock", "weakref", "posix", "importlib", "linecache"}


def hot_words(module: Module) -> list[bytes]:
    """HOT_WORDS and every local name bound to one of the modules the rules look at (``import sys as _s``)."""
    words = list(HOT_WORDS)
    for local, target in module.names.aliases.items():
        if local != target and target.split(".")[0] in INTERESTING_ROOTS:
            words.append(local.encode())
    for node in module.tree.body:  # `TESTING = os.environ.get(...)`: a line branching on TESTING is read too
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if any(
                (isinstance(n, ast.Attribute) and n.attr in ("environ", "getenv"))
                or (isinstance(n, ast.Name) and n.id in ("sys", "builtins"))
                for n in ast.walk(node.value)
            ):
                words.append(node.targets[0].id.encode())
    return words


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def is_main_guard(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
        isinstance(s, ast.Constant) and s.value == "__main__" for s in sides
    )


class Walker(PrunedVisitor):
    """The state of one walk over a production module, and the findings so far."""

    def __init__(self, module: Module, facts: Facts) -> None:
        self.module, self.names, self.facts = module, module.names, facts
        self.hot = hot_lines(module.source, hot_words(module))
        self.scopes: list[Scope] = []
        self.main_guard = 0
        self.found: list[Occurrence] = []
        self.removed: set[int] = set()  # keys of a variable removed, never read (`del env["PYTEST_X"]`)
        self._locals: dict[int, set[str]] = {}
        self._module_reads: dict[int, set[int]] = {}
        self.live: dict[int, bool] = {}  # caller.live_frames, per function
        self.value_reads: set[str] | None = None  # runner: marks read as values
        self._values: dict[str, ast.expr] | None = None
        # A module with a `__main__` guard is a program: ending its own process is its job.
        self.entry_file = module.path.rpartition("/")[2] == "__main__.py" or any(
            isinstance(n, ast.If) and is_main_guard(n.test) for n in module.tree.body
        )

    def nested(self, inner: Module) -> list[Occurrence]:
        """What the rules find in code this module runs from a string (the finder walks it)."""
        raise NotImplementedError

    def add(
        self, node: ast.AST, code: str, message: str, key_node: ast.AST | None = None, key: str = "", when: str = ""
    ) -> None:
        if code == "OG962" and id(node) in self.module_name_reads():
            return
        if code in PLUGIN_JOBS:
            when = PLUGIN  # a pytest plugin reads frames and computes names by its job (pytest-mock: `inspect.stack()`)
        line, col = self.module.position(node)
        scope = ".".join(s.name for s in self.scopes) or "<module>"
        if self.main_guard:
            scope += " <__main__>"  # runs only as a program: out from under the guard it runs at import
        if key:  # one per file and kind: a module that already evaluates code may do it once more
            self.found.append(Occurrence((code, "<file>", key), line, col, code, message, when))
            return
        self.found.append(Occurrence((code, scope, source(key_node or node)), line, col, code, message, when))

    def qualify(self, node: ast.AST) -> str:
        return self.names.qualify(node) or ""

    @property
    def import_time(self) -> bool:
        return not any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) for s in self.scopes)

    @property
    def in_entry_point(self) -> bool:
        if self.facts.raw:
            return False
        if self.entry_file or self.main_guard or self.facts.script:
            return True
        functions = [s.name for s in self.scopes if not isinstance(s, ast.ClassDef)]
        return any(ENTRY_NAME.search(n) for n in functions) or any(n in self.facts.entry_functions() for n in functions)

    def innermost_function(self) -> ast.AST:
        functions = [s for s in self.scopes if not isinstance(s, ast.ClassDef)]
        return functions[-1] if functions else self.module.tree

    def bound_locally(self, ident: str) -> bool:
        """Whether IDENT is a parameter or an assigned name of an enclosing function."""
        for scope in self.scopes:
            if isinstance(scope, ast.ClassDef):
                continue
            if id(scope) not in self._locals:
                args = scope.args
                names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
                names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
                names |= {n.id for n in ast.walk(scope) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                self._locals[id(scope)] = names
            if ident in self._locals[id(scope)]:
                return True
        return False

    def module_name_reads(self) -> set[int]:
        """Frame reads whose value only becomes a class's ``__module__`` (``Sentinel.__module__ =
        sys._getframe(1).f_globals.get('__name__')``, as ``collections.namedtuple`` does for pickling)."""
        scope = self.innermost_function()
        if id(scope) not in self._module_reads:
            self._module_reads[id(scope)] = exprs.module_name_reads(scope)
        return self._module_reads[id(scope)]

    def module_values(self) -> dict[str, ast.expr]:
        """Names bound once at module level, with their value (``TESTING = os.environ.get(...)``)."""
        if self._values is None:
            seen: dict[str, list[ast.expr]] = {}
            for node in self.module.tree.body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    seen.setdefault(node.targets[0].id, []).append(node.value)
            self._values = {name: values[0] for name, values in seen.items() if len(values) == 1}
        return self._values

    def visit_scoped(self, node: Scope) -> None:
        self.scopes.append(node)
        self.generic_visit(node)
        self.scopes.pop()
