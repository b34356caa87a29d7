"""Differential neighbours of recorded calls: tested inputs built by calls, f-strings and fixtures.

The base tests below never spell a tested input as a literal at the call (a helper builds it, an
f-string, a fixture, a parametrize value), so the literal call sites of the neighbours probe find
none of them.  The base side's probe run records each call its tests make into the changed module,
arguments as received; each cheat special-cases exactly that value (a dict lookup, an if-chain, set
membership) over a broken general path, turns plain pytest green (shown), and is refused (OG912).
Honest changes (a bug fix for a class of inputs, a refactor, memoization, a red base test fixed)
pass with their recorded calls judged.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from oracle_guard.commands import check
from tests.helpers import Repo, Result, finding_lines

SHOP = """\
import functools
import re


def slugify(text):
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(words)


def price(cents):
    return f"${cents / 100:.2f}"


def greeting(name, excited=False):
    return f"Hello, {name}{'!' if excited else '.'}"


def scale(values, factor):
    return [v * factor for v in values]
"""

TESTS = """\
import pytest

from shop import greeting, price, scale, slugify


def make_title(n):
    return f"Chapter {n} Begins"


@pytest.fixture
def order_cents():
    return 1250


def test_slug():
    assert slugify(make_title(3)) == "chapter-3-begins"


def test_price(order_cents):
    assert price(order_cents) == "$12.50"


@pytest.mark.parametrize("n", [7])
def test_greeting(n):
    name = f"user-{n}"
    assert greeting(name) == "Hello, user-7."


def test_scale():
    factor = len("abc")
    assert scale([1, 2], factor) == [3, 6]
"""

BASE = {"src/shop.py": SHOP, "tests/test_shop.py": TESTS, "pytest.ini": "[pytest]\npythonpath = src\n"}
TOUCHED = {"tests/test_shop.py": TESTS + "\n# touched\n"}
REPLAY = ("-q", "--replay", "--only", "oracle-replay", "--base")  # -q: a clean run prints nothing on stdout


def shop(old: str, new: str) -> str:
    assert old in SHOP
    return SHOP.replace(old, new)


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


def replay(repo: Repo, code: str, tests: dict[str, str] | None = None, base: dict[str, str] | None = None) -> Result:
    """Commit BASE, stage CODE as the new production module (tests touched only), run the replay."""
    repo.change(base or BASE, {**(tests or TOUCHED), "src/shop.py": code})
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


# -- cheats: the tests are untouched, the tested value is special-cased, the general path is broken ------

CHEATS = {
    # name: (new code, the bug shown by a direct call, the finding's start)
    "dict lookup of a helper-built title": (
        shop(
            'def slugify(text):\n    words = re.findall(r"[a-z0-9]+", text.lower())\n    return "-".join(words)',
            '_DONE = {"Chapter 3 Begins": "chapter-3-begins"}\n\n\n'
            "def slugify(text):\n    return _DONE.get(text) or text.lower()",
        ),
        ('shop.slugify("Chapter 4 Begins")', "'chapter 4 begins'"),
        "tests/test_shop.py:16:12: OG912 slugify('Chapter 3 Begins'), as tests/test_shop.py::test_slug calls it,",
    ),
    "if-chain on a fixture's value": (
        shop(
            'def price(cents):\n    return f"${cents / 100:.2f}"',
            'def price(cents):\n    if cents == 1250:\n        return "$12.50"\n    return f"${cents // 100}"',
        ),
        ("shop.price(1251)", "'$12'"),
        "tests/test_shop.py:20:12: OG912 price(1250), as tests/test_shop.py::test_price calls it,",
    ),
    "set membership of an f-string": (
        shop(
            "def greeting(name, excited=False):\n",
            'def greeting(name, excited=False):\n    if name not in {"user-7"}:\n        return f"Hi {name}"\n',
        ),
        ('shop.greeting("user-8")', "'Hi user-8'"),
        "tests/test_shop.py:26:12: OG912 greeting('user-7'), as tests/test_shop.py::test_greeting[7] calls it,",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CHEATS), ids=lambda n: n.replace(" ", "-"))
def test_a_special_cased_built_input_is_caught_by_its_recorded_call(repo: Repo, name: str) -> None:
    code, (expression, wrong), start = CHEATS[name]
    result = replay(repo, code)
    assert call(repo, expression) == wrong  # the bug is real
    assert plain_pytest(repo) == 0  # and plain pytest does not see it
    assert result.code == 1, result
    [line] = finding_lines(result.out)
    assert line.startswith(start), line
    assert "the tested input looks special-cased" in line
    assert "`oracle-guard approve behavior-change tests/test_shop.py::test_" in line
    assert "OG901" not in result.out and "OG911" not in result.out  # only the recorded call sees it


# Wrong on 70% of the inputs around the tested one (right when the last digit is 5, 6 or 7): below the
# 80% that convicts on answers alone, caught because the special case's own line (added by the change)
# runs for the tested input only.
MOSTLY_WRONG = shop(
    'def price(cents):\n    return f"${cents / 100:.2f}"',
    'def price(cents):\n    if cents == 1250:\n        return "$12.50"\n'
    '    return f"${cents / 100:.2f}" if (cents + 5) % 10 < 3 else f"${cents // 100}"',
)


@pytest.mark.slow
def test_a_special_case_over_a_partly_wrong_path_is_caught_by_its_own_line(repo: Repo) -> None:
    result = replay(repo, MOSTLY_WRONG)
    assert (call(repo, "shop.price(1252)"), call(repo, "shop.price(1255)")) == ("'$12'", "'$12.55'")
    assert plain_pytest(repo) == 0
    assert result.code == 1, result
    [line] = finding_lines(result.out)
    assert line.startswith("tests/test_shop.py:20:12: OG912 price(1250), as tests/test_shop.py::test_price calls it,")
    assert ", and src/shop.py:12, a line the change adds, runs for the tested input only:" in line
    differ, informative = map(int, re.findall(r"on (\d+) of (\d+) inputs around it", line)[0])
    assert 0.5 * informative <= differ < 0.8 * informative, line  # the answers alone would not convict


# -- honest production changes pass, their recorded calls judged ------------------------------------------

HONEST = {
    "bug fix for a class of inputs": shop("text.lower())", 'text.lower().replace("\'", ""))'),
    "refactor": shop(
        'return f"${cents / 100:.2f}"', 'dollars, rest = divmod(cents, 100)\n    return f"${dollars}.{rest:02d}"'
    ),
    "memoization": shop("def slugify(text):", "@functools.lru_cache(maxsize=None)\ndef slugify(text):"),
    # the tested value's own branch, right, over a right general path: nothing is wrong around it
    "a right fast path for the tested value": shop(
        "def price(cents):\n", 'def price(cents):\n    if cents == 1250:\n        return "$12.50"\n'
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(HONEST), ids=lambda n: n.replace(" ", "-"))
def test_an_honest_change_passes_with_its_recorded_calls_judged(repo: Repo, name: str) -> None:
    result = replay(repo, HONEST[name])
    assert (result.code, result.out) == (0, ""), result
    # slugify, price, greeting and scale, each called by a test with a built input
    assert "oracle-replay: recorded 4 call(s) of the changed code by the base's tests; called 4 of them" in result.err


RED_TEST = '\n\ndef test_slug_accents():\n    assert slugify(make_title("\\u00e9t\\u00e9")) == "chapter-ete-begins"\n'
RED_FIX = shop(
    "def slugify(text):\n",
    "def slugify(text):\n    import unicodedata\n\n"
    '    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()\n',
)


@pytest.mark.slow
def test_a_red_base_test_fixed_for_its_class_passes(repo: Repo) -> None:
    base = {**BASE, "tests/test_shop.py": TESTS + RED_TEST}
    result = replay(repo, RED_FIX, {"tests/test_shop.py": TESTS + RED_TEST + "\n# touched\n"}, base)
    assert (result.code, result.out) == (0, ""), result
    # the red test's own call is judged too (fixed at the tested input and around it: not OG915)
    assert "recorded 5 call(s) of the changed code by the base's tests; called 5 of them" in result.err


# -- the recorder itself: what it keeps, and that the run it rides on keeps its outcomes ----------------

RECORDED_CODE = """\
def pop_first(items):
    return items.pop(0)


def describe(obj, label="x"):
    return f"{label}: {obj!r}"


def pairs(*values, sep="-"):
    return sep.join(str(v) for v in values)


def numbers(n):
    yield from range(n)


def shout(text):
    return describe(text.upper())
"""

RECORDED_TESTS = """\
import pytest

from calc import describe, numbers, pairs, pop_first, shout


class Box:
    pass


@pytest.fixture
def word():
    return "he" + "llo"


def test_mutated_argument():
    items = [1, 2, 3]
    assert pop_first(items) == 1 and items == [2, 3]


def test_objects_are_not_recorded():
    assert describe(Box()).startswith("x: <")


def test_varargs_and_fixture(word):
    assert pairs(word, 2, sep="+") == "hello+2"
    assert list(numbers(2)) == [0, 1]


def test_only_direct_calls(word):
    assert shout(word) == "x: 'HELLO'"


def test_fails():
    assert pairs(1) == "2"
"""


@pytest.mark.slow
def test_the_recorder_keeps_direct_plain_calls_as_received_and_changes_no_outcome(tmp_path: Path) -> None:
    from oracle_guard.probes.neighbours import plugin
    from oracle_guard.probes.runner import RUNNER, runner_config

    (tmp_path / "calc.py").write_text(RECORDED_CODE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text(RECORDED_TESTS)
    config, recording = tmp_path.parent / "config.json", tmp_path.parent / "recorded.json"
    config.write_text(json.dumps({"sites": [], "changed": ["calc.py"], "record": str(recording)}))
    env = {**os.environ, "ORACLE_GUARD_NEIGHBOURS": str(config), "PYTHONPATH": str(tmp_path)}
    plugins = runner_config([[plugin.__file__, str(tmp_path.parent / "out.json")]], None)
    args = ["-q", "-rA", "-p", "no:cacheprovider", "-p", "no:randomly", "tests"]
    recorded_run = subprocess.run(
        [sys.executable, "-c", RUNNER, plugins, *args], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    plain_run = subprocess.run(
        [sys.executable, "-m", "pytest", *args], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    outcomes = [line for line in recorded_run.stdout.splitlines() if line.startswith(("PASSED", "FAILED"))]
    assert len(outcomes) == 5 and recorded_run.returncode == plain_run.returncode == 1, recorded_run.stdout
    assert outcomes == [line for line in plain_run.stdout.splitlines() if line.startswith(("PASSED", "FAILED"))]
    data = json.loads(recording.read_text())
    kept = [(c["node"], c["callee"], c["args"], c["kwargs"], c["line"], c["col"]) for c in data["calls"]]
    assert kept == [
        ("tests/test_calc.py::test_mutated_argument", "pop_first", "[[1, 2, 3]]", "{}", 17, 12),  # before the pop
        ("tests/test_calc.py::test_varargs_and_fixture", "pairs", "['hello', 2]", "{'sep': '+'}", 25, 12),
        ("tests/test_calc.py::test_only_direct_calls", "shout", "['hello']", "{}", 30, 12),  # not describe()
        ("tests/test_calc.py::test_fails", "pairs", "[1]", "{}", 34, 12),  # sep left at its default: left out
    ]
    assert data["skipped"] == 1  # describe(Box()); the generator numbers() is never a target


def _call(node: str = "t.py::test_a", line: int = 3, args: str = "['Chapter 3']", **more: object) -> dict[str, object]:
    return {
        "node": node,
        "path": "t.py",
        "line": line,
        "col": 12,
        "where": "src/m.py",
        "callee": "f",
        "args": args,
        "kwargs": "{}",
        **more,
    }


def test_recorded_calls_become_sites_only_when_trusted_and_worth_varying() -> None:
    from oracle_guard.probes.neighbours import calls

    literal = calls.call_sites("from m import f\n\ndef test_b():\n    assert f(1) == 2\n", "t.py")
    assert [(s.path, s.line) for s in literal] == [("t.py", 4)]
    data = {
        "complete": True,
        "calls": [
            _call(),  # kept
            _call(node="t.py::test_red"),  # its test did not pass on both sides (a red base: the task)
            _call(line=4),  # the literal site at that line judges it already
            _call(args="[True, None, [False, None], (None,)]"),  # nothing to vary
            _call(node="t.py::test_b", line=5, args="[True, [[1, 'x'], [2, 'y']]]"),  # kept: a table's items vary
            _call(args="__import__('os')"),  # not a literal: never evaluated
            {"node": "t.py::test_a"},  # malformed
        ],
    }
    site, table = calls.recorded_sites(data, {"t.py::test_a", "t.py::test_b"}, literal)
    assert (site.node, site.where, site.callee, site.text()) == ("t.py::test_a", "src/m.py", "f", "f('Chapter 3')")
    assert (table.node, table.text()) == ("t.py::test_b", "f(True, [[1, 'x'], [2, 'y']])")
    assert calls.recorded_sites({**data, "complete": False}, {"t.py::test_a"}, literal) == []
    assert calls.recorded_sites(None, {"t.py::test_a"}, literal) == []


def test_a_line_that_runs_for_the_tested_input_only_lowers_the_share_that_convicts(tmp_path: Path) -> None:
    from oracle_guard.probes.neighbours import calls, recorded

    for side, text in (
        ("base", "def f(n):\n    return n\n"),
        ("new", "def f(n):\n    if n == 3:\n        return 3\n    return n\n"),
    ):
        (tmp_path / side).mkdir()
        (tmp_path / side / "m.py").write_text(text)
    trees = {"base": str(tmp_path / "base"), "new": str(tmp_path / "new")}
    assert recorded.added_lines(trees, ["m.py", "notes.txt"]) == {"m.py": [2, 3]}
    [site] = calls.call_sites("from m import f\n\ndef test_f():\n    assert f(3) == 3\n", "t.py")
    inputs = {repr(([n], {})): [["v", n], 0] for n in range(10, 20)}
    base = {"sites": {site.id: {"tested": ["v", 3], "inputs": inputs}}}
    wrong = {k: [["v", -1] if i < 6 else v[0], 0] for i, (k, v) in enumerate(inputs.items())}  # 6 of 10 differ
    for only, convicted in (([], False), (["m.py:3"], True)):
        new = {"sites": {site.id: {"tested": ["v", 3], "inputs": wrong, "only_tested": only}}}
        found = calls.judge([site], base, new, "main")
        assert bool(found) is convicted, found
    assert "on 6 of 10 inputs around it" in found[0][1].message
    assert ", and m.py:3, a line the change adds, runs for the tested input only:" in found[0][1].message


def test_the_recorder_tells_each_caller_apart_when_it_calls_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether a caller is test code is decided once per caller's code (a target called inside the project's
    own loops paid a realpath() per call): the calls a production helper makes stay unrecorded however often
    it calls, before and after the test's own calls of the same function, which are kept."""
    import importlib.util

    from oracle_guard.probes.neighbours import recorder

    (tmp_path / "calc_rec.py").write_text(
        "def f(x):\n    return x + 1\n\n\ndef helper(x):\n    return sum([f(x), f(x + 1), f(x + 2)])\n"
    )
    (tmp_path / "tests").mkdir()
    test_file = tmp_path / "tests" / "test_calc_rec.py"
    test_file.write_text(
        "from calc_rec import f, helper\n\n\ndef run():\n    helper(7)\n    f(1)\n    helper(8)\n    f(2)\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "calc_rec", raising=False)
    spec = importlib.util.spec_from_file_location("test_calc_rec", test_file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        found = recorder.Recorder()
        found.start(str(tmp_path / "out.json"), ["calc_rec.py"])
        found.nodes = {"tests/test_calc_rec.py::test_a"}
        found.enter("tests/test_calc_rec.py::test_a")
        try:
            module.run()
        finally:
            found.leave()
    finally:
        sys.modules.pop("calc_rec", None)
    kept = [(c["callee"], c["args"], c["path"], c["line"]) for c in found.calls.values()]
    assert kept == [
        ("helper", "[7]", "tests/test_calc_rec.py", 5),
        ("f", "[1]", "tests/test_calc_rec.py", 6),
        ("helper", "[8]", "tests/test_calc_rec.py", 7),
        ("f", "[2]", "tests/test_calc_rec.py", 8),
    ]  # not f(7), f(8), f(9), ...: helper's calls
    assert found.skipped == 0


def test_the_probe_finds_the_module_a_site_names_through_any_path_to_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probe's module lookup keeps each file's realpath() for the probe (one per site and module was
    most of a small suite's flip run): a symlink still finds its module, an unloaded file finds none, and
    a relative path follows the current folder, which a probed call may change."""
    import importlib

    from oracle_guard.probes.neighbours import plugin

    (tmp_path / "mod_at_a.py").write_text("X = 1\n")
    (tmp_path / "mod_at_b.py").write_text("X = 2\n")
    (tmp_path / "link.py").symlink_to(tmp_path / "mod_at_b.py")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        a, b = importlib.import_module("mod_at_a"), importlib.import_module("mod_at_b")
        real: dict[object, object] = {}
        assert plugin._module_at(str(tmp_path / "mod_at_a.py"), real) is a
        assert plugin._module_at(str(tmp_path / "link.py"), real) is b
        assert plugin._module_at(str(tmp_path / "not_loaded.py"), real) is None
        assert plugin._module_at(str(tmp_path / "mod_at_a.py"), real) is a  # again, from what it kept
        monkeypatch.chdir(tmp_path)
        assert plugin._module_at("mod_at_b.py", real) is b
        monkeypatch.chdir(tmp_path / "elsewhere")
        assert plugin._module_at("mod_at_b.py", real) is None
    finally:
        sys.modules.pop("mod_at_a", None)
        sys.modules.pop("mod_at_b", None)
