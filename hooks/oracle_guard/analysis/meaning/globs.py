"""Globs over test data in a test module, and the files they match (part of meaning.py).

``glob.glob``, ``Path.glob``/``rglob`` calls with their pattern and the folder
words around them, so a rule can tell which data files a test reads.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterable

from oracle_guard.analysis.pysource import Names
from oracle_guard.analysis.sourcetext import hot_lines

_GLOB_META = ("*", "?", "[")


def glob_sites(
    tree: ast.Module, names: Names, source: bytes | None = None
) -> list[tuple[ast.Call, str, tuple[str, ...], bool]]:
    """(call, pattern, directory words, recursive) of every glob over files, in source order.

    With SOURCE (TREE's text), only the top-level statements whose lines spell `glob` or a
    name bound to one of glob's functions are walked: a glob call is spelled so (or on an
    opaque line, which hot_lines keeps), and the rest of a big module cannot hold one.
    """
    out = []
    for node in (n for statement in _hot_statements(tree, names, source) for n in ast.walk(statement)):
        if not isinstance(node, ast.Call):
            continue
        name = names.qualify(node.func) or ""
        attr = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        if attr not in ("glob", "rglob", "iglob") and name not in ("glob.glob", "glob.iglob"):
            continue
        strings = [
            n.value for a in node.args for n in ast.walk(a) if isinstance(n, ast.Constant) and isinstance(n.value, str)
        ]
        pattern = next((s for s in reversed(strings) if any(m in s for m in _GLOB_META)), None)
        if pattern is None:
            continue
        words = [s for s in strings if s != pattern]
        if isinstance(node.func, ast.Attribute) and attr in ("glob", "rglob") and name not in ("glob.glob",):
            words += [
                n.value for n in ast.walk(node.func.value) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            ]
        recursive = attr == "rglob" or "**" in pattern or any(k.arg == "recursive" for k in node.keywords)
        out.append((node, pattern, tuple(w.strip("/") for w in words if w.strip("/")), recursive))
    out.sort(key=lambda t: (t[0].lineno, t[0].col_offset))
    return out


def _hot_statements(tree: ast.Module, names: Names, source: bytes | None) -> list[ast.stmt]:
    if source is None:
        return tree.body
    words = [b"glob"] + [name.encode() for name, value in names.aliases.items() if "glob" in value]
    hot = hot_lines(source, words)
    kept = []
    for statement in tree.body:
        start = min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", [])])
        i = bisect.bisect_left(hot, start)
        if i < len(hot) and hot[i] <= (statement.end_lineno or statement.lineno):
            kept.append(statement)
    return kept


def glob_matches(files: Iterable[str], pattern: str, words: tuple[str, ...], recursive: bool, near: str) -> set[str]:
    """The files PATTERN matches among FILES in a folder named by WORDS (or under NEAR)."""
    import fnmatch

    last = pattern.rsplit("/", 1)[-1]
    out = set()
    for path in files:
        folder, _, base = path.rpartition("/")
        parts = folder.split("/")
        if words:
            if not all(any(w == "/".join(parts[i : i + w.count("/") + 1]) for i in range(len(parts))) for w in words):
                continue
        elif near and not path.startswith(near + "/"):
            continue
        if "/" in pattern.replace("**/", "") and not recursive:
            if fnmatch.fnmatch(path, "*" + pattern.lstrip("*")) or fnmatch.fnmatch(path, pattern):
                out.add(path)
        elif fnmatch.fnmatch(base, last):
            out.add(path)
    return out
