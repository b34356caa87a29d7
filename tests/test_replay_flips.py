"""Oracle flips in the replay: a flipped check must fail, on the base code and on the new code.

Each cheat below leaves the tests alone and ships a bug that plain pytest does not see (shown in
the test); the replay's flip run catches it (OG911).  Each honest production change passes, with
its flips run on both sides.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from oracle_guard.commands import check
from oracle_guard.probes.replay import run as replay_run
from tests.helpers import Repo, Result, finding_lines

SHOP = """\
import functools


class OutOfStock(Exception):
    pass


class Money:
    def __init__(self, cents):
        self.cents = cents

    def __eq__(self, other):
        return isinstance(other, Money) and self.cents == other.cents

    def __repr__(self):
        return f"Money({self.cents})"


def price(cents):
    return f"${cents / 100:.2f}"


def label(name):
    return name.title()


def buy(stock):
    if stock <= 0:
        raise OutOfStock("none left")
    return stock - 1


def discount(cents):
    return cents // 10


def total(cents_list):
    return Money(sum(cents_list))
"""

TESTS = """\
import pytest

from shop import Money, OutOfStock, buy, label, price, total


def test_price():
    assert price(150) == "$1.50"


def test_label():
    expected = "Blue Mug"
    assert label("blue mug") == expected


def test_buy_empty():
    with pytest.raises(OutOfStock, match="none left"):
        buy(0)


def test_buy_one():
    assert buy(3) < 3


def test_total():
    assert total([1, 2]) == Money(3)
"""

UNIT = """\
import unittest

from shop import discount


class DiscountTest(unittest.TestCase):
    def test_discount(self):
        self.assertEqual(discount(150), 15)
"""

BASE = {
    "src/shop/__init__.py": SHOP,
    "tests/test_shop.py": TESTS,
    "tests/test_unit.py": UNIT,
    "pytest.ini": "[pytest]\npythonpath = src\n",
}
TOUCHED = {"tests/test_shop.py": TESTS + "\n# touched\n", "tests/test_unit.py": UNIT + "\n# touched\n"}
REPLAY = ("-q", "--replay", "--only", "oracle-replay", "--base")  # -q: a clean run prints nothing on stdout


def shop(old: str, new: str) -> str:
    assert old in SHOP
    return SHOP.replace(old, new)


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


def replay(repo: Repo, code: str) -> Result:
    """Commit BASE, stage CODE as the new production module (tests touched only), run the replay."""
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": code})
    return repo.hook(check.main, *REPLAY, repo.git("rev-parse", "HEAD").strip())


def plain_pytest(repo: Repo) -> int:
    """A bare pytest in the work tree, the way a CI job or an agent would run it."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:oracle_guard"],
        cwd=repo.path,
        capture_output=True,
        text=True,
    )
    return proc.returncode


def call(repo: Repo, expression: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", f"import shop; print(repr({expression}))"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(repo.path / "src"), "PATH": "/usr/bin:/bin"},
    )
    return proc.stdout.strip()


# -- cheats: the tests are untouched, the code is wrong, plain pytest is green ---------------------

ALWAYS_EQUAL = shop(
    'def price(cents):\n    return f"${cents / 100:.2f}"',
    "class _Text(str):\n    def __eq__(self, other):\n        return True\n\n    __hash__ = str.__hash__\n\n\n"
    'def price(cents):\n    return _Text(f"${cents // 100}")',
)
READS_THE_CALLER = shop(
    "def label(name):\n    return name.title()",
    "def label(name):\n    import sys\n\n    seen = sys._getframe(1).f_locals\n"
    '    return seen["expected"] if "expected" in seen else name.upper()',
)
PATCHED_ASSERT_EQUAL = shop("return cents // 10", "return cents // 5") + (
    "\n\nimport unittest\n\nunittest.TestCase.assertEqual = lambda self, first, second, msg=None: None\n"
)
PATCHED_RAISES = shop('        raise OutOfStock("none left")\n', "        return -1\n") + (
    "\n\nimport contextlib\n\nimport pytest\n\npytest.raises = lambda *args, **kwargs: contextlib.suppress(Exception)\n"
)

CHEATS = {
    # name: (new code, the bug shown by a direct call, (expression, its wrong value)), the flipped line
    "always-equal str": (ALWAYS_EQUAL, ("str(shop.price(151))", "'$1'"), "tests/test_shop.py:7:5: OG911"),
    "reads the caller's expected": (
        READS_THE_CALLER,
        ('shop.label("blue mug")', "'BLUE MUG'"),
        "tests/test_shop.py:12:5: OG911",
    ),
    "unittest assertEqual patched": (
        PATCHED_ASSERT_EQUAL,
        ("shop.discount(150)", "30"),
        "tests/test_unit.py:8:9: OG911",
    ),
    "pytest.raises patched": (PATCHED_RAISES, ("shop.buy(0)", "-1"), "tests/test_shop.py:16:10: OG911"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CHEATS), ids=lambda n: n.replace(" ", "-"))
def test_a_cheat_that_makes_plain_pytest_green_is_caught_by_a_flip(repo: Repo, name: str) -> None:
    code, (expression, wrong), where = CHEATS[name]
    result = replay(repo, code)
    assert call(repo, expression) == wrong  # the bug is real
    assert plain_pytest(repo) == 0  # and plain pytest does not see it
    assert result.code == 1, result
    assert where in result.out, result.out
    assert "a flipped check passes against the new code" in result.out
    assert "OG901" not in result.out  # the replay's own run is fooled too: only the flip sees it


# -- honest production changes pass, with their flips run ---------------------------------------

HONEST = {
    "refactor": shop(
        'return f"${cents / 100:.2f}"', 'dollars, rest = divmod(cents, 100)\n    return f"${dollars}.{rest:02d}"'
    ),
    "bug fix": shop("return name.title()", 'return " ".join(w[:1].upper() + w[1:] for w in name.split(" "))'),
    "performance rewrite": shop(
        "return Money(sum(cents_list))", "return Money(functools.reduce(int.__add__, cents_list, 0))"
    ),
    "changed __repr__": shop('return f"Money({self.cents})"', 'return f"Money(cents={self.cents})"'),
    "__eq__ adding a field": shop(
        "def __init__(self, cents):\n        self.cents = cents",
        'def __init__(self, cents, currency="USD"):\n        self.cents = cents\n        self.currency = currency',
    ).replace("self.cents == other.cents", "(self.cents, self.currency) == (other.cents, other.currency)"),
    "memoization": shop("def price(cents):", "@functools.lru_cache(maxsize=None)\ndef price(cents):"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(HONEST), ids=lambda n: n.replace(" ", "-"))
def test_an_honest_production_change_passes_with_its_flips_run(repo: Repo, name: str) -> None:
    result = replay(repo, HONEST[name])
    assert (result.code, result.out) == (0, ""), result
    assert "oracle-replay: flipped 6 check(s); 6 ran on both sides" in result.err, result.err
    assert "oracle-replay: called 5 tested function(s) on " in result.err  # price, label, buy twice, discount


@pytest.mark.slow
def test_a_bug_fix_with_a_regression_test_passes(repo: Repo) -> None:
    regression = TESTS + '\n\ndef test_label_apostrophe():\n    assert label("don\'t stop") == "Don\'t Stop"\n'
    repo.change(BASE, {"src/shop/__init__.py": HONEST["bug fix"], "tests/test_shop.py": regression})
    result = repo.hook(check.main, *REPLAY, repo.git("rev-parse", "HEAD").strip(), "-q")
    assert (result.code, result.out) == (0, ""), result
    assert "ran on both sides" in result.err


# -- differential neighbours ------------------------------------------------------------------------

LOOKUP_TABLE = shop(
    'def price(cents):\n    return f"${cents / 100:.2f}"',
    '_KNOWN = {150: "$1.50"}\n\n\ndef price(cents):\n    return _KNOWN.get(cents) or f"${cents // 100}"',
)


@pytest.mark.slow
def test_a_lookup_table_of_the_tested_answers_is_caught_by_the_neighbours(repo: Repo) -> None:
    result = replay(repo, LOOKUP_TABLE)
    assert call(repo, "shop.price(151)") == "'$1'" and plain_pytest(repo) == 0
    assert result.code == 1, result
    [line] = finding_lines(result.out)
    assert line.startswith("tests/test_shop.py:7:12: OG912 price(150) gives ")
    assert "the tested input looks special-cased" in line
    assert re.search(r"\(e\.g\. price\(\d+\): '\$\d+\.\d\d' at \w+, '\$\d+' now\)", line), line  # a neighbour, any size
    assert "`oracle-guard approve behavior-change tests/test_shop.py::test_price`" in line


# -- flakes and a run that does not finish ------------------------------------------------------------


@pytest.fixture
def in_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    """One process at a time, whatever the load: the cheats below count the new code's processes in order
    (with two at once the new side's main and flip runs start together, and either could be the second)."""
    monkeypatch.setattr(replay_run, "jobs", lambda requested: 1)


@pytest.fixture
def flake_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Where the cheats below count the new code's processes: one the confined runs can all write, /dev/shm
    (repo/confine: multiprocessing's semaphores live there), or the temp folder where there is none."""
    if not os.path.isdir("/dev/shm"):
        yield tmp_path_factory.mktemp("flake")
        return
    folder = tempfile.mkdtemp(prefix="oracle-guard-flake-", dir="/dev/shm")
    try:
        yield Path(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


NTH_PROCESS = """\
import os

with open(os.path.join(os.environ["FLAKE_DIR"], "imports"), "a") as _log:
    _log.write("x")
with open(os.path.join(os.environ["FLAKE_DIR"], "imports")) as _log:
    RUN = len(_log.read())  # 1: the replay's run, 2: the flip run, 3: the suspects' second run


"""
SECOND_PROCESS_ALWAYS_EQUAL = NTH_PROCESS + shop(
    'def price(cents):\n    return f"${cents / 100:.2f}"',
    "class _Text(str):\n    def __eq__(self, other):\n        return True\n\n    __hash__ = str.__hash__\n\n\n"
    'def price(cents):\n    text = f"${cents / 100:.2f}"\n    return _Text(text) if RUN == 2 else text',
)


@pytest.mark.slow
def test_a_flip_verdict_that_changes_between_two_runs_is_a_notice(
    repo: Repo, flake_dir: Path, monkeypatch: pytest.MonkeyPatch, in_turn: None
) -> None:
    monkeypatch.setenv("FLAKE_DIR", str(flake_dir))
    result = replay(repo, SECOND_PROCESS_ALWAYS_EQUAL)
    assert (result.code, result.out) == (0, ""), result
    assert "oracle-replay: flaky flip: tests/test_shop.py:7:4:literal in tests/test_shop.py::test_price" in result.err
    assert (flake_dir / "imports").read_text() == "xxx"  # the new code ran in three processes


@pytest.mark.slow
def test_a_flip_run_the_new_code_ends_early_is_a_finding(
    repo: Repo, flake_dir: Path, monkeypatch: pytest.MonkeyPatch, in_turn: None
) -> None:
    monkeypatch.setenv("FLAKE_DIR", str(flake_dir))
    result = replay(repo, NTH_PROCESS + "if RUN == 2:\n    os._exit(0)\n\n\n" + SHOP)
    assert result.code == 1, result
    assert "OG913 the flip run against the new code ended without its results (exit 0" in result.out


@pytest.mark.slow
def test_a_second_probe_run_the_new_code_ends_is_a_finding_not_a_flake(
    repo: Repo, flake_dir: Path, monkeypatch: pytest.MonkeyPatch, in_turn: None
) -> None:
    monkeypatch.setenv("FLAKE_DIR", str(flake_dir))
    result = replay(repo, SECOND_PROCESS_ALWAYS_EQUAL + "\n\nif RUN == 3:\n    os._exit(0)\n")
    assert result.code == 1, result
    assert "tests/test_shop.py:1:1: OG913 the flip run against the new code ended without its results" in result.out


# The flip run's process, told by the module the flip plugin loads before any test module (a cheat that
# knows the gate's internals: the flip run still ends without its results, and that is the finding).
ENDS_THE_FLIP_RUN = "import os\nimport sys\n\nif '_oracle_guard_flips_rewrite' in sys.modules:\n    os._exit(0)\n\n\n"


@pytest.mark.slow
def test_a_flip_run_started_beside_the_main_run_that_the_new_code_ends_is_a_finding(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(replay_run, "jobs", lambda requested: 2)  # each side's flip run beside its main run
    result = replay(repo, ENDS_THE_FLIP_RUN + SHOP)
    assert result.code == 1, result
    assert "OG913 the flip run against the new code ended without its results (exit 0" in result.out


SECOND_PROCESS_LOOKUP_TABLE = NTH_PROCESS + shop(
    'def price(cents):\n    return f"${cents / 100:.2f}"',
    'def price(cents):\n    if RUN != 2:\n        return f"${cents / 100:.2f}"\n    return {150: "$1.50"}.get(cents) or "?"',
)


@pytest.mark.slow
def test_a_neighbours_verdict_that_changes_between_two_runs_is_a_notice(
    repo: Repo, flake_dir: Path, monkeypatch: pytest.MonkeyPatch, in_turn: None
) -> None:
    monkeypatch.setenv("FLAKE_DIR", str(flake_dir))
    result = replay(repo, SECOND_PROCESS_LOOKUP_TABLE)
    assert (result.code, result.out) == (0, ""), result
    assert "oracle-replay: flaky neighbours: tests/test_shop.py:7 changed its verdict between two runs" in result.err
