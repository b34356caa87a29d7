"""Syntax newer than the running interpreter, lowered so that ``ast`` accepts it.

pre-commit often runs a hook in an older Python than the newest syntax a
project uses.  libcst parses every grammar up to 3.14 whatever interpreter
runs it, so a file that ``ast`` refuses is parsed with libcst, and the few
constructs this interpreter cannot read are rewritten in place to text it
can, keeping every line and (UTF-8 byte) column:

- PEP 695/696 type parameter lists (``def f[T](x)``, ``class C[T]``) are
  blanked; ``type X[T] = V`` becomes the annotation ``X: V`` (a type alias
  binds no value);
- PEP 701 f-strings this ``ast`` refuses become an f-string with the other
  quote, else one whose inner quotes and backslashes are blanked, else a
  plain string of the same text (PEP 750 t-strings: a plain string);
- ``except*`` (3.11) loses its star, PEP 758's bare ``except A, B:`` gets
  its parentheses (columns are mapped back after parsing), PEP 646's
  ``x[*Ts]`` and ``*args: *Ts`` lose theirs.

Only files ``ast`` refused pay for this: nothing here is imported otherwise.
The rules then run on the lowered tree as on any other; a construct that
cannot be lowered leaves the file unparsable (OG001), as before.
"""

from __future__ import annotations

import ast
import atexit
import json
import os
import re
import select
import subprocess
import sys
from typing import Any, NamedTuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

_NEWLINE = re.compile(r"\r\n|\r|\n")
_NEUTRAL = str.maketrans({'"': " ", "'": " ", "\\": " "})
_Lowered = tuple[str, list[tuple[int, int, int]], dict[tuple[int, int], int]]


class Verdict(NamedTuple):
    parses: bool  # libcst accepts the file (a grammar up to 3.14)
    lowered: _Lowered | None  # its text with the newer syntax rewritten; None when it cannot be


# Verdicts on recent files: `oracle-guard check` runs several hooks in one process.
_CACHE: dict[bytes, Verdict] = {}
# libcst's native parser recurses on the machine stack: a file nested deep enough (20,000 brackets, a
# long chain of unary operators) kills the process parsing it with a segfault, no exception to catch.
# So it parses in a child process (one per hook process, started again if a file kills it), judged
# from outside: killed, stopped by the clock or silent, the file is one that no grammar reads (a
# finding), never a crash of the hook.
CHILD_SECONDS = 10  # libcst reads a 10,000-line file in about a second
_CHILD = "import json, sys; sys.path[:] = json.loads(sys.argv[1]); from oracle_guard.analysis import newsyntax; newsyntax.child()"


class _Cannot(Exception):
    """A construct that cannot be rewritten in place."""


def lower(source: bytes) -> ast.Module | None:
    """The ast of SOURCE with newer syntax lowered; None when libcst refuses it too or it cannot be lowered."""
    done = verdict(source).lowered
    if done is None:
        return None
    text, inserts, moved = done
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if inserts:
        _map_columns(tree, inserts)
    for node in ast.walk(tree) if moved else ():
        if isinstance(node, ast.Name) and (node.lineno, node.col_offset) in moved:
            width = node.end_col_offset - node.col_offset  # type: ignore[operator]  # parsed: never None
            node.col_offset = moved[(node.lineno, node.col_offset)]
            node.end_col_offset = node.col_offset + width
    return tree


def verdict(source: bytes) -> Verdict:
    """What libcst makes of SOURCE (asked once per file and process, in a child)."""
    if source not in _CACHE:
        if len(_CACHE) > 64:
            _CACHE.clear()
        _CACHE[source] = _ask_child(source)
    return _CACHE[source]


_child_process: subprocess.Popen[bytes] | None = None


def _ask_child(source: bytes) -> Verdict:
    """The verdict from the child, started once per process (its start and libcst's import cost ~170 ms)
    and started again after a file killed it; a file that kills it or outlasts CHILD_SECONDS reads as no."""
    said = None
    for _ in range(2):  # the child may have died since it last answered: one fresh start
        proc, fresh = _running_child()
        if proc is None:
            break
        try:
            assert proc.stdin is not None
            proc.stdin.write(len(source).to_bytes(8, "big") + source)
            proc.stdin.flush()
        except OSError:
            _stop_child()
            if fresh:
                break
            continue
        said = _answer(proc)
        if said is None:
            _stop_child()  # killed by this file, or stopped by the clock: this file's verdict is no
        break
    if not isinstance(said, dict) or not said.get("parses"):
        return Verdict(False, None)
    lowered = said.get("lowered")
    if lowered is None:
        return Verdict(True, None)
    text, inserts, moved = lowered
    return Verdict(True, (text, [tuple(i) for i in inserts], {(line, col): at for line, col, at in moved}))


def _running_child() -> tuple[subprocess.Popen[bytes] | None, bool]:
    global _child_process
    if _child_process is not None and _child_process.poll() is None:
        return _child_process, False
    here = os.getcwd()
    paths = [p for p in sys.path if p and os.path.abspath(p) != here]  # never the checked repository
    try:
        _child_process = subprocess.Popen(
            [sys.executable, "-I", "-c", _CHILD, json.dumps(paths)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        _child_process = None
    return _child_process, True


def _answer(proc: subprocess.Popen[bytes]) -> object:
    """The child's one-line JSON answer, or None when it dies or outlasts CHILD_SECONDS."""
    assert proc.stdout is not None
    if os.name != "nt":  # select() waits on pipes only on POSIX; elsewhere the read itself waits
        ready, _, _ = select.select([proc.stdout], [], [], CHILD_SECONDS)
        if not ready:
            return None
    line = proc.stdout.readline()
    try:
        return json.loads(line) if line.endswith(b"\n") else None
    except ValueError:
        return None


@atexit.register
def _stop_child() -> None:
    global _child_process
    proc, _child_process = _child_process, None
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait()


def child() -> None:
    """The child's side: files as (8-byte length, bytes) on standard input, one JSON verdict a line out."""
    stdin, stdout = sys.stdin.buffer, sys.stdout
    while True:
        head = stdin.read(8)
        if len(head) < 8:
            return
        source = stdin.read(int.from_bytes(head, "big"))
        stdout.write(json.dumps(_judge(source)) + "\n")
        stdout.flush()


def _judge(source: bytes) -> dict[str, object]:
    try:
        module = cst.parse_module(source)
    except Exception:  # ParserSyntaxError is not a SyntaxError; any failure means no
        return {"parses": False}
    try:
        text, inserts, moved = _lowered_text(source, module)
    except _Cannot:
        return {"parses": True, "lowered": None}
    return {"parses": True, "lowered": [text, inserts, [[line, col, at] for (line, col), at in moved.items()]]}


def _lowered_text(source: bytes, module: cst.Module) -> _Lowered:
    text = module.code
    # libcst regenerates the source (positions are computed on that text); it
    # normalises a few spellings in place (`f"{x!r  }"`), never a line break.
    try:
        original = source.decode(module.encoding)
    except (LookupError, UnicodeDecodeError):
        raise _Cannot from None
    if len(_NEWLINE.findall(original)) != len(_NEWLINE.findall(text)):
        raise _Cannot
    starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    finder = _Finder(text, starts, positions)
    module.visit(finder)
    chars = list(text)
    taken: list[tuple[int, int]] = []
    for start, end, replacement in sorted(finder.edits, key=lambda e: (e[0], -e[1])):
        if any(s < end and start < e for s, e in taken):
            continue  # inside a construct already rewritten (a nested f-string)
        taken.append((start, end))
        chars[start:end] = replacement  # same length: a list of the same number of items
    inserts: list[tuple[int, int, int]] = []  # (line, byte column, text) in the original
    pieces = []
    last = 0
    for offset, piece in sorted(finder.inserts):
        pieces.append("".join(chars[last:offset]))
        pieces.append(piece)
        last = offset
        line = _line_of(starts, offset)
        inserts.append((line, len(text[starts[line - 1] : offset].encode("utf-8")), len(piece)))
    pieces.append("".join(chars[last:]))
    moved: dict[tuple[int, int], int] = {}
    for written, at in finder.moved:  # a type alias's name, written where `type` stood
        line = _line_of(starts, written)
        moved[(line, _byte_col(text, starts, line, written))] = _byte_col(text, starts, line, at)
    return "".join(pieces), inserts, moved


def _byte_col(text: str, starts: list[int], line: int, offset: int) -> int:
    return len(text[starts[line - 1] : offset].encode("utf-8"))


def _line_of(starts: list[int], offset: int) -> int:
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo + 1


def _map_columns(tree: ast.AST, inserts: list[tuple[int, int, int]]) -> None:
    """Undo the columns that inserted parentheses moved (ast counts UTF-8 bytes)."""
    by_line: dict[int, list[tuple[int, int]]] = {}
    for line, col, size in inserts:
        by_line.setdefault(line, []).append((col, size))

    def old(line: int, col: int) -> int:
        shift = 0
        for at, size in sorted(by_line.get(line, ())):
            if col >= at + shift + size:
                shift += size
            elif col >= at + shift:
                return at
            else:
                break
        return col - shift

    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in by_line:
            node.col_offset = old(node.lineno, node.col_offset)  # type: ignore[attr-defined]  # a node with a lineno
        if getattr(node, "end_lineno", None) in by_line and getattr(node, "end_col_offset", None) is not None:
            node.end_col_offset = old(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]  # as above


def _blank(span: str) -> list[str]:
    """SPAN as spaces of the same UTF-8 length, newlines kept, each line continued with a backslash."""
    out = [" " * len(ch.encode("utf-8")) if ch not in "\r\n" else ch for ch in span]
    for i, ch in enumerate(span):
        if ch in "\r\n" and (ch == "\r" or i == 0 or span[i - 1] != "\r"):
            j = i - 1
            if j < 0 or span[j] in "\r\n":
                raise _Cannot  # an empty line cannot be continued
            out[j] = " " * (len(out[j]) - 1) + "\\"
    return out


class _Finder(cst.CSTVisitor):
    """Collects in-place edits for the constructs this interpreter cannot parse."""

    def __init__(self, text: str, starts: list[int], positions: Any) -> None:
        super().__init__()
        self.text, self.starts, self.positions = text, starts, positions
        self.edits: list[tuple[int, int, list[str]]] = []  # (start, end, replacement characters)
        self.inserts: list[tuple[int, str]] = []  # (offset, text) inserted before OFFSET
        self.moved: list[tuple[int, int]] = []  # (offset written at, offset in the original) of a name
        v = sys.version_info
        self.py311, self.py312, self.py313, self.py314 = v >= (3, 11), v >= (3, 12), v >= (3, 13), v >= (3, 14)

    def _span(self, node: Any) -> tuple[int, int]:
        r = self.positions[node]
        return self.starts[r.start.line - 1] + r.start.column, self.starts[r.end.line - 1] + r.end.column

    def _replace(self, start: int, end: int, pieces: list[str]) -> None:
        """Replace text[start:end] by PIECES, one string per original character, of the same UTF-8 length."""
        original = self.text[start:end]
        if len(pieces) != len(original) or len("".join(pieces).encode("utf-8")) != len(original.encode("utf-8")):
            raise _Cannot
        self.edits.append((start, end, pieces))

    # -- PEP 695 / 696 -------------------------------------------------------

    def _needs_type_params(self, params: Any) -> bool:
        if params is None:
            return False
        if not self.py312:
            return True
        return not self.py313 and any(getattr(p, "default", None) is not None for p in params.params)

    def _drop_type_params(self, node: Any) -> None:
        params = getattr(node, "type_parameters", None)
        if self._needs_type_params(params):
            start, end = self._span(params)
            self._replace(start, end, _blank(self.text[start:end]))

    visit_FunctionDef = visit_ClassDef = _drop_type_params

    def visit_TypeAlias(self, node: Any) -> None:
        if self.py312 and not self._needs_type_params(node.type_parameters):
            return
        start, _ = self._span(node)
        # Up to and including `=`: the value's own range leaves out its parentheses.
        after = self._span(node.type_parameters)[1] if node.type_parameters is not None else self._span(node.name)[1]
        equals = self.text.find("=", after)
        if equals < 0:
            raise _Cannot
        value_start = equals + 1
        span = self.text[start:value_start]
        head = node.name.value + ":"
        if not span.startswith("type") or any(c in "\r\n" for c in span[: len(head)]):
            raise _Cannot
        pieces = _blank(span)
        pieces[: len(head)] = list(head)
        self._replace(start, value_start, pieces)
        self.moved.append((start, self._span(node.name)[0]))

    # -- PEP 701 f-strings, PEP 750 t-strings -------------------------------------

    def visit_FormattedString(self, node: Any) -> bool:
        if self.py312:
            return False
        start, end = self._span(node)
        original = self.text[start:end]
        if _parses(original):
            return True  # nested f-strings inside may still need it (they cannot: an outer that parses has none)
        prefix = node.prefix
        quote = original[len(prefix)]
        size = 3 if original[len(prefix) : len(prefix) + 3] == quote * 3 else 1
        multiline = any(c in "\r\n" for c in original)
        candidates = []
        if size == 1 and not multiline:  # f"{d["k"]}" -> f'{d["k"]}': the same tree
            other = "'" if quote == '"' else '"'
            candidates.append(prefix + other + original[len(prefix) + 1 : -1] + other)
        if size == 3 or not multiline:  # f"{d["k"]}" -> f"{d[ k ]}": still an f-string, its fields kept
            head = len(prefix) + size
            candidates.append(original[:head] + original[head:-size].translate(_NEUTRAL) + original[-size:])
        for candidate in candidates:
            if _parses(candidate):
                self._replace(start, end, list(candidate))
                return False
        self._replace(start, end, _as_literal(original, prefix))
        return False

    def visit_TemplatedString(self, node: Any) -> bool:
        if self.py314:
            return False
        start, end = self._span(node)
        self._replace(start, end, _as_literal(self.text[start:end], node.prefix))
        return False

    # -- exceptions ------------------------------------------------------------

    def visit_ExceptStarHandler(self, node: Any) -> None:
        start, _ = self._span(node)
        if not self.py311:
            star = self.text.index("*", start)
            self._replace(star, star + 1, [" "])
        self._bare_tuple(node)

    def visit_ExceptHandler(self, node: Any) -> None:
        self._bare_tuple(node)

    def _bare_tuple(self, node: Any) -> None:
        kind = node.type
        if self.py314 or kind is None or not isinstance(kind, cst.Tuple) or kind.lpar:
            return
        start, end = self._span(kind)
        self.inserts += [(start, "("), (end, ")")]

    # -- PEP 646 ---------------------------------------------------------------

    def visit_Index(self, node: Any) -> None:
        if not self.py311 and getattr(node, "star", None):
            self._unstar(node)

    def visit_Annotation(self, node: Any) -> None:
        if not self.py311 and isinstance(node.annotation, cst.StarredElement):
            self._unstar(node.annotation)

    def _unstar(self, node: Any) -> None:
        start, _ = self._span(node)
        if self.text[start] != "*":
            raise _Cannot
        self._replace(start, start + 1, [" "])


def _parses(expression: str) -> bool:
    try:
        ast.parse("(" + expression + ")", mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _as_literal(original: str, prefix: str) -> list[str]:
    """An f- or t-string as a plain string literal with its text, quotes and backslashes blanked."""
    body = original[len(prefix) :]
    triple = body[:3] in ('"""', "'''")
    if not any(c in "\r\n" for c in original):
        return ['"'] + [ch.translate(_NEUTRAL) for ch in original[1:-1]] + ['"']
    if triple:
        return ['"', '"', '"'] + [ch.translate(_NEUTRAL) for ch in original[3:-3]] + ['"', '"', '"']
    # A single-quoted string whose replacement fields span lines (PEP 701): one
    # literal per line, concatenated inside parentheses.
    lines = _NEWLINE.split(original)
    breaks = _NEWLINE.findall(original)
    out: list[str] = []
    for number, line in enumerate(lines):
        inner = [ch.translate(_NEUTRAL) for ch in line]
        if number == 0:
            if len(line) < 3:
                raise _Cannot
            piece = ["(", '"'] + inner[2:-1] + ['"']
        elif number == len(lines) - 1:
            if not line:
                raise _Cannot
            piece = [")"] + [" "] * (len(line) - 1)
        elif len(line) >= 2:
            piece = ['"'] + inner[1:-1] + ['"']
        else:
            piece = [" "] * len(line)
        out += piece
        if number < len(breaks):
            out += list(breaks[number])
    return out
