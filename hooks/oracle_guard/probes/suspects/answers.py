"""An answer as data, the same inside the test run and in a plain interpreter (the standard library only).

Loaded by file path by plugin.py (inside the project's pytest) and by outside.py (a plain
interpreter): both must reduce a value to the same form.  A value compares by its exact type and
its contents: numbers, strings, bytes and containers of them by value, other objects by their
pickle, else (a subclass of a number, string or bytes type) by its plain value, else by a repr that
holds no memory address, else by their type alone (``opaque``).
An exception compares by its type.
"""

from __future__ import annotations

import hashlib
import pickle
import re
from typing import Any

ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")
PLAIN = (int, float, str, bytes, bool, type(None), complex)
MAX_ITEMS = 1000
MAX_DEPTH = 20


def type_name(kind: type) -> str:
    return f"{getattr(kind, '__module__', '?')}.{getattr(kind, '__qualname__', kind.__name__)}"


def of_value(value: Any, depth: int = 0) -> list[Any]:
    """[type name, form]: form None when the value has no stable form (its type alone is compared)."""
    kind = type(value)
    name = type_name(kind)
    if kind in PLAIN:
        return [name, repr(value)]
    if depth < MAX_DEPTH and kind in (list, tuple) and len(value) <= MAX_ITEMS:
        return [name, [of_value(v, depth + 1) for v in value]]
    if depth < MAX_DEPTH and kind is dict and len(value) <= MAX_ITEMS:
        return [name, [[of_value(k, depth + 1), of_value(v, depth + 1)] for k, v in value.items()]]
    if depth < MAX_DEPTH and kind in (set, frozenset) and len(value) <= MAX_ITEMS:
        return [name, sorted((of_value(v, depth + 1) for v in value), key=repr)]
    try:
        data = pickle.dumps(value, protocol=4)
    except Exception:
        data = None
    if data is not None:
        return [name, "pickle:" + hashlib.sha1(data).hexdigest()]
    builtin = next((base for base in PLAIN if isinstance(value, base)), None)
    if builtin is not None:  # a subclass of a plain type: its plain value, whatever its repr or pickle say
        try:
            plain_repr: Any = builtin.__repr__  # the plain type's own, past any override of the subclass
            return [name, "plain:" + plain_repr(value)[:2000]]
        except Exception:
            return [name, None]
    try:
        text = repr(value)
    except Exception:
        return [name, None]
    return [name, None if ADDRESS.search(text) else "repr:" + text[:2000]]


def of_call(call: Any) -> list[Any]:
    """The answer of CALL (a no-argument callable): ["value", form] or ["raised", exception type]."""
    try:
        value = call()
    except Exception as exc:  # an exception is an answer; SystemExit and the like end the run
        return ["raised", type_name(type(exc))]
    return ["value", of_value(value)]


def same(inside: list[Any], outside: list[Any]) -> bool | None:
    """True/False when the two answers compare; None when either has no stable form beyond its type."""
    if inside[0] != outside[0]:
        return False
    if inside[0] == "raised":
        return bool(inside[1] == outside[1])
    if inside[1][0] != outside[1][0]:
        return False
    if _opaque(inside[1]) or _opaque(outside[1]):
        return None
    return bool(inside[1] == outside[1])


def _opaque(form: list[Any]) -> bool:
    body = form[1]
    if body is None:
        return True
    if not isinstance(body, list):
        return False
    for part in body:  # a form [name, body], or a dict's [key form, value form]
        if isinstance(part[0], str) and _opaque(part):
            return True
        if isinstance(part[0], list) and (_opaque(part[0]) or _opaque(part[1])):
            return True
    return False
