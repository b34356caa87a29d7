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
from typing import Any, Callable, NamedTuple

from oracle_guard.analysis.pysource import Module
from oracle_guard.analysis.testaware.evidence import MISSING, SeenCall, test_calls
from oracle_guard.analysis.testaware.facts import Occurrence, source
from oracle_guard.analysis.testaware.keyflow import Reader, constants, derive, own_nodes
from oracle_guard.analysis.testaware.places import (
    MATCH,
    Candidate,
    candidates,
    changed_lines,
    first_return,
    hashable,
    other_exit,
    trivial,
)

__all__ = ["MISSING", "SeenCall", "special_cases", "test_calls", "trivial"]

CallsOf = Callable[[set[str], set[bytes]], dict[str, list[SeenCall]]]
_NEEDLES = 200


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


def _same(a: Any, b: Any) -> bool:
    if a is MISSING or b is MISSING:
        return False
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):  # a JSON table holds lists for tuples
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


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
        return pinned, first_return(body) if not isinstance(node, ast.While) else None, node
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
                return (literal if not trivial(literal) else MISSING), first_return(case.body), case
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
                        if hashable(derived) and derived in candidate.pins and not trivial(derived):
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
            if other_exit(func, branch) and not (_small(pinned) and trivial(answer)):
                return Learned(
                    call, pinned, "returns {expected}, the expected value of {test}, for exactly its input {input}"
                )
        singled.append((call, pinned))
    tested = {p for _, p in singled}
    if candidate.kind == "branch" and singled and candidate.pins <= tested and all(map(_data_like, candidate.pins)):
        call, pinned = singled[0]
        # The whole input: every parameter a call must pass is pinned (`if base != 10` in `to_base(n, base=10)`
        # picks a mode, not a data point).
        whole = candidate.scope.required() <= candidate.scope.params_in(candidate.key or ast.Constant(None))
        if call.expected is not MISSING and whole and _uses_as_data(candidate, func):
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
            if hashable(key) and key in rows and not trivial(key) and _same(rows[key], call.expected):
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
    return needles if len(needles) <= _NEEDLES else set()  # a big table: any test file may hold a row


def _branch_key(node: ast.AST) -> str:
    """A branch as the compiler sees it (no positions, no quoting or layout): its condition and first returns."""
    if isinstance(node, ast.IfExp):
        return ast.dump(node)
    if isinstance(node, ast.If):
        returned = [first_return(body) for body in (node.body, node.orelse)]
        return ast.dump(node.test) + "|" + "|".join(ast.dump(r) if r is not None else "" for r in returned)
    return ""


def _new(candidate: Candidate, module: Module, old_lines: frozenset[bytes]) -> bool:
    """Whether the change may have added CANDIDATE: a line of its condition or of what it returns is not in the
    base's version of the file (a table is always judged: its rows may be what changed)."""
    if candidate.table is not None:
        return True
    node = candidate.node
    spans = [(node.lineno, (candidate.key or node).end_lineno or node.lineno)]  # type: ignore[attr-defined]
    bodies = [getattr(node, "body", None), getattr(node, "orelse", None)]
    if isinstance(node, MATCH):
        assert isinstance(node, ast.Match)
        spans += [(c.pattern.lineno, c.pattern.end_lineno or c.pattern.lineno) for c in node.cases]
        bodies = [c.body for c in node.cases]
    for body in bodies:
        returned = first_return(body) if isinstance(body, list) else None
        if returned is not None:
            spans.append((returned.lineno, returned.end_lineno or returned.lineno))
    lines = module.source.splitlines()
    return any(lines[n - 1].strip() not in old_lines for first, last in spans for n in range(first, last + 1))


def _base_answers(module: Module | None) -> set[tuple[str, str]]:
    """(function, answer) of every branch or case of MODULE that returns a literal, whatever its condition."""
    found: set[tuple[str, str]] = set()
    stack: list[tuple[ast.AST, str]] = [(module.tree, "")] if module is not None else []
    while stack:
        parent, prefix = stack.pop()
        for node in ast.iter_child_nodes(parent):
            if not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            stack.append((node, f"{prefix}{node.name}."))
            if isinstance(node, ast.ClassDef):
                continue
            for sub in own_nodes(node):
                bodies = [sub.body, sub.orelse] if isinstance(sub, ast.If) else []
                bodies += [case.body for case in sub.cases] if isinstance(sub, MATCH) else []  # type: ignore[attr-defined]
                returned = [first_return(b) for b in bodies]
                returned += [sub.body, sub.orelse] if isinstance(sub, ast.IfExp) else []
                for expr in returned:
                    answer = derive(expr, {}, None, {}) if expr is not None else MISSING
                    if answer is not MISSING:
                        found.add((prefix + node.name, repr(answer)))
    return found


def _table_key(candidate: Candidate) -> tuple[str, str, str, str, bool]:
    """A table lookup as the compiler sees it: its function's whole code, the lookup, and the rows it reads."""
    func = ast.dump(candidate.func) if candidate.func is not None else ""
    return (candidate.qualname, func, ast.dump(candidate.node), repr(candidate.table), candidate.other_exit)


def _base_tables(base: Module, reader: Reader | None) -> set[tuple[str, str, str, str, bool]]:
    """The base's table lookups: one the change left as it was (the same function, the same rows) answers as it
    did before the change, whatever the change did elsewhere in the module (a registration call at import makes
    every function of the module a candidate)."""
    try:
        return {_table_key(c) for c in candidates(base, constants(base, reader)) if c.table is not None}
    except RecursionError:
        return set()


def special_cases(
    module: Module,
    calls_of: CallsOf,
    reader: Reader | None = None,
    old_lines: Callable[[], frozenset[bytes] | None] = lambda: None,
    old_module: Callable[[], Module | None] = lambda: None,
    old_reader: Reader | None = None,
) -> list[Occurrence]:
    """OG966 occurrences in MODULE; CALLS_OF reads the base's tests only when there is a candidate the change may
    have added (OLD_LINES: the base version's lines, None for all of them new; OLD_READER: a changed file's base
    version, for the base's tables)."""
    before = old_lines()
    consts = constants(module, reader)
    found_candidates = candidates(module, consts, changed_lines(module, before))
    if not found_candidates:
        return []
    if before:
        found_candidates = [c for c in found_candidates if _new(c, module, before)]
        if not found_candidates:
            return []
        base = old_module()
        if base is not None:  # a line re-spelled, not changed (a formatter's quotes): the base's same branch
            kept = {_branch_key(n) for n in ast.walk(base.tree) if isinstance(n, (ast.If, ast.IfExp))}
            found_candidates = [c for c in found_candidates if c.table is not None or _branch_key(c.node) not in kept]
            if any(c.table is not None for c in found_candidates):
                same = _base_tables(base, old_reader)
                found_candidates = [c for c in found_candidates if c.table is None or _table_key(c) not in same]
            if not found_candidates:
                return []
    calls = calls_of({c.function for c in found_candidates}, _needles(found_candidates))
    if not calls:
        return []
    found = []
    nowhere: ast.AST = ast.Lambda(
        args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]), body=ast.Constant(None)
    )
    had: set[tuple[str, str]] | None = None
    for candidate in found_candidates:
        seen = calls.get(candidate.function)
        if not seen:
            continue
        func = candidate.func or nowhere
        result = learned(candidate, func, seen, consts)
        if result is None:
            continue
        if candidate.table is None:
            # The base already answered this in a branch of the same function (`if code.lower() == "usd": return
            # "USD"`): the change edited its condition (a dropped `.lower()` is a plain bug), it did not learn it.
            had = _base_answers(old_module()) if had is None else had
            if (candidate.qualname, repr(result.call.expected)) in had:
                continue
        what = result.how.format(
            test=result.call.test or "a base test", input=repr(result.shown), expected=repr(result.call.expected)
        )
        message = f"{candidate.qualname} {what}: the code learned the test's answer, not the computation"
        line, col = module.position(candidate.node)
        key = ("OG966", candidate.qualname, source(candidate.node))
        found.append(Occurrence(key, line, col, "OG966", message))
    return found
