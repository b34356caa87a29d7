"""Which base tests of a changed test module the change touched: the only ones whose catches can be lost.

A test the change did not touch runs the same on both sides, so every mutant
it catches at the base it catches in the new tree too: running it at the base
costs time and can never be a finding.  So the base side runs the test
functions the change edited or deleted, and nothing else of the module, when
that is all the change did to the module.  When anything else in it changed
(an import, a fixture, a helper, a constant, a class header, a comment), any
test may behave differently, and the whole module runs, as before.
"""

from __future__ import annotations

import ast


def _units(source: bytes) -> tuple[dict[str, str], list[str]] | None:
    """Test functions by qualified name (their text, decorators included), and every other non-blank line.

    None when the module does not parse or repeats a test name (a later def shadows an earlier one).
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    lines = source.decode("utf-8", "replace").splitlines()
    units: dict[str, str] = {}
    taken: set[int] = set()

    def add(name: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        if name in units:
            return False
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        last = node.end_lineno or node.lineno
        if lines[first - 1][: node.col_offset].strip() or _shares(lines, last, node):
            return False  # something else shares its first or last line: not a unit of its own
        units[name] = "\n".join(lines[first - 1 : last])
        taken.update(range(first, last + 1))
        return True

    classes = {stmt.name for stmt in tree.body if isinstance(stmt, ast.ClassDef)}
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id in classes for b in stmt.bases):
            return None  # a class inherits this module's test methods: they run under another class's setUp too
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name.startswith("test"):
            if not add(stmt.name, stmt):
                return None
        elif isinstance(stmt, ast.ClassDef) and _test_class(stmt):
            for inner in stmt.body:
                if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)) and inner.name.startswith("test"):
                    if not add(f"{stmt.name}::{inner.name}", inner):
                        return None
    rest = [line.rstrip() for number, line in enumerate(lines, 1) if number not in taken and line.strip()]
    return units, rest


def _shares(lines: list[str], last: int, node: ast.AST) -> bool:
    """A statement after the function's last line on that same line (`def test(): pass; x = 1`)."""
    end = getattr(node, "end_col_offset", None)
    return end is not None and bool(lines[last - 1][end:].split("#")[0].strip())


def _test_class(node: ast.ClassDef) -> bool:
    """A class pytest collects the tests of: named Test*, or a unittest TestCase by its base's name."""
    if node.name.startswith("Test"):
        return True
    for base in node.bases:
        name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
        if name.endswith("TestCase"):
            return True
    return False


def touched_tests(path: str, base: bytes, new: bytes) -> list[str] | None:
    """Node ids (PATH::name, PATH::Class::name) of the base tests the change edited or deleted; None: the whole
    module (something other than test functions changed, or the module cannot be read so finely)."""
    before, after = _units(base), _units(new)
    if before is None or after is None or before[1] != after[1]:
        return None
    old, now = before[0], after[0]
    touched = [f"{path}::{name}" for name, text in old.items() if now.get(name) != text]
    return touched or None
