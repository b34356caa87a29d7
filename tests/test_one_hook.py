"""The one-process hook `oracle-guard hook` (pre-commit id `oracle-guard`), in process."""

from __future__ import annotations

import os
import sys
from typing import NamedTuple

import pytest

from oracle_guard.commands import one_hook
from oracle_guard.pytest_side.collection import partial as partial_collection
from tests.helpers import Repo

TEST = "import pytest\n\n\ndef test_price():\n    assert 2 + 2 == 4\n\n\ndef test_other():\n    assert 'a'.upper() == 'A'\n"
SKIPPED = TEST.replace("def test_price", "@pytest.mark.skip\ndef test_price")
STATIC = ("--skip", "collection-snapshot")  # pytest not run: these tests stay quick


def test_staged_weakening_is_rejected_by_every_hook_in_one_run(repo: Repo) -> None:
    repo.write("tests/test_price.py", TEST)
    repo.commit("base")
    repo.write(
        "tests/test_price.py",
        SKIPPED.replace("    assert 'a'.upper() == 'A'\n", "    return\n    assert 'a'.upper() == 'A'\n"),
    )
    repo.stage()
    code, out, _, _ = repo.hook(one_hook.main, *STATIC, "tests/test_price.py")
    assert code == 1
    assert "tests/test_price.py:4:2: OG101 new skip mark on test_price" in out
    assert "OG202 new early return in test_other" in out and "OG301" in out
    assert out.splitlines()[-1] == "oracle-guard: 3 findings (OG101 x1, OG202 x1, OG301 x1)"


def test_staged_honest_change_passes_with_one_line_or_silently_with_q(repo: Repo) -> None:
    repo.write("tests/test_price.py", TEST)
    repo.commit("base")
    repo.write("tests/test_price.py", TEST.replace("2 + 2 == 4", "2 + 2 == 4\n    assert 3 * 3 == 9"))
    repo.write("src/price.py", "VALUE = 4\n")
    repo.stage()
    passed = repo.hook(one_hook.main, *STATIC, "tests/test_price.py")
    assert (
        passed.code == 0
        and passed.out
        == (
            "oracle-guard: all checks passed (9 hooks; not run: oracle-replay (its own hook id, at pre-push),"
            " collection-snapshot's pytest run (--skip))\n"
        )
        and not passed.err
    )
    assert repo.hook(one_hook.main, *STATIC, "-q", "tests/test_price.py") == (0, "", "", [])


def test_pre_push_range_from_pre_commit_s_environment(repo: Repo, monkeypatch) -> None:
    repo.write("tests/test_price.py", TEST)
    base = repo.commit("base")
    repo.write("tests/test_price.py", SKIPPED)
    repo.commit("weaken")
    repo.write("README", "later\n")
    head = repo.commit("later")
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", base)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", head)
    code, out, _, _ = repo.hook(one_hook.main, *STATIC, "tests/test_price.py")
    assert code == 1 and "OG101 new skip mark on test_price" in out
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", repo.git("rev-parse", "HEAD~1").strip())
    assert repo.hook(one_hook.main, *STATIC, "README").code == 0  # the range after the weakening is clean


def test_a_deleted_test_file_is_judged_without_filenames(repo: Repo) -> None:
    repo.write("tests/test_price.py", TEST)
    repo.write("tests/test_keep.py", "def test_keep():\n    assert 1 + 1 == 2\n")
    repo.commit("base")
    repo.remove("tests/test_price.py")
    code, out, _, _ = repo.hook(one_hook.main, *STATIC)
    assert code == 1 and "OG302 test test_price was removed with its file" in out


def test_only_and_skip_choose_hooks_and_unknown_ids_are_one_line(repo: Repo) -> None:
    repo.write("tests/test_price.py", TEST)
    repo.commit("base")
    repo.write("tests/test_price.py", SKIPPED)
    repo.stage()
    assert repo.hook(one_hook.main, "--only", "forbid-runtime-skip", "tests/test_price.py") == (
        0,
        "oracle-guard: all checks passed (1 hook; not run: forbid-skip-marks, oracle-shrink, fixture-lock-verify,"
        " properties-monotonic, quarantine-untouched, contract-split, forbid-test-aware-code and collection-snapshot"
        " (not in --only), oracle-replay (its own hook id, at pre-push))\n",
        "",
        [],
    )
    code, out, err, _ = repo.hook(one_hook.main, "--only", "forbid-everything")
    assert code == 2 and out == "" and err.count("\n") == 1 and "unknown hook id forbid-everything" in err


@pytest.mark.slow
def test_collects_writes_the_first_snapshot_and_then_passes(repo: Repo, monkeypatch) -> None:
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    repo.write("tests/test_price.py", TEST)
    repo.stage()
    code, out, _, _ = repo.hook(one_hook.main, "--python", sys.executable, "tests/test_price.py")
    assert code == 1 and "tests/collection_snapshot.txt: updated with what pytest collects now (2 tests)" in out
    repo.commit("base with its snapshot")
    repo.write("tests/test_price.py", TEST.replace("2 + 2 == 4", "2 + 2 == 4\n    assert 3 * 3 == 9"))
    repo.stage()
    assert repo.hook(one_hook.main, "--python", sys.executable, "-q", "tests/test_price.py") == (0, "", "", [])
    repo.write("tests/test_price.py", TEST.replace("def test_other", "def _test_other"))  # no longer collected
    repo.stage()
    code, out, _, _ = repo.hook(one_hook.main, "--python", sys.executable, "tests/test_price.py")
    assert code == 1 and "OG801 test no longer collected: tests/test_price.py::test_other" in out


def test_without_file_names_it_finds_the_changed_test_files_itself(repo: Repo) -> None:
    repo.write("tests/test_price.py", TEST)
    repo.write("src/price.py", "VALUE = 4\n")
    repo.commit("base")
    repo.write("tests/test_price.py", SKIPPED)
    repo.write(
        "src/price.py", "import pytest\n\n\n@pytest.mark.skip\ndef test_in_src():\n    assert 1 < 2\n"
    )  # not a test file
    repo.stage()
    code, out, _, _ = repo.hook(one_hook.main, *STATIC)
    assert code == 1 and "tests/test_price.py:4:2: OG101 new skip mark on test_price" in out
    assert "src/price.py" not in out


# -- partial collection: the same snapshot and findings as a full one ---------------

A = """\
import pytest


def helper(value):
    return value * 2


def test_double():
    assert helper(2) == 4


@pytest.mark.parametrize("n", [1, 2, 3])
def test_many(n):
    assert helper(n) == n * 2
"""
B = """\
class TestWords:
    def test_upper(self):
        assert "a".upper() == "A"

    def test_lower(self):
        assert "B".lower() == "b"
"""
C = """\
from test_a import helper


def test_uses_a():
    assert helper(1) == 2
"""
D = "def test_alone():\n    assert [1] * 2 == [1, 1]\n"
# Functions run while collecting, each reached another way (for the collection-inert rule, oracle_guard/analysis/inert.py).
F = """\
import pytest


def make():
    return [1, 2]


def double(value):
    return value * 2


def ready():
    return True


LIMIT = double(2)


def __getattr__(name):
    raise AttributeError(name)


@pytest.mark.parametrize("n", make())
def test_cases(n, k=1):
    assert n * k > 0


@pytest.mark.skipif("not ready()")
def test_ready():
    assert LIMIT == 4


class TestMade:
    @staticmethod
    def build():
        return [3]


class TestUses:
    CASES = TestMade.build()

    @pytest.mark.parametrize("n", CASES)
    def test_built(self, n):
        assert n == 3
"""
G = """\
def pytest_generate_tests(metafunc):
    if "x" in metafunc.fixturenames:
        metafunc.parametrize("x", [1, 2])


def test_x(x):
    assert x
"""
BASE_FILES = {"tests/test_a.py": A, "tests/test_b.py": B, "tests/test_c.py": C, "tests/test_d.py": D}
BASE_FILES.update({"tests/test_f.py": F, "tests/test_g.py": G, "tests/helpers.py": "VALUE = 1\n"})
HELPER = "\n\ndef _bench_helper_{n}(value):\n    return value * {n}\n"

# name -> (files written after the base, the modules the partial plan collects (None: no plan),
# whether the change is collection-inert: pytest does not run at all)
SHAPES: dict[str, tuple[dict[str, str], list[str] | None, bool]] = {
    "honest body edits": (
        {"tests/test_b.py": B.replace('"A"', '"A"\n        assert "ab".upper() == "AB"'), "tests/test_d.py": D + "\n"},
        ["tests/test_b.py", "tests/test_d.py"],
        True,
    ),
    "a changed assert": (
        {"tests/test_d.py": D.replace("* 2 == [1, 1]", "* 3 == [1, 1, 1]")},
        ["tests/test_d.py"],
        True,
    ),
    "new private helpers": (
        {
            "tests/test_b.py": B + "\n    def _helper(self):\n        return 1\n" + HELPER.format(n=2),
            "tests/test_d.py": D + HELPER.format(n=3),
            "tests/test_f.py": F + HELPER.format(n=4),
            "tests/test_g.py": G + HELPER.format(n=5),  # pytest_generate_tests: a hook, so no plan at all
        },
        None,
        False,
    ),
    "new private helpers, no hook module": (
        {
            "tests/test_b.py": B + "\n    def _helper(self):\n        return 1\n" + HELPER.format(n=2),
            "tests/test_d.py": D + HELPER.format(n=3),
            "tests/test_f.py": F + HELPER.format(n=4),
        },
        ["tests/test_b.py", "tests/test_d.py", "tests/test_f.py"],
        True,
    ),
    "a test body edit beside functions run while collecting": (
        {"tests/test_f.py": F.replace("assert LIMIT == 4", "assert LIMIT == 4\n    assert LIMIT > 3")},
        ["tests/test_f.py"],
        True,
    ),
    "a new test and a new case": (
        {
            "tests/test_d.py": D + "\n\ndef test_more():\n    assert 3 > 2\n",
            "tests/test_b.py": B + "\n    def test_title(self):\n        assert 'a b'.title() == 'A B'\n",
        },
        ["tests/test_b.py", "tests/test_d.py"],
        False,
    ),
    "a deleted test": ({"tests/test_d.py": "def _test_alone():\n    assert True\n"}, ["tests/test_d.py"], False),
    "a new skip mark": (
        {
            "tests/test_b.py": "import pytest\n\n\n"
            + B.replace("    def test_lower", "    @pytest.mark.skip\n    def test_lower")
        },
        ["tests/test_b.py"],
        False,
    ),
    "a parametrize range cut": (
        {"tests/test_a.py": A.replace("[1, 2, 3]", "[1, 2]")},
        ["tests/test_a.py", "tests/test_c.py"],  # test_c imports test_a: collected too
        False,
    ),
    "a helper of a module another imports": (
        {"tests/test_a.py": A.replace("return value * 2", "return value + value")},
        ["tests/test_a.py", "tests/test_c.py"],
        False,
    ),
    "a helper called at module level": (
        {"tests/test_f.py": F.replace("return value * 2", "return value * 3")},
        ["tests/test_f.py"],
        False,
    ),
    "a helper called in parametrize": (
        {"tests/test_f.py": F.replace("return [1, 2]", "return [1, 2, 5]")},
        ["tests/test_f.py"],
        False,
    ),
    "a helper called in a skipif string": (
        {"tests/test_f.py": F.replace("return True", "return False")},
        ["tests/test_f.py"],
        False,
    ),
    "a method called as Cls.make() at class level": (
        {"tests/test_f.py": F.replace("return [3]", "return [3, 6]")},
        ["tests/test_f.py"],
        False,
    ),
    "a module __getattr__ body": (
        {"tests/test_f.py": F.replace("raise AttributeError(name)", "raise AttributeError(f'no {name}')")},
        ["tests/test_f.py"],
        False,
    ),
    "yield added to a test": ({"tests/test_d.py": D + "    yield\n"}, ["tests/test_d.py"], False),
    "a new decorated helper": (
        {"tests/test_f.py": F + "\n\n@pytest.fixture\ndef _extra():\n    return 1\n"},
        ["tests/test_f.py"],
        False,
    ),
    "a changed decorator": (
        {
            "tests/test_f.py": F.replace(
                '@pytest.mark.skipif("not ready()")', '@pytest.mark.skipif("not ready()", reason="r")'
            )
        },
        ["tests/test_f.py"],
        False,
    ),
    "a changed default": ({"tests/test_f.py": F.replace("k=1", "k=2")}, ["tests/test_f.py"], False),
    "a changed signature": (
        {"tests/test_f.py": F.replace("(n, k=1)", "(n, request, k=1)")},
        ["tests/test_f.py"],
        False,
    ),
    "a pytest_generate_tests body": ({"tests/test_g.py": G.replace("[1, 2]", "[1, 2, 3]")}, None, False),
    "a collection error": ({"tests/test_d.py": "BROKEN = 1 / 0\n" + D}, ["tests/test_d.py"], False),  # then a full run
    "a syntax error": ({"tests/test_d.py": D + "\ndef broken(:\n"}, None, False),
    "a helper module": ({"tests/helpers.py": "VALUE = 2\n", "tests/test_d.py": D + "\n"}, None, False),
    "a conftest": ({"tests/conftest.py": "collect_ignore = ['test_d.py']\n"}, None, False),
    "a new test module": ({"tests/test_e.py": "def test_e():\n    assert 1\n"}, None, False),
    "a side effect at import": (
        {"tests/test_d.py": "import os\n\nos.environ['OG_PARTIAL'] = '1'\n\n\n" + D},
        None,
        False,
    ),
    "a module-level hook": (
        {"tests/test_d.py": D + "\n\ndef pytest_collection_modifyitems(items):\n    pass\n"},
        None,
        False,
    ),
}


def _recorded_base(repo: Repo, monkeypatch, files: dict[str, str] | None = None, count: int = 14) -> None:
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("PYTEST_PLUGINS", raising=False)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    for path, text in (files or BASE_FILES).items():
        repo.write(path, text)
    repo.stage()
    code, out, _, _ = repo.hook(one_hook.main, "--python", sys.executable, "--collect-all")
    assert code == 1 and f"updated with what pytest collects now ({count} tests)" in out
    repo.commit("base with its snapshot")


class Both(NamedTuple):
    """The hook's partial and full runs on the same staged change."""

    plan: partial_collection.Plan | None
    partial: tuple[int, str, str, bytes]  # code, out, err, the snapshot's bytes
    full: tuple[int, str, str, bytes]
    collected: bool  # whether the partial run had pytest collect anything


def _both(repo: Repo, monkeypatch, whole_list: bool = False) -> Both:
    from oracle_guard.hook_ids import collection_snapshot

    planned: list[partial_collection.Plan | None] = []
    spliced: list[object] = []
    results: list[str] = []
    plan, splice, result = partial_collection.plan, partial_collection.splice, collection_snapshot._Run.result

    def plan_spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        planned.append(plan(*args, **kwargs))
        return planned[-1]

    def splice_spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        spliced.append(splice(*args, **kwargs))
        return spliced[-1]

    def result_spy(run, *args, **kwargs):  # type: ignore[no-untyped-def]
        results.append(run.out_path)  # a pytest run's collection is read
        return result(run, *args, **kwargs)

    monkeypatch.setattr(partial_collection, "plan", plan_spy)
    monkeypatch.setattr(partial_collection, "splice", splice_spy)
    monkeypatch.setattr(collection_snapshot._Run, "result", result_spy)
    snap = repo.path / "tests/collection_snapshot.txt"
    before = snap.read_bytes()
    runs = []
    collected = []
    for argv in ((), ("--collect-all",)):
        snap.write_bytes(before)
        results.clear()
        code, out, err, _ = repo.hook(one_hook.main, "--python", sys.executable, *argv)
        runs.append((code, out, err, snap.read_bytes()))
        collected.append(bool(results))
    assert len(planned) == 1  # --collect-all never plans
    assert collected[1]  # a full collection always runs pytest
    inert = planned[0] is not None and planned[0].inert
    assert collected[0] == (not inert)
    # A plan is spliced unless it is inert, or the partial run meets a collection error or a
    # plugin acting on the whole item list (then a full run answers).
    ok = planned[0] is not None and not inert and runs[0][0] != 2 and "OG803" not in runs[0][1] and not whole_list
    assert bool(spliced and spliced[0] is not None) == ok
    return Both(planned[0], runs[0], runs[1], collected[0])


@pytest.mark.slow
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_partial_collection_gives_the_full_snapshot_and_findings(repo: Repo, monkeypatch, shape: str) -> None:
    _recorded_base(repo, monkeypatch)
    after, expected_modules, inert = SHAPES[shape]
    for path, text in after.items():
        repo.write(path, text)
    repo.stage()
    both = _both(repo, monkeypatch)
    assert (both.plan.modules if both.plan else None) == expected_modules
    assert (both.plan is not None and both.plan.inert) == inert
    assert both.collected == (not inert)  # an inert change: pytest collects nothing
    assert both.partial == both.full  # exit code, output, errors and the snapshot's bytes


@pytest.mark.slow
def test_a_new_helper_is_collected_when_python_functions_matches_it(repo: Repo, monkeypatch) -> None:
    repo.write("pytest.ini", "[pytest]\npython_functions = *\n")
    repo.commit("every function is a test")
    _recorded_base(repo, monkeypatch, {"tests/test_d.py": D}, count=1)
    repo.write("tests/test_d.py", D + "\n\ndef _helper():\n    return 1\n")
    repo.stage()
    both = _both(repo, monkeypatch)
    assert both.plan == partial_collection.Plan(["tests/test_d.py"], inert=False) and both.collected
    assert both.partial == both.full and "(2 tests)" in both.partial[1]


@pytest.mark.slow
def test_partial_collection_sees_unstaged_and_untracked_files_as_pytest_does(repo: Repo, monkeypatch) -> None:
    _recorded_base(repo, monkeypatch)
    repo.write("tests/test_d.py", D + "\n")
    repo.stage()
    repo.write("tests/test_b.py", B.replace("    def test_lower", "    def _test_lower"))  # unstaged
    both = _both(repo, monkeypatch)
    assert both.plan == partial_collection.Plan(["tests/test_b.py", "tests/test_d.py"], inert=False)
    assert both.partial == both.full and "OG801" in both.partial[1]
    repo.write("tests/test_b.py", B)
    repo.write("tests/test_new.py", "def test_new():\n    assert 1\n")  # untracked: pytest collects it
    both = _both(repo, monkeypatch)
    assert both.plan is None and both.partial == both.full


@pytest.mark.slow
def test_partial_collection_falls_back_for_plugins_named_in_the_environment(repo: Repo, monkeypatch) -> None:
    _recorded_base(repo, monkeypatch)
    repo.write("tests/test_d.py", D + "\n")
    repo.stage()
    monkeypatch.setenv("PYTEST_ADDOPTS", "-q")
    both = _both(repo, monkeypatch)
    assert both.plan is None and both.partial == both.full


@pytest.mark.slow
def test_partial_collection_falls_back_for_hooks_on_the_whole_item_list(repo: Repo, monkeypatch) -> None:
    # A plugin that deselects by looking across items: found by the run, which then collects everything.
    repo.write(
        "plug.py", "def pytest_collection_modifyitems(config, items):\n    if len(items) < 8:\n        del items[:]\n"
    )
    repo.write("pytest.ini", "[pytest]\naddopts = -p plug\n")
    _recorded_base(repo, monkeypatch)
    repo.write("tests/test_d.py", D + "\n")
    repo.stage()
    both = _both(repo, monkeypatch, whole_list=True)  # collection-inert: pytest does not run
    assert both.plan == partial_collection.Plan(["tests/test_d.py"], inert=True) and not both.collected
    assert both.partial == both.full and both.partial[0] == 0
    repo.write("tests/test_d.py", "LIMIT = 2\n\n\n" + D)  # not inert: the partial run meets the plugin
    repo.stage()
    both = _both(repo, monkeypatch, whole_list=True)
    assert both.plan == partial_collection.Plan(["tests/test_d.py"], inert=False) and both.collected
    assert both.partial == both.full and both.partial[0] == 0
    # A conftest.py naming one: the partial run might not load it, so no plan at all.
    repo.write("tests/conftest.py", "def pytest_collection_modifyitems(items):\n    items.sort(key=str)\n")
    repo.write("pytest.ini", "[pytest]\n")
    repo.commit("a conftest with a whole-list hook")
    repo.write("tests/test_d.py", D + "\n\n")
    repo.stage()
    both = _both(repo, monkeypatch)
    assert both.plan is None and both.partial == both.full


# -- the collection-inert rule itself (oracle_guard/analysis/inert.py), without pytest -----------------

INERT_EDITS = {
    "a test body": ("assert LIMIT == 4", "assert LIMIT == 4\n    assert LIMIT > 3"),
    "a changed assert": ("assert n * k > 0", "assert n * k >= 1"),
    "a comment": ("def test_ready():\n", "def test_ready():\n    # ready or not\n"),
    "a method body": ("assert n == 3", "assert n in (3,)"),
    "a new private helper": ("\nclass TestMade:", "\ndef _helper(value):\n    return value\n\n\nclass TestMade:"),
    "a new private method": ("        return [3]\n", "        return [3]\n\n    def _other(self):\n        return 1\n"),
}
NOT_INERT_EDITS = {
    "a helper called at module level": ("return value * 2", "return value * 3"),
    "a helper called in parametrize": ("return [1, 2]", "return [1, 2, 5]"),
    "a helper called in a skipif string": ("return True", "return False"),
    "Cls.make() at class level": ("return [3]", "return [3, 6]"),
    "a module __getattr__": ("raise AttributeError(name)", "raise AttributeError(f'no {name}')"),
    "yield added": ("assert LIMIT == 4", "assert LIMIT == 4\n    yield"),
    "a new test": ("\nclass TestMade:", "\ndef test_new():\n    assert 1\n\n\nclass TestMade:"),
    "a new decorated helper": (
        "\nclass TestMade:",
        "\n@pytest.fixture\ndef _extra():\n    return 1\n\n\nclass TestMade:",
    ),
    "a new helper with a docstring": ("\nclass TestMade:", '\ndef _doc():\n    """>>> 1"""\n\n\nclass TestMade:'),
    "a new function shadowing a class": ("\nclass TestUses:", "\ndef TestMade():\n    return 1\n\n\nclass TestUses:"),
    "a changed decorator": ('skipif("not ready()")', 'skipif("not ready()", reason="r")'),
    "a changed default": ("k=1", "k=2"),
    "a changed signature": ("(n, k=1)", "(n, request, k=1)"),
    "a changed docstring": ("def test_ready():\n", 'def test_ready():\n    """>>> 1 + 1\n    2\n    """\n'),
    "a module-level statement": ("LIMIT = double(2)", "LIMIT = double(3)"),
    "a syntax error": ("LIMIT = double(2)", "LIMIT = double(2"),
}


@pytest.mark.parametrize("edit", sorted(INERT_EDITS))
def test_collection_inert_edits(edit: str) -> None:
    from oracle_guard.analysis import inert

    old, new = INERT_EDITS[edit]
    assert old in F
    assert inert.is_inert(F.encode(), F.replace(old, new, 1).encode(), ["test"])


@pytest.mark.parametrize("edit", sorted(NOT_INERT_EDITS))
def test_edits_that_may_change_collection_are_not_inert(edit: str) -> None:
    from oracle_guard.analysis import inert

    old, new = NOT_INERT_EDITS[edit]
    assert old in F
    assert not inert.is_inert(F.encode(), F.replace(old, new, 1).encode(), ["test"])


def test_inert_rule_edge_cases() -> None:
    from oracle_guard.analysis import inert

    base = "import pytest\n\n\ndef test_a():\n    assert 1\n"
    helper = base + "\n\ndef _helper():\n    return 1\n"
    assert inert.is_inert(base.encode(), helper.encode(), ["test"])
    assert inert.is_inert(helper.encode(), base.encode(), ["test"])  # removed, as well as added
    assert not inert.is_inert(base.encode(), helper.encode(), ["*"])  # python_functions = * collects it
    assert not inert.is_inert(base.encode(), helper.encode(), ["_h"])  # a prefix
    assert inert.is_inert(base.encode(), helper.encode(), ["check_*"])
    hook = base + "\n\ndef pytest_generate_tests(metafunc):\n    pass\n"
    assert not inert.is_inert(hook.encode(), hook.replace("pass", "return").encode(), ["test"])
    dynamic = base + "\nNAMES = sorted(globals())\n"
    assert not inert.is_inert(dynamic.encode(), dynamic.replace("assert 1", "assert 2").encode(), ["test"])
    evaluated = base.replace("def test_a", "@pytest.mark.skipif(\"'_helper' in globals()\")\ndef test_a")
    assert not inert.is_inert(evaluated.encode(), evaluated.replace("assert 1", "assert 2").encode(), ["test"])
    data = base + "\nSOURCE = 'print(dir(), globals())'\n"  # test data, never evaluated while collecting
    assert inert.is_inert(data.encode(), data.replace("assert 1", "assert 2").encode(), ["test"])
    computed = base + "\nX = getattr(pytest, 'ma' + 'rk')\n"
    assert not inert.is_inert(computed.encode(), computed.replace("assert 1", "assert 2").encode(), ["test"])
    aliased = "import pytest as pt\n\n\n@pt.fixture\ndef value():\n    return 1\n"
    assert not inert.is_inert(aliased.encode(), aliased.replace("1", "2").encode(), ["test"])
    fixture = aliased.replace("import pytest as pt", "import pytest").replace("@pt.", "@pytest.")
    assert inert.is_inert(fixture.encode(), fixture.replace("1", "2").encode(), ["test"])
    generator = fixture.replace("return 1", "yield 1")
    assert not inert.is_inert(fixture.encode(), generator.encode(), ["test"])
    assert inert.is_inert(generator.encode(), generator.replace("yield 1", "yield 2").encode(), ["test"])


def test_methods_of_classes_whose_creation_runs_unseen_code_are_not_inert() -> None:
    from oracle_guard.analysis import inert

    cls = "import unittest\n\nimport base\n\n\nclass TestA({}):\n    def make(self):\n        return [1]\n"
    for plain in ("", "object", "unittest.TestCase"):
        source = cls.format(plain)
        assert inert.is_inert(source.encode(), source.replace("[1]", "[2]").encode(), ["test"])
    # A base's __init_subclass__, a metaclass or a class decorator may call make() at import time.
    for opaque in ("base.Base", "metaclass=base.Meta"):
        source = cls.format(opaque)
        assert not inert.is_inert(source.encode(), source.replace("[1]", "[2]").encode(), ["test"])
    decorated = "import base\n\n\n@base.register\nclass TestA:\n    def make(self):\n        return [1]\n"
    assert not inert.is_inert(decorated.encode(), decorated.replace("[1]", "[2]").encode(), ["test"])
    local = "class Base:\n    def __init_subclass__(cls):\n        cls.cases = cls.make()\n\n\n" + cls.format("Base")
    assert not inert.is_inert(local.encode(), local.replace("[1]", "[2]").encode(), ["test"])
    quiet = "class Base:\n    pass\n\n\n" + cls.format("Base")  # a plain base of this module
    assert inert.is_inert(quiet.encode(), quiet.replace("[1]", "[2]").encode(), ["test"])


def test_inert_needs_a_readable_configuration_and_pytest_where_it_would_run(repo: Repo, tmp_path) -> None:
    with repo.cwd():
        assert partial_collection.python_functions() == ["test"]
        repo.write("pytest.ini", "[pytest]\npython_functions = check_ test\n")
        assert partial_collection.python_functions() == ["check_", "test"]
        repo.write("pytest.ini", "[pytest]\naddopts = -o python_functions=*\n")
        assert partial_collection.python_functions() is None  # overridden on the command line
        repo.write("pytest.ini", "[pytest]\naddopts = --testmon\n")
        assert partial_collection.python_functions() is None  # selects by what changed
    assert partial_collection.has_pytest(sys.executable)  # the tests' own environment
    assert not partial_collection.has_pytest(str(tmp_path / "bin" / "python"))


P = 'pytest_plugins = "pytester"\n\n\ndef test_p(pytester):\n    assert pytester\n'
DROP = (
    "def pytest_collection_modifyitems(config, items):\n    items[:] = [i for i in items if 'test_d' not in i.nodeid]\n"
)


@pytest.mark.slow
def test_a_module_with_import_time_effects_is_inert_only_when_its_import_is_the_same(repo: Repo, monkeypatch) -> None:
    # pytest_plugins loads a plugin for the whole session: such a module is never spliced, but a change
    # that leaves its import-time code as it was (a new private helper) collects what the base did.
    _recorded_base(repo, monkeypatch, {**BASE_FILES, "tests/test_p.py": P, "tests/plug_drop.py": DROP}, count=15)
    repo.write("tests/test_p.py", P + HELPER.format(n=2))
    repo.stage()
    both = _both(repo, monkeypatch)
    assert both.plan == partial_collection.Plan(["tests/test_p.py"], inert=True) and not both.collected
    assert both.partial == both.full and both.partial[0] == 0
    # The plugin it loads changed: a session-wide effect, so everything is collected (test_d's tests are gone).
    repo.write("tests/test_p.py", P.replace('"pytester"', '["pytester", "plug_drop"]') + HELPER.format(n=2))
    repo.stage()
    both = _both(repo, monkeypatch)
    assert both.plan is None and both.collected
    assert both.partial == both.full and "OG801" in both.partial[1] and "test_d.py::test_alone" in both.partial[1]
    # A new test beside it is not inert: collected in full too, not spliced.
    repo.write("tests/test_p.py", P + "\n\ndef test_q():\n    assert 1\n")
    repo.stage()
    both = _both(repo, monkeypatch)
    assert both.plan is None and both.collected and both.partial == both.full


@pytest.mark.parametrize("edit", sorted(INERT_EDITS) + sorted(NOT_INERT_EDITS))
def test_the_inert_proof_leaves_the_trees_it_reads_as_they_were(edit: str) -> None:
    """The proof rewrites bodies while it compares; the rules read the same trees (pysource.shared_tree) after it."""
    import ast

    from oracle_guard.analysis import inert

    old, new = INERT_EDITS.get(edit) or NOT_INERT_EDITS[edit]
    sources = F.encode(), F.replace(old, new, 1).encode()
    try:
        trees = [ast.parse(s) for s in sources]
    except SyntaxError:
        assert edit == "a syntax error"
        return
    before = [ast.dump(t, include_attributes=True) for t in trees]
    assert inert.is_inert(trees[0], trees[1], ["test"]) is (edit in INERT_EDITS)  # the answer from sources, too
    assert [ast.dump(t, include_attributes=True) for t in trees] == before


@pytest.mark.slow
def test_a_runtime_skip_in_an_inert_change_is_still_refused(repo: Repo, monkeypatch) -> None:
    """pytest need not run for a skip added to a test's body (its collection is the same), and the rules that read
    the same trees after the proof still find the skip; a helper added passes."""
    _recorded_base(repo, monkeypatch)
    planned: list[partial_collection.Plan | None] = []
    plan = partial_collection.plan

    def plan_spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        planned.append(plan(*args, **kwargs))
        return planned[-1]

    monkeypatch.setattr(partial_collection, "plan", plan_spy)
    assert "def test_ready():\n" in F
    repo.write("tests/test_f.py", F.replace("def test_ready():\n", 'def test_ready():\n    pytest.skip("later")\n'))
    repo.stage()
    code, out, _, _ = repo.hook(one_hook.main, "--python", sys.executable)
    assert planned[-1] is not None and planned[-1].inert  # proved without pytest, on the shared trees
    assert code == 1 and "OG201 new runtime skip `pytest.skip('later')` in test_ready" in out, out
    repo.write("tests/test_f.py", F + HELPER.format(n=2))
    repo.stage()
    code, out, _, _ = repo.hook(one_hook.main, "--python", sys.executable, "-q")
    assert planned[-1] is not None and planned[-1].inert
    assert (code, out) == (0, "")
