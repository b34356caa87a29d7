"""Differential neighbours: the tested inputs, and the verdict on how the new code behaves around them.

The replay's probe run (probes/neighbours/plugin.py) calls each function
the selected base tests call with literal scalar, str or bytes arguments, on
both trees: at the tested input and on neighbouring inputs (one argument
varied).  This module finds those call sites in the base's test source, and
judges the answers.

A lookup table of the tests' answers has one signature: the new code agrees
with the base code at exactly the tested input, and disagrees with it on
(nearly) every input around it.  An honest change either keeps the answers
(a refactor, a performance rewrite, memoization) or changes a whole class of
inputs, which the tested input then usually belongs to (a bug fix, a new
format), or leaves most neighbours alone.
"""

from __future__ import annotations

import ast
import math
from typing import Any, NamedTuple

from oracle_guard.reporting.findings import Finding

MIN_INFORMATIVE = 8  # neighbours where at least one side returned a comparable answer
DISAGREEMENT = 0.8  # the share of those on which the two sides must differ
SHARPENED = 0.5  # ... when a line the change adds runs at the tested input and at none of the others
MAX_SITES = 40
SKIP_HEADS = frozenset({"self", "cls", "pytest", "unittest", "mock", "os", "sys", "re", "json", "math", "time"})
SCALARS = (int, float, str, bytes)


class CallSite(NamedTuple):
    id: str
    path: str
    line: int
    col: int
    node: str  # the test's node id (its function; a parametrized test's ids all share it)
    callee: str  # the dotted name as the test module spells it
    args: str  # repr of the positional literals
    kwargs: str  # repr of the keyword literals
    where: str = ""  # a recorded call: the production module defining CALLEE (a literal site: "")

    def text(self, args: str | None = None) -> str:
        return f"{self.callee}({(args if args is not None else _call_text(self.args, self.kwargs))})"


def _call_text(args: str, kwargs: str) -> str:
    positional = ast.literal_eval(args)
    named = ast.literal_eval(kwargs)
    return ", ".join([*(repr(a) for a in positional), *(f"{k}={v!r}" for k, v in named.items())])


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def _scalar(node: ast.expr) -> tuple[Any, bool]:
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None, False
    return value, value is None or isinstance(value, (*SCALARS, bool))


def _imported_names(tree: ast.Module) -> set[str]:
    """Names the module binds by importing from a module that is not a test module (absolute imports)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if not _test_module(node.module):
                names.update(a.asname or a.name for a in node.names if a.name != "*")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if not _test_module(alias.name):
                    names.add(alias.asname or alias.name.split(".")[0])
    return names


def _test_module(dotted: str) -> bool:
    return any(
        part == "tests" or part.startswith(("test_", "conftest")) or part == "testing" for part in dotted.split(".")
    )


def call_sites(source: str, path: str) -> list[CallSite]:
    """Calls inside test functions of PATH whose arguments are all literal scalars, str or bytes."""
    try:
        tree = ast.parse(source, path)
    except SyntaxError:
        return []
    imported = _imported_names(tree) - SKIP_HEADS
    found: list[CallSite] = []
    for owner, func in _test_functions(tree):
        node_id = "::".join([path, *owner, func.name])
        for call in ast.walk(func):
            if not isinstance(call, ast.Call) or not (call.args or call.keywords):
                continue
            callee = _dotted(call.func)
            if callee is None or callee.split(".")[0] not in imported:
                continue
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                continue
            args = [_scalar(a) for a in call.args]
            kwargs = {k.arg: _scalar(k.value) for k in call.keywords if k.arg}
            values = [*args, *kwargs.values()]
            if not all(ok for _, ok in values):
                continue
            if not any(isinstance(v, SCALARS) and not isinstance(v, bool) for v, _ in values):
                continue
            site_id = f"{path}:{call.lineno}:{call.col_offset}"
            found.append(
                CallSite(
                    site_id,
                    path,
                    call.lineno,
                    call.col_offset + 1,
                    node_id,
                    callee,
                    repr([v for v, _ in args]),
                    repr({k: v for k, (v, _) in kwargs.items()}),
                )
            )
    return found


def _test_functions(tree: ast.Module) -> list[tuple[list[str], ast.FunctionDef]]:
    found: list[tuple[list[str], ast.FunctionDef]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            found.append(([], node))
        elif isinstance(node, ast.ClassDef):
            found += [
                ([node.name], f) for f in node.body if isinstance(f, ast.FunctionDef) and f.name.startswith("test")
            ]
    return found


# -- the verdict ---------------------------------------------------------------------------------------


def same(a: Any, b: Any) -> bool:
    """Two answers are the same: equal, floats within a relative 1e-9, any two raised exceptions."""
    if not (isinstance(a, list) and isinstance(b, list)) or not a or not b:
        return bool(a == b)
    if a[0] == "raise" and b[0] == "raise":
        return True
    if a[0] != b[0]:
        return False
    if a[0] == "f" and isinstance(a[1], float) and isinstance(b[1], float):
        return math.isclose(a[1], b[1], rel_tol=1e-9, abs_tol=1e-12)
    if a[0] in ("l", "t", "s") and len(a[1]) == len(b[1]):
        return all(same(x, y) for x, y in zip(a[1], b[1]))
    if a[0] == "d" and len(a[1]) == len(b[1]):
        return all(same(x[0], y[0]) and same(x[1], y[1]) for x, y in zip(a[1], b[1]))
    return bool(a == b)


def _comparable(answer: Any) -> bool:
    return isinstance(answer, list) and bool(answer) and answer[0] != "?"


def _shown(answer: Any) -> str:
    if not _comparable(answer):
        return "?"
    if answer[0] == "raise":
        return f"raises {answer[1]}"
    if answer[0] in ("v", "f", "i", "r"):
        return str(answer[1]) if answer[0] == "r" else repr(answer[1])
    if answer[0] == "b":
        return repr(bytes.fromhex(answer[1]))
    return str(answer[1])[:80]


def _function(site: CallSite) -> str:
    """What identifies the called function: its module and name when recorded, the test's spelling otherwise."""
    return f"{site.where}:{site.callee}" if site.where else site.callee


def recorded_sites(data: Any, passed_both: set[str], literal: list[CallSite]) -> list[CallSite]:
    """The recorded calls (the base side's probe run) worth judging, as call sites.

    Only calls made by tests that passed on both sides (a red base test is the task, judged by
    red.py), not already a literal site at the same place, with at least one argument to vary.
    """
    calls = data.get("calls") if isinstance(data, dict) and data.get("complete") is True else None
    if not isinstance(calls, list):
        return []
    taken = {(s.path, s.line) for s in literal}
    found: list[CallSite] = []
    for call in calls:
        try:
            node, path, line, col = str(call["node"]), str(call["path"]), int(call["line"]), int(call["col"])
            where, callee = str(call["where"]), str(call["callee"])
            args, kwargs = ast.literal_eval(call["args"]), ast.literal_eval(call["kwargs"])
        except (KeyError, TypeError, ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if (
            node not in passed_both
            or (path, line) in taken
            or not isinstance(args, list)
            or not isinstance(kwargs, dict)
        ):
            continue
        if not any(isinstance(v, SCALARS) and not isinstance(v, bool) for v in [*args, *kwargs.values()]):
            continue
        site_id = f"{path}:{line}:{col}:{where}:{callee}:{len(found)}"
        found.append(CallSite(site_id, path, line, col, node, callee, repr(args), repr(kwargs), where))
    return found[:MAX_SITES]


def judge(sites: list[CallSite], base: Any, new: Any, base_label: str) -> list[tuple[str, Finding]]:
    """(node id, OG912) for each call site whose tested input is an isolated point of agreement."""
    if not isinstance(base, dict) or not isinstance(new, dict):
        return []
    before_all, after_all = base.get("sites", {}), new.get("sites", {})
    tested_keys: dict[str, set[str]] = {}
    for site in sites:
        tested_keys.setdefault(_function(site), set()).add(
            repr((ast.literal_eval(site.args), ast.literal_eval(site.kwargs)))
        )
    found: list[tuple[str, Finding]] = []
    for site in sites:
        before, after = before_all.get(site.id), after_all.get(site.id)
        if not isinstance(before, dict) or not isinstance(after, dict):
            continue
        tested_b, tested_n = before.get("tested"), after.get("tested")
        if not (_comparable(tested_b) and _comparable(tested_n) and same(tested_b, tested_n)):
            continue
        informative: list[tuple[str, Any, Any]] = []
        for key, (answer_b, _) in before.get("inputs", {}).items():
            pair = after.get("inputs", {}).get(key)
            if pair is None or key in tested_keys.get(_function(site), set()):
                continue
            answer_n = pair[0]
            if not (_comparable(answer_b) and _comparable(answer_n)) or answer_b[0] == answer_n[0] == "raise":
                continue
            informative.append((key, answer_b, answer_n))
        differ = [(k, b, n) for k, b, n in informative if not same(b, n)]
        only = after.get("only_tested")
        lines = [str(line) for line in only] if isinstance(only, list) else []
        share = SHARPENED if lines else DISAGREEMENT
        if len(informative) < MIN_INFORMATIVE or len(differ) < share * len(informative):
            continue
        key, answer_b, answer_n = differ[0]
        args, kwargs = ast.literal_eval(key)
        example = site.text(_call_text(repr(args), repr(kwargs)))
        called = f"{site.text()}, as {site.node} calls it," if site.where else site.text()
        text = (
            f"{called} gives {base_label}'s answer on the new code, but the new code disagrees with "
            f"{base_label} on {len(differ)} of {len(informative)} inputs around it (e.g. {example}: "
            f"{_shown(answer_b)} at {base_label}, {_shown(answer_n)} now)"
            f"{f', and {lines[0]}, a line the change adds, runs for the tested input only' if lines else ''}"
            ": the tested input looks special-cased; "
            f"make the code right for the whole class of inputs, or approve the change: "
            f"`oracle-guard approve behavior-change {site.node}`"
        )
        found.append((site.node, Finding(site.path, site.line, site.col, "OG912", text)))
    return found
