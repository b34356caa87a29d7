"""The run-time gate: real pytest subprocesses on temporary projects.

The plugin reaches them through the installed `pytest11` entry point, as it
reaches users; nothing here loads it by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from oracle_guard.contract.snapshot import format_snapshot

NOW = ("--oracle-guard-now", "2026-12-02T00:00:00Z")

PASSING = """\
def test_ok():
    assert 1 + 1 == 2
"""
SKIPPED = """\
import pytest


@pytest.mark.skip(reason="later")
def test_later():
    assert 1 + 1 == 3
"""
# A skip no static check would see: the name is built at run time.
HIDDEN_SKIP = """\
import pytest


def test_hidden():
    getattr(pytest, "sk" + "ip")("not today")
"""
XFAIL = """\
import pytest


@pytest.mark.xfail(reason="known bug")
def test_bug():
    assert 1 + 1 == 3
"""
FLAKY = """\
from pathlib import Path

COUNTER = Path(__file__).with_name("attempts.txt")


def test_flaky():
    seen = int(COUNTER.read_text()) if COUNTER.exists() else 0
    COUNTER.write_text(str(seen + 1))
    assert seen >= {fail_times}
"""
FREEZE = """\
version: 1
freezes:
  - id: {id}
    owner: oncall
    reason: clock skew, PAY-4412
    expires: "{expires}"
    remaining_reruns: {reruns}
"""


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text), encoding="utf-8")


def pytest_run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        # Hypothesis's plugin is not under test and costs ~1.5 s of CPU to import.
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-q", "-rs", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTEST_ADDOPTS": ""},
    )


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\n")
    return root


@pytest.mark.slow
def test_inert_without_contract_or_flag(proj: Path) -> None:
    write(proj, {"tests/test_s.py": SKIPPED, "tests/test_ok.py": PASSING})
    proc = pytest_run(proj)
    assert proc.returncode == 0 and "oracle-guard" not in proc.stdout


@pytest.mark.slow
def test_inert_plugin_survives_a_project_with_its_own_hooks_package(proj: Path) -> None:
    """`python -m pytest` puts the project first on sys.path; its `hooks/` must not break us."""
    write(
        proj, {"hooks/__init__.py": "raise ImportError('the project own hooks package')\n", "tests/test_ok.py": PASSING}
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=proj,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_plugin_import_loads_no_yaml_and_no_contract() -> None:
    code = "import sys, oracle_guard.pytest_side.plugin.entry; print(sorted(m for m in ('yaml', 'hooks', 'oracle_guard.contract.contract', 'oracle_guard.repo.git') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("source", [SKIPPED, HIDDEN_SKIP, XFAIL], ids=["mark", "hidden-runtime", "xfail"])
@pytest.mark.slow
def test_new_skip_or_xfail_fails_the_session(proj: Path, source: str) -> None:
    write(proj, {"tests/test_s.py": source, "tests/test_ok.py": PASSING})
    proc = pytest_run(proj, "--oracle-guard")
    assert proc.returncode == 1, proc.stdout
    assert "oracle-guard: 1 test(s) skipped or xfailed without a freeze entry: session failed" in proc.stdout


@pytest.mark.slow
def test_conftest_added_skip_fails_with_a_contract(proj: Path) -> None:
    conftest = "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n    for item in items:\n        item.add_marker(pytest.mark.skip(reason='quiet'))\n"
    write(
        proj, {"tests/test_ok.py": PASSING, "tests/conftest.py": conftest, "tests/agent_contract.yaml": "version: 1\n"}
    )
    proc = pytest_run(proj)
    assert proc.returncode == 1 and "SKIPPED tests/test_ok.py::test_ok" in proc.stdout


@pytest.mark.slow
def test_skip_known_in_the_snapshot_passes(proj: Path) -> None:
    snapshot = format_snapshot({"tests/test_s.py::test_later": "skip", "tests/test_ok.py::test_ok": "run"}).decode()
    write(
        proj,
        {
            "tests/test_s.py": SKIPPED,
            "tests/test_ok.py": PASSING,
            "tests/agent_contract.yaml": "version: 1\n",
            "tests/collection_snapshot.txt": snapshot,
        },
    )
    proc = pytest_run(proj)
    assert proc.returncode == 0, proc.stdout


@pytest.mark.slow
def test_only_the_committed_snapshot_counts_in_a_git_checkout(proj: Path) -> None:
    write(proj, {"tests/test_s.py": SKIPPED, "tests/agent_contract.yaml": "version: 1\n"})
    write(proj, {"tests/collection_snapshot.txt": format_snapshot({"tests/test_s.py::test_later": "run"}).decode()})
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=proj, check=True)
    subprocess.run([*git, "add", "-A"], cwd=proj, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=proj, check=True)
    write(
        proj, {"tests/collection_snapshot.txt": format_snapshot({"tests/test_s.py::test_later": "skip"}).decode()}
    )  # uncommitted
    assert pytest_run(proj).returncode == 1
    subprocess.run([*git, "commit", "-qam", "record the skip"], cwd=proj, check=True)
    assert pytest_run(proj).returncode == 0


@pytest.mark.slow
def test_snapshot_known_skip_does_not_allow_a_runtime_skip_of_a_running_test(proj: Path) -> None:
    snapshot = format_snapshot({"tests/test_s.py::test_hidden": "run"}).decode()
    write(
        proj,
        {
            "tests/test_s.py": HIDDEN_SKIP,
            "tests/agent_contract.yaml": "version: 1\n",
            "tests/collection_snapshot.txt": snapshot,
        },
    )
    assert pytest_run(proj).returncode == 1


@pytest.mark.slow
def test_valid_freeze_covers_a_skip_and_an_expired_one_does_not(proj: Path) -> None:
    write(
        proj,
        {
            "tests/test_s.py": SKIPPED,
            "tests/agent_contract.yaml": FREEZE.format(id="test_later", expires="2026-12-05T00:00:00Z", reruns=1),
        },
    )
    assert pytest_run(proj, *NOW).returncode == 0
    proc = pytest_run(proj, "--oracle-guard-now", "2026-12-06T00:00:00Z")
    assert proc.returncode == 1 and "freeze test_later: expired" in proc.stdout


@pytest.mark.slow
def test_allow_skips_is_the_local_escape(proj: Path) -> None:
    write(proj, {"tests/test_s.py": SKIPPED})
    assert pytest_run(proj, "--oracle-guard", "--oracle-guard-allow-skips").returncode == 0


@pytest.mark.slow
def test_module_level_skip_is_new_only_if_the_snapshot_ran_its_tests(proj: Path) -> None:
    module = "import pytest\n\npytest.importorskip('no_such_optional_dependency')\n\n\ndef test_opt():\n    assert True is not False\n"
    write(proj, {"tests/test_opt.py": module, "tests/test_ok.py": PASSING, "tests/agent_contract.yaml": "version: 1\n"})
    write(proj, {"tests/collection_snapshot.txt": format_snapshot({"tests/test_ok.py::test_ok": "run"}).decode()})
    assert pytest_run(proj).returncode == 0  # never collected at the base either
    write(proj, {"tests/collection_snapshot.txt": format_snapshot({"tests/test_opt.py::test_opt": "run"}).decode()})
    assert pytest_run(proj).returncode == 1


@pytest.mark.slow
def test_frozen_flake_is_rerun_within_budget_and_reported(proj: Path) -> None:
    contract = FREEZE.format(id="test_flaky", expires="2026-12-05T00:00:00Z", reruns=2)
    write(proj, {"tests/test_f.py": FLAKY.format(fail_times=1), "tests/agent_contract.yaml": contract})
    proc = pytest_run(proj, *NOW, "--oracle-guard-report", "report.json")
    assert proc.returncode == 0, proc.stdout
    assert "freeze test_flaky: 1 of 2 reruns used" in proc.stdout
    report = json.loads((proj / "report.json").read_text())
    assert report["freezes"] == [
        {
            "id": "test_flaky",
            "remaining_reruns": 2,
            "reruns_consumed": 1,
            "expired": False,
            "tests": ["tests/test_f.py::test_flaky"],
        }
    ]
    assert (proj / "tests/agent_contract.yaml").read_text() == textwrap.dedent(contract)  # never edited


@pytest.mark.slow
def test_frozen_test_fails_after_its_budget(proj: Path) -> None:
    write(
        proj,
        {
            "tests/test_f.py": FLAKY.format(fail_times=9),
            "tests/agent_contract.yaml": FREEZE.format(id="test_flaky", expires="2026-12-05T00:00:00Z", reruns=2),
        },
    )
    proc = pytest_run(proj, *NOW, "--oracle-guard-report", "report.json")
    assert proc.returncode == 1 and "1 failed" in proc.stdout
    assert (proj / "tests/attempts.txt").read_text() == "3"
    assert json.loads((proj / "report.json").read_text())["freezes"][0]["reruns_consumed"] == 2


@pytest.mark.slow
def test_expired_freeze_gives_no_reruns_and_says_so(proj: Path) -> None:
    write(
        proj,
        {
            "tests/test_f.py": FLAKY.format(fail_times=1),
            "tests/agent_contract.yaml": FREEZE.format(id="test_flaky", expires="2026-12-01T00:00:00Z", reruns=2),
        },
    )
    proc = pytest_run(proj, *NOW, "--oracle-guard-report", "report.json")
    assert proc.returncode == 1 and (proj / "tests/attempts.txt").read_text() == "1"
    assert "freeze test_flaky: expired (2026-12-01T00:00:00Z) or out of reruns: no reruns given" in proc.stdout
    assert json.loads((proj / "report.json").read_text())["freezes"][0]["expired"] is True


@pytest.mark.slow
def test_unfrozen_failure_runs_once(proj: Path) -> None:
    write(
        proj,
        {
            "tests/test_f.py": FLAKY.format(fail_times=1),
            "tests/agent_contract.yaml": FREEZE.format(id="test_other", expires="2026-12-05T00:00:00Z", reruns=2),
        },
    )
    proc = pytest_run(proj, *NOW)
    assert proc.returncode == 1 and (proj / "tests/attempts.txt").read_text() == "1"


@pytest.mark.slow
def test_broken_contract_is_one_clear_usage_error(proj: Path) -> None:
    write(proj, {"tests/test_ok.py": PASSING, "tests/agent_contract.yaml": "version: 1\nversion: 1\n"})
    proc = pytest_run(proj)
    assert (
        proc.returncode == 4
        and "oracle-guard: tests/agent_contract.yaml" in proc.stderr
        and "duplicate key 'version'" in proc.stderr
    )
    assert pytest_run(proj, "--collect-only").returncode == 0  # collection-only runs stay inert
