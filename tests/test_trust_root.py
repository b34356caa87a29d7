"""Trust root and fail-closed input (issue 7): what the patch controls cannot switch the gate off.

Every attack is tried on a real repository next to the honest change closest to it.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hooks import check
from hooks.oracle_shrink import main as shrink_main
from tests.conftest import Repo

TEST = """\
import pytest


def test_price():
    assert parse("12.50") == 1250
    assert parse("0") == 0


def test_garbage():
    with pytest.raises(ValueError, match="not a price"):
        parse("twelve")
"""
T = "tests/test_price.py"


def gate(repo: Repo, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = repo.run(check.main, *args)
    out = capsys.readouterr()
    return code, out.out, out.err


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("oracle-guard: error: "), err
    assert "Traceback" not in err
    return lines[0]


# -- 1. test files that stop being files ------------------------------------------------


def test_a_test_file_replaced_by_a_symlink_to_a_weakened_copy_loses_its_checks(repo: Repo, capsys) -> None:
    repo.write(T, TEST)
    base = repo.commit("base")
    repo.write("docs/price_copy.py", TEST.replace('    assert parse("0") == 0\n', ""))
    (repo.path / T).unlink()
    os.symlink("../docs/price_copy.py", repo.path / T)
    repo.commit("agent")
    code, out, _ = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert code == 1
    assert "OG30" in out and "test_price" in out


def test_a_test_file_replaced_by_a_symlink_to_an_equal_copy_passes(repo: Repo, capsys) -> None:
    repo.write(T, TEST)
    base = repo.commit("base")
    repo.write("docs/price_copy.py", TEST)
    (repo.path / T).unlink()
    os.symlink("../docs/price_copy.py", repo.path / T)
    repo.commit("move the test, keep a link")
    code, out, err = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert code == 0, out + err


def test_a_symlink_in_the_work_tree_is_judged_too(repo: Repo, capsys) -> None:
    repo.write(T, TEST)
    repo.commit("base")
    (repo.path / T).unlink()
    os.symlink("/dev/null", repo.path / T)
    repo.stage()
    code = repo.run(shrink_main, T)
    out = capsys.readouterr().out
    assert code == 1 and "OG302" in out and "test_price" in out


def test_a_test_file_replaced_by_a_fifo_is_a_finding_and_never_blocks(repo: Repo, capsys) -> None:
    repo.write(T, TEST)
    base = repo.commit("base")
    (repo.path / T).unlink()
    os.mkfifo(repo.path / T)
    code, out, err = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert code == 1, out + err
    assert "OG003" in out and "FIFO" in out
    assert "OG302" in out


def test_a_test_file_replaced_by_a_submodule_is_a_finding(repo: Repo, capsys, tmp_path: Path, monkeypatch) -> None:
    repo.write(T, TEST)
    base = repo.commit("base")
    repo.git("rm", "-q", T)
    other = Repo(tmp_path / "other")
    other.path.mkdir()
    other.git("init", "-q")
    other.write("x.py", "x = 1\n")
    sub = other.commit("sub")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sub},{T}")
    repo.git("commit", "-q", "-m", "agent: the test is a submodule now")
    agent = repo.git("rev-parse", "HEAD").strip()
    code, out, err = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert code == 1 and "OG302" in out, out + err
    # pre-push of that commit from elsewhere: git's mode 160000 says what it is
    repo.git("checkout", "-q", base)
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", base)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", agent)
    code, out, err = gate(repo, capsys, "--skip", "collection-snapshot")
    assert code == 1, out + err
    assert "OG003" in out and "submodule" in out
    assert "OG302" in out


def test_a_regular_file_edit_is_not_flagged_as_special(repo: Repo, capsys) -> None:
    repo.write(T, TEST)
    base = repo.commit("base")
    repo.write(T, TEST + "\n\ndef test_more():\n    assert parse('1') == 100\n")
    repo.commit("more tests")
    code, out, err = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert code == 0, out + err


NEWLINE_NAME = "tests/test_price\n.py"


def test_a_test_moved_to_a_name_with_a_newline_is_still_compared(repo: Repo, capsys) -> None:
    repo.write(T, TEST)
    base = repo.commit("base")
    repo.git("rm", "-q", T)
    repo.write(NEWLINE_NAME, TEST.replace('    assert parse("0") == 0\n', ""))
    repo.commit("agent: moved and weakened")
    code, out, err = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert code == 1, out + err
    assert "OG30" in out


def test_a_file_with_a_newline_in_its_name_reads_from_a_commit(repo: Repo, capsys) -> None:
    from hooks import git

    repo.write(NEWLINE_NAME, TEST)
    repo.write(T, TEST)
    repo.commit("base")
    old = os.getcwd()
    os.chdir(repo.path)
    try:
        blobs = git.read_blobs("HEAD", [NEWLINE_NAME, T, "tests/absent\n.py"])
    finally:
        os.chdir(old)
    assert blobs[NEWLINE_NAME] == TEST.encode() and blobs[T] == TEST.encode()
    assert blobs["tests/absent\n.py"] is None


def test_a_test_moved_to_a_name_with_a_newline_unchanged_passes(repo: Repo, capsys) -> None:
    repo.write(T, TEST)
    base = repo.commit("base")
    repo.git("mv", T, NEWLINE_NAME)
    repo.commit("rename")
    code, out, err = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert code == 0, out + err
