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
"""

from __future__ import annotations

import ast
import os
import subprocess
from collections.abc import Iterable

MAX_BYTES = 64 * 1024
MAX_FILES = 20
_IMPORTABLE = frozenset({"__future__", "typing", "typing_extensions"})


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


def _imported_by_base(base: str, path: str, top: str) -> bool:
    """Whether a base module beside PATH names its module in an import (git grep at BASE)."""
    folder, _, name = path.rpartition("/")
    stem = name[: -len(".py")]
    pattern = rf"^\s*(from|import)\s.*\b{stem}\b"
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


def needed(top: str, base: str) -> dict[str, bytes]:
    """Path -> bytes of the generated modules to lay into scratch trees exported from BASE."""
    found: dict[str, bytes] = {}
    for path in ignored_modules(top):
        try:
            with open(os.path.join(top, path), "rb") as f:
                data = f.read(MAX_BYTES + 1)
        except OSError:
            continue
        if data_only(data) and _imported_by_base(base, path, top):
            found[path] = data
    return found


def lay(files: dict[str, bytes], dests: Iterable[str]) -> None:
    """Write FILES into each of DESTS where the tree has no such path."""
    for dest in dests:
        for path, data in files.items():
            target = os.path.join(dest, *path.split("/"))
            if os.path.lexists(target) or not os.path.isdir(os.path.dirname(target)):
                continue
            with open(target, "wb") as f:
                f.write(data)
