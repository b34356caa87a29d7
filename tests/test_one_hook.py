"""The one-process hook `oracle-guard hook` (pre-commit id `oracle-guard`), in process."""

from __future__ import annotations

import os
import sys

import pytest

from hooks import one_hook
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


def test_staged_honest_change_passes_silently(repo: Repo) -> None:
    repo.write("tests/test_price.py", TEST)
    repo.commit("base")
    repo.write("tests/test_price.py", TEST.replace("2 + 2 == 4", "2 + 2 == 4\n    assert 3 * 3 == 9"))
    repo.write("src/price.py", "VALUE = 4\n")
    repo.stage()
    assert repo.hook(one_hook.main, *STATIC, "tests/test_price.py") == (0, "", "", [])


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
    assert repo.hook(one_hook.main, "--only", "forbid-runtime-skip", "tests/test_price.py") == (0, "", "", [])
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
    assert repo.hook(one_hook.main, "--python", sys.executable, "tests/test_price.py") == (0, "", "", [])
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
BASE_FILES = {"tests/test_a.py": A, "tests/test_b.py": B, "tests/test_c.py": C, "tests/test_d.py": D}
BASE_FILES["tests/helpers.py"] = "VALUE = 1\n"

# name -> (files written after the base, whether the partial plan applies, which modules it collects)
SHAPES: dict[str, tuple[dict[str, str], list[str] | None]] = {
    "honest body edits": (
        {"tests/test_b.py": B.replace('"A"', '"A"\n        assert "ab".upper() == "AB"'), "tests/test_d.py": D + "\n"},
        ["tests/test_b.py", "tests/test_d.py"],
    ),
    "a new test and a new case": (
        {
            "tests/test_d.py": D + "\n\ndef test_more():\n    assert 3 > 2\n",
            "tests/test_b.py": B + "\n    def test_title(self):\n        assert 'a b'.title() == 'A B'\n",
        },
        ["tests/test_b.py", "tests/test_d.py"],
    ),
    "a deleted test": ({"tests/test_d.py": "def _test_alone():\n    assert True\n"}, ["tests/test_d.py"]),
    "a new skip mark": (
        {
            "tests/test_b.py": "import pytest\n\n\n"
            + B.replace("    def test_lower", "    @pytest.mark.skip\n    def test_lower")
        },
        ["tests/test_b.py"],
    ),
    "a parametrize range cut": (
        {"tests/test_a.py": A.replace("[1, 2, 3]", "[1, 2]")},
        ["tests/test_a.py", "tests/test_c.py"],  # test_c imports test_a: collected too
    ),
    "a collection error": ({"tests/test_d.py": "BROKEN = 1 / 0\n" + D}, ["tests/test_d.py"]),  # then a full run
    "a syntax error": ({"tests/test_d.py": D + "\ndef broken(:\n"}, None),
    "a helper module": ({"tests/helpers.py": "VALUE = 2\n", "tests/test_d.py": D + "\n"}, None),
    "a conftest": ({"tests/conftest.py": "collect_ignore = ['test_d.py']\n"}, None),
    "a new test module": ({"tests/test_e.py": "def test_e():\n    assert 1\n"}, None),
    "a side effect at import": (
        {"tests/test_d.py": "import os\n\nos.environ['OG_PARTIAL'] = '1'\n\n\n" + D},
        None,
    ),
    "a module-level hook": ({"tests/test_d.py": D + "\n\ndef pytest_collection_modifyitems(items):\n    pass\n"}, None),
}


def _recorded_base(repo: Repo, monkeypatch) -> None:
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("PYTEST_PLUGINS", raising=False)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    for path, text in BASE_FILES.items():
        repo.write(path, text)
    repo.stage()
    code, out, _, _ = repo.hook(one_hook.main, "--python", sys.executable, "--collect-all")
    assert code == 1 and "updated with what pytest collects now (8 tests)" in out
    repo.commit("base with its snapshot")


def _both(repo: Repo, monkeypatch, whole_list: bool = False) -> tuple[list[str] | None, tuple, tuple]:  # type: ignore[type-arg]
    """The hook's partial and full runs on the same staged change: (plan, partial's, full's) code, out, snapshot."""
    from hooks import partial_collection

    planned: list[list[str] | None] = []
    spliced: list[object] = []
    plan, splice = partial_collection.plan, partial_collection.splice

    def plan_spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        planned.append(plan(*args, **kwargs))
        return planned[-1]

    def splice_spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        spliced.append(splice(*args, **kwargs))
        return spliced[-1]

    monkeypatch.setattr(partial_collection, "plan", plan_spy)
    monkeypatch.setattr(partial_collection, "splice", splice_spy)
    snap = repo.path / "tests/collection_snapshot.txt"
    before = snap.read_bytes()
    runs = []
    for argv in ((), ("--collect-all",)):
        snap.write_bytes(before)
        code, out, err, _ = repo.hook(one_hook.main, "--python", sys.executable, *argv)
        runs.append((code, out, err, snap.read_bytes()))
    assert len(planned) == 1  # --collect-all never plans
    # A plan is spliced unless the partial run meets a collection error or a plugin
    # acting on the whole item list (then a full run answers).
    ok = planned[0] is not None and runs[0][0] != 2 and "OG803" not in runs[0][1] and not whole_list
    assert bool(spliced and spliced[0] is not None) == ok
    return planned[0], runs[0], runs[1]


@pytest.mark.slow
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_partial_collection_gives_the_full_snapshot_and_findings(repo: Repo, monkeypatch, shape: str) -> None:
    _recorded_base(repo, monkeypatch)
    after, expected_plan = SHAPES[shape]
    for path, text in after.items():
        repo.write(path, text)
    repo.stage()
    planned, partial, full = _both(repo, monkeypatch)
    assert planned == expected_plan
    assert partial == full  # exit code, output, errors and the snapshot's bytes


@pytest.mark.slow
def test_partial_collection_sees_unstaged_and_untracked_files_as_pytest_does(repo: Repo, monkeypatch) -> None:
    _recorded_base(repo, monkeypatch)
    repo.write("tests/test_d.py", D + "\n")
    repo.stage()
    repo.write("tests/test_b.py", B.replace("    def test_lower", "    def _test_lower"))  # unstaged
    planned, partial, full = _both(repo, monkeypatch)
    assert planned == ["tests/test_b.py", "tests/test_d.py"]
    assert partial == full and "OG801" in partial[1]
    repo.write("tests/test_b.py", B)
    repo.write("tests/test_new.py", "def test_new():\n    assert 1\n")  # untracked: pytest collects it
    planned, partial, full = _both(repo, monkeypatch)
    assert planned is None and partial == full


@pytest.mark.slow
def test_partial_collection_falls_back_for_plugins_named_in_the_environment(repo: Repo, monkeypatch) -> None:
    _recorded_base(repo, monkeypatch)
    repo.write("tests/test_d.py", D + "\n")
    repo.stage()
    monkeypatch.setenv("PYTEST_ADDOPTS", "-q")
    planned, partial, full = _both(repo, monkeypatch)
    assert planned is None and partial == full


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
    planned, partial, full = _both(repo, monkeypatch, whole_list=True)
    assert planned == ["tests/test_d.py"] and partial == full and partial[0] == 0
    # A conftest.py naming one: the partial run might not load it, so no plan at all.
    repo.write("tests/conftest.py", "def pytest_collection_modifyitems(items):\n    items.sort(key=str)\n")
    repo.write("pytest.ini", "[pytest]\n")
    repo.commit("a conftest with a whole-list hook")
    repo.write("tests/test_d.py", D + "\n\n")
    repo.stage()
    planned, partial, full = _both(repo, monkeypatch)
    assert planned is None and partial == full
