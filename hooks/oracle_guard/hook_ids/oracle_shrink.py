"""oracle-shrink: reject tests whose checks got fewer or weaker since the base.

Each test (and each helper that holds checks) is compared with its own base
version: the same qualname in the file's base version, or the removed test
with the same body anywhere in the change (a rename or a move).  A check is
an ``assert``, a ``self.assert*``/``fail*`` call, ``pytest.raises``/``warns``/
``deprecated_call``/``fail``, a mock's ``assert_*`` call, numpy/pandas
``assert_*`` helpers, ``raise AssertionError``, or a call to a helper that
holds checks (same module, same class, or imported from a repository file),
so moving asserts into a helper keeps the count.  Splitting a test, merging
tests into one parametrized test or moving checks to another test keeps the
checks as long as they reappear somewhere in the change.
"""

from __future__ import annotations

import ast
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from oracle_guard.analysis import arranged
from oracle_guard.analysis.check_weakenings import compare_function, compare_globs, new_tautologies, repeat_after_action
from oracle_guard.analysis.checkfacts import Facts, Side, finding_at, parse_side, who_of
from oracle_guard.analysis.checksites import HelperIndex
from oracle_guard.analysis.hypothesis.weakenings import compare_module_strategies, compare_profiles
from oracle_guard.analysis.pysource import DEEP, Module, SourceError, body_fingerprint
from oracle_guard.analysis.sourcetext import opaque_lines
from oracle_guard.repo import changes, git
from oracle_guard.repo.context import HookContext
from oracle_guard.repo.filepairs import FilePairs, pair_files
from oracle_guard.repo.paths import PYTHON_SUFFIXES, TEST_FILES
from oracle_guard.reporting.report import Finding, guarded, notice
from oracle_guard.rules import args as hook_args

TRIGGER = re.compile(rb"def[ \t]|assert|raises|warns|given|settings|parametrize|hypothesis")
_TEST_DEF = re.compile(rb"def[ \t]+test")


def _may_hold(data: bytes | None, pattern: re.Pattern[bytes]) -> bool:
    """Whether DATA may hold what PATTERN finds (a file a text search cannot be trusted on may)."""
    return data is not None and (pattern.search(data) is not None or bool(opaque_lines(data)))


def _facts_needed(side: Side | None, other: Side | None) -> dict[str, Facts]:
    """Facts of SIDE's functions, leaving out those whose text and module context are unchanged."""
    if side is None:
        return {}
    index = side.analyzer.index()
    skip: set[str] = set()
    if other is not None and side.analyzer.context() == other.analyzer.context():
        other_index = other.analyzer.index()
        for q, (node, _, _) in index.items():
            if q in other_index and side.analyzer.text_of(node) == other.analyzer.text_of(other_index[q][0]):
                skip.add(q)
    side.facts = {
        q: side.analyzer.facts(q, node, cls, is_test, False)
        for q, (node, cls, is_test) in index.items()
        if q not in skip
    }
    return side.facts


@dataclass
class _Lost:
    """Checks a test lost that may have gone to another test in the change."""

    facts: Facts
    side: Side | None  # the new side, when the file still exists
    base_path: str
    texts: Counter[str]
    deficit: int
    removed: bool
    node: ast.AST | None  # where to report on the new side
    base_checks: int = 0
    base_line: int = 0  # where the first lost check stood at the base


_Pair = tuple[str, "Side | None", "Side | None", bool]  # (path, base side, new side, reported)
_Matched = tuple[Facts, Facts, Side, Side, bool]  # base facts, new facts, base side, new side, reported
_Removed = tuple[Facts, Side, "Side | None", bool]  # base facts, base side, new side, reported
_Added = tuple[Facts, Side]


@dataclass
class _Functions:
    """Every function of the changed files, by how it fared between the base and the change."""

    matched: list[_Matched] = field(default_factory=list)  # the same function on both sides
    added: list[_Added] = field(default_factory=list)  # tests only in the change
    removed: list[_Removed] = field(default_factory=list)  # tests and check helpers only at the base


def shrink_findings(paths: Sequence[str], change_set: changes.ChangeSet | None) -> list[Finding]:
    """Findings for PATHS, in phases: pair the files, pair their functions (by
    qualname, then renamed or moved tests by body), compare each pair, and report
    the checks that were lost and not paid back by checks new elsewhere in the change."""
    if change_set is None or change_set.base is None:
        return _without_base(paths, change_set)
    findings: list[Finding] = []
    wanted = set(paths)
    pairs = _parse_pairs(change_set, pair_files(change_set, paths, PYTHON_SUFFIXES), wanted, findings)
    functions = _pair_functions(pairs, change_set, findings)
    fresh, still_removed = _follow_moves(functions, wanted)
    lost, pool = _compare_matched(fresh, functions.matched, wanted, findings)
    findings += _arranged(pairs, functions.matched, change_set)
    # A removed test lives on when oracle_guard/analysis/sametest/cases.py finds it in the change (the notion
    # collection-snapshot shares): never paid for by the check pool below.
    gone = [
        _Lost(f, new_side, base_side.path, Counter(f.texts), f.checks * f.cases, True, None, f.checks)
        for f, base_side, new_side, reported in _not_living_on(still_removed, fresh, functions.matched)
        if reported
    ]
    unpaid = _unpaid(lost, pool) + gone
    # A removed test whose twin lives on, unchanged, in a file outside the change was a duplicate.
    unpaid = [item for item in unpaid if not (item.removed and _twin_elsewhere(change_set, item, functions.removed))]
    findings += [_lost_finding(item) for item in unpaid]
    return findings


def _without_base(paths: Sequence[str], change_set: changes.ChangeSet | None) -> list[Finding]:
    """No base to compare with (--all, or no commits yet): tautologies and swallowed failures only."""
    findings: list[Finding] = []
    reader = changes.ChangeSet(None, "", None) if change_set is None else change_set
    blobs = reader.read_new(list(paths))
    for path in paths:
        data = blobs.get(path)
        if data is None or not _may_hold(data, TRIGGER):
            continue
        try:
            side = parse_side(path, data, None)
        except SourceError as exc:
            findings.append(exc.finding(path))
            continue
        for f in side.analyzer.all_facts().values():
            findings += new_tautologies(None, f, side)
            findings += [
                finding_at(side, n, "OG305", f"{who_of(f)}: `{k}` around checks swallows their failures")
                for k, n in f.swallows
            ]
    return findings


def _parse_pairs(
    change_set: changes.ChangeSet, files: FilePairs, wanted: set[str], findings: list[Finding]
) -> list[_Pair]:
    """Both versions of every changed file that could hold tests or checks, parsed.

    A reported file that does not parse is a finding; a base that does not
    parse is compared as if new.  Deleted files are reported when they are test files.
    """
    base_helpers = HelperIndex(change_set.read_base)
    new_helpers = HelperIndex(change_set.read_new)
    pairs: list[_Pair] = []
    for path in files.paths:
        data = files.new.get(path)
        old = files.old_of[path]
        old_data = files.base_data(path)
        if data is None or data == old_data:
            continue
        reported = path in wanted
        if not reported and not _may_hold(data, _TEST_DEF) and not _may_hold(old_data, _TEST_DEF):
            continue
        if not _may_hold(data, TRIGGER) and not _may_hold(old_data, TRIGGER):
            continue
        try:
            new_side = parse_side(path, data, new_helpers)
        except SourceError as exc:
            if reported:
                findings.append(exc.finding(path))
            continue
        base_side = None
        if old_data is not None:
            try:
                base_side = parse_side(old or path, old_data, base_helpers)
            except SourceError:
                base_side = None
        pairs.append((path, base_side, new_side, reported))
    for path in files.deleted:
        data = files.base.get(path)
        if data is None or not _may_hold(data, _TEST_DEF):
            continue
        try:
            pairs.append((path, parse_side(path, data, base_helpers), None, bool(TEST_FILES.search(path))))
        except SourceError:
            continue
    return pairs


def _pair_functions(pairs: list[_Pair], change_set: changes.ChangeSet, findings: list[Finding]) -> _Functions:
    """Each file's functions matched by qualname; what only one side has is added or removed.

    New helpers are judged on their own (tautologies, swallowed failures), and
    module-level Hypothesis profiles, strategies and globs file by file.
    """
    functions = _Functions()
    for pair_path, base_side, new_side, reported in pairs:
        try:
            base_facts = _facts_needed(base_side, new_side)
            new_facts = _facts_needed(new_side, base_side)
        except RecursionError:  # nested past what the analysis can walk: it cannot pass unseen
            findings.append(Finding(pair_path, 1, 1, "OG001", DEEP))
            continue
        for q, f in new_facts.items():
            if q in base_facts and base_side is not None and new_side is not None:
                functions.matched.append((base_facts[q], f, base_side, new_side, reported))
            elif f.is_test:
                functions.added.append((f, new_side))  # type: ignore[arg-type]
            elif reported and new_side is not None:
                findings += new_tautologies(None, f, new_side)
                findings += [
                    finding_at(new_side, n, "OG305", f"{who_of(f)}: new `{k}` around checks swallows their failures")
                    for k, n in f.swallows
                ]
        for q, f in base_facts.items():
            if q not in new_facts and (f.is_test or f.checks > 0):
                functions.removed.append((f, base_side, new_side, reported))  # type: ignore[arg-type]
        if base_side is not None and new_side is not None and reported:
            findings += compare_profiles(base_side, new_side)
            findings += compare_module_strategies(base_side, new_side)
            findings += compare_globs(base_side, new_side, change_set)
    return functions


def _follow_moves(functions: _Functions, wanted: set[str]) -> tuple[list[_Added], list[_Removed]]:
    """A removed test whose body reappears under another name or file was renamed or moved:
    it joins the matched functions.  Returns the tests still new, and those still removed."""
    added = functions.added
    by_body: dict[str, list[int]] = {}
    for i, (f, _) in enumerate(added):
        if f.body_key:
            by_body.setdefault(f.body_key, []).append(i)
    used: set[int] = set()
    still_removed = []
    for f, base_side, new_side, reported in functions.removed:
        hits = [i for i in by_body.get(f.body_key, []) if i not in used] if f.body_key else []
        if hits:
            used.add(hits[0])
            target, target_side = added[hits[0]]
            functions.matched.append((f, target, base_side, target_side, target_side.path in wanted or reported))
        elif f.is_test:
            still_removed.append((f, base_side, new_side, reported))
    fresh = [(f, s) for i, (f, s) in enumerate(added) if i not in used]
    return fresh, still_removed


def _compare_matched(
    fresh: list[_Added], matched: list[_Matched], wanted: set[str], findings: list[Finding]
) -> tuple[list[_Lost], Counter[str]]:
    """Findings of new tests and of each reported function against its base version.

    Returns the checks each test lost (to be paid back by checks that reappear
    elsewhere) and the pool of checks new or grown in the change.
    """
    lost: list[_Lost] = []
    pool: Counter[str] = Counter()
    for f, side in fresh:
        pool.update(f.texts)
        if side.path in wanted:
            findings += new_tautologies(None, f, side)
            findings += [
                finding_at(side, n, "OG305", f"{who_of(f)}: new `{k}` around checks swallows their failures")
                for k, n in f.swallows
            ]
    for base_f, new_f, base_side, new_side, reported in matched:
        if new_f.texts != base_f.texts:
            pool.update(new_f.texts - base_f.texts)
        if not reported:
            continue
        found = compare_function(base_f, new_f, base_side, new_side)
        taut = new_tautologies(base_f, new_f, new_side)
        at = {(t.line, t.col) for t in taut}  # one finding per cause: a check that cannot fail is not also "weaker"
        findings += [f for f in found if not (f.code == "OG303" and (f.line, f.col) in at)] + taut
        # A dropped `match=` is reported as OG306 already, not once more as a lost check.
        unmatched = sum(1 for f in found if f.code == "OG306" and "`match" in f.message)
        if any(f.code == "OG301" for f in found):
            continue  # the checks it lost are named already (a looping helper left a name out): one finding
        item = _lost_checks(base_f, new_f, base_side, new_side, unmatched)
        if item is not None:
            lost.append(item)
    return lost, pool


def _arranged(pairs: list[_Pair], matched: list[_Matched], change_set: changes.ChangeSet) -> list[Finding]:
    """OG315 for each reported file: checks of a function its test's own setup newly replaced."""
    renamed = {id(n.node): (b.node, bs) for b, n, bs, _, _ in matched if b.qualname != n.qualname}
    # Only test modules changed (no conftest.py, plugin or code under test): fixtures come from where they were.
    touched = [*change_set.changed_paths, *change_set.deleted]
    names = [p.rpartition("/")[2] for p in touched]
    kept = all(n.endswith(".py") and (n.startswith("test_") or n.endswith("_test.py")) for n in names)
    out: list[Finding] = []
    for _, base_side, new_side, reported in pairs:
        if reported and new_side is not None:
            out += arranged.module_findings(
                base_side, new_side, renamed, change_set.read_base, change_set.read_new, kept
            )
    return out


def _lost_checks(base_f: Facts, new_f: Facts, base_side: Side, new_side: Side, unmatched: int) -> _Lost | None:
    """The checks NEW_F makes fewer of than BASE_F (parametrized cases and imported helpers counted)."""
    if not (
        new_f.checks + unmatched < base_f.checks
        and (new_f.checks + unmatched) * new_f.cases < base_f.checks * base_f.cases
    ):
        return None
    gone = base_f.texts - new_f.texts
    if gone and all(new_f.texts[text] > 0 for text in gone) and not repeat_after_action(base_f.node, gone):
        return None  # only repeats of a check that is still there were dropped
    # Count again with helpers imported from other files resolved.
    base_n = base_side.analyzer.facts(base_f.qualname, base_f.node, base_f.cls, base_f.is_test, True).checks
    new_n = new_side.analyzer.facts(new_f.qualname, new_f.node, new_f.cls, new_f.is_test, True).checks
    new_n += unmatched
    if new_n < base_n and new_n * new_f.cases < base_n * base_f.cases:
        first = min((base_f.text_lines.get(t, base_f.node.lineno) for t in gone), default=base_f.node.lineno)
        return _Lost(
            new_f,
            new_side,
            base_side.path,
            gone,
            base_n - new_n,
            False,
            new_f.node,
            base_n,
            first - base_f.node.lineno,
        )
    return None


def _unpaid(lost: list[_Lost], pool: Counter[str]) -> list[_Lost]:
    """Checks that reappear in new tests, or grew in other tests, pay back what was lost."""
    unpaid: list[_Lost] = []
    for item in lost:
        covered = 0
        for text, n in item.texts.items():
            take = min(n, pool[text])
            if take:
                pool[text] -= take
                covered += take
        if covered < item.deficit or (item.removed and item.deficit == 0):
            unpaid.append(item)
    return unpaid


def _lost_finding(item: _Lost) -> Finding:
    """OG302 for a removed test, OG301 (where the first lost check stood) for one with fewer checks."""
    f = item.facts
    if item.removed:
        if item.side is not None:
            total = len(item.side.module.source.splitlines()) or 1
            line = min(max(f.node.lineno, 1), total)
            return Finding(
                item.side.path,
                line,
                1,
                "OG302",
                f"test {f.qualname} was removed (base {item.base_path}:{f.node.lineno}, {f.checks} checks)",
            )
        return Finding(
            item.base_path,
            1,
            1,
            "OG302",
            f"test {f.qualname} was removed with its file ({f.checks} checks at line {f.node.lineno})",
        )
    gone = list(item.texts.elements())
    shown = f"; lost `{gone[0][:70]}`" if gone else ""
    assert item.side is not None
    # Point where the lost check stood: the same offset into the new version of the function.
    end = getattr(f.node, "end_lineno", None) or f.node.lineno
    line = min(max(f.node.lineno + item.base_line, f.node.lineno), end)
    lines = item.side.module.source.splitlines()
    while line < end and line <= len(lines) and not lines[line - 1].strip():
        line += 1  # a blank line: point at the next statement
    text = lines[line - 1] if line <= len(lines) else b""
    col = len(text) - len(text.lstrip()) + 1 if line != f.node.lineno else item.side.module.position(f.node)[1]
    left = item.base_checks - item.deficit
    return Finding(
        item.side.path,
        line,
        col,
        "OG301",
        f"{who_of(f)} has {left} check{'' if left == 1 else 's'}, base had {item.base_checks}{shown}",
    )


def _not_living_on(removed: list[_Removed], fresh: list[_Added], matched: list[_Matched]) -> list[_Removed]:
    """The removed tests that oracle_guard/analysis/sametest/cases.py finds nowhere in the new or changed tests."""
    if not removed:
        return removed
    from oracle_guard.analysis.sametest import cases as sametest

    cache: dict[int, dict[str, bool]] = {}
    pool: list[sametest.Case] = []
    for f, side in fresh:
        if f.is_test:
            pool += sametest.cases(side.module, f.qualname, None, cache) or []
    for base_f, new_f, base_side, new_side, _ in matched:
        if new_f.is_test:
            before = sametest.cases(base_side.module, base_f.qualname, None, cache) or []
            after = sametest.cases(new_side.module, new_f.qualname, None, cache) or []
            pool += sametest.changed_cases(before, after)[1]  # only what is new in a changed test
    lost = [(item, sametest.cases(item[1].module, item[0].qualname, None, cache)) for item in removed]
    flat = [c for _, found in lost for c in found or []]
    flags = iter(sametest.reappearing(flat, pool))
    out = []
    for item, found in lost:
        alive = [next(flags) for _ in found or []]
        if not found or not all(alive):
            out.append(item)
    return out


def _twin_elsewhere(change_set: changes.ChangeSet, item: _Lost, removed: list[_Removed]) -> bool:
    """Whether a test with the same body exists on the new side in some other file."""
    base_side = next((side for f, side, _, _ in removed if f is item.facts), None)
    f = item.facts
    if base_side is None or not f.body_key or len(removed) > 50:
        return False
    lines = base_side.module.source.splitlines()[f.node.body[0].lineno - 1 : f.node.end_lineno or f.node.lineno]
    probe = max((ln.strip() for ln in lines), key=len, default=b"")
    if len(probe) < 12:
        return False
    args = ["grep", "-F", "-l", "-z", "-e", os.fsdecode(probe)]
    if change_set.target:
        args.append(change_set.target)
    elif change_set.base_label == "HEAD":
        args.append("--cached")
    out = git.run(*args, "--", "*.py", check=False)
    hits = [h.split(":", 1)[1] if change_set.target else h for h in os.fsdecode(out).split("\0") if h][:10]
    blobs = change_set.read_new(hits)
    for path, data in blobs.items():
        if data is None:
            continue
        try:
            module = Module.from_source(path, data)
        except SourceError:
            continue
        for node in ast.walk(module.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                if item.side is not None and path == item.side.path and node.name == f.node.name:
                    continue  # the removed test itself, still defined but deleted (`del test_x`)
                if body_fingerprint(node, any_leading_constant=True) == f.body_key:
                    return True
    return False


def check(ctx: HookContext) -> list[Finding]:
    if ctx.change_set is not None and ctx.change_set.base is None:
        notice("no commits yet: only tautologies and swallowed failures can be checked")
    from oracle_guard.rules import lastfailed, static_approvals

    found = static_approvals.unapproved(ctx, shrink_findings(ctx.filenames, ctx.change_set))
    return lastfailed.mark(ctx, found) + not_a_file(ctx.change_set)


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    parser = hook_args.parser("oracle-shrink", __doc__)
    hook_args.add_filenames(parser)
    hook_args.add_base(parser)
    parser.add_argument(
        "--all", action="store_true", help="no base comparison: report tautologies and swallowed failures in every file"
    )
    hook_args.add_contract(parser)  # accepted for a uniform command line; no contract is needed
    hook_args.add_format(parser)
    args = parser.parse_args(argv)
    paths = changes.enter_repo(args.filenames)
    ctx = hook_args.context(args, None if args.all else changes.resolve(args), paths)
    return hook_args.finish(ctx, lambda: check(ctx), "oracle-shrink")


def not_a_file(change_set: changes.ChangeSet | None) -> list[Finding]:
    """A test file that became a FIFO, device or submodule cannot be read, so it cannot pass.

    (Its base content counts as deleted either way; a symlink is judged by the
    file it points to, which the change holds or not.)
    """
    if change_set is None:
        return []
    return [
        Finding(
            path,
            1,
            1,
            "OG003",
            f"is now a {kind}, not a regular file: its tests cannot be checked; commit it as a regular file",
        )
        for path, kind in change_set.special.items()
        if kind != "symlink" and TEST_FILES.search(path)
    ]


if __name__ == "__main__":
    raise SystemExit(main())
