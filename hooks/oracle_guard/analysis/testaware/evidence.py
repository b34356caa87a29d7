"""What the base's tests ask of production functions: each call's arguments and the answer it expects.

The evidence of OG966 (oracle_guard/analysis/testaware/cases.py): a call of a production function by its
name, with the values its arguments have where the test spells them (a literal, a name bound to one in the
test or its module, a row of a ``pytest.mark.parametrize`` table), and the value the test compares the result
with (``==``, ``is``, ``assertEqual``, ``assert f(x)``, a result variable compared later), or the line a
doctest example shows.
"""

from __future__ import annotations

import ast
import bisect
import itertools
from collections.abc import Iterable
from typing import Any, Callable, NamedTuple

from oracle_guard.analysis.pysource import Module, SourceError
from oracle_guard.analysis.sourcetext import hot_lines

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()
_MAX_ROWS = 200  # parametrize rows read per test: a product of tables is cut off, not enumerated
_SAME = frozenset({"list", "tuple"})  # what a test wraps a result in without changing it
_EXPECTING = {"assertEqual": 1, "assertEquals": 1, "assertIs": 1, "assertTrue": True, "assertFalse": False}


class SeenCall(NamedTuple):
    """One call of a production function in the base's tests: its argument values and the expected value."""

    args: tuple[Any, ...]  # positional values (MISSING where the test does not spell one)
    kwargs: tuple[tuple[str, Any], ...]
    expected: Any  # MISSING when the test does not compare the result with a value
    test: str = ""  # path::test, where the call is


def value(node: ast.AST | None, env: dict[str, Any], depth: int = 0) -> Any:
    """The value NODE spells: a literal, or a name ENV binds, built into tuples, lists, sets and dicts."""
    if node is None or depth > 30:
        return MISSING
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id, MISSING)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [value(e, env, depth + 1) for e in node.elts]
        if any(i is MISSING for i in items):
            return MISSING
        kind = {ast.Tuple: tuple, ast.List: list, ast.Set: frozenset}[type(node)]
        try:
            return kind(items)
        except TypeError:
            return MISSING
    if isinstance(node, ast.Dict):
        keys = [value(k, env, depth + 1) for k in node.keys]
        values = [value(v, env, depth + 1) for v in node.values]
        if any(i is MISSING for i in keys + values):
            return MISSING
        try:
            return dict(zip(keys, values))
        except TypeError:
            return MISSING
    if isinstance(node, ast.Call) and called_name(node) == "approx" and len(node.args) == 1 and not node.keywords:
        return value(node.args[0], env, depth + 1)  # pytest.approx(0.3): the value, to the table's precision
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = value(node.operand, env, depth + 1)
        if isinstance(operand, (int, float, complex)) and not isinstance(operand, bool):
            return -operand if isinstance(node.op, ast.USub) else operand
    return MISSING


def called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _constants(body: list[ast.stmt], env: dict[str, Any]) -> dict[str, Any]:
    """ENV plus the names BODY binds once to a value (`expected = 5`, `WORDS = ("a", "b")`)."""
    bound = dict(env)
    counts: dict[str, int] = {}
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            counts[name] = counts.get(name, 0) + 1
            found = value(stmt.value, bound)
            if found is not MISSING and counts[name] == 1:
                bound[name] = found
            else:
                bound.pop(name, None)
    return bound


def _parametrize(func: ast.FunctionDef | ast.AsyncFunctionDef, env: dict[str, Any]) -> list[dict[str, Any]]:
    """One binding per row of the function's parametrize tables (their product when stacked)."""
    tables: list[list[dict[str, Any]]] = []
    for decorator in func.decorator_list:
        if not (isinstance(decorator, ast.Call) and called_name(decorator) == "parametrize" and decorator.args):
            continue
        names = value(decorator.args[0], env)
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",") if n.strip()]
        rows_node = decorator.args[1] if len(decorator.args) > 1 else None
        if not isinstance(names, (list, tuple)):
            continue
        rows = []
        if not isinstance(rows_node, (ast.List, ast.Tuple)):  # a table bound to a name: CASES = [(2, 3, 5), ...]
            table = value(rows_node, env)
            for item in table if isinstance(table, (list, tuple)) else []:
                if len(names) == 1:
                    rows.append({names[0]: item})
                elif isinstance(item, (tuple, list)) and len(item) == len(names):
                    rows.append(dict(zip(names, item)))
        for item in rows_node.elts if isinstance(rows_node, (ast.List, ast.Tuple)) else []:
            if isinstance(item, ast.Call) and called_name(item) == "param":
                item = ast.Tuple(elts=list(item.args), ctx=ast.Load()) if len(names) > 1 else item.args[0]
            if len(names) == 1:
                rows.append({names[0]: value(item, env)})
            elif isinstance(item, (ast.Tuple, ast.List)) and len(item.elts) == len(names):
                rows.append({n: value(e, env) for n, e in zip(names, item.elts)})
        if rows:
            tables.append(rows)
    bindings: list[dict[str, Any]] = []
    for combination in itertools.islice(itertools.product(*tables), _MAX_ROWS):
        merged: dict[str, Any] = {}
        for part in combination:
            merged.update(part)
        bindings.append(merged)
    return bindings or [{}]


def _expectations(scope: ast.AST, wanted: set[str], env: dict[str, Any]) -> tuple[list[ast.Call], dict[int, Any]]:
    """The calls of WANTED names in SCOPE's own statements, and the value each is compared with."""
    results: dict[str, ast.Call] = {}  # result = f(...) in this test
    expected: dict[int, Any] = {}
    calls: list[ast.Call] = []
    for stmt in getattr(scope, "body", []):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue  # scanned on their own
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and called_name(node) in wanted:
                calls.append(node)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.targets) == 1:
                if isinstance(node.targets[0], ast.Name) and called_name(node.value) in wanted:
                    results[node.targets[0].id] = node.value
            pairs: list[tuple[ast.expr, Any]] = []
            if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.Is)):
                left, right = node.left, node.comparators[0]
                pairs = [(left, value(right, env)), (right, value(left, env))]
            elif isinstance(node, ast.Assert):
                test, truth = node.test, True
                if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                    test, truth = test.operand, False
                pairs = [(test, truth)]
            elif isinstance(node, ast.Call) and called_name(node) in _EXPECTING and node.args:
                kind = _EXPECTING[called_name(node) or ""]
                if isinstance(kind, bool):
                    pairs = [(node.args[0], kind)]
                elif len(node.args) > 1:
                    pairs = [(node.args[0], value(node.args[1], env)), (node.args[1], value(node.args[0], env))]
            for side, seen in pairs:
                while isinstance(side, ast.Call) and called_name(side) in _SAME and len(side.args) == 1:
                    side = side.args[0]  # list(f(x)) == [...]: f's result, as a sequence
                call = results.get(side.id) if isinstance(side, ast.Name) else side
                if isinstance(call, ast.Call) and seen is not MISSING:
                    expected.setdefault(id(call), seen)
    return calls, expected


def _scan(
    path: str, scope: ast.AST, name: str, wanted: set[str], env: dict[str, Any], found: dict[str, list[SeenCall]]
) -> None:
    bindings = _parametrize(scope, env) if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) else [{}]
    for binding in bindings:
        local = _constants(getattr(scope, "body", []), {**env, **binding})
        calls, expected = _expectations(scope, wanted, local)
        for call in calls:
            args = tuple(MISSING if isinstance(a, ast.Starred) else value(a, local) for a in call.args)
            kwargs = tuple((k.arg, value(k.value, local)) for k in call.keywords if k.arg)
            seen = SeenCall(args, kwargs, expected.get(id(call), MISSING), f"{path}::{name}")
            found.setdefault(called_name(call) or "", []).append(seen)


def test_calls(
    sources: Iterable[tuple[str, bytes]],
    wanted: set[str],
    is_test: Callable[[str], bool] = lambda path: True,
    trees: dict[str, ast.Module | None] | None = None,
) -> dict[str, list[SeenCall]]:
    """Calls of the WANTED names in the given files' tests and doctests (only doctests where IS_TEST says the
    file is not a test module), with what each expects of them; TREES keeps each file's parse for the next ask."""
    found: dict[str, list[SeenCall]] = {}
    trees = {} if trees is None else trees
    for path, data in sources:
        if path not in trees:
            try:
                trees[path] = Module.from_source(path, data).tree
            except (SourceError, RecursionError, ValueError):
                trees[path] = None
        tree = trees[path]
        if tree is None:
            continue
        module_env = _constants(tree.body, {})
        test = is_test(path)
        # Only the definitions spanning a line that spells a wanted name can call it (the tree, not the text,
        # decides what they call; opaque lines count as spelling everything).
        hot = hot_lines(data, [n.encode() for n in wanted])
        _doctests(path, tree, "<module>", wanted, found)
        _visit(path, tree, "", wanted, module_env, found, test, hot)
        if test:
            _scan(path, tree, "<module>", wanted, module_env, found)
    return found


def _visit(
    path: str,
    owner: ast.AST,
    prefix: str,
    wanted: set[str],
    env: dict[str, Any],
    found: dict[str, list[SeenCall]],
    test: bool,
    hot: list[int],
) -> None:
    for node in ast.iter_child_nodes(owner):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            at = bisect.bisect_left(hot, node.lineno)
            if at == len(hot) or hot[at] > (node.end_lineno or node.lineno):
                continue
            name = prefix + node.name
            _doctests(path, node, name, wanted, found)
            if test and not isinstance(node, ast.ClassDef):
                _scan(path, node, name, wanted, env, found)
            _visit(path, node, name + ".", wanted, env, found, test, hot)


def _doctests(path: str, scope: ast.AST, name: str, wanted: set[str], found: dict[str, list[SeenCall]]) -> None:
    """`>>> f(3)` then `9` in SCOPE's docstring: a call and the value the example shows."""
    if not isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return
    text = ast.get_docstring(scope, clean=False)
    if not text or ">>>" not in text or not any(name in text for name in wanted):
        return
    import doctest  # imported by the rare module with examples that call a candidate: it pulls in pdb, unittest

    try:
        examples = doctest.DocTestParser().get_examples(text)
    except ValueError:
        return
    for example in examples:
        if not any(name in example.source for name in wanted):
            continue
        try:
            tree = ast.parse(example.source, mode="eval")
        except SyntaxError:
            continue
        call = tree.body
        if not (isinstance(call, ast.Call) and called_name(call) in wanted):
            continue
        try:
            shown = ast.literal_eval(example.want.strip()) if example.want.strip() else MISSING
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            shown = MISSING
        args = tuple(MISSING if isinstance(a, ast.Starred) else value(a, {}) for a in call.args)
        kwargs = tuple((k.arg, value(k.value, {})) for k in call.keywords if k.arg)
        found.setdefault(called_name(call) or "", []).append(SeenCall(args, kwargs, shown, f"{path}::{name} (doctest)"))
