"""Static half of the run-time gate's defence: nothing in the patch may switch it off.

The pytest plugin judges what really ran, so a patch that wants a red suite
green has two more doors: switch the plugin off or blind it (``-p
no:oracle_guard``, ``--oracle-guard-allow-skips``, ``PYTEST_DISABLE_PLUGIN_AUTOLOAD``,
another rootdir or ini file, a contract that stops being a file), or keep it
on and change the outcomes it sees (a conftest hook that rewrites
``report.outcome``, swallows the call, resets ``session.exitstatus`` or exits
the process).  This module finds both in the change, compared with the base:

- OG870 an option, environment variable or setting that switches the gate off
  or points it elsewhere (config files, CI, task runners, env files);
- OG871 a pytest option that changes what pytest reads (``--noconftest``,
  ``-c``/``--config-file``, ``--rootdir``, ``-o`` of a setting that decides
  what runs);
- OG872 a new pytest configuration file below the root, or a root file that
  now shadows the one the base used and drops its settings;
- OG873 the contract file turned into a directory, symlink or other non-file;
- OG874 conftest/plugin code that reaches the gate or pytest's options
  (``unregister``, ``set_blocked``, ``config.option.x = ...``, the gate's
  names, ``PYTEST_ADDOPTS``);
- OG875 conftest/plugin code that changes outcomes (``report.outcome = ...``,
  ``force_result``, a wrapper that swallows the exception, a plain
  ``pytest_pyfunc_call``/``pytest_runtest_protocol``/``pytest_runtestloop``
  that returns, ``pytest_report_teststatus`` that calls a result passed,
  ``pytest_pycollect_makeitem`` that returns nothing, ``session.exitstatus``/
  ``testsfailed`` written, ``item.runtest``/``item.obj`` replaced);
- OG876 a process exit in a conftest/plugin (``os._exit``, ``sys.exit``,
  ``pytest.exit``, ``raise SystemExit``, ``os.kill``), also one handed on to
  run later (``atexit.register(os._exit, 0)``, analysis/deferred.py).

Code already at the base (the same statement in the same function) passes:
an unrelated conftest edit, a new fixture, a hook that only adds markers or
reports.  Modules newly loaded through ``pytest_plugins`` or ``-p`` are judged
as wholly new.  Called from pytest_config.check; reads nothing unless a
scanned file, a conftest or the contract changed.
"""

from __future__ import annotations

import ast
import os
import posixpath
import re
import shlex
import stat
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Callable, NamedTuple, TypeVar

from oracle_guard.analysis import deferred
from oracle_guard.analysis.pysource import Module, SourceError
from oracle_guard.repo import changes, git
from oracle_guard.repo.paths import DEFAULT_CONTRACT
from oracle_guard.reporting.report import Finding, UsageError

_T = TypeVar("_T")

# Non-Python files whose text can set pytest options or its environment (and noxfile.py).
SCANNED_NAMES = {
    "pytest.ini",
    ".pytest.ini",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
    "pytest.toml",
    ".pytest.toml",
    "noxfile.py",
    "Makefile",
    "GNUmakefile",
    "makefile",
    "justfile",
    "Justfile",
    "Taskfile.yml",
    "Taskfile.yaml",
    ".envrc",
}
SCANNED_SUFFIXES = (
    ".mk",
    ".sh",
    ".bash",
    ".zsh",
    ".ps1",
    ".bat",
    ".cmd",
    ".yml",
    ".yaml",
    ".toml",
    ".cfg",
    ".ini",
    ".env",
    ".dockerfile",
)


def scanned(path: str) -> bool:
    """Set membership, not a regex: this runs for every changed path of every commit."""
    name = posixpath.basename(path)
    return (
        name in SCANNED_NAMES
        or name.endswith(SCANNED_SUFFIXES)
        or name.startswith(("Dockerfile", ".env"))
        or (path.startswith("scripts/") and path.count("/") == 1)
    )


# Settings pytest_config compares with the base whichever file holds them (OG852-OG856).
COMPARED_ELSEWHERE = {
    "testpaths",
    "python_files",
    "python_classes",
    "python_functions",
    "norecursedirs",
    "xfail_strict",
    "strict",
    "filterwarnings",
}
# What a shadowing file must carry over: where the gate is loaded and required, and what every test uses
# (found on pytest's history: an obsolete `rsyncdirs` left behind is not a finding).
SHADOW_KEYS = {"addopts", "required_plugins", "usefixtures", "empty_parameter_set_mark"}
CONFIG_NAMES = {
    "pytest.toml": None,
    ".pytest.toml": None,
    "pytest.ini": "pytest",
    ".pytest.ini": "pytest",
    "tox.ini": "pytest",
    "setup.cfg": "tool:pytest",
    "pyproject.toml": None,
}
NEXT = "remove it (only what the base already has is trusted; a maintainer lands such a change on the base branch)"

# -- option and token scan ------------------------------------------------------

GATE = r"oracle[-_.]?guard"
# Pattern strings, compiled through re's cache on first use: a commit that touches no scanned
# file compiles none of them.
_GATE_OFF = [
    ((r"--oracle-guard-allow-skips\b"), "`--oracle-guard-allow-skips` (new skips and xfails no longer fail the run)"),
    ((r"--oracle-guard-contract\b"), "`--oracle-guard-contract` (the gate reads another contract, or none)"),
    ((r"--oracle-guard-now\b"), "`--oracle-guard-now` (freeze expiry judged at a chosen time)"),
    ((r"(?i)no:\s*['\"]?[\w.-]*" + GATE), "`-p no:` of oracle-guard's plugin (the gate is not loaded)"),
    (
        (r"PYTEST_DISABLE_PLUGIN_AUTOLOAD['\"]?\s*[:=]"),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD (installed plugins, the gate among them, are not loaded)",
    ),
    (
        (r"--disable-plugin-autoload\b"),
        "`--disable-plugin-autoload` (installed plugins, the gate among them, are not loaded)",
    ),
]
# What switches the gate on where the contract alone would not (autoload off, no contract file).
_GATE_ON = [
    ((r"(?<![\w-])--oracle-guard(?![\w-])"), "`--oracle-guard`"),
    ((r"(?<!no:)(?<![\w.])oracle_guard_pytest\b"), "loading `oracle_guard_pytest`"),  # the module's name before 0.2
    ((r"(?<!no:)(?<![\w.])oracle_guard\.pytest_side\.entry\b"), "loading `oracle_guard.pytest_side.entry`"),
]
# Information modes: pytest exits 0 and runs nothing (`--co` is pytest_config's OG851/OG859).
# Only in addopts: `pytest --version` is a common honest CI step (`--setup-only`/`--setup-plan` are OG851/OG859).
NO_RUN_FLAGS = {"--fixtures", "--funcargs", "--fixtures-per-test", "--markers", "--help", "-h", "--version", "-V"}
# pytest's own settings that decide what runs, for `-o KEY=VALUE`.
JUDGED_INI = {
    "addopts",
    "testpaths",
    "python_files",
    "python_classes",
    "python_functions",
    "norecursedirs",
    "xfail_strict",
    "strict",
    "filterwarnings",
    "required_plugins",
    "usefixtures",
    "empty_parameter_set_mark",
    "pythonpath",
    "confcutdir",
    "collect_imported_tests",
    "consider_namespace_packages",
    "doctest_optionflags",
    "strict_xfail",
}
_PYTEST_WORD = r"(?<![\w-])(py\.test|pytest)(?![\w-])"
_ADDOPTS_ENV = r"PYTEST_ADDOPTS['\"]?\s*[:=]\s*(.*)$"
_PLUGINS_ENV = r"PYTEST_PLUGINS['\"]?\s*[:=]\s*['\"]?([\w.,]+)"


class Token(NamedTuple):
    key: tuple[str, str]  # (kind, detail): compared as a multiset with the base
    message: str
    path: str
    line: int


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=False)
    except ValueError:
        return text.split()


def pytest_arg_tokens(tokens: list[str], addopts: bool = False) -> Iterator[tuple[str, str, str]]:
    """(kind, detail, message) for pytest options that change what pytest reads or loads."""
    i = 0
    while i < len(tokens):
        token = tokens[i].strip("'\",")
        name, eq, value = token.partition("=")

        def arg(eq: str = eq, value: str = value) -> str:
            nonlocal i
            if eq:
                return value
            if i + 1 < len(tokens):
                i += 1
                return tokens[i].strip("'\",")
            return ""

        if token == "--noconftest":
            yield "noconftest", "", "`--noconftest` (conftest files, their fixtures and checks, are not loaded)"
        elif token in NO_RUN_FLAGS and addopts:
            yield "no-run", token, f"`{token}` (pytest reports and exits 0 without running a test)"
        elif name in ("-c", "--config-file", "--inifile") or (
            token.startswith("-c") and len(token) > 2 and not token.startswith("--")
        ):
            shown = arg() if name in ("-c", "--config-file", "--inifile") else token[2:]
            yield (
                "config-file",
                shown,
                f"`-c {shown}` (pytest reads another configuration file; the one the gate compares is ignored)",
            )
        elif name == "--rootdir":
            shown = arg()
            yield (
                "rootdir",
                shown,
                f"`--rootdir {shown}` (another rootdir: the contract and the configuration are looked up elsewhere)",
            )
        elif name in ("-o", "--override-ini") or (
            token.startswith("-o") and len(token) > 2 and not token.startswith("--")
        ):
            setting = arg() if name in ("-o", "--override-ini") else token[2:]
            key = setting.partition("=")[0].strip()
            if key in JUDGED_INI:
                yield "override", setting, f"`-o {setting}` (overrides the `{key}` setting the gate compares)"
        elif name == "-p" or (token.startswith("-p") and len(token) > 2 and not token.startswith("--")):
            plugin = arg() if name == "-p" else token[2:]
            if plugin and not plugin.startswith("no:"):
                yield "plugin-load", plugin, f"`-p {plugin}`"
        i += 1


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """Lines with shell `\\` continuations joined, numbered by their first line."""
    pending, start = "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        yield start, pending + line
        pending = ""
    if pending:
        yield start, pending


def text_tokens(path: str, text: str, addopts: list[str] | None) -> list[Token]:
    """Gate switches anywhere in TEXT, and pytest options on its pytest command lines."""
    found: list[Token] = []
    for number, line in _logical_lines(text):
        for pattern, message in _GATE_OFF:
            for _ in re.finditer(pattern, line):
                found.append(Token(("gate-off", message), message, path, number))
        for pattern, message in _GATE_ON:
            for _ in re.finditer(pattern, line):
                found.append(Token(("gate-on", message), message, path, number))
        args: list[str] = []
        word = re.search(_PYTEST_WORD, line)
        if word:
            args += _split(line[word.end() :])
        env = re.search(_ADDOPTS_ENV, line)
        if env:
            args += _split(env.group(1))
        plugins = re.search(_PLUGINS_ENV, line)
        if plugins:
            args += [f"-p{p}" for p in plugins.group(1).split(",") if p]
        for kind, detail, message in pytest_arg_tokens(args):
            found.append(Token((kind, detail), message, path, number))
    found += _runner_tokens(path, text, Counter(t.key for t in found))
    for kind, detail, message in pytest_arg_tokens(addopts or [], addopts=True):
        addopts_line = next((n for n, text_line in enumerate(text.splitlines(), 1) if "addopts" in text_line), 1)
        found.append(Token((kind, detail), f"{message} in addopts", path, addopts_line))
    return found


def _runner_tokens(path: str, text: str, seen: Counter[tuple[str, str]]) -> list[Token]:
    """What the CI/task-runner reader (oracle_guard/pytest_side/runners.py) finds beyond the line scan: folded YAML
    strings, GitLab script lists, `env:` blocks, nox `session.run(...)` arguments."""
    name = posixpath.basename(path)
    if name in CONFIG_NAMES and name != "tox.ini":
        return []  # pytest's own configuration: its addopts are read as such
    from oracle_guard.pytest_side import runners

    try:
        arguments = runners.read(path, text).pytest_arguments()
    except Exception:  # the line scan above already read the file; this pass only adds to it
        return []
    extra: list[Token] = []
    counts: Counter[tuple[str, str]] = Counter()
    for number, tokens in arguments:
        for kind, detail, message in pytest_arg_tokens(list(tokens)):
            counts[(kind, detail)] += 1
            if counts[(kind, detail)] > seen[(kind, detail)]:
                extra.append(Token((kind, detail), message, path, number))
    return extra


# -- conftest and plugin code ---------------------------------------------------

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
    folders = ["", "src", "tests", "testing"]
    folder = posixpath.dirname(near)
    while folder:
        folders.append(folder)
        folder = posixpath.dirname(folder)
    out = []
    for base in dict.fromkeys(folders):
        for tail in (f"{rel}.py", f"{rel}/__init__.py"):
            out.append(posixpath.join(base, tail) if base else tail)
    return out


# -- the contract file ------------------------------------------------------------


def _new_kind(change_set: changes.ChangeSet, path: str) -> str | None:
    """What PATH is on the new side: None (a regular file or absent) or what it is instead."""
    if change_set.target:
        out = git.run("ls-tree", "-z", change_set.target, "--", path, check=False)
        mode = out.split(b" ", 1)[0] if out else b""
        return {b"120000": "a symlink", b"040000": "a directory", b"160000": "a submodule"}.get(mode)
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    if stat.S_ISLNK(info.st_mode):
        return "a symlink"
    if stat.S_ISDIR(info.st_mode):
        return "a directory"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    return None


def _contract_findings(change_set: changes.ChangeSet, contracts: Iterable[str], blobs: _Blobs) -> list[Finding]:
    findings = []
    touched = set(change_set.changed_paths) | set(change_set.deleted)
    for path in dict.fromkeys(contracts):
        if not any(p == path or p.startswith(path + "/") for p in touched):
            continue
        kind = _new_kind(change_set, path)
        if kind is None and path in change_set.changed_paths:
            data = blobs.new([path])[path]
            kind = "empty" if data is not None and not data.strip() else None
        if kind:
            findings.append(
                Finding(
                    path,
                    1,
                    1,
                    "OG873",
                    f"the contract is now {kind}: the run-time gate cannot read it; restore the regular file as the base has it",
                )
            )
    return findings


# -- the whole check ----------------------------------------------------------------


_Keyed = TypeVar("_Keyed", Token, Fact)


def _multiset_new(base: Iterable[tuple[str, ...]], new: Iterable[_Keyed]) -> list[_Keyed]:
    """Items of NEW whose key is not (as often) in BASE."""
    known = Counter(base)
    out: list[_Keyed] = []
    for item in new:
        if known[item.key]:
            known[item.key] -= 1
        else:
            out.append(item)
    return out


def _lenient(read: Callable[[str, bytes], _T], path: str, data: bytes) -> _T | None:
    """A config file below the root that is not valid INI/TOML is test data, not pytest's configuration
    (pytest reads only the rootdir's chain); at the root pytest_config refuses it."""
    try:
        return read(path, data)
    except UsageError:
        if "/" in path:
            return None
        raise


class _Blobs:
    """Both sides' bytes, each path read once: one `git cat-file` per side, not one per question."""

    def __init__(
        self, change_set: changes.ChangeSet, new: dict[str, bytes | None] | None, base: dict[str, bytes | None] | None
    ) -> None:
        self.change_set = change_set
        self._new: dict[str, bytes | None] = dict(new or {})
        self._base: dict[str, bytes | None] = dict(base or {})

    def new(self, paths: list[str]) -> dict[str, bytes | None]:
        missing = [p for p in paths if p and p not in self._new]
        if missing:
            self._new.update(self.change_set.read_new(missing))
        return {p: self._new.get(p) for p in paths if p}

    def base(self, paths: list[str]) -> dict[str, bytes | None]:
        missing = [p for p in paths if p and p not in self._base]
        if missing:
            self._base.update(self.change_set.read_base(missing))
        return {p: self._base.get(p) for p in paths if p}


def check(
    change_set: changes.ChangeSet,
    addopts_of: Callable[[str, bytes], list[str] | None],
    config_settings: Callable[[str, bytes], dict[str, list[str]] | None],
    new_read: dict[str, bytes | None] | None = None,
    base_read: dict[str, bytes | None] | None = None,
) -> list[Finding]:
    """Gate switches, tampering code and broken contracts in the change, compared with the base.

    ADDOPTS_OF(path, data) gives a config file's addopts (None: no pytest
    section); CONFIG_SETTINGS(path, data) all its pytest settings.  NEW_READ
    and BASE_READ are blobs the caller has read already (base ones by base path).
    """
    touched = list(change_set.changed_paths)
    gone = list(change_set.deleted)
    scanned_new = [p for p in touched if scanned(p)]
    scanned_old = [change_set.old_path(p) or "" for p in scanned_new] + [p for p in gone if scanned(p)]
    conftests = [p for p in touched if posixpath.basename(p) == "conftest.py"]
    old_conftests = [change_set.old_path(p) or "" for p in conftests] + [
        p for p in gone if posixpath.basename(p) == "conftest.py"
    ]
    blobs = _Blobs(change_set, new_read, base_read)
    findings = _contract_findings(change_set, [DEFAULT_CONTRACT], blobs)
    if not (scanned_new or scanned_old or conftests or old_conftests):
        return findings
    root_configs = list(CONFIG_NAMES) if any(p in CONFIG_NAMES for p in scanned_new + scanned_old) else []
    new = blobs.new(scanned_new + conftests + root_configs)
    base = blobs.base([p for p in scanned_old + old_conftests + root_configs if p])

    def tokens_of(blobs: dict[str, bytes | None], paths: list[str]) -> list[Token]:
        out: list[Token] = []
        for path in paths:
            data = blobs.get(path)
            if data is None:
                continue
            addopts = _lenient(addopts_of, path, data) if posixpath.basename(path) in CONFIG_NAMES else None
            out += text_tokens(path, data.decode("utf-8", "replace"), addopts)
        return out

    new_tokens, base_tokens = tokens_of(new, scanned_new), tokens_of(base, [p for p in scanned_old if p])
    for token in _multiset_new([t.key for t in base_tokens], new_tokens):
        kind = token.key[0]
        if kind == "gate-off":
            findings.append(
                Finding(
                    token.path,
                    token.line,
                    1,
                    "OG870",
                    f"new {token.message}: the run-time gate is switched off or blinded; {NEXT}",
                )
            )
        elif kind in ("noconftest", "no-run", "config-file", "rootdir", "override"):
            findings.append(Finding(token.path, token.line, 1, "OG871", f"new {token.message}; {NEXT}"))
    for token in _multiset_new([t.key for t in new_tokens], base_tokens):
        if token.key[0] == "gate-on":
            where = next(
                (f"{change_set.old_path(p) or p}" for p in scanned_new if (change_set.old_path(p) or "") == token.path),
                token.path,
            )
            findings.append(
                Finding(
                    where,
                    1,
                    1,
                    "OG870",
                    f"lost {token.message} (was {token.path}:{token.line}): the run-time gate may no longer be switched on; restore it",
                )
            )
    findings += _config_files(change_set, blobs, scanned_new, config_settings)

    # Conftests, and plugin modules they or the command lines load.
    base_loads = {t.key[1] for t in base_tokens if t.key[0] == "plugin-load"}
    new_loads = {t.key[1]: t.path for t in new_tokens if t.key[0] == "plugin-load"}
    modules: dict[str, Module] = {}
    base_modules: dict[str, Module] = {}
    for path in conftests:
        data = new.get(path)
        if data is None or not re.search(_MIGHT_MATTER, data):
            continue  # a conftest of fixtures only: nothing to parse
        try:
            modules[path] = Module.from_source(path, data)
        except SourceError:
            continue  # pytest_config reports it (OG001)
        for name, _ in plugin_names(modules[path]):
            new_loads.setdefault(name, path)
    new_facts = [(m, f) for m in modules.values() for f in code_facts(m)]
    judged = set(modules)
    if not (new_facts or new_loads):
        return findings  # the base is read only when the new side has something to compare
    for path in old_conftests:
        data = base.get(path) if path else None
        if data is None or not re.search(_MIGHT_MATTER, data):
            continue
        try:
            base_modules[path] = Module.from_source(path, data)
        except SourceError:
            continue
        base_loads.update(name for name, _ in plugin_names(base_modules[path]))
    findings += _loaded_modules(change_set, blobs, new_loads, base_loads, modules, base_modules)
    new_facts += [(m, f) for path, m in modules.items() if path not in judged for f in code_facts(m)]
    base_facts = [f.key for m in base_modules.values() for f in code_facts(m)]
    known = Counter(base_facts)
    for module, fact in new_facts:
        if known[fact.key]:
            known[fact.key] -= 1
            continue
        where = f" in `{fact.key[1]}`" if fact.key[1] else ""
        findings.append(module.finding(fact.node, fact.code, f"new code{where} {fact.message}; {NEXT}"))
    return findings


def _loaded_modules(
    change_set: changes.ChangeSet,
    reader: _Blobs,
    new_loads: dict[str, str],
    base_loads: set[str],
    modules: dict[str, Module],
    base_modules: dict[str, Module],
) -> list[Finding]:
    """Plugin modules of the repository that the change loads: new ones are judged as wholly new,
    edited ones that the base loaded too against their base version."""
    findings: list[Finding] = []
    candidates = {name: _module_candidates(name, near) for name, near in new_loads.items()}
    if not candidates:
        return findings
    blobs = reader.new([p for paths in candidates.values() for p in paths])
    for name, paths in candidates.items():
        path = next((p for p in paths if blobs.get(p) is not None), None)
        if path is None or path in modules:
            continue  # an installed plugin, or a conftest judged anyway
        if name in base_loads and not change_set.is_changed(path):
            continue  # loaded at the base as it is
        try:
            modules[path] = Module.from_source(path, blobs[path])  # type: ignore[arg-type]  # PATH has bytes (above)
        except SourceError as exc:
            findings.append(exc.finding(path))
            continue
        old = change_set.old_path(path)
        if name in base_loads and old:
            data = reader.base([old])[old]
            try:
                if data is not None:
                    base_modules[old] = Module.from_source(old, data)
            except SourceError:
                pass
    return findings


def _config_files(
    change_set: changes.ChangeSet,
    blobs: _Blobs,
    paths: list[str],
    settings_of: Callable[[str, bytes], dict[str, list[str]] | None],
) -> list[Finding]:
    """New pytest configuration below the root, or a root file that shadows the base's choice."""
    findings = []
    contract_at_base = blobs.base([DEFAULT_CONTRACT])[DEFAULT_CONTRACT] is not None
    for path in paths:
        name = posixpath.basename(path)
        if name not in CONFIG_NAMES or "/" not in path or not contract_at_base:
            continue  # without a contract there is no gate for a subfolder's rootdir to hide (pytest's testing/plugins_integration)
        data = blobs.new([path])[path]
        old_path = change_set.old_path(path)
        old = blobs.base([old_path])[old_path] if old_path else None
        if data is None or _lenient(settings_of, path, data) is None:
            continue
        if old is None or _lenient(settings_of, path, old) is None:
            findings.append(
                Finding(
                    path,
                    1,
                    1,
                    "OG872",
                    f"new pytest configuration in {posixpath.dirname(path)}/: pytest run on tests there makes it the rootdir, ignores the root configuration and does not find the contract; move its settings to the root configuration, or {NEXT}",
                )
            )
    root_new = [
        "pytest.toml",
        ".pytest.toml",
        "pytest.ini",
        ".pytest.ini",
        "pyproject.toml",
        "tox.ini",
        "setup.cfg",
    ]  # pytest's order
    if not any(p in paths or p in change_set.deleted for p in root_new):
        return findings
    new_all = blobs.new(root_new)
    base_all = blobs.base(root_new)

    def picked(blobs: dict[str, bytes | None]) -> tuple[str, dict[str, list[str]]] | None:
        for p in root_new:
            data = blobs.get(p)
            if data is None:
                continue
            found = settings_of(p, data)
            if found is not None or p in ("pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml"):
                return p, found or {}
        return None

    was, now = picked(base_all), picked(new_all)
    if was and now and was[0] != now[0]:
        # Lost: a value of the old file that the new one does not hold (more addopts is fine).
        lost = sorted(k for k, v in was[1].items() if not set(v) <= set(now[1].get(k, [])) and k in SHADOW_KEYS)
        if lost:
            findings.append(
                Finding(
                    now[0],
                    1,
                    1,
                    "OG872",
                    f"pytest now reads {now[0]} instead of {was[0]}, and {', '.join(lost)} from {was[0]} no longer apply; move every setting over, or {NEXT}",
                )
            )
    return findings
