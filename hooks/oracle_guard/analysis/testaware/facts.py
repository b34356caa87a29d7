"""What the test-aware rules share: an occurrence, the base's facts, and a node's source as its identity."""

from __future__ import annotations

import ast
from typing import Callable, NamedTuple


class Occurrence(NamedTuple):
    key: tuple[str, ...]  # (code, scope, source): identity across versions
    line: int
    col: int
    code: str
    message: str
    # When it counts, decided by the hook only for what the change adds (the base's facts cost git processes):
    # "" always; PLUGIN not in a pytest plugin (its job there); MARKS + "KIND:NAME|..." only if the test side
    # sets one of the names (runner.switch_message).
    when: str = ""


PLUGIN = "not-in-a-plugin"
MARKS = "marks:"


class Facts(NamedTuple):
    """What the base says about the project, for the rules that need it."""

    # Asked only when a rule is about to report: reading the base's packaging files costs a git process.
    entry_functions: Callable[[], frozenset[str]] = frozenset  # functions console scripts name
    plugin: Callable[[], bool] = bool  # this module is a pytest11 plugin at the base
    script: bool = False  # docs, examples, scripts: a process of its own, where exiting is its job
    tests_import: Callable[[str], bool] = lambda module: False  # a module the base's tests import
    # The base side, for matching: count what an entry-point exemption would hide, so that a construct the base
    # had stays the base's when the change removes the `__main__` block that exempted it.
    raw: bool = False
    # The base version of a class of this file, by qualified name (``Outer.Inner``): what its comparisons compared.
    base_class: Callable[[str], ast.ClassDef | None] = lambda qualname: None


def source(node: ast.AST) -> str:
    """NODE's source on one line: what identifies an occurrence across versions."""
    return " ".join(ast.unparse(node).split())
