"""Test ids that change between collections (times, random values, id()): counted by function, never a loop.

The rules of oracle_guard/contract/unstable_ids.py on plain data, then real
repositories with real pytest: adoption in one commit, later commits and
`check` as on a stable project, weakenings of a counted test still caught,
and a replay that does not flake on them.
"""

from __future__ import annotations

import json
import sys

import pytest

from oracle_guard.commands import check, init_contract, one_hook
from oracle_guard.contract import unstable_ids
from oracle_guard.contract.snapshot import format_snapshot
from oracle_guard.hook_ids import collection_snapshot
from oracle_guard.hook_ids.collection_snapshot import main as snapshot_main
from tests.helpers import Repo

UNSTABLE = """\
import datetime
import random

import pytest


class Thing:
    pass


@pytest.mark.parametrize("when", [str(datetime.datetime.now()), "fixed"])
def test_time(when):
    assert when


@pytest.mark.parametrize("value", [random.random() for _ in range(3)])
def test_random(value):
    assert 0 <= value < 1


@pytest.mark.parametrize("thing", [Thing(), Thing()], ids=lambda t: f"thing-{id(t):x}")
def test_identity(thing):
    assert isinstance(thing, Thing)


@pytest.mark.parametrize("n", [1, 2])
def test_plain(n):
    assert n + 1 > n
"""
KEYS = {
    "tests/test_ids.py::test_identity[<unstable id> x2]",
    "tests/test_ids.py::test_random[<unstable id> x3]",
    "tests/test_ids.py::test_time[<unstable id> x2]",
}
NAMED = {"tests/test_ids.py::test_plain[1]", "tests/test_ids.py::test_plain[2]"}


@pytest.fixture
def this_python(monkeypatch: pytest.MonkeyPatch) -> str:
    """Collection runs in this interpreter (it has pytest), as the active virtualenv."""
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    return sys.executable


def snapshot_ids(repo: Repo) -> set[str]:
    text = (repo.path / "tests/collection_snapshot.txt").read_text()
    return {line.split(None, 1)[1] for line in text.splitlines() if line and not line.startswith("#")}


# -- the rules on plain data -----------------------------------------------------------------------


def test_function_of_drops_the_parameters_only() -> None:
    assert unstable_ids.function_of("tests/a.py::test_x[2026-12-03 18:00:01]") == "tests/a.py::test_x"
    assert unstable_ids.function_of("tests/a.py::C::test_x[a::b[c]]") == "tests/a.py::C::test_x"
    assert unstable_ids.function_of("tests/a.py::test_x") == "tests/a.py::test_x"
    assert unstable_ids.function_of("tests/a[1].py") == "tests/a[1].py"


def test_a_key_round_trips_with_its_status_and_count() -> None:
    key = unstable_ids.key("tests/a.py::test_x", "skip", 2)
    assert key == "tests/a.py::test_x[<unstable id, skip> x2]"
    assert unstable_ids.parse_key(key) == ("tests/a.py::test_x", "skip", 2)
    assert unstable_ids.parse_key("tests/a.py::test_x[<unstable id> x3]") == ("tests/a.py::test_x", "run", 3)
    assert unstable_ids.parse_key("tests/a.py::test_x[<unstable id, gone> x3]") is None
    assert unstable_ids.parse_key("tests/a.py::test_x[3]") is None


def test_only_parametrized_ids_that_differ_make_a_test_unstable() -> None:
    first = ["t.py::test_a[1]", "t.py::test_time[18:00:01]", "t.py::test_plain"]
    second = ["t.py::test_a[1]", "t.py::test_time[18:00:02]", "t.py::test_plain"]
    assert unstable_ids.differing(first, second) == {"t.py::test_time"}
    assert unstable_ids.differing(first, first) == set()


def test_grouping_counts_cases_per_status_and_adds_to_keys_already_there() -> None:
    items = {
        "t.py::test_time[1]": "run",
        "t.py::test_time[2]": "run",
        "t.py::test_time[3]": "skip",
        "t.py::test_other[1]": "run",
        "t.py::test_time[<unstable id> x1]": "run",
    }
    assert unstable_ids.grouped(items, {"t.py::test_time"}) == {
        "t.py::test_other[1]": "run",
        "t.py::test_time[<unstable id, skip> x1]": "skip",
        "t.py::test_time[<unstable id> x3]": "run",
    }


def test_cases_pair_by_position_within_their_test() -> None:
    first = ["t.py::test_t[a1]", "t.py::test_t[a2]", "t.py::test_s[1]"]
    second = ["t.py::test_s[1]", "t.py::test_t[b1]", "t.py::test_t[b2]"]
    assert unstable_ids.paired(first, second, {"t.py::test_t"}) == {
        "t.py::test_t[a1]": "t.py::test_t[b1]",
        "t.py::test_t[a2]": "t.py::test_t[b2]",
    }
    assert unstable_ids.paired(first, second[:2], {"t.py::test_t"}) == {"t.py::test_t[a1]": "t.py::test_t[b1]"}


def test_a_counted_test_that_loses_or_skips_cases_is_a_finding_and_more_cases_are_not() -> None:
    base = {"t.py::test_t[<unstable id> x3]": ("run", 4)}

    def judged(items: dict[str, str]) -> list[tuple[str, int]]:
        found = unstable_ids.weakened(base, items, "snap.txt", lambda _: False, lambda _: False)
        return [(f.code, f.line) for f in found]

    assert judged({"t.py::test_t[<unstable id> x3]": "run"}) == []
    assert judged({"t.py::test_t[<unstable id> x4]": "run"}) == []  # a case added
    assert judged({"t.py::test_t[<unstable id> x2]": "run"}) == [("OG801", 4)]
    assert judged({}) == [("OG801", 4)]
    skipped = {"t.py::test_t[<unstable id> x2]": "run", "t.py::test_t[<unstable id, skip> x1]": "skip"}
    assert judged(skipped) == [("OG802", 4)]
    approved = unstable_ids.weakened(base, {}, "snap.txt", lambda f: f == "t.py::test_t", lambda _: False)
    assert approved == []  # `test-retire t.py::test_t` names the function


def test_the_plugin_s_lookup_answers_for_a_counted_test_s_cases() -> None:
    known = unstable_ids.lookup({"t.py::test_t[<unstable id, skip> x1]": "skip", "t.py::test_s": "run"})
    assert known.get("t.py::test_t[18:00:01]") == "skip"
    assert known.get("t.py::test_s") == "run" and known.get("t.py::test_u[1]") is None


# -- real repositories -------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_project_with_unstable_ids_adopts_in_one_commit_and_later_commits_behave_as_stable(
    repo: Repo, capsys: pytest.CaptureFixture[str], this_python: str
) -> None:
    repo.write("tests/test_ids.py", UNSTABLE)
    repo.commit("project")
    assert repo.run(init_contract.main) == 0
    out = capsys.readouterr().out
    assert snapshot_ids(repo) == KEYS | NAMED
    assert out.count("counted, not named:") == 3  # each reported once, with the fix
    assert "tests/test_ids.py::test_time: the ids of parameter `when` change between collections" in out
    assert "`ids=` or `pytest.param(..., id=...)`" in out
    adopted = repo.commit("adopt oracle-guard")
    # An honest edit of the test module: every hook, twice, green without touching the snapshot.
    honest = UNSTABLE.replace("assert when\n", "assert when\n    assert len(when) > 1\n")
    repo.write("tests/test_ids.py", honest)
    repo.stage()
    for _ in range(2):
        assert repo.hook(one_hook.main).code == 0
        assert repo.hook(snapshot_main).code == 0
    assert repo.git("status", "--porcelain", "tests/collection_snapshot.txt") == ""
    repo.commit("honest")
    assert repo.hook(check.main, "--base", adopted, "-q").said == (0, "")
    # A new stable case: the commit records it in the snapshot and stages it, as on any project.
    repo.write("tests/test_ids.py", honest.replace("[1, 2]", "[1, 2, 3]"))
    repo.stage()
    assert repo.hook(one_hook.main).code == 0
    assert "tests/collection_snapshot.txt" in repo.git("diff", "--cached", "--name-only")
    assert repo.hook(one_hook.main, "-q").said == (0, "")
    assert "tests/test_ids.py::test_plain[3]" in snapshot_ids(repo) and KEYS <= snapshot_ids(repo)


@pytest.mark.slow
def test_a_counted_test_that_loses_a_case_or_skips_one_is_still_caught(repo: Repo, this_python: str) -> None:
    repo.write("tests/test_ids.py", UNSTABLE)
    repo.commit("project")
    assert repo.hook(init_contract.main).code == 0
    adopted = repo.commit("adopt")
    repo.write("tests/test_ids.py", UNSTABLE.replace("for _ in range(3)", "for _ in range(2)"))
    result = repo.staged_hook(snapshot_main)
    assert result.code == 1 and result.codes == ["OG801"]
    assert "1 of the 3 cases of tests/test_ids.py::test_random" in result.out
    skipped = UNSTABLE.replace('"fixed"]', 'pytest.param("fixed", marks=pytest.mark.skip)]')
    repo.write("tests/test_ids.py", skipped)
    result = repo.staged_hook(snapshot_main)
    assert result.code == 1 and "OG802" in result.codes and "1 case(s) of tests/test_ids.py::test_time" in result.out
    repo.git("checkout", "-q", adopted, "--", "tests/test_ids.py")
    assert repo.staged_hook(snapshot_main).code == 0  # restored: green again


@pytest.mark.slow
def test_a_snapshot_recorded_before_counting_converges_after_one_stage(repo: Repo, this_python: str) -> None:
    repo.write("tests/test_ids.py", UNSTABLE)
    repo.commit("project")
    assert repo.hook(init_contract.main, "--no-snapshot").code == 0
    with repo.cwd():  # the snapshot an earlier version recorded: every id named, as one collection gave it
        found = collection_snapshot.collect(this_python)
    assert found is not None and len(found.items) == 9
    repo.write("tests/collection_snapshot.txt", format_snapshot(found.items))
    adopted = repo.commit("adopted with named unstable ids")
    repo.write("tests/test_ids.py", UNSTABLE + "\n\ndef test_more():\n    assert 3 > 2\n")
    first = repo.staged_hook(snapshot_main)  # recorded and staged with the commit
    assert first.code == 0 and first.codes == [] and "test_time: the ids of parameter `when`" in first.err
    assert "staged it with this commit" in first.out
    second = repo.staged_hook(snapshot_main)
    assert second.said == (0, "")  # converged, and said once
    assert KEYS <= snapshot_ids(repo)
    repo.commit("snapshot counts them")
    assert repo.hook(check.main, "--base", adopted).code == 0


@pytest.mark.slow
def test_check_passes_a_new_test_the_snapshot_does_not_list_with_one_notice_in_every_format(
    repo: Repo, this_python: str
) -> None:
    repo.write("tests/test_ids.py", UNSTABLE)
    repo.commit("project")
    assert repo.hook(init_contract.main).code == 0
    adopted = repo.commit("adopt")
    repo.write("tests/test_ids.py", UNSTABLE + "\n\ndef test_more():\n    assert 3 > 2\n")
    repo.commit("a test added, snapshot not staged")
    result = repo.hook(check.main, "--base", adopted)
    assert result.code == 0 and result.codes == [], result.out + result.err
    said = [line for line in result.err.splitlines() if "not brought up to date" in line]
    assert len(said) == 1 and "(10 tests: 1 new id)" in said[0], result.err  # the counted test is not "new"
    assert f"`oracle-guard collection-snapshot --base {adopted}`" in said[0]
    assert "recording the first snapshot" not in result.err
    doc = json.loads(repo.hook(check.main, "--base", adopted, "--format", "json").out)
    assert doc["summary"]["exit_code"] == 0 and doc["findings"] == []
    assert repo.hook(snapshot_main, "--base", adopted).code == 1  # the command the notice names writes it
    repo.commit("snapshot staged")
    assert repo.hook(check.main, "--base", adopted, "-q").said == (0, "")


CALC = "def double(x):\n    return 2 * x\n"
CALC_TESTS = """\
import time

import pytest

from calc import double


@pytest.mark.parametrize("n", [1, 2, 3], ids=lambda n: f"{n}-at-{time.time()}")
def test_double(n):
    assert double(n) == n + n
"""


@pytest.mark.slow
@pytest.mark.parametrize("adopted", [True, False], ids=["counted-by-the-snapshot", "found-by-a-second-run"])
def test_replay_pairs_the_cases_of_a_counted_test_and_still_catches_a_broken_one(
    repo: Repo,
    this_python: str,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    adopted: bool,
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    repo.write("calc.py", CALC)
    repo.write("pytest.ini", "[pytest]\npythonpath = .\n")
    repo.write("tests/test_calc.py", CALC_TESTS)
    repo.commit("project")
    if adopted:
        assert repo.hook(init_contract.main).code == 0
        assert "tests/test_calc.py::test_double[<unstable id> x3]" in snapshot_ids(repo)
    base = repo.commit("adopt")
    repo.write("calc.py", "def double(x):\n    return x + x  # the same behaviour\n")
    repo.write("tests/test_calc.py", CALC_TESTS + "\n\ndef test_zero():\n    assert double(0) == 0\n")
    repo.commit("refactor, and a test")
    for _ in range(2):  # every base case passes on the new code, whatever ids this run gave them
        result = repo.hook(check.main, "--base", base, "--only", "oracle-replay")
        assert result.code == 0 and "OG905" not in result.err, result
        found = "the ids of tests/test_calc.py::test_double change between runs" in result.err
        assert found is not adopted  # without a snapshot that counts it, the replay finds out, and says so
    repo.write("calc.py", "def double(x):\n    return x * 3 if x == 2 else x + x\n")
    repo.commit("broken for 2")
    result = repo.hook(check.main, "--base", base, "--only", "oracle-replay")
    assert result.code == 1 and set(result.codes) == {"OG901"}
    assert "test_double[2-at-" in result.out and "behavior-change tests/test_calc.py::test_double`" in result.out
