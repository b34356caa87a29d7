"""Issue 30, item 6: two single-case tests merged into one parametrized test with the same checks, and split back.

The merge is accepted (no OG302 "test ... was removed", no OG801 "no longer collected") when every
removed test's checks reappear in a case of the parametrized test, however the case spells them: the
expected values as one tuple parameter (`expected[0]`), the result unpacked (`value, kind = parse(s)`)
or indexed (`parse(s)[0]`), compared as a tuple (`(value, kind) == expected`), the cases a dict's
`.items()`. The weakening twins: one case's expected value changed, or a case missing, stay refused.
"""

from __future__ import annotations

import os
import sys

import pytest

from oracle_guard.commands import one_hook
from oracle_guard.hook_ids import oracle_shrink
from tests.helpers import Repo, Result, memory_check
from tests.test_first_hour_static import codes

T = "tests/test_parse.py"
CODE = 'def parse(s):\n    return (int(s), "int") if s.isdigit() else (float(s), "float")\n'
HEAD = "import pytest\n\nfrom calc import parse\n\n\n"
SINGLE = (
    HEAD
    + 'def test_parse_int():\n    value, kind = parse("1")\n    assert value == 1\n    assert kind == "int"\n\n\n'
    + 'def test_parse_float():\n    value, kind = parse("1.5")\n    assert value == 1.5\n    assert kind == "float"\n'
)
CASES = '[("1", (1, "int")), ("1.5", (1.5, "float"))]'
MERGED = {
    "three parameters": HEAD
    + '@pytest.mark.parametrize("text, want_value, want_kind", [("1", 1, "int"), ("1.5", 1.5, "float")])\n'
    + "def test_parse(text, want_value, want_kind):\n"
    + "    value, kind = parse(text)\n    assert value == want_value\n    assert kind == want_kind\n",
    "the expected tuple indexed": HEAD
    + f'@pytest.mark.parametrize("text, expected", {CASES})\n'
    + "def test_parse(text, expected):\n"
    + "    value, kind = parse(text)\n    assert value == expected[0]\n    assert kind == expected[1]\n",
    "the result indexed": HEAD
    + f'@pytest.mark.parametrize("text, expected", {CASES})\n'
    + "def test_parse(text, expected):\n"
    + "    assert parse(text)[0] == expected[0]\n    assert parse(text)[1] == expected[1]\n",
    "the tuples compared": HEAD
    + f'@pytest.mark.parametrize("text, expected", {CASES})\n'
    + "def test_parse(text, expected):\n    assert parse(text) == expected\n",
    "the cases a dict's items": HEAD
    + '@pytest.mark.parametrize("text, expected", {"1": (1, "int"), "1.5": (1.5, "float")}.items())\n'
    + "def test_parse(text, expected):\n    value, kind = parse(text)\n    assert (value, kind) == expected\n",
    "with ids, in a class": HEAD
    + "class TestParse:\n"
    + f'    @pytest.mark.parametrize("text, expected", {CASES}, ids=["int", "float"])\n'
    + "    def test_parse(self, text, expected):\n        assert parse(text) == expected\n",
}
FORMS = sorted(MERGED)


def judged(base: str, new: str) -> Result:
    """oracle-shrink on T changed from BASE to NEW (held in memory: a rule table needs no history)."""
    return memory_check(oracle_shrink.check, {"calc.py": CODE, T: base}, {T: new})


def weakened(merged: str, how: str) -> str:
    if how == "an expected value changed":
        out = merged.replace('1.5, "float"', '1.5, "int"')
    else:  # a case missing
        out = merged.replace(', ("1.5", 1.5, "float")', "").replace(', ("1.5", (1.5, "float"))', "")
        out = out.replace(', "1.5": (1.5, "float")', "").replace(', "float"]', "]")
    assert out != merged
    return out


@pytest.mark.parametrize("form", FORMS)
def test_two_tests_merged_into_one_parametrized_test_pass(form: str) -> None:
    result = judged(SINGLE, MERGED[form])
    assert codes(result) == [], result.out


@pytest.mark.parametrize("form", FORMS)
def test_the_parametrized_test_split_back_passes(form: str) -> None:
    result = judged(MERGED[form], SINGLE)
    assert codes(result) == [], result.out


@pytest.mark.parametrize("how", ["an expected value changed", "a case missing"])
@pytest.mark.parametrize("form", FORMS)
def test_a_merge_that_changes_or_drops_a_case_is_refused(form: str, how: str) -> None:
    result = judged(SINGLE, weakened(MERGED[form], how))
    assert "OG302" in codes(result) and "test_parse_float was removed" in result.out, result.out


def test_a_split_that_changes_an_expected_value_is_refused() -> None:
    split = SINGLE.replace('assert kind == "float"', 'assert kind == "int"')
    result = judged(MERGED["the tuples compared"], split)
    assert codes(result), result.out


# -- with pytest's collection: the snapshot's OG801 pairs the ids the same way ---------------------


@pytest.fixture
def collected(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> Repo:
    """REPO with SINGLE committed beside its collection snapshot (pytest run by the one-process hook)."""
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    repo.write("calc.py", CODE)
    repo.write(T, SINGLE)
    repo.write("tests/__init__.py", "")
    repo.write("conftest.py", "")
    repo.stage()
    repo.hook(one_hook.main, "--python", sys.executable)  # writes the first snapshot
    repo.commit("base with its snapshot")
    return repo


def _hook_after(repo: Repo, text: str) -> tuple[int, str]:
    repo.write(T, text)
    repo.stage()
    code, out, err, _ = repo.hook(one_hook.main, "-q", "--python", sys.executable)  # -q: no success line
    return code, out + err


@pytest.mark.slow
@pytest.mark.parametrize("form", ["the cases a dict's items", "the tuples compared"])
def test_the_merge_is_no_test_lost_for_the_snapshot_either(collected: Repo, form: str) -> None:
    assert "tests/test_parse.py::test_parse_float" in (collected.path / "tests/collection_snapshot.txt").read_text()
    code, said = _hook_after(collected, MERGED[form])
    assert "OG801" not in said and "OG302" not in said, said
    collected.stage()  # the snapshot, rewritten with the new ids
    assert _hook_after(collected, MERGED[form]) == (0, ""), said


@pytest.mark.slow
def test_a_merge_that_drops_a_case_is_no_longer_collected(collected: Repo) -> None:
    code, said = _hook_after(collected, weakened(MERGED["the tuples compared"], "a case missing"))
    assert code == 1 and "OG801 test no longer collected: tests/test_parse.py::test_parse_float" in said, said
