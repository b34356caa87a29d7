"""The probes' runs of the change's code never end in exit 2 (docs/ground.md, "What ends in exit 2").

Each cheat here hangs or kills only where a probe runs the change's code: after a warm main run whose base
side only collected (the base's examples against the new code), outside pytest (the suspects' plain
interpreter), or in the mutation server.  Each ended in exit 2 ("nothing was judged") or a notice before,
and is a finding now; the honest twin beside it passes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oracle_guard.commands import check
from oracle_guard.hook_ids import replay as replay_hook
from oracle_guard.probes.suspects import plain
from oracle_guard.pytest_side import barrier
from tests.helpers import Repo, finding_codes, project_python
from tests.test_replay_cache import WARM
from tests.test_replay_suspects import BASE as SUSPECTS_BASE
from tests.test_replay_suspects import TOUCHED as SUSPECTS_TOUCHED


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    project_python(monkeypatch, tmp_path / "xdg")


def _plain_pytest(repo: Repo, *tests: str) -> int:
    """A bare pytest in the work tree, the way a CI job or an agent would run it."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:oracle_guard", *tests]
    return subprocess.run(cmd, cwd=repo.path, capture_output=True, text=True).returncode


# -- the base's examples after a warm main run ------------------------------------------------------------------
# The base documents double(2); the change documents double(3) and hangs on 2 only, which no test of the
# change calls: plain pytest and the main run are green, the base's examples against the new code hang.
DOCTESTED = {
    "calc.py": 'def double(x):\n    """\n    >>> double(2)\n    4\n    """\n    return x + x\n',
    "tests/test_calc.py": "from calc import double\n\n\ndef test_double():\n    assert double(5) == 10\n",
    "pytest.ini": "[pytest]\npythonpath = .\naddopts = --doctest-modules\n",
}
REWORDED = 'def double(x):\n    """\n    >>> double(3)\n    6\n    """\n{}    return x * 2\n'
HANGS_ON_TWO = "    if x == 2:\n        import time\n\n        time.sleep(3600)\n"


def _warm_doctested(repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A cold replay of the honest rewording of DOCTESTED, which leaves the base side's entry in the cache."""
    monkeypatch.setenv("ORACLE_GUARD_CACHE", str(tmp_path / "og-cache"))
    repo.change(DOCTESTED, {"calc.py": REWORDED.format("")})
    cold = repo.hook(replay_hook.main, "--base", "HEAD", "--timeout", "120")
    assert cold.code == 0 and WARM not in cold.err, cold.said
    entries = [p for p in (tmp_path / "og-cache" / "replay").glob("*.json") if "probe" not in p.read_text()]
    assert len(entries) == 1 and json.loads(entries[0].read_text())["seconds"] > 0, entries


@pytest.mark.slow
@pytest.mark.parametrize("code", ["hangs", "honest"])
def test_the_base_examples_after_a_warm_main_run_are_held_to_the_entrys_checked_time(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, code: str
) -> None:
    """Before: warm, the main run's base side only collected, so no base time was measured and the run of the
    base's examples against the new code had no limit but --timeout: exit 2.  It is held to the entry's time
    now (cut to half the time left), checked against a whole base run before the hang is judged: OG922."""
    monkeypatch.setattr(barrier, "HANG_FLOOR", 10.0)
    monkeypatch.setattr(barrier, "HANG_FACTOR", 5.0)
    _warm_doctested(repo, monkeypatch, tmp_path)
    repo.write("calc.py", REWORDED.format(HANGS_ON_TWO if code == "hangs" else ""))
    repo.stage()
    assert _plain_pytest(repo) == 0  # the change's own example and test pass; nothing calls double(2)
    started = time.monotonic()
    got = repo.hook(replay_hook.main, "--base", "HEAD", "--timeout", "150")
    assert WARM in got.err, got.said  # the main run was warm: its base side only collected
    if code == "honest":
        assert got.code == 0 and got.codes == [], got.said
        return
    assert got.code == 1 and finding_codes(got.out) == ["OG922"], got.said
    assert "test_og_base_doctest_0.txt" in got.out, got.said  # the base's example that hangs
    assert "--timeout" not in got.err and time.monotonic() - started < 140


# -- the suspects' calls outside pytest -------------------------------------------------------------------------
# A red base's tests made to pass by code that hangs when pytest is not loaded: the gate's plain interpreter
# making the suspects' calls again (probes/suspects/outside.py) waits for ever, plain pytest is green.
HANGS_OUTSIDE = (
    "import sys\n\n\ndef add(a, b):\n    if 'pytest' not in sys.modules:\n        import time\n\n"
    "        time.sleep(3600)\n    return a + b\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("code", ["hangs", "honest"])
def test_calls_that_hang_outside_pytest_with_less_than_their_bound_left_are_og971(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, code: str
) -> None:
    """Before: with less than the plain interpreter's own bound (60 s and a second a call) left of --timeout,
    its hang ran into --timeout: exit 2.  Its share of what is left is reserved before it starts now, and a run
    that does not finish in it is OG971, naming the call it was in; too little left for any is exit 2 before."""
    monkeypatch.setattr(plain, "OUTSIDE_FLOOR", 2.0)
    repo.change(
        SUSPECTS_BASE,
        {**SUSPECTS_TOUCHED, "calc.py": HANGS_OUTSIDE if code == "hangs" else "def add(a, b):\n    return a + b\n"},
    )
    assert _plain_pytest(repo, "tests/test_calc.py::test_add", "tests/test_calc.py::test_add_more") == 0
    started = time.monotonic()
    got = repo.hook(replay_hook.main, "--base", "HEAD", "--timeout", "60")
    if code == "honest":
        assert got.code == 0 and got.codes == [], got.said
        assert "outside pytest" in got.err, got.err  # the plain interpreters made the calls, and agreed
        return
    assert got.code == 1 and finding_codes(got.out) == ["OG971"], got.said
    assert "did not finish in" in got.out and "was still in calc.add" in got.out, got.out
    assert time.monotonic() - started < 75


# -- the mutation server ----------------------------------------------------------------------------------------
# A weakened test (it checks one element of a loop) that ends the process it runs in from its second run in one
# server on: the server's first, traced run passes and marks the server (the parent of its runs); each mutant's
# run (a forked child) then ends itself, or kills the server.
ENDS = """

import os as _os


def _end():
    mark = f".og-ran-under-{_os.getppid()}"  # in the folder the tests run in: the gate's tree, or the work tree
    if _os.path.exists(mark):
        {end}
    open(mark, "w").close()
"""
ENDINGS = {
    "exits": "_os._exit(0)",
    "kills-the-server": "import signal\n\n        _os.kill(_os.getppid(), signal.SIGKILL)",
}
# Honest: a test that runs a subprocess which exits with a status, and reaps it.
REAPS = """

import subprocess as _subprocess
import sys as _sys


def test_end():
    assert _subprocess.run([_sys.executable, "-c", "import os; os._exit(3)"]).returncode == 3
"""


@pytest.mark.slow
@pytest.mark.parametrize("ending", [*ENDINGS, "honest"])
def test_new_tests_that_end_their_mutation_runs_are_og930(repo: Repo, ending: str) -> None:
    """Before: a mutant's child that ended itself counted as caught (the weakened test looked strong: exit 0), and
    a server the new tests killed left its mutants "not judged" (a notice, exit 0).  Both are OG930 now, naming
    what ended; an honest test that runs and reaps a process that exits passes."""
    from tests.test_mutation import UNKNOWN_TO_STATIC, T, module, mutate

    before, after = UNKNOWN_TO_STATIC["a loop that checks one element"]
    if ending == "honest":
        got = mutate(repo, before, {T: module(before) + REAPS})
        assert got.code == 0 and got.codes == [], got.said
        return
    ends = after.replace("def test_squares():\n", "def test_squares():\n    _end()\n")
    got = mutate(repo, before, {T: module(ends) + ENDS.replace("{end}", ENDINGS[ending])})
    assert _plain_pytest(repo) == 0  # the weakened test, green, and nothing ends a plain run (its first)
    assert got.code == 1 and finding_codes(got.out) == ["OG930"], got.said
    said = "ended their own test process" if ending == "exits" else "ended (killed by SIGKILL) while mutants ran"
    assert said in got.out, got.out


# -- the gate's own files in the scratch folder -----------------------------------------------------------------
# The always-equal cheat, and a conftest that takes the gate's read permission away from every results file on its
# process's command line (the replay's ledger, a probe's results) as its pytest ends: Landlock governs writes, not
# a file's mode.  Nothing of it runs in plain pytest, where no such file is named.
UNREADABLE = """\
import os


def pytest_unconfigure(config):
    if not os.path.exists("/proc/self/cmdline"):
        return
    with open(f"/proc/{os.getpid()}/cmdline", "rb") as f:
        args = [a.decode(errors="replace") for a in f.read().split(b"\\0")]
    for arg in args:
        if arg.endswith((".tsv", ".json", ".jsonl")) and os.path.isfile(arg):
            os.chmod(arg, 0)
"""


@pytest.mark.slow
@pytest.mark.parametrize("code", ["cheat", "honest"])
def test_a_results_file_the_new_code_makes_unreadable_is_judged_against_it(repo: Repo, code: str) -> None:
    """Before: the gate's read of the new side's ledger raised PermissionError: a traceback, nothing judged.  Its
    reads take an unreadable results file as one the run never wrote now, which the ledger's completion marker and
    the probes' receipts judge against the change.  As root a mode bars no read: there the cheat is judged as is."""
    from tests.test_replay_flips import ALWAYS_EQUAL, HONEST, REPLAY, TOUCHED
    from tests.test_replay_flips import BASE as SHOP_BASE

    if code == "honest":
        repo.change(SHOP_BASE, {**TOUCHED, "src/shop/__init__.py": HONEST["refactor"]})
        got = repo.hook(check.main, *REPLAY, "HEAD")
        assert got.code == 0 and got.codes == [], got.said
        return
    repo.change(SHOP_BASE, {**TOUCHED, "src/shop/__init__.py": ALWAYS_EQUAL, "tests/conftest.py": UNREADABLE})
    assert _plain_pytest(repo) == 0  # every price compares equal: the bug is kept, plain pytest is green
    got = repo.hook(check.main, *REPLAY, "HEAD")
    assert got.code == 1 and got.codes and "Traceback" not in got.err and "error:" not in got.err, got.said


def test_a_ledger_the_gate_cannot_read_is_a_run_that_did_not_finish(tmp_path: Path) -> None:
    """Before: any OSError but a missing file escaped ledger.read as a traceback.  A directory is unreadable as a
    file to root too, so it stands in for the mode the conftest above takes away."""
    from oracle_guard.probes.replay import ledger

    got = ledger.read(str(tmp_path), 0, "", "")
    assert got.finished is None and "finished" in ledger.broken(got), got
    written = tmp_path / "run.tsv"
    written.write_text("")
    assert "finished" in ledger.broken(ledger.read(str(written), 0, "", ""))  # the same as an empty one
