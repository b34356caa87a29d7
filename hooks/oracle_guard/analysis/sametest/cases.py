"""The same test, moved, renamed, merged or split: one notion for every hook.

oracle-shrink (OG302, a test removed) and collection-snapshot (OG801, an id
no longer collected) both ask this module whether a test of the base lives
on in the change; neither calls a test that does a removal.

A test is a list of *cases*: one per parameter set of its
``@pytest.mark.parametrize`` decorators (stacked ones and a class's multiply),
each with its parameter values written into the body, and with pytest's id
for it when that can be told statically.  A case of the base lives on when

1. a new case has the same body: a rename, a move into a class or another
   file, several tests merged into one parametrized test (also when the
   function under test is itself a parameter); or
2. every one of its checks reappears in new cases: a test split in several,
   a loop over literal values turned into ``parametrize``, checks folded into
   a grown test.  A check is compared as written with the parameters and the
   loop values put in, or with single-assignment locals inlined too
   (``r = f(1); assert r == 2`` is ``assert f(1) == 2``, ``v, k = f(1)``
   makes ``v`` ``f(1)[0]``), a tuple parameter's items indexed in
   (``expected[0]``), and a check of a tuple as one check per item
   (``assert f(1) == (1, "int")`` is ``f(1)[0] == 1`` and ``f(1)[1] == "int"``);
   each new check pays for one lost check only.  A case without checks lives
   on only by (1).

Nothing is imported: only the changed files are parsed, and only when a test
went missing.

This module builds the cases and says which live on; its parts are
sametest_params.py (parameter sets and pytest's ids), sametest_spelling.py (one
spelling for bodies and checks) and sametest_checks.py (a case's checks).
"""

from __future__ import annotations

import ast
import copy
import sys
from collections.abc import Iterable, Sequence
from typing import Callable, NamedTuple, cast

from oracle_guard.analysis.pysource import FunctionNode, Module, SourceError
from oracle_guard.analysis.sametest.checks import _Checks, _looked_at, _module_helpers, _opaque, _pinned, _text
from oracle_guard.analysis.sametest.params import MAX_CASES, _constants, _Param, _parameter_sets
from oracle_guard.analysis.sametest.spelling import _body, _Inline, _locals, _put, split_equality
from oracle_guard.repo.paths import PYTHON_SUFFIXES


class Case(NamedTuple):
    owner: str  # "path::Class::name"
    id: str | None  # pytest's parameter id ("" when not parametrized); None when it cannot be told
    body: str  # the body with the parameters written in, docstring aside
    checks: tuple[frozenset[str], ...]  # per check: its texts (as written, with locals inlined)
    weight: int = 1  # how many collected ids it stands for (several when the parameters are unknown)
    # For a case whose checks a project helper makes (``self.assertManyResults(f, args, results)``):
    # the names its checks look at, outside its own locals; empty when every check is written out.
    opaque: frozenset[str] = frozenset()
    subjects: frozenset[str] = frozenset()  # the names its checks look at (see `opaque`)
    # The body with calls of the module's argument-free helpers written out, when that differs:
    # two tests merged into one whose parameters are helpers holding the old bodies.
    inlined: str = ""

    def keys(self) -> tuple[str, ...]:
        return (self.body, self.inlined) if self.inlined else (self.body,)


# -- finding a test -----------------------------------------------------------------


def find_test(tree: ast.Module, qualname: str) -> tuple[FunctionNode, list[ast.ClassDef]] | None:
    """The function QUALNAME (``Class.Inner.test_x``) names, with its classes outermost first."""
    body: list[ast.stmt] = tree.body
    classes: list[ast.ClassDef] = []
    parts = qualname.split(".")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        found: FunctionNode | ast.ClassDef | None = None
        for node in body:
            if last and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == part:
                found = node  # a later definition wins, as at import time
            elif not last and isinstance(node, ast.ClassDef) and node.name == part:
                found = node
            elif isinstance(node, ast.Delete) and any(isinstance(t, ast.Name) and t.id == part for t in node.targets):
                found = None  # `del test_x`: never collected
        if found is None:
            return None
        if not isinstance(found, ast.ClassDef):  # the last part: the function
            return found, classes
        classes.append(found)
        body = found.body
    return None


def split_id(node_id: str) -> tuple[str, str, str] | None:
    """``tests/t.py::C::test_x[1-a]`` -> (``tests/t.py``, ``C.test_x``, ``1-a``); None for other ids."""
    head, bracket, params = node_id.partition("[")
    if bracket and not params.endswith("]"):
        return None
    parts = head.split("::")
    if len(parts) < 2 or not parts[0] or not all(p.isidentifier() for p in parts[1:]):
        return None
    return parts[0], ".".join(parts[1:]), params[:-1] if bracket else ""


def cases(
    module: Module, qualname: str, owner: str | None = None, _cache: dict[int, dict[str, bool]] | None = None
) -> list[Case] | None:
    """The cases of test QUALNAME in MODULE; None when it is not defined there."""
    found = find_test(module.tree, qualname)
    if found is None:
        return None
    fn, classes = found
    constants = _constants(module.tree)
    owner = owner or f"{module.path}::{qualname.replace('.', '::')}"
    sets = _parameter_sets(fn, classes, module, constants)
    known = sets is not None
    if sets is None:
        sets = [_Param({}, None)]
    helpers = _cache.setdefault(id(module), _module_helpers(module)) if _cache is not None else _module_helpers(module)
    finder = _Checks(module, classes[-1] if classes else None, helpers)
    simple = _simple_helpers(module)
    local_values = _locals(fn)
    attributes = {
        t.id: n.value
        for n in (classes[-1].body if classes else [])
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    own = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs} | {
        n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    inline = _Inline(local_values, attributes)
    body = _body(fn)
    out = []
    for param in sets:
        written = [_put(s, param.values) for s in body]
        body_key = ast.dump(ast.Module(body=written, type_ignores=[]))  # type: ignore[arg-type]  # _put keeps a statement a statement
        inlined_key = ast.dump(ast.Module(body=_inline_helpers(written, simple), type_ignores=[])) if simple else ""  # type: ignore[arg-type]
        checks = []
        opaque: set[str] = set()
        subjects: set[str] = set()
        for site, env in finder.sites(body, param.values, [MAX_CASES]):
            for node in _each_item(site, inline, env):
                plain = _text(_put(node, env))
                inlined = _text(_put(inline.visit(copy.deepcopy(node)), env)) if local_values or attributes else plain
                checks.append(frozenset((plain, inlined, *_pinned(_put(inline.visit(copy.deepcopy(node)), env)))))
            node = site
            seen = _looked_at(_put(node, env), own)
            subjects |= seen
            if _opaque(node, module):
                opaque |= seen - {getattr(node.func, "attr", None) or getattr(node.func, "id", "")}
        out.append(
            Case(
                owner,
                param.id if known else None,
                body_key,
                tuple(checks),
                1,
                frozenset(opaque),
                frozenset(subjects),
                inlined_key if inlined_key != body_key else "",
            )
        )
    return out


def _each_item(site: ast.AST, inline: _Inline, env: dict[str, ast.expr]) -> list[ast.AST]:
    """A check of a tuple, one check per item (with its locals and parameters written in, as the tuple
    may only show then): `assert parse(s) == (1, "int")` is the two checks `value == 1`, `kind == "int"`."""
    split = split_equality(site)
    if len(split) == 1:
        written = split_equality(_put(inline.visit(copy.deepcopy(site)), env))
        return written if len(written) > 1 else [site]
    return split


def _simple_helpers(module: Module) -> dict[str, list[ast.stmt]]:
    """Module functions a call can be replaced by: no parameters, decorators, return or yield; bound once."""
    bound: dict[str, int] = {}
    for node in module.tree.body:
        for target in _bound_names(node):
            bound[target] = bound.get(target, 0) + 1
    out = {}
    for node in module.tree.body:
        if (
            isinstance(node, ast.FunctionDef)
            and not node.decorator_list
            and not node.name.startswith("test")
            and bound.get(node.name) == 1
            and not (node.args.posonlyargs or node.args.args or node.args.kwonlyargs)
            and node.args.vararg is None
            and node.args.kwarg is None
            and not any(isinstance(n, _LEAVES) for n in ast.walk(node))
        ):
            out[node.name] = [cast(ast.stmt, _put(s, {})) for s in _body(node)]  # _put keeps a statement a statement
    return out


_LEAVES = (ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)
_CLAUSE_TYPES: tuple[type[ast.AST], ...] = (
    ast.ExceptHandler,
    *((ast.match_case,) if sys.version_info >= (3, 10) else ()),
)


def _bound_names(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]


def _inline_helpers(body: list[ast.stmt], helpers: dict[str, list[ast.stmt]], depth: int = 0) -> list[ast.stmt]:
    """BODY with each statement `helper()` replaced by the helper's own statements (two levels deep)."""
    out: list[ast.stmt] = []
    for stmt in body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if (
            depth < 2
            and isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id in helpers
            and not call.args
            and not call.keywords
        ):
            out += _inline_helpers(copy.deepcopy(helpers[call.func.id]), helpers, depth + 1)
            continue
        stmt = copy.copy(stmt)
        for field_name, value in ast.iter_fields(stmt):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                setattr(stmt, field_name, _inline_helpers(value, helpers, depth))
            elif isinstance(value, list) and value and isinstance(value[0], _CLAUSE_TYPES):
                clauses = [copy.copy(c) for c in value]
                for clause in clauses:
                    clause.body = _inline_helpers(clause.body, helpers, depth)
                setattr(stmt, field_name, clauses)
        out.append(stmt)
    return out


def changed_cases(base: Sequence[Case], new: Sequence[Case]) -> tuple[list[Case], list[Case]]:
    """(cases of BASE with no twin in NEW, cases of NEW with no twin in BASE): twins have the same body."""
    left = list(new)
    gone = []
    for case in base:
        twin = next((i for i, other in enumerate(left) if set(other.keys()) & set(case.keys())), None)
        if twin is None:
            gone.append(case)
        else:
            left.pop(twin)
    return gone, left


# -- the one notion -------------------------------------------------------------------


def reappearing(lost: Sequence[Case], pool: Sequence[Case]) -> list[bool]:
    """For each case of LOST, whether it lives on in POOL: the same body, or all its checks."""
    result = [False] * len(lost)
    used: set[int] = set()
    by_body: dict[str, list[int]] = {}
    for j, case in enumerate(pool):
        for key in case.keys():
            by_body.setdefault(key, []).append(j)
    for i, case in enumerate(lost):
        hit = next(
            (j for key in case.keys() for j in by_body.get(key, []) if j not in used and pool[j].weight >= case.weight),
            None,
        )
        if hit is not None:
            used.add(hit)
            result[i] = True
    slots: list[frozenset[str]] = []
    by_text: dict[str, list[int]] = {}
    for j, case in enumerate(pool):
        if j in used:
            continue
        for keys in case.checks:
            for text in keys:
                if not text.startswith("want:"):  # a weak check pays for nothing but its own spelling
                    by_text.setdefault("want:" + text[4:] if text.startswith("pin:") else text, []).append(len(slots))
            slots.append(keys)
    taken: set[int] = set()
    for i, case in enumerate(lost):
        if result[i] or not case.checks or case.weight > 1:
            continue
        mine: list[int] = []
        for keys in case.checks:
            # The strictest spelling first (locals inlined), then as written.
            order = sorted(keys, key=lambda k: (k.startswith("want:"), -len(k)))  # a tighter check of the value last
            slot = next((s for text in order for s in by_text.get(text, []) if s not in taken and s not in mine), None)
            if slot is None:
                break
            mine.append(slot)
        else:
            taken.update(mine)
            result[i] = True
    # A case whose checks a project helper makes lives on in a new test of the same file that
    # looks at everything its checks looked at, with at least as many checks x cases.
    budget: dict[str, int] = {}
    looks: dict[str, set[str]] = {}
    for j, case in enumerate(pool):
        if j not in used:
            budget[case.owner] = budget.get(case.owner, 0) + len(case.checks)
            looks.setdefault(case.owner, set()).update(case.subjects)
    for i, case in enumerate(lost):
        if result[i] or not case.opaque:
            continue
        here = case.owner.split("::", 1)[0]
        for owner, room in budget.items():
            if owner.split("::", 1)[0] == here and room >= len(case.checks) and case.opaque <= looks[owner]:
                result[i] = True
                break
    return result


# -- collected ids (collection-snapshot) ------------------------------------------------


def reappearing_ids(
    base_ids: Iterable[str],
    new_ids: Iterable[str],
    vanished: Sequence[str],
    appeared: Sequence[str],
    read_base: Callable[[list[str]], dict[str, bytes | None]],
    read_new: Callable[[list[str]], dict[str, bytes | None]],
    renamed: dict[str, str] | None = None,
) -> set[str]:
    """The ids of VANISHED whose test lives on in the tests behind APPEARED.

    The cases a vanished id stands for are found by pytest's id when the ids
    predicted for the whole test are exactly those collected; otherwise every
    case that has no twin in the test's new version must live on.
    """
    renamed = renamed or {}
    back = {new: old for old, new in renamed.items()}

    def groups(ids: Iterable[str]) -> dict[tuple[str, str], list[str]]:
        out: dict[tuple[str, str], list[str]] = {}
        for node_id in ids:
            parts = split_id(node_id)
            if parts is not None:
                out.setdefault(parts[:2], []).append(parts[2])
        return out

    lost_groups, new_groups = groups(vanished), groups(appeared)
    if not lost_groups or not new_groups:
        return set()
    all_base, all_new = groups(base_ids), groups(new_ids)
    base_paths = sorted({p for p, _ in lost_groups} | {back.get(p, p) for p, _ in new_groups})
    new_paths = sorted({p for p, _ in new_groups} | {renamed.get(p, p) for p, _ in lost_groups})
    base_modules = _modules(read_base, base_paths)
    new_modules = _modules(read_new, new_paths)
    cache: dict[int, dict[str, bool]] = {}

    def cases_at(modules: dict[str, Module | None], path: str, qualname: str) -> list[Case] | None:
        module = modules.get(path)
        return cases(module, qualname, f"{path}::{qualname.replace('.', '::')}", cache) if module is not None else None

    def select(
        found: list[Case], collected: list[str], wanted: list[str], other: list[Case] | None, mine_first: bool
    ) -> tuple[list[Case], bool]:
        """The cases behind WANTED ids (exact), else those with no twin in OTHER (not exact)."""
        predicted = [c.id for c in found if c.id is not None]
        exact = len(predicted) == len(found) and sorted(predicted) == sorted(collected)
        if exact:
            chosen = [c for c in found if c.id in set(wanted)]
        elif other is None:
            chosen = found
        else:
            chosen = changed_cases(found, other)[0] if mine_first else changed_cases(other, found)[1]
        if exact:
            return chosen, True
        weight = max(1, len(wanted) // max(len(chosen), 1))
        return [c._replace(weight=weight) if c.id is None else c for c in chosen], False

    pool: list[Case] = []
    for (path, qualname), params in new_groups.items():
        found = cases_at(new_modules, path, qualname)
        if found is None:
            continue
        before = cases_at(base_modules, back.get(path, path), qualname)
        chosen, _ = select(found, all_new.get((path, qualname), []), params, before, False)
        pool += chosen
    lost: list[tuple[tuple[str, str], list[Case], bool]] = []
    for (path, qualname), params in lost_groups.items():
        found = cases_at(base_modules, path, qualname)
        if found is None:
            continue
        after = cases_at(new_modules, renamed.get(path, path), qualname)
        chosen, exact = select(found, all_base.get((path, qualname), []), params, after, True)
        lost.append(((path, qualname), chosen, exact))
        bodies = {key for c in chosen for key in c.keys()}
        pool += [c for c in after or [] if bodies & set(c.keys())]  # a duplicate case removed: its twin still runs
    flat = [c for _, chosen, _ in lost for c in chosen]
    flags = iter(reappearing(flat, pool))
    alive: set[str] = set()
    for (path, qualname), chosen, exact in lost:
        mine = [next(flags) for _ in chosen]
        prefix = f"{path}::{qualname.replace('.', '::')}"
        params = lost_groups[(path, qualname)]
        if exact:
            ok = {c.id for c, flag in zip(chosen, mine) if flag}
            alive |= {prefix + (f"[{p}]" if p else "") for p in params if p in ok}
        elif all(mine):
            alive |= {prefix + (f"[{p}]" if p else "") for p in params}
    return alive


def _modules(read: Callable[[list[str]], dict[str, bytes | None]], paths: list[str]) -> dict[str, Module | None]:
    out: dict[str, Module | None] = {}
    for path, data in read([p for p in paths if p.endswith(PYTHON_SUFFIXES)]).items():
        try:
            out[path] = Module.from_source(path, data) if data is not None else None
        except SourceError:
            out[path] = None  # unreadable: nothing in it can vouch for a test
    return out
