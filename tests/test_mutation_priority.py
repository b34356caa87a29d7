"""check --mutate spends its budget on the most informative mutants first, and says what it left untried.

Unit tests of the order (probes/mutation/priority.py) and of the budget's notice (budget.py), then a real run
where a change touches configuration (so the whole suite runs at the base) and the budget holds three
mutants: the weakened test's mutants run first, so the weakening is refused; its honest twin passes.
"""

from __future__ import annotations

import argparse
import time

import pytest

from oracle_guard.commands import check
from oracle_guard.probes.mutation import budget, priority
from oracle_guard.probes.mutation.mutants import Mutant
from oracle_guard.probes.mutation.run import Cover, Verdict
from oracle_guard.probes.mutation.run import TestRun as Run
from tests.helpers import Repo
from tests.test_mutation import BASE, STATIC, T, module

# The real runs' interpreter is the one running these tests (it has pytest), never the first python on PATH.
pytestmark = pytest.mark.usefixtures("project_python")


def mutant(path: str, line: int, operator: str = "lt-le") -> Mutant:
    return Mutant(path, "f", 1, 0, 1, "x", line, 1, operator, "`<` -> `<=`", (line, line))


def run(node: str, lines: dict[str, set[int]], ok: bool = True) -> Run:
    return Run(node, ok, "", node.split("::")[0], 1, 0.01, {p: frozenset(v) for p, v in lines.items()})


COVER = Cover(
    [
        run("tests/test_a.py::test_touched", {"src/a.py": {10}}),
        run("tests/test_b.py::test_other", {"src/a.py": {20, 30}, "src/b.py": {5}}),
        run("tests/test_b.py::test_more", {"src/a.py": {30}, "src/b.py": {5}}),
        run("tests/test_b.py::test_red", {"src/a.py": {40}}, ok=False),
    ],
    {},
    0,
    "",
    ".",
)


def test_mutants_reached_by_a_touched_test_come_first() -> None:
    mutants = [mutant("src/a.py", 30), mutant("src/b.py", 5), mutant("src/a.py", 20), mutant("src/a.py", 10)]
    ordered = [(m.path, m.line) for m in priority.order(mutants, COVER, ["tests/test_a.py::test_touched"], [])]
    # The touched test's mutant, then the one a single untouched test reaches, then those two reach.
    assert ordered[:2] == [("src/a.py", 10), ("src/a.py", 20)]
    assert set(ordered[2:]) == {("src/a.py", 30), ("src/b.py", 5)}


def test_a_module_path_stands_for_its_tests_and_a_changed_file_comes_before_the_rest() -> None:
    mutants = [mutant("src/b.py", 5), mutant("src/a.py", 30), mutant("src/a.py", 10)]
    ordered = priority.order(mutants, COVER, ["tests/test_a.py"], ["src/b.py"])
    assert [(m.path, m.line) for m in ordered] == [("src/a.py", 10), ("src/b.py", 5), ("src/a.py", 30)]


def test_without_touched_tests_the_least_reached_come_first_and_the_order_is_stable() -> None:
    mutants = [mutant("src/a.py", 30), mutant("src/a.py", 10), mutant("src/a.py", 40), mutant("src/a.py", 20)]
    first = priority.order(mutants, COVER, [], [])
    assert first == priority.order(list(reversed(mutants)), COVER, [], [])
    reached = [len([t for t in COVER.tests if t.ok and m.line in t.lines.get(m.path, ())]) for m in first]
    assert reached == sorted(reached) and reached[-1] == 2  # line 30: two untouched tests, last
    assert not priority.touches("tests/test_a.py::test_touchedx", ["tests/test_a.py::test_touched"])
    assert priority.touches("tests/test_a.py::test_touched[1]", ["tests/test_a.py::test_touched"])


def test_what_the_budget_leaves_is_a_notice_never_a_pass(capsys: pytest.CaptureFixture[str]) -> None:
    pairs = [(m, m) for m in (mutant("src/a.py", 10), mutant("src/a.py", 20), mutant("src/b.py", 5))]
    verdicts = {
        pairs[0][0].key: Verdict("killed", "tests/test_a.py::test_touched", ""),
        pairs[1][0].key: Verdict("unrun", "", ""),
        pairs[2][0].key: Verdict("unrun", "", ""),
    }
    args = argparse.Namespace(mutate_timeout=60.0)
    budget.left(args, verdicts, pairs)
    said = capsys.readouterr().err
    assert "2 of 3 mutant(s) were not run within --mutate-timeout 60" in said, said
    assert "neither caught nor passed" in said and "src/a.py, src/b.py" in said
    budget.left(args, {k: Verdict("killed", "t", "") for k in verdicts}, pairs)
    assert capsys.readouterr().err == ""  # everything ran: nothing to say


def test_the_base_side_leaves_time_for_the_runs_after_it() -> None:
    now = time.monotonic()
    share = budget.share(now + 60, 5.0)
    assert now < share <= now + (60 - 3 * 5.0) * budget.BASE_SHARE + 1
    assert budget.share(now - 1, 5.0) <= time.monotonic()  # the budget is spent: no base mutant starts


SUITE = """\
def test_price():
    assert price(2, 1.5) == 3.0
    assert price(10, 1.0) == 9.0
    with pytest.raises(ValueError):
        price(-1, 1.0)


def test_slug():
    assert slug('Hello  World') == 'hello-world'


def test_clamp():
    assert clamp(-5, 0, 10) == 0
    assert clamp(15, 0, 10) == 10
    assert clamp(5, 0, 10) == 5


def test_parse_pairs():
    assert parse_pairs('a=1;b=2;') == {'a': 1, 'b': 2}


def test_code():
    assert is_valid_code('123456') and not is_valid_code('012345') and not is_valid_code('12345')


def test_squares():
    for n, square in enumerate(squares(5)):
        assert square == n * n


def test_ratio_and_mean():
    assert ratio(6, 3) == 2
    assert mean([1, 2, 3]) == 2
"""


@pytest.mark.slow
@pytest.mark.parametrize("weakened", [True, False], ids=["weakened", "honest"])
def test_a_configuration_change_spends_a_small_budget_on_the_touched_tests(repo: Repo, weakened: bool) -> None:
    # The configuration change makes the base run the whole suite; the budget holds 3 mutants of many.
    after = (
        SUITE.replace("enumerate(squares(5))", "enumerate(squares(5)[:1])")
        if weakened
        else SUITE.replace("    for n, square", "    # every square\n    for n, square")
    )
    repo.change(
        {**BASE, T: module(SUITE)}, {"pytest.ini": "[pytest]\npythonpath = src\naddopts = -ra\n", T: module(after)}
    )
    result = repo.hook(check.main, "--mutate", "--skip", STATIC, "--base", "HEAD", "--mutate-max", "3")
    assert "mutants were not run (--mutate-max 3): they are not judged" in result.err, result.said
    if weakened:
        assert result.code == 1 and set(result.codes) == {"OG910"}, result.said
        assert "test_squares caught" in result.out
    else:
        assert result.code == 0 and result.codes == [], result.said


def test_the_runs_after_the_base_trace_only_the_files_of_the_mutants_they_judge() -> None:
    # A mutant's tests are those that ran a line of its own file, so the other files need no tracer;
    # the new side traces the twins' files (a module the change renamed is traced under its new name).
    moved = mutant("src/a.py", 10)._replace(path="src/_a.py")
    pairs = [(mutant("src/a.py", 10), moved), (mutant("src/b.py", 5), mutant("src/b.py", 5))]
    assert budget.traced(pairs) == ["src/a.py", "src/b.py"]
    assert budget.traced(pairs, new=True) == ["src/_a.py", "src/b.py"]


# Many mutants that only a slow untouched test reaches: the seconds run out long before the 200 of --mutate-max.
HEAVY = "".join(f"\n\ndef weigh{i}(x):\n    return x * {i + 2} + {i + 3}\n" for i in range(40))
HEAVY_TESTS = "import time\n\nfrom shop import heavy\n\n\ndef test_weights():\n    time.sleep(0.3)\n" + "".join(
    f"    assert heavy.weigh{i}(2) == {2 * (i + 2) + i + 3}\n" for i in range(40)
)


@pytest.mark.slow
@pytest.mark.parametrize("weakened", [True, False], ids=["weakened", "honest"])
def test_a_time_budget_that_runs_out_leaves_a_notice_and_the_weakened_tests_mutants_run_first(
    repo: Repo, weakened: bool
) -> None:
    after = (
        SUITE.replace("enumerate(squares(5))", "enumerate(squares(5)[:1])")
        if weakened
        else SUITE.replace("    for n, square", "    # every square\n    for n, square")
    )
    base = {**BASE, "src/shop/heavy.py": HEAVY, "tests/test_heavy.py": HEAVY_TESTS, T: module(SUITE)}
    repo.change(base, {"pytest.ini": "[pytest]\npythonpath = src\naddopts = -ra\n", T: module(after)})
    started = time.monotonic()
    result = repo.hook(check.main, "--mutate", "--skip", STATIC, "--base", "HEAD", "--mutate-timeout", "30")
    assert "were not run within --mutate-timeout 30: they are not judged, neither caught nor passed" in result.err
    assert "src/shop/heavy.py" in result.err, result.said  # the least informative were left: the slow test's
    if weakened:
        assert result.code == 1 and set(result.codes) == {"OG910"}, result.said
        assert "test_squares caught" in result.out
    else:
        assert result.code == 0 and result.codes == [], result.said
    assert time.monotonic() - started < 30 + 10, result.said  # the budget, and the fixed part around it
