"""Generated modules a scratch tree needs that git does not hold: a version file written at install time.

setuptools-scm and hatch-vcs write ``src/pkg/_version.py`` when the project is installed, and git
ignores it; the package imports it, so a tree exported from git fails every test at import.  Such a
file is laid into the scratch trees from the work tree when all of these hold, so that nothing the
patch controls runs through it:

- git ignores it and lists it one by one (an ignored folder such as ``.venv/`` is not looked into);
- the base's own code imports it by name (a base module beside it names the module in an import);
- it holds data only: literals, names, type expressions, imports from ``typing``/``__future__``,
  ``if TYPE_CHECKING:`` blocks (nothing in it can run code when imported);
- the tree does not have that path already.

A change that starts importing such a module (a project moved to setuptools-scm, a new hatch-vcs
``_version.py``: the user's CI installs the change, which writes the file) needs it in the trees where
the change's code runs: the new tree, the new side's flip tree, the target tree, the mutation probe's
new-code trees.  Laid there (never where the base's code runs: the base tree, the base's flip tree,
tests-at-base, the base's collection, where one more file could change what the base's own tests see,
a test that walks the package) when, on top of the conditions above but the base's import:

- the change's version of a module beside it names it in an import;
- a build configuration the change leaves (``pyproject.toml``, ``setup.cfg``, ``setup.py`` in a folder
  above it) names its path: the installer writes it, so the work tree's copy is the one CI sees;
- it binds version names only (``__version__``, ``version_tuple``, ``__commit_id__``...): the base
  never vouched for it, and a table of answers kept out of git must not answer the change's tests.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
from collections.abc import Iterable

from oracle_guard.repo import changes

MAX_BYTES = 64 * 1024
MAX_FILES = 20
_IMPORTABLE = frozenset({"__future__", "typing", "typing_extensions"})
# What setuptools-scm, hatch-vcs and vcs-versioning bind in the version files they write.
VERSION_NAMES = frozenset(
    {
        "__all__",
        "__version__",
        "version",
        "__version_tuple__",
        "version_tuple",
        "__commit_id__",
        "commit_id",
        "TYPE_CHECKING",
        "VERSION_TUPLE",
        "COMMIT_ID",
    }
)
BUILD_CONFIGS = ("pyproject.toml", "setup.cfg", "setup.py")


def ignored_modules(top: str) -> list[str]:
    """The ignored .py files git lists one by one under TOP (relative, '/'-separated)."""
    try:
        proc = subprocess.run(
            ("git", "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", "--", "*.py"),
            cwd=top,
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if proc.returncode != 0:
        return []
    names = [os.fsdecode(p) for p in proc.stdout.split(b"\0") if p and p.endswith(b".py")]
    return sorted(names)[:MAX_FILES]


def _import_pattern(path: str) -> str:
    stem = path.rpartition("/")[2][: -len(".py")]
    return rf"^\s*(from|import)\s.*\b{stem}\b"


def _imported_by_base(base: str, path: str, top: str) -> bool:
    """Whether a base module beside PATH names its module in an import (git grep at BASE)."""
    folder = path.rpartition("/")[0]
    pattern = _import_pattern(path)
    try:
        proc = subprocess.run(
            ("git", "grep", "-q", "-E", pattern, base, "--", f"{folder}/*.py" if folder else "*.py"),
            cwd=top,
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def _type_like(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return _type_like(node.value)
    if isinstance(node, ast.Subscript):
        return _type_like(node.value) and _type_like(node.slice)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _type_like(node.left) and _type_like(node.right)
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_type_like(e) for e in node.elts)
    return False


def _value(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _type_like(node)
    return True


def _statement(node: ast.stmt) -> bool:
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Constant)
    if isinstance(node, ast.ImportFrom):
        return node.level == 0 and node.module in _IMPORTABLE
    if isinstance(node, ast.Import):
        return all(alias.name in _IMPORTABLE for alias in node.names)
    if isinstance(node, ast.Assign):
        return all(isinstance(t, ast.Name) for t in node.targets) and _value(node.value)
    if isinstance(node, ast.AnnAssign):
        return (
            isinstance(node.target, ast.Name)
            and _type_like(node.annotation)
            and (node.value is None or _value(node.value))
        )
    if isinstance(node, ast.If):
        test = node.test.operand if isinstance(node.test, ast.UnaryOp) else node.test
        return (
            isinstance(test, ast.Name)
            and test.id == "TYPE_CHECKING"
            and all(_statement(s) for s in [*node.body, *node.orelse])
        )
    return isinstance(node, ast.Pass)


def data_only(source: bytes) -> bool:
    """Whether SOURCE is a module of data only: importing it runs no code of its own."""
    if len(source) > MAX_BYTES:
        return False
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return all(_statement(s) for s in tree.body)


def version_only(source: bytes) -> bool:
    """Whether SOURCE is data only and binds nothing but the names a version file's writer binds."""
    if not data_only(source):
        return False
    bound: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign):
            bound += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            bound.append(node.target.id)
    return all(name in VERSION_NAMES for name in bound)


def candidates(top: str) -> dict[str, bytes]:
    """Path -> bytes of the ignored, data-only modules under TOP (one `git ls-files`, read once)."""
    found: dict[str, bytes] = {}
    for path in ignored_modules(top):
        try:
            with open(os.path.join(top, path), "rb") as f:
                data = f.read(MAX_BYTES + 1)
        except OSError:
            continue
        if data_only(data):
            found[path] = data
    return found


def needed(top: str, base: str, found: dict[str, bytes] | None = None) -> dict[str, bytes]:
    """Path -> bytes of the generated modules to lay into scratch trees exported from BASE."""
    found = candidates(top) if found is None else found
    return {path: data for path, data in found.items() if _imported_by_base(base, path, top)}


def _new_version(change: changes.ChangeSet, path: str) -> bytes | None:
    """PATH as the change leaves it: its new bytes, or the base's when the change does not touch it."""
    if change.is_changed(path):
        return change.read_new([path])[path]
    if path in change.deleted:
        return None
    return change.read_base([path])[path]


def _declared(change: changes.ChangeSet, path: str) -> bool:
    """Whether a build configuration the change leaves in a folder above PATH names it (its version file)."""
    parts = path.split("/")
    for depth in range(len(parts) - 1, -1, -1):
        folder = "/".join(parts[:depth])
        relative = "/".join(parts[depth:])
        quoted = re.compile(rb"""["']%s["']""" % re.escape(relative.encode()))
        for config in BUILD_CONFIGS:
            data = _new_version(change, f"{folder}/{config}" if folder else config)
            if data is not None and quoted.search(data):
                return True
    return False


def needed_by_change(
    found: dict[str, bytes], for_base: dict[str, bytes], change: changes.ChangeSet
) -> dict[str, bytes]:
    """Path -> bytes of the generated modules the change's new code imports and the base's does not.

    Only the modules the change writes beside one of FOUND are read: a change whose Python files sit
    beside no ignored module costs nothing more.
    """
    folders: dict[str, list[str]] = {}
    for path in found:
        if path not in for_base:
            folders.setdefault(path.rpartition("/")[0], []).append(path)
    if not folders:
        return {}
    beside = [p for p in change.changed_paths if p.endswith(".py") and p.rpartition("/")[0] in folders]
    if not beside:
        return {}
    blobs = change.read_new(beside)
    extra: dict[str, bytes] = {}
    for path in (p for paths in folders.values() for p in paths):
        pattern = re.compile(_import_pattern(path).encode(), re.MULTILINE)
        importers = [p for p in beside if p != path and p.rpartition("/")[0] == path.rpartition("/")[0]]
        if not any(pattern.search(blobs.get(p) or b"") for p in importers):
            continue
        if version_only(found[path]) and _declared(change, path):
            extra[path] = found[path]
    return extra


def lay(files: dict[str, bytes], dests: Iterable[str]) -> None:
    """Write FILES into each of DESTS where the tree has no such path."""
    for dest in dests:
        for path, data in files.items():
            target = os.path.join(dest, *path.split("/"))
            if os.path.lexists(target) or not os.path.isdir(os.path.dirname(target)):
                continue
            with open(target, "wb") as f:
                f.write(data)
