"""The skip hooks read only the changed functions of a big module, and lose no finding doing so.

rules/pydiff.py `_focus`: where every top-level statement but functions and classes is
the base's, the module-wide names are the base's and so is what the rule reads beyond a
statement, a function or class byte-identical to the base's is not visited.  Each row
is judged twice, focused and with the whole module read (the engine before the focus),
and must give the same output both ways; the rows say which way the focus went.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from oracle_guard.hook_ids import forbid_runtime_skip, forbid_skip_marks
from oracle_guard.repo.context import HookContext
from oracle_guard.reporting.report import Finding
from oracle_guard.rules import pydiff
from tests.helpers import Result, memory_check

T = "tests/test_big.py"
HELPERS = "tests/marks.py"

HEAD = """\
import os
import unittest

import pytest

from tests.marks import needs_db

slow = pytest.mark.slow


class Skip(Exception):
    pass


@pytest.fixture
def value():
    return 41

"""


def _tests(count: int = 40) -> str:
    return "".join(
        f"\ndef test_{n}(value):\n    result = value + {n}\n    assert result == {41 + n}\n\n" for n in range(count)
    )


TAIL = """
@slow
def test_slow(value):
    assert value == 41


@needs_db
def test_db(value):
    assert value == 41


def test_raises_skip(value):
    if value != 41:
        raise Skip("not here")
    assert value == 41
"""

BASE = HEAD + _tests() + TAIL
MARKS = 'import pytest\n\nneeds_db = pytest.mark.usefixtures("value")\n'


def changed_test(body: str, n: int = 7) -> str:
    """BASE with test_N's body replaced by BODY (indented lines)."""
    old = f"def test_{n}(value):\n    result = value + {n}\n    assert result == {41 + n}\n"
    assert old in BASE
    return BASE.replace(old, f"def test_{n}(value):\n{body}", 1)


APPENDED = BASE + "\n\ndef _helper(value):\n    return value * 2\n"

Check = Callable[[HookContext], list[Finding]]
SKIP_MARKS: Check = forbid_skip_marks.check
RUNTIME: Check = forbid_runtime_skip.check


def judged(check: Check, after: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> tuple[Result, list[bool]]:
    """The change BASE -> AFTER judged focused, asserted equal to the whole module's verdict."""
    before = {T: BASE, HELPERS: MARKS}
    seen: list[bool] = []
    original = pydiff._focus

    def spy(rule: pydiff.Rule, base: pydiff.Module, new: pydiff.Module) -> object:
        found = original(rule, base, new)
        seen.append(found is not None)
        return found

    with monkeypatch.context() as patched:
        patched.setattr(pydiff, "_focus", spy)
        focused = memory_check(check, before, after)
    with monkeypatch.context() as patched:
        patched.setattr(pydiff, "_focus", lambda rule, base, new: None)
        whole = memory_check(check, before, after)
    assert focused == whole
    return focused, seen


# (id, hook, the change, expected finding text, whether the focus applied)
REJECTED = [
    (
        "mark-on-a-changed-test",
        SKIP_MARKS,
        {T: BASE.replace("def test_7(", "@pytest.mark.skip(reason='flaky')\ndef test_7(")},
        "OG101 new skip mark",
        True,
    ),
    (
        "xfail-in-a-changed-test-body",
        SKIP_MARKS,
        {T: changed_test("    request = None\n    pytest.mark.xfail(value)\n    assert value\n")},
        "OG101",
        True,
    ),
    # The alias changed, the test that uses it did not: the whole module is read.
    (
        "changed-mark-alias-on-an-unchanged-test",
        SKIP_MARKS,
        {T: BASE.replace("slow = pytest.mark.slow", "slow = pytest.mark.skip(reason='later')")},
        "OG101 new skip mark",
        False,
    ),
    # The shared mark changed in its own module, this module changed elsewhere: its context differs.
    (
        "imported-mark-changed-elsewhere",
        SKIP_MARKS,
        {T: APPENDED, HELPERS: 'import pytest\n\nneeds_db = pytest.mark.skip(reason="no db")\n'},
        "on test_db",
        False,
    ),
    # A name bound inside a changed function counts module-wide (pysource.Names): the whole module is read.
    (
        "alias-rebound-in-a-changed-function",
        SKIP_MARKS,
        {T: changed_test("    global slow\n    slow = pytest.mark.skip\n    assert value\n")},
        "OG101",
        False,
    ),
    (
        "runtime-skip-in-a-changed-test",
        RUNTIME,
        {T: changed_test('    pytest.skip("flaky")\n    assert value\n')},
        "OG201 new runtime skip",
        True,
    ),
    (
        "early-return-in-a-changed-test",
        RUNTIME,
        {T: changed_test("    if value:\n        return\n    assert value\n")},
        "OG202 new early return in test_7",
        True,
    ),
    # The exception an unchanged test raises became a skip: the rule's context differs.
    (
        "changed-class-makes-an-unchanged-raise-a-skip",
        RUNTIME,
        {T: BASE.replace("class Skip(Exception):", "class Skip(unittest.SkipTest):")},
        "in test_raises_skip",
        False,
    ),
]


@pytest.mark.parametrize(
    ("check", "after", "expected", "focused"), [r[1:] for r in REJECTED], ids=[r[0] for r in REJECTED]
)
def test_weakening_in_a_big_module_is_found(
    check: Check, after: dict[str, str], expected: str, focused: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    (code, out, err, _), seen = judged(check, after, monkeypatch)
    assert code == 1, (out, err)
    assert expected in out, out
    assert seen and seen[0] is focused


# (id, the change): honest changes of a big module, each judged with only the changed statements read.
ACCEPTED = [
    ("helper-appended", {T: APPENDED}),
    ("a-check-added", {T: changed_test("    result = value + 7\n    assert result == 48\n    assert result > 0\n")}),
    ("tests-reordered", {T: BASE.replace(TAIL, "").replace(HEAD, HEAD + TAIL)}),
    ("a-test-renamed", {T: BASE.replace("def test_7(", "def test_seven(")}),
    ("a-non-skip-mark-added", {T: APPENDED.replace("def test_3(value):", "@pytest.mark.slow\ndef test_3(value):")}),
]


@pytest.mark.parametrize("check", [SKIP_MARKS, RUNTIME], ids=["forbid-skip-marks", "forbid-runtime-skip"])
@pytest.mark.parametrize("after", [a[1] for a in ACCEPTED], ids=[a[0] for a in ACCEPTED])
def test_honest_change_in_a_big_module_passes_focused(
    check: Check, after: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (code, out, err, _), seen = judged(check, after, monkeypatch)
    assert code == 0, (out, err)
    assert seen == [True]


def test_existing_skip_on_an_unchanged_test_is_the_bases(monkeypatch: pytest.MonkeyPatch) -> None:
    """A skip the base already had stays allowed when another test changes; a second copy of it does not."""
    base_with_skip = BASE.replace("def test_3(value):", "@pytest.mark.skip(reason='known')\ndef test_3(value):")
    before = {T: base_with_skip, HELPERS: MARKS}
    honest = base_with_skip + "\n\ndef _helper(value):\n    return value\n"
    copied = base_with_skip.replace("def test_9(value):", "@pytest.mark.skip(reason='known')\ndef test_9(value):")
    assert memory_check(SKIP_MARKS, before, {T: honest}).code == 0
    code, out, _, _ = memory_check(SKIP_MARKS, before, {T: copied})
    assert code == 1 and "on test_9" in out, out


def test_a_focus_one_rule_may_use_is_not_another_s(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rules share parsed modules (pydiff.parsed_module): forbid-skip-marks may read only the changed
    class, forbid-runtime-skip, whose context (the skip exceptions) changed with it, must read everything."""
    after = {T: BASE.replace("class Skip(Exception):", "class Skip(unittest.SkipTest):")}
    (code, out, _, _), seen = judged(SKIP_MARKS, after, monkeypatch)
    assert code == 0 and seen == [True], out
    (code, out, _, _), seen = judged(RUNTIME, after, monkeypatch)
    assert code == 1 and "in test_raises_skip" in out and seen == [False], out
    (code, out, _, _), seen = judged(SKIP_MARKS, after, monkeypatch)
    assert code == 0 and seen == [True], out
