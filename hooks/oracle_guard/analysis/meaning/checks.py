"""What a check means, not how it is spelled.

oracle-shrink counts and ranks checks; this module answers the questions a
count cannot: can this check fail at all (a value compared with itself, a
check of the test's own inputs), and does it still look at the whole value
the base looked at (the actual value normalised, sliced or replaced by the
code's own result before comparing).  Every spelling reduces to one form
first: ``self.assertEqual(a, b)``, ``assert a == b`` and a project helper
whose body asserts ``a == b`` are the same comparison.

Nothing here imports a hook; oracle-shrink hands in the module's names,
constants and functions.

This module compares what checks look at (OG303, OG314); its parts are
meaning_values.py (the vocabulary, ``Scope``, what a function binds),
meaning_fails.py (can a check fail at all) and meaning_globs.py (globs over test
data), re-exported here where callers ask.
"""

from __future__ import annotations

import ast

from oracle_guard.analysis.meaning.fails import _builtin_name, _helper
from oracle_guard.analysis.meaning.fails import as_condition as as_condition
from oracle_guard.analysis.meaning.fails import call_never_fails as call_never_fails
from oracle_guard.analysis.meaning.fails import inlined_checks as inlined_checks
from oracle_guard.analysis.meaning.fails import never_fails as never_fails
from oracle_guard.analysis.meaning.fails import same_or_literal_args as same_or_literal_args
from oracle_guard.analysis.meaning.globs import glob_matches as glob_matches
from oracle_guard.analysis.meaning.globs import glob_sites as glob_sites
from oracle_guard.analysis.meaning.values import EQUALITY_HELPERS as EQUALITY_HELPERS
from oracle_guard.analysis.meaning.values import INPUT_BUILTINS as INPUT_BUILTINS
from oracle_guard.analysis.meaning.values import NORMALISERS as NORMALISERS
from oracle_guard.analysis.meaning.values import NORMALISING_METHODS as NORMALISING_METHODS
from oracle_guard.analysis.meaning.values import PARSERS as PARSERS
from oracle_guard.analysis.meaning.values import PREFIX_METHODS as PREFIX_METHODS
from oracle_guard.analysis.meaning.values import STRATEGY_TYPES as STRATEGY_TYPES
from oracle_guard.analysis.meaning.values import TYPE_NAMES as TYPE_NAMES
from oracle_guard.analysis.meaning.values import UNITTEST_OPS as UNITTEST_OPS
from oracle_guard.analysis.meaning.values import VALUE_BUILTINS as VALUE_BUILTINS
from oracle_guard.analysis.meaning.values import Cmp as Cmp
from oracle_guard.analysis.meaning.values import Scope as Scope
from oracle_guard.analysis.meaning.values import _literal
from oracle_guard.analysis.meaning.values import bindings as bindings
from oracle_guard.analysis.meaning.values import input_types as input_types
from oracle_guard.analysis.meaning.values import local_values as local_values
from oracle_guard.analysis.pysource import FunctionNode

# -- comparisons, normalised or replaced -------------------------------------------------


def peel(node: ast.expr, env: dict[str, ast.expr], scope: Scope, depth: int = 0) -> tuple[ast.expr, tuple[str, ...]]:
    """(core, transforms outermost first): ``sorted(r.strip())`` -> (r, ('sorted', '.strip'))."""
    chain: list[str] = []
    for _ in range(12):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in NORMALISERS
            and node.args
            and _builtin_name(node.func.id, scope)
        ):
            chain.append(node.func.id)
            node = node.args[0]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in NORMALISING_METHODS
        ):
            chain.append("." + node.func.attr)
            node = node.func.value
        elif isinstance(node, ast.Call) and node.args and (scope.names.qualify(node.func) or "") in PARSERS:
            chain.append(scope.names.qualify(node.func) or "")
            node = node.args[0]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "filter"
            and len(node.args) == 2
            and _builtin_name("filter", scope)
        ):
            chain.append("filter")
            node = node.args[1]
        elif (
            isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp))
            and len(node.generators) == 1
            and node.generators[0].ifs
        ):
            chain.append("[... if ...]")  # only the items a condition lets through
            node = node.generators[0].iter
        elif isinstance(node, ast.Subscript) and (isinstance(node.slice, ast.Slice) or _literal(node.slice)):
            chain.append("[:]" if isinstance(node.slice, ast.Slice) else "[]")
            node = node.value
        elif isinstance(node, ast.Name) and node.id in env and depth < 4 and not _literal(env[node.id]):
            node = env[node.id]
            depth += 1
        else:
            break
    return node, tuple(chain)


def comparisons(fn: FunctionNode, scope: Scope, cls: ast.ClassDef | None) -> list[Cmp]:
    """Every comparison FN's checks make, helpers of this module inlined once."""
    env = bindings(fn, scope)[0]
    out: list[Cmp] = []

    def add(test: ast.AST, site: ast.AST, depth: int) -> None:
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            for v in test.values:
                add(v, site, depth)
        elif isinstance(test, ast.Compare) and len(test.ops) == 1:
            op = type(test.ops[0]).__name__
            (lc, lch), (rc, rch) = peel(test.left, env, scope), peel(test.comparators[0], env, scope)
            out.append(Cmp(lc, lch, op, rc, rch, site))
        elif (
            isinstance(test, ast.Call)
            and isinstance(test.func, ast.Attribute)
            and test.func.attr in PREFIX_METHODS
            and test.args
        ):
            lc, lch = peel(test.func.value, env, scope)
            rc, rch = peel(test.args[0], env, scope)
            out.append(Cmp(lc, lch + ("." + test.func.attr,), "Eq", rc, rch, site))
        elif isinstance(test, ast.Call) and depth < 2:
            func = test.func
            attr = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            cond = as_condition(test, attr) if attr.startswith("assert") else None
            if cond is None and attr in EQUALITY_HELPERS and len(test.args) >= 2:
                cond = ast.Compare(left=test.args[0], ops=[ast.Eq()], comparators=[test.args[1]])
            if cond is not None:
                add(cond, site, depth)
                return
            helper = _helper(test, scope, cls)
            if helper is not None:
                for _, inner in inlined_checks(helper, test):
                    add(inner, site, depth + 1)

    for node in ast.walk(fn):
        if isinstance(node, ast.Assert):
            add(node.test, node, 0)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            add(node.value, node, 0)
    return out


_EXACT = ("Eq", "Is")


def compare(
    base_fn: FunctionNode,
    new_fn: FunctionNode,
    base_scope: Scope,
    new_scope: Scope,
    base_cls: ast.ClassDef | None,
    new_cls: ast.ClassDef | None,
) -> list[tuple[ast.AST, str, str]]:
    """(new node, code, message) for comparisons that no longer look at what the base looked at."""
    new = comparisons(new_fn, new_scope, new_cls)
    # Only a transform on a side, or a side compared with itself, can be reported: most checks have neither.
    if not any(
        c.op in _EXACT
        and (c.lchain or c.rchain or (type(c.left) is type(c.right) and ast.dump(c.left) == ast.dump(c.right)))
        for c in new
    ):
        return []
    base = comparisons(base_fn, base_scope, base_cls)
    if not base:
        return []
    # core -> chains the base compared it exactly with, and whether it had a self-comparison
    base_chains: dict[str, set[tuple[str, ...]]] = {}
    base_other: dict[str, str] = {}  # core -> what the base compared it with (not itself)
    base_self: set[str] = set()
    for c in base:
        if c.op not in _EXACT:
            continue
        lk, rk = ast.dump(c.left), ast.dump(c.right)
        if lk == rk:
            base_self.add(lk)
            continue
        for core, chain, other, other_chain in (
            (c.left, c.lchain, c.right, c.rchain),
            (c.right, c.rchain, c.left, c.lchain),
        ):
            if not _literal(core):
                key = ast.dump(core)
                base_chains.setdefault(key, set()).add(chain)
                base_other.setdefault(key, _show(other, other_chain))
    new_chains: dict[str, set[tuple[str, ...]]] = {}
    new_other: set[str] = set()
    for c in new:
        if c.op in _EXACT and ast.dump(c.left) != ast.dump(c.right):
            for core, chain in ((c.left, c.lchain), (c.right, c.rchain)):
                new_chains.setdefault(ast.dump(core), set()).add(chain)
                new_other.add(ast.dump(core))
    # `r == [(a, b)]` taken apart into `len(r) == 1` and `r[0][0] == a`, ...: as strong, item by item.
    decomposed = {
        key
        for key, chains in new_chains.items()
        if ("len",) in chains and any(ch and all(t == "[]" for t in ch) for ch in chains)
    }
    out: list[tuple[ast.AST, str, str]] = []
    reported: set[int] = set()
    for c in new:
        if c.op not in _EXACT or id(c.node) in reported:
            continue
        lk, rk = ast.dump(c.left), ast.dump(c.right)
        if lk == rk and c.lchain == c.rchain:
            # The expected value is now the code's own result: `expected = f(x); assert f(x) == expected`.
            if lk in base_other and lk not in base_self and lk not in new_other:
                reported.add(id(c.node))
                out.append(
                    (
                        c.node,
                        "OG314",
                        f"expected value replaced by the code's own result: compares `{ast.unparse(c.left)}` with itself, "
                        f"where the base compared it with `{base_other[lk]}`; restore the base's expected value",
                    )
                )
            continue
        for core, chain in ((c.left, c.lchain), (c.right, c.rchain)):
            key = ast.dump(core)
            was = base_chains.get(key)
            if not chain or was is None or chain in was or new_chains.get(key, set()) & was:
                continue
            if key in decomposed and chain[0] in ("len", "[]") and all(t == "[]" for t in chain[1:]):
                continue
            shown = ", ".join(t if t.startswith((".", "[")) else t + "()" for t in chain)
            before = _show(core, min(was, key=len))
            reported.add(id(c.node))
            out.append(
                (
                    c.node,
                    "OG303",
                    f"the actual value is normalised before comparing ({shown}) where the base compared "
                    f"`{before}` as it is; compare the whole value as the base did, or normalise both sides at the base first",
                )
            )
            break
    return out


def _show(core: ast.expr, chain: tuple[str, ...]) -> str:
    text = ast.unparse(core)
    for t in reversed(chain):
        text = f"{text}{t}()" if t.startswith(".") else f"{text}{t}" if t.startswith("[") else f"{t}({text})"
    return text.replace("[:]", "[...]").replace("[]", "[...]")[:80]
