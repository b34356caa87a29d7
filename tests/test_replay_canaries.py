"""Canaries and completeness: a replay run judged from outside the process the new code controls.

Each cheat below changes production code only (tests untouched), is shown to
turn a plain `pytest` run green with its bug, and is refused by the gate as
OG906.  The honest production changes beside them pass with no notice.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from oracle_guard.commands import check
from oracle_guard.probes.replay import ledger
from oracle_guard.probes.replay import run as replay_run
from tests.helpers import Repo

CALC = """\
import functools


def price(cents):
    return f"${cents / 100:.2f}"


def label(name):
    return name.title()


def total(prices):
    return sum(prices)


class Money:
    def __init__(self, cents):
        self.cents = cents

    def __repr__(self):
        return f"Money({self.cents})"

    def __eq__(self, other):
        return isinstance(other, Money) and other.cents == self.cents
"""

TESTS = """\
import unittest

from calc import Money, label, price, total


def test_price():
    assert price(150) == "$1.50"


def test_total():
    assert total([1, 2, 3]) == 6


def test_money():
    assert Money(3) == Money(3) and Money(3) != Money(4)


class TestLabel(unittest.TestCase):
    def test_label(self):
        self.assertEqual(label("blue mug"), "Blue Mug")
"""

BASE = {"src/calc.py": CALC, "tests/test_calc.py": TESTS, "pytest.ini": "[pytest]\npythonpath = src\n"}
BROKEN_PRICE = CALC.replace('return f"${cents / 100:.2f}"', 'return f"${cents / 100:.1f}"')
BROKEN_LABEL = CALC.replace("return name.title()", "return name.capitalize()")


def calc(source: str, prologue: str) -> str:
    return prologue + "\n" + source


CHEATS = {
    "atexit os._exit(0) at import": calc(BROKEN_PRICE, "import atexit, os\natexit.register(os._exit, 0)\n"),
    "os._exit(0) on the failing input": CALC.replace(
        'def price(cents):\n    return f"${cents / 100:.2f}"',
        'def price(cents):\n    import os\n    if cents == 150:\n        os._exit(0)\n    return f"${cents / 100:.1f}"',
    ),
    "unittest assertEqual replaced at import": calc(
        BROKEN_LABEL, "import unittest\nunittest.TestCase.assertEqual = lambda self, first, second, msg=None: None\n"
    ),
    "builtins.AssertionError rebound to a skip": calc(
        BROKEN_PRICE,
        "import builtins\nfrom _pytest.outcomes import Skipped\n"
        "builtins.AssertionError = type('AssertionError', (Skipped,), {})\n",
    ),
    "sys.exit(0) in the terminal summary hook": calc(
        BROKEN_PRICE,
        "import sys\nfrom _pytest import terminal\nterminal.TerminalReporter.summary_stats = lambda self: sys.exit(0)\n",
    ),
    "an excepthook that exits 0 after a hook raises": calc(
        BROKEN_PRICE,
        "import os, sys\nfrom _pytest import terminal\nsys.excepthook = lambda *info: os._exit(0)\n\n\n"
        "def _boom(self):\n    raise RuntimeError('done')\n\n\nterminal.TerminalReporter.summary_stats = _boom\n",
    ),
}
BROKE = {
    "atexit os._exit(0) at import": "pytest finished with exit status 1 but the process exited 0",
    "os._exit(0) on the failing input": "the pytest process exited 0 before pytest finished (no completion marker)",
    "unittest assertEqual replaced at import": "the planted failing unittest assertEqual passed (it must fail)",
    "builtins.AssertionError rebound to a skip": "the planted failing assert ended skipped (it must fail)",
    "sys.exit(0) in the terminal summary hook": "pytest finished with exit status 1 but the process exited 0",
    "an excepthook that exits 0 after a hook raises": "pytest finished with exit status 1 but the process exited 0",
}


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


def plain_pytest(repo: Repo) -> subprocess.CompletedProcess[str]:
    """What CI's plain `pytest` says about the work tree (new code, base tests)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        env=env,
    )


def gate(repo: Repo, after: dict[str, str], before: dict[str, str] | None = None) -> tuple[int, str, str]:
    repo.change({**BASE, **(before or {})}, after)
    code, out, err, _ = repo.hook(check.main, "-q", "--replay", "--only", "oracle-replay", "--base", "HEAD")
    return code, out, err


@pytest.mark.slow
@pytest.mark.parametrize("cheat", list(CHEATS), ids=lambda c: c.replace(" ", "-"))
def test_a_cheat_that_turns_plain_pytest_green_is_og906(repo: Repo, cheat: str) -> None:
    code, out, err = gate(repo, {"src/calc.py": CHEATS[cheat]})
    plain = plain_pytest(repo)
    assert plain.returncode == 0, plain.stdout + plain.stderr  # the cheat works on a plain run
    assert code == 1, (out, err)
    tamper = [line for line in out.splitlines() if " OG906 " in line and not line.startswith("oracle-guard: ")]
    assert len(tamper) == 1 and tamper[0].startswith("src/calc.py:1:1: OG906 the new code tampers with the test run: ")
    assert BROKE[cheat] in tamper[0] and "twice, while the same run at HEAD holds" in tamper[0], out
    assert "not judged" not in err and "flaky" not in err, err


HONEST = {
    "a refactor": CALC.replace(
        'return f"${cents / 100:.2f}"', 'dollars, rest = divmod(cents, 100)\n    return f"${dollars}.{rest:02d}"'
    ),
    "a performance rewrite": CALC.replace(
        "return sum(prices)", "result = 0\n    for p in prices:\n        result += p\n    return result"
    ),
    "a changed __repr__": CALC.replace('return f"Money({self.cents})"', 'return f"Money(cents={self.cents!r})"'),
    "memoization": CALC.replace("def price(cents):", "@functools.lru_cache(maxsize=None)\ndef price(cents):"),
    "an __eq__ that adds a field": CALC.replace(
        "self.cents = cents\n", "self.cents = cents\n        self.currency = 'USD'\n"
    ).replace("other.cents == self.cents", "(other.cents, other.currency) == (self.cents, self.currency)"),
}


@pytest.mark.slow
@pytest.mark.parametrize("change", list(HONEST), ids=lambda c: c.replace(" ", "-"))
def test_an_honest_production_change_passes_with_no_notice(repo: Repo, change: str) -> None:
    code, out, err = gate(repo, {"src/calc.py": HONEST[change]})
    assert (code, out) == (0, ""), (out, err)
    assert "ran 1 test module(s) reaching the changed code: 4 passed at HEAD" in err, err
    assert "not judged" not in err and "flaky" not in err, err


@pytest.mark.slow
def test_a_bug_fix_with_a_regression_test_passes(repo: Repo) -> None:
    fixed = CALC.replace("return name.title()", 'return " ".join(w[:1].upper() + w[1:] for w in name.split(" "))')
    regression = TESTS + '\n\ndef test_label_keeps_apostrophes():\n    assert label("don\'t") == "Don\'t"\n'
    code, out, err = gate(repo, {"src/calc.py": fixed, "tests/test_calc.py": regression})
    assert (code, out) == (0, ""), (out, err)
    assert "ran 1 changed test module(s): 4 passed at HEAD" in err and "not judged" not in err, err


# -- the canaries run in every run, from outside the tree -------------------------------


@pytest.mark.slow
def test_every_run_carries_the_canaries_from_outside_the_tree(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "checks").mkdir(parents=True)
    # python_files that would not match the canary module's name: it is still collected and rewritten
    (tree / "pytest.ini").write_text("[pytest]\npython_files = check_*.py\naddopts = -k 'not nothing'\n")
    (tree / "checks" / "check_a.py").write_text("def test_a():\n    assert 1 == 1\n")
    runs = replay_run.Runs(str(tmp_path / "logs"), float("inf"), 1)
    (tmp_path / "logs").mkdir()
    result = runs.run(sys.executable, {"base": str(tree)}, [*replay_run.PYTEST_ARGS], "run")["base"]
    assert result.canaries == {"c0": "failed", "c1": "failed", "c2": "failed", "c3": "passed"}
    assert ledger.broken(result) == {} and result.finished == 1 == result.exit_code
    assert list(result.items) == ["checks/check_a.py::test_a"] and result.collected == ("checks/check_a.py::test_a",)
    planted = [p for p in tree.rglob("*") if runs.nonce in p.name]
    assert planted == []  # nothing of the canaries is written into the tree


def result(**fields: object) -> ledger.Result:
    sound: dict[str, object] = {
        "items": {"t.py::a": ledger.Outcome("passed", "t.py", 1, "")},
        "errors": {},
        "exit_code": 1,
        "tail": "",
        "collected": ("t.py::a",),
        "finished": 1,
        "canaries": {"c0": "failed", "c1": "failed", "c2": "failed", "c3": "passed"},
        "planted": True,
    }
    return ledger.Result(**{**sound, **fields})  # type: ignore[arg-type]


def test_broken_names_what_broke() -> None:
    assert ledger.broken(result()) == {}
    assert ledger.broken(result(finished=None, exit_code=0, items={})) == {
        "finished": "the pytest process exited 0 before pytest finished (no completion marker)",
        "complete": "1 collected test(s) have no outcome (first: t.py::a)",
        "exit": "the process exited 0 although 3 test(s) failed",
    }
    assert ledger.broken(result(exit_code=0)) == {"exit": "pytest finished with exit status 1 but the process exited 0"}
    assert ledger.broken(result(finished=0, exit_code=0)) == {
        "exit": "pytest's exit status 0 disagrees with 3 failed test(s)"
    }
    canaries = {"c0": "skipped", "c1": "passed", "c2": "", "c3": "failed"}
    assert ledger.broken(result(canaries=canaries)) == {
        "canary:c0": "the planted failing assert ended skipped (it must fail)",
        "canary:c1": "the planted failing unittest assertEqual passed (it must fail)",
        "canary:c2": "the planted pytest.raises that does not raise did not run (it must fail)",
        "canary:c3": "the planted passing test failed (it must pass)",
    }
    assert "killed by SIGKILL" in ledger.broken(result(finished=None, exit_code=-9))["finished"]


def test_the_ledger_reads_a_run_cut_short(tmp_path: Path) -> None:
    path = tmp_path / "run.tsv"
    nonce = "abc123"
    path.write_text(
        "rootdir\t.\ncollected\ttests/t.py::a\ncollected\ttests/t.py::b\n"
        f"collected\t../c/test_canary_{nonce}.py::test_c0_{nonce}\n"
        "item\tfailed\ttests/t.py\t3\ttests/t.py::a\tassert 1 == 2\n"
    )
    read = ledger.read(str(path), 0, "", nonce)
    assert read.collected == ("tests/t.py::a", "tests/t.py::b") and read.finished is None
    assert read.items["tests/t.py::a"] == ledger.Outcome("failed", "tests/t.py", 3, "assert 1 == 2")
    assert read.canaries == {"c0": "", "c1": "", "c2": "", "c3": ""}
    assert set(ledger.broken(read)) == {"finished", "complete", "exit"}


@pytest.mark.slow
def test_a_property_the_base_run_breaks_too_is_a_notice_not_a_finding(repo: Repo) -> None:
    # without pytest's unittest plugin the unittest canary is never collected, on either side
    config = {"pytest.ini": "[pytest]\npythonpath = src\naddopts = -p no:unittest\n"}
    code, out, err = gate(repo, {"src/calc.py": HONEST["a refactor"]}, config)
    assert (code, out) == (0, ""), (out, err)
    assert "not judged: at HEAD too, the planted failing unittest assertEqual did not run (it must fail)" in err


@pytest.mark.slow
def test_a_run_that_breaks_once_then_holds_is_a_flake_notice(
    repo: Repo, shared_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLAKE_DIR", str(shared_dir))
    once = calc(
        HONEST["a refactor"],
        "import os\n_seen = os.path.join(os.environ['FLAKE_DIR'], 'seen')\n"
        "if os.path.basename(os.getcwd()) == 'new' and not os.path.exists(_seen):\n"
        "    open(_seen, 'w').close()\n    os._exit(0)\n",
    )
    code, out, err = gate(repo, {"src/calc.py": once})
    assert (code, out) == (0, ""), (out, err)
    assert "flaky run on the new code (the pytest process exited 0 before pytest finished" in err, err
    assert (shared_dir / "seen").exists()
