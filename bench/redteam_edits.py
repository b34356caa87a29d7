"""Apply the declarative edits of bench/redteam_recipes.py to a directory tree.

One implementation for the two users of the recipe table: bench/redteam.py
(throwaway clones of real projects) and tests/test_redteam_recipes.py (small
stand-in trees of its own).  Paths are relative to `root`; a missing anchor
is an AssertionError, so a recipe never silently does nothing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from redteam_recipes import Append, CutDef, Delete, Edit, MoveDef, Regex, Rename, Sub, Write


def read(root: str, path: str) -> str:
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()


def write(root: str, path: str, text: str) -> None:
    os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
    with open(os.path.join(root, path), "w", encoding="utf-8") as f:
        f.write(text)


def cut_function(root: str, path: str, name: str) -> str:
    """Remove an undecorated function (and the blank lines after it); return its source."""
    text = read(root, path)
    match = re.search(rf"(?m)^([ \t]*)def {name}\(", text)
    if not match:
        raise AssertionError(f"recipe anchor not found in {path}: def {name}(")
    after = re.compile(rf"(?m)^{match.group(1)}(?=\S)").search(text, match.end())
    end = after.start() if after else len(text)
    write(root, path, text[: match.start()] + text[end:])
    return text[match.start() : end]


def apply_edit(root: str, edit: Edit) -> None:
    """Apply one declarative edit under `root`; a missing anchor is an AssertionError."""
    if isinstance(edit, Sub):
        text = read(root, edit.path)
        if edit.old not in text:
            raise AssertionError(f"recipe anchor not found in {edit.path}: {edit.old[:60]!r}")
        write(root, edit.path, text.replace(edit.old, edit.new, edit.count or -1))
    elif isinstance(edit, Append):
        write(root, edit.path, read(root, edit.path) + edit.text)
    elif isinstance(edit, Write):
        write(root, edit.path, edit.text)
    elif isinstance(edit, Delete):
        os.remove(os.path.join(root, edit.path))
    elif isinstance(edit, Rename):
        os.rename(os.path.join(root, edit.path), os.path.join(root, edit.to))
    elif isinstance(edit, CutDef):
        cut_function(root, edit.path, edit.name)
    elif isinstance(edit, MoveDef):
        block = cut_function(root, edit.path, edit.name)
        write(root, edit.to, read(root, edit.to).rstrip("\n") + "\n\n\n" + block.rstrip("\n") + "\n")
    elif isinstance(edit, Regex):
        text, n = re.subn(edit.pattern, edit.repl, read(root, edit.path))
        if not n:
            raise AssertionError(f"recipe pattern not found in {edit.path}: {edit.pattern!r}")
        write(root, edit.path, text)
    else:
        raise TypeError(f"unknown edit {edit!r}")


def apply_edits(root: str, edits: Iterable[Edit]) -> None:
    for edit in edits:
        apply_edit(root, edit)
