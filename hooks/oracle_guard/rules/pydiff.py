"""The engine shared by the Python-source hooks: what is new since the base.

A rule finds *occurrences* in one parsed module (a skip mark, a runtime skip,
...), each with a key that identifies it across versions: the test it
applies to and what it does, never its line.  An occurrence is new when the
base had no occurrence with the same key in the file's base version (its old
name if renamed) nor one that disappeared from another changed or deleted
file (the test moved).  Files are parsed only when a cheap byte scan says
they could hold an occurrence.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Callable, NamedTuple

from oracle_guard.analysis.pysource import DEEP, Files, Module, SourceError, definitions, statements
from oracle_guard.analysis.sourcetext import opaque_lines
from oracle_guard.repo import changes
from oracle_guard.repo.context import HookContext
from oracle_guard.repo.filepairs import pair_files
from oracle_guard.reporting.report import Finding, notice
from oracle_guard.rules import args as hook_args

if TYPE_CHECKING:
    from oracle_guard.contract import contract


class Occurrence(NamedTuple):
    key: tuple[str, ...]  # identity across versions, e.g. (qualname, kind, condition)
    qualname: str  # the test, class or "<module>" it applies to
    line: int
    col: int
    code: str
    message: str

    def finding(self, path: str) -> Finding:
        return Finding(path, self.line, self.col, self.code, self.message)


class Rule:
    """What a hook looks for; subclasses set TRIGGER and implement occurrences()."""

    TRIGGER: re.Pattern[bytes] = re.compile(rb"")
    change_set: changes.ChangeSet | None = None  # the change being judged, set by check()

    def could_match(self, source: bytes) -> bool:
        return self.TRIGGER.search(source) is not None

    def may_match(self, source: bytes) -> bool:
        """could_match, unless a text search cannot be trusted on SOURCE (`pytest.ｓｋｉｐ` is `pytest.skip`)."""
        return self.could_match(source) or bool(opaque_lines(source))

    def occurrences(self, module: Module) -> list[Occurrence]:
        raise NotImplementedError

    def context(self, module: Module) -> object | None:
        """What an occurrence depends on beyond its own top-level statement and the module's names.

        Compared between the two sides of a changed file (_focus): equal, a statement
        identical on both sides has the same occurrences on both.  None: not known, so
        every statement is read.
        """
        return None

    def no_stronger(self, new: tuple[str, ...], base: tuple[str, ...]) -> bool:
        """Whether occurrence key NEW does no more than BASE already did (a lowered rerun count)."""
        return False

    def allowed(
        self, occurrence: Occurrence, path: str, ledger: contract.Contract | LazyLedger | None, now: datetime
    ) -> bool:
        """Whether a valid freeze-ledger entry covers the occurrence's test."""
        if ledger is None or occurrence.qualname == "<module>":
            return False
        test_id = f"{path}::{occurrence.qualname.replace('.', '::')}"
        return ledger.freeze_for(test_id, now) is not None


class LazyLedger:
    """The contract's freeze ledger, loaded the first time an occurrence asks for it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._loaded = False
        self._contract: contract.Contract | None = None

    def freeze_for(self, test_id: str, now: datetime | None = None) -> contract.Freeze | None:
        if not self._loaded:
            self._loaded = True
            if os.path.exists(self.path):
                from oracle_guard.contract import contract  # PyYAML: only when there is a ledger to ask

                self._contract = contract.load(self.path)
        return self._contract.freeze_for(test_id, now) if self._contract else None


def add_common_args(parser: argparse.ArgumentParser) -> None:
    hook_args.add_filenames(parser)
    hook_args.add_base(parser)
    parser.add_argument("--all", action="store_true", help="report every occurrence, not only those new since the base")
    hook_args.add_contract(parser)
    hook_args.add_now(parser)
    hook_args.add_format(parser)


class _Side:
    """Parsed occurrences of many files on one side of the change, cached."""

    def __init__(
        self,
        rule: Rule,
        blobs: dict[str, bytes | None],
        errors: list[Finding] | None,
        parsed: dict[str, Module] | None = None,
        reader: Callable[[str], bytes | None] | None = None,
    ) -> None:
        self.rule, self.blobs, self.errors, self.reader = rule, blobs, errors, reader
        self.parsed = parsed or {}
        self._cache: dict[str, list[Occurrence]] = {}
        self._trees: dict[str, ast.Module] = {}
        self._defined: dict[str, set[str]] = {}

    def of(self, path: str | None) -> list[Occurrence]:
        if path is None:
            return []
        if path not in self._cache:
            data = self.blobs.get(path)
            found: list[Occurrence] = []
            if data is not None and self.rule.may_match(data):
                try:
                    module = self.parsed.get(path)
                    if module is None:
                        module = parsed_module(path, data)
                        module.focus = None  # shared: a focus another rule set is not this one's
                    module.reader = self.reader
                    found = self.rule.occurrences(module)
                    self._trees[path] = module.tree
                except SourceError as exc:
                    if self.errors is not None:
                        self.errors.append(exc.finding(path))
                except RecursionError:  # parsed, but nested past what the analysis can walk
                    if self.errors is not None:
                        self.errors.append(SourceError(1, 1, DEEP).finding(path))
            self._cache[path] = found
        return self._cache[path]

    def defines(self, path: str | None, qualname: str) -> bool:
        """Whether PATH (already looked at with of()) defines a function or class QUALNAME."""
        if path is None or path not in self._trees:
            return False
        if path not in self._defined:
            self._defined[path] = _definitions(self._trees[path])
        return qualname in self._defined[path]


def _definitions(tree: ast.Module) -> set[str]:
    """Qualified names of every function and class, as occurrences name their owners."""
    found: set[str] = set()
    stack: list[tuple[list[ast.stmt], str]] = [(tree.body, "")]
    while stack:
        body, prefix = stack.pop()
        for node in statements(body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.add(prefix + node.name)
                stack.append((node.body, f"{prefix}{node.name}."))
    return found


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _texts(module: Module) -> list[tuple[ast.stmt, bytes]]:
    """Each top-level statement with its source lines, decorators included."""
    lines = module.source.split(b"\n")
    found = []
    for node in module.tree.body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        found.append((node, b"\n".join(lines[start - 1 : node.end_lineno or node.lineno])))
    return found


def _names_key(module: Module) -> tuple[dict[str, str], dict[str, str]]:
    return module.names.aliases, {name: ast.dump(call) for name, call in module.names.bindings.items()}


def _focus(rule: Rule, base: Module, new: Module) -> tuple[list[ast.stmt], list[ast.stmt]] | None:
    """The top-level statements whose occurrences can differ between BASE and NEW; None: all of them.

    Only functions and classes may differ: every other top-level statement (imports,
    assignments such as a mark bound to a name, `pytestmark`, `if` blocks) is the same,
    in the same order; the module-wide names (aliases and bindings, wherever they are
    spelled, function bodies included) are the same; and so is what the rule reads
    beyond a statement (Rule.context).  Then a function or class whose source is
    byte-identical on both sides has the same occurrences on both, which cancel: only
    the changed ones are visited, each with the whole module as its context.
    """
    old_texts, new_texts = _texts(base), _texts(new)
    if [t for n, t in old_texts if not isinstance(n, _DEFS)] != [t for n, t in new_texts if not isinstance(n, _DEFS)]:
        return None
    if _names_key(base) != _names_key(new):
        return None
    context = rule.context(base)
    if context is None or context != rule.context(new):
        return None
    remaining = Counter(t for n, t in old_texts if isinstance(n, _DEFS))
    added: list[ast.stmt] = []
    for node, text in new_texts:
        if isinstance(node, _DEFS):
            if remaining[text] > 0:
                remaining[text] -= 1
            else:
                added.append(node)
    removed: list[ast.stmt] = []
    for node, text in reversed(old_texts):  # the last copies: the same count on both sides is what matters
        if isinstance(node, _DEFS) and remaining[text] > 0:
            remaining[text] -= 1
            removed.append(node)
    return list(reversed(removed)), added


_PARSED: dict[tuple[str, bytes], Module] = {}


def parsed_module(path: str, data: bytes) -> Module:
    """Module.from_source, once per file version for every rule of this engine in the process.

    The rules only read a module (visitors, name lookups); what the engine sets on one (the
    reader, the focus) it sets again for each rule before the rule reads it.  A file that
    does not parse raises SourceError each time (it is not kept).
    """
    key = (path, data)
    if key not in _PARSED:
        if len(_PARSED) > 64:  # a long run (check over many commits) keeps only the latest
            _PARSED.clear()
        _PARSED[key] = Module.from_source(path, data)
    return _PARSED[key]


def _parse(paths: Iterable[str], blobs: dict[str, bytes | None]) -> tuple[dict[str, Module], list[Finding]]:
    """Parse every changed file: one that does not parse is a finding even with no trigger in it."""
    parsed: dict[str, Module] = {}
    errors: list[Finding] = []
    for path in paths:
        data = blobs.get(path)
        if data is None:
            continue
        try:
            parsed[path] = parsed_module(path, data)
        except SourceError as exc:
            errors.append(exc.finding(path))
    return parsed, errors


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\S")


def _renamed_only(
    old: tuple[str, ...], new: tuple[str, ...], old_source: bytes | None, new_source: bytes | None
) -> bool:
    """Whether two keys differ only by identifiers renamed throughout the file.

    ``skipif(not PY310)`` -> ``skipif(not PY_3_10_PLUS)`` is a refactor when
    ``PY310`` no longer appears in the new file and ``PY_3_10_PLUS`` did not
    appear in the old one; swapping in another name that already existed
    (``IS_WINDOWS`` -> ``IS_LINUX``) is not.  ``from m import WIN as
    ON_WINDOWS`` makes the new name the old one's alias, whatever else remains.
    """
    if old_source is None or new_source is None or len(old) != len(new) or old[:2] != new[:2]:
        return False
    pairs: set[tuple[str, str]] = set()
    for a, b in zip(old, new):
        if a == b:
            continue
        ta, tb = _WORD.findall(a), _WORD.findall(b)
        if len(ta) != len(tb):
            return False
        for x, y in zip(ta, tb):
            if x == y:
                continue
            if not (x[0].isalpha() or x[0] == "_") or not (y[0].isalpha() or y[0] == "_"):
                return False
            pairs.add((x, y))
    if not pairs:
        return False
    for x, y in pairs:
        xb, yb = re.escape(x.encode()), re.escape(y.encode())
        if re.search(rb"\bimport\s*\(?[\w\s,.]*?\b%s\s+as\s+%s\b" % (xb, yb), new_source):
            continue  # `import X as Y`: Y is X under another name
        if re.search(rb"\b%s\b" % xb, new_source) or re.search(rb"\b%s\b" % yb, old_source):
            return False
    return True


def _is_test_name(qualname: str) -> bool:
    last = qualname.rsplit(".", 1)[-1]
    return last.startswith(("test", "Test"))


class _History:
    """Which tests existed at the base: by name in the file's base version, or
    by name or identical body in what disappeared from any changed or deleted
    file (so a renamed or moved test is not mistaken for a new one).  Names
    come from a cheap statement walk; bodies are fingerprinted only when a
    name alone does not settle it."""

    def __init__(
        self,
        change_set: changes.ChangeSet,
        new_blobs: dict[str, bytes | None],
        base_blobs: dict[str, bytes | None],
        old_of: dict[str, str | None],
        parsed: dict[str, Module],
    ) -> None:
        self.change_set, self.new_blobs, self.base_blobs, self.old_of = change_set, new_blobs, base_blobs, old_of
        self._modules: dict[tuple[str, str | None], Module | None] = {("new", p): m for p, m in parsed.items()}
        self._names: dict[tuple[str, str | None], set[str]] = {}
        self._gone: tuple[set[str], list[tuple[str, str | None]]] | None = None
        self._gone_bodies: set[str] | None = None

    def _module(self, side: str, path: str | None) -> Module | None:
        if (side, path) not in self._modules:
            data = (self.new_blobs if side == "new" else self.base_blobs).get(path or "")
            module = None
            if data is not None:
                try:
                    module = parsed_module(path or "", data)
                except SourceError:
                    module = None
            self._modules[(side, path)] = module
        return self._modules[(side, path)]

    def names(self, side: str, path: str | None) -> set[str]:
        if (side, path) not in self._names:
            module = self._module(side, path)
            self._names[(side, path)] = _definitions(module.tree) if module else set()
        return self._names[(side, path)]

    def _body(self, side: str, path: str | None, qualname: str) -> str | None:
        module = self._module(side, path)
        return definitions(module.tree).get(qualname) if module else None

    def gone(self) -> set[str]:
        """Qualnames that left some changed or deleted file (remembering where from)."""
        if self._gone is None:
            names: set[str] = set()
            where: list[tuple[str, str | None]] = []
            for path in self.change_set.changed_paths + self.change_set.deleted:
                deleted = path in self.change_set.deleted
                old = path if deleted else self.change_set.old_path(path)
                left = self.names("base", old) - (set() if deleted else self.names("new", path))
                if left:
                    names |= left
                    where.append(("base", old))
            self._gone = (names, where)
        return self._gone[0]

    def gone_bodies(self) -> set[str]:
        if self._gone_bodies is None:
            self.gone()
            assert self._gone is not None
            names = self._gone[0]
            bodies: set[str] = set()
            for side, path in self._gone[1]:
                module = self._module(side, path)
                if module:
                    bodies |= {body for qual, body in definitions(module.tree).items() if qual in names}
            self._gone_bodies = bodies
        return self._gone_bodies

    def existed(self, path: str, qualname: str) -> bool:
        if qualname in self.names("base", self.old_of.get(path)) or qualname in self.gone():
            return True
        return bool(self.gone()) and self._body("new", path, qualname) in self.gone_bodies()

    def is_new_test(self, path: str, qualname: str) -> bool:
        if qualname.startswith("<mark ") and qualname.endswith(">"):  # a shared mark defined here
            name = qualname[len("<mark ") : -1]
            base = self._module("base", self.old_of.get(path))
            return base is None or not any(
                isinstance(node, (ast.Assign, ast.AnnAssign))
                and name
                in {
                    t.id
                    for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                    if isinstance(t, ast.Name)
                }
                for node in base.tree.body
            )
        new = self.names("new", path)
        if qualname == "<module>":
            tests = [q for q in new if _is_test_name(q)]
            return self.old_of.get(path) is None and not any(self.existed(path, q) for q in tests)
        if not _is_test_name(qualname) or qualname not in new:
            return False
        inner = [q for q in new if q == qualname or q.startswith(qualname + ".")]
        return not any(self.existed(path, q) for q in inner)


def check(
    rule: Rule,
    paths: Sequence[str],
    change_set: changes.ChangeSet | None,
    ledger: contract.Contract | LazyLedger | None,
    now: datetime,
) -> list[Finding]:
    """Findings for PATHS: every occurrence (no change set) or only the new ones."""
    findings: list[Finding] = []
    rule.change_set = change_set
    if change_set is None:
        here = changes.ChangeSet(None, "", None)
        new_side = _Side(rule, here.read_new(paths), findings, reader=Files(here.read_new))
        for path in paths:
            findings += [o.finding(path) for o in new_side.of(path) if not rule.allowed(o, path, ledger, now)]
        return findings

    # Every changed or deleted file takes part: a test may have moved between them.
    files = pair_files(change_set, paths)
    new_blobs, base_blobs, old_of = files.new, files.base, files.old_of
    changed = [p for p in paths if files.changed(p)]
    parsed, errors = _parse(changed, new_blobs)
    findings += errors
    # Each side reads other project files (an imported skip decorator) from its own revision.
    readers = (Files(change_set.read_base), Files(change_set.read_new))
    new_modules, base_modules = _focused(rule, changed, parsed, new_blobs, base_blobs, old_of, readers)
    new_side = _Side(rule, new_blobs, None, new_modules, reader=readers[1])  # parse errors already reported
    base_side = _Side(rule, base_blobs, None, base_modules, reader=readers[0])  # a base that fails to parse has none

    pool: Counter[tuple[str, ...]] | None = None
    history: _History | None = None

    def moved_pool() -> Counter[tuple[str, ...]]:
        pool: Counter[tuple[str, ...]] = Counter()
        for path in [p for p in change_set.changed_paths] + change_set.deleted:
            old = change_set.old_path(path) if path in new_blobs else path
            lost = Counter(o.key for o in base_side.of(old))
            if path in new_blobs:
                lost -= Counter(o.key for o in new_side.of(path))
            pool += lost
        return pool

    for path in changed:
        old = old_of[path]
        base_keys = Counter(o.key for o in base_side.of(old))
        unmatched = []
        for occ in new_side.of(path):
            if base_keys[occ.key] > 0:
                base_keys[occ.key] -= 1
            else:
                unmatched.append(occ)
        for occ in unmatched:
            if pool is None:
                pool = moved_pool()
            if pool[occ.key] > 0:
                pool[occ.key] -= 1
                continue
            renamed = _renamed_from(occ, base_keys, base_side, old, new_side, path)
            if renamed is None:  # the same skip, its condition's names renamed across the file
                renamed = next(
                    (
                        k
                        for k in base_keys
                        if base_keys[k] > 0
                        and _renamed_only(k, occ.key, base_blobs.get(old or ""), new_blobs.get(path))
                    ),
                    None,
                )
            if renamed is None:  # the same mark, made weaker (fewer reruns)
                renamed = next((k for k in base_keys if base_keys[k] > 0 and rule.no_stronger(occ.key, k)), None)
            if renamed is not None:
                base_keys[renamed] -= 1
                continue
            if change_set.base is not None:
                history = history or _History(change_set, new_blobs, base_blobs, old_of, parsed)
                if history.is_new_test(path, occ.qualname):
                    continue  # a brand-new test that skips somewhere weakens nothing that existed
            if not rule.allowed(occ, path, ledger, now):
                findings.append(occ.finding(path))
    return findings


def _focused(
    rule: Rule,
    changed: list[str],
    parsed: dict[str, Module],
    new_blobs: dict[str, bytes | None],
    base_blobs: dict[str, bytes | None],
    old_of: dict[str, str | None],
    readers: tuple[Callable[[str], bytes | None], Callable[[str], bytes | None]],
) -> tuple[dict[str, Module], dict[str, Module]]:
    """Each side's modules of the changed files, focused on what changed where that is sound (_focus).

    Only a file changed in place, whose base version no other file claims, and where
    the rule could find something on both sides (else one side has no occurrences).
    """
    new_modules, base_modules = dict(parsed), {}  # the same Module objects: History reads their names
    for each in parsed.values():
        each.focus = None  # shared with the other rules (parsed_module): set below where it is this rule's
    claimed = Counter(old_of.values())
    for path in changed:
        old_data, new_data, module = base_blobs.get(path), new_blobs.get(path), parsed.get(path)
        if old_of.get(path) != path or claimed[path] != 1 or old_data is None or new_data is None or module is None:
            continue
        if not (rule.may_match(old_data) and rule.may_match(new_data)):
            continue
        try:
            base = parsed_module(path, old_data)
            base.reader, module.reader = readers  # what the rule's context reads, each from its own side
            focus = _focus(rule, base, module)
        except SourceError:
            continue
        except RecursionError:  # nested past what the analysis walks: the whole modules, as before
            continue
        base_modules[path] = base
        # Set for every rule, None included: the modules are shared by the rules (parsed_module).
        base.focus, module.focus = focus if focus is not None else (None, None)
    return new_modules, base_modules


def _renamed_from(
    occ: Occurrence, base_keys: Counter[tuple[str, ...]], base_side: _Side, old: str | None, new_side: _Side, path: str
) -> tuple[str, ...] | None:
    """The base occurrence OCC carries over when its test or class was only renamed.

    The same mark (same kind, condition and context) on an owner that the base
    file did not define, while the base's owner of it no longer exists in the
    new file: a rename, not a new skip.  An owner that existed before (a test
    that ran) never takes over another test's mark.
    """
    owner = occ.key[0]
    if owner == "<module>" or old is None or base_side.defines(old, owner):
        return None
    for key, count in base_keys.items():
        if count > 0 and key[1:] == occ.key[1:] and key[0] != "<module>" and not new_side.defines(path, key[0]):
            return key
    return None


def run(argv: Sequence[str] | None, prog: str, doc: str | None, rule: Rule) -> int:
    """A Python-source hook's main(): the command line into a context, then check_context()."""
    parser = hook_args.parser(prog, doc)
    add_common_args(parser)
    args = parser.parse_args(argv)
    paths = changes.enter_repo(args.filenames)
    change_set = None if args.all else changes.resolve(args)
    ctx = hook_args.context(args, change_set, paths)
    return hook_args.finish(ctx, lambda: check_context(rule, ctx), prog)


def check_context(rule: Rule, ctx: HookContext) -> list[Finding]:
    """check() for a hook's context: the changed files, or every occurrence without a change set."""
    if ctx.change_set is not None and ctx.change_set.base is None:
        notice("no commits yet: everything counts as new")
    from oracle_guard.rules import lastfailed, static_approvals

    found = check(rule, list(ctx.filenames), ctx.change_set, LazyLedger(ctx.contract), ctx.now)
    return lastfailed.mark(ctx, static_approvals.unapproved(ctx, found))
