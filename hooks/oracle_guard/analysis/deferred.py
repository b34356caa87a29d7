"""Functions handed on by reference to run later: ``atexit.register(os._exit, 0)``.

A call spelled ``os._exit(0)`` is easy to see; the same exit passed as a value
to ``atexit.register``, ``threading.Timer``, ``signal.signal``,
``functools.partial`` or ``weakref.finalize`` runs just as surely, at a moment
the test run does not control (after pytest has written its summary, the
process then ends with 0).  Rules ask ``handed_on(call, names, wanted)`` for the
functions of WANTED a call passes on, with the arguments they will be called
with when the call says (positional ones after the reference, or ``args=``).
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator

from oracle_guard.analysis.pysource import Names


def handed_on(call: ast.Call, names: Names, wanted: Collection[str]) -> Iterator[tuple[str, ast.expr, list[ast.expr]]]:
    """(canonical name, the reference, its later arguments) for each function of WANTED that CALL passes on."""
    for index, arg in enumerate(call.args):
        name = _reference(arg, names)
        if name in wanted:
            later = [a for a in call.args[index + 1 :] if not isinstance(a, ast.Starred)]
            yield name, arg, later or _args_keyword(call)
    for keyword in call.keywords:
        if keyword.arg is None:
            continue
        name = _reference(keyword.value, names)
        if name in wanted:
            yield name, keyword.value, _args_keyword(call)


def _reference(node: ast.expr, names: Names) -> str:
    """The canonical name NODE refers to when it is a plain name or attribute (not a call of it)."""
    if isinstance(node, (ast.Name, ast.Attribute)):
        return names.qualify(node) or ""
    return ""


def _args_keyword(call: ast.Call) -> list[ast.expr]:
    """``threading.Timer(1, f, args=(0,))``: the arguments F gets."""
    for keyword in call.keywords:
        if keyword.arg == "args" and isinstance(keyword.value, (ast.Tuple, ast.List)):
            return list(keyword.value.elts)
    return []
