"""Doctest examples weakened since the base (OG316).

In a project whose pytest collects doctests (``--doctest-modules``,
``--doctest-glob``), every ``>>>`` example is a check: its expected output is
the expectation, and the cheapest ways to turn a failing one green mirror the
test-file cheats: rewrite the expected output to what the code prints, add a
directive that stops comparing (``+SKIP``, ``+ELLIPSIS``,
``+NORMALIZE_WHITESPACE``, ``+IGNORE_EXCEPTION_DETAIL``), remove the example, or
replace the docstring while the module runs (``f.__doc__ = ...``, a decorator
that sets it), so pytest collects examples nobody reviewed.

Examples are keyed by their owner (the module, class or function docstring, or
the text file) and their source: an example whose source stayed and whose
expected output changed is rewritten, one whose source is gone from an owner
that is still there was removed.  Reformatting a docstring, adding examples, or
removing a directive pass.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import Counter
from typing import NamedTuple

from oracle_guard.analysis.pysource import Module, SourceError

# Directives that make an example compare less (or not at all) when switched on.
LOOSENING = {"SKIP", "ELLIPSIS", "NORMALIZE_WHITESPACE", "IGNORE_EXCEPTION_DETAIL", "DONT_ACCEPT_BLANKLINE"}
_DIRECTIVE = re.compile(r"#\s*doctest:.*$")  # the example's own switches: not part of what it runs


class Example(NamedTuple):
    owner: str  # the qualname whose docstring holds it ("" for the module or a text file)
    source: str
    want: str
    loosened: frozenset[str]  # the loosening directives switched on for it
    line: int  # in the file


def _parse(text: str, owner: str, first_line: int) -> list[Example]:
    if ">>>" not in text:
        return []  # doctest finds examples only after a prompt
    try:
        import doctest  # here: it imports pdb, unittest and more, and most commits have no doctest

        found = doctest.DocTestParser().get_examples(text)
    except ValueError:
        return []  # not valid doctest syntax: pytest fails to collect it, which the run reports
    out = []
    for ex in found:
        on = frozenset(_flag_names().get(flag, "") for flag, value in ex.options.items() if value) & LOOSENING
        source = "\n".join(_DIRECTIVE.sub("", line).rstrip() for line in ex.source.strip().splitlines())
        out.append(Example(owner, source, ex.want, on, first_line + ex.lineno))
    return out


def of_text(text: str) -> Doctests:
    """The examples of a text file pytest collects with ``--doctest-glob``."""
    return Doctests(_parse(text, "", 1), [], {""})


class Doctests(NamedTuple):
    examples: list[Example]
    rewrites: list[tuple[int, str]]  # (line, what) of each run-time docstring rewrite
    owners: set[str]  # every module, class and function defined: "" for the module


def of_module(data: bytes, path: str) -> Doctests:
    """The examples of every docstring of a Python module, and its run-time docstring rewrites."""
    try:
        module = Module.from_source(path, data)
    except SourceError:
        return Doctests([], [], set())  # another rule (or pytest) reports a module that does not parse
    owners = {""}
    examples: list[Example] = []
    rewrites: list[tuple[int, str]] = []
    setters = _doc_setters(module.tree)

    def visit(node: ast.AST, prefix: str) -> None:
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        ):
            first = body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                examples.extend(_parse(first.value.value, prefix, first.lineno))
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                owners.add(f"{prefix}.{child.name}" if prefix else child.name)
                visit(child, f"{prefix}.{child.name}" if prefix else child.name)
            elif isinstance(child, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                for t in targets:
                    if (isinstance(t, ast.Attribute) and t.attr == "__doc__") or (
                        isinstance(t, ast.Name) and t.id == "__doc__" and prefix == ""
                    ):
                        rewrites.append((child.lineno, ast.unparse(t)))
            elif isinstance(child, ast.Call) and _sets_doc(child):
                rewrites.append((child.lineno, ast.unparse(child)))
            if not isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, prefix)
            else:
                for deco in child.decorator_list:
                    visit(deco, prefix)
                    name = deco.func if isinstance(deco, ast.Call) else deco
                    if isinstance(name, ast.Name) and name.id in setters:
                        rewrites.append((deco.lineno, f"@{ast.unparse(name)} on {child.name}"))

    visit(module.tree, "")
    return Doctests(examples, rewrites, owners)


def _doc_setters(tree: ast.Module) -> set[str]:
    """Module functions that set a ``__doc__`` somewhere inside (decorators that replace docstrings)."""
    out = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if (
                    isinstance(inner, ast.Attribute) and inner.attr == "__doc__" and isinstance(inner.ctx, ast.Store)
                ) or (isinstance(inner, ast.Call) and _sets_doc(inner)):
                    out.add(node.name)
                    break
    return out


def _sets_doc(call: ast.Call) -> bool:
    """``setattr(f, "__doc__", ...)``."""
    return (
        isinstance(call.func, ast.Name)
        and call.func.id == "setattr"
        and len(call.args) >= 2
        and isinstance(call.args[1], ast.Constant)
        and call.args[1].value == "__doc__"
    )


@functools.cache
def _flag_names() -> dict[int, str]:
    import doctest

    return {flag: name for name, flag in doctest.OPTIONFLAGS_BY_NAME.items()}


def _flat(want: str) -> str:
    return " ".join(want.split())


def compare(base: Doctests, after: Doctests) -> list[tuple[int, str]]:
    """(line, message) for each example weakened from BASE to AFTER, and each new run-time docstring rewrite.

    Examples pair by owner and source first; those left pair in order within their owner (an example
    respelled, `Unit.DAYS` -> `_Unit.DAYS`), and such a pair is judged by its expected output alone."""
    out: list[tuple[int, str]] = []
    new, owners = after.examples, after.owners
    new_by: dict[tuple[str, str], list[Example]] = {}
    for e in new:
        new_by.setdefault((e.owner, e.source), []).append(e)
    unmatched: list[Example] = []
    for old in base.examples:
        same = new_by.get((old.owner, old.source))
        shown = old.source.splitlines()[0][:60]
        if not same:
            unmatched.append(old)
            continue
        now = same.pop(0)
        if _flat(now.want) != _flat(old.want):
            before = _flat(old.want)[:40] or "no output"
            out.append(
                (now.line, f"doctest `>>> {shown}` expects other output ({before!r} -> {_flat(now.want)[:40]!r})")
            )
        elif now.loosened - old.loosened:
            added = ", ".join(f"+{d}" for d in sorted(now.loosened - old.loosened))
            out.append((now.line, f"doctest `>>> {shown}` gained {added}: it compares less than the base's example"))
    left: dict[str, list[Example]] = {}
    for examples in new_by.values():
        for e in examples:
            left.setdefault(e.owner, []).append(e)
    for examples in left.values():
        examples.sort(key=lambda e: e.line)
    for old in unmatched:
        shown = old.source.splitlines()[0][:60]
        respelled = left.get(old.owner)
        if respelled:
            now = respelled.pop(0)
            if _flat(now.want) != _flat(old.want):
                out.append(
                    (
                        now.line,
                        f"doctest `>>> {shown}` became `>>> {now.source.splitlines()[0][:60]}` and expects other output "
                        f"({_flat(old.want)[:40] or 'no output'!r} -> {_flat(now.want)[:40]!r})",
                    )
                )
        elif old.owner in owners:
            where = f"`{old.owner}`" if old.owner else "the file"
            line = min((e.line for e in new if e.owner == old.owner), default=1)
            out.append((line, f"doctest `>>> {shown}` was removed from {where}'s examples"))
    was = Counter(text for _, text in base.rewrites)
    for line, text in after.rewrites:
        if was[text]:
            was[text] -= 1
            continue
        out.append(
            (
                line,
                f"`{text}` rewrites a docstring while the module runs: its doctest examples are no longer the ones reviewed",
            )
        )
    return out
