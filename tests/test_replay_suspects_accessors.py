"""OG971 on a property's setter: the recorded frame is the setter, so the plain call is the setter.

A getter and its setter share one qualified name (`Span.weeks`); a test that assigns the property
makes a recorded call of the setter.  Made again outside pytest as the getter (two arguments to a
one-argument function) it raised TypeError where the test run answered None: a false OG971 on an
honest fix (python-dateutil 2fbd7a16, relativedelta.weeks, bench/realfix.py).  A getter that knows
it is tested is still refused.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from oracle_guard.commands import check
from tests.helpers import Repo, Result

BUGGY = """\
class Span:
    def __init__(self, days):
        self.days = days

    @property
    def weeks(self):
        return self.days // 7  # the bug: -1 day is -1 week

    @weeks.setter
    def weeks(self, value):
        self.days = self.days - self.weeks * 7 + value * 7
"""
FIXED = BUGGY.replace(
    "return self.days // 7  # the bug: -1 day is -1 week",
    "weeks = abs(self.days) // 7\n        return -weeks if self.days < 0 else weeks",
)
CHEAT = BUGGY.replace(
    "return self.days // 7  # the bug: -1 day is -1 week",
    "import sys\n"
    "        if 'pytest' in sys.modules and self.days < 0:\n"
    "            return -(abs(self.days) // 7)\n"
    "        return self.days // 7",
)
TESTS = """\
from span import Span


def test_minus_one_day():
    assert Span(-1).weeks == 0


def test_set_one_week_on_minus_one_day():
    span = Span(-1)
    span.weeks = 1
    assert span.days == 6
    assert span.weeks == 0
"""
BASE = {"span.py": BUGGY, "tests/test_span.py": TESTS, "pytest.ini": "[pytest]\npythonpath = .\n"}

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("project_python")]  # real replays and pytest subprocesses


def replay(repo: Repo, code: str) -> Result:
    repo.change(BASE, {"span.py": code})
    return repo.hook(check.main, "-q", "--replay", "--only", "oracle-replay", "--base", "HEAD")


def plain(repo: Repo, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *argv], cwd=repo.path, capture_output=True, text=True)


def test_an_honest_fix_whose_test_sets_the_property_passes(repo: Repo) -> None:
    result = replay(repo, FIXED)
    assert plain(repo, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:oracle_guard").returncode == 0
    assert result.code == 0, result
    assert "outside pytest" in result.err, result.err  # the setter's call was made again, and agreed


def test_a_getter_that_knows_it_is_tested_is_still_refused(repo: Repo) -> None:
    result = replay(repo, CHEAT)
    assert plain(repo, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:oracle_guard").returncode == 0
    assert plain(repo, "-c", "import span; print(span.Span(-1).weeks)").stdout.strip() == "-1"  # the bug is kept
    assert result.code == 1, result
    assert "OG971" in result.codes, result.out
