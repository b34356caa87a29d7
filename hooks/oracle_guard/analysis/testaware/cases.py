"""OG966, special-cased tests: production code that learned the tests' answers.

A branch ``if x == 7: return 13`` or a table ``{7: 13}`` consulted before the
real computation, where a test at the base calls the function with ``7`` and
expects ``13``: the code answers the test, not the input.  To stay precise on
honest code, a finding needs all of:

- the condition compares the function's own parameters with literals, or a
  table literal is looked up with a parameter;
- one call of the function (by its name) in the base's tests passes exactly
  those literals for those parameters, and expects a literal result;
- the branch returns that very literal (a table maps the input to it), and
  the function has another way out (the general computation the branch skips);
- for a table, at least half of its entries are such learned answers: a
  genuine constant table (month names, unit factors) that shares a row with a
  test has far more rows than the tests ask.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterable, Iterator
from typing import Any, Callable, NamedTuple

from oracle_guard.analysis.pysource import Module, SourceError, statements
from oracle_guard.analysis.sourcetext import hot_lines
from oracle_guard.analysis.testaware.facts import Occurrence, source

MISSING = object()


class SeenCall(NamedTuple):
    """One call of a production function in the base's tests: its literal arguments and the expected literal."""

    args: tuple[Any, ...]  # positional literals (MISSING where not a literal)
    kwargs: tuple[tuple[str, Any], ...]
    expected: Any  # MISSING when the test does not compare the result with a literal


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return MISSING


def _called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def test_calls(sources: Iterable[tuple[str, bytes]], wanted: set[str]) -> dict[str, list[SeenCall]]:
    """Calls of the WANTED names in the given test files, with what each test expects of them."""
    found: dict[str, list[SeenCall]] = {}
    for path, data in sources:
        try:
            tree = Module.from_source(path, data).tree
        except (SourceError, RecursionError):
            continue
        for scope in ast.walk(tree):
            if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
                _scan(scope, wanted, found)
    return found


def _scan(scope: ast.AST, wanted: set[str], found: dict[str, list[SeenCall]]) -> None:
    body = getattr(scope, "body", [])
    results: dict[str, ast.Call] = {}  # result = f(...) in this test
    expected: dict[int, Any] = {}  # id(call) -> literal it is compared with
    calls: list[ast.Call] = []
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not scope:
                continue
            if isinstance(node, ast.Call) and _called_name(node) in wanted:
                calls.append(node)
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.targets) == 1:
                if isinstance(node.targets[0], ast.Name) and _called_name(node.value) in wanted:
                    results[node.targets[0].id] = node.value
            elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.Is)):
                for side, other in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
                    call = results.get(side.id) if isinstance(side, ast.Name) else side
                    if isinstance(call, ast.Call):
                        value = _literal(other)
                        if value is not MISSING:
                            expected[id(call)] = value
    for call in calls:
        name = _called_name(call) or ""
        args = tuple(_literal(a) if not isinstance(a, ast.Starred) else MISSING for a in call.args)
        kwargs = tuple((k.arg, _literal(k.value)) for k in call.keywords if k.arg)
        found.setdefault(name, []).append(SeenCall(args, kwargs, expected.get(id(call), MISSING)))


# -- the production side --------------------------------------------------------------------


class Candidate(NamedTuple):
    """A literal branch or table lookup in a production function, to compare with the tests' calls."""

    function: str  # the name tests call it by
    qualname: str
    node: ast.AST  # where to report
    conditions: tuple[tuple[int, str, frozenset[Any]], ...]  # (parameter index, name, literals it may equal)
    returned: Any  # the literal the branch returns (MISSING: a table)
    table: tuple[tuple[Any, Any], ...]  # (key, value) rows of a table looked up with the parameter


def _params(func: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> list[str]:
    names = [a.arg for a in func.args.posonlyargs + func.args.args]
    return names[1:] if method and names and names[0] in ("self", "cls") else names


def _condition(test: ast.expr, params: list[str]) -> list[tuple[int, str, frozenset[Any]]] | None:
    """``p == LIT``, ``p in (LIT, ...)``, ``(a, b) == (LIT, LIT)``, joined by ``and``; None for anything else."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        parts: list[tuple[int, str, frozenset[Any]]] = []
        for value in test.values:
            part = _condition(value, params)
            if part is None:
                return None
            parts += part
        return parts
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(left, ast.Constant) and isinstance(op, (ast.Eq, ast.Is)):
        left, right = right, left
    if isinstance(op, (ast.Eq, ast.Is)):
        if isinstance(left, ast.Tuple) and isinstance(right, ast.Tuple) and len(left.elts) == len(right.elts):
            parts = []
            for name, value in zip(left.elts, right.elts):
                part = _condition(ast.Compare(left=name, ops=[ast.Eq()], comparators=[value]), params)
                if part is None:
                    return None
                parts += part
            return parts
        value = _literal(right)
        if isinstance(left, ast.Name) and left.id in params and value is not MISSING and _hashable(value):
            return [(params.index(left.id), left.id, frozenset([value]))]
    if isinstance(op, ast.In) and isinstance(left, ast.Name) and left.id in params:
        values = _literal(right)
        if isinstance(values, (tuple, list, set, frozenset)) and all(_hashable(v) for v in values):
            return [(params.index(left.id), left.id, frozenset(values))]
    return None


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _returned(body: list[ast.stmt]) -> Any:
    for stmt in body:
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            return _literal(stmt.value)
    return MISSING


def _other_exit(func: ast.FunctionDef | ast.AsyncFunctionDef, branch: ast.AST) -> bool:
    """Whether FUNC has a way out besides BRANCH: the general computation the branch skips."""
    inside = {id(n) for n in ast.walk(branch)}
    for node in ast.walk(func):
        if isinstance(node, (ast.Return, ast.Raise)) and id(node) not in inside:
            if not any(id(n) == id(branch) for n in ast.walk(node)):
                return True
    return False


def _tables(tree: ast.Module, func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.Dict]:
    found: dict[str, ast.Dict] = {}
    for body in (tree.body, func.body):
        for node in body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        found[target.id] = node.value
    return found


def _lookups(
    func: ast.FunctionDef | ast.AsyncFunctionDef, tables: dict[str, ast.Dict], params: list[str]
) -> Iterator[tuple[ast.AST, str, list[int]]]:
    """``TABLE[p]``, ``TABLE[(a, b)]``, ``TABLE.get(p)``, ``p in TABLE``: (node, table, parameter indexes)."""
    for node in ast.walk(func):
        table, key = None, None
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            table, key = node.value.id, node.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            if isinstance(node.func.value, ast.Name) and node.args:
                table, key = node.func.value.id, node.args[0]
        elif (
            isinstance(node, ast.Compare)
            and isinstance(node.ops[0], ast.In)
            and isinstance(node.comparators[0], ast.Name)
        ):
            table, key = node.comparators[0].id, node.left
        if table not in tables or key is None:
            continue
        keys = key.elts if isinstance(key, ast.Tuple) else [key]
        if all(isinstance(k, ast.Name) and k.id in params for k in keys):
            yield node, table, [params.index(k.id) for k in keys if isinstance(k, ast.Name)]


def _table_lines(module: Module) -> list[int]:
    """Lines spelling a module-level dict table's name (and every opaque line): only functions holding one
    can look a module table up."""
    names = [
        t.id.encode()
        for node in module.tree.body
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict)
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(t, ast.Name)
    ]
    return hot_lines(module.source, names) if names else []


def candidates(module: Module) -> list[Candidate]:
    """Literal branches and table lookups on parameters, in every function of MODULE.

    Branches are found among each function's statements (the tree, never the text: `if 3 == b`, a
    condition over two lines, `+5`); only a function with a table in reach walks its expressions.
    """
    found: list[Candidate] = []
    table_lines = _table_lines(module)
    stack: list[tuple[ast.AST, str, bool]] = [(module.tree, "", False)]
    while stack:
        parent, prefix, in_class = stack.pop()
        for func in ast.iter_child_nodes(parent):
            if isinstance(func, ast.ClassDef):
                stack.append((func, f"{prefix}{func.name}.", True))
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            stack.append((func, f"{prefix}{func.name}.", False))
            params = _params(func, in_class)
            if not params:
                continue  # nothing the tests pass can pick a branch or a row
            qual = prefix + func.name
            local_table = False
            for node in statements(func.body):
                if isinstance(node, ast.If):
                    conditions = _condition(node.test, params)
                    if conditions and not all(all(trivial(v) for v in values) for _, _, values in conditions):
                        returned = _returned(node.body)
                        if returned is not MISSING and _other_exit(func, node):
                            found.append(Candidate(func.name, qual, node, tuple(conditions), returned, ()))
                elif isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
                    local_table = True
            at = bisect.bisect_left(table_lines, func.lineno)
            if not local_table and (at == len(table_lines) or table_lines[at] > (func.end_lineno or func.lineno)):
                continue
            tables = _tables(module.tree, func)
            seen: set[str] = set()
            for node, table, indexes in _lookups(func, tables, params) if tables else ():
                if table in seen or not _other_exit(func, node):
                    continue
                seen.add(table)
                rows = []
                for key, value in zip(tables[table].keys, tables[table].values):
                    literal_key = _literal(key) if key is not None else MISSING
                    rows.append((literal_key, _literal(value)))
                keys: tuple[tuple[int, str, frozenset[Any]], ...] = tuple((i, params[i], frozenset()) for i in indexes)
                found.append(Candidate(func.name, qual, tables[table], keys, MISSING, tuple(rows)))
    return found


def trivial(value: Any) -> bool:
    """A base case every implementation spells (None, booleans, 0, 1, -1, empty values): never a learned input."""
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, (int, float)):
        return value in (0, 1, -1)
    if isinstance(value, (str, bytes, tuple, list, frozenset)):
        return len(value) == 0 or (isinstance(value, tuple) and all(trivial(v) for v in value))
    return False


def _argument(call: SeenCall, index: int, name: str) -> Any:
    for key, value in call.kwargs:
        if key == name:
            return value
    return call.args[index] if index < len(call.args) else MISSING


def _same(a: Any, b: Any) -> bool:
    return a is not MISSING and b is not MISSING and type(a) is type(b) and a == b


def learned(candidate: Candidate, calls: list[SeenCall]) -> SeenCall | None:
    """The base test call whose answer CANDIDATE hard-codes, or None."""
    if candidate.table:
        matched = []
        for call in calls:
            key = tuple(_argument(call, i, n) for i, n, _ in candidate.conditions)
            literal_key = key[0] if len(key) == 1 else key
            for row_key, row_value in candidate.table:
                if _same(row_key, literal_key) and _same(row_value, call.expected) and not trivial(row_key):
                    matched.append(call)
                    break
        return matched[0] if matched and 2 * len({c.args for c in matched}) >= len(candidate.table) else None
    if all(all(trivial(v) for v in values) for _, _, values in candidate.conditions):
        return None  # `if n == 0: return 1` is a base case, not a learned answer
    for call in calls:
        if not _same(candidate.returned, call.expected):
            continue
        arguments = [(_argument(call, i, n), values) for i, n, values in candidate.conditions]
        if all(_hashable(a) and any(_same(a, v) for v in values) for a, values in arguments):
            return call
    return None


def _answers(module: Module | None) -> set[tuple[str, str]]:
    """(function, answer) of every branch in MODULE that returns a literal, whatever its condition spells."""
    found: set[tuple[str, str]] = set()
    stack: list[tuple[ast.AST, str]] = [(module.tree, "")] if module is not None else []
    while stack:
        parent, prefix = stack.pop()
        for node in ast.iter_child_nodes(parent):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                stack.append((node, f"{prefix}{node.name}."))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for sub in statements(node.body):
                    if isinstance(sub, ast.If):
                        returned = _returned(sub.body)
                        if returned is not MISSING:
                            found.add((prefix + node.name, repr(returned)))
    return found


def special_cases(
    module: Module,
    calls_of: Callable[[set[str]], dict[str, list[SeenCall]]],
    base: Callable[[], Module | None] = lambda: None,
) -> list[Occurrence]:
    """OG966 occurrences in MODULE; CALLS_OF reads the base's tests only when there is a candidate, BASE the
    file's base version only when one matches a test."""
    found_candidates = candidates(module)
    if not found_candidates:
        return []
    calls = calls_of({c.function for c in found_candidates})
    found = []
    had: set[tuple[str, str]] | None = None
    for candidate in found_candidates:
        call = learned(candidate, calls.get(candidate.function, []))
        if call is None:
            continue
        if not candidate.table:
            # The base already answered this in a branch of its own (`if code.lower() == "usd": return "USD"`):
            # the change edited its condition (dropping the `.lower()` is a plain bug, the replay's to catch),
            # it did not learn the answer.
            had = _answers(base()) if had is None else had
            if (candidate.qualname, repr(candidate.returned)) in had:
                continue
        shown = ", ".join(repr(a) for a in call.args if a is not MISSING)
        what = "a table of" if candidate.table else "a branch for"
        message = (
            f"{candidate.qualname} has {what} the base tests' input ({shown}) that returns the expected "
            f"{call.expected!r}: the code learned the test's answer"
        )
        line, col = module.position(candidate.node)
        key = ("OG966", candidate.qualname, source(candidate.node))
        found.append(Occurrence(key, line, col, "OG966", message))
    return found
