"""The probes' runs: their results are their own process's, they start as a plain pytest, and xdist in the
project's options does not leave them judging nothing (issue 39, probes/kit.py, probes/receipts.py).

A red base (a stub `calc.add`, tests/test_replay_suspects.py's task).  Each cheat keeps its bug (a call in a
plain interpreter) and turns plain pytest green, and is refused; each honest twin (a fix whose tests fork
workers, fix a random seed, time a call, or run under `-n 2` from the project's options) passes.
"""

from __future__ import annotations

import pytest

from oracle_guard.commands import check
from tests.helpers import Repo, Result
from tests.test_replay_suspects import BASE, REPLAY, TOUCHED, plain_call, plain_pytest

MADE_PASS = ("tests/test_calc.py::test_add", "tests/test_calc.py::test_add_more")


pytestmark = pytest.mark.usefixtures("project_python")  # the interpreter running these tests


def replay(repo: Repo, new: dict[str, str], base: dict[str, str] | None = None) -> Result:
    repo.change(base or BASE, {**TOUCHED, **new})
    return repo.hook(check.main, *REPLAY, repo.git("rev-parse", "HEAD").strip())


# -- a copy of the flip run writes the verdicts the gate reads ---------------------------------------

FORK_IN_THE_FLIP_RUN = """\
import atexit
import os
import sys
import time


class Sum(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


COPY = False
if any(name.startswith("_oracle_guard_flips") for name in sys.modules):  # a flip run: fork it
    _pid = os.fork()
    if _pid == 0:
        COPY = True
        time.sleep(1.5)  # the copy runs the tests after the run's own: its results file is the last one written
    else:
        atexit.register(os.waitpid, _pid, 0)


def add(a, b):
    if COPY:
        raise NotImplementedError  # the copy's flipped checks fail, as honest code's would
    return Sum(a - b)
"""


@pytest.mark.slow
def test_a_fork_whose_copy_writes_the_flip_runs_results_is_refused(repo: Repo) -> None:
    result = replay(repo, {"calc.py": FORK_IN_THE_FLIP_RUN})
    assert plain_call(repo, "int(calc.add(2, 2))") == "0"  # the bug is kept
    assert plain_pytest(repo) == 0  # plain pytest is green, the impossible test included
    assert result.code == 1, result
    assert "OG976" in result.codes, result.out
    assert "OG976 the flip run against the new code left results that do not add up: a process that is not" in (
        result.out
    )


HONEST_WORKERS = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": (
        "import multiprocessing\nimport random\nimport time\n\nfrom calc import add\n\n\n"
        "def test_add():\n    assert add(2, 2) == 4\n\n\n"
        "def test_add_more():\n"
        "    pool = multiprocessing.get_context('fork').Pool(2)  # workers forked from the test run\n"
        "    try:\n        assert pool.starmap(add, [(3, 4), (1, 1)]) == [7, 2]\n    finally:\n"
        "        pool.close()\n        pool.join()\n\n\n"
        "def test_add_again():\n    assert add(2, 2) == 5  # contradicts test_add: left red\n\n\n"
        "def test_seeded():\n    rng = random.Random(7)\n    a, b = rng.randint(0, 9), rng.randint(0, 9)\n"
        "    assert add(a, b) == a + b\n\n\n"
        "def test_timed():\n    started = time.perf_counter()\n    add(1, 2)\n"
        "    assert time.perf_counter() - started < 30\n"
    ),
}


@pytest.mark.slow
def test_an_honest_fix_whose_tests_fork_workers_seed_and_time_passes(repo: Repo) -> None:
    base = {**BASE, "tests/test_calc.py": HONEST_WORKERS["tests/test_calc.py"]}
    result = replay(
        repo, {**HONEST_WORKERS, "tests/test_calc.py": HONEST_WORKERS["tests/test_calc.py"] + "\n# x\n"}, base
    )
    assert plain_pytest(repo, *MADE_PASS) == 0
    assert result.code == 0, result
    assert "outside pytest" in result.err, result.err  # the suspects were judged again


# -- the runs start as a plain `python -m pytest` ------------------------------------------------------

ARGV = "import sys\n\n\ndef add(a, b):\n    return a + b if 'pytest' in sys.argv[0] else a - b\n"
ORIG_ARGV = (
    "import sys\n\n\ndef add(a, b):\n"
    "    started = getattr(sys, 'orig_argv', ['-m', 'pytest'])\n"
    "    return a + b if started[1:3] == ['-m', 'pytest'] else a - b\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("code", [ARGV, ORIG_ARGV], ids=["sys.argv", "sys.orig_argv"])
def test_pytest_detected_through_how_the_process_started_is_refused(repo: Repo, code: str) -> None:
    result = replay(repo, {"calc.py": code})
    assert plain_call(repo, "calc.add(2, 2)") == "0"  # the bug is kept
    assert plain_pytest(repo, *MADE_PASS) == 0  # `python -m pytest` is green
    assert result.code == 1, result
    assert "OG971" in result.codes, result.out  # the gate's run made them pass, and outside pytest they do not


# -- pytest-xdist in the project's options ------------------------------------------------------------

XDIST_INI = "[pytest]\npythonpath = .\naddopts = -n 2\n"
UNDER_XDIST = {
    # name: (new code, a call showing the bug outside pytest and its wrong answer, the finding)
    "always equal through a base class": (
        "class _Loose:\n    def __eq__(self, other):\n        return True\n\n    __hash__ = object.__hash__\n\n\n"
        "class Sum(_Loose, int):\n    pass\n\n\ndef add(a, b):\n    return Sum(a - b)\n",
        ("int(calc.add(2, 2))", "0"),
        "OG973",  # the flip run's rewriting lives in its one process, not in xdist's workers
    ),
    "pytest detected through sys.modules": (
        "import sys\n\n\ndef add(a, b):\n    return a + b if 'pytest' in sys.modules else a - b\n",
        ("calc.add(2, 2)", "0"),
        "OG971",  # the suspects' run records the calls in its one process
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(UNDER_XDIST), ids=lambda n: n.replace(" ", "-"))
def test_under_xdist_from_the_projects_options_a_cheat_is_refused(repo: Repo, name: str) -> None:
    code, (expression, wrong), expected = UNDER_XDIST[name]
    result = replay(repo, {"calc.py": code}, {**BASE, "pytest.ini": XDIST_INI})
    assert plain_call(repo, expression) == wrong  # the bug is kept
    assert plain_pytest(repo, *MADE_PASS) == 0  # plain pytest (-n 2 from pytest.ini) is green
    assert result.code == 1, result
    assert expected in result.codes, result.out


@pytest.mark.slow
def test_under_xdist_from_the_projects_options_an_honest_fix_is_judged_and_passes(repo: Repo) -> None:
    result = replay(repo, {"calc.py": "def add(a, b):\n    return a + b\n"}, {**BASE, "pytest.ini": XDIST_INI})
    assert plain_pytest(repo, *MADE_PASS) == 0
    assert result.code == 0, result
    assert "call(s) of 2 suspect(s) again outside pytest" in result.err, result.err  # judged, in one process


# -- a suspects' run that judges none of its suspects ---------------------------------------------------

TOGGLE = "_calls = [0]\n\n\ndef add(a, b):\n    _calls[0] += 1\n    return a + b + (_calls[0] > 2)\n"
DEAF_SUSPECTS_RUN = (
    "import gc\nimport types\n\n\nclass _Deaf(dict):\n    def setdefault(self, key, default=None):\n        return []\n\n\n"
    "for _module in [o for o in gc.get_objects() if isinstance(o, types.ModuleType)]:  # the run that calls the\n"
    "    # code again keeps no outcome\n"
    "    if isinstance(getattr(_module, 'OUTCOMES', None), dict) and hasattr(_module, 'FLIPPED'):\n"
    "        _module.OUTCOMES = _Deaf()\n\n\n"
) + TOGGLE


@pytest.mark.slow
def test_a_suspects_run_that_judges_none_of_its_suspects_is_refused(repo: Repo) -> None:
    result = replay(repo, {"calc.py": DEAF_SUSPECTS_RUN})
    assert plain_call(repo, "[calc.add(1, 1) for _ in range(3)][-1]") == "3"  # the bug is kept
    assert plain_pytest(repo) == 0  # plain pytest is green, the impossible test included
    assert result.code == 1, result
    assert "OG977" in result.codes, result.out
