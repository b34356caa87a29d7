"""Whether a module's text may reach a name, read without parsing it (the inert rule's prefilter).

oracle_guard/analysis/inert.py joins names across every module of the repository
to prove a production change collection-inert; walking every module's syntax
tree was most of that proof's cost.  A module matters there only when its code
spells a name that matters (a changed function's, or a function's that reaches
one) or a dynamic lookup.  Every name the rule reads is a `Name`, an attribute,
an imported name or an identifier in a string or bytes constant; in an ASCII
source without a coding cookie, escapes that make letters or adjacent string
literals, each of those is spelled in the text as it is (after an escape that
makes no letter, "\tname", a letter precedes it in the text: searched too), so
a text that spells none of them cannot reach them.  Any doubt (non-ASCII text,
an escape that can make a letter, a line continuation, two string literals side
by side) is "may reach": the module is walked.
"""

from __future__ import annotations

import re

_QUOTE = rb"""(?:'''|\"\"\"|'|")"""
_PREFIX = rb"[rRuUbBfF]{0,2}"
# A literal ending in a word character, then (comments to their line's end, continuations, empty
# literals between) one starting with one: Python joins them, so "na" "me" is `name` in the tree.
_JOINED = (
    rb"\w"
    + _QUOTE
    + rb"(?:\s|\\\r?\n|#[^\r\n]*(?![^\r\n])|"
    + _PREFIX
    + rb"""(?:''''''|\"\"\"\"\"\"|''|""))*"""
    + _PREFIX
    + _QUOTE
    + rb"\w"
)
# An ASCII word character as two hex digits: 0-9, A-Z, _, a-z.
_WORD_HEX = rb"(?:3[0-9]|4[1-9a-fA-F]|5[0-9aAfF]|6[1-9a-fA-F]|7[0-9aA])"
# Escapes that can make an ASCII word character (\x66, \u0066, \U00000066, \N{...}, octal), and a
# backslash before a line end: they hide a spelling.
_ESCAPE = rb"\\(?:x%s|u00%s|U000000%s|[0-7]|N\{|\r|\n)" % (_WORD_HEX, _WORD_HEX, _WORD_HEX)
_STAR = rb"import\s*\*|import\s*\(\s*\*"
_HIDING = re.compile(rb"%s|%s|%s" % (_JOINED, _ESCAPE, _STAR))
# Escapes left that may make a non-ASCII letter ("caf\xe9" holds `café`): only a non-ASCII name
# can hide there, so spelled() answers NON_ASCII among the words.
_HIGH_ESCAPE = re.compile(rb"\\(?:x[89a-fA-F][0-9a-fA-F]|u|U)")
NON_ASCII = "\x80"
# What the tree walk reads as identifiers (inert._IDENTIFIER, in names and string constants), and
# one after any other escape (they make no ASCII word character): "\\tname" is a tab, then `name`.
_WORD = re.compile(rb"[A-Za-z_]\w*")
_AFTER_ESCAPE = re.compile(rb"\\(?:[abfnrtv]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})([A-Za-z_]\w*)")


def spelled(source: bytes) -> frozenset[str] | None:
    """Every identifier the tree of SOURCE can hold, read from its text (None: any, the text may hide one).

    A module whose answer shares no name with what matters cannot reach it: the tree walk
    of it would reference no such name and make nothing dynamic.
    """
    if not source.isascii():
        return None  # identifiers are NFKC-normalised; strings may hold anything
    head = source.split(b"\n", 2)[:2]
    if any(b"coding" in line for line in head):
        return None  # a coding cookie: the bytes are not the text (utf-7 spells letters with +...-)
    if _HIDING.search(source):
        return None
    words = {w.decode() for w in _WORD.findall(source)}
    words.update(w.decode() for w in _AFTER_ESCAPE.findall(source))
    if _HIGH_ESCAPE.search(source):
        words.add(NON_ASCII)
    return frozenset(words)


def may_reach(source: bytes, names: frozenset[str] | set[str]) -> bool:
    """Whether SOURCE may reach any of NAMES (function names, dynamic lookups; with_non_ascii())."""
    words = spelled(source)
    return words is None or not words.isdisjoint(names)


def with_non_ascii(names: set[str]) -> set[str]:
    """NAMES, and NON_ASCII when one of them is not ASCII (an escape in a string may spell it)."""
    if not all(n.isascii() for n in names):
        names.add(NON_ASCII)
    return names
