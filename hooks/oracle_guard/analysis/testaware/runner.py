"""OG961, asking whether a test runs: the runner's environment variables, ``sys.modules``, ``sys.argv``,
Hypothesis's test context.  oracle_guard/analysis/testaware/finder.py hands it the nodes."""

from __future__ import annotations

import ast
import builtins
import re
import sys

from oracle_guard.analysis.testaware import exprs
from oracle_guard.analysis.testaware.facts import MARKS, PLUGIN, Occurrence
from oracle_guard.analysis.testaware.walker import Walker

# Set by a running test process and by nothing else: reading one asks whether a test runs, whatever the code
# does with it. Any other name (`PYTEST_ADDOPTS`, a plugin's own `PYTEST_MOCK_USE_STANDALONE`, `CALC_TESTING`) is
# a setting, unless the project's test side sets it for the whole run (Facts.test_marks): then it is a probe too.
RUNNER_SET = frozenset(
    {
        "PYTEST_CURRENT_TEST",
        "PYTEST_VERSION",
        "PYTEST_XDIST_WORKER",
        "PYTEST_XDIST_WORKER_COUNT",
        "PYTEST_XDIST_TESTRUNUID",
    }
)
# Matched against the lowered word (re.I costs ~4x the compile, paid by every commit's process).
RUNNER_WORD = re.compile(r"(^|[^a-z])(_?pytest|py\.test|unittest|nose2?|hypothesis)([^a-z]|$)")
RUNNER_MODULES = frozenset({"pytest", "_pytest", "unittest", "hypothesis", "nose", "nose2", "py.test"})
# What a test run's modules, paths and folders are called: `test_calc`, `tests.test_calc`, `calc_test`,
# `conftest`, `tests/`, `test_calc.py`; a prefix tested with startswith (`"test"`, `"test_"`). A bare `"test"`
# looked up in sys.argv is Django's `manage.py test`, a command: not this.
# (Patterns, compiled by `re`'s cache on first use: a commit whose code asks nothing of them never pays.)
TEST_NAME = r"^(tests?|testing)([./\\]|$)|(^|[./\\])(test_|conftest\b)|_tests?(\.py)?$|^test_?$"
TEST_PATH = r"(^|[/\\])(tests?|testing)([/\\]|$)|(^|[/\\])(test_[^/\\]*|conftest)\.py$|^pytest-of-"
# What a read of a variable or a sys attribute starts with (a branch on a module-level name is read through it).
MARKED_ROOTS = ("os.environ", "os.getenv", "posix.environ", "sys", "builtins", "getattr", "hasattr")
ARGV = frozenset({"sys.argv", "sys.orig_argv", "__main__", "__main__.__file__", "__main__.__spec__"})
CWD = frozenset({"os.getcwd", "os.getcwdb", "pathlib.Path.cwd", "os.curdir"})
FILE_TESTS = frozenset(
    {"os.path.exists", "os.path.isfile", "os.path.isdir", "os.path.lexists", "os.listdir", "os.scandir", "glob.glob"}
    | {"pathlib.Path", "pathlib.PurePath", "os.access", "os.stat"}
)
ENVIRON = frozenset({"os.environ", "os.environb", "posix.environ"})
ENV_READS = frozenset({"os.getenv", "os.getenvb"} | {f"{e}.{m}" for e in ENVIRON for m in ("get", "pop", "setdefault")})


def runner_variable(w: Walker, node: ast.expr, value: object) -> None:
    if isinstance(value, str) and value in RUNNER_SET and id(node) not in w.removed:
        message = f"reads the test runner's variable {value!r}: code must not ask whether it is tested"
        w.add(node, "OG961", message, when=PLUGIN)


def hidden_variable(w: Walker, node: ast.AST, key: ast.expr) -> None:
    """An environment variable whose name is computed from literals alone (`chr(80) + "YTEST_..."`): honest
    code spells the name it reads; only hiding it has a reason to build it."""
    if isinstance(key, ast.Constant) or not exprs.from_literals(key):
        return
    shown = exprs.folded(key)
    what = f"{shown!r}" if shown is not None else f"`{w.module.segment(key)}`"
    message = f"reads an environment variable whose name is built from literals ({what}): spell it"
    w.add(node, "OG961", message, when=PLUGIN)


def subscript(w: Walker, node: ast.Subscript) -> None:
    if w.qualify(node.value) in ENVIRON:
        hidden_variable(w, node, node.slice)


def compare(w: Walker, node: ast.Compare) -> None:
    for op, right in zip(node.ops, node.comparators):
        if isinstance(op, (ast.In, ast.NotIn)) and w.qualify(right) in ENVIRON:
            hidden_variable(w, node, node.left)


def dropped(w: Walker, node: ast.Expr) -> None:
    value = node.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "pop":
        # `env.pop("PYTEST_CURRENT_TEST", None)` as a statement: the value is dropped, nothing is asked
        w.removed.update(id(a) for a in value.args[:1] if isinstance(a, ast.Constant))


def deleted(w: Walker, node: ast.Delete) -> None:
    w.removed.update(
        id(t.slice) for t in node.targets if isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant)
    )


def probe(w: Walker, node: ast.expr, decision: bool = False) -> None:
    """A condition on whether tests run, by what it observes: the runner in ``sys.modules`` or ``sys.argv``, the
    project's test modules in ``sys.modules``, the test folders on disk or as the working directory, a variable
    or ``sys`` attribute the test side sets for the whole run.  DECISION: NODE is a branch's test (an ``if``,
    ``while`` or conditional expression), not a value stored or returned."""
    nodes = list(ast.walk(node))
    refs = {w.qualify(n) for n in nodes if isinstance(n, (ast.Attribute, ast.Name))}
    words = [n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    words += [x for n in nodes if isinstance(n, (ast.BinOp, ast.JoinedStr)) for x in [exprs.folded(n)] if x]
    # Asking pytest about the run is a plugin's job (Facts.plugin, read only on a hit); asking about the tests is not.
    if "sys.modules" in refs and any(x in RUNNER_MODULES or x.startswith("_pytest.") for x in words):
        message = "looks for the test runner in sys.modules: code must not ask whether it is tested"
        w.add(node, "OG961", message, when=PLUGIN)
    elif "sys.modules" in refs and any(_test_name(w, x) for x in words):
        w.add(node, "OG961", "looks for the tests' modules in sys.modules: code must not ask whether it is tested")
    elif refs & ARGV and any(RUNNER_WORD.search(x.lower()) for x in words):
        message = "looks for the test runner in sys.argv: code must not ask whether it is tested"
        w.add(node, "OG961", message, when=PLUGIN)
    elif refs & ARGV and any(x != "test" and _test_name(w, x) for x in words):
        w.add(node, "OG961", "looks for the tests in sys.argv: code must not ask whether it is tested")
    elif refs & (CWD | FILE_TESTS) and any(re.search(TEST_PATH, x) or x in ("tests", "testing") for x in words):
        w.add(node, "OG961", "looks for the test folders on disk: code must not ask whether it is tested")
    elif decision or any(r.startswith(MARKED_ROOTS) for r in refs):
        _marked(w, node, nodes, decision)


def _test_name(w: Walker, word: str) -> bool:
    """A test module's or folder's name, not one of the project's own packages (`testfixtures`)."""
    if not re.search(TEST_NAME, word):
        return False
    own = w.module.path.removeprefix("src/").split("/")[0].removesuffix(".py")
    return word.split(".")[0] != own


def _marked(w: Walker, node: ast.expr, nodes: list[ast.AST], decision: bool) -> None:
    """A variable or ``sys`` attribute that the test side sets for the whole run, read as a truth value."""
    if decision:  # `TESTING = os.environ.get("CALC_ENV")` at module level, then `if TESTING:`
        for name in [n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]:
            value = w.module_values().get(name)
            if value is not None and not w.bound_locally(name):
                nodes = nodes + list(ast.walk(value))
    reads = {r: n for n in nodes for r in [_mark_read(w, n)] if r}
    if not reads:
        return
    if not decision and not any(isinstance(n, (ast.Compare, ast.BoolOp, ast.UnaryOp)) for n in nodes):
        if not (isinstance(node, ast.Call) and w.qualify(node.func) in ("bool", "hasattr")):
            return  # a value read (a path, a host): configuration the tests point somewhere, not a switch
    switches = sorted(mark for mark in reads if mark not in _value_reads(w) and mark[4:] not in RUNNER_SET)
    if switches:  # the hook reads the test side (Facts.test_marks) only if the change adds this condition
        message = "branches on {what}, which the test side sets for every test: a test switch"
        w.add(node, "OG961", message, when=MARKS + "|".join(switches))


def switch_message(occurrence: Occurrence, marks: frozenset[str]) -> str | None:
    """The message of a MARKS occurrence whose name the test side sets, else None (a setting)."""
    for mark in occurrence.when.removeprefix(MARKS).split("|"):
        if mark in marks:
            kind, _, name = mark.partition(":")
            what = f"the variable {name!r}" if kind == "env" else f"`{kind}.{name}`"
            return occurrence.message.format(what=what)
    return None


# What another interpreter, platform, build or packager puts on sys and builtins (`hasattr(sys, "pypy_version_info")`,
# PyInstaller's `sys.frozen`, IPython's `__IPYTHON__`, Python 2's names): nothing a test side sets.
ELSEWHERE = frozenset(
    "pypy_version_info getwindowsversion winver dllhandle frozen _MEIPASS ps1 ps2 last_type last_value "
    "last_traceback last_exc gettotalrefcount getobjects _is_gil_enabled setdlopenflags getdlopenflags abiflags "
    "_emscripten_info getandroidapilevel tracebacklimit exitfunc subversion maxint setcheckinterval real_prefix "
    "_jit monitoring _enablelegacywindowsfsencoding __IPYTHON__ __pypy__ unicode long basestring xrange "
    "raw_input reduce file execfile unichr buffer cmp apply intern coerce".split()
)


def _native(owner: str, name: str) -> bool:
    """An attribute sys or builtins have somewhere (`sys.version_info`, `sys.pypy_version_info`): nothing a
    test side sets, so no test side is read for it."""
    return name in ELSEWHERE or hasattr(sys if owner == "sys" else builtins, name)


def _value_reads(w: Walker) -> set[str]:
    """Marks the module also reads as a value (``home = os.environ["CALC_HOME"]``): a setting the tests point
    somewhere, whose presence may be tested honestly (``if "CALC_HOME" in os.environ``)."""
    if w.value_reads is None:
        w.value_reads = set()
        truth: set[int] = set()
        for sub in ast.walk(w.module.tree):
            if isinstance(sub, (ast.If, ast.While, ast.IfExp, ast.Assert)):
                truth.add(id(sub.test))
            elif isinstance(sub, ast.Compare):
                truth.update(id(n) for n in [sub.left, *sub.comparators])
            elif isinstance(sub, ast.BoolOp):
                truth.update(id(n) for n in sub.values)
            elif isinstance(sub, ast.UnaryOp) and isinstance(sub.op, ast.Not):
                truth.add(id(sub.operand))
        loads: dict[str, list[int]] = {}
        for sub in ast.walk(w.module.tree):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                loads.setdefault(sub.id, []).append(id(sub))
        for name, value in w.module_values().items():  # `MODE = os.environ.get(...)`, then only `if MODE:`
            if loads.get(name) and all(use in truth for use in loads[name]):
                truth.add(id(value))
        for sub in ast.walk(w.module.tree):
            mark = _mark_read(w, sub) if isinstance(sub, (ast.Call, ast.Subscript)) else None
            if mark and id(sub) not in truth:
                w.value_reads.add(mark)
    return w.value_reads


def _mark_read(w: Walker, node: ast.AST) -> str | None:
    """``env:NAME`` for an environment read of a spelled name, ``sys:NAME`` for an attribute of sys or builtins."""
    key: ast.expr | None = None
    if isinstance(node, ast.Call):
        name = w.qualify(node.func)
        if name in ENV_READS and node.args:
            key = node.args[0]
        elif name in ("hasattr", "getattr") and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
            owner = w.qualify(node.args[0])
            value = node.args[1].value
            if owner in ("sys", "builtins") and isinstance(value, str) and not _native(owner, value):
                return f"{owner}:{value}"
    elif isinstance(node, ast.Subscript) and w.qualify(node.value) in ENVIRON:
        key = node.slice
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
        if w.qualify(node.comparators[0]) in ENVIRON:
            key = node.left
    elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        owner = w.qualify(node.value)
        if owner in ("sys", "builtins") and not _native(owner, node.attr):
            return f"{owner}:{node.attr}"
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return f"env:{key.value}"
    return None


def attribute(w: Walker, node: ast.Attribute) -> bool:
    if node.attr == "currently_in_test_context" or w.qualify(node).endswith("currently_in_test_context"):
        w.add(node, "OG961", "asks Hypothesis whether a test runs: code must not ask whether it is tested")
        return True
    return False


def call(w: Walker, node: ast.Call, name: str) -> bool:
    if name.endswith("currently_in_test_context"):
        message = "asks Hypothesis whether a test runs: code must not ask whether it is tested"
        w.add(node, "OG961", message, when=PLUGIN)
        return True
    if name in ENV_READS and node.args:
        hidden_variable(w, node, node.args[0])
        return True
    return False
