"""forbid-test-aware-code: reject production code that knows it is being tested.

When a patch may not weaken the tests, the cheat moves into the code under
test: it asks whether pytest runs, reads the calling test's frame or source,
ends the process with status 0, patches ``unittest`` or ``builtins``, makes
``__eq__`` always true, hard-codes the tests' inputs and answers, counts its
calls, or adds a start-up file (``sitecustomize.py``, a ``pytest11`` entry
point, a module shadowing the standard library).  Every changed file that is
not on the test side (decided from the base) is judged; only what the change
adds or alters counts, never what the base already had.  Rules:
oracle_guard/analysis/testaware/ (one module per class of cheat); docs/forbid-test-aware-code.md.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from oracle_guard.analysis.testaware import startup
from oracle_guard.repo import changes, git
from oracle_guard.repo.context import HookContext
from oracle_guard.repo.paths import TEST_FILES
from oracle_guard.reporting.report import Finding, UsageError, guarded
from oracle_guard.rules import args as hook_args
from oracle_guard.rules import startup_paths

if TYPE_CHECKING:
    import ast

    from oracle_guard.analysis.pysource import Module
    from oracle_guard.analysis.testaware.evidence import SeenCall
    from oracle_guard.analysis.testaware.facts import Facts, Occurrence
    from oracle_guard.rules.unreached import NewTree

# Folders and files that are processes of their own (a CLI script may exit), not library code.
SCRIPTS = re.compile(
    r"(^|/)(docs?|examples?|bench(marks?)?|scripts|tools|tasks|ci|\.github)/|^(setup|noxfile|fabfile|tasks)\.py$"
)
# A pytest hook implemented at module level: the file is a plugin pytest loads (by entry point, -p, or path).
_HOOK_IMPL = re.compile(rb"^(?:async[ \t]+)?def[ \t]+pytest_\w+[ \t]*\(|^@pytest\.hookimpl\b", re.M)
_DOCTEST_FILES = 20
# A pytest hook implemented anywhere in a file (a plugin class's method too): what the outcome rules read.
_HOOK_DEF = re.compile(rb"def[ \t]+pytest_\w+[ \t]*\(")
_CONFIGS = frozenset({"pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml"})
_IMPORT = re.compile(r"^[ \t]*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+(?:\s*,\s*[\w.]+)*))", re.M)


class _Base:
    """What the base revision says: packaging entry points, the tests' imports and calls (each read once, lazily)."""

    def __init__(self, change_set: changes.ChangeSet) -> None:
        self.change_set = change_set
        self.rev = change_set.base
        self._files: list[str] | None = None
        self._imports: set[str] | None = None
        self._entry: dict[str, dict[str, str]] = {}
        self._changed: set[str] | None = None
        self._trees: dict[str, ast.Module | None] = {}  # base files parsed for their tests' calls
        self.production: list[str] = []  # the base paths of the changed production files
        self._plugins: dict[str, bool] = {}
        self._loaded: set[str] | None = None
        self._marks: frozenset[str] | None = None
        self._tree: NewTree | None = None
        self._classes: dict[str, dict[str, ast.ClassDef]] = {}
        self.olds: list[str] = []  # the changed production files' base paths, read together when one is needed

    def files(self) -> list[str]:
        if self._files is None:
            listed = git.run("ls-tree", "-r", "-z", "--name-only", self.rev).split(b"\0") if self.rev else []
            self._files = [os.fsdecode(n) for n in listed if n]
        return self._files

    def entry_points(self, group: str) -> dict[str, str]:
        if group not in self._entry:
            blobs = self.change_set.read_base(list(startup.PACKAGING))
            found: dict[str, str] = {}
            for name in startup.PACKAGING:
                found.update(startup.entry_points(name, blobs.get(name), group))
            self._entry[group] = found
        return self._entry[group]

    def defines(self, module: str) -> bool:
        """Whether the base already has top-level MODULE in the repository (a file or a folder)."""
        return any(
            f.startswith((f"{root}{module}/", f"{root}{module}.py"))
            for root in startup.IMPORT_ROOTS
            for f in self.files()
        )

    def plugin(self, old: str | None) -> bool:
        """Whether the base's version of a file is a pytest plugin: a pytest11 entry point's module, a module the
        base's conftests or pytest configuration load (``pytest_plugins``, ``-p``), or one implementing pytest
        hooks. Asking pytest about the run is its job; the base decides, so a change cannot make a file one."""
        if old is None:
            return False
        if old not in self._plugins:
            self._plugins[old] = (
                any(old in startup.module_files(t) for t in self.entry_points("pytest11").values())
                or bool(_HOOK_IMPL.search(self.read_base(old) or b""))
                or old in self.loaded_plugins()
            )
        return self._plugins[old]

    def loaded_plugins(self) -> set[str]:
        if self._loaded is None:
            from oracle_guard.pytest_side.scratch import TestSide

            self._loaded = TestSide(self.rev or "", "", None).plugins() if self.rev else set()
        return self._loaded

    def test_marks(self) -> frozenset[str]:
        """What the test side sets for the whole run, at the base or in the change (testaware/marks.py): read
        only when production code branches on a variable or a ``sys`` attribute."""
        if self._marks is None:
            from oracle_guard.analysis.testaware import marks

            def wanted(path: str) -> bool:
                name = path.rpartition("/")[2]
                return (
                    name == "conftest.py"
                    or name in _CONFIGS
                    or (name == "__init__.py" and bool(TEST_FILES.search(path)))
                )

            old = [p for p in self.files() if wanted(p)]
            new = [c.path for c in self.change_set.changes if c.path and wanted(c.path)]
            blobs = [*self.change_set.read_base(old).items(), *self.change_set.read_new(new).items()]
            self._marks = marks.of_files((p, d) for p, d in blobs if d is not None)
        return self._marks

    def classes(self, old: str | None) -> dict[str, ast.ClassDef]:
        """The classes of OLD's base version by qualified name (parsed once, when a comparison asks)."""
        if old is None:
            return {}
        if old not in self._classes:
            import ast

            module = self.module(old)
            found: dict[str, ast.ClassDef] = {}
            stack: list[tuple[ast.AST, str]] = [(module.tree, "")] if module is not None else []
            while stack:
                parent, prefix = stack.pop()
                for node in ast.iter_child_nodes(parent):
                    if isinstance(node, ast.ClassDef):
                        found[prefix + node.name] = node
                    if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                        stack.append((node, f"{prefix}{node.name}."))
            self._classes[old] = found
        return self._classes[old]

    def read_base(self, old: str) -> bytes | None:
        """OLD's base bytes; the first read asks for every changed production file's at once (one git process)."""
        if self.olds:
            self.change_set.read_base(self.olds)
            self.olds = []
        return self.change_set.read_base([old])[old]

    def tests(self) -> list[str]:
        return [p for p in self.files() if p.endswith(".py") and TEST_FILES.search(p)]

    def tests_import(self, module: str) -> bool:
        if self._imports is None:
            self._imports = set()
            for data in self.change_set.read_base(self.tests()).values():
                for match in _IMPORT.finditer((data or b"").decode("utf-8", "replace")):
                    names = match.group(1) or match.group(2)
                    for name in names.split(","):
                        parts = name.strip().split(".")
                        self._imports.update(".".join(parts[: i + 1]) for i in range(len(parts)))
        return module in self._imports

    def changed_file(self, path: str) -> bytes | None:
        """A file of the change, new side (a table split into another module, a data file beside the code)."""
        if self._changed is None:
            self._changed = {c.path for c in self.change_set.changes if c.path}
        return self.change_set.read_new([path])[path] if path in self._changed else None

    def unreached(self, path: str) -> bool:
        """Whether no test run of the new tree can execute PATH (the new tree read once, when asked)."""
        from oracle_guard.rules import unreached

        self._tree = self._tree or unreached.NewTree(self.change_set, self.files())
        return self._tree.unreached(path)

    def lines(self, path: str | None) -> frozenset[bytes] | None:
        """The stripped lines of PATH's base version (None: no base version, every line is new)."""
        if not path:
            return None
        # One git process for every changed production file's base (the hook asks for each in turn).
        data = self.change_set.read_base([path, *self.production])[path]
        return frozenset(line.strip() for line in data.splitlines()) if data is not None else None

    def module(self, path: str | None) -> Module | None:
        """PATH's base version parsed (None: no base version, or one that does not parse)."""
        from oracle_guard.analysis.pysource import Module, SourceError

        data = self.read_base(path) if path else None
        try:
            return Module.from_source(path or "", data) if data is not None else None
        except (SourceError, RecursionError):
            return None

    def mentions(self, words: list[str]) -> dict[str, str]:
        """Which of WORDS the base's test files spell, on a line that needs them (environ.needs): word -> a file."""
        from oracle_guard.analysis.testaware import environ

        if not self.rev or not words:
            return {}
        args = ["grep", "-F", "-z", "--full-name"]
        for word in words:
            args += ["-e", word]
        out = git.run(*args, self.rev, "--", "*.py", check=False)
        found: dict[str, str] = {}
        prefix = f"{self.rev}:"
        for line in out.decode("utf-8", "replace").splitlines():
            path, _, text = line.partition("\0")  # rev:path NUL the matching line
            path = path.removeprefix(prefix)
            if not TEST_FILES.search(path) or not environ.needs(text):
                continue
            for word in words:
                if word in text:
                    found.setdefault(word, path)
        return found

    def calls_of(self, names: set[str], needles: Collection[bytes] = ()) -> dict[str, list[SeenCall]]:
        """The base tests' calls of NAMES (only the test files that spell one of them, and one of the NEEDLES if
        any are given, are parsed)."""
        if not self.rev or not names:
            return {}
        args = ["grep", "-l", "-w", "-F", "-z"]
        for name in sorted(names):
            args += ["-e", name]
        out = git.run(*args, self.rev, "--", "*.py", check=False)
        prefix = f"{self.rev}:"
        paths = [os.fsdecode(p).removeprefix(prefix) for p in out.split(b"\0") if p]
        tests = [p for p in paths if TEST_FILES.search(p)]
        others = [p for p in paths if not TEST_FILES.search(p)]
        # Doctests are tests too: a production module's examples, read when few files spell the names.
        blobs = self.change_set.read_base(tests + (others if len(others) <= _DOCTEST_FILES else []))
        from oracle_guard.analysis.testaware import evidence

        sources = (
            (p, d)
            for p, d in blobs.items()
            if d is not None and (p in tests or b">>>" in d) and (not needles or any(n in d for n in needles))
        )
        return evidence.test_calls(sources, names, lambda p: bool(TEST_FILES.search(p)), self._trees)


def _facts(base: _Base, path: str, old: str | None, raw: bool = False) -> Facts:
    from oracle_guard.analysis.testaware.facts import Facts

    def functions() -> frozenset[str]:
        return frozenset(t.rpartition(":")[2].rpartition(".")[2] for t in base.entry_points("console_scripts").values())

    def plugin() -> bool:
        return base.plugin(old)

    def base_class(qualname: str) -> ast.ClassDef | None:
        return base.classes(old).get(qualname)

    return Facts(functions, plugin, bool(SCRIPTS.search(path)), base.tests_import, raw, base_class)


def _occurrences(
    path: str, data: bytes, base: _Base, old: str | None, raw: bool = False, cases: bool = True
) -> list[Occurrence]:
    # Imported here: a change with no production code (most commits touch tests) never loads the rules.
    from oracle_guard.analysis.pysource import Module as Parsed
    from oracle_guard.analysis.testaware import cases as testaware_cases
    from oracle_guard.analysis.testaware import environ
    from oracle_guard.analysis.testaware import finder as testaware

    module = Parsed.from_source(path, data)
    facts = _facts(base, path, old, raw)
    found = testaware.occurrences(module, facts)
    if cases:  # the base tests' answers: read only when a learned answer on the other side needs matching
        at_base = lambda p: base.read_base(p) if base.changed_file(p) is not None else None  # noqa: E731
        found += testaware_cases.special_cases(
            module, base.calls_of, base.changed_file, lambda: base.lines(old), lambda: base.module(old), at_base
        )
    found += environ.faked_environment(module, base.changed_file, base.mentions)
    if _HOOK_DEF.search(data) and facts.plugin():
        found += _outcome_rewrites(module)
    return found


def _outcome_rewrites(module: Module) -> list[Occurrence]:
    """A plugin's hook implementations that decide outcomes (tamper_code's OG875/OG876, as for a conftest): a
    report turned passed, a swallowed failure, ``session.exitstatus`` written, items replaced, a passing exit.
    A plugin project's plugin is its production code: the base's tests must not be judged by a rewritten run."""
    from oracle_guard.analysis.testaware.facts import Occurrence
    from oracle_guard.pytest_side.tamper import code as tamper_code

    found = []
    for fact in tamper_code.code_facts(module):
        if fact.code in ("OG875", "OG876"):
            line, col = module.position(fact.node)
            where = f" in `{fact.key[1]}`" if fact.key[1] else ""
            message = f"the plugin's code{where} {fact.message}: the run's outcome no longer comes from the tests"
            found.append(Occurrence(("OG963", fact.key[1], fact.key[2]), line, col, "OG963", message))
    return found


def _parsed(path: str, data: bytes | None, base: _Base, cases: bool = True) -> list[Occurrence]:
    """What one version of a file holds, exemptions aside (for matching: what the base had stays the base's);
    a version that does not parse has none (the new side says so)."""
    from oracle_guard.analysis.pysource import SourceError

    if data is None:
        return []
    try:
        return _occurrences(path, data, base, path, raw=True, cases=cases)
    except (SourceError, RecursionError):
        return []


class _Moved:
    """Occurrences the base had in any changed or deleted production file and the new side no longer has
    there: code moved between functions or files is not new (read only when something is unmatched)."""

    def __init__(self, change_set: changes.ChangeSet, base: _Base, paths: list[tuple[str | None, str | None]]) -> None:
        self.change_set, self.base, self.paths = change_set, base, paths
        self._pools: dict[bool, Counter[tuple[str, str, str]]] = {}

    def take(self, occurrence: Occurrence) -> bool:
        # The learned answers (which read the base's tests) have a pool of their own, read only for one of them.
        cases = occurrence.code == "OG966"
        if cases not in self._pools:
            pool: Counter[tuple[str, str, str]] = Counter()
            for old, new in self.paths:
                before = _parsed(old, self.change_set.read_base([old])[old], self.base, cases) if old else []
                after = _parsed(new, self.change_set.read_new([new])[new], self.base, cases) if new else []
                left = Counter(o.key for o in before) - Counter(o.key for o in after)
                for key, count in left.items():
                    if (key[0] == "OG966") == cases:
                        pool[(key[0], key[2], _when(key[1]))] += count
            self._pools[cases] = pool
        pool = self._pools[cases]
        # Moved between functions or files, yes; out of a `__main__` block or into import time, no.
        short = (occurrence.key[0], occurrence.key[2], _when(occurrence.key[1]))
        if pool[short] > 0:
            pool[short] -= 1
            return True
        return False


def _when(scope: str) -> str:
    """When code in SCOPE runs: only as a program, at import, or when called."""
    return "program" if scope.endswith(" <__main__>") else "import" if scope == "<module>" else "call"


def _new_occurrences(
    path: str, old: str | None, change_set: changes.ChangeSet, base: _Base, moved: _Moved
) -> list[Finding]:
    from oracle_guard.analysis.pysource import SourceError

    data = change_set.read_new([path])[path]
    if data is None:
        return []
    try:
        found = _occurrences(path, data, base, old)
    except SourceError as exc:
        return [exc.finding(path, "OG970" if exc.binary else "OG969")]  # a binary file is no spelling to fix
    except RecursionError:
        return [Finding(path, 1, 1, "OG969", "nests too deeply to check; split the expression up")]
    if not found:
        return []
    cases = any(o.code == "OG966" for o in found)
    had = _parsed(old or path, base.read_base(old), base, cases) if old else []
    before = Counter(o.key for o in had)
    # A frame read whose arguments changed (`sys._getframe(1)` -> `sys._getframe(level)`) in a function that
    # already read frames is the same read; any other code keeps its exact text (`sys.exit(1)` -> `(0)` is new).
    loose = Counter(_loose(o.key) for o in had if o.code == "OG962")
    findings = []
    for occurrence in found:
        if occurrence.key[1] == "<file>" and before[occurrence.key] > 0:
            continue  # the file already evaluated code (a code generator): one more is not a new kind
        if before[occurrence.key] > 0:
            before[occurrence.key] -= 1  # the base already did this: not this change's doing
            continue
        if occurrence.code == "OG962" and loose[_loose(occurrence.key)] > 0:
            loose[_loose(occurrence.key)] -= 1
            continue
        if moved.take(occurrence):
            continue
        message = _counts(occurrence, base, path, old)
        if message is None:
            continue
        findings.append(Finding(path, occurrence.line, occurrence.col, occurrence.code, message))
        if occurrence.key[1] == "<file>":
            before[occurrence.key] = len(found)  # said once per file: the first place is where to look
    return findings


def _counts(occurrence: Occurrence, base: _Base, path: str, old: str | None) -> str | None:
    """The message of a new occurrence, or None where it is no finding: a pytest plugin's job in a plugin, a
    condition on a name the test side does not set. Asked only here: the base's facts cost git processes."""
    from oracle_guard.analysis.testaware import facts, runner

    if occurrence.when == facts.PLUGIN and base.plugin(old):
        return None
    if occurrence.code == "OG963" and base.unreached(path):
        return None  # a script no test run executes ends its own process, not the run
    if occurrence.when.startswith(facts.MARKS):
        return runner.switch_message(occurrence, base.test_marks())
    return occurrence.message


_ARGUMENTS = re.compile(r"\([^()]*\)")


def _loose(key: tuple[str, ...]) -> tuple[str, ...]:
    """KEY with every call's arguments left out."""
    text, previous = key[2], ""
    while text != previous:
        previous, text = text, _ARGUMENTS.sub("()", text)
    return (key[0], key[1], text)


def test_aware_findings(change_set: changes.ChangeSet, contract_path: str) -> list[Finding]:
    base = _Base(change_set)
    findings = startup_paths.findings(change_set, base.tests_import, base.defines)
    candidates = [c for c in change_set.changes if c.path and c.path.endswith(".py") and not TEST_FILES.search(c.path)]
    if not candidates:
        return findings
    deleted: list[tuple[str | None, str | None]] = [
        (c.old_path, None) for c in change_set.changes if c.path is None and c.old_path and c.old_path.endswith(".py")
    ]
    moved = _Moved(change_set, base, [(c.old_path, c.path) for c in candidates] + deleted)
    change_set.read_new([c.path for c in candidates if c.path])  # one git process for every changed file
    base.olds = [c.old_path for c in candidates if c.old_path]
    base.production = list(base.olds)
    found = [f for c in candidates for f in _new_occurrences(c.path or "", c.old_path, change_set, base, moved)]
    if found:
        # Only now the test side (the base's contract and its fixtures): a start-up file (scratch.starts_python,
        # reported by path above) is not judged as production code; a plugin the tests load is, outside the
        # test folders (a pytest plugin project's package).
        from oracle_guard.contract import contract
        from oracle_guard.pytest_side.scratch import TestSide

        side = TestSide(change_set.base or "", contract_path, contract.at_base(change_set.base, contract_path))
        found = [f for f in found if not side(f.path)]
    return findings + found


def check(ctx: HookContext) -> list[Finding]:
    if ctx.change_set is None:
        raise UsageError("forbid-test-aware-code compares with a base: it needs a change set")
    return test_aware_findings(ctx.change_set, ctx.contract)


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    parser = hook_args.parser("forbid-test-aware-code", __doc__)
    hook_args.add_filenames(parser, "ignored: the change is read from git")
    hook_args.add_base(parser)
    hook_args.add_contract(parser)
    hook_args.add_format(parser)
    args = parser.parse_args(argv)
    changes.enter_repo([])
    change_set = changes.resolve(args)
    ctx = hook_args.context(args, change_set)
    return hook_args.finish(ctx, lambda: check(ctx), "forbid-test-aware-code")


if __name__ == "__main__":
    raise SystemExit(main())
