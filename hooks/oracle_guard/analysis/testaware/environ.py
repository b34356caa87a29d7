"""OG966, a faked environment: production code that fills in what the tests read from outside.

``os.environ.setdefault("API_TOKEN", "...")`` at import, ``os.environ["HOST"] = ...``, ``os.environ.update``,
``os.putenv``: library code that writes the process environment supplies what a real deployment must
provide, and a test that reads the variable (or expects the value) passes on a machine where the real
configuration is missing.  A finding needs the base's tests to name the variable or spell the value; a
default the tests never mention (a log level, a locale for a child process) is configuration, not a cheat.
The canned-answer fallback (``except Exception: return TABLE[key]``) is judged with the learned tables in
oracle_guard/analysis/testaware/cases.py.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Callable

from oracle_guard.analysis.pysource import Module, statements
from oracle_guard.analysis.testaware.evidence import MISSING
from oracle_guard.analysis.testaware.facts import Occurrence, source
from oracle_guard.analysis.testaware.keyflow import Reader, constants, derive

Mentions = Callable[[list[str]], dict[str, str]]  # words -> the base test file that spells each one
_METHODS = frozenset({"setdefault", "putenv", "update"})
# A switch's value says nothing about what a test needs: every suite spells "true" somewhere.
_SWITCH_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "none", "null", "enabled", "disabled"})
_WRITERS = {"os.environ.setdefault": "sets a default for", "os.putenv": "sets", "os.environ.update": "sets"}


def _writes(module: Module, consts: dict[str, Any]) -> list[tuple[ast.AST, str, Any, str]]:
    """(node, variable, value or MISSING, verb) for each write of the process environment with a constant name.

    A write is a statement (`os.environ[k] = v`, `os.environ.setdefault(k, v)`, `x = os.environ.setdefault(...)`):
    only statements are visited, never every expression."""
    found: list[tuple[ast.AST, str, Any, str]] = []
    for stmt in statements(module.tree.body):
        if isinstance(stmt, (ast.Expr, ast.Assign)) and isinstance(stmt.value, ast.Call):
            found += _call_writes(stmt.value, module, consts)
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Subscript) and module.names.qualify(target.value) == "os.environ":
                    key = derive(target.slice, {}, None, consts)
                    if isinstance(key, str):
                        found.append((stmt, key, derive(stmt.value, {}, None, consts), "sets"))
    return found


def _call_writes(node: ast.Call, module: Module, consts: dict[str, Any]) -> list[tuple[ast.AST, str, Any, str]]:
    func = node.func
    # Resolving a name costs: only a method of the writers' names, or a bare name when the module imports putenv.
    if isinstance(func, ast.Attribute) and func.attr not in _METHODS:
        return []
    if isinstance(func, ast.Name) and b"putenv" not in module.source:
        return []
    name = module.names.qualify(func) or ""
    if name not in _WRITERS:
        return []
    if name == "os.environ.update":
        rows = derive(node.args[0], {}, None, consts) if node.args else {}
        pairs = list(rows.items()) if isinstance(rows, dict) else []
        pairs += [(k.arg, derive(k.value, {}, None, consts)) for k in node.keywords if k.arg]
    elif node.args:
        second = derive(node.args[1], {}, None, consts) if len(node.args) > 1 else MISSING
        pairs = [(derive(node.args[0], {}, None, consts), second)]
    else:
        pairs = []
    return [(node, k, v, _WRITERS[name]) for k, v in pairs if isinstance(k, str)]


# A test line that controls a variable itself (clears or sets it): that test needs nothing from the code.
_CONTROLS = re.compile(
    r"\b(?:delenv|setenv|putenv|unsetenv|notset)\b|^\s*del\s|\.pop\(|\.update\(|environ\[[^\]]*\]\s*=[^=]"
)


def needs(line: str) -> bool:
    """Whether a test LINE that spells a variable may need it from outside: it neither sets nor clears it
    (``monkeypatch.setenv``/``delenv``, ``notset``, ``del``, ``.pop``)."""
    return not _CONTROLS.search(line)


def _parameters_around(tree: ast.Module) -> dict[int, set[str]]:
    """For each node inside a function, the parameters of the innermost function around it."""
    around: dict[int, set[str]] = {}
    for func in ast.walk(tree):  # outer functions first: an inner one overwrites its own nodes
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = func.args
            names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
            names.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
            names -= {"self", "cls"}
            for node in ast.walk(func):
                if node is not func:
                    around[id(node)] = names
    return around


def _passes_through(node: ast.AST, given: dict[int, set[str]]) -> bool:
    """Whether the value NODE writes is computed from a parameter of the function it is in."""
    if isinstance(node, ast.Assign):
        values: list[ast.expr] = [node.value]
    elif isinstance(node, ast.Call):
        values = list(node.args[1:]) + [k.value for k in node.keywords]
        if node.args and isinstance(node.args[0], ast.Dict):  # os.environ.update({...})
            values += [v for v in node.args[0].values if v is not None]
    else:
        return False
    names = given.get(id(node), set())
    return bool(names) and any(isinstance(n, ast.Name) and n.id in names for value in values for n in ast.walk(value))


def faked_environment(module: Module, reader: Reader | None, mentions: Mentions) -> list[Occurrence]:
    """OG966 occurrences in MODULE; MENTIONS searches the base's tests only when the module writes the environment."""
    if b"environ" not in module.source and b"putenv" not in module.source:
        return []
    writes = _writes(module, constants(module, reader))
    if not writes:
        return []
    words = sorted({w for _, k, v, _ in writes for w in (k, v) if isinstance(w, str) and len(w) > 2})
    words = [w for w in words if w.lower() not in _SWITCH_WORDS]
    seen = mentions(words) if words else {}
    given = _parameters_around(module.tree)
    found = []
    for node, key, value, verb in writes:
        if _passes_through(node, given):
            continue  # a CLI option or a caller's value handed on: the code sets what it was given
        if key in seen:
            what = f"{verb} the environment variable {key}, which {seen[key]} names"
        elif isinstance(value, str) and value in seen and value.lower() not in _SWITCH_WORDS:
            what = f"{verb} the environment variable {key} to {value!r}, a value {seen[value]} spells"
        else:
            continue
        message = (
            f"{what}: the code fills in what the tests need from outside; a real run without that configuration "
            "still fails"
        )
        line, col = module.position(node)
        found.append(Occurrence(("OG966", "<environ>", source(node)), line, col, "OG966", message))
    return found
