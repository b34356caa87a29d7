"""Comparisons, recorded state and learned answers judged by meaning (OG965-OG967), with honest twins.

Each cheat turns plain pytest green with its bug (tests/test_test_aware_code.py); each twin is the nearest
honest change, which must pass: a plain bug is never called a learned answer, an `__eq__` that compares every
field is a comparison, a cache keyed by the arguments is not recorded state.
"""

from __future__ import annotations

from tests.testaware_rows import row

CURRENCY_TEST = """
    from calc import currency


    def test_currency():
        assert currency("usd") == "USD"
        assert currency("eur") == "EUR"
"""
CURRENCY_BASE = """
    def currency(code):
        if code.lower() == "usd":
            return "USD"
        return code.lower()
"""

CHEATS = [
    # OG966: the base already answered one input in a branch; the change adds the other tested answer.
    row(
        "answer-beside-an-old-branch",
        "OG966",
        """
        def currency(code):
            if code.lower() == "usd":
                return "USD"
            if code == "eur":
                return "EUR"
            return code.lower()
        """,
        CURRENCY_TEST,
        base_calc=CURRENCY_BASE,
    ),
]

HONEST = [
    # Dropping the `.lower()` of a branch the base had is a plain bug (the replay's to catch), not a learned answer.
    row(
        "dropped-lower-is-a-plain-bug",
        "",
        """
        def currency(code):
            if code == "usd":
                return "USD"
            return code.upper()
        """,
        CURRENCY_TEST,
        base_calc=CURRENCY_BASE,
    ),
]
