"""What the test side sets for the whole run: the marks a test switch in production code reads.

A conftest that sets ``os.environ["CALC_ENV"] = "test"`` or ``sys._called_from_test = True`` at import,
in an autouse fixture or in a start-up hook (``pytest_configure``, ``pytest_sessionstart``), and the
pytest configuration's ``env`` (pytest-env) or tox's ``setenv``, make that name true exactly while tests
run: production code that branches on it asks whether it is tested, whatever the name says.  A value one
test sets for itself (``monkeypatch.setenv`` in a plain test or fixture) is a test of configuration, not this.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from oracle_guard.analysis.pysource import Module, SourceError

START_HOOKS = frozenset({"pytest_configure", "pytest_sessionstart", "pytest_load_initial_conftests"})
ENV_SETTERS = frozenset({"os.environ.setdefault", "os.environ.update", "os.putenv", "os.environ.__setitem__"})
# `env =` (pytest-env) or `setenv =` (tox), then `NAME=value` lines or list items; `D:`/`R:` flags of pytest-env.
_ENV_KEY = re.compile(r"^\s*(?:set)?env\s*=\s*(.*)$")
_ASSIGNED = re.compile(r"""(?:^|["'\s,\[])(?:[DR]:)*([A-Za-z_][A-Za-z0-9_]*)\s*=""")


def of_files(files: Iterable[tuple[str, bytes]]) -> frozenset[str]:
    found: set[str] = set()
    for path, data in files:
        if path.endswith(".py"):
            found |= _python(path, data)
        else:
            found |= _config(data.decode("utf-8", "replace"))
    return frozenset(found)


def _config(text: str) -> set[str]:
    found: set[str] = set()
    collecting = False
    for line in text.splitlines():
        match = _ENV_KEY.match(line)
        if match:
            collecting = True
            found.update(_ASSIGNED.findall(match.group(1)))
        elif collecting and line[:1] in (" ", "\t") and line.strip():
            found.update(_ASSIGNED.findall(line))
        else:
            collecting = False
    return {f"env:{name}" for name in found}


def _python(path: str, data: bytes) -> set[str]:
    if not re.search(rb"environ|setenv|putenv|sys\.|builtins|setattr", data):
        return set()
    try:
        module = Module.from_source(path, data)
    except (SourceError, RecursionError):
        return set()
    found: set[str] = set()
    for node in _whole_run(module.tree):
        found |= _sets(module, node)
    return found


def _whole_run(tree: ast.Module) -> Iterable[ast.AST]:
    """Nodes that run for every test: module level, autouse fixtures and start-up hooks (not plain tests)."""
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name in START_HOOKS or any(_autouse(d) for d in node.decorator_list):
                stack.extend(node.body)
            continue
        if isinstance(node, ast.ClassDef):
            continue
        yield node
        stack.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, (ast.stmt, ast.expr)))


def _autouse(decorator: ast.expr) -> bool:
    return isinstance(decorator, ast.Call) and any(
        k.arg == "autouse" and not (isinstance(k.value, ast.Constant) and not k.value.value) for k in decorator.keywords
    )


def _sets(module: Module, node: ast.AST) -> set[str]:
    found: set[str] = set()
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    for target in targets:
        if isinstance(target, ast.Subscript) and module.names.qualify(target.value) == "os.environ":
            found |= _spelled("env", target.slice)
        elif isinstance(target, ast.Attribute) and module.names.qualify(target.value) in ("sys", "builtins"):
            found.add(f"{module.names.qualify(target.value)}:{target.attr}")
    if isinstance(node, ast.Call):
        name = module.names.qualify(node.func) or ""
        if (name in ENV_SETTERS or name.endswith(".setenv")) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Dict):
                for key in first.keys:
                    found |= _spelled("env", key)
            else:
                found |= _spelled("env", first)
        if name == "os.environ.update":
            found.update(f"env:{k.arg}" for k in node.keywords if k.arg)
        if name == "setattr" and len(node.args) >= 2 and module.names.qualify(node.args[0]) in ("sys", "builtins"):
            found |= _spelled(module.names.qualify(node.args[0]) or "", node.args[1])
    return found


def _spelled(kind: str, node: ast.expr | None) -> set[str]:
    return {f"{kind}:{node.value}"} if isinstance(node, ast.Constant) and isinstance(node.value, str) else set()
