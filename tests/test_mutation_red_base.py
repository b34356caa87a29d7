"""Issue 38, item 5: `check --mutate` on a base with a collection error judges what collects, with a notice.

The base's own collection error (a test of a function the task has yet to write) is the base's state, not
a reason to judge nothing: the mutants are judged with the base's tests that do collect, and a notice
names the module that did not.  A module that collected at the base and does not on the new side still
stops the check (exit 2): the change must not hide tests by breaking their import.
"""

from __future__ import annotations

import pytest

from oracle_guard.commands import check
from tests.helpers import Repo, Result, finding_lines
from tests.test_mutation import BASE, STATIC, UNKNOWN_TO_STATIC, T, module
from tests.test_mutation import _project_python as _project_python  # the project's interpreter: this one

pytestmark = pytest.mark.slow  # real pytest processes, mutants and all

STUB = "tests/test_stub.py"
RED = "from shop.core import not_yet\n\n\ndef test_not_yet():\n    assert not_yet() == 1\n"  # does not import at base
FIXED_CODE = "\n\ndef not_yet():\n    return 1\n"
WEAKENING = "a loop that checks one element"


def _mutate(repo: Repo, before: str, after: str, fix: bool = True) -> Result:
    from tests.test_mutation import CORE

    changed: dict[str, str | None] = {T: module(after), STUB: RED + "\n\ndef test_again():\n    assert not_yet() > 0\n"}
    if fix:
        changed["src/shop/core.py"] = CORE + FIXED_CODE
    repo.change({**BASE, T: module(before), STUB: RED}, changed)
    return repo.hook(check.main, "--mutate", "--skip", STATIC, "--base", "HEAD")


def test_an_honest_change_on_a_base_with_a_collection_error_is_judged_with_a_notice(repo: Repo) -> None:
    before, _ = UNKNOWN_TO_STATIC[WEAKENING]
    renamed = before.replace("def test_squares", "def test_squares_of_the_first_five")
    result = _mutate(repo, before, renamed)
    assert result.code == 0 and result.codes == [], result.said
    assert f"1 test module(s) do not collect at HEAD ({STUB})" in result.err, result.err
    assert "the new tests let 0 of those live" in result.err  # judged, not skipped


def test_a_weakening_beside_a_base_collection_error_is_still_refused(repo: Repo) -> None:
    before, after = UNKNOWN_TO_STATIC[WEAKENING]
    result = _mutate(repo, before, after)
    assert result.code == 1 and set(result.codes) == {"OG910"}, result.said
    assert f"do not collect at HEAD ({STUB})" in result.err


def test_a_module_that_stops_collecting_on_the_new_side_is_judged_against_the_change(repo: Repo) -> None:
    """The change broke a module the base collects: the change's doing, OG923 (issue 36), never exit 2."""
    before, _ = UNKNOWN_TO_STATIC[WEAKENING]
    broken = before + "\n\ndef test_broken(:\n    pass\n"  # the module collected at the base
    result = _mutate(repo, before, broken)
    assert result.code == 1 and [line.split()[1] for line in finding_lines(result.out)] == ["OG923"], result.said
    assert "do not collect (they do at the base)" in result.out, result.out
