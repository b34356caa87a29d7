"""Issue 38, item 1: an agent's commits made WITHOUT the pre-commit hook, judged by `check --replay` alone.

The collection snapshot is the base's record, not a chore: `check` compares what the change collects
with what the base lists and collects (a scratch export of the base, pytest_side/collection/base.py).
New ids and renames the same-test rules pair are one notice with the command that records them; a
removal with a signed approval passes without a snapshot commit; a removal without one is refused,
also when the base's snapshot never listed the test.  Each row is the table of docs/ci.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from oracle_guard.contract.snapshot import format_snapshot
from oracle_guard.hook_ids import collection_snapshot
from tests.contract_helpers import CONTRACT, approve, contract_text, make_key, signers_line
from tests.helpers import Repo

pytestmark = pytest.mark.slow  # real pytest, collection and replay subprocesses

SNAPSHOT = "tests/collection_snapshot.txt"
TESTS = "tests/test_calc.py"
CODE = "def add(a, b):\n    return a + b\n"
BUGGY = "def add(a, b):\n    if a < 0:\n        return 0  # the bug: negatives are lost\n    return a + b\n"
SUITE = (
    "from calc import add\n\n\n"
    "def test_small():\n    assert add(1, 2) == 3\n\n\n"
    "def test_large():\n    assert add(100, 200) == 300\n"
)
NEGATIVE = "\n\ndef test_negative():\n    assert add(-1, -2) == -3\n"
NOTICE = "not brought up to date"


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("GIT_DIR", "GIT_INDEX", "PRE_COMMIT"))}


def gate(repo: Repo, base: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """`oracle-guard check` as CI runs it: a process of its own in the checkout of the change."""
    return subprocess.run(
        (sys.executable, "-m", "oracle_guard", "check", "--base", base, "--python", sys.executable, *extra),
        cwd=repo.path,
        env=_env(),
        capture_output=True,
        text=True,
    )


def plain_pytest(repo: Repo) -> int:
    return subprocess.run(
        (sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"),
        cwd=repo.path,
        env=_env(),
        capture_output=True,
    ).returncode


def record_snapshot(repo: Repo) -> None:
    with repo.cwd():
        found = collection_snapshot.collect(sys.executable)
    assert found is not None and found.items
    repo.write(SNAPSHOT, format_snapshot(found.items))


@pytest.fixture
def adopted(repo: Repo, tmp_path: Path) -> tuple[Repo, Path, str]:
    """A project with its contract, signers and snapshot committed; nobody runs the hook after that."""
    key = make_key(tmp_path)
    repo.write(".gitignore", "__pycache__/\n.pytest_cache/\n")
    repo.write("calc.py", CODE)
    repo.write("tests/__init__.py", "")
    repo.write(TESTS, SUITE)
    repo.write("tests/allowed_signers", signers_line(key))
    repo.write(CONTRACT, contract_text(extra="allowed_signers: tests/allowed_signers\n"))
    record_snapshot(repo)
    return repo, key, repo.commit("adopt oracle-guard")


def _passes_with_one_notice(proc: subprocess.CompletedProcess[str]) -> None:
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "OG8" not in said and "OG9" not in said, said
    assert proc.stderr.count(NOTICE) == 1 and "oracle-guard collection-snapshot --base" in proc.stderr, said


def test_an_added_test_passes_the_replay_gate_on_its_first_push(adopted: tuple[Repo, Path, str]) -> None:
    repo, _, base = adopted
    repo.write(TESTS, SUITE + NEGATIVE)
    repo.commit("a new test, no hook, no snapshot")
    assert SNAPSHOT not in repo.git("diff", "--name-only", base)
    proc = gate(repo, base, "--replay")
    _passes_with_one_notice(proc)
    assert "(3 tests: 1 new id)" in proc.stderr


def test_a_renamed_test_passes_the_replay_gate_on_its_first_push(adopted: tuple[Repo, Path, str]) -> None:
    repo, _, base = adopted
    repo.write(TESTS, SUITE.replace("def test_large", "def test_large_numbers"))
    repo.commit("a clearer name, no hook")
    proc = gate(repo, base, "--replay")
    _passes_with_one_notice(proc)
    assert "1 new id, 1 renamed or retired" in proc.stderr


def test_an_approved_removal_passes_without_a_snapshot_commit(adopted: tuple[Repo, Path, str]) -> None:
    repo, key, base = adopted
    repo.write(TESTS, SUITE[: SUITE.index("\n\ndef test_large")] + "\n")
    approve(repo, key, "test-retire tests/test_calc.py::test_large")
    repo.commit("retire a test, approved, no hook")
    proc = gate(repo, base, "--replay")
    _passes_with_one_notice(proc)


def test_a_removal_without_approval_is_refused_and_an_approval_of_another_id_does_not_help(
    adopted: tuple[Repo, Path, str],
) -> None:
    repo, key, base = adopted
    repo.write(TESTS, SUITE[: SUITE.index("\n\ndef test_large")] + "\n")
    approve(repo, key, "test-retire tests/test_calc.py::test_small")  # not the test that goes
    repo.commit("drop a test")
    proc = gate(repo, base, "--replay")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "OG801 test no longer collected: tests/test_calc.py::test_large" in proc.stdout
    assert NOTICE not in proc.stderr  # a refused change is not told to record anything


@pytest.fixture
def stale_base(adopted: tuple[Repo, Path, str]) -> tuple[Repo, Path, str]:
    """A base whose snapshot missed a test: `test_negative` merged without the hook, and red there (the task)."""
    repo, key, _ = adopted
    repo.write("calc.py", BUGGY)
    repo.write(TESTS, SUITE + NEGATIVE)
    base = repo.commit("the bug and its test, merged by CI alone: the snapshot does not list it")
    assert "test_negative" not in (repo.path / SNAPSHOT).read_text()
    assert plain_pytest(repo) == 1
    return repo, key, base


def test_a_test_the_base_snapshot_missed_cannot_vanish_unapproved(stale_base: tuple[Repo, Path, str]) -> None:
    repo, _, base = stale_base
    repo.write(TESTS, SUITE)  # the cheat: the failing test goes, the bug stays
    repo.commit("make the suite green")
    assert plain_pytest(repo) == 0 and repo.git("diff", base, "--", "calc.py") == ""  # green, bug kept
    proc = gate(repo, base)
    assert proc.returncode == 1 and "OG801 test no longer collected: tests/test_calc.py::test_negative" in proc.stdout
    replayed = gate(repo, base, "--replay")
    assert replayed.returncode == 1 and "OG801" in replayed.stdout, replayed.stdout + replayed.stderr


def test_the_honest_fix_on_a_stale_base_passes(stale_base: tuple[Repo, Path, str]) -> None:
    repo, _, base = stale_base
    repo.write("calc.py", CODE)  # the fix, the base's test kept
    repo.write(TESTS, SUITE + NEGATIVE + "\n\ndef test_zero():\n    assert add(0, 0) == 0\n")
    repo.commit("fix negatives, and one more test")
    proc = gate(repo, base, "--replay")
    _passes_with_one_notice(proc)
    assert "1 test(s)" in proc.stderr and "missing from its snapshot" in proc.stderr


def test_an_approved_removal_of_a_test_the_snapshot_missed_passes(stale_base: tuple[Repo, Path, str]) -> None:
    repo, key, base = stale_base
    repo.write("calc.py", CODE)
    repo.write(TESTS, SUITE)
    approve(repo, key, "test-retire tests/test_calc.py::test_negative")
    repo.commit("retire the negatives test, approved")
    assert gate(repo, base).returncode == 0


def test_a_later_change_is_not_blamed_for_a_removal_merged_before_it(adopted: tuple[Repo, Path, str]) -> None:
    """An approved removal merged without recording leaves its id in the snapshot; the base's source no longer
    defines the test, so the next change, whose approval was spent, is not refused for it."""
    repo, key, _ = adopted
    repo.write(TESTS, SUITE[: SUITE.index("\n\ndef test_large")] + "\n")
    approve(repo, key, "test-retire tests/test_calc.py::test_large")
    base = repo.commit("retired with approval, merged without the hook")
    repo.write("calc.py", CODE + "\n\ndef sub(a, b):\n    return a - b\n")
    repo.commit("unrelated work")
    proc = gate(repo, base)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no longer defines it" in proc.stderr


def test_a_base_that_cannot_be_collected_is_one_line_and_exit_2(adopted: tuple[Repo, Path, str]) -> None:
    repo, _, _ = adopted
    repo.write("pytest.ini", "[pytest]\naddopts = --no-such-option\n")
    base = repo.commit("a base whose pytest does not start")
    repo.write("pytest.ini", "[pytest]\n")
    repo.write(TESTS, SUITE + NEGATIVE)
    repo.commit("the change repairs it and adds a test")
    proc = gate(repo, base)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    errors = [line for line in proc.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "cannot be collected at" in errors[0] and "Traceback" not in proc.stderr
