"""The base's doctest examples against the new code.

The new tree lays the change's production modules over the base, docstrings included, so a module's
own examples run there in their NEW version: a change that edits the code and its examples together
would judge itself.  For each doctest the base's run collected from a changed module whose docstring
the change edited, the base's docstring is written into the new tree as a doctest text file that
first takes the new module's namespace (what a module's examples see), and run there; its outcome
stands for that doctest in the new run, so the base's examples judge the new code.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from oracle_guard.probes.replay import ledger

FOLDER = ".oracle_guard_base_doctests"
PREFIX = "test_og_base_doctest_"
# A doctest item is named by its dotted object (`pkg.mod.func`); a test function never has a dot.
WHERE = re.compile(re.escape(PREFIX) + r"\d+\.txt:(\d+):?")
HEADER_LINES = 3
DOTTED = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+$|^[A-Za-z_]\w*$")


class Rewritten(NamedTuple):
    node: str  # the base's doctest node id
    module: str  # the dotted module the examples run in
    text: str  # the base docstring, cleaned


def _docstring(tree: ast.Module, qualname: list[str]) -> str | None:
    scope: ast.AST = tree
    for part in qualname:
        body = getattr(scope, "body", [])
        found = next(
            (
                n
                for n in body
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == part
            ),
            None,
        )
        if found is None:
            return None
        scope = found
    assert isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    return ast.get_docstring(scope, clean=True)


def _parse(data: bytes | None) -> ast.Module | None:
    if data is None:
        return None
    try:
        return ast.parse(data)
    except (SyntaxError, ValueError, RecursionError):
        return None


def rewritten(
    base_items: dict[str, ledger.Outcome],
    base_sources: dict[str, bytes | None],
    new_sources: dict[str, bytes | None],
    renamed: Mapping[str, str] | None = None,
) -> list[Rewritten]:
    """The base's doctests in changed modules whose docstring the change edited (RENAMED: base path -> the
    change's path of a module it moved, whose new version is compared)."""
    found = []
    trees: dict[str, tuple[ast.Module | None, ast.Module | None]] = {}
    for node in sorted(base_items):
        path, _, name = node.partition("::")
        now = (renamed or {}).get(path, path)
        if now not in new_sources or not path.endswith(".py") or "::" in name or not DOTTED.match(name):
            continue
        if path not in trees:
            trees[path] = (_parse(base_sources.get(path)), _parse(new_sources.get(now)))
        base_tree, new_tree = trees[path]
        if base_tree is None:
            continue
        parts = name.split(".")
        for cut in range(1, len(parts) + 1):  # the shortest module name whose rest names a docstring
            before = _docstring(base_tree, parts[cut:])
            if before is None or ">>>" not in before:
                continue
            after = _docstring(new_tree, parts[cut:]) if new_tree is not None else None
            if after != before:
                found.append(Rewritten(node, ".".join(parts[:cut]), before))
            break
    return found


def write(tree: str, edited: Sequence[Rewritten]) -> dict[str, str]:
    """Write each base docstring into TREE as a doctest file; generated node id -> the base's node id."""
    folder = os.path.join(tree, FOLDER)
    os.makedirs(folder, exist_ok=True)
    ids = {}
    for number, item in enumerate(edited):
        name = f"{PREFIX}{number}.txt"
        header = (
            ">>> import importlib as __og_importlib\n"
            f">>> globals().update(vars(__og_importlib.import_module({item.module!r})))\n\n"
        )
        with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
            f.write(header + item.text + "\n")
        ids[f"{FOLDER}/{name}::{name}"] = item.node
    return ids


def args(ids: dict[str, str]) -> list[str]:
    return [f"--doctest-glob={PREFIX}*.txt", *sorted(i.partition("::")[0] for i in ids)]


def standing_in(new: ledger.Result, ran: ledger.Result, ids: dict[str, str]) -> ledger.Result:
    """NEW with each rewritten doctest's outcome taken from the run of the base's examples."""
    items = dict(new.items)
    for generated, node in ids.items():
        before = items.get(node) or new.items.get(node)
        path, line = (before.path, before.line) if before is not None else (node.partition("::")[0], 1)
        outcome = ran.items.get(generated)
        if outcome is None:
            error = ran.errors.get(generated.partition("::")[0], "") or ran.tail or "did not run"
            items[node] = ledger.Outcome("error", path, line, f"the base's examples did not run: {error}")
        else:
            message = _readable(outcome.message)
            items[node] = ledger.Outcome(outcome.outcome, path, line, message)
    return new._replace(items=items)


def _readable(message: str) -> str:
    """The failure, with the generated file's place as the line of the base's docstring it came from."""
    found = WHERE.search(message)
    if found is None:
        return f"the base's examples against the new code: {message}" if message else ""
    line = max(1, int(found.group(1)) - HEADER_LINES)
    rest = message[found.end() :].strip()
    return f"the base's example at line {line} of its docstring fails against the new code{': ' + rest if rest else ''}"
