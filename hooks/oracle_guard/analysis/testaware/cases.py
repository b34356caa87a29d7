"""OG966, special-cased tests: production code that learned the tests' answers.

Evidence is what the base's tests ask (oracle_guard/analysis/testaware/evidence.py): a call of a function
with argument values and the value the test expects.  The production side is judged by data flow
(oracle_guard/analysis/testaware/keyflow.py): each condition, ``match`` and table lookup of a function is
evaluated with the parameters bound to a tested call's values.  A finding needs one of:

- **yields**: a branch (``if``/``elif``, a conditional expression, a ``match`` case) that the tested input
  selects by an equality or membership with a non-trivial literal, and that returns the very value the test
  expects, while the function has another way out (the general computation the branch skips);
- **table**: a constant table (a dict literal, rows added at import, a JSON or CSV file of the change, a
  table imported from another module, a memo decorator's pre-loaded cache) looked up with a key derived from
  the parameters, where at least half the rows map a tested input to its expected value (a genuine table of
  constants has far more rows than the tests ask), or, behind an ``except`` that catches the real path's
  failure, any row does (the canned fallback);
- **singles out**: a condition whose every literal is a tested input, spelled as data (a tuple of all the
  arguments, a number, a string no identifier spells), that sends exactly the tested inputs down their own
  path while the same parameter is the data of the general computation (``if (a, b) != (2, 3): return a - b``).

A literal merely equal to a test's (a cache size, a port, ``0``/``1``, ``""``, ``None``) selects nothing, and
a base case (``None``, booleans, 0, 1, -1, empty values as the selected input) is never a learned answer.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterator
from typing import Any, Callable, NamedTuple

from oracle_guard.analysis.pysource import Module
from oracle_guard.analysis.testaware.evidence import MISSING, SeenCall, test_calls
from oracle_guard.analysis.testaware.facts import Occurrence, source
from oracle_guard.analysis.testaware.keyflow import Reader, Scope, constants, derive, own_nodes

__all__ = ["MISSING", "SeenCall", "special_cases", "test_calls", "trivial"]

CallsOf = Callable[[set[str], set[bytes]], dict[str, list[SeenCall]]]
_PINS = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot, ast.In, ast.NotIn)
_BROAD = frozenset(
    "Exception BaseException OSError IOError ConnectionError TimeoutError URLError HTTPError RequestException "
    "socket.error error timeout".split()
)


class Candidate(NamedTuple):
    """A place in a production function where a tested input could pick the result."""

    function: str  # the name tests call it by
    qualname: str
    node: ast.AST  # where to report, and its identity
    kind: str  # "branch", "match", "table", "fallback"
    scope: Scope
    key: ast.AST | None  # the condition (branch), the subject (match), the key (table)
    pins: frozenset[Any]  # the non-trivial literals a condition compares a derived value with
    table: dict[Any, Any] | None  # the rows (table, fallback)
    binder: Callable[[SeenCall], dict[str, Any] | None] | None = None  # a decorator's wrapper sees the args
    other_exit: bool = True  # a table: the function computes otherwise too (a memo, a default, another return)
    func: ast.AST | None = None  # the function it is in


def trivial(value: Any) -> bool:
    """A base case every implementation spells (None, booleans, 0, 1, -1, empty values): never a learned input."""
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, (int, float)):
        return value in (0, 1, -1)
    if isinstance(value, (str, bytes, tuple, list, frozenset, dict)):
        return len(value) == 0 or (isinstance(value, tuple) and all(trivial(v) for v in value))
    return False


def _small(value: Any) -> bool:
    """2 and -2: the next base case (`if n == 2: return True` in a primality test): with a trivial answer, not a
    learned one."""
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= 2


def _data_like(value: Any) -> bool:
    """A literal that names one data point rather than a mode: a tuple of arguments, a number, a phrase."""
    if isinstance(value, tuple):
        return len(value) >= 2 and not trivial(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return abs(value) > 2
    if isinstance(value, str):
        return len(value) > 1 and not value.isidentifier() and not value.startswith((".", "-", "/"))
    return False


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _same(a: Any, b: Any) -> bool:
    if a is MISSING or b is MISSING:
        return False
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):  # a JSON table holds lists for tuples
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _members(value: Any) -> list[Any]:
    """What ``x in VALUE`` can select: a collection's members (a string's are substrings: none)."""
    return list(value) if isinstance(value, (frozenset, set, list, dict, tuple)) else []


# -- the production side --------------------------------------------------------------------------------------


def _pins(test: ast.AST, scope: Scope, consts: dict[str, Any]) -> frozenset[Any]:
    """The non-trivial literals TEST compares a parameter-derived value with by (in)equality or membership."""
    found: set[Any] = set()
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        for op, left, right in zip(node.ops, sides, sides[1:]):
            if not isinstance(op, _PINS):
                continue
            pairs = [(left, right)] if isinstance(op, (ast.In, ast.NotIn)) else [(left, right), (right, left)]
            for key, literal in pairs:
                if scope.flows_from_params(key) and not scope.flows_from_params(literal):
                    fixed = derive(literal, {}, None, consts)
                    if fixed is MISSING:
                        continue
                    members = _members(fixed) if isinstance(op, (ast.In, ast.NotIn)) else [fixed]
                    found.update(m for m in members if _hashable(m) and not trivial(m))
    return frozenset(found)


def _lookups(node: ast.AST, scope: Scope, consts: dict[str, Any]) -> Iterator[tuple[ast.AST, ast.AST, dict[Any, Any]]]:
    """``TABLE[key]``, ``TABLE.get(key)``, ``key in TABLE`` on a constant dict: (where, key, rows)."""
    table_node, key = None, None
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        table_node, key = node.value, node.slice
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
        table_node, key = node.func.value, node.args[0]
    if table_node is None or key is None or not scope.flows_from_params(key):
        return
    rows: Any = MISSING
    if isinstance(table_node, (ast.Name, ast.Dict)):
        rows = derive(table_node, {}, scope, consts)
    elif isinstance(table_node, ast.Attribute) and isinstance(table_node.value, ast.Name):
        rows = consts.get(f"{table_node.value.id}.{table_node.attr}", MISSING)  # a memo class's own table
    if isinstance(rows, dict) and rows:
        yield node, key, rows


def _first_return(body: list[ast.stmt]) -> ast.expr | None:
    for stmt in body:
        if isinstance(stmt, ast.Return):
            return stmt.value
        if isinstance(stmt, (ast.Raise, ast.Continue, ast.Break)):
            return None
    return None


def _other_exit(func: ast.AST, branch: ast.AST) -> bool:
    """Whether FUNC has a way out besides BRANCH: the general computation the branch skips."""
    inside = {id(n) for n in ast.walk(branch)}
    return any(isinstance(n, (ast.Return, ast.Raise)) and id(n) not in inside for n in own_nodes(func)) or (
        isinstance(func, ast.Lambda)
    )


def _statement_of(func: ast.AST, node: ast.AST) -> ast.AST:
    """The return or raise of FUNC that holds NODE (a lookup in it is that way out), else NODE."""
    for stmt in own_nodes(func):
        if isinstance(stmt, (ast.Return, ast.Raise)) and any(n is node for n in ast.walk(stmt)):
            return stmt
    return node


def _computed_default(node: ast.AST, scope: Scope) -> bool:
    """``TABLE.get(key, <computed from the parameters>)``: the table answers first, the computation otherwise."""
    return isinstance(node, ast.Call) and len(node.args) > 1 and scope.flows_from_params(node.args[1])


def _handler_broad(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(ast.unparse(t).rpartition(".")[2] in _BROAD or ast.unparse(t) in _BROAD for t in types)


def _maybe(node: ast.AST, consts: dict[str, Any]) -> bool:
    """A cheap look before any data flow: a condition comparing with a non-trivial constant, a match, a lookup in
    a constant dict (most functions have none, and are never scoped)."""
    if isinstance(node, (ast.If, ast.IfExp, ast.While)):
        for sub in ast.walk(node.test):
            if isinstance(sub, ast.Compare) and any(isinstance(op, _PINS) for op in sub.ops):
                for side in [sub.left, *sub.comparators]:
                    if isinstance(side, ast.Constant) and not trivial(side.value):
                        return True
                    if isinstance(side, (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Subscript, ast.UnaryOp)):
                        return True
                    if isinstance(side, ast.Name) and side.id in consts and not trivial(consts[side.id]):
                        return True
        return False
    if isinstance(node, ast.Match):
        return True
    table = None
    if isinstance(node, ast.Subscript):
        table = node.value
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        table = node.func.value
    return isinstance(table, ast.Dict) or isinstance(table, ast.Name) and isinstance(consts.get(table.id), dict)


def _function_candidates(
    func: ast.FunctionDef | ast.AsyncFunctionDef, name: str, qual: str, method: bool, consts: dict[str, Any]
) -> list[Candidate]:
    nodes = own_nodes(func)
    maybe = [n for n in nodes if _maybe(n, consts)]
    if not maybe:
        return []
    scope = Scope(func, method, nodes)
    if not scope.params:
        return []  # nothing the tests pass can pick a branch or a row
    found: list[Candidate] = []
    handlers = set()
    for node in nodes:
        if isinstance(node, ast.ExceptHandler) and _handler_broad(node):
            handlers |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    for node in maybe:
        if isinstance(node, (ast.If, ast.IfExp, ast.While)):
            pins = _pins(node.test, scope, consts)
            if pins:
                found.append(Candidate(name, qual, node, "branch", scope, node.test, pins, None, func=func))
        elif isinstance(node, ast.Match):
            if scope.flows_from_params(node.subject):
                found.append(Candidate(name, qual, node, "match", scope, node.subject, frozenset(), None, func=func))
        else:
            for where, key, rows in _lookups(node, scope, consts):
                kind = "fallback" if id(where) in handlers else "table"
                other = _other_exit(func, _statement_of(func, where)) or _computed_default(where, scope)
                found.append(Candidate(name, qual, where, kind, scope, key, frozenset(), rows, None, other, func))
    return found


def _memo_candidates(
    module: Module, func: ast.FunctionDef | ast.AsyncFunctionDef, qual: str, consts: dict[str, Any]
) -> list[Candidate]:
    """A memoising decorator pre-loaded with answers: ``@memo({(5,): 120})``, or a decorator of this module (a
    function or a class) whose wrapper looks its ``*args`` up in a constant table."""
    found = []
    decorators = {
        n.name: n for n in module.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    for decorator in func.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(decorator, ast.Call):
            for arg in [*decorator.args, *(k.value for k in decorator.keywords)]:
                rows = derive(arg, {}, None, consts)
                if isinstance(rows, dict) and rows:
                    wrapper = ast.Lambda(args=func.args, body=ast.Constant(None))
                    scope = Scope(wrapper, False)
                    found.append(Candidate(func.name, qual, arg, "memo", scope, None, frozenset(), rows))
        outer = decorators.get(target.id) if isinstance(target, ast.Name) else None
        for inner in ast.walk(outer) if outer is not None else ():
            if (
                not isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef))
                or inner is outer
                or not inner.args.vararg
            ):
                continue
            scope = Scope(inner, isinstance(outer, ast.ClassDef))
            tables = {**consts, **_own_tables(outer, consts)} if isinstance(outer, ast.ClassDef) else consts
            for node in own_nodes(inner):
                for where, key, rows in _lookups(node, scope, tables):
                    vararg, kwarg = scope.vararg, scope.kwarg

                    def binder(
                        call: SeenCall, vararg: str | None = vararg, kwarg: str | None = kwarg
                    ) -> dict[str, Any]:
                        env: dict[str, Any] = {vararg or "\0": tuple(call.args)}
                        if kwarg:
                            env[kwarg] = dict(call.kwargs)
                        return env

                    found.append(Candidate(func.name, qual, where, "table", scope, key, frozenset(), rows, binder))
    return found


def _own_tables(cls: ast.ClassDef, consts: dict[str, Any]) -> dict[str, Any]:
    """``self.NAME`` -> the dict a class's methods (or its body) bind NAME to: a memo class's pre-loaded cache."""
    found: dict[str, Any] = {}
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            name = None
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                name = target.attr
            elif isinstance(target, ast.Name) and node in cls.body:
                name = target.id
            rows = derive(node.value, {}, None, consts) if name else MISSING
            if name and isinstance(rows, dict):
                found[f"self.{name}"] = rows
    return found


def _changed_lines(module: Module, before: frozenset[bytes] | None) -> list[int] | None:
    """The sorted lines of MODULE not in its base version, or None when every function must be judged: a new file,
    or a changed module-level statement that may hold a table (imports, definitions and docstrings hold none)."""
    if before is None:
        return None
    lines = module.source.splitlines()
    changed = [n for n, line in enumerate(lines, 1) if line.strip() and line.strip() not in before]
    for stmt in module.tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        at = bisect.bisect_left(changed, stmt.lineno)
        if at < len(changed) and changed[at] <= (stmt.end_lineno or stmt.lineno):
            return None
    return changed


def _touched(func: ast.FunctionDef | ast.AsyncFunctionDef, changed: list[int] | None) -> bool:
    """Whether the change may have added something to FUNC (a decorated function is always judged: its decorator
    may be what changed)."""
    if changed is None or func.decorator_list:
        return True
    at = bisect.bisect_left(changed, func.lineno)
    return at < len(changed) and changed[at] <= (func.end_lineno or func.lineno)


def candidates(module: Module, consts: dict[str, Any], changed: list[int] | None = None) -> list[Candidate]:
    """The places in MODULE's functions (those holding a CHANGED line, when given) where a tested input could
    pick the result."""
    found: list[Candidate] = []
    stack: list[tuple[ast.AST, str, bool]] = [(module.tree, "", False)]
    while stack:
        parent, prefix, in_class = stack.pop()
        for func in ast.iter_child_nodes(parent):
            if isinstance(func, ast.ClassDef):
                stack.append((func, f"{prefix}{func.name}.", True))
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            stack.append((func, f"{prefix}{func.name}.", False))
            called = func.name
            if in_class and func.name in ("__init__", "__new__") and isinstance(parent, ast.ClassDef):
                called = parent.name  # tests call the class
            elif func.name.startswith("__") and func.name.endswith("__"):
                continue  # an operator or protocol method: no test calls it by that name
            if not _touched(func, changed):
                continue
            found += _function_candidates(func, called, prefix + func.name, in_class, consts)
            if func.decorator_list:
                found += _memo_candidates(module, func, prefix + func.name, consts)
    return found


# -- the judgement ---------------------------------------------------------------------------------------------


class Learned(NamedTuple):
    call: SeenCall
    shown: Any  # the tested input, as the code selects it
    how: str  # what the code does with it: a template of {test}, {input} and {expected}


def _taken(candidate: Candidate, env: dict[str, Any], consts: dict[str, Any]) -> tuple[Any, ast.AST | None, ast.AST]:
    """(the selecting literal, what the function returns on the path it takes, the branch), or MISSING first."""
    node, scope = candidate.node, candidate.scope
    if candidate.kind == "branch":
        assert isinstance(node, (ast.If, ast.IfExp, ast.While))
        truth = derive(node.test, env, scope, consts)
        pinned = _pinned(candidate, env, consts)
        if truth is MISSING or pinned is MISSING:
            return MISSING, None, node
        if isinstance(node, ast.IfExp):
            return pinned, node.body if truth else node.orelse, node
        body = node.body if truth else node.orelse
        return pinned, _first_return(body) if not isinstance(node, ast.While) else None, node
    if candidate.kind == "match":
        assert isinstance(node, ast.Match)
        subject = derive(node.subject, env, scope, consts)
        if subject is MISSING:
            return MISSING, None, node
        for case in node.cases:
            matched = _pattern(case.pattern, subject, consts)
            if matched is None:
                return MISSING, None, node  # a pattern not made of literals: no verdict
            if matched and case.guard is None:
                literal = subject if not isinstance(case.pattern, ast.MatchAs) else MISSING
                return (literal if not trivial(literal) else MISSING), _first_return(case.body), case
        return MISSING, None, node
    return MISSING, None, node


def _pinned(candidate: Candidate, env: dict[str, Any], consts: dict[str, Any]) -> Any:
    """The pinned literal this call's derived value equals (or is a member of): the input the branch singles out."""
    for node in ast.walk(candidate.key) if candidate.key is not None else ():
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            for left, right in zip(sides, sides[1:]):
                for side in (left, right):
                    if candidate.scope.flows_from_params(side):
                        derived = derive(side, env, candidate.scope, consts)
                        if _hashable(derived) and derived in candidate.pins and not trivial(derived):
                            return derived
    return MISSING


def _pattern(pattern: ast.pattern, subject: Any, consts: dict[str, Any]) -> bool | None:
    if isinstance(pattern, ast.MatchValue):
        return _same(derive(pattern.value, {}, None, consts), subject)
    if isinstance(pattern, ast.MatchSingleton):
        return subject is pattern.value
    if isinstance(pattern, ast.MatchAs) and pattern.pattern is None:
        return True
    if isinstance(pattern, ast.MatchOr):
        results = [_pattern(p, subject, consts) for p in pattern.patterns]
        return None if None in results else any(results)
    if isinstance(pattern, ast.MatchSequence) and isinstance(subject, (tuple, list)):
        if len(pattern.patterns) != len(subject):
            return False
        results = [_pattern(p, s, consts) for p, s in zip(pattern.patterns, subject)]
        return None if None in results else all(results)
    return None


def _uses_as_data(candidate: Candidate, func: ast.AST) -> bool:
    """Whether a parameter the condition reads is the data of the general computation (not only compared)."""
    if candidate.key is None:
        return False
    names = {n.id for n in ast.walk(candidate.key) if isinstance(n, ast.Name) and n.id in candidate.scope.params}
    skip = {id(n) for c in own_nodes(func) if isinstance(c, ast.Compare) for n in ast.walk(c)}
    return any(isinstance(n, ast.Name) and n.id in names and id(n) not in skip for n in own_nodes(func))


def learned(candidate: Candidate, func: ast.AST, calls: list[SeenCall], consts: dict[str, Any]) -> Learned | None:
    """The base test call whose answer CANDIDATE hard-codes, or None."""
    bind = candidate.binder or candidate.scope.bind
    if candidate.table is not None:
        return _learned_rows(candidate, calls, bind, consts)
    singled: list[tuple[SeenCall, Any]] = []
    for call in calls:
        env = bind(call)
        if env is None:
            continue
        pinned, returned, branch = _taken(candidate, env, consts)
        if pinned is MISSING:
            continue
        answer = derive(returned, {}, None, consts) if returned is not None else MISSING
        if _same(answer, call.expected) and not candidate.scope.flows_from_params(returned or ast.Constant(None)):
            if _other_exit(func, branch) and not (_small(pinned) and trivial(answer)):
                return Learned(
                    call, pinned, "returns {expected}, the expected value of {test}, for exactly its input {input}"
                )
        singled.append((call, pinned))
    tested = {p for _, p in singled}
    if candidate.kind == "branch" and singled and candidate.pins <= tested and all(map(_data_like, candidate.pins)):
        call, pinned = singled[0]
        if call.expected is not MISSING and _uses_as_data(candidate, func):
            return Learned(
                call,
                pinned,
                "sends exactly the input {input} of {test} down a path of its own (every other input takes the "
                "general computation)",
            )
    return None


def _learned_rows(
    candidate: Candidate,
    calls: list[SeenCall],
    bind: Callable[[SeenCall], dict[str, Any] | None],
    consts: dict[str, Any],
) -> Learned | None:
    assert candidate.table is not None and candidate.key is not None or candidate.kind == "memo"
    rows = candidate.table or {}
    matched: dict[Any, SeenCall] = {}
    for call in calls:
        env = bind(call)
        if env is None:
            continue
        keys = [derive(candidate.key, env, candidate.scope, consts)] if candidate.key is not None else []
        if candidate.kind == "memo":
            keys = [tuple(call.args), call.args[0] if len(call.args) == 1 else MISSING]
        for key in keys:
            if _hashable(key) and key in rows and not trivial(key) and _same(rows[key], call.expected):
                matched.setdefault(key, call)
    if not matched:
        return None
    if candidate.kind == "fallback" or (2 * len(matched) >= len(rows) and candidate.other_exit):
        key, call = next(iter(matched.items()))
        if candidate.kind == "fallback":
            return Learned(
                call,
                key,
                "answers {expected}, the expected value of {test} for {input}, from a table when the real path fails",
            )
        return Learned(
            call, key, "looks the input {input} of {test} up in a table that holds its expected value {expected}"
        )
    return None


def _texts(value: Any, found: set[bytes]) -> None:
    if isinstance(value, (tuple, list, frozenset)):
        for item in value:
            _texts(item, found)
    elif isinstance(value, str) and value:
        found.add(value.encode("utf-8", "replace"))
    elif isinstance(value, bytes) and value:
        found.add(value)
    elif isinstance(value, (int, float)) and not trivial(value):
        found.add(repr(value).encode())


def _needles(found: list[Candidate]) -> set[bytes]:
    """Texts one of which a test file must spell to hold a tested input of FOUND (an empty set: any file)."""
    needles: set[bytes] = set()
    for candidate in found:
        if candidate.kind == "match":
            values: list[Any] = [n.value for n in ast.walk(candidate.node) if isinstance(n, ast.Constant)]
        elif candidate.table is None:  # the literals it selects on, or the answers it returns (a derived key)
            values = list(candidate.pins)
            values += [n.value for n in ast.walk(candidate.node) if isinstance(n, ast.Constant)]
        else:  # the keys, or the answers (a key derived from the input is not spelled in the test)
            values = [*candidate.table, *candidate.table.values()]
        for value in values:
            _texts(value, needles)
    return needles


def _new(candidate: Candidate, module: Module, old_lines: frozenset[bytes]) -> bool:
    """Whether the change may have added CANDIDATE: a line of its condition or of what it returns is not in the
    base's version of the file (a table is always judged: its rows may be what changed)."""
    if candidate.table is not None:
        return True
    node = candidate.node
    spans = [(node.lineno, (candidate.key or node).end_lineno or node.lineno)]  # type: ignore[attr-defined]
    bodies = [getattr(node, "body", None), getattr(node, "orelse", None)]
    if isinstance(node, ast.Match):
        spans += [(c.pattern.lineno, c.pattern.end_lineno or c.pattern.lineno) for c in node.cases]
        bodies = [c.body for c in node.cases]
    for body in bodies:
        returned = _first_return(body) if isinstance(body, list) else None
        if returned is not None:
            spans.append((returned.lineno, returned.end_lineno or returned.lineno))
    lines = module.source.splitlines()
    return any(lines[n - 1].strip() not in old_lines for first, last in spans for n in range(first, last + 1))


def special_cases(
    module: Module,
    calls_of: CallsOf,
    reader: Reader | None = None,
    old_lines: Callable[[], frozenset[bytes] | None] = lambda: None,
) -> list[Occurrence]:
    """OG966 occurrences in MODULE; CALLS_OF reads the base's tests only when there is a candidate the change may
    have added (OLD_LINES: the base version's lines, None for all of them new)."""
    before = old_lines()
    consts = constants(module, reader)
    found_candidates = candidates(module, consts, _changed_lines(module, before))
    if not found_candidates:
        return []
    if before:
        found_candidates = [c for c in found_candidates if _new(c, module, before)]
        if not found_candidates:
            return []
    calls = calls_of({c.function for c in found_candidates}, _needles(found_candidates))
    if not calls:
        return []
    found = []
    nowhere: ast.AST = ast.Lambda(
        args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]), body=ast.Constant(None)
    )
    for candidate in found_candidates:
        seen = calls.get(candidate.function)
        if not seen:
            continue
        func = candidate.func or nowhere
        result = learned(candidate, func, seen, consts)
        if result is None:
            continue
        what = result.how.format(
            test=result.call.test or "a base test", input=repr(result.shown), expected=repr(result.call.expected)
        )
        message = f"{candidate.qualname} {what}: the code learned the test's answer, not the computation"
        line, col = module.position(candidate.node)
        key = ("OG966", candidate.qualname, source(candidate.node))
        found.append(Occurrence(key, line, col, "OG966", message))
    return found
