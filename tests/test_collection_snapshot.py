"""collection-snapshot: real pytest subprocesses on temporary projects.

Every bypass of issue 4 item 2 is rejected, and the honest neighbours (a new
test, a new parametrize case, a test moved between files) are accepted once
the hook has written the snapshot and it is staged.  The baseline snapshot is
written by hand (format_snapshot) to spend one pytest run per test, not two;
test_baseline_snapshot_matches_what_pytest_collects proves it is the truth.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracle_guard.contract import snapshot
from oracle_guard.contract.snapshot import format_snapshot, parse_snapshot
from oracle_guard.hook_ids import collection_snapshot as cs
from oracle_guard.hook_ids.collection_snapshot import main
from tests.helpers import Repo

PY = ("--python", sys.executable)
SNAP = "tests/collection_snapshot.txt"

TEST_A = """\
import pytest


@pytest.mark.parametrize("n", [1, 2, 3])
def test_square(n):
    assert n * n >= n


def test_plain():
    assert sum([1, 2]) == 3


class TestGroup:
    def test_member(self):
        assert "a" < "b"
"""
TEST_B = """\
def test_other():
    assert len("ab") == 2
"""
BASELINE = {
    "tests/test_a.py::test_square[1]": "run",
    "tests/test_a.py::test_square[2]": "run",
    "tests/test_a.py::test_square[3]": "run",
    "tests/test_a.py::test_plain": "run",
    "tests/test_a.py::TestGroup::test_member": "run",
    "tests/test_b.py::test_other": "run",
}


@pytest.fixture(autouse=True)
def _lean_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    """The projects here need no third-party pytest plugins; importing Hypothesis's
    costs about 1.5 s of CPU per collection.  The baseline test keeps autoload on,
    so the collector is also proven next to installed plugins (ours included)."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture
def project(repo: Repo) -> Repo:
    repo.write("tests/test_a.py", TEST_A, dedent=False)
    repo.write("tests/test_b.py", TEST_B, dedent=False)
    repo.write(SNAP, format_snapshot(BASELINE))
    repo.commit("baseline")
    return repo


def snapshot_of(repo: Repo) -> dict[str, str]:
    return {k: v[0] for k, v in parse_snapshot((repo.path / SNAP).read_bytes(), SNAP).items()}


@pytest.mark.slow
def test_baseline_snapshot_matches_what_pytest_collects(project: Repo, monkeypatch) -> None:
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    code, out = project.staged_hook(main, *PY, "--always").said
    assert (code, out) == (0, "")
    assert snapshot_of(project) == BASELINE


def test_nothing_relevant_changed_runs_no_pytest(project: Repo, monkeypatch) -> None:
    project.write("README.md", "docs\n")
    monkeypatch.setattr(cs, "_Run", lambda python: pytest.fail("pytest ran"))
    assert project.staged_hook(main, *PY).said == (0, "")


@pytest.mark.slow
def test_missing_snapshot_still_runs(project: Repo) -> None:
    (project.path / SNAP).unlink()
    code, out = project.staged_hook(main, *PY).said
    assert code == 1 and "updated with what pytest collects now (6 tests)" in out
    assert snapshot_of(project) == BASELINE


# -- rejected: ids that vanish ---------------------------------------------------

VANISH = {
    "deleted test": ("tests/test_b.py", None, "tests/test_b.py::test_other"),
    # A rename that keeps the body is the same test (tests/test_sametest.py); one that drops its check is not.
    "renamed test that lost its check": (
        "tests/test_b.py",
        TEST_B.replace("test_other", "test_renamed").replace('assert len("ab") == 2', 'len("ab")'),
        "tests/test_b.py::test_other",
    ),
    "parametrize shrank": ("tests/test_a.py", TEST_A.replace("[1, 2, 3]", "[1, 2]"), "tests/test_a.py::test_square[3]"),
    "-k in pytest.ini addopts": ("pytest.ini", "[pytest]\naddopts = -k 'not plain'\n", "tests/test_a.py::test_plain"),
    "--deselect in pyproject addopts": (
        "pyproject.toml",
        '[tool.pytest.ini_options]\naddopts = "--deselect tests/test_b.py::test_other"\n',
        "tests/test_b.py::test_other",
    ),
    "--ignore in setup.cfg addopts": (
        "setup.cfg",
        "[tool:pytest]\naddopts = --ignore=tests/test_b.py\n",
        "tests/test_b.py::test_other",
    ),
    "--ignore in tox.ini addopts": (
        "tox.ini",
        "[pytest]\naddopts = --ignore tests/test_b.py\n",
        "tests/test_b.py::test_other",
    ),
    "collect_ignore": ("tests/conftest.py", 'collect_ignore = ["test_b.py"]\n', "tests/test_b.py::test_other"),
    "collect_ignore_glob": ("tests/conftest.py", 'collect_ignore_glob = ["*_b.py"]\n', "tests/test_b.py::test_other"),
    "pytest_ignore_collect": (
        "conftest.py",
        "def pytest_ignore_collect(collection_path, config):\n    return collection_path.name == 'test_b.py' or None\n",
        "tests/test_b.py::test_other",
    ),
    "narrowed testpaths": ("pytest.ini", "[pytest]\ntestpaths = tests/test_a.py\n", "tests/test_b.py::test_other"),
    "narrowed python_files": ("pytest.ini", "[pytest]\npython_files = test_a.py\n", "tests/test_b.py::test_other"),
    "narrowed python_functions": (
        "pytest.ini",
        "[pytest]\npython_functions = test_s* test_o* test_m*\n",
        "tests/test_a.py::test_plain",
    ),
    "conftest drops items": (
        "tests/conftest.py",
        "def pytest_collection_modifyitems(items):\n    items[:] = [i for i in items if 'other' not in i.name]\n",
        "tests/test_b.py::test_other",
    ),
}


@pytest.mark.parametrize("case", sorted(VANISH))
@pytest.mark.slow
def test_vanished_id_is_rejected(project: Repo, case: str) -> None:
    path, content, lost = VANISH[case]
    if content is None:
        project.remove(path)
    else:
        project.write(path, content, dedent=False)
    code, out = project.staged_hook(main, *PY).said
    assert code == 1
    assert f"OG801 test no longer collected: {lost} " in out, out
    assert out.count("OG801") == 1, out


@pytest.mark.slow
def test_deleting_the_id_from_the_snapshot_too_is_still_caught(project: Repo) -> None:
    project.remove("tests/test_b.py")
    project.write(SNAP, format_snapshot({k: v for k, v in BASELINE.items() if "test_b" not in k}))
    code, out = project.staged_hook(main, *PY).said
    assert code == 1 and "OG801 test no longer collected: tests/test_b.py::test_other" in out


@pytest.mark.slow
def test_moving_the_snapshot_through_the_contract_is_still_caught(project: Repo) -> None:
    project.write("tests/agent_contract.yaml", "version: 1\nsnapshot: other_snapshot.txt\n")
    project.remove("tests/test_b.py")
    code, out = project.staged_hook(main, *PY).said
    assert code == 1 and "OG801 test no longer collected: tests/test_b.py::test_other" in out


@pytest.mark.slow
def test_retiring_without_approval_is_rejected_even_with_a_freeze(project: Repo) -> None:
    project.write("tests/agent_contract.yaml", FREEZE.format(id="test_other"))
    project.remove("tests/test_b.py")
    code, out = project.staged_hook(main, *PY, "--now", "2026-12-01T00:00:00Z").said
    assert code == 1 and "OG801" in out


@pytest.mark.slow
def test_retire_and_skip_ask_approvals_for_the_exact_statements(project: Repo, monkeypatch) -> None:
    """The approvals implementation is another module's; here only the statements asked are checked."""
    from oracle_guard.contract import approvals

    asked: list[str] = []

    class Recording(approvals.Approvals):
        def covers(self, statement: str) -> bool:
            asked.append(statement)
            return statement in {"test-retire tests/test_b.py::test_other", "test-skip tests/test_a.py::test_plain"}

    monkeypatch.setattr(approvals.Approvals, "load", classmethod(lambda cls, *a: Recording()))
    project.remove("tests/test_b.py")
    project.write("tests/conftest.py", CONFTEST_MARK.format(mark="skip").replace("test_other", "test_plain"))
    code, out = project.staged_hook(main, *PY).said
    assert code == 0 and "OG80" not in out and "staged it with this commit" in out  # approved: recorded
    assert sorted(asked) == ["test-retire tests/test_b.py::test_other", "test-skip tests/test_a.py::test_plain"]


# -- rejected: ids that became skipped or xfailed ---------------------------------

CONFTEST_MARK = """\
import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if item.name == "test_other":
            item.add_marker(pytest.mark.{mark})
"""
WEAKEN = {
    "skip mark": ("tests/test_b.py", "import pytest\n\n\n@pytest.mark.skip\n" + TEST_B, "skipped"),
    "skipif true": (
        "tests/test_b.py",
        "import sys, pytest\n\n\n@pytest.mark.skipif('sys.version_info > (3,)', reason='x')\n" + TEST_B,
        "skipped",
    ),
    "pytestmark": ("tests/test_b.py", "import pytest\npytestmark = pytest.mark.xfail\n\n\n" + TEST_B, "xfailed"),
    "conftest adds skip": ("tests/conftest.py", CONFTEST_MARK.format(mark="skip"), "skipped"),
    "conftest adds xfail": ("tests/conftest.py", CONFTEST_MARK.format(mark="xfail(reason='later')"), "xfailed"),
    "unittest skip": (
        "tests/test_b.py",
        "import unittest\n\n\n@unittest.skip('x')\nclass TestOther(unittest.TestCase):\n    def test_other(self):\n        pass\n",
        None,
    ),
}


@pytest.mark.parametrize("case", sorted(WEAKEN))
@pytest.mark.slow
def test_newly_skipped_or_xfailed_is_rejected(project: Repo, case: str) -> None:
    path, content, what = WEAKEN[case]
    project.write(path, content, dedent=False)
    code, out = project.staged_hook(main, *PY).said
    assert code == 1
    if what is None:  # a class around it changes the id: vanished
        assert "OG801 test no longer collected: tests/test_b.py::test_other" in out
        assert snapshot_of(project) == BASELINE  # a snapshot records a clean state: never written over findings
        assert "not written: fix the findings first" in out
    else:
        assert f"OG802 test now {what} at collection (was run): tests/test_b.py::test_other" in out, out


FREEZE = """\
version: 1
freezes:
  - id: {id}
    owner: oncall
    reason: flaky clock, PAY-1
    expires: "2026-12-05T00:00:00Z"
    remaining_reruns: 1
"""


@pytest.mark.slow
def test_newly_skipped_with_a_valid_freeze_is_accepted(project: Repo) -> None:
    project.write("tests/agent_contract.yaml", FREEZE.format(id="test_other"))
    project.write("tests/conftest.py", CONFTEST_MARK.format(mark="skip"))
    code, out = project.staged_hook(main, *PY, "--now", "2026-12-02T00:00:00Z").said
    assert code == 0 and "OG802" not in out and "staged it with this commit" in out  # the status change is recorded
    assert project.hook(main, *PY, "--now", "2026-12-02T00:00:00Z").said == (0, "")


@pytest.mark.slow
def test_newly_skipped_with_an_expired_freeze_is_rejected(project: Repo) -> None:
    project.write("tests/agent_contract.yaml", FREEZE.format(id="test_other"))
    project.write("tests/conftest.py", CONFTEST_MARK.format(mark="skip"))
    code, out = project.staged_hook(main, *PY, "--now", "2026-12-06T00:00:00Z").said
    assert code == 1 and "OG802 test now skipped" in out


@pytest.mark.slow
def test_skip_known_at_the_base_stays_accepted(repo: Repo) -> None:
    repo.write(
        "tests/test_p.py",
        "import pytest\n\n\n@pytest.mark.skipif('True', reason='platform')\ndef test_win():\n    pass\n",
    )
    repo.write(SNAP, format_snapshot({"tests/test_p.py::test_win": "skip"}))
    repo.commit()
    repo.write(
        "tests/test_p.py",
        "import pytest\n\n\n@pytest.mark.skipif('True', reason='platform only')\ndef test_win():\n    pass\n",
    )
    assert repo.staged_hook(main, *PY).said == (0, "")


# -- rejected: collection errors -------------------------------------------------


@pytest.mark.slow
def test_import_error_is_a_finding_never_a_pass(project: Repo) -> None:
    project.write("tests/test_b.py", "import not_a_module_anywhere\n" + TEST_B)
    code, out = project.staged_hook(main, *PY).said
    assert code == 1
    assert "tests/test_b.py:1:1: OG803 collection error in tests/test_b.py:" in out
    assert "not_a_module_anywhere" in out and "OG801" not in out
    assert snapshot_of(project) == BASELINE  # a partial collection is never written


@pytest.mark.slow
def test_source_change_outside_tests_that_breaks_collection_is_caught(project: Repo) -> None:
    project.write("tests/test_b.py", "from pkg.mod import VALUE\n\n\ndef test_other():\n    assert VALUE == 2\n")
    project.write("pkg/__init__.py", "")
    project.write("pkg/mod.py", "VALUE = 2\n")
    project.commit("tests import the package")
    project.write("pkg/mod.py", "VALUE = (\n")
    code, out = project.staged_hook(main, *PY).said
    assert code == 1 and "OG803" in out


@pytest.mark.slow
def test_broken_pytest_config_is_a_finding(project: Repo) -> None:
    project.write("pytest.ini", "[pytest]\naddopts = --no-such-option\n")
    code, out = project.staged_hook(main, *PY).said
    assert code == 1 and "OG804 pytest --collect-only exited 4" in out


# -- accepted: honest neighbours -------------------------------------------------


def accept_after_staging(repo: Repo) -> dict[str, str]:
    """The commit records the new ids itself: written, staged, and clean on the next run without a `git add`."""
    code, out = repo.staged_hook(main, *PY).said
    assert code == 0 and "OG8" not in out and "and staged it with this commit" in out, out
    assert "tests/collection_snapshot.txt" in repo.git("diff", "--cached", "--name-only")
    assert repo.hook(main, *PY).said == (0, "")  # staged by the hook: clean
    return snapshot_of(repo)


@pytest.mark.slow
def test_new_test_is_written_into_the_snapshot(project: Repo) -> None:
    project.write("tests/test_b.py", TEST_B + "\n\ndef test_new():\n    assert 1 < 2\n", dedent=False)
    assert accept_after_staging(project) == {**BASELINE, "tests/test_b.py::test_new": "run"}


@pytest.mark.slow
def test_new_parametrize_case_is_written_into_the_snapshot(project: Repo) -> None:
    project.write("tests/test_a.py", TEST_A.replace("[1, 2, 3]", "[1, 2, 3, 4]"), dedent=False)
    assert accept_after_staging(project)["tests/test_a.py::test_square[4]"] == "run"


@pytest.mark.slow
def test_test_moved_between_files_is_accepted(project: Repo) -> None:
    project.remove("tests/test_b.py")
    project.write("tests/test_a.py", TEST_A + "\n\n" + TEST_B, dedent=False)
    snap = accept_after_staging(project)
    assert "tests/test_a.py::test_other" in snap and "tests/test_b.py::test_other" not in snap


@pytest.mark.slow
def test_file_renamed_is_accepted(project: Repo) -> None:
    project.git("mv", "tests/test_b.py", "tests/test_c.py")
    assert "tests/test_c.py::test_other" in accept_after_staging(project)


@pytest.mark.slow
def test_range_mode_with_a_forgotten_snapshot_update_fails(project: Repo, monkeypatch) -> None:
    base = project.git("rev-parse", "HEAD").strip()
    project.write("tests/test_b.py", TEST_B + "\n\ndef test_new():\n    assert 2 > 1\n", dedent=False)
    project.commit("forgot the snapshot")
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", base)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", "HEAD")
    code, out = project.staged_hook(main, *PY).said
    assert code == 1 and "updated" in out


# -- interpreters and bad input ---------------------------------------------------


def test_no_interpreter_with_pytest_is_one_line_exit_2(project: Repo, capsys, tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    import venv

    venv.create(bare, with_pip=False, system_site_packages=False)
    project.write("tests/test_b.py", TEST_B + "\n")
    project.stage()
    code = project.run(main, "--python", str(bare / "bin" / "python"))
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "pytest is not installed in" in err


def test_a_project_module_that_breaks_pytests_import_is_named_not_called_missing(project: Repo, capsys) -> None:
    """pytest is installed, but the project's own `pluggy.py` (an old pluggy checkout) shadows the one it needs."""
    project.write("pluggy.py", "raise ImportError('this is the project, not the pluggy pytest needs')\n")
    project.write("tests/test_b.py", TEST_B + "\n")
    project.stage()
    code = project.run(main, *PY)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "pytest does not import in " in err and "this is the project, not the pluggy" in err


@pytest.mark.slow
def test_collector_needs_only_pytest_not_oracle_guard(project: Repo, capsys, tmp_path: Path, monkeypatch) -> None:
    """An interpreter that can import pytest but not `hooks` collects all the same."""
    import site
    import subprocess
    import venv

    env_dir = tmp_path / "pytest-only"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    ours = next(p for p in site.getsitepackages() if Path(p, "pytest").is_dir())
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "pytest_only.pth").write_text(ours + "\n")  # pytest importable, the editable `hooks` finder is not
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # our dist-info is visible there, its package is not
    probe = subprocess.run(
        [str(python), "-c", "import pytest\ntry:\n    import hooks\nexcept ImportError:\n    print('no hooks')"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert probe.stdout.strip() == "no hooks"
    project.stage()
    assert project.run(main, "--python", str(python), "--always") == 0, capsys.readouterr()
    assert snapshot_of(project) == BASELINE


def test_interpreter_order_prefers_active_venv_then_dot_venv(project: Repo, tmp_path: Path, monkeypatch) -> None:
    active = tmp_path / "active"
    (active / "bin").mkdir(parents=True)
    (active / "bin" / "python").symlink_to(sys.executable)
    (project.path / ".venv" / "bin").mkdir(parents=True)
    (project.path / ".venv" / "bin" / "python").symlink_to(sys.executable)
    monkeypatch.chdir(project.path)
    store = os.path.dirname(sys.prefix)  # as if this interpreter were an env pre-commit built
    env = {
        "VIRTUAL_ENV": str(active),
        "PATH": os.path.dirname(sys.executable),
        "PRE_COMMIT": "1",
        "PRE_COMMIT_HOME": store,
    }
    found = cs.candidate_interpreters(None, env)
    assert [origin for _, origin in found] == ["the active virtualenv", "./.venv"]  # own bin on PATH is skipped
    own = {
        "VIRTUAL_ENV": sys.prefix,
        "PATH": "",
        "PRE_COMMIT": "1",
        "PRE_COMMIT_HOME": store,
    }  # pre-commit's env in VIRTUAL_ENV is not the user's
    assert [origin for _, origin in cs.candidate_interpreters(None, own)] == ["./.venv"]
    by_hand = {"VIRTUAL_ENV": sys.prefix, "PATH": ""}  # outside pre-commit the hook's env may be the project's
    assert [origin for _, origin in cs.candidate_interpreters(None, by_hand)] == ["the active virtualenv", "./.venv"]
    # `language: system` under pre-commit: the hook runs in the project's interpreter, not in pre-commit's store
    system = {"VIRTUAL_ENV": sys.prefix, "PATH": "", "PRE_COMMIT": "1", "PRE_COMMIT_HOME": str(tmp_path / "store")}
    assert [origin for _, origin in cs.candidate_interpreters(None, system)] == ["the active virtualenv", "./.venv"]


def test_malformed_snapshot_is_exit_2(project: Repo) -> None:
    project.write(SNAP, "passed tests/test_b.py::test_other\n")
    project.commit("bad")
    project.write("tests/test_b.py", TEST_B + "\n")
    code, out = project.staged_hook(main, *PY).said
    assert code == 2 and "expected `<run|skip|xfail> <node id>`" in out


def test_snapshot_through_a_symlink_or_outside_the_repo_is_exit_2(project: Repo, capsys, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("")
    project.write("tests/test_b.py", TEST_B + "\n")
    project.stage()
    assert project.run(main, *PY, "--snapshot", "../outside.txt") == 2
    assert "without '..'" in capsys.readouterr().err
    (project.path / "link.txt").symlink_to(outside)
    assert project.run(main, *PY, "--snapshot", "link.txt") == 2
    assert "is a symlink" in capsys.readouterr().err and outside.read_text() == ""


def test_snapshot_format_round_trips_ids_with_spaces() -> None:
    items = {"t.py::test_x[a b]": "xfail", "t.py::test_a": "run"}
    data = format_snapshot(items)
    assert data.decode().splitlines()[1:] == ["run   t.py::test_a", "xfail t.py::test_x[a b]"]
    assert {k: v[0] for k, v in parse_snapshot(data, "s").items()} == items


@pytest.mark.slow
def test_under_pre_commit_the_projects_dot_venv_is_used(project: Repo, tmp_path: Path) -> None:
    """pre-commit sets VIRTUAL_ENV to its own env and puts its bin first on PATH."""
    import subprocess

    used = tmp_path / "used"
    shim = project.write(".venv/bin/python", f'#!/bin/sh\ntouch {used}\nexec {sys.executable} "$@"\n')
    shim.chmod(0o755)
    project.write(".gitignore", ".venv/\n")
    project.write("tests/test_b.py", TEST_B + "\n", dedent=False)
    project.stage()
    own_bin = os.path.dirname(sys.executable)
    env = {
        **os.environ,
        "VIRTUAL_ENV": sys.prefix,
        "PATH": own_bin + os.pathsep + "/usr/bin:/bin",
        "PRE_COMMIT": "1",
        "PRE_COMMIT_HOME": os.path.dirname(sys.prefix),
        "ORACLE_GUARD_CONFINE": "0",  # the shim says it ran by a write outside the tree, which confinement refuses
    }
    proc = subprocess.run(
        [sys.executable, "-m", "oracle_guard.hook_ids.collection_snapshot"],
        cwd=project.path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert used.exists()


NODE_IDS = st.builds(
    lambda path, rest: f"tests/{path}.py::{rest}",
    st.text("abc_/", min_size=1, max_size=8),
    st.text(st.characters(blacklist_characters="\n\r", blacklist_categories=("Cs",)), min_size=1, max_size=20),
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(NODE_IDS, st.sampled_from(snapshot.STATUSES), max_size=8))
def test_snapshot_round_trips_and_is_sorted(items: dict[str, str]) -> None:
    data = format_snapshot(items)
    assert {k: v[0] for k, v in parse_snapshot(data, "s").items()} == items
    assert format_snapshot({k: v[0] for k, v in parse_snapshot(data, "s").items()}) == data


def test_bad_contract_after_pytest_started_is_og927_and_leaves_nothing(
    project: Repo, capsys, tmp_path: Path, monkeypatch
) -> None:
    import tempfile

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    project.write("tests/agent_contract.yaml", "version: 1\nversion: 1\n")
    project.stage()
    assert project.run(main, *PY, "--always") == 1  # the change's contract: its finding (OG927), not exit 2
    said = capsys.readouterr()
    assert said.out.startswith("tests/agent_contract.yaml:") and " OG927 " in said.out, said
    assert "duplicate key 'version'" in said.out and "error:" not in said.err, said
    assert list(scratch.iterdir()) == []  # the started collection was stopped and its output removed


def test_positional_parameter_ids_renumbered_by_an_inserted_case_are_not_lost() -> None:
    base = {"t.py::test_x[a0]": ("run", 2), "t.py::test_x[a1]": ("run", 3), "t.py::test_y[a0-b1]": ("run", 4)}
    grown = cs.Collection(
        items={
            "t.py::test_x[a0]": "run",
            "t.py::test_x[a1]": "run",
            "t.py::test_x[a2]": "run",
            "t.py::test_y[a0-b1]": "run",
        }
    )
    assert cs.compare(base, grown, "s", lambda n: False, lambda n: False) == []
    inserted = cs.Collection(
        items={
            "t.py::test_x[a0]": "run",
            "t.py::test_x[new-case]": "run",
            "t.py::test_x[a2]": "run",
            "t.py::test_y[a0-b2]": "run",
        }
    )
    assert cs.compare(base, inserted, "s", lambda n: False, lambda n: False) == []
    shrunk = cs.Collection(items={"t.py::test_x[a0]": "run", "t.py::test_y[a0-b1]": "run"})
    assert [f.code for f in cs.compare(base, shrunk, "s", lambda n: False, lambda n: False)] == ["OG801"]
