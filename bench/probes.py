"""The price of the replay's probes (oracle flips, differential neighbours) against a plain run.

    git clone -q https://github.com/pytest-dev/pluggy /tmp/bench-pluggy
    python bench/probes.py --suite pluggy=/tmp/bench-pluggy:src/pluggy/_hooks.py:testing/test_hookcaller.py

Each suite is a throwaway clone (reset hard and cleaned).  The change appends a
comment to one production file and, when a test module is named, to that
module too.  Per round, in turn: a bare `python -m pytest -q -p no:cacheprovider
<selection>` in the clone (src/ on PYTHONPATH), the replay in-process with the
probes off (`flips.PROBES = False`), with them on but no recorded calls
(`recorded.RECORD = False`), and with them all on.  The first
round warms caches and is not counted.  Printed: medians, and per round the
probes' extra wall time (on - off) in units of the bare run of the selection;
target <= 1.0 (one more run of the selection).  With `--jobs 1` both sides run
one after the other, so one more run of the selection per side is 2.0 bare
runs of wall time; the default lets the replay choose.  Notices of flaky flips
and the flip counts are reported from the last run.

Needs: pytest (and the suite's test dependencies) in this interpreter, and
oracle-guard installed in it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import statistics
import subprocess
import sys
import time

from bench_git import GIT_ENV  # bench/ is the script's folder: first on sys.path


def git(root: str, *args: str) -> str:
    return subprocess.run(
        ("git", *args), cwd=root, check=True, capture_output=True, text=True, env={**os.environ, **GIT_ENV}
    ).stdout


def bare(root: str, selection: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": os.path.join(root, "src"), "PYTHONHASHSEED": "0"}
    env.pop("PYTEST_ADDOPTS", None)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *selection],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"bare pytest exit {proc.returncode}: {proc.stdout[-500:]}")
    return time.perf_counter() - start


def replay(root: str, probes: bool, jobs: str, record: bool = True) -> tuple[float, str]:
    from oracle_guard.hook_ids import replay as replay_hook
    from oracle_guard.probes.flips import gate as flips
    from oracle_guard.probes.neighbours import recorded

    flips.PROBES = probes
    recorded.RECORD = record
    argv = ["--base", "HEAD", "--python", sys.executable, *(["--jobs", jobs] if jobs else [])]
    here = os.getcwd()
    out, err = io.StringIO(), io.StringIO()
    os.chdir(root)
    try:
        start = time.perf_counter()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = replay_hook.main(argv)
        wall = time.perf_counter() - start
    finally:
        os.chdir(here)
        flips.PROBES = True
        recorded.RECORD = True
    if code != 0:
        raise SystemExit(f"replay exit {code}: {out.getvalue()[-800:]} {err.getvalue()[-800:]}")
    return wall, err.getvalue()


def suite(name: str, root: str, production: str, module: str, runs: int, jobs: str) -> None:
    git(root, "reset", "-q", "--hard")
    git(root, "clean", "-qfdx")
    for path in filter(None, (production, module)):
        with open(os.path.join(root, path), "a", encoding="utf-8") as f:
            f.write("\n# probes bench: touched\n")
    selection = [module] if module else []
    walls: dict[str, list[float]] = {"bare": [], "off": [], "unrecorded": [], "on": []}
    extra: list[float] = []
    recording: list[float] = []
    flaky = 0
    notices = ""
    for i in range(runs + 1):
        b = bare(root, selection)
        off, _ = replay(root, False, jobs)
        unrecorded, _ = replay(root, True, jobs, record=False)
        on, notices = replay(root, True, jobs)
        flaky += notices.count("flaky flip")
        if i:
            walls["bare"].append(b)
            walls["off"].append(off)
            walls["unrecorded"].append(unrecorded)
            walls["on"].append(on)
            extra.append((on - off) / b)
            recording.append((on - unrecorded) / b)
    git(root, "reset", "-q", "--hard")
    print(f"{name}: {module or '(production only)'}, {runs} rounds, jobs {jobs or 'auto'}")
    labels = (
        ("bare", "bare pytest"),
        ("off", "replay, probes off"),
        ("unrecorded", "probes, no recording"),
        ("on", "replay, probes on"),
    )
    for key, label in labels:
        values = walls[key]
        print(f"  {label:20} median {statistics.median(values):6.2f} s  (min {min(values):.2f}, max {max(values):.2f})")
    print(
        f"  probes' extra wall   median {statistics.median(extra):.2f} bare runs (min {min(extra):.2f}, max {max(extra):.2f})"
    )
    print(
        f"  recorded calls' part median {statistics.median(recording):.2f} bare runs"
        f" (min {min(recording):.2f}, max {max(recording):.2f})"
    )
    counts = re.findall(r"oracle-replay: (flipped .*|called .*|recorded .*)", notices)
    print(f"  last run: {'; '.join(counts) or 'no probe notice'}; flaky flip notices over all runs: {flaky}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--suite", action="append", default=[], metavar="NAME=CLONE:PRODUCTION_FILE:TEST_MODULE", required=True
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", default="", help="pass --jobs to the replay (default: its own choice)")
    args = parser.parse_args()
    for spec in args.suite:
        name, _, rest = spec.partition("=")
        root, production, module = rest.split(":")
        suite(name, os.path.abspath(root), production, module, args.runs, args.jobs)


if __name__ == "__main__":
    main()
