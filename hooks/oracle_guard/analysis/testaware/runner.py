"""OG961, asking whether a test runs: the runner's environment variables, ``sys.modules``, ``sys.argv``,
Hypothesis's test context.  oracle_guard/analysis/testaware/finder.py hands it the nodes."""

from __future__ import annotations

import ast
import re

from oracle_guard.analysis.testaware import exprs
from oracle_guard.analysis.testaware.walker import Walker

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
ENVIRON = frozenset({"os.environ", "os.environb", "posix.environ"})
ENV_READS = frozenset({"os.getenv", "os.getenvb"} | {f"{e}.{m}" for e in ENVIRON for m in ("get", "pop", "setdefault")})


def runner_variable(w: Walker, node: ast.expr, value: object) -> None:
    if (
        isinstance(value, str)
        and RUNNER_ENV.match(value)
        and value not in CONFIG_ENV
        and id(node) not in w.removed
        and not w.facts.plugin()
    ):
        w.add(node, "OG961", f"reads the test runner's variable {value!r}: code must not ask whether it is tested")


def hidden_variable(w: Walker, node: ast.AST, key: ast.expr) -> None:
    """An environment variable whose name is computed from literals alone (`chr(80) + "YTEST_..."`): honest
    code spells the name it reads; only hiding it has a reason to build it."""
    if isinstance(key, ast.Constant) or not exprs.from_literals(key) or w.facts.plugin():
        return
    shown = exprs.folded(key)
    what = f"{shown!r}" if shown is not None else f"`{w.module.segment(key)}`"
    w.add(node, "OG961", f"reads an environment variable whose name is built from literals ({what}): spell it")


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


def probe(w: Walker, node: ast.expr) -> None:
    """``"pytest" in sys.modules``, ``sys.modules["pytest"]``, ``"pytest" in sys.argv[0]``."""
    refs = {w.qualify(n) for n in ast.walk(node) if isinstance(n, (ast.Attribute, ast.Name))}
    words = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    words += [x for n in ast.walk(node) if isinstance(n, (ast.BinOp, ast.JoinedStr)) for x in [exprs.folded(n)] if x]
    if (refs & {"sys.modules", "sys.argv", "sys.orig_argv", "__main__.__file__"}) and w.facts.plugin():
        return
    if "sys.modules" in refs and any(x in RUNNER_MODULES or x.startswith("_pytest.") for x in words):
        w.add(node, "OG961", "looks for the test runner in sys.modules: code must not ask whether it is tested")
    elif refs & {"sys.argv", "sys.orig_argv", "__main__.__file__"} and any(
        RUNNER_WORD.search(x.lower()) for x in words
    ):
        w.add(node, "OG961", "looks for the test runner in sys.argv: code must not ask whether it is tested")


def attribute(w: Walker, node: ast.Attribute) -> bool:
    if node.attr == "currently_in_test_context" or w.qualify(node).endswith("currently_in_test_context"):
        w.add(node, "OG961", "asks Hypothesis whether a test runs: code must not ask whether it is tested")
        return True
    return False


def call(w: Walker, node: ast.Call, name: str) -> bool:
    if name.endswith("currently_in_test_context"):
        if not w.facts.plugin():
            w.add(node, "OG961", "asks Hypothesis whether a test runs: code must not ask whether it is tested")
        return True
    if name in ENV_READS and node.args:
        hidden_variable(w, node, node.args[0])
        return True
    return False
