"""oracle-shrink's comparisons: how one function's checks got weaker than its base version's.

Each takes the facts (oracle_guard.analysis.checkfacts) of a function at the base and in the
change and returns findings on the new side: a strong comparison relaxed
(OG303), a tolerance loosened (OG304), a failure swallowed (OG305), an
expected exception broadened (OG306), parametrize cases or glob matches lost
(OG307), a check that can never fail (OG308), an expected value rewritten
(OG314), a check that now looks elsewhere (oracle_guard.analysis.meaning.checks).  Hypothesis
settings and strategies are compared in oracle_guard.analysis.hypothesis.weakenings.  The
count of checks (OG301) and removed tests (OG302) are judged across the whole
change in oracle_guard.hook_ids.oracle_shrink, since checks may move between tests.
"""

from __future__ import annotations

import ast
import os
import posixpath
from collections import Counter
from collections.abc import Iterable
from typing import cast

from oracle_guard.analysis import checknames, expectations, outcomes
from oracle_guard.analysis.checkfacts import Facts, RaiseSite, Side, builtin_exception, finding_at, who_of
from oracle_guard.analysis.hypothesis.weakenings import compare_hypothesis_test
from oracle_guard.analysis.meaning import checks as meaning
from oracle_guard.analysis.pysource import TRY_NODES, FunctionNode
from oracle_guard.analysis.sourcetext import spells
from oracle_guard.repo import changes, git
from oracle_guard.reporting.report import Finding

STRENGTH = {3: "exact comparison", 2: "ordering or membership check", 1: "truthiness or type check", 0: "type check"}


def compare_function(base: Facts, new: Facts, base_side: Side, new_side: Side) -> list[Finding]:
    """Weakenings of one function that cannot be paid back by checks elsewhere (all but the count)."""
    out: list[Finding] = []
    who = who_of(new)
    # strong comparisons relaxed
    for key, (rank, _) in base.subjects.items():
        now = new.subjects.get(key)
        if now is not None and now[0] < rank:
            shown = new_side.module.segment(now[1])
            out.append(
                finding_at(
                    new_side,
                    now[1],
                    "OG303",
                    f"{who}: `{shown}` is weaker than the base's {STRENGTH[rank]} of the same value",
                )
            )
        elif now is not None:
            # The same value checked as often, one check of it weaker (`== 0` -> `in (0, 1)`,
            # `a` -> `a or b`) while a stronger copy elsewhere keeps the top rank.
            was = sorted(base.subject_ranks.get(key, []), key=lambda p: p[0])
            now_all = sorted(new.subject_ranks.get(key, []), key=lambda p: p[0])
            pair = (
                next(((b, n) for b, n in zip(was, now_all) if n[0] < b[0]), None) if len(was) == len(now_all) else None
            )
            if pair is not None:
                shown = new_side.module.segment(pair[1][1])
                out.append(
                    finding_at(
                        new_side,
                        pair[1][1],
                        "OG303",
                        f"{who}: `{shown}` is weaker than the base's {STRENGTH[pair[0][0]]} of the same value",
                    )
                )
    # an exact comparison turned into one within a tolerance
    for key, node in new.approximate.items():
        old_rank = base.subjects.get(key)
        if old_rank is not None and old_rank[0] == 3 and key not in base.approximate:
            out.append(
                finding_at(
                    new_side,
                    node,
                    "OG304",
                    f"{who}: `{new_side.module.segment(node)}` compares within a tolerance where the base compared exactly",
                )
            )
    # tolerances
    pool: dict[str, list[dict[str, float]]] = {}
    for key, values, _ in base.tolerances:
        pool.setdefault(key, []).append(values)
    for key, values, node in new.tolerances:
        olds = pool.get(key)
        if not olds:
            continue
        old = olds.pop(0)
        for param, value in values.items():
            if param in old and value > old[param] * (1 + 1e-9):
                out.append(
                    finding_at(
                        new_side,
                        node,
                        "OG304",
                        f"{who}: tolerance `{param}` loosened from {_fmt(old[param])} to {_fmt(value)} in `{new_side.module.segment(node)}`",
                    )
                )
                break
    # swallowed failures
    base_swallows = Counter(k for k, _ in base.swallows)
    for key, node in new.swallows:
        if base_swallows[key] > 0:
            base_swallows[key] -= 1
            continue
        out.append(finding_at(new_side, node, "OG305", f"{who}: new `{key}` around checks swallows their failures"))
    # broadened raises/warns
    out += _compare_raises(base, new, new_side, who)
    # checks moved into a shared helper that loops over names: every name the base compared is still passed
    out += _names_left_out(base, new, base_side, new_side, who)
    # parametrize cases lost
    for key, (cases, node) in new.parametrize.items():
        base_cases = base.parametrize.get(key)
        if base_cases is None or base_cases[0] is None or cases is None:
            continue
        if len(cases) < len(base_cases[0]) and not set(base_cases[0]) <= set(
            cases
        ):  # dropping a duplicate case loses nothing
            lost = list((Counter(base_cases[0]) - Counter(cases)).elements())
            shown = f" (lost `{lost[0]}`)" if lost else ""
            out.append(
                finding_at(
                    new_side,
                    node,
                    "OG307",
                    f"{who}: parametrize '{key}' has {len(cases)} cases, base had {len(base_cases[0])}{shown}",
                )
            )
    # hypothesis
    out += compare_hypothesis_test(base, new, base_side, new_side, who)
    # checks that always ran now run only under a new `if` (no else)
    if new.is_test:
        out += _now_conditional(base, new, new_side, who)
    # expected values rewritten in place (same check, other constants)
    if new.is_test:
        loosened = {f.line for f in out if f.code == "OG304"}  # a loosened tolerance is reported once
        for old_check, new_check in expectations.rewritten(base.node, new.node):
            if new_side.module.position(new_check.node)[0] in loosened:
                continue
            shown = new_side.module.segment(new_check.node)
            out.append(
                finding_at(
                    new_side,
                    new_check.node,
                    "OG314",
                    f"{who}: {expectations.describe(old_check, new_check)} in `{shown}`; restore the base's expected value, or change it in its own reviewed commit",
                )
            )
        # the same call now expected to raise where the base checked its value, or the reverse
        for node, message in outcomes.changed(
            base.node, new.node, base_side.analyzer.scope, new_side.analyzer.scope, base.cls, new.cls
        ):
            out.append(
                finding_at(
                    new_side,
                    node,
                    "OG314",
                    f"{who}: {message}; fix the code so the base's check passes, or change the expectation in its "
                    "own reviewed commit",
                )
            )
    out += _meaning_findings(base, new, base_side, new_side, who, out)
    return out


def _meaning_findings(
    base: Facts, new: Facts, base_side: Side, new_side: Side, who: str, found: list[Finding]
) -> list[Finding]:
    """Comparisons that no longer look at what the base looked at (one finding per check site)."""
    if not (new.texts - base.texts) and expectations.same_setup(base.node, new.node):
        return []  # no check is new and nothing they read changed: nothing can look elsewhere now
    seen = {(f.line, f.col) for f in found}
    taut = {id(n) for _, n in new.tautologies}
    out = []
    for node, code, message in meaning.compare(
        base.node, new.node, base_side.analyzer.scope, new_side.analyzer.scope, base.cls, new.cls
    ):
        finding = finding_at(new_side, node, code, f"{who}: {message}")
        if (finding.line, finding.col) not in seen and id(node) not in taut:
            seen.add((finding.line, finding.col))
            out.append(finding)
    return out


def _now_conditional(base: Facts, new: Facts, new_side: Side, who: str) -> list[Finding]:
    """``assert x`` that ran unconditionally at the base, now only inside ``if <new condition>:``."""

    def asserts(fn: FunctionNode) -> Iterable[tuple[ast.Assert, ast.If | None]]:
        stack: list[tuple[ast.AST, ast.If | None]] = [(s, None) for s in fn.body]
        while stack:
            node, guard = stack.pop()
            if isinstance(node, ast.Assert):
                yield node, guard
            elif isinstance(node, ast.If):
                stack += [(s, guard or node) for s in node.body + node.orelse]
            elif isinstance(node, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While) + TRY_NODES):
                block = cast("ast.For", node)  # each of these has a body; orelse and finalbody vary
                inner = block.body + getattr(node, "orelse", []) + getattr(node, "finalbody", [])
                stack += [(s, guard) for s in inner]

    always = Counter(ast.dump(a.test) for a, guard in asserts(base.node) if guard is None)
    now_always = Counter(ast.dump(a.test) for a, guard in asserts(new.node) if guard is None)
    base_conditions = {ast.dump(n.test) for n in ast.walk(base.node) if isinstance(n, (ast.If, ast.While))}
    out = []
    for node, guard in sorted(asserts(new.node), key=lambda p: p[0].lineno):
        k = ast.dump(node.test)
        if guard is None or guard.orelse or ast.dump(guard.test) in base_conditions or always[k] <= now_always[k]:
            continue
        now_always[k] += 1
        out.append(
            finding_at(
                new_side,
                node,
                "OG301",
                f"{who}: `{new_side.module.segment(node)}` always ran at the base, now only if `{ast.unparse(guard.test)}`",
            )
        )
    return out


def _names_left_out(base: Facts, new: Facts, base_side: Side, new_side: Side, who: str) -> list[Finding]:
    """OG301 when a test now passes names to a looping helper, or a function loops over names it spells, and
    leaves out one its base version compared."""
    passes = new.is_test and checknames.passes_names(new_side.analyzer, new.node)
    if not (passes or checknames.loops_over_names(new_side.analyzer, new.node, new.cls)):
        return []
    now, via_loop = checknames.compared_names(new_side.analyzer, new.node, new.cls)
    if not via_loop:
        return []
    was, _ = checknames.compared_names(base_side.analyzer, base.node, base.cls)
    lost = sorted(was - now)
    if not lost:
        return []
    shown = ", ".join(f"`{name}`" for name in lost[:5])
    return [
        finding_at(
            new_side,
            new.node,
            "OG301",
            f"{who} no longer checks {shown}: the base compared {'it' if len(lost) == 1 else 'them'}, "
            f"and the names {'passed to the shared helper' if passes else 'it loops over'} leave "
            f"{'it' if len(lost) == 1 else 'them'} out",
        )
    ]


def _fmt(value: float) -> str:
    return f"{value:g}"


def _compare_raises(base: Facts, new: Facts, new_side: Side, who: str) -> list[Finding]:
    out = []
    by_body: dict[str, list[RaiseSite]] = {}
    for site in base.raises:
        by_body.setdefault(site.body, []).append(site)
    unmatched_new = []
    pairs = []
    for site in new.raises:
        olds = by_body.get(site.body)
        if olds:
            pairs.append((olds.pop(0), site))
        else:
            unmatched_new.append(site)
    unmatched_base = [s for sites in by_body.values() for s in sites]
    if len(unmatched_base) == len(unmatched_new):
        pairs += list(zip(unmatched_base, unmatched_new))
    for old, site in pairs:
        if old.kind != site.kind and not (
            old.kind in ("raises", "assertRaises") and site.kind in ("raises", "assertRaises")
        ):
            continue
        wider = broadened_type(old.types, site.types)
        if wider:
            # One finding per site: a dropped `match=` beside a broadened type is part of it.
            lost = loosened_match(old.match, old.has_match, site.match, site.has_match)
            also = f", and {lost}" if lost else ""
            shown = new_side.module.segment(site.node)
            what = "warning" if site.kind == "warns" else "exception"
            if _sibling(wider, old.types):
                out.append(
                    finding_at(
                        new_side,
                        site.node,
                        "OG306",
                        f"{who}: `{shown}` expects {wider} where the base expected {', '.join(old.types)}{also}: "
                        f"a changed expectation (a behaviour change of the code, not a wider check); restore the base's {what}, or ship the behaviour change in its own reviewed commit",
                    )
                )
            else:
                out.append(
                    finding_at(
                        new_side,
                        site.node,
                        "OG306",
                        f"{who}: `{shown}` expects {wider}, broader than the base's {', '.join(old.types)}{also}; restore the base's {what}{' and its match=' if lost else ''}",
                    )
                )
            continue
        why = loosened_match(old.match, old.has_match, site.match, site.has_match)
        if why:
            out.append(
                finding_at(new_side, site.node, "OG306", f"{who}: {why} in `{new_side.module.segment(site.node)}`")
            )
    return out


def _sibling(new: str, base_types: tuple[str, ...]) -> bool:
    """NEW is a builtin exception related to none of BASE_TYPES (RuntimeError -> ValueError)."""
    n = builtin_exception(new)
    if n is None:
        return False
    for b in base_types:
        b_cls = builtin_exception(b)
        if b_cls is None:
            ancestors = _project_ancestors(b.rsplit(".", 1)[-1])
            known = [builtin_exception(a) for a in ancestors]
            if not any(k is not None for k in known) or any(k is not None and issubclass(k, n) for k in known):
                return False  # unknown lineage, or a builtin ancestor of the project's exception: broader
        elif issubclass(b_cls, n) or issubclass(n, b_cls):
            return False
    return True


def broadened_type(base_types: tuple[str, ...], new_types: tuple[str, ...]) -> str | None:
    """A type in NEW_TYPES that catches more than BASE_TYPES did, or None."""
    if not base_types:
        return None
    for t in new_types:
        if t in base_types:
            continue
        t_cls = builtin_exception(t)
        narrower = False
        for b in base_types:
            b_cls = builtin_exception(b)
            if t_cls is not None and b_cls is not None and issubclass(t_cls, b_cls):
                narrower = True
            elif t_cls is None and b_cls is not None:
                narrower = True  # a project exception in place of a builtin: (almost always) a subclass
        if narrower:
            continue
        if t_cls is not None:
            return t  # a builtin that is no subclass of what was expected: wider or unrelated
        if len(new_types) > len(base_types):
            return t
        if any(t.rsplit(".", 1)[-1] in _project_ancestors(b.rsplit(".", 1)[-1]) for b in base_types):
            return t  # the project's own base class of what was expected
    return None


_ANCESTORS: dict[tuple[str, str], set[str]] = {}


def _project_ancestors(name: str, depth: int = 0) -> set[str]:
    """Base-class names of the repository's own class NAME (by `git grep`, found once)."""
    key = (os.getcwd(), name)
    if key in _ANCESTORS or depth > 6 or not name.isidentifier():
        return _ANCESTORS.get(key, set())
    _ANCESTORS[key] = set()
    out = git.run("grep", "-h", "-E", rf"^\s*class {name}\(", "--", "*.py", check=False)
    found: set[str] = set()
    for line in os.fsdecode(out).splitlines()[:5]:
        try:
            tree = ast.parse(line.strip().rstrip(":") + ": pass")
        except SyntaxError:
            continue
        for base in getattr(tree.body[0], "bases", []):
            parent = ast.unparse(base).rsplit(".", 1)[-1]
            if parent != name:
                found |= {parent} | _project_ancestors(parent, depth + 1)
    _ANCESTORS[key] = found
    return found


def loosened_match(base: str | None, base_has: bool, new: str | None, new_has: bool) -> str | None:
    if not base_has or base is None:
        return None
    if not new_has:
        return f"`match={base!r}` removed"
    if new is None or new == base:
        return None
    if new in ("", ".*", ".+", ".*?", "^.*$", "(?s).*"):
        return f"`match` loosened from {base!r} to {new!r}"
    if matches_any_message(new) and not matches_any_message(base):
        return f"`match` loosened from {base!r} to {new!r}, which matches any message"
    if new in base and len(new) < len(base) and any(ch.isalnum() for ch in base.replace(new, "", 1)):
        return f"`match` loosened from {base!r} to {new!r}"  # words cut, not just punctuation
    return None


# Messages no honest pattern for one error matches all of: empty, one character, digits only, a line
# break, non-ASCII, and words unlike any message.  pytest.raises/warns and assertRaisesRegex use re.search.
_ANY_MESSAGE_PROBES = ("", "x", "0", "\n", "\u00e9\u4e2d", "zq# 9!", "unrelated text\nsecond line")


def matches_any_message(pattern: str) -> bool:
    """Whether PATTERN finds a match in every message (an empty alternative `msg|`, `(msg)?`, `.*`, `^`)."""
    import re

    try:
        compiled = re.compile(pattern)
    except (re.error, RecursionError, OverflowError, ValueError):
        return False  # not a pattern pytest could use either: the test fails on its own
    return all(compiled.search(probe) is not None for probe in _ANY_MESSAGE_PROBES)


def compare_globs(base: Side, new: Side, change_set: changes.ChangeSet) -> list[Finding]:
    """A glob over test data (parametrize over goldens) whose pattern now matches fewer of the base's files."""
    if not spells(new.module.source, b"glob"):
        return []
    old_sites, new_sites = (
        meaning.glob_sites(base.module.tree, base.module.names, base.module.source),
        meaning.glob_sites(new.module.tree, new.module.names, new.module.source),
    )
    if (
        len(old_sites) != len(new_sites)
        or all(o[1] == n[1] for o, n in zip(old_sites, new_sites))
        or not change_set.base
    ):
        return []
    files = os.fsdecode(git.run("ls-tree", "-r", "-z", "--name-only", change_set.base, check=False)).split("\0")
    near = posixpath.dirname(base.path)
    out = []
    for (_, old_pattern, old_words, old_rec), (node, new_pattern, new_words, new_rec) in zip(old_sites, new_sites):
        if old_pattern == new_pattern:
            continue
        was = meaning.glob_matches(files, old_pattern, old_words, old_rec, near)
        now = meaning.glob_matches(was, new_pattern, new_words, new_rec, near)
        if was and len(now) < len(was):
            lost = sorted(was - now)
            out.append(
                finding_at(
                    new,
                    node,
                    "OG307",
                    f"glob `{new_pattern}` matches {len(now)} of the {len(was)} files the base's `{old_pattern}` matched "
                    f"(lost {lost[0]}{' and more' if len(lost) > 1 else ''}): fewer cases; restore the base's pattern",
                )
            )
    return out


def new_tautologies(base: Facts | None, new: Facts, new_side: Side) -> list[Finding]:
    seen = Counter(text for text, _ in base.tautologies) if base else Counter()
    out = []
    for text, node in new.tautologies:
        if seen[text] > 0:
            seen[text] -= 1
            continue
        why = new.why.get(id(node), "")
        shown = " ".join(text.split())[:80]
        said = (
            f"`{shown}` {why}"
            if why.startswith("looks only")
            else f"`{shown}` can never fail" + (f" ({why})" if why and why != "it is always true" else "")
        )
        out.append(
            finding_at(new_side, node, "OG308", f"{who_of(new)}: {said}; check a result of the code under test instead")
        )
    return out


def repeat_after_action(fn: FunctionNode, texts: Counter[str]) -> bool:
    """Whether some assert in TEXTS comes again after a statement that can change
    what it looks at (a call, an assignment, a raise): a new check, not a repeat."""
    occurrences: dict[str, list[int]] = {}
    actions: list[int] = []
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue  # a definition runs nothing yet
        if isinstance(node, ast.Assert):
            occurrences.setdefault(" ".join(("assert " + ast.unparse(node.test)).split()), []).append(node.lineno)
        elif (
            isinstance(node, ast.stmt)
            and not isinstance(node, ast.Pass)
            and not _is_check_call(node)
            and not any(isinstance(getattr(node, f, None), list) for f in ("body", "handlers"))
        ):
            actions.append(node.lineno)
        for field_name in ("body", "orelse", "handlers", "finalbody"):
            stack.extend(getattr(node, field_name, None) or [])
        if isinstance(node, (ast.With, ast.AsyncWith)):
            actions.append(node.lineno)  # entering a context runs code
    for text in texts:
        lines = sorted(occurrences.get(text, []))
        if any(any(a < b and a > prev for a in actions) for prev, b in zip(lines, lines[1:])):
            return True
    return False


def _is_check_call(stmt: ast.stmt) -> bool:
    """``self.assertX(...)`` / ``assert_frame_equal(...)``: looks, changes nothing."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    func = stmt.value.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name.startswith("assert")
