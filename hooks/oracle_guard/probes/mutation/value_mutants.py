"""Mutants that keep a value's type and change what it holds: the bugs a weakened test stops seeing.

mutmut's table (mutants.py) changes operators and constants; a test that
compares only the first element, checks only the first case of a loop or
compares a result with itself still catches most of those, because they
break the value outright (``None``, a wrong operator).  What such a test
misses is a value of the right type with the wrong content, so these
operators make exactly that:

- ``method-drop``: a str method that returns a str of its receiver removed
  (``name.strip().title()`` -> ``name.title()``);
- ``sorted-list``: the sorting removed (``sorted(x)`` -> ``list(x)``, a list still);
- ``set-list``: the de-duplication removed (``set(x)`` -> ``list(x)``,
  ``{f(x) for x in y}`` -> ``[f(x) for x in y]``);
- ``fstring``: an f-string's constant part changed (``f"{a} [{b}]"`` -> ``f"XX{a} [{b}]"``);
- ``slice-lower``/``slice-upper``: a slice bound that is not a constant moved by one
  (``x[i:]`` -> ``x[i + 1:]``; constant bounds already get numbers plus one);
- ``return-neighbour``: a returned value replaced by a neighbour of its type, when the
  type is known from the expression or the function's annotation (a bool negated, an int
  plus one, a str plus ``"x"``, a list without its last element).

A mutant that cannot change behaviour is not made: a method whose result on a
literal receiver equals the receiver (``"a".lower()``), sorting a literal that is
already in order, a method removed from a call whose result is thrown away, a
builtin name the module binds itself.  Each edit keeps every line where it was.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any, Protocol

# str (and bytes) methods whose result has the receiver's type: removing one keeps the type, changes the content.
SAME_TYPE_METHODS = frozenset(
    {"strip", "lstrip", "rstrip", "lower", "upper", "title", "capitalize", "casefold", "swapcase"}
)
STR_RESULT_METHODS = SAME_TYPE_METHODS | {"join", "format", "zfill", "center", "ljust", "rjust"}
BOOL_CALLS = frozenset({"isinstance", "issubclass", "callable", "hasattr", "any", "all", "bool"})
INT_CALLS = frozenset({"len", "int", "ord"})
STR_CALLS = frozenset({"str", "repr", "chr"})
LIST_CALLS = frozenset({"sorted", "list"})
BUILTINS_USED = BOOL_CALLS | INT_CALLS | STR_CALLS | LIST_CALLS | {"set"}


class Offsets(Protocol):
    source: bytes

    def start(self, node: ast.AST) -> int: ...

    def end(self, node: ast.AST) -> int: ...


class Make(Protocol):
    def __call__(self, start: int, end: int, new: str, op: str, text: str, at: ast.AST) -> Any: ...


def bound_builtins(tree: ast.Module) -> frozenset[str]:
    """The builtins this module's code reads that the module also binds (a local `sorted`, an imported `set`)."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    return frozenset(bound & BUILTINS_USED)


def _text(offsets: Offsets, node: ast.AST) -> str:
    return offsets.source[offsets.start(node) : offsets.end(node)].decode("utf-8")


def _literal(node: ast.AST) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _builtin_call(node: ast.AST, names: frozenset[str], bound: frozenset[str]) -> str | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names:
        return None if node.func.id in bound else node.func.id
    return None


def expression(node: ast.AST, offsets: Offsets, make: Make, bound: frozenset[str], discarded: bool) -> Iterator[Any]:
    """The value mutants of NODE; DISCARDED: NODE is a statement's whole value, its result thrown away."""
    if isinstance(node, ast.Call):
        yield from _calls(node, offsets, make, bound, discarded)
    elif isinstance(node, ast.SetComp):
        start, end = offsets.start(node), offsets.end(node)
        inner = offsets.source[start + 1 : end - 1].decode("utf-8")
        yield make(start, end, f"[{inner}]", "set-list", "set comprehension -> list comprehension", node)
    elif isinstance(node, ast.JoinedStr):
        yield from _fstring(node, offsets, make)
    elif isinstance(node, ast.Slice):
        for bound_node, op, shift in ((node.lower, "slice-lower", "+ 1"), (node.upper, "slice-upper", "- 1")):
            if bound_node is None or _is_number(bound_node):
                continue  # a constant bound: the number operator moves it already
            text = _text(offsets, bound_node)
            if "\n" in text or "#" in text:
                continue
            new = (
                f"({text}) {shift}"
                if not isinstance(bound_node, (ast.Name, ast.Attribute, ast.Call))
                else f"{text} {shift}"
            )
            yield make(
                offsets.start(bound_node),
                offsets.end(bound_node),
                new,
                op,
                f"slice bound `{_short(text)}` -> `{_short(new)}`",
                node,
            )


def _is_number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool)


def _calls(node: ast.Call, offsets: Offsets, make: Make, bound: frozenset[str], discarded: bool) -> Iterator[Any]:
    source = offsets.source
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in SAME_TYPE_METHODS and not discarded:
        receiver = func.value
        cut_start, cut_end = offsets.end(receiver), offsets.end(node)
        cut = source[cut_start:cut_end]
        if b"\n" not in cut and b"#" not in cut and not _same_on_literal(receiver, func.attr, node):
            if not (
                isinstance(receiver, ast.Call)
                and isinstance(receiver.func, ast.Attribute)
                and receiver.func.attr == func.attr
            ):
                yield make(cut_start, cut_end, "", "method-drop", f"`.{func.attr}(...)` removed", node)
    name = _builtin_call(node, frozenset({"sorted", "set"}), bound)
    if name is None or len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
        return
    arg = node.args[0]
    if name == "sorted":
        known, value = _literal(arg)
        if known:
            try:
                if sorted(value) == list(value):
                    return  # a literal already in order: sorting it changes nothing
            except TypeError:
                pass
        if node.keywords:
            text = _text(offsets, arg)
            lost = source[offsets.start(node) : offsets.end(node)].count(b"\n") - text.count("\n")
            new = "list(" + text + "\n" * lost + ")"  # the lines the keywords took stay inside the parentheses
            yield make(offsets.start(node), offsets.end(node), new, "sorted-list", "`sorted(...)` -> `list(...)`", node)
        else:
            yield make(
                offsets.start(func), offsets.end(func), "list", "sorted-list", "`sorted(...)` -> `list(...)`", node
            )
    elif not node.keywords:
        known, value = _literal(arg)
        if known and isinstance(value, (set, frozenset, dict)):
            return  # already unique: the list holds the same items
        yield make(offsets.start(func), offsets.end(func), "list", "set-list", "`set(...)` -> `list(...)`", node)


def _same_on_literal(receiver: ast.AST, method: str, call: ast.Call) -> bool:
    """The method changes nothing on this literal receiver (`"ok".lower()`): removing it is an equivalent mutant."""
    if not (isinstance(receiver, ast.Constant) and isinstance(receiver.value, (str, bytes))):
        return False
    ok, args = _literal(ast.Tuple(elts=list(call.args), ctx=ast.Load()))
    if not ok or call.keywords:
        return False
    try:
        return bool(getattr(receiver.value, method)(*args) == receiver.value)
    except (TypeError, ValueError):
        return False


def _fstring(node: ast.JoinedStr, offsets: Offsets, make: Make) -> Iterator[Any]:
    if not any(isinstance(part, ast.Constant) for part in node.values):
        return  # no constant part to change (`f"{x}"`): the value operators on x do the rest
    source = offsets.source
    start, end = offsets.start(node), offsets.end(node)
    text = source[start:end]
    prefix = 0
    while prefix < len(text) and text[prefix : prefix + 1] not in (b"'", b'"'):
        prefix += 1
    if prefix >= len(text) or b"f" not in text[:prefix].lower():
        return  # an implicit concatenation that starts with a plain string: the string operator has that part
    quote = text[prefix : prefix + 3] if text[prefix : prefix + 3] in (b"'''", b'"""') else text[prefix : prefix + 1]
    at = start + prefix + len(quote)
    yield make(at, at, "XX", "fstring", "f-string constant part -> `XX` added", node)


def _short(text: str) -> str:
    return text if len(text) <= 30 else text[:27] + "..."


def returned(
    stmt: ast.Return, returns: ast.AST | None, offsets: Offsets, make: Make, bound: frozenset[str]
) -> Iterator[Any]:
    """`return-neighbour`: the returned value replaced by a neighbour of its type, when the type is known."""
    value = stmt.value
    if value is None or isinstance(value, ast.Constant):
        return  # constants have their own operators (numbers, strings, True/False)
    kind = _kind(value, bound) or _annotated(returns)
    text = _text(offsets, value)
    if "#" in text:
        return  # a comment inside the value: do not guess where it ends
    start, end = offsets.start(value), offsets.end(value)
    if kind == "bool":
        new, shown = f"not ({text})", "negated"
    elif kind == "int":
        new, shown = f"({text}) + 1", "plus one"
    elif kind == "str":
        new, shown = f"({text}) + 'x'", "plus `'x'`"
    elif kind == "list":
        if isinstance(value, ast.List) and len(value.elts) == 0:
            return  # an empty list has no last element to drop
        new, shown = f"({text})[:-1]", "without its last element"
    else:
        return
    yield make(start, end, new, "return-neighbour", f"return value -> {shown}", stmt)


def _kind(node: ast.AST, bound: frozenset[str]) -> str | None:
    """bool, int, str or list when NODE's shape says so; None when it does not."""
    if isinstance(node, ast.Compare) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
        return "bool"
    if isinstance(node, ast.BoolOp) and all(_kind(v, bound) == "bool" for v in node.values):
        return "bool"
    if isinstance(node, ast.JoinedStr):
        return "str"
    if isinstance(node, (ast.List, ast.ListComp)):
        return "list"
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute) and node.func.attr in STR_RESULT_METHODS:
            return "str"  # bytes have these methods too: there `+ 'x'` is a TypeError, caught, never equivalent
        for kind, names in (("bool", BOOL_CALLS), ("int", INT_CALLS), ("str", STR_CALLS), ("list", LIST_CALLS)):
            if _builtin_call(node, names, bound):
                return kind
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        left = node.left
        if isinstance(left, (ast.Constant, ast.JoinedStr)) and isinstance(getattr(left, "value", ""), str):
            return "str"
    return None


def _annotated(returns: ast.AST | None) -> str | None:
    """The kind a return annotation names (`-> int`, `-> list[str]`, `-> "bool"`); None for anything else."""
    if isinstance(returns, ast.Constant) and isinstance(returns.value, str):
        try:
            returns = ast.parse(returns.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(returns, ast.Subscript):
        returns = returns.value
    name = returns.id if isinstance(returns, ast.Name) else returns.attr if isinstance(returns, ast.Attribute) else ""
    return {"bool": "bool", "int": "int", "str": "str", "list": "list", "List": "list"}.get(name)
