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
