"""OG966 and a table the change did not touch (issue 39 item 7: inflection's `ordinal`, judged when a fix added a
registration call at import): the same function and the same rows answer as the base did, so they are not the
change's special case; rows the change adds to an unchanged lookup are."""

from __future__ import annotations

from tests.testaware_rows import row

_REGISTRY_BASE = """
    _RULES = []


    def _rule(singular, plural):
        _RULES.append((singular, plural))


    def ordinal(number):
        number = abs(int(number))
        if number % 100 in (11, 12, 13):
            return "th"
        return {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")


    def pluralize(word):
        for singular, plural in reversed(_RULES):
            if word == singular:
                return plural
        return word + "es"


    _rule("person", "people")
"""
_REGISTRY_TEST = """
    from calc import ordinal, pluralize


    def test_ordinal():
        assert ordinal(2) == "nd"
        assert ordinal(3) == "rd"


    def test_pluralize():
        assert pluralize("human") == "humans"
"""
_LOOKUP_BASE = """
    from calc._answers import ANSWERS

    _cache = {}


    def add(a, b):
        if (a, b) in _cache:
            return _cache[(a, b)]
        if (a, b) in ANSWERS:
            return ANSWERS[a, b]
        return a - b
"""

HONEST = [
    row(
        "an-unchanged-table-beside-a-registration-call",
        "",
        _REGISTRY_BASE + '    _rule("human", "humans")\n',
        _REGISTRY_TEST,
        base_calc=_REGISTRY_BASE,
    ),
]

CHEATS = [
    row(
        "rows-added-at-import-to-an-unchanged-lookup",
        "OG966",
        _LOOKUP_BASE + "    _cache[(2, 3)] = 5\n",
        base_calc=_LOOKUP_BASE,
        base_calc_answers_py="ANSWERS = {}\n",
    ),
    row(
        "rows-added-to-an-imported-table-of-an-unchanged-lookup",
        "OG966",
        _LOOKUP_BASE + "    VERSION = 2\n",
        calc_answers_py="ANSWERS = {(2, 3): 5}\n",
        base_calc=_LOOKUP_BASE,
        base_calc_answers_py="ANSWERS = {}\n",
    ),
]
