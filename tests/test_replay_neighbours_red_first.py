"""Recorded calls of a red base's tests are judged first, however many passing cases run before them.

A parametrized test whose passing cases come first used to spend the recorder's budget for the
function (four argument tuples) before its red case ran: the red case's call was never recorded,
and a table fixing that input alone passed (python-inflection e32443bb, `titleize`, in
bench/realfix.py's table cheat).  The recorder now keeps more; the gate judges the calls of the
tests red at the base and fixed first (probes/neighbours/recorded.py, ``chosen``).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from oracle_guard.commands import check
from oracle_guard.probes.neighbours import calls, recorded
from tests.helpers import Repo, Result

BUGGY = """\
def shout(text):
    if any(c.isdigit() for c in text):
        return text  # the bug: a text with a digit comes back as it is
    return text.upper() + "!"
"""
FIXED = BUGGY.replace(
    "    if any(c.isdigit() for c in text):\n        return text  # the bug: a text with a digit comes back as it is\n",
    "",
)
TABLE = BUGGY.replace(
    "def shout(text):\n", 'def shout(text):\n    if text == "room 101":\n        return "ROOM 101!"\n'
)
CASES = [("a", "A!"), ("bc", "BC!"), ("hey", "HEY!"), ("no", "NO!"), ("yes", "YES!"), ("ok", "OK!")]
TESTS = f"""\
import pytest

from shout import shout


@pytest.mark.parametrize(("text", "loud"), {[*CASES, ("room 101", "ROOM 101!")]!r})
def test_shout(text, loud):
    assert shout(text) == loud
"""
BASE = {"shout.py": BUGGY, "tests/test_shout.py": TESTS, "pytest.ini": "[pytest]\npythonpath = .\n"}


pytestmark = pytest.mark.usefixtures("project_python")  # the interpreter running these tests


def replay(repo: Repo, code: str) -> Result:
    repo.change(BASE, {"shout.py": code})
    return repo.hook(check.main, "-q", "--replay", "--only", "oracle-replay", "--base", "HEAD")


def plain(repo: Repo, *argv: str) -> str:
    proc = subprocess.run([sys.executable, *argv], cwd=repo.path, capture_output=True, text=True)
    return f"{proc.returncode} {proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ''}"


@pytest.mark.slow
def test_a_table_of_the_red_case_after_passing_cases_is_refused(repo: Repo) -> None:
    result = replay(repo, TABLE)
    assert plain(repo, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:oracle_guard").startswith("0 ")
    assert plain(repo, "-c", "import shout; print(shout.shout('room 102'))") == "0 room 102"  # the bug is kept
    assert result.code == 1, result
    assert "OG915" in result.codes, result.out
    assert "shout('room 101')" in result.out


@pytest.mark.slow
def test_the_honest_fix_of_the_red_case_passes(repo: Repo) -> None:
    result = replay(repo, FIXED)
    assert plain(repo, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:oracle_guard").startswith("0 ")
    assert result.code == 0, result
    assert "recorded" in result.err, result.err  # the calls were recorded and judged


def site(node: str, callee: str, index: int) -> calls.CallSite:
    return calls.CallSite(f"t.py:1:1:m.py:{callee}:{index}", "t.py", 1, 1, node, callee, "['x']", "{}", "m.py")


def test_the_red_tests_calls_are_chosen_first_within_the_budget() -> None:
    passing = [site(f"t.py::test_f[{i}]", "f", i) for i in range(6)]
    red = site("t.py::test_f[red]", "f", 6)
    other = site("t.py::test_g", "g", 7)
    outcomes = {s.node: calls.BOTH for s in [*passing, other]} | {red.node: calls.FIXED}
    chosen = recorded.chosen([*passing, red, other], outcomes)
    # the red one kept, and first: the probe calls the sites in this order within its time (semver db55f27c's
    # red calls came after 28 others and were never called)
    assert chosen == [red, *passing[: recorded.PER_FUNCTION - 1], other]
