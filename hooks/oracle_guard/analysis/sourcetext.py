"""What a text search can read in a Python file, and where it cannot be trusted.

The hooks skip a file, or a statement, when a byte search says nothing a rule
looks for is spelled there: far cheaper than walking every tree.  That is
sound only where the bytes are what the parser reads, so every line where
they are not (non-ASCII identifiers, escapes, joined literals, an encoding
cookie) counts as hot for every rule.
"""

from __future__ import annotations

import codecs
import functools
import re
import unicodedata
from collections.abc import Iterable

# Where a file's bytes are not what the parser reads, so a search for a name or a string can miss it:
# a non-ASCII identifier is read NFKC-normalised (`os._ｅｘｉｔ` is `os._exit`); an escape or a
# backslash-newline spells any letter in a string; adjacent literals, or literals joined by `+`, are one
# string (`"PY" "TEST_"`), and so is an f-string around a literal (`f"PY{'TEST_'}"`).  Lines holding one
# are hot for every rule: what they spell is found by parsing, never by text.
# One search per shape, each starting at a rare byte (a quote, a backslash, a brace) and checking the byte
# before it at once: one alternation starting at any word character costs 3-4x more, every commit pays it.
# Every repetition is unambiguous (a quote run or a blank run is taken whole, a comment to its line's end)
# and the separators one join may span are bounded, so no file makes a search backtrack without end: a
# string's end followed by 40 separators (or a comment over 200 bytes) is taken as a join, never skipped.
_NON_ASCII = re.compile(rb"[\x80-\xff]")
_ESCAPE = re.compile(rb"\\(?:[0-7xuUN]|\r?\n)")


def _separator(group: int) -> bytes:
    return rb"(?:(?=([ \t\f+]+))\%d|\\?\r?\n|#[^\n]{0,200}(?![^\n]))" % group


_ADJACENT = re.compile(  # a literal's end after a word byte, separators or a prefix, the next literal's start
    rb"[\"'](?<=[\w\\][\"'])(?=[\"' \t\f+\\\r\n#rRbBuUfF])(?=([\"']*))\1"
    rb"(?:(?<=[\"'][\"'])[\w\\]"  # `"PY""TEST_"`: nothing between
    rb"|" + _separator(2) + rb"{1,40}[rRbBuUfF]{0,2}(?=([\"']+))\3[\w\\]"
    rb"|[rRbBuUfF]{1,2}(?=([\"']+))\4[\w\\]"
    rb"|" + _separator(5) + rb"{40}|" + _separator(6) + rb"{0,39}#[^\n]{201})"
)
_IN_FSTRING = re.compile(rb"\{(?<=[\w\"']\{)[ \t]*[rRbBuUfF]{0,2}[\"']")
# PEP 263: a coding declaration on line 1, or on line 2 below a comment or blank line.
_COOKIE = re.compile(rb"\A(?:[ \t\f]*(?:#[^\r\n]*)?\r?\n)?[ \t\f]*#[^\r\n]*?coding[:=][ \t]*([-\w.]+)")
# Encodings that read every ASCII byte as itself (utf-7 does not: `+AF8-` is `_`).
_ASCII_SAFE = frozenset({"utf-8", "ascii", "iso8859-1"})


def declared_encoding(source: bytes) -> str | None:
    """The encoding SOURCE declares when it is not an ASCII-safe one (`# coding: utf-7`), else None."""
    match = _COOKIE.match(source)
    if match is None:
        return None
    name = match.group(1).decode("ascii", "replace")
    try:
        canonical = codecs.lookup(name).name
    except LookupError:
        return name  # the parser refuses it: nothing is read as plain text either
    return None if canonical in _ASCII_SAFE or canonical.startswith("utf-8") else canonical


@functools.lru_cache(maxsize=128)
def opaque_lines(source: bytes) -> tuple[int, ...]:
    """Lines of SOURCE a text search cannot be trusted on (every line under a non-ASCII-safe encoding)."""
    if declared_encoding(source) is not None:
        return tuple(range(1, source.count(b"\n") + 2))
    starts: list[int] = []
    if not source.isascii():
        starts += [m.start() for m in _NON_ASCII.finditer(source)]
    if b"\\" in source:
        starts += [m.start() for m in _ESCAPE.finditer(source)]
    _overlapping(_ADJACENT, source, starts)
    if b"{" in source:
        _overlapping(_IN_FSTRING, source, starts)
    return tuple(_lines_at(source, starts))


def _lines_at(source: bytes, offsets: list[int]) -> list[int]:
    """The sorted 1-based lines holding OFFSETS; newlines are counted once, between consecutive offsets."""
    lines: list[int] = []
    line, prev = 1, 0
    for offset in sorted(offsets):
        line += source.count(b"\n", prev, offset)
        prev = offset
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def _overlapping(pattern: re.Pattern[bytes], source: bytes, starts: list[int]) -> None:
    """Append to STARTS where PATTERN matches, a match inside another's span included (a join can start in
    what the previous one took as separators)."""
    match = pattern.search(source)
    while match is not None:
        starts.append(match.start())
        match = pattern.search(source, match.start() + 1)


def text_of(source: bytes) -> str | None:
    """SOURCE as the parser reads its names: decoded by its declaration, identifiers NFKC-normalised (a text
    search then finds `ｃalc` as `calc`); None when it does not decode."""
    try:
        text = source.decode(declared_encoding(source) or "utf-8")
    except (LookupError, UnicodeDecodeError):
        return None
    return unicodedata.normalize("NFKC", text) if not text.isascii() else text


def spells(source: bytes, *words: bytes) -> bool:
    """Whether SOURCE may spell one of WORDS where the parser reads it: a text shortcut that says no is sound."""
    return any(w in source for w in words) or bool(opaque_lines(source))


def hot_lines(source: bytes, tokens: Iterable[bytes]) -> list[int]:
    """Sorted 1-based numbers of the lines where any of TOKENS occurs, and every opaque line.

    bytes.find per token is far faster than one regex alternation.
    """
    positions: list[int] = []
    for token in tokens:
        if not token:
            continue
        pos = source.find(token)
        while pos != -1:
            positions.append(pos)
            pos = source.find(token, pos + len(token))
    lines = _lines_at(source, positions)
    opaque = opaque_lines(source)
    return sorted(set(lines).union(opaque)) if opaque else lines
