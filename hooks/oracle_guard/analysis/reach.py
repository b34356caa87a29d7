"""Which base test modules reach changed production code through the project's own imports.

The replay runs these base tests on both trees when a change touches
production code.  Everything is read from the base revision's files (the
patch never says which tests judge it), read by pattern, never imported.

A test module *reaches* a file when the file is in its import closure: the
module itself, its package ``__init__`` files, the ``conftest.py`` files
above it, the plugins the configuration names, and, transitively, every
project module any of those import (``import a.b`` runs ``a/__init__.py``,
``a/b/__init__.py`` and the module; ``from a import b`` also ``a/b.py`` when
it is a module).  Names that resolve to no project file are the standard
library or installed packages and end the walk.

Where the closure cannot be decided, the file counts as reaching anything
(its tests are selected whenever production code changed): a dynamic import
with a computed name (``importlib.import_module(name)``, ``__import__``,
``spec_from_file_location``, ``runpy``, ``pkgutil`` walks, ``exec`` of
computed code, entry points when the project declares its own).  String constants that name a project module or
file (``mock.patch("pkg.mod.f")``, ``[sys.executable, "-m", "pkg"]``,
``"scripts/tool.py"``) count as imports.  A base that edits ``sys.path``
lets an import that resolves nowhere else match any project file with that
dotted tail.  A new top-level module, ``sitecustomize``/``usercustomize``
can shadow any import: every test.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from oracle_guard.analysis.sourcetext import opaque_lines, text_of
from oracle_guard.repo.paths import folders_above

UNKNOWN = "<dynamic import>"  # an edge to anything
# Calls whose first argument names what gets imported or executed.
IMPORTING_CALLS = {"__import__", "import_module", "importorskip", "run_module"}
# Calls that import or run code whose name the source does not spell.
DYNAMIC_CALLS = {
    "spec_from_file_location",
    "SourceFileLoader",
    "run_path",
    "load_source",
    "load_module",
    "exec_module",
    "walk_packages",
    "iter_modules",
    "exec",
    "execfile",
}
ENTRY_POINT_CALLS = {"entry_points", "iter_entry_points", "load_entry_point", "load_setuptools_entrypoints"}
STARTUP_MODULES = {"sitecustomize", "usercustomize"}
_STATEMENT = r"(?:^|[;:])[ \t]*"
_IMPORT = re.compile(_STATEMENT + r"import[ \t]+([^\n#;]+)", re.M)
_FROM = re.compile(_STATEMENT + r"from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+)", re.M)
_CALL = re.compile(
    r"(?<!def )(?<![\w])("
    + "|".join(sorted(IMPORTING_CALLS | DYNAMIC_CALLS | ENTRY_POINT_CALLS))
    + r")\s*\(\s*(?:[rRuU]?(['\"])([^'\"\n\\]*)\2(?=\s*[,)]))?"  # a name spelled whole, else computed
)
_STRING = re.compile(r"""(?<![\w])[rRbBuU]?(['"])([^'"\\\n]{1,200})\1""")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_SYS_PATH_EDIT = re.compile(rb"sys\.path\s*(\.\s*(insert|append|extend)\b|\[[^]]*\]\s*=|\+?=)|addsitedir|PYTHONPATH")
DEFAULT_TEST_FILES = ("test_*.py", "*_test.py")
NEVER_COLLECTED = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")


def _edits_sys_path(data: bytes) -> bool:
    if _SYS_PATH_EDIT.search(data):
        return True
    return bool(opaque_lines(data)) and _SYS_PATH_EDIT.search((text_of(data) or "sys.path=").encode()) is not None


def _ancestors(path: str) -> Iterable[str]:
    yield from folders_above(path)


class Reach(NamedTuple):
    modules: tuple[str, ...]  # base test modules whose closure holds a changed file (sorted)
    everything: bool  # run every test (pytest's own selection)
    reasons: tuple[str, ...]  # why everything, or why some modules could not be decided


class Project:
    """The base revision's Python files, their module names and their imports."""

    def __init__(
        self,
        files: Mapping[str, bytes | None],
        roots: Iterable[str] = ("", "src"),
        entry_points: bool = False,
    ) -> None:
        self.files = {p: d for p, d in files.items() if p.endswith(".py")}
        self.paths = set(self.files)
        self.dirs = {folder for p in self.paths for folder in _ancestors(p)}
        self.roots = sorted({r.strip("/") for r in roots} | {self._basedir(p) for p in self.paths})
        self.entry_points = entry_points
        self.path_edits = any(d is not None and _edits_sys_path(d) for d in self.files.values())
        self.undecided: dict[str, str] = {}  # path -> why its imports cannot be decided
        self._edges: dict[str, set[str]] = {}
        self._by_tail: dict[str, list[str]] | None = None

    def _basedir(self, path: str) -> str:
        """The folder pytest's default import mode puts on sys.path for PATH: above its top package."""
        folder = posixpath.dirname(path)
        while folder and posixpath.join(folder, "__init__.py") in self.paths:
            folder = posixpath.dirname(folder)
        return folder

    def top_level(self) -> set[str]:
        """First components of every module name, under every root."""
        found = set()
        for path in self.paths:
            for root in self.roots:
                if not root or path.startswith(root + "/"):
                    found.add((path[len(root) + 1 :] if root else path).split("/", 1)[0].removesuffix(".py"))
        return found

    # -- resolution ---------------------------------------------------------------

    def _chain(self, folder: str, parts: Sequence[str]) -> list[str]:
        """Files that `import FOLDER/PARTS` runs: each package's __init__, then the module; [] if none."""
        found = []
        here = folder
        for i, part in enumerate(parts):
            here = posixpath.join(here, part) if here else part
            init = posixpath.join(here, "__init__.py")
            if init in self.paths:
                found.append(init)
            elif i == len(parts) - 1 and here + ".py" in self.paths:
                found.append(here + ".py")
            elif here not in self.dirs:
                return []
        return found

    def resolve(self, dotted: str, level: int = 0, importer: str = "") -> list[str]:
        parts = [p for p in dotted.split(".") if p]
        if level:
            folder = posixpath.dirname(importer)
            for _ in range(level - 1):
                folder = posixpath.dirname(folder)
            return (
                self._chain(folder, parts)
                if parts
                else [f for f in [posixpath.join(folder, "__init__.py")] if f in self.paths]
            )
        found: list[str] = []
        for root in self.roots:
            found += self._chain(root, parts)
        if not found and self.path_edits and parts:
            found = self._by_dotted_tail(parts)
        return found

    def _by_dotted_tail(self, parts: Sequence[str]) -> list[str]:
        if self._by_tail is None:
            self._by_tail = {}
            for path in self.paths:
                stem = path.removesuffix("/__init__.py").removesuffix(".py")
                self._by_tail.setdefault(stem.rsplit("/", 1)[-1], []).append(path)
        tail = "/".join(parts)
        return [
            p
            for p in self._by_tail.get(parts[-1], [])
            if p.removesuffix("/__init__.py").removesuffix(".py").endswith("/" + tail)
        ]

    def _string_refs(self, text: str, importer: str) -> list[str]:
        if text.endswith(".py") or "/" in text:
            clean = posixpath.normpath(text.replace("\\", "/")).lstrip("./")
            if clean in self.paths:
                return [clean]
            if text.endswith(".py"):
                base = posixpath.basename(clean)
                return [p for p in self.paths if p == clean or p.endswith("/" + clean) or posixpath.basename(p) == base]
            return []
        if not _DOTTED.match(text) or len(text) > 200:
            return []
        parts = text.split(".")
        for end in range(len(parts), 0, -1):  # mock.patch("pkg.mod.func"): the longest module prefix
            found = [f for root in self.roots for f in self._chain(root, parts[:end])]
            if found:
                return found
        return []

    # -- edges ------------------------------------------------------------------------

    def edges(self, path: str) -> set[str]:
        if path not in self._edges:
            self._edges[path] = self._read_edges(path)
        return self._edges[path]

    def _read_edges(self, path: str) -> set[str]:
        found = set(self._chain("", path.split("/")[:-1]))  # its own packages' __init__ files
        data = self.files.get(path)
        if data is None:
            return found
        # Read by pattern, not parsed: several times faster on big test modules, and a match in a
        # comment or docstring only adds a test to the selection, never drops one.
        decoded = text_of(data)
        if decoded is None:
            self.undecided.setdefault(path, "it does not decode")
            return found | {UNKNOWN}
        text = decoded.replace("\\\n", " ")
        for match in _IMPORT.finditer(text):
            for part in match.group(1).split(","):
                words = part.split()
                if words:
                    found.update(self.resolve(words[0], 0, path))
        for match in _FROM.finditer(text):
            level, module = len(match.group(1)), match.group(2)
            found.update(self.resolve(module, level, path))
            for part in match.group(3).strip("()").replace("\n", ",").split(","):
                words = part.split()
                if words and words[0] != "*" and _DOTTED.match(words[0]):
                    found.update(self.resolve(f"{module}.{words[0]}" if module else words[0], level, path))
        for match in _CALL.finditer(text):
            found.update(self._call_edges(match.group(1), match.group(3), path))
        for match in _STRING.finditer(text):
            found.update(self._string_refs(match.group(2), path))
        found.discard(path)
        return found

    def _call_edges(self, name: str, constant: str | None, path: str) -> set[str]:
        if name in IMPORTING_CALLS:
            if constant:
                level = len(constant) - len(constant.lstrip("."))
                return set(self.resolve(constant.lstrip("."), level, path))
            self.undecided.setdefault(path, f"{name}() with a computed name")
            return {UNKNOWN}
        if name in DYNAMIC_CALLS and not (name == "exec" and constant is not None):
            self.undecided.setdefault(path, f"{name}()")
            return {UNKNOWN}
        if name in ENTRY_POINT_CALLS and self.entry_points:
            self.undecided.setdefault(path, f"{name}() while the project declares entry points")
            return {UNKNOWN}
        return set()

    def closure(self, seeds: Iterable[str]) -> set[str]:
        """SEEDS and every file they import, transitively (conftests not included)."""
        todo = list(seeds)
        seen = set(todo)
        while todo:
            for target in self.edges(todo.pop()):
                if target not in seen and target != UNKNOWN:
                    seen.add(target)
                    todo.append(target)
        return seen

    def reaching(self, targets: Iterable[str]) -> set[str]:
        """Every file whose import closure holds one of TARGETS or an undecidable import."""
        reverse: dict[str, set[str]] = {}
        for path in self.paths:
            for target in self.edges(path):
                reverse.setdefault(target, set()).add(path)
        todo = [*targets, UNKNOWN]
        seen = set(todo)
        while todo:
            for importer in reverse.get(todo.pop(), ()):
                if importer not in seen:
                    seen.add(importer)
                    todo.append(importer)
        return seen


def is_test_module(path: str, patterns: Sequence[str] = DEFAULT_TEST_FILES, testpaths: Sequence[str] = ()) -> bool:
    """Whether pytest's default walk would collect PATH as a test module (python_files, testpaths)."""
    name = posixpath.basename(path)
    if not any(fnmatch.fnmatch(path if "/" in p else name, p) for p in patterns):
        return False
    folders = path.split("/")[:-1]
    if any(fnmatch.fnmatch(f, pattern) for f in folders for pattern in NEVER_COLLECTED):
        return False
    wanted = [t.strip("/") for t in testpaths if t.strip("/") not in ("", ".")]
    return not wanted or any(path == t or path.startswith(t + "/") for t in wanted)


def tests_reaching(
    project: Project,
    changed: Iterable[str],
    test_modules: Iterable[str],
    plugins: Iterable[str] = (),
) -> Reach:
    """The base test modules whose closure holds a CHANGED file (base or new path).

    CHANGED are production paths the change edited, added, moved or deleted;
    PLUGINS are project files every test loads (``-p``, ``pytest11``).
    """
    changed = sorted(set(changed))
    reasons = []
    base_tops = project.top_level()
    for path in changed:
        stem = posixpath.basename(path).removesuffix(".py")
        if stem in STARTUP_MODULES:
            reasons.append(f"{path} runs at interpreter start")
        elif path not in project.paths and path.endswith(".py"):
            tops = {
                (path[len(r) + 1 :] if r else path).split("/", 1)[0].removesuffix(".py")
                for r in project.roots
                if not r or path.startswith(r + "/")
            }
            if tops - base_tops:
                reasons.append(f"{path} is a new top-level module (it can shadow an installed one)")
    if reasons:
        return Reach((), True, tuple(reasons))
    reached = project.reaching(p for p in changed if p.endswith(".py"))
    conftests = sorted(p for p in project.paths if posixpath.basename(p) == "conftest.py")
    everywhere = [p for p in plugins if p in reached]
    selected = []
    for module in sorted(test_modules):
        folder = posixpath.dirname(module)
        above = [
            c
            for c in conftests
            if posixpath.dirname(c) in ("", folder) or folder.startswith(posixpath.dirname(c) + "/")
        ]
        if everywhere or module in reached or any(c in reached for c in above):
            selected.append(module)
    undecided = sorted(set(project.undecided) & project.closure(selected))
    why = tuple(f"{p}: {project.undecided[p]}" for p in undecided[:3])
    return Reach(tuple(selected), False, why)
