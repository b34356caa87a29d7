"""Mutants of production functions, as byte-exact edits of their source.

The operators are mutmut's (3.x, ``mutation/mutators.py``): its operator
swap table (``+`` -> ``-``, ``<`` -> ``<=``, ``and`` -> ``or``...), its
keyword table (``is`` <-> ``is not``, ``in`` <-> ``not in``, ``break`` ->
``return``, ``continue`` -> ``break``), numbers plus one, strings wrapped in
``XX``, ``True`` <-> ``False``, a dropped ``not``/``~``, and an assigned or
returned value replaced by ``None``; plus the removed call (an expression
statement that is a call becomes ``pass``), and the value mutants of
value_mutants.py (a type kept, its content changed: what a weakened test
stops seeing).  mutmut itself
is not a dependency: it needs Python 3.10+ and libcst, and it runs mutants
through a trampoline written into a copy of the project; here the same
operators are spelled over the standard ``ast``, so a mutant is an edit of a
few bytes that keeps every line where it was.

Only code inside a function (or a method, at any depth) is mutated: the
runner swaps the outermost function's code object, so nothing runs at import.
"""

from __future__ import annotations

import ast
import bisect
import hashlib
import re
from collections.abc import Iterator, Sequence
from typing import NamedTuple, Protocol, Union

from oracle_guard.probes.mutation import value_mutants

# mutmut's _operator_mapping, keyed by the ast operator class name.
BINARY = {
    "Add": ("+", "-"),
    "Sub": ("-", "+"),
    "Mult": ("*", "/"),
    "Div": ("/", "*"),
    "FloorDiv": ("//", "/"),
    "Mod": ("%", "/"),
    "LShift": ("<<", ">>"),
    "RShift": (">>", "<<"),
    "BitAnd": ("&", "|"),
    "BitOr": ("|", "&"),
    "BitXor": ("^", "&"),
    "Pow": ("**", "*"),
}
COMPARE = {
    "Lt": ("<", "<="),
    "LtE": ("<=", "<"),
    "Gt": (">", ">="),
    "GtE": (">=", ">"),
    "Eq": ("==", "!="),
    "NotEq": ("!=", "=="),
    "Is": ("is", "is not"),
    "IsNot": ("is not", "is"),
    "In": ("in", "not in"),
    "NotIn": ("not in", "in"),
}
BOOL = {"And": ("and", "or"), "Or": ("or", "and")}
_GAP_NOISE = re.compile(rb"[()\s\\]+")


class Mutant(NamedTuple):
    path: str  # the production file, relative to the repository
    function: str  # qualified name of the outermost function holding the edit
    def_line: int  # that function's `def` line (its code object's co_firstlineno, decorators aside)
    start: int  # byte offsets of the edit in the file
    end: int
    replacement: str
    line: int  # where the edit is, 1-based, for messages
    col: int
    operator: str  # short id: lt-le, number, string, return-none, ...
    description: str  # `<` -> `<=`
    span: tuple[int, int]  # lines a test must run for the edit to matter (the enclosing statement)

    @property
    def key(self) -> str:
        """Stable across runs and machines: the approval and the sampling use it."""
        return f"{self.path}:{self.line}:{self.col}:{self.operator}"

    def apply(self, source: bytes) -> bytes:
        return source[: self.start] + self.replacement.encode("utf-8") + source[self.end :]


class _Function(NamedTuple):
    qualname: str
    def_line: int


FunctionNode = Union[ast.FunctionDef, ast.AsyncFunctionDef]


def _def_line(node: FunctionNode) -> int:
    # co_firstlineno is the first decorator's line when there are decorators.
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


class _Offsets:
    """Byte offset of (line, utf-8 column) in a source."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.starts = [0]
        for index, byte in enumerate(source):
            if byte == 10:
                self.starts.append(index + 1)

    def at(self, line: int, col: int) -> int:
        return self.starts[line - 1] + col

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column (in bytes) of OFFSET."""
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1

    def start(self, node: ast.AST) -> int:
        return self.at(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> int:
        return self.at(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]


def _functions(tree: ast.Module) -> Iterator[tuple[_Function, FunctionNode]]:
    """Outermost functions: module-level ones and methods of classes at any depth of class nesting."""

    def walk(body: Sequence[ast.stmt], prefix: str) -> Iterator[tuple[_Function, FunctionNode]]:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield _Function(prefix + stmt.name, _def_line(stmt)), stmt
            elif isinstance(stmt, ast.ClassDef):
                yield from walk(stmt.body, f"{prefix}{stmt.name}.")
            elif isinstance(stmt, (ast.If, ast.Try)):  # `if TYPE_CHECKING:`/try-import blocks at module level
                for part in (stmt.body, stmt.orelse, *(h.body for h in getattr(stmt, "handlers", []))):
                    yield from walk(part, prefix)

    yield from walk(tree.body, "")


def generate(path: str, source: bytes, lines: set[int] | None = None) -> list[Mutant]:
    """Every mutant in PATH's functions; with LINES, only those whose statement a test ran."""
    try:
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError):
        return []
    offsets = _Offsets(source)
    bound = value_mutants.bound_builtins(tree)
    found: dict[str, Mutant] = {}
    for function, node in _functions(tree):
        docstring = ast.get_docstring(node, clean=False) is not None
        body = node.body[1:] if docstring else node.body
        for stmt in body:
            for mutant in _in_statement(path, function, stmt, offsets, bound, node.returns):
                first, last = mutant.span
                if lines is None or any(n in lines for n in range(first, last + 1)):
                    found.setdefault(mutant.key, mutant)  # one mutant per key: the key is what is sampled and approved
    return list(found.values())


def _statements(stmt: ast.stmt, returns: ast.expr | None) -> Iterator[tuple[ast.stmt, list[ast.AST], ast.expr | None]]:
    """Each statement under STMT with the expressions that belong to it alone (not its nested body), and the
    return annotation of the function it is in (RETURNS: the one around STMT)."""
    own: list[ast.AST] = []
    nested: list[ast.stmt] = []
    for name, value in ast.iter_fields(stmt):
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, ast.stmt):
                nested.append(item)
            elif isinstance(item, ast.ExceptHandler):
                if item.type is not None:
                    own.append(item.type)
                nested.extend(item.body)
            elif isinstance(item, ast.AST) and name not in ("decorator_list", "returns", "annotation", "type_params"):
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and name == "args":
                    continue  # defaults run when the def runs: the outer function's statement
                own.append(item)
    yield stmt, own, returns
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        returns = stmt.returns
        if ast.get_docstring(stmt, clean=False) is not None:
            nested = nested[1:]
    elif isinstance(stmt, ast.ClassDef):
        returns = None
    for child in nested:
        yield from _statements(child, returns)


def _in_statement(
    path: str,
    function: _Function,
    top: ast.stmt,
    offsets: _Offsets,
    bound: frozenset[str] = frozenset(),
    returns: ast.expr | None = None,
) -> Iterator[Mutant]:
    for stmt, own, annotation in _statements(top, returns):
        if isinstance(stmt, (ast.ClassDef,)):
            continue
        header_end = stmt.end_lineno or stmt.lineno
        body = getattr(stmt, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            header_end = max(stmt.lineno, body[0].lineno - 1)  # a compound statement: its header lines
        span = (stmt.lineno, header_end)

        def make(
            start: int, end: int, new: str, op: str, text: str, at: ast.AST, span: tuple[int, int] = span
        ) -> Mutant:
            return Mutant(
                path,
                function.qualname,
                function.def_line,
                start,
                end,
                new,
                *offsets.line_col(start),
                op,
                text,
                span,
            )

        yield from _statement_mutants(stmt, offsets, make)
        if isinstance(stmt, ast.Return):
            yield from value_mutants.returned(stmt, annotation, offsets, make, bound)
        discarded = stmt.value if isinstance(stmt, ast.Expr) else None
        for expr in own:
            for node in ast.walk(expr):
                if isinstance(node, ast.Lambda):
                    continue  # its body is walked as part of the expression anyway
                yield from _expression_mutants(node, offsets, make)
                yield from value_mutants.expression(node, offsets, make, bound, node is discarded)


def _statement_mutants(stmt: ast.stmt, offsets: _Offsets, make: _Make) -> Iterator[Mutant]:
    source = offsets.source
    if isinstance(stmt, ast.Return) and stmt.value is not None:
        if not (isinstance(stmt.value, ast.Constant) and stmt.value.value is None):
            yield make(
                offsets.start(stmt.value),
                offsets.end(stmt.value),
                "None",
                "return-none",
                "return value -> `None`",
                stmt,
            )
    elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
        is_none = isinstance(stmt.value, ast.Constant) and stmt.value.value is None
        yield make(
            offsets.start(stmt.value),
            offsets.end(stmt.value),
            '""' if is_none else "None",
            "assign-none",
            "assigned value -> " + ('`""`' if is_none else "`None`"),
            stmt,
        )
    elif isinstance(stmt, ast.AugAssign):
        pair = BINARY.get(type(stmt.op).__name__)
        gap_start, gap_end = offsets.end(stmt.target), offsets.start(stmt.value)
        gap = source[gap_start:gap_end]
        if pair is not None and _GAP_NOISE.sub(b"", gap) == (pair[0] + "=").encode():
            at = gap_start + gap.index((pair[0] + "=").encode())
            yield make(
                at,
                at + len(pair[0]) + 1,
                pair[1] + "=",
                f"aug-{type(stmt.op).__name__.lower()}",
                f"`{pair[0]}=` -> `{pair[1]}=`",
                stmt,
            )
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        start, end = offsets.start(stmt), offsets.end(stmt)
        rest = source[end : source.find(b"\n", end) if b"\n" in source[end:] else len(source)]
        if not rest.strip() or rest.strip().startswith(b"#"):
            newlines = source[start:end].count(b"\n")
            yield make(start, end, "pass" + "\n" * newlines, "call-removed", "call removed", stmt)
    elif isinstance(stmt, (ast.Break, ast.Continue)):
        new = "return" if isinstance(stmt, ast.Break) else "break"
        old = "break" if isinstance(stmt, ast.Break) else "continue"
        yield make(offsets.start(stmt), offsets.end(stmt), new, f"{old}-{new}", f"`{old}` -> `{new}`", stmt)


def _expression_mutants(node: ast.AST, offsets: _Offsets, make: _Make) -> Iterator[Mutant]:
    source = offsets.source
    if isinstance(node, ast.BinOp):
        pair = BINARY.get(type(node.op).__name__)
        if pair is not None:
            yield from _token_swap(
                offsets, node.left, node.right, pair, f"binop-{type(node.op).__name__.lower()}", node, make
            )
    elif isinstance(node, ast.Compare):
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            pair = COMPARE.get(type(op).__name__)
            if pair is not None:
                yield from _token_swap(offsets, left, right, pair, f"cmp-{type(op).__name__.lower()}", node, make)
            left = right
    elif isinstance(node, ast.BoolOp):
        pair = BOOL[type(node.op).__name__]
        for left, right in zip(node.values, node.values[1:]):
            yield from _token_swap(offsets, left, right, pair, f"bool-{pair[0]}", node, make)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.Invert)):
        word = "not" if isinstance(node.op, ast.Not) else "~"
        yield make(
            offsets.start(node),
            offsets.start(node.operand),
            "",
            f"drop-{'not' if word == 'not' else 'invert'}",
            f"`{word}` dropped",
            node,
        )
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and not isinstance(node.operand, ast.Constant):
        yield make(offsets.start(node), offsets.start(node.operand), "", "drop-minus", "unary `-` dropped", node)
    elif isinstance(node, ast.Constant):
        value = node.value
        start, end = offsets.start(node), offsets.end(node)
        if isinstance(value, bool):
            yield make(start, end, repr(not value), "bool-flip", f"`{value}` -> `{not value}`", node)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            bumped = value + 1
            if bumped != value and repr(bumped) not in ("inf", "nan"):
                text = source[start:end].decode("utf-8", "replace")
                yield make(start, end, repr(bumped), "number", f"`{text}` -> `{bumped!r}`", node)
        elif (
            isinstance(value, (str, bytes)) and b"\n" not in source[start:end] and _is_literal(source[start:end], value)
        ):
            wrapped = "XX" + value + "XX" if isinstance(value, str) else b"XX" + value + b"XX"
            shown = repr(value) if len(repr(value)) <= 30 else repr(value)[:27] + "..."
            yield make(start, end, repr(wrapped), "string", f"{shown} -> {_short(repr(wrapped))}", node)


def _short(text: str) -> str:
    return text if len(text) <= 30 else text[:27] + "..."


def _is_literal(text: bytes, value: str | bytes) -> bool:
    """TEXT spells the constant VALUE. A constant part of an f-string has the whole f-string's position (3.8-3.11)
    or its bare text (3.12+): neither is; a string inside an f-string's expression part is (`f"{', '.join(x)}"`)."""
    try:
        found = ast.literal_eval(text.decode("utf-8"))
    except (ValueError, SyntaxError, UnicodeDecodeError, MemoryError, RecursionError):
        return False
    return type(found) is type(value) and found == value


class _Make(Protocol):
    def __call__(self, start: int, end: int, new: str, op: str, text: str, at: ast.AST) -> Mutant: ...


def _token_swap(
    offsets: _Offsets, left: ast.AST, right: ast.AST, pair: tuple[str, str], op: str, at: ast.AST, make: _Make
) -> Iterator[Mutant]:
    """Swap the operator token between LEFT and RIGHT when the gap holds only it (and parentheses)."""
    gap_start, gap_end = offsets.end(left), offsets.start(right)
    gap = offsets.source[gap_start:gap_end]
    if b"#" in gap:
        return  # a comment in between: do not guess
    words = _GAP_NOISE.sub(b" ", gap).split()
    if b" ".join(words) != pair[0].encode():
        return
    first = gap.index(words[0])
    last = gap.rindex(words[-1]) + len(words[-1])
    old, new = pair
    yield make(gap_start + first, gap_start + last, new, op, f"`{old}` -> `{new}`", at)


def sample(mutants: Sequence[Mutant], cap: int, salt: str = "") -> list[Mutant]:
    """At most CAP mutants, the same ones for the same change: the lowest hashes of their keys."""
    ranked = sorted(mutants, key=lambda m: hashlib.sha256(f"{salt}\0{m.key}".encode()).hexdigest())
    return ranked[:cap] if cap >= 0 else list(ranked)


def locate(source: bytes, function: str) -> list[tuple[int, bytes]]:
    """(def line, source text) of each function named FUNCTION in SOURCE, in order (overloads repeat a name)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    offsets = _Offsets(source)
    return [
        (found.def_line, source[offsets.at(found.def_line, 0) : offsets.end(node)])
        for found, node in _functions(tree)
        if found.qualname == function
    ]


def locate_all(source: bytes) -> dict[str, list[tuple[int, bytes]]]:
    """`locate` for every function of SOURCE at once: one parse for all of them."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    offsets = _Offsets(source)
    found: dict[str, list[tuple[int, bytes]]] = {}
    for function, node in _functions(tree):
        found.setdefault(function.qualname, []).append(
            (function.def_line, source[offsets.at(function.def_line, 0) : offsets.end(node)])
        )
    return found
