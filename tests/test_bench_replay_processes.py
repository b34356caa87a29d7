"""bench/replay_processes.py: the gate's exit status passed through, and each child's CPU accounted."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.helpers import Repo

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "replay_processes.py"


def _run(repo: Repo, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], cwd=repo.path, capture_output=True, text=True, timeout=300
    )


def _change(repo: Repo) -> None:
    repo.write("calc.py", "def add(a, b):\n    return a + b\n")
    repo.write("tests/test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n")
    repo.stage("calc.py", "tests/test_calc.py")
    repo.commit("base")


def test_the_gate_s_verdict_is_the_exit_status_and_its_children_are_accounted(repo: Repo) -> None:
    _change(repo)
    repo.write("tests/test_calc.py", "from calc import add\n\n\ndef test_add():\n    pass\n")  # the assert deleted
    repo.stage("tests/test_calc.py")
    direct = subprocess.run(
        [sys.executable, "-m", "oracle_guard", "check", "-q", "--base", "HEAD"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    measured = _run(repo, "check", "-q", "--base", "HEAD")
    assert direct.returncode == 1, direct.stdout + direct.stderr  # the weakening is refused
    assert measured.returncode == direct.returncode, measured.stderr
    lines = measured.stderr.splitlines()
    own = [line for line in lines if line.endswith("the gate's own process")]
    git = [line for line in lines if "git (every subcommand)" in line]
    total = [line for line in lines if line.endswith("in all")]
    assert own and git and total, measured.stderr
    seconds = [float(re.match(r"\s*([\d.]+) s", line).group(1)) for line in (own[0], git[0], total[0])]  # type: ignore[union-attr]
    assert seconds[2] >= seconds[0] + seconds[1] - 0.002  # the sum holds every line
    assert re.search(r"x\d+ +git \(every subcommand\)", git[0])


def test_no_arguments_is_one_usage_line_and_exit_2(repo: Repo) -> None:
    result = _run(repo)
    assert (result.returncode, result.stderr.strip()) == (2, "usage: replay_processes.py ORACLE-GUARD-ARGUMENTS...")
