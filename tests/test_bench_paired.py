"""bench/paired.py, the paired timer the speed benches use: its figures, its counts and its refusals."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

# The bench scripts import each other by bare name, as `python bench/mutation.py` does.
BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.append(str(BENCH))

from paired import pair_runs, summarize  # noqa: E402

PY = sys.executable
LIGHT = [PY, "-c", "pass"]
# 10**7, not 10**6: about 0.1 s of CPU more than a bare start-up, so the ratio stays clear on a loaded machine.
HEAVY = [PY, "-c", "sum(range(10**7))"]


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, str(BENCH / "paired.py"), *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def test_the_lighter_command_has_ratios_below_one_and_the_counts_are_the_runs() -> None:
    result = pair_runs(LIGHT, HEAVY, runs=3, warmup=1, timeout=120)
    assert (len(result.a), len(result.b), result.timed_out) == (3, 3, False)
    assert [run.exit for run in result.a + result.b] == [0] * 6
    table = summarize(result)
    for kind in ("wall", "cpu"):
        low, median, high = table[f"A/B {kind}"]
        assert 0 < low <= median <= high
        assert median < 1, (kind, table)
    # B's CPU is user + system, and is the bigger: the child's own accounting, not this process's.
    assert table["B cpu"][1] > table["A cpu"][1] + 0.03
    assert all(abs(run.cpu - (run.user + run.sys)) < 1e-9 for run in result.b)


def test_the_peak_is_the_child_s_own() -> None:
    # Through the CLI: a child's peak reads at least the forking process's resident size (Linux carries it over
    # the exec), and this pytest process may be large; paired.py's own process is small.
    proc = cli("-n", "1", "--warmup", "0", "--vs", f"{PY} -c pass", "--", PY, "-c", "bytearray(200 * 2**20)")
    assert proc.returncode == 0, proc.stderr
    peaks = {line.split()[0]: float(line.split()[-2]) for line in proc.stdout.splitlines() if " peak MiB " in line}
    floor = float(proc.stdout.split("peak floor MiB ")[1].split()[0])
    assert peaks["A"] > 200 > peaks["B"] + 100
    assert (
        peaks["B"] < floor + 5
    )  # a small command reads about the floor printed at most (less where its interpreter starts smaller, 3.9)


def test_the_cli_prints_one_figure_a_line_and_reports_exit_codes_without_acting_on_them(tmp_path: Path) -> None:
    proc = cli(
        "-n", "2", "--warmup", "0", "--vs", f"{PY} -c 'sum(range(10**7))'", "--", PY, "-c", "raise SystemExit(3)"
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "2 pairs after 0 warm-up each (A then B), min median max" in lines
    figures = {" ".join(line.split()[:2]): line.split()[-3:] for line in lines if line.split()[0] in ("A", "B", "A/B")}
    for side in ("A", "B"):
        for figure in ("wall", "cpu", "user", "sys", "peak"):
            low, median, high = map(float, figures[f"{side} {figure}"])
            assert low <= median <= high
    assert float(figures["A/B cpu"][1]) < 1
    assert "A exit          3 x2" in lines
    assert "B exit          0 x2" in lines


@pytest.mark.parametrize("which", ["A", "B"])
def test_a_command_that_cannot_start_is_one_line_and_exit_2_before_anything_runs(tmp_path: Path, which: str) -> None:
    marker = tmp_path / "ran"
    runs = ["sh", "-c", f"echo x >> {marker}"]
    missing = [str(tmp_path / "no-such-program"), "--flag"]
    a, b = (missing, runs) if which == "A" else (runs, missing)
    proc = cli("-n", "2", "--vs", " ".join(b), "--", *a)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1
    assert proc.stderr.startswith("paired.py: cannot start ") and "no-such-program" in proc.stderr
    assert not marker.exists()  # the other command was not run first


@pytest.mark.parametrize(
    "args",
    [
        ["-n", "2"],  # no command A
        ["-n", "0", "--", "true"],
        ["--vs", "'unclosed", "--", "true"],
        ["--output", "/nonexistent-dir/out", "--", "true"],
    ],
)
def test_unusable_arguments_are_one_line_and_exit_2(args: list[str]) -> None:
    proc = cli(*args)
    assert (proc.returncode, proc.stdout, len(proc.stderr.splitlines())) == (2, "", 1), proc.stderr


def test_the_time_bound_ends_the_call_and_says_so() -> None:
    start = time.monotonic()
    proc = cli("-n", "3", "--warmup", "0", "--timeout", "0.5", "--", "sleep", "30")
    assert time.monotonic() - start < 15
    assert proc.returncode == 3
    assert "0 runs after 0 warm-up each" in proc.stdout
    assert "the --timeout bound ended the call early" in proc.stdout


def test_output_goes_to_the_file_when_asked(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    proc = cli("-n", "2", "--warmup", "1", "--output", str(out), "--vs", "sh -c 'echo b'", "--", "sh", "-c", "echo a")
    assert proc.returncode == 0, proc.stderr
    assert out.read_text().split() == ["a", "b"] * 3  # warm-up first, then A B A B
