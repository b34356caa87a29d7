"""Speed of oracle-shrink beside checkwash (a peer AST diff gate) on the same change.

Usage (from the repository root, in the environment where oracle-guard is installed):

    python -m pip install checkwash   # the peer; not a dependency
    python bench/oracle_shrink.py [--files 400] [--changed 5,50,400] [--runs 5]

It generates a git repository of FILES test modules (about 6 kB, 12 tests
each), commits them, then for each CHANGED count commits a change to that many
files (one in three loses an assert, the rest are reformatted or gain a test)
and reports the median wall time of RUNS runs of `oracle-shrink --base BASE
<files>` and of `checkwash check BASE..HEAD` on the same commit, in the same
run, with their ratio.  A peer that is not installed is reported as missing.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TEST = """

def test_case_{i}(tmp_path):
    record = make_record({i})
    assert record["id"] == {i}
    assert record["label"] == "item-{i}"
    assert math.isclose(record["value"], {i} * 1.5, rel_tol=1e-9)
    with pytest.raises(KeyError, match="missing"):
        lookup(record, "missing")
"""
HEAD = """import math

import pytest


def make_record(i):
    return {{"id": i, "label": "item-%d" % i, "value": i * 1.5}}


def lookup(record, key):
    if key not in record:
        raise KeyError(key + " missing")
    return record[key]
"""


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(("git", *args), cwd=cwd, check=True, capture_output=True, text=True).stdout


def median_time(cmd: list[str], cwd: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--changed", default="5,50,400")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="og-shrink-bench-"))
    try:
        git(root, "init", "-q", "-b", "main")
        for key, value in (("user.name", "bench"), ("user.email", "bench@example.com"), ("commit.gpgsign", "false")):
            git(root, "config", key, value)
        (root / "tests").mkdir()
        for n in range(args.files):
            (root / "tests" / f"test_mod_{n}.py").write_text(HEAD + "".join(TEST.format(i=i) for i in range(12)))
        git(root, "add", "-A")
        git(root, "commit", "-qm", "base")
        base = git(root, "rev-parse", "HEAD").strip()
        bin_dir = Path(sys.executable).parent
        shrink = str(bin_dir / "oracle-shrink")
        peer = shutil.which("checkwash", path=str(bin_dir)) or shutil.which("checkwash")
        print(f"{args.files} test modules, medians of {args.runs} runs")
        print(f"{'changed':>8} {'oracle-shrink':>14} {'checkwash':>10} {'ratio':>6} findings")
        for count in (int(c) for c in args.changed.split(",")):
            git(root, "reset", "-q", "--hard", base)
            paths = []
            for n in range(min(count, args.files)):
                path = root / "tests" / f"test_mod_{n}.py"
                text = path.read_text()
                if n % 3 == 0:
                    text = text.replace('    assert record["label"] == "item-3"\n', "", 1)
                elif n % 3 == 1:
                    text = text.replace("    ", "        ").replace("        ", "    ") + "\n# reformatted\n"
                else:
                    text += TEST.format(i=99)
                path.write_text(text)
                paths.append(f"tests/test_mod_{n}.py")
            git(root, "commit", "-qam", f"change {count}")
            ours = median_time([shrink, "--base", base, *paths], root, args.runs)
            out = subprocess.run([shrink, "--base", base, *paths], cwd=root, capture_output=True, text=True).stdout
            theirs = median_time([peer, "check", f"{base}..HEAD"], root, args.runs) if peer else None
            shown = f"{theirs * 1000:8.0f}ms {ours / theirs:6.2f}" if theirs else f"{'missing':>10} {'':>6}"
            print(f"{count:>8} {ours * 1000:12.0f}ms {shown} {len(out.splitlines())}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
