"""What conftest and plugin code does to the gate and to outcomes (OG874-OG876).

Every statement of a conftest or a plugin module it loads, as facts keyed by
(code, function, statement) so the check can compare them with the base as a
multiset: options set from code, the plugin manager's ``unregister``, reports
and session status rewritten, hooks that replace pytest's own, process exits (also
one handed on to run later: ``atexit.register(os._exit, 0)``, analysis/deferred.py);
and the plugin modules a conftest loads.  Part of pytest_tamper.py's check.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterator
from typing import NamedTuple

from oracle_guard.analysis import deferred
from oracle_guard.analysis.pysource import Module
from oracle_guard.pytest_side.tamper.scan import GATE
from oracle_guard.repo.paths import folders_above

REPORT_ATTRS = {"outcome", "longrepr", "wasxfail", "passed", "failed", "skipped"}
SESSION_ATTRS = {"exitstatus", "testsfailed", "testscollected"}
CALL_ATTRS = {"runtest", "obj", "_obj", "function"}
# Options that change only output or speed: setting them from a conftest is not a finding.
HARMLESS_OPTIONS = {
    "verbose",
    "quiet",
    "tbstyle",
    "reportchars",
    "color",
    "code_highlight",
    "showlocals",
    "durations",
    "durations_min",
    "setupshow",
    "capture",
    "log_level",
    "log_cli_level",
    "log_format",
    "log_file",
    "numprocesses",
    "maxprocesses",
    "dist",
    "tx",
    "basetemp",
    "no_header",
    "fulltrace",
    "showcapture",
    "debug",
    "traceconfig",
    # rerun, regeneration and coverage switches set from code are OG860-OG862 (switches.py): one finding per cause
    "reruns",
    "retries",
    "force_flaky",
    "force_regen",
    "regen_all",
    "snapshot_update",
    "update_goldens",
    "inline_snapshot",
    "regtest_reset",
    "no_cov",
    "cov_fail_under",
}
EXITS = {
    "os.execv",
    "os.execve",
    "os.execvp",
    "os.execvpe",
    "os.execl",
    "os.execlp",
    "os.execle",
    "os.execlpe",
    "os._exit",
    "sys.exit",
    "exit",
    "quit",
    "os.kill",
    "os.killpg",
    "os.abort",
    "pytest.exit",
    "_pytest.outcomes.exit",
    "signal.raise_signal",
    "builtins.exit",
}
# Exits that end the process wherever they run, so handing one on (`atexit.register(os._exit, 0)`,
# `threading.Timer(1, os._exit, args=(0,))`) ends the run later with a status of the patch's choosing.
# A handed-on sys.exit or pytest.exit only raises: atexit and threads ignore it.
HANDED_ON_EXITS = frozenset(n for n in EXITS if n == "os._exit" or n.startswith("os.exec"))
# firstresult hooks whose plain implementation, by returning, replaces pytest's own.
REPLACING_HOOKS = {
    "pytest_runtest_protocol": "runs (or does not run) each test instead of pytest",
    "pytest_runtestloop": "runs (or does not run) the session's tests instead of pytest",
    "pytest_pyfunc_call": "calls (or does not call) each test function instead of pytest",
    "pytest_runtest_makereport": "builds its own reports",
    "pytest_collection": "collects (or does not collect) instead of pytest",
    "pytest_make_collect_report": "builds its own collection reports",
}
PASSING_STATUS = {"passed", "skipped", "xfailed", "xpassed", "deselected", ""}
# The gate's plugin and option names as pytest spells them (not ORACLE_GUARD_BASE, the static hooks'
# variable).  PYTEST_ADDOPTS and friends set from a conftest reach only nested runs (pytester), found on
# pytest's own testing/conftest.py: not this rule.
_GATE_TEXT = r"oracle_guard|oracle-guard"


# Bytes without any of these hold no fact code_facts() or plugin_names() could find.
_MIGHT_MATTER = (
    rb"pytest_|exit|outcome|longrepr|wasxfail|passed|failed|skipped|collected|runtest|obj|function|items|option|known_args"
    rb"|unregister|set_blocked|force_|SystemExit|KeyboardInterrupt|kill|abort|raise_signal|oracle|guard|PYTEST_|import_plugin|consider_pluginarg|setattr"
)


class Fact(NamedTuple):
    code: str
    key: tuple[str, str, str]  # (code, function, statement): compared as a multiset with the base
    node: ast.AST
    message: str


def _decorated_wrapper(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for decorator in func.decorator_list:
        if isinstance(decorator, ast.Call):
            for keyword in decorator.keywords:
                if keyword.arg in ("hookwrapper", "wrapper") and not (
                    isinstance(keyword.value, ast.Constant) and not keyword.value.value
                ):
                    return True
    return False


def _own_nodes(func: ast.AST) -> Iterator[ast.AST]:
    """Nodes of FUNC's body, not of functions or classes nested in it."""
    stack = list(ast.iter_child_nodes(func))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _attr_targets(node: ast.AST) -> Iterator[tuple[ast.expr, str]]:
    """(owner, attribute) of every attribute NODE assigns, setattr() included."""
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
        targets = [node.target]
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "setattr"
        and len(node.args) >= 2
    ):
        name = node.args[1]
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            yield node.args[0], name.value
        return
    while targets:
        target = targets.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            targets.extend(target.elts)
        elif isinstance(target, ast.Starred):
            targets.append(target.value)
        elif isinstance(target, ast.Attribute):
            yield target.value, target.attr


def _owner_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _statement_facts(module: Module, node: ast.AST, where: str) -> Iterator[tuple[str, str]]:
    """(code, message) for one node anywhere in a conftest or plugin."""
    for owner, attr in _attr_targets(node):
        owner_name = _owner_name(owner)
        if owner_name in ("self", "cls"):
            continue  # a helper class's own state, not a report or session of pytest's
        if attr in REPORT_ATTRS:
            yield "OG875", f"rewrites a report's `{attr}`"
        elif attr in SESSION_ATTRS:
            yield "OG875", f"writes `{owner_name}.{attr}`, which decides the session's exit status"
        elif attr in CALL_ATTRS:
            yield "OG875", f"replaces `{owner_name}.{attr}`, so the test itself may never run"
        elif attr == "items" and "session" in owner_name:
            yield "OG875", "replaces the session's collected items"
        elif (
            owner_name in ("option", "known_args_namespace") and attr not in HARMLESS_OPTIONS
        ) or attr == "known_args_namespace":
            yield "OG874", f"sets pytest's option `{attr}` from code, not from the command line"
        elif re.search(GATE, attr, re.I):
            yield "OG874", f"sets oracle-guard's `{attr}`"
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("unregister", "set_blocked"):
            yield (
                "OG874",
                f"calls `{func.attr}` on the plugin manager: a plugin (the gate among them) can be switched off",
            )
        elif isinstance(func, ast.Attribute) and func.attr in ("force_result", "force_exception"):
            yield "OG875", f"replaces a hook's result (`{func.attr}`)"
        name = module.names.qualify(func)
        if name in EXITS and not _fails_anyway(name, node):
            yield "OG876", f"ends the process (`{name}`): the run's exit status no longer comes from the tests"
        for exit_name, _, later in deferred.handed_on(node, module.names, HANDED_ON_EXITS):
            if not _fails_anyway(exit_name, ast.Call(ast.Name("_", ast.Load()), later, [])):
                yield (
                    "OG876",
                    f"hands `{exit_name}` to `{ast.unparse(func)}` to end the process later: "
                    "the run's exit status no longer comes from the tests",
                )
    elif isinstance(node, ast.Raise) and node.exc is not None:
        raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        name = module.names.qualify(raised) or ""
        if name in ("SystemExit", "KeyboardInterrupt", "builtins.SystemExit") and not (
            isinstance(node.exc, ast.Call) and _fails_anyway(name, node.exc)
        ):
            yield "OG876", f"raises `{ast.unparse(raised)}`: the run's exit status no longer comes from the tests"
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        names = [a.name for a in node.names] + (
            [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
        )
        touched = next((n for n in names if re.search(r"oracle_guard|^hooks\.pytest_(plugin|watch)\b", n)), None)
        if touched:
            yield "OG874", f"imports `{touched}`: code that reaches into the gate"
    elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and "oracle_guard" in node.attr:
        yield "OG874", f"reads oracle-guard's `{node.attr}`"
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and (gate := re.search(_GATE_TEXT, node.value)):
        yield "OG874", f"names {gate.group(0)!r}: code that reaches the gate or pytest's start-up options"


def _fails_anyway(name: str, call: ast.Call) -> bool:
    """An exit that can only fail the run: `pytest.exit("...")` (exit 2), `sys.exit(1)`, `sys.exit("message")`."""
    if name in ("os.kill", "os.killpg", "signal.raise_signal", "KeyboardInterrupt"):
        return False
    if name.endswith("pytest.exit") or name == "_pytest.outcomes.exit":
        code = next(
            (k.value for k in call.keywords if k.arg == "returncode"), call.args[1] if len(call.args) > 1 else None
        )
        return code is None or (isinstance(code, ast.Constant) and code.value not in (0, None, False))
    code = call.args[0] if call.args else None
    return isinstance(code, ast.Constant) and code.value not in (0, None, False, "")


def _hook_facts(func: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[tuple[ast.AST, str, str]]:
    """(node, code, message) for what a pytest hook implementation does to outcomes."""
    hook = func.name
    wrapper = _decorated_wrapper(func)
    own = list(_own_nodes(func))
    if wrapper:
        for node in own:
            if isinstance(node, ast.Try) and any(
                isinstance(n, (ast.Yield, ast.YieldFrom)) for s in node.body for n in ast.walk(s)
            ):
                for handler in node.handlers:
                    if not any(isinstance(n, ast.Raise) for s in handler.body for n in ast.walk(s)):
                        yield handler, "OG875", "swallows the exception of the hook it wraps"
    elif hook in REPLACING_HOOKS:
        for node in own:
            if (
                isinstance(node, ast.Return)
                and node.value is not None
                and not (isinstance(node.value, ast.Constant) and node.value.value is None)
            ):
                yield node, "OG875", f"returns a result, so it {REPLACING_HOOKS[hook]}"
    if hook == "pytest_report_teststatus":
        for node in own:
            if isinstance(node, ast.Return) and node.value is not None:
                value = node.value
                category = value.elts[0] if isinstance(value, ast.Tuple) and value.elts else value
                if isinstance(category, ast.Constant) and category.value is None:
                    continue
                if (
                    not (isinstance(category, ast.Constant) and isinstance(category.value, str))
                    or category.value in PASSING_STATUS
                ):
                    yield node, "OG875", "can show a failed test as passed or skipped"
    if hook in ("pytest_pycollect_makeitem", "pytest_collect_file", "pytest_collect_directory"):
        for node in own:
            if (
                isinstance(node, ast.Return)
                and isinstance(node.value, (ast.List, ast.Tuple, ast.Set))
                and not node.value.elts
            ):
                yield node, "OG875", "returns nothing for what it was asked to collect: tests vanish"


def code_facts(module: Module) -> list[Fact]:
    """Everything in a conftest or plugin that can switch the gate off or change outcomes."""
    try:
        return _code_facts(module)
    except RecursionError:  # nesting deeper than the analysis goes: a finding, not a traceback
        return [Fact("OG001", ("OG001", "", "nested"), module.tree, "is nested too deeply to check; simplify it")]


def _code_facts(module: Module) -> list[Fact]:
    facts: list[Fact] = []

    def add(code: str, node: ast.AST, where: str, message: str) -> None:
        statement = " ".join(ast.unparse(node).split()) if not isinstance(node, ast.ExceptHandler) else "except"
        facts.append(Fact(code, (code, where, statement[:200]), node, message))

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{where}.{child.name}" if where else child.name
                if child.name.startswith("pytest_"):
                    for hit, code, message in _hook_facts(child):
                        add(code, hit, name, message)
                visit(child, name)
                continue
            if isinstance(child, ast.ClassDef):
                visit(child, f"{where}.{child.name}" if where else child.name)
                continue
            for code, message in _statement_facts(module, child, where):
                add(code, child, where, message)
            visit(child, where)

    visit(module.tree, "")
    return facts


def plugin_names(module: Module) -> list[tuple[str, ast.AST]]:
    """Modules a conftest loads: ``pytest_plugins``, ``import_plugin("x")``, hooks imported from a module."""
    found: list[tuple[str, ast.AST]] = []
    for node in ast.walk(module.tree):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and any(a.name == "*" or a.name.startswith("pytest_") for a in node.names)
        ):
            found.append((node.module, node))  # pluggy registers every pytest_* name the conftest holds
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("import_plugin", "consider_pluginarg")
        ):
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                found.append((node.args[0].value, node))
    for node in module.tree.body:
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in targets):
                values = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple, ast.Set)) else [node.value]
                found += [(v.value, v) for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    return found


def _module_candidates(name: str, near: str) -> list[str]:
    """Repository paths a plugin module NAME may be imported from."""
    rel = name.replace(".", "/")
    folders = ["", "src", "tests", "testing", *folders_above(near)]
    out = []
    for base in dict.fromkeys(folders):
        for tail in (f"{rel}.py", f"{rel}/__init__.py"):
            out.append(posixpath.join(base, tail) if base else tail)
    return out
