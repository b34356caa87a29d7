"""OG315 in a big test module: a test byte-identical to the base's is skipped only when nothing around it changed.

analysis/arranged.py `module_findings`: with no conftest, plugin or code under test changed and the
module's setup the base's, a test whose lines (decorators included, in the same encoding) are the
base's is not walked.  A fixture added beside an unchanged test is still found, and so is a stand-in
in a changed test among many unchanged ones; the honest twins pass.
"""

from __future__ import annotations

import pytest

from tests.test_changed_expectations import HEAD, T, in_memory

FILLER = "".join(f"\n\ndef test_{n}():\n    assert calc.price({n}) == {2 * n}\n" for n in range(40))
IT = "\n\ndef test_it():\n    assert calc.price(2) == 4\n"
BASE = HEAD + FILLER + IT
FIXTURE = (
    "\n\n@pytest.fixture(autouse=True)\ndef fixed(monkeypatch):\n    monkeypatch.setattr(calc, 'price', lambda q: 4)\n"
)
HELPER = "\n\ndef _helper(value):\n    return value\n"

CASES = {
    "an autouse fixture added beside unchanged tests": (HEAD + FIXTURE + FILLER + IT, ["OG315"] * 41),  # every test
    "a stand-in in one changed test among unchanged ones": (
        HEAD + FILLER + IT.replace("    assert", "    calc.price = lambda q: 4\n    assert"),
        ["OG315"],
    ),
    "a helper appended": (BASE + HELPER, []),
    "a check added to one test": (
        BASE.replace("assert calc.price(2) == 4", "assert calc.price(2) == 4\n    assert calc.price(0) == 0"),
        [],
    ),
    "the same tests, reformatted": (BASE.replace("def test_it():", "def test_it( ):"), []),
}


@pytest.mark.parametrize(("after", "expected"), list(CASES.values()), ids=list(CASES))
def test_arranged_checks_in_a_big_module(after: str, expected: list[str]) -> None:
    assert in_memory({T: BASE}, {T: after}) == expected
