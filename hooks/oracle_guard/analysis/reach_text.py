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

import functools
import re
from collections.abc import Iterable

_QUOTE = rb"""(?:'''|\"\"\"|'|")"""
_PREFIX = rb"[rRuUbBfF]{0,2}"
# A literal ending in a word character, then (comments, continuations, empty literals between) one
# starting with one: Python joins them, so "na" "me" is `name` in the tree but not in the text.
_JOINED = (
    rb"\w"
    + _QUOTE
    + rb"(?:\s|\\\r?\n|#[^\n]*|"
    + _PREFIX
    + rb"""(?:''''''|\"\"\"\"\"\"|''|""))*"""
    + _PREFIX
    + _QUOTE
    + rb"\w"
)
# Escapes that can make a letter (\x66, \u0066, \N{...}, octal) and a backslash before a line end.
_ESCAPE = rb"\\[0-7xuUN\r\n]"
_STAR = rb"import\s*\*|import\s*\(\s*\*"


@functools.lru_cache(maxsize=4)
def hiding(dynamic: frozenset[str]) -> re.Pattern[bytes]:
    """Spellings that may hide a name from the text, star imports, and the words DYNAMIC (the inert
    rule's dynamic lookups: a module that spells one is walked).  Compiled when first needed."""
    words = b"|".join(re.escape(w.encode()) for w in sorted(dynamic))
    return re.compile(rb"%s|%s|%s|(?<![A-Za-z_])(?:%s)(?!\w)" % (_JOINED, _ESCAPE, _STAR, words))


def spelling(names: Iterable[str]) -> re.Pattern[bytes] | None:
    """A search for any of NAMES as an identifier could spell it (None: no names)."""
    encoded = sorted({n.encode("utf-8", "surrogateescape") for n in names})
    if not encoded:
        return None
    # Not \b on the left: the rule reads identifiers in strings from a letter or underscore on, so "1name"
    # holds `name`; so does "\tname" (a tab, then `name`), though a letter precedes it in the text.
    return re.compile(rb"(?:(?<![A-Za-z_])|(?<=\\[abfnrtv]))(?:%s)(?!\w)" % b"|".join(re.escape(n) for n in encoded))


def may_reach(source: bytes, spelled: re.Pattern[bytes] | None, hidden: re.Pattern[bytes]) -> bool:
    """Whether SOURCE may spell a name SPELLED finds, or what HIDDEN (hiding()) finds."""
    if not source.isascii():
        return True  # identifiers are NFKC-normalised; strings may hold anything
    head = source.split(b"\n", 2)[:2]
    if any(b"coding" in line for line in head):
        return True  # a coding cookie: the bytes are not the text (utf-7 spells letters with +...-)
    if hidden.search(source):
        return True
    return spelled is not None and spelled.search(source) is not None
