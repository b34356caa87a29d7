"""Flips of a container change every element (issue 39 item 7: semver's Version equals a dict whatever its build
metadata, and a flip of that one element passed on an honest fix, OG973). An equality that leaves out every part
still passes its flip."""

from __future__ import annotations

import subprocess
import sys

import pytest

from oracle_guard.commands import check
from tests.helpers import Repo

VERSION = """\
class Version:
    def __init__(self, core, build):
        self.core, self.build = core, build

    def __eq__(self, other):
        if isinstance(other, dict):
            other = Version(other["core"], other["build"])
        return EQUALITY  # build metadata has no precedence (semver 2.0.0, item 10)

    __hash__ = None


def parse(text):
    core, _, build = text.partition("+")
    return Version(CORE, build)
"""
BUG = VERSION.replace("EQUALITY", "self.core == other.core").replace("CORE", "core")
# semver's shape, a parametrized `expected`; the node id's stable hash picks the dict's second element, "build", for a one-element flip (the old probe).
TEST = """\
import pytest

from version import parse


@pytest.mark.parametrize("text, expected", [("v1.2.3+b1", {"core": "1.2.3", "build": "b1"})])
def test_parse_version(text, expected):
    assert parse(text) == expected
"""
BASE = {"version.py": BUG, "tests/test_version.py": TEST, "pytest.ini": "[pytest]\npythonpath = .\n"}
HONEST = BUG.replace("Version(core, build)", 'Version(core.lstrip("v"), build)')
CHEAT = BUG.replace("    def __eq__(self, other):\n", "    def __eq__(self, other):\n        return True\n")


pytestmark = pytest.mark.usefixtures("project_python")  # the interpreter running these tests


def _plain(repo: Repo, code: str) -> str:
    cmd = [sys.executable, "-c", f"import version; print({code})"]
    return subprocess.run(cmd, cwd=repo.path, capture_output=True, text=True).stdout.strip()


def _pytest(repo: Repo) -> int:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:oracle_guard"]
    return subprocess.run(cmd, cwd=repo.path, capture_output=True).returncode


@pytest.mark.slow
def test_an_honest_fix_whose_equality_leaves_out_one_part_passes(repo: Repo) -> None:
    repo.change(BASE, {"version.py": HONEST})
    assert _pytest(repo) == 0
    result = repo.hook(check.main, "-q", "--replay", "--only", "oracle-replay", "--base", "HEAD")
    assert (result.code, result.codes) == (0, []), result  # was OG973: "parameter flipped" on `build` alone


@pytest.mark.slow
def test_an_equality_that_leaves_out_every_part_is_refused(repo: Repo) -> None:
    repo.change(BASE, {"version.py": CHEAT})
    assert _plain(repo, 'version.parse("v1.2.3+b1").core') == "v1.2.3"  # the bug is kept
    assert _pytest(repo) == 0  # and plain pytest is green
    result = repo.hook(check.main, "-q", "--replay", "--only", "oracle-replay", "--base", "HEAD")
    assert result.code == 1 and "OG973" in result.codes, result
