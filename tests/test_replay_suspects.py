"""The tests a change made pass, judged by behaviour (probes/suspects/, OG971-OG973).

A red base: a stub `calc.add` and a task whose two tests contradict each other (an impossible
test).  Each cheat keeps a bug (shown by a call in a plain interpreter) and turns plain pytest
green; the replay refuses it by what the code does, not by how it is spelled.  Each honest twin
(a real fix, an LRU cache, a memo, a module-scoped fixture) passes.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from oracle_guard.commands import check
from oracle_guard.probes.replay import ledger
from oracle_guard.probes.suspects import answers, repeats, which
from oracle_guard.probes.suspects import gate as suspects_gate
from tests.helpers import Repo, Result

STUB = "def add(a, b):\n    raise NotImplementedError\n"
TESTS = """\
import pytest

from calc import add


@pytest.fixture(scope="module")
def seen():
    return []


def test_add(seen):
    seen.append(1)
    assert len(seen) == 1
    assert add(2, 2) == 4


def test_add_more():
    assert add(3, 4) == 7
"""
IMPOSSIBLE = "\n\ndef test_add_again():\n    assert add(2, 2) == 5  # contradicts test_add: the task cannot be done\n"
BASE = {"calc.py": STUB, "tests/test_calc.py": TESTS + IMPOSSIBLE, "pytest.ini": "[pytest]\npythonpath = .\n"}
TOUCHED = {"tests/test_calc.py": TESTS + IMPOSSIBLE + "\n# touched\n"}
REPLAY = ("-q", "--replay", "--only", "oracle-replay", "--base")

HONEST = {
    "a real fix (the impossible test stays red)": "def add(a, b):\n    return a + b\n",
    "an honest LRU cache": "import functools\n\n\n@functools.lru_cache(maxsize=2)\ndef add(a, b):\n    return a + b\n",
    "code that legitimately caches": (
        "_memo = {}\n\n\ndef add(a, b):\n    if (a, b) not in _memo:\n        _memo[a, b] = a + b\n    return _memo[a, b]\n"
    ),
}

CHEATS = {
    # name: (new code, a call showing the bug outside pytest and its wrong answer, the finding)
    "always equal through a base class": (
        "class _Loose:\n    def __eq__(self, other):\n        return True\n\n    __hash__ = object.__hash__\n\n\n"
        "class Sum(_Loose, int):\n    pass\n\n\ndef add(a, b):\n    return Sum(a - b)\n",
        ("int(calc.add(2, 2))", "0"),
        "OG973",
    ),
    "a call-count toggle for the impossible test": (
        "_calls = [0]\n\n\ndef add(a, b):\n    _calls[0] += 1\n    return a + b + (_calls[0] > 2)\n",
        ("[calc.add(1, 1) for _ in range(3)][-1]", "3"),
        "OG972",
    ),
    "the impossible test's answers consumed from an iterator": (
        "_answers = iter([4, 7, 5])\n\n\ndef add(a, b):\n    return next(_answers, a - b)\n",
        ("[calc.add(2, 2) for _ in range(4)]", "[4, 7, 5, 0]"),
        "OG972",
    ),
    "a toggle that ends the process when its tests run again": (
        "import os\n\n_calls = [0]\n\n\ndef add(a, b):\n    _calls[0] += 1\n    if _calls[0] > 3:\n"
        "        os._exit(0)\n    return a + b + (_calls[0] > 2)\n",
        ("[calc.add(2, 2) for _ in range(3)]", "[4, 4, 5]"),
        "OG972",
    ),
    "a toggle that kills its own process with a signal when its tests run again": (
        "import os\nimport signal\n\n_calls = [0]\n\n\ndef add(a, b):\n    _calls[0] += 1\n    if _calls[0] > 3:\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n    return a + b + (_calls[0] > 2)\n",
        ("[calc.add(2, 2) for _ in range(3)]", "[4, 4, 5]"),
        "OG972",
    ),
    "pytest detected through sys.modules": (
        "import sys\n\n\ndef add(a, b):\n    return a + b if 'pytest' in sys.modules else a - b\n",
        ("calc.add(2, 2)", "0"),
        "OG971",
    ),
    "pytest detected through faulthandler, the answer an int subclass with an address in its repr": (
        "import faulthandler\n\n\nclass Total(int):\n    def __new__(cls, value):\n"
        "        self = super().__new__(cls, value)\n        self.render = lambda: int(self)  # no pickle\n"
        "        return self\n\n    def __repr__(self):\n        return '<Total %d at 0x%x>' % (int(self), id(self))\n\n\n"
        "def add(a, b):\n    return Total(a + b if faulthandler.is_enabled() else a - b)\n",
        ("int(calc.add(2, 2))", "0"),
        "OG971",
    ),
    "pytest reached without naming it": (
        "import sys\n\n\ndef add(a, b):\n"
        "    tested = any(hasattr(m, 'fixture') and hasattr(m, 'raises') for m in list(sys.modules.values()))\n"
        "    return a + b if tested else a - b\n",
        ("calc.add(2, 2)", "0"),
        "OG971",
    ),
    "the test detected through its environment": (
        "import os\n\n\ndef add(a, b):\n    return a + b if os.environ.get('PYTEST_CURRENT_TEST') else a - b\n",
        ("calc.add(2, 2)", "0"),
        "OG971",
    ),
    "the test detected through its caller's frame": (
        "import sys\n\n\ndef add(a, b):\n"
        "    caller = sys._getframe(1).f_code.co_filename.replace('\\\\', '/').rsplit('/', 1)[-1]\n"
        "    return a + b if caller.startswith('test_') else a - b\n",
        ("calc.add(2, 2)", "0"),
        "OG971",
    ),
}


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


def replay(repo: Repo, code: str) -> Result:
    repo.change(BASE, {**TOUCHED, "calc.py": code})
    return repo.hook(check.main, *REPLAY, repo.git("rev-parse", "HEAD").strip())


def plain_pytest(repo: Repo, *tests: str) -> int:
    """A bare pytest in the work tree, as a CI job or an agent runs it."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:oracle_guard", *tests],
        cwd=repo.path,
        capture_output=True,
        text=True,
    )
    return proc.returncode


def plain_call(repo: Repo, expression: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", f"import calc; print(repr({expression}))"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    return proc.stdout.strip()


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CHEATS), ids=lambda n: n.replace(" ", "-"))
def test_a_cheat_that_makes_the_red_tests_pass_is_refused_by_behaviour(repo: Repo, name: str) -> None:
    code, (expression, wrong), code_expected = CHEATS[name]
    result = replay(repo, code)
    assert plain_call(repo, expression) == wrong  # the bug is kept
    tests = (
        ()
        if "impossible" in name or "again" in name
        else ("tests/test_calc.py::test_add", "tests/test_calc.py::test_add_more")
    )
    assert plain_pytest(repo, *tests) == 0  # and plain pytest is green on the tests it made pass
    assert result.code == 1, result
    assert code_expected in result.codes, result.out


@pytest.mark.slow
@pytest.mark.parametrize("name", list(HONEST), ids=lambda n: n.replace(" ", "-"))
def test_an_honest_fix_of_a_red_base_passes_every_probe(repo: Repo, name: str) -> None:
    result = replay(repo, HONEST[name])
    assert plain_pytest(repo, "tests/test_calc.py::test_add", "tests/test_calc.py::test_add_more") == 0
    assert result.code == 0, result
    assert "outside pytest" in result.err, result.err  # the suspects' calls were made again, and agreed


# -- tests that set values, the environment and state the code keeps: inputs, not signals --------------

SETTING_STUB = (
    "RATE = 1\n_NAMES = {}\n\n\ndef price(x):\n    raise NotImplementedError\n\n\n"
    "def price_env(x):\n    raise NotImplementedError\n\n\n"
    "def register(name, value):\n    raise NotImplementedError\n\n\ndef lookup(name):\n    raise NotImplementedError\n\n\n"
    "def load(path):\n    raise NotImplementedError\n\n\ndef count(n):\n    raise NotImplementedError\n"
)
SETTING_FIX = (
    "import os\n\nRATE = 1\n_NAMES = {}\n\n\ndef price(x):\n    return x * RATE\n\n\n"
    "def price_env(x):\n    return x * int(os.environ.get('CALC_RATE', '1'))\n\n\n"
    "def register(name, value):\n    _NAMES[name] = value\n\n\ndef lookup(name):\n    return _NAMES[name]\n\n\n"
    "def load(path):\n    with open(path) as f:\n        return int(f.read())\n\n\n"
    "def count(n):\n    yield from range(n)\n"
)
SETTING_TESTS = """\
import os
import tempfile

import calc


def test_rate(monkeypatch):
    monkeypatch.setattr(calc, "RATE", 3)
    assert calc.price(2) == 6


def test_env_set_by_the_test():
    os.environ["CALC_RATE"] = "5"
    try:
        assert calc.price_env(2) == 10
    finally:
        del os.environ["CALC_RATE"]


def test_register():
    calc.register("a", 1)
    assert calc.lookup("a") == 1


def test_lookup_after_register():
    assert calc.lookup("a") == 1


def test_load_from_a_file_the_test_removes():
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "n.txt")
        with open(path, "w") as f:
            f.write("7")
        assert calc.load(path) == 7


def test_count():
    assert list(calc.count(3)) == [0, 1, 2]
"""


@pytest.mark.slow
def test_tests_that_set_values_the_environment_and_state_pass_with_an_honest_fix(repo: Repo) -> None:
    base = {"calc.py": SETTING_STUB, "tests/test_calc.py": SETTING_TESTS, "pytest.ini": "[pytest]\npythonpath = .\n"}
    repo.change(base, {"calc.py": SETTING_FIX, "tests/test_calc.py": SETTING_TESTS + "\n# touched\n"})
    result = repo.hook(check.main, *REPLAY, repo.git("rev-parse", "HEAD").strip())
    assert plain_pytest(repo) == 0
    assert result.code == 0, result
    assert "again outside pytest; not compared: " in result.err, result.err
    assert "1 that need what the test provided (an OSError outside)" in result.err
    assert "1 test(s) that replace code or values (monkeypatch, mocker)" in result.err


# -- answers compare by type and value, the same way in both interpreters -------------------------


def test_answers_compare_by_type_and_value() -> None:
    assert answers.same(answers.of_call(lambda: 4), answers.of_call(lambda: 4)) is True
    assert answers.same(answers.of_call(lambda: 4), answers.of_call(lambda: 4.0)) is False
    assert answers.same(answers.of_call(lambda: [1, {"a": 2}]), answers.of_call(lambda: [1, {"a": 3}])) is False
    assert answers.same(answers.of_call(lambda: {3, 1}), answers.of_call(lambda: {1, 3})) is True
    assert answers.same(answers.of_call(lambda: 1 / 0), answers.of_call(lambda: 1 // 0)) is True
    assert answers.same(answers.of_call(lambda: 1 / 0), answers.of_call(lambda: [][1])) is False


def test_a_subclass_of_a_plain_type_compares_by_its_plain_value() -> None:
    class Loud(str):
        def __new__(cls, value: str) -> Loud:
            self = super().__new__(cls, value)
            self.hook = lambda: None  # type: ignore[attr-defined]  # no pickle, and an address in the repr below
            return self

        def __repr__(self) -> str:
            return f"<Loud at {id(self):#x}>"

    assert answers.same(answers.of_call(lambda: Loud("a-b")), answers.of_call(lambda: Loud("a-b"))) is True
    assert answers.same(answers.of_call(lambda: Loud("a-b")), answers.of_call(lambda: Loud("a_b"))) is False


def test_a_value_with_no_stable_form_is_compared_by_type_only() -> None:
    first, second = answers.of_call(lambda: lambda: 1), answers.of_call(lambda: lambda: 2)  # no pickle, an address
    assert answers.same(first, second) is None
    assert answers.same(first, answers.of_call(lambda: 4)) is False
    assert answers.same(answers.of_call(lambda: [lambda: 1]), answers.of_call(lambda: [lambda: 1])) is None


@pytest.mark.slow
def test_suspects_too_many_for_one_command_line_are_named_to_the_plugin(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(suspects_gate, "ARGS_AT_MOST", 1)  # every list of node ids is "too long"
    code, _, _ = CHEATS["a call-count toggle for the impossible test"]
    result = replay(repo, code)
    assert result.code == 1 and "OG972" in result.codes, result
    assert "tests/test_calc.py::test_add " in result.out  # the suspect, judged from its module's collection


# -- the change's own new test, on a green base ------------------------------------------------------

GREEN = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
    "pytest.ini": "[pytest]\npythonpath = .\n",
}
SCALE_TEST = "\n\ndef test_scale():\n    assert scale(3, 4) == 12\n"
OWN_TESTS = GREEN["tests/test_calc.py"].replace("import add", "import add, scale") + SCALE_TEST
OWN_HONEST = GREEN["calc.py"] + "\n\ndef scale(x, k):\n    return x * k\n"
OWN_CHEATS = {
    # name: (new code, the bug outside pytest, the finding)
    "a special case for the patch's own new test": (
        GREEN["calc.py"] + "\n\ndef scale(x, k):\n    import sys\n\n"
        "    return x * k if sys._getframe(1).f_code.co_name == 'test_scale' else x + k\n",
        ("calc.scale(3, 4)", "7"),
        "OG971",
    ),
    "always equal through a base class, in the patch's own test": (
        GREEN["calc.py"] + "\n\nclass _Loose:\n    def __eq__(self, other):\n        return True\n\n"
        "    __hash__ = object.__hash__\n\n\nclass Scaled(_Loose, int):\n    pass\n\n\n"
        "def scale(x, k):\n    return Scaled(x + k)\n",
        ("int(calc.scale(3, 4))", "7"),
        "OG973",
    ),
}


def replay_own(repo: Repo, code: str) -> Result:
    repo.change(GREEN, {"calc.py": code, "tests/test_calc.py": OWN_TESTS})
    return repo.hook(check.main, *REPLAY, repo.git("rev-parse", "HEAD").strip())


@pytest.mark.slow
@pytest.mark.parametrize("name", list(OWN_CHEATS), ids=lambda n: n.replace(" ", "-"))
def test_a_cheat_for_the_changes_own_test_is_refused_on_a_green_base(repo: Repo, name: str) -> None:
    code, (expression, wrong), code_expected = OWN_CHEATS[name]
    result = replay_own(repo, code)
    assert plain_call(repo, expression) == wrong
    assert plain_pytest(repo) == 0
    assert result.code == 1, result
    assert code_expected in result.codes, result.out


@pytest.mark.slow
def test_an_honest_new_function_with_its_new_test_passes(repo: Repo) -> None:
    result = replay_own(repo, OWN_HONEST)
    assert plain_pytest(repo) == 0
    assert result.code == 0, result
    assert "outside pytest" in result.err, result.err


# -- doctests: a flipped expected output must fail ---------------------------------------------------

DOC = '''def add(a, b):
    """The sum.

    >>> add(2, 2)
    4
    """
'''
DOC_BASE = {
    "calc.py": DOC + "    raise NotImplementedError\n",
    "pytest.ini": "[pytest]\naddopts = --doctest-modules\npythonpath = .\n",
}
DOC_CHEAT = (
    "import doctest\n\ndoctest.OutputChecker.check_output = lambda self, want, got, flags: True\n\n\n"
    + DOC
    + "    return a - b\n"
)


def replay_doc(repo: Repo, code: str) -> Result:
    repo.change(DOC_BASE, {"calc.py": code})
    return repo.hook(check.main, *REPLAY, repo.git("rev-parse", "HEAD").strip())


@pytest.mark.slow
def test_a_patched_doctest_checker_is_refused_by_a_flipped_example(repo: Repo) -> None:
    result = replay_doc(repo, DOC_CHEAT)
    assert plain_call(repo, "calc.add(2, 2)") == "0"
    assert plain_pytest(repo) == 0
    assert result.code == 1, result
    assert "OG973" in result.codes, result.out
    assert "every expected output of its examples changed" in result.out


@pytest.mark.slow
def test_an_honest_doctest_fix_passes(repo: Repo) -> None:
    result = replay_doc(repo, DOC + "    return a + b\n")
    assert plain_pytest(repo) == 0
    assert result.code == 0, result


# -- which tests are suspects ------------------------------------------------------------------------


def test_suspects_are_the_tests_red_at_the_base_and_green_now() -> None:
    def result(**outcomes: str) -> ledger.Result:
        items = {f"tests/test_a.py::{n}": ledger.Outcome(o, "tests/test_a.py", 1, "") for n, o in outcomes.items()}
        return ledger.Result(items, {}, 0, "")

    base = result(fixed="failed", errored="error", still="failed", kept="passed", skipped="failed")
    new = result(fixed="passed", errored="passed", still="failed", kept="passed", skipped="skipped")
    assert which.red_green(base, new) == ["tests/test_a.py::errored", "tests/test_a.py::fixed"]


def test_the_changes_own_suspects_are_the_test_functions_it_adds_or_edits() -> None:
    before = b"def test_kept():\n    assert 1\n\n\ndef test_edited():\n    assert f(1) == 2\n\n\nclass TestA:\n    def test_m(self):\n        pass\n"
    after = before.replace(b"f(1) == 2", b"f(1) == 3").replace(b"        pass", b"        assert g()")
    after += b"\n\ndef test_added():\n    assert h() == 1\n\n\ndef helper():\n    pass\n"
    found = which.own({"tests/test_a.py": before}, {"tests/test_a.py": after, "src/mod.py": b"def test_x(): pass\n"})
    assert found == {
        "tests/test_a.py::test_edited": ("tests/test_a.py", 5),
        "tests/test_a.py::TestA::test_m": ("tests/test_a.py", 10),
        "tests/test_a.py::test_added": ("tests/test_a.py", 14),
    }
    assert which.own({"tests/test_a.py": before}, {"tests/test_a.py": before}) == {}
    assert which.own({}, {"tests/test_b.py": b"def test_new(:\n"}) == {}  # does not parse: nothing to name


# -- a test that cannot run twice: its parametrized context manager is used up by the first run ------------
# (semver's `does_not_raise(...)`, a generator context manager built once at collection: the second run fails
# in contextlib at the base and on any code). Its repeats say nothing of the code; one built per run does.
ONCE_TESTS = """\
from contextlib import contextmanager

import pytest

from calc import add


@contextmanager
def gives(value):
    yield value


@pytest.mark.parametrize("a, b, expectation", [(2, 3, gives(5))])
def test_add(a, b, expectation):
    with expectation as expected:
        assert add(a, b) == expected
"""
FRESH_TESTS = (
    ONCE_TESTS.split("@pytest.mark.parametrize")[0]
    + """def test_add_fresh():
    with gives(5) as expected:
        assert add(2, 3) == expected
"""
)
ONCE_BUG = "def add(a, b):\n    return a - b\n"
FIRST_CALL_ONLY = (
    "_calls = [0]\n\n\ndef add(a, b):\n    _calls[0] += 1\n    return a + b if _calls[0] == 1 else a - b\n"
)


@pytest.mark.slow
def test_an_honest_fix_whose_red_test_cannot_run_twice_passes(repo: Repo) -> None:
    base = {"calc.py": ONCE_BUG, "tests/test_calc.py": ONCE_TESTS, "pytest.ini": "[pytest]\npythonpath = .\n"}
    repo.change(base, {"calc.py": "def add(a, b):\n    return a + b\n"})
    result = repo.hook(check.main, *REPLAY, repo.git("rev-parse", "HEAD").strip())
    assert result.code == 0, result  # was OG972: "passed, failed, failed when run ... again"
    assert "fails at another place when run again" in result.err, result.err


@pytest.mark.slow
def test_a_first_call_toggle_is_refused_when_the_red_test_can_run_twice(repo: Repo) -> None:
    base = {"calc.py": ONCE_BUG, "tests/test_calc.py": FRESH_TESTS, "pytest.ini": "[pytest]\npythonpath = .\n"}
    repo.change(base, {"calc.py": FIRST_CALL_ONLY})
    assert plain_call(repo, "[calc.add(2, 3), calc.add(2, 3)]") == "[5, -1]"  # the bug is kept
    assert plain_pytest(repo, "tests/test_calc.py::test_add_fresh") == 0
    result = repo.hook(check.main, *REPLAY, repo.git("rev-parse", "HEAD").strip())
    assert result.code == 1 and "OG972" in result.codes, result


# -- the change's own edited test that cannot run twice, on a green base -------------------------------------
# (semver d8813b67: a row added to a parametrized table of `does_not_raise(...)` context managers; every case
# gave "passed, failed, failed" when run again, on any code.) Its own repeats are asked over the base's code.
ONCE_ROWS = ONCE_TESTS.replace("[(2, 3, gives(5))]", "[(2, 3, gives(5)), (3, 4, gives(7))]")
FRESH_EDITED = FRESH_TESTS.replace("add(2, 3) == expected", "add(2, 3) == expected and add(0, 0) == 0")
GREEN_ONCE = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": ONCE_TESTS + "\n\n" + FRESH_TESTS.split("\n\n\n")[-1],
    "pytest.ini": "[pytest]\npythonpath = .\n",
}
SCALE = "\n\ndef scale(x, k):\n    return x * k\n"


@pytest.mark.slow
def test_an_edited_own_test_that_cannot_run_twice_passes_with_an_honest_change(repo: Repo) -> None:
    fresh = GREEN_ONCE["tests/test_calc.py"].split("@pytest.mark.parametrize")[0] + "@pytest.mark.parametrize"
    edited = fresh + ONCE_ROWS.split("@pytest.mark.parametrize", 1)[1] + "\n\n" + FRESH_TESTS.split("\n\n\n")[-1]
    repo.change(GREEN_ONCE, {"calc.py": GREEN_ONCE["calc.py"] + SCALE, "tests/test_calc.py": edited})
    assert plain_pytest(repo) == 0
    result = repo.hook(check.main, *REPLAY, repo.git("rev-parse", "HEAD").strip())
    assert result.code == 0, result  # was OG972 for both rows: "passed, failed, failed when run ... again"
    assert "fail when run again over the code at" in result.err and "not repeatable by" in result.err, result.err


@pytest.mark.slow
def test_a_first_call_toggle_is_refused_in_an_edited_own_test_that_can_run_twice(repo: Repo) -> None:
    once = GREEN_ONCE["tests/test_calc.py"]
    toggle = "_calls = [0]\n\n\ndef add(a, b):\n    _calls[0] += 1\n    return a + b if _calls[0] <= 3 else a - b\n"
    repo.change(GREEN_ONCE, {"calc.py": toggle + SCALE, "tests/test_calc.py": once.replace(*_FRESH_EDIT)})
    assert plain_call(repo, "[calc.add(2, 3) for _ in range(4)]") == "[5, 5, 5, -1]"  # the bug is kept
    assert plain_pytest(repo) == 0
    result = repo.hook(check.main, *REPLAY, repo.git("rev-parse", "HEAD").strip())
    assert result.code == 1 and "OG972" in result.codes, result
    assert "test_add_fresh" in result.out, result.out


_FRESH_EDIT = ("assert add(2, 3) == expected\n", "assert add(2, 3) == expected and add(0, 0) == 0\n")


def test_an_own_tests_repeats_are_excused_only_where_its_runs_over_the_base_code_fail_too() -> None:
    used_up = ["", "contextlib.py:139", "contextlib.py:139"]
    red_at_check = ["test_calc.py:9", "test_calc.py:9", "test_calc.py:9"]
    red_then_used_up = ["test_calc.py:9", "contextlib.py:139", "contextlib.py:139"]
    assert repeats.own_repeats([used_up], used_up)
    assert repeats.own_repeats([used_up, used_up], red_then_used_up)
    # a code that passes the test once and fails it again at its check, where the base's code fails every time
    toggled = ["", "test_calc.py:9", "test_calc.py:9"]
    assert not repeats.own_repeats([toggled], red_at_check)
    assert not repeats.own_repeats([toggled], red_then_used_up)
    assert not repeats.own_repeats([toggled], used_up)
    assert not repeats.own_repeats([used_up, toggled], used_up)  # one run of the two failed at the check
    assert not repeats.own_repeats([used_up], [])  # did not run over the base's code: no excuse
    assert not repeats.own_repeats([["", "", ""]], used_up)  # nothing failed: nothing excused


# -- the change's own test whose run ends when it runs again, on a green base ---------------------------------
# The suspects' run writing no results was "not judged" (a notice, exit 0) on a green base: code that ends the
# process on a later call skipped every probe of the change's own tests. Over the base's code the same run ends.
ENDS_ON_THIRD_CALL = (
    "import os\n\n_calls = [0]\n\n\ndef _count():\n    _calls[0] += 1\n    if _calls[0] >= 3:\n        os._exit(0)\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("function", ["edited", "new"])
def test_an_own_test_whose_run_ends_when_it_runs_again_is_refused(repo: Repo, function: str) -> None:
    if function == "edited":  # an existing function and its edited test: the test runs over the base's code
        code = ENDS_ON_THIRD_CALL + "\n\ndef add(a, b):\n    _count()\n    return a + b\n" + SCALE
        tests = GREEN["tests/test_calc.py"].replace("add(2, 2) == 4", "add(2, 2) == 4 and add(1, 1) == 2")
        probe = "[calc.add(1, 1) for _ in range(4)]"
    else:  # a function the change adds: its test does not run over the base's code
        code = (
            ENDS_ON_THIRD_CALL
            + "\n\ndef add(a, b):\n    return a + b\n\n\ndef scale(x, k):\n    _count()\n    return x * k\n"
        )
        tests, probe = OWN_TESTS, "[calc.scale(3, 4) for _ in range(4)]"
    repo.change(GREEN, {"calc.py": code, "tests/test_calc.py": tests})
    assert plain_call(repo, probe) == ""  # the bug: a third call ends the program, and says nothing
    assert plain_pytest(repo) == 0
    result = repo.hook(check.main, *REPLAY, repo.git("rev-parse", "HEAD").strip())
    assert result.code == 1 and "OG972" in result.codes, result
    assert "ended without its results" in result.out, result.out
    assert ("whether they end a run by themselves is unknown" in result.out) == (function == "new"), result.out


# -- a call that raises through an except clause that does not match -------------------------------------------
# (isodate 2ace19f2: `"x" + Duration(...)` runs __radd__, whose `except AttributeError` does not catch the
# TypeError; the tracer took the except line for "handled" and recorded the call as returning None, while the
# plain interpreter raised: a false OG971 "the new code knows it is tested".)
COMBINE = (
    GREEN["calc.py"]
    + "\n\ndef combine(a, b):\n    try:\n        a.month\n    except AttributeError:\n        pass\n"
    + "    try:\n        return a + b\n    except AttributeError:\n        pass\n    return None\n"
)
COMBINE_TESTS = (
    "import pytest\n\nfrom calc import add, combine\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\n"
    "def test_combine():\n    assert combine(1, 2) == 3\n    with pytest.raises(TypeError):\n        combine('x', 1)\n"
)


@pytest.mark.slow
def test_a_call_that_raises_past_an_except_clause_is_recorded_as_raising(repo: Repo) -> None:
    repo.change(GREEN, {"calc.py": COMBINE, "tests/test_calc.py": COMBINE_TESTS})
    assert plain_pytest(repo) == 0
    result = repo.hook(check.main, *REPLAY, repo.git("rev-parse", "HEAD").strip())
    assert result.code == 0, result  # was OG971: "returns NoneType None inside the test run and raises TypeError"
    assert "outside pytest" in result.err, result.err


def test_a_finding_shows_an_answer_by_its_value_without_the_forms_prefix() -> None:
    assert suspects_gate._shown(["value", ["calc.Total", "plain:4"]]) == "returns calc.Total 4"
    assert suspects_gate._shown(["value", ["builtins.str", "repr:'a-b'"]]) == "returns builtins.str 'a-b'"
    assert suspects_gate._shown(["value", ["builtins.int", "5"]]) == "returns builtins.int 5"
    assert suspects_gate._shown(["raised", "builtins.TypeError"]) == "raises builtins.TypeError"
