"""Production code that knows it is being tested: the static rules, one module at a time.

Each rule finds *occurrences* in one parsed production module, keyed by what
they are (code, enclosing scope, the source of the node) and never by line,
so the hook can drop those the base already had: only what a change adds or
alters is judged.  The classes (docs/forbid-test-aware-code.md):

- OG961 asks whether a test runs (``PYTEST_CURRENT_TEST``, ``"pytest" in sys.modules``, ``sys.argv``)
- OG962 reads the caller (``inspect.stack()``, ``f_back``, ``sys._getframe(1)``, ``linecache``)
- OG963 ends the process or swallows the outcome (``os._exit``, excepthooks, ``atexit`` exits)
- OG964 patches the test machinery or the language (``unittest``, ``builtins``, ``sys.modules``)
- OG965 a comparison that cannot fail (``__eq__`` returning True, ``mock.ANY``)
- OG967 recorded state: a call counter or flag that picks the result
- OG968 ``pytest_plugins`` in a production module (the start-up files are judged by path)
- OG969 dynamic code no rule can see through (``getattr(sys, name)``, ``eval``, ``exec``)

OG966 (special-cased test inputs) needs the base's tests: oracle_guard/analysis/testaware/cases.py.
"""

from __future__ import annotations

import ast
import re
from typing import Union

from oracle_guard.analysis.pysource import Module, PrunedVisitor, SourceError
from oracle_guard.analysis.sourcetext import hot_lines
from oracle_guard.analysis.testaware import compare as testaware_compare
from oracle_guard.analysis.testaware import exprs
from oracle_guard.analysis.testaware import state as testaware_state
from oracle_guard.analysis.testaware.facts import Facts, Occurrence, source

Scope = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef]


RUNNER_ENV = re.compile(r"^_?PYTEST_[A-Z_]+$")
# Set by the user, never by a running pytest: reading one says nothing about whether a test runs
# (tools that build a pytest command line or a child's environment read them).
CONFIG_ENV = frozenset(
    {
        "PYTEST_ADDOPTS",
        "PYTEST_PLUGINS",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
        "PYTEST_DEBUG",
        "PYTEST_DEBUG_TEMPROOT",
        "PYTEST_THEME",
        "PYTEST_THEME_MODE",
    }
)
# Matched against the lowered word (re.I costs ~4x the compile, paid by every commit's process).
RUNNER_WORD = re.compile(r"(^|[^a-z])(_?pytest|py\.test|unittest|nose2?|hypothesis)([^a-z]|$)")
RUNNER_MODULES = frozenset({"pytest", "_pytest", "unittest", "hypothesis", "nose", "nose2", "py.test"})
MACHINERY = ("unittest", "pytest", "_pytest", "hypothesis", "builtins", "__builtins__", "nose")
RIGGED = ("random", "time", "datetime")  # rigged RNG, frozen clock
HOOK_SLOTS = frozenset({"sys.excepthook", "threading.excepthook", "sys.unraisablehook", "sys.breakpointhook"})
IMPORT_TIME_CALLS = frozenset({"signal.signal", "sys.settrace", "sys.setprofile", "threading.settrace"})
EXITS = exprs.EXITS
STACK_CALLS = frozenset(
    {
        "inspect.stack",
        "inspect.getouterframes",
        "traceback.extract_stack",
        "traceback.walk_stack",
        "traceback.format_stack",
        "linecache.getline",
        "linecache.getlines",
        "inspect.getframeinfo",
    }
)
LIVE_FRAMES = frozenset(
    {"inspect.currentframe", "sys._getframe", "inspect.stack", "inspect.getouterframes", "traceback.extract_stack"}
    | {"traceback.walk_stack", "traceback.format_stack", "traceback.print_stack"}
)
FRAME_ATTRS = exprs.FRAME_ATTRS
SENSITIVE = frozenset(
    {"sys", "os", "builtins", "__builtins__", "inspect", "traceback", "atexit", "signal", "threading", "gc"}
    | set(MACHINERY)
    | set(RIGGED)
)
MOCKS = frozenset(
    f"{root}.{name}"
    for root in ("unittest.mock", "mock")
    for name in ("Mock", "MagicMock", "NonCallableMock", "NonCallableMagicMock", "AsyncMock", "PropertyMock", "ANY")
)
ENVIRON = frozenset({"os.environ", "os.environb", "posix.environ"})
ENV_READS = frozenset({"os.getenv", "os.getenvb"} | {f"{e}.{m}" for e in ENVIRON for m in ("get", "pop", "setdefault")})
ENTRY_NAME = re.compile(r"(^|_)(main|cli)(_|$)")


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _is_main_guard(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
        isinstance(s, ast.Constant) and s.value == "__main__" for s in sides
    )


# Words on a line where a rule above can match; a statement whose lines hold none is never walked.
HOT_WORDS = tuple(
    w.encode()
    for w in (
        "PYTEST_ pytest unittest hypothesis currently_in_test_context modules argv inspect traceback linecache "
        "_getframe f_back f_locals f_globals f_code f_lineno tb_frame _exit exit quit SystemExit atexit excepthook "
        "unraisablehook breakpointhook signal settrace setprofile setattr delattr getattr hasattr builtins "
        "AssertionError meta_path path_hooks random time datetime __eq__ __ne__ __lt__ __le__ __gt__ __ge__ "
        "__hash__ __bool__ __len__ __contains__ __instancecheck__ __subclasscheck__ Mock ANY eval exec "
        "import_module __import__ pytest_plugins TestCase environ getenv"
    ).split()
)
INTERESTING_ROOTS = SENSITIVE | {"unittest", "mock", "weakref", "posix", "importlib", "linecache"}


def hot_words(module: Module) -> list[bytes]:
    """HOT_WORDS and every local name bound to one of the modules the rules look at (``import sys as _s``)."""
    words = list(HOT_WORDS)
    for local, target in module.names.aliases.items():
        if local != target and target.split(".")[0] in INTERESTING_ROOTS:
            words.append(local.encode())
    return words


class _Finder(PrunedVisitor):
    def __init__(self, module: Module, facts: Facts) -> None:
        self.module, self.names, self.facts = module, module.names, facts
        self.hot = hot_lines(module.source, hot_words(module))
        self.scopes: list[Scope] = []
        self.main_guard = 0
        self.found: list[Occurrence] = []
        self.removed: set[int] = set()  # keys of a variable removed, never read (`del env["PYTEST_X"]`)
        self._locals: dict[int, set[str]] = {}
        self._module_reads: dict[int, set[int]] = {}
        self._live: dict[int, bool] = {}
        # A module with a `__main__` guard is a program: ending its own process is its job.
        self.entry_file = module.path.rpartition("/")[2] == "__main__.py" or any(
            isinstance(n, ast.If) and _is_main_guard(n.test) for n in module.tree.body
        )

    # -- bookkeeping -----------------------------------------------------------------

    def add(self, node: ast.AST, code: str, message: str, key_node: ast.AST | None = None, key: str = "") -> None:
        if code == "OG962" and id(node) in self.module_name_reads():
            return
        line, col = self.module.position(node)
        scope = ".".join(s.name for s in self.scopes) or "<module>"
        if self.main_guard:
            scope += " <__main__>"  # runs only as a program: out from under the guard it runs at import
        if key:  # one per file and kind: a module that already evaluates code may do it once more
            self.found.append(Occurrence((code, "<file>", key), line, col, code, message))
            return
        self.found.append(Occurrence((code, scope, source(key_node or node)), line, col, code, message))

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

    def _innermost_function(self) -> ast.AST:
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
        scope = self._innermost_function()
        if id(scope) not in self._module_reads:
            self._module_reads[id(scope)] = exprs.module_name_reads(scope)
        return self._module_reads[id(scope)]

    def live_frames(self) -> bool:
        """Whether the enclosing function takes a live frame (its own stack, not an exception's traceback).

        A traceback formatter reads `f_code` and source lines of the frames an exception carries: honest.
        Reading the running stack (`inspect.currentframe()`, `sys._getframe()`, `inspect.stack()`, `.f_back`)
        is how code finds its caller.
        """
        functions = [s for s in self.scopes if not isinstance(s, ast.ClassDef)]
        scope: ast.AST = functions[-1] if functions else self.module.tree
        if id(scope) not in self._live:
            self._live[id(scope)] = any(
                (isinstance(n, ast.Attribute) and n.attr == "f_back")
                or (isinstance(n, ast.Call) and self.qualify(n.func) in LIVE_FRAMES)
                for n in ast.walk(scope)
            )
        return self._live[id(scope)]

    def visit_scoped(self, node: Scope) -> None:
        self.scopes.append(node)
        self.generic_visit(node)
        self.scopes.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._function(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        cls = self.scopes[-1] if self.scopes and isinstance(self.scopes[-1], ast.ClassDef) else None
        if cls is not None:
            for where, message in testaware_compare.dunder(cls, node, self.qualify):
                self.add(where, "OG965", message, where)
        self.visit_scoped(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            name = self.qualify(base)
            if name in MOCKS:
                self.add(base, "OG965", f"class {node.name} subclasses {name}: it compares equal to anything")
        self.visit_scoped(node)

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            for child in node.orelse:
                self.visit(child)
            return  # what only a type checker reads never runs
        if _is_main_guard(node.test):
            self.visit(node.test)
            self.main_guard += 1
            for child in node.body:
                self.visit(child)
            self.main_guard -= 1
            for child in node.orelse:
                self.visit(child)
            return
        self._runner_probe(node.test)
        self.generic_visit(node)

    # -- class 1, 2, 3, 4, 9: calls and names ------------------------------------------

    def visit_Constant(self, node: ast.Constant) -> None:
        self._runner_variable(node, node.value)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        self._runner_variable(node, exprs.folded(node))  # `"PY" + "TEST_CURRENT_TEST"`
        self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        self._runner_variable(node, exprs.folded(node))  # `f"PY{'TEST'}_CURRENT_TEST"`
        self.generic_visit(node)

    def _runner_variable(self, node: ast.expr, value: object) -> None:
        if (
            isinstance(value, str)
            and RUNNER_ENV.match(value)
            and value not in CONFIG_ENV
            and id(node) not in self.removed
            and not self.facts.plugin()
        ):
            self.add(
                node, "OG961", f"reads the test runner's variable {value!r}: code must not ask whether it is tested"
            )

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if self.qualify(node.value) in ENVIRON:
            self._hidden_variable(node, node.slice)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.In, ast.NotIn)) and self.qualify(right) in ENVIRON:
                self._hidden_variable(node, node.left)
        self.generic_visit(node)

    def _hidden_variable(self, node: ast.AST, key: ast.expr) -> None:
        """An environment variable whose name is computed from literals alone (`chr(80) + "YTEST_..."`): honest
        code spells the name it reads; only hiding it has a reason to build it."""
        if isinstance(key, ast.Constant) or not exprs.from_literals(key) or self.facts.plugin():
            return
        shown = exprs.folded(key)
        what = f"{shown!r}" if shown is not None else f"`{self.module.segment(key)}`"
        self.add(node, "OG961", f"reads an environment variable whose name is built from literals ({what}): spell it")

    def visit_While(self, node: ast.While) -> None:
        self._runner_probe(node.test)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._runner_probe(node.test)
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None:
            self._runner_probe(node.value)
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        value = node.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "pop":
            # `env.pop("PYTEST_CURRENT_TEST", None)` as a statement: the value is dropped, nothing is asked
            self.removed.update(id(a) for a in value.args[:1] if isinstance(a, ast.Constant))
        self._runner_probe(node.value)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        self.removed.update(
            id(t.slice) for t in node.targets if isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant)
        )
        self.generic_visit(node)

    def _runner_probe(self, node: ast.expr) -> None:
        """``"pytest" in sys.modules``, ``sys.modules["pytest"]``, ``"pytest" in sys.argv[0]``."""
        refs = {self.qualify(n) for n in ast.walk(node) if isinstance(n, (ast.Attribute, ast.Name))}
        words = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        words += [
            w for n in ast.walk(node) if isinstance(n, (ast.BinOp, ast.JoinedStr)) for w in [exprs.folded(n)] if w
        ]
        if (refs & {"sys.modules", "sys.argv", "sys.orig_argv", "__main__.__file__"}) and self.facts.plugin():
            return
        if "sys.modules" in refs and any(w in RUNNER_MODULES or w.startswith("_pytest.") for w in words):
            self.add(node, "OG961", "looks for the test runner in sys.modules: code must not ask whether it is tested")
        elif refs & {"sys.argv", "sys.orig_argv", "__main__.__file__"} and any(
            RUNNER_WORD.search(w.lower()) for w in words
        ):
            self.add(node, "OG961", "looks for the test runner in sys.argv: code must not ask whether it is tested")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr == "_exit" and self.qualify(node) in ("os._exit", "posix._exit"):
            self.add(node, "OG963", f"{self.qualify(node)} ends the process at once: library code must not end the run")
        elif node.attr in FRAME_ATTRS and isinstance(node.ctx, ast.Load) and self.live_frames():
            self.add(node, "OG962", f"reads another frame (`.{node.attr}`): code must not read its caller")
        elif node.attr == "currently_in_test_context" or self.qualify(node).endswith("currently_in_test_context"):
            self.add(node, "OG961", "asks Hypothesis whether a test runs: code must not ask whether it is tested")
        elif self.qualify(node) == "unittest.mock.ANY" or self.qualify(node) == "mock.ANY":
            self.add(node, "OG965", "production code uses mock.ANY, which compares equal to anything")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and self.names.aliases.get(node.id) in ("unittest.mock.ANY", "mock.ANY"):
            self.add(node, "OG965", "production code uses mock.ANY, which compares equal to anything")
        if isinstance(node.ctx, ast.Store) and node.id == "AssertionError":
            self.add(node, "OG964", "rebinds AssertionError: code must not change what a failed check raises")

    def visit_Raise(self, node: ast.Raise) -> None:
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if exc is not None and self.qualify(exc) in ("SystemExit", "builtins.SystemExit") and not self.in_entry_point:
            self.add(node, "OG963", "raises SystemExit outside an entry point: library code must not end the run")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = self.qualify(node.func)
        if name in EXITS and name != "SystemExit":
            if isinstance(node.func, ast.Name) and self.bound_locally(node.func.id):
                pass  # a parameter or local named `exit` (a callback), not the builtin
            elif name not in ("os._exit", "posix._exit") and not self.in_entry_point:  # os._exit: visit_Attribute
                self.add(node, "OG963", f"{name}() outside an entry point: library code must not end the run")
        elif name.endswith("currently_in_test_context") and not self.facts.plugin():
            self.add(node, "OG961", "asks Hypothesis whether a test runs: code must not ask whether it is tested")
        elif name in STACK_CALLS and (not name.startswith("linecache.") or self.live_frames()):
            self.add(node, "OG962", f"{name}() reads the call stack or a source line: code must not read its caller")
        elif name == "sys._getframe":
            depth = node.args[0] if node.args else None
            if depth is not None and not (isinstance(depth, ast.Constant) and depth.value == 0):
                self.add(node, "OG962", "sys._getframe(n) reads a caller's frame: code must not read its caller")
        elif name in ("inspect.getsource", "inspect.getsourcelines") and exprs.mentions_frames(node, self.names):
            self.add(node, "OG962", f"{name}() of a frame reads the caller's source")
        elif name == "atexit.register" and node.args and exprs.exits(node.args[0], self.names, self.module.tree):
            self.add(node, "OG963", "registers an exit at interpreter shutdown: it overrides the test run's status")
        elif name in IMPORT_TIME_CALLS and self.import_time and not self.in_entry_point:
            self.add(node, "OG963", f"{name}() at import time changes how the test process runs")
        elif name in ("setattr", "delattr") and node.args:
            self._patched(node, node.args[0], node.args[1] if len(node.args) > 1 else None)
        elif name in MOCKS and name.rpartition(".")[2] != "ANY":
            self.add(node, "OG965", f"production code builds a {name}, which accepts and equals anything")
        elif name.startswith(("sys.meta_path.", "sys.path_hooks.")):
            self.add(node, "OG964", f"{name}() installs an import hook: code must not change how tests import")
        elif name == "random.seed" and self.import_time:
            self.add(node, "OG964", "seeds the shared random generator at import: a rigged RNG")
        elif name.startswith("sys.modules.") and name.rpartition(".")[2] in ("update", "setdefault", "__setitem__"):
            self._module_entry(node, node.args[0] if node.args else None)
        elif name in ENV_READS and node.args:
            self._hidden_variable(node, node.args[0])
        self._unverifiable(node, name)
        self.generic_visit(node)

    def _unverifiable(self, node: ast.Call, name: str) -> None:
        args = node.args
        if name in ("getattr", "setattr", "delattr", "hasattr") and len(args) >= 2:
            target = self.qualify(args[0]).split(".")[0]
            if target in SENSITIVE and not isinstance(args[1], ast.Constant):
                message = f"{name}({target}, <computed name>) cannot be checked statically"
                self.add(node, "OG969", message, key=f"{name}:{target}")
        elif name in ("eval", "exec", "builtins.eval", "builtins.exec") and args:
            if isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
                self._spelled_code(node, name, args[0].value)
            else:  # reported once per file: a module that already generates code may do it once more
                self.add(node, "OG969", f"{name}() of computed code cannot be checked statically", key=name)
        elif name in ("importlib.import_module", "__import__", "builtins.__import__") and args:
            package = args[1] if len(args) > 1 else next((k.value for k in node.keywords if k.arg == "package"), None)
            own = package is not None and (
                exprs.relative_import(package, self.module.path) or exprs.own_package(package)
            )
            spelled = isinstance(args[0], ast.Constant) or self._loops_over_names(args[0])
            if not spelled and not exprs.relative_import(args[0], self.module.path) and not own:
                message = f"{name}() of a computed module name cannot be checked statically"
                self.add(node, "OG969", message, key=name)

    def _loops_over_names(self, arg: ast.expr) -> bool:
        """``for lib in ("chardet", "charset_normalizer"): import_module(lib)``: every name is spelled, and none is
        the test machinery's or a module the rules watch."""
        if not isinstance(arg, ast.Name):
            return False
        loops = [
            n
            for n in ast.walk(self._innermost_function())
            if isinstance(n, (ast.For, ast.comprehension)) and isinstance(n.target, ast.Name) and n.target.id == arg.id
        ]
        if len(loops) != 1 or not isinstance(loops[0].iter, (ast.Tuple, ast.List)):
            return False
        names = [e.value if isinstance(e, ast.Constant) else None for e in loops[0].iter.elts]
        return all(isinstance(n, str) and n.split(".")[0] not in SENSITIVE | RUNNER_MODULES for n in names)

    def _spelled_code(self, node: ast.Call, name: str, code: str) -> None:
        """exec("...") of code spelled in the file: judged like the file (code that does not parse never runs)."""
        try:
            inner = Module.from_source(self.module.path, code.encode("utf-8", "replace"))
        except (SourceError, RecursionError):
            return
        finder = _Finder(inner, self.facts)
        finder.entry_file = self.entry_file
        finder.visit(inner.tree)
        for occurrence in finder.found:
            self.add(node, occurrence.code, f"in the code {name}() runs: {occurrence.message}")

    # -- class 3 and 4: assignments --------------------------------------------------

    def visit_Assign(self, node: ast.Assign) -> None:
        self._runner_probe(node.value)
        for target in node.targets:
            self._stored(target, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._stored(node.target, node)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._stored(node.target, node)
        self.generic_visit(node)

    def _stored(self, target: ast.expr, node: ast.stmt) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._stored(element, node)
            return
        if isinstance(target, ast.Name) and target.id == "pytest_plugins" and self.import_time:
            self.add(node, "OG968", "pytest_plugins in production code loads plugins into the test run")
        if isinstance(target, ast.Attribute):
            self._patched(node, target.value, ast.Constant(target.attr))
        elif isinstance(target, ast.Subscript):
            owner = self.qualify(target.value)
            if owner == "sys.modules":
                self._module_entry(node, target.slice)
            elif owner in ("__builtins__", "builtins.__dict__", "vars(builtins)"):
                self.add(node, "OG964", "writes into builtins: code must not change the language the tests run in")

    def _patched(self, node: ast.AST, owner_node: ast.expr, attr: ast.expr | None) -> None:
        owner = self.qualify(owner_node)
        attr_name = attr.value if isinstance(attr, ast.Constant) and isinstance(attr.value, str) else None
        slot = f"{owner}.{attr_name}" if attr_name else ""
        if slot in HOOK_SLOTS:
            if not self.in_entry_point:
                self.add(node, "OG963", f"replaces {slot}: it decides what a failure does")
            return
        root = owner.split(".")[0]
        if root in MACHINERY or owner.startswith("unittest.") or slot == "builtins.AssertionError":
            self.add(node, "OG964", f"patches {slot or owner}: code must not change the test machinery or the language")
        elif root in RIGGED and self.import_time:
            self.add(node, "OG964", f"patches {slot or owner} at import: a rigged clock or RNG")
        elif owner in ("sys.meta_path", "sys.path_hooks") or slot in ("sys.meta_path", "sys.path_hooks"):
            self.add(node, "OG964", "installs an import hook: code must not change how tests import")

    def _module_entry(self, node: ast.AST, key: ast.expr | None) -> None:
        """``sys.modules[name] = ...``: a lazy module of its own is honest, a module the tests import is not."""
        own = self.module.path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            name = key.value
            if name.split(".")[0] in RUNNER_MODULES or name == "builtins":
                self.add(node, "OG964", f"replaces sys.modules[{name!r}]: the test machinery")
            elif not own.endswith(name) and not name.startswith(own.split(".")[-1]) and self.facts.tests_import(name):
                self.add(node, "OG964", f"replaces sys.modules[{name!r}], a module the base's tests import")
            return
        if key is None or any(isinstance(n, ast.Name) and n.id == "__name__" for n in ast.walk(key)):
            return  # its own module under another object (a lazy module)
        # Once per file: a module that already aliases modules under computed names (requests' packages.py
        # vendoring shim) may alias one more.
        message = "writes sys.modules under a computed name: cannot be checked statically"
        self.add(node, "OG969", message, key="sys.modules")


# -- entry ------------------------------------------------------------------------------


def occurrences(module: Module, facts: Facts) -> list[Occurrence]:
    """Every test-aware construct in MODULE (classes 1-5, 7, 8's pytest_plugins, 9)."""
    finder = _Finder(module, facts)
    finder.visit(module.tree)
    finder.found += testaware_state.toggles(module)
    seen: set[tuple[int, str]] = set()
    unique = []
    for occurrence in finder.found:  # one construct, one finding (`atexit.register(os._exit, 0)`)
        if (occurrence.line, occurrence.code) not in seen:
            seen.add((occurrence.line, occurrence.code))
            unique.append(occurrence)
    return unique


__all__ = ["Facts", "Occurrence", "occurrences"]
