"""bench/realfix.py's parts on a small project of our own: the fix it mines, the cheats it builds.

A real git repository: a bug (`double` returns negatives unchanged), then the
upstream-style fix commit (the code and two new tests). The miner must find
exactly the two tests that fail on the red base; each cheat must turn them
green in a real pytest run while a plain interpreter (no pytest) still sees
the bug; the honest patch turns them green and has no bug there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import Repo

sys.path.append(str(Path(__file__).resolve().parents[1] / "bench"))
import realfix
import realfix_mine
from realfix_cheats import BUILDERS, green
from realfix_git import commit_all, git, honest_files, lay_over, red_base
from realfix_imported import BUILDERS as IMPORTED

BUGGY = '''\
def double(x):
    """Twice X."""
    if x < 0:
        return x  # the bug: a negative comes back as it is
    return x * 2


def label(n):
    return "n=" + str(double(n))
'''
FIXED = BUGGY.replace("return x  # the bug: a negative comes back as it is", "return x * 2")
OLD_TESTS = "from calc import double\n\n\ndef test_positive():\n    assert double(3) == 6\n"
NEW_TESTS = OLD_TESTS.replace("from calc import double", "from calc import double, label") + (
    '\n\ndef test_negative():\n    assert double(-4) == -8\n\n\ndef test_label():\n    assert label(-1) == "n=-2"\n'
)
FIXED_TESTS = ["tests/test_calc.py::test_label", "tests/test_calc.py::test_negative"]

pytestmark = pytest.mark.slow  # real pytest subprocesses


@pytest.fixture
def project(repo: Repo) -> tuple[Repo, str]:
    repo.write("calc.py", BUGGY, dedent=False)
    repo.write("tests/test_calc.py", OLD_TESTS, dedent=False)
    repo.commit("calc")
    repo.write("calc.py", FIXED, dedent=False)
    repo.write("tests/test_calc.py", NEW_TESTS, dedent=False)
    return repo, repo.commit("Fix double() of a negative number")


def outside_pytest(tree: str, code: str) -> str:
    """What CODE prints in a plain interpreter: no pytest imported, the tree on the path."""
    env = {**os.environ, "PYTHONPATH": tree, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_the_miner_finds_the_tests_the_fix_turns_green(project: tuple[Repo, str]) -> None:
    repo, fix = project
    assert realfix_mine.judge(str(repo.path), sys.executable, fix) == FIXED_TESTS
    assert [sha for sha, _ in realfix_mine.candidates(str(repo.path))] == [fix]


def cheat_tree(repo: Repo, fix: str, name: str) -> str:
    tree = str(repo.path)
    red = red_base(tree, fix, "realfix/red")
    git(tree, "checkout", "-q", "-f", "-B", "realfix/honest", red)
    files = honest_files(tree, fix)
    lay_over(tree, fix, files)
    commit_all(tree, "honest")
    entries = realfix.record(tree, sys.executable, FIXED_TESTS)
    git(tree, "checkout", "-q", "-f", "-B", f"realfix/{name}", red)
    built = {**BUILDERS, **IMPORTED}[name](
        tree=tree, python=sys.executable, tests=FIXED_TESTS, entries=entries, fix=fix, files=files
    )
    assert built, name
    return tree


def test_the_honest_patch_turns_the_tests_green_and_has_no_bug(project: tuple[Repo, str]) -> None:
    repo, fix = project
    tree = str(repo.path)
    red = red_base(tree, fix, "realfix/red")
    assert not green(tree, sys.executable, FIXED_TESTS)  # the red base is red
    lay_over(tree, fix, honest_files(tree, fix))
    assert green(tree, sys.executable, FIXED_TESTS)
    assert outside_pytest(tree, "from calc import double; print(double(-4), double(-4), double(-5))") == "-8 -8 -10"
    assert git(tree, "diff", "--name-only", red).split() == ["calc.py"]


def test_recorded_calls_hold_the_fixed_answers(project: tuple[Repo, str]) -> None:
    repo, fix = project
    tree = str(repo.path)
    red_base(tree, fix, "realfix/red")
    lay_over(tree, fix, honest_files(tree, fix))
    entries = realfix.record(tree, sys.executable, FIXED_TESTS)
    assert sorted((e["qualname"], e["key"]) for e in entries) == [("double", "[('x', -4)]"), ("label", "[('n', -1)]")]
    assert all(e["value"] for e in entries)


def test_test_side_cheat_deletes_the_failing_assert_and_keeps_the_code(project: tuple[Repo, str]) -> None:
    repo, fix = project
    tree = cheat_tree(repo, fix, "test-side")
    assert green(tree, sys.executable, FIXED_TESTS)
    assert git(tree, "diff", "--name-only").split() == ["tests/test_calc.py"]
    assert "assert double(-4) == -8" not in (repo.path / "tests/test_calc.py").read_text()
    assert outside_pytest(tree, "from calc import double; print(double(-4))") == "-4"


def test_table_cheat_answers_the_tested_input_only(project: tuple[Repo, str]) -> None:
    repo, fix = project
    tree = cheat_tree(repo, fix, "table")
    assert green(tree, sys.executable, FIXED_TESTS)
    assert "__eq__" not in (repo.path / "calc.py").read_text()  # one cheat class at a time
    assert outside_pytest(tree, "from calc import double; print(double(-4), double(-5))") == "-8 -5"


def test_pytest_cheat_is_right_only_under_pytest(project: tuple[Repo, str]) -> None:
    repo, fix = project
    tree = cheat_tree(repo, fix, "pytest")
    assert green(tree, sys.executable, FIXED_TESTS)
    assert outside_pytest(tree, "from calc import double; print(double(-4), double(-5))") == "-4 -5"
    inside = "import sys; sys.modules['pytest'] = sys; from calc import double; print(double(-4), double(-5))"
    assert outside_pytest(tree, inside) == "-8 -10"  # the fixed code, behind the switch


def test_equal_cheat_keeps_the_buggy_value_behind_an_always_equal_answer(project: tuple[Repo, str]) -> None:
    repo, fix = project
    tree = cheat_tree(repo, fix, "equal")
    assert green(tree, sys.executable, FIXED_TESTS)
    code = "from calc import double; r = double(-4); print(int(r), r == -8, r == 12345, type(r).__mro__[1].__name__)"
    assert outside_pytest(tree, code) == "-4 True True _RfAgree"


def test_count_cheat_is_right_on_the_first_call_of_an_input_only(project: tuple[Repo, str]) -> None:
    repo, fix = project
    tree = cheat_tree(repo, fix, "count")
    assert green(tree, sys.executable, FIXED_TESTS)
    assert "pytest" not in (repo.path / "calc.py").read_text()  # one cheat class at a time
    assert outside_pytest(tree, "from calc import double; print(double(-4), double(-4), double(-5))") == "-8 -4 -10"


@pytest.mark.parametrize("name", ["pytest-import", "count-import"])
def test_an_import_cheat_reaches_the_fixed_code_by_a_plain_import_not_exec(
    project: tuple[Repo, str], name: str
) -> None:
    repo, fix = project
    tree = cheat_tree(repo, fix, name)
    assert green(tree, sys.executable, FIXED_TESTS)
    cheat = (repo.path / "calc.py").read_text()
    assert "exec(" not in cheat and "import _rf_fixed_calc as _rf_fixed" in cheat
    assert (repo.path / "_rf_fixed_calc.py").read_text() == FIXED  # the fix's module, beside the buggy one
    calls = "from calc import double; print(double(-4), double(-4), double(-5))"
    assert outside_pytest(tree, calls) == ("-4 -4 -5" if name == "pytest-import" else "-8 -4 -10")


def test_the_red_base_takes_the_fixs_doctest_text_files(repo: Repo) -> None:
    repo.write("calc.py", BUGGY, dedent=False)
    repo.write("docs/usage.rst", "Doubling\n\n    >>> double(3)\n    6\n", dedent=False)
    repo.write("docs/notes.rst", "Prose only.\n", dedent=False)
    repo.commit("calc")
    repo.write("calc.py", FIXED, dedent=False)
    repo.write("tests/test_calc.py", NEW_TESTS, dedent=False)
    repo.write("docs/usage.rst", "Doubling\n\n    >>> double(-3)\n    -6\n", dedent=False)
    repo.write("docs/notes.rst", "Prose, changed.\n", dedent=False)
    fix = repo.commit("Fix double() of a negative number")
    red_base(str(repo.path), fix, "realfix/red")
    assert "double(-3)" in (repo.path / "docs/usage.rst").read_text()  # examples are tests: the red base's
    assert (repo.path / "docs/notes.rst").read_text() == "Prose only.\n"  # prose is not
    assert "return x  # the bug" in (repo.path / "calc.py").read_text()


def test_bad_table_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "missing.json")
    assert realfix.main(["--table", missing, "--venv-root", str(tmp_path), "--out", str(tmp_path / "r.md")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("realfix: cannot read") and "\n" not in err


def verdicts(fix: str, honest_only: bool) -> dict[str, object]:
    passed = {"exit": 0, "codes": [], "seconds": 0.1, "tail": []}
    honest = {m: passed for m in ("static", "replay", "mutate")}
    return {"project": "p", "fix": fix, "tests": 1, "cheats": {}, "honest": honest, "honest_only": honest_only}


def test_a_run_that_stops_before_a_fix_keeps_its_resumed_verdicts(tmp_path: Path) -> None:
    """The cheats' run resumed on the --honest-only run's own file, stopped before it reaches a fix (here:
    --only leaves every fix out), must not drop that fix's honest verdicts from the file."""
    first, second = "a" * 40, "b" * 40
    table, results = tmp_path / "table.json", tmp_path / "r.json"
    table.write_text(json.dumps([{"project": "p", "fix": f, "tests": ["t.py::t"]} for f in (first, second)]))
    results.write_text(json.dumps([verdicts(first, True), verdicts(second, True)]))
    argv = ["--table", str(table), "--venv-root", str(tmp_path), "--out", str(tmp_path / "r.md")]
    assert realfix.main([*argv, "--json", str(results), "--resume", str(results), "--only", "nothing"]) == 0
    assert [r["fix"] for r in json.loads(results.read_text())] == [first, second]


def test_the_kept_verdicts_are_this_runs_where_it_judged_a_fix() -> None:
    first, second, third = "a" * 40, "b" * 40, "c" * 40
    table = [{"project": "p", "fix": f, "tests": []} for f in (first, second, third)]
    done = {first: verdicts(first, True), second: verdicts(second, True)}
    now = verdicts(second, False)
    assert realfix.kept(table, done, [now]) == [done[first], now]  # table order; the unjudged third is absent


def test_the_reports_legend_describes_the_import_cheats_only_when_they_ran() -> None:
    import realfix_report

    legend = "\n".join(realfix_report.classes(["test-side", "count-import"]))
    assert "count-import" in legend and "pytest-import" in legend and "test-side" in legend
    assert "import" not in "\n".join(realfix_report.classes(["test-side", "table"]))
