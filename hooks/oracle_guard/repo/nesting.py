"""A file of the change nested deeper than the gate can analyse: a finding against it (OG928).

The rules walk syntax trees recursively, so a file whose expressions nest deeper than Python's
recursion limit allows stops an analysis with RecursionError.  That was exit 2 ("nothing was
judged"), which the change could bring about by committing such a file beside a cheat.  When an
analysis of a change stops so, the change's most deeply nested Python file is named instead.
"""

from __future__ import annotations

import ast

from oracle_guard.repo.changes import ChangeSet
from oracle_guard.repo.paths import PYTHON_SUFFIXES
from oracle_guard.reporting.report import Finding, UsageError

# The depth from which a file is taken to be what stopped an analysis: far beyond written code (the
# standard library's deepest module is under 40 levels), well under where a recursive walk gives up.
SUSPECT_DEPTH = 100
UNPARSABLE = 1 << 30  # the parser itself gave up (RecursionError): deeper than anything it returns


def deepest(source: bytes) -> tuple[int, int] | None:
    """(depth, line) of SOURCE's most deeply nested node, walked without recursion; None: not Python."""
    try:
        tree = ast.parse(source)
    except RecursionError:
        return UNPARSABLE, 1
    except (SyntaxError, ValueError, MemoryError):
        return None
    found = (0, 1)
    stack: list[tuple[ast.AST, int, int]] = [(tree, 1, 1)]
    while stack:
        node, level, line = stack.pop()
        line = getattr(node, "lineno", line)
        found = max(found, (level, line), key=lambda pair: pair[0])
        stack.extend((child, level + 1, line) for child in ast.iter_child_nodes(node))
    return found


def too_deep(change_set: ChangeSet | None) -> Finding | None:
    """OG928 at the change's most deeply nested Python file, if one is deep enough to have stopped an analysis."""
    if change_set is None:
        return None
    paths = [p for p in change_set.changed_paths if p.endswith(PYTHON_SUFFIXES)]
    try:
        sources = change_set.read_new(paths)
    except UsageError:
        return None  # unreadable (too big: OG929 says so): the analysis' own error stands
    found = [(d, path, line) for path, s in sources.items() if s is not None for d, line in [deepest(s) or (0, 1)]]
    worst = max(found, default=None)
    if worst is None or worst[0] < SUSPECT_DEPTH:
        return None
    depth, path, line = worst
    shown = "deeper than Python's parser goes" if depth >= UNPARSABLE else f"{depth} levels deep"
    text = (
        f"this file nests expressions {shown}, past what the gate's analysis can follow (Python's recursion"
        " limit), so the change cannot be judged and is refused"
    )
    return Finding(path, line, 1, "OG928", text)
