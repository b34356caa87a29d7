"""oracle-replay vs a bare `pytest` of the same selection, and the scratch-tree build.

    git clone -q https://github.com/python-attrs/attrs /tmp/bench-attrs     # Hypothesis suite
    git clone -q https://github.com/pytest-dev/pluggy /tmp/bench-pluggy     # plain pytest suite
    python bench/replay.py --suite attrs=/tmp/bench-attrs:src/attr/_funcs.py:tests/test_funcs.py \\
                           --suite pluggy=/tmp/bench-pluggy:src/pluggy/_hooks.py:testing/test_hookcaller.py

Each suite is a throwaway clone (reset hard and cleaned: never point this at a
working copy you care about).  The change is one production file and one test
module edited (a comment appended to each), left in the work tree: the replay
runs that module's base version twice (base tree, new code + base tests) and
the bare run is `python -m pytest -q -p no:cacheprovider <module>` once, in the
clone, with `src/` on PYTHONPATH like the replay.  Runs alternate, medians of
--runs; the ratio is per pair.  The target is replay <= 2.3x bare.

The scratch build is timed on a generated repository of 5,000 files (4,000
production modules, 1,000 test modules): both trees (base export, and base
export with the change's production files laid over), in-process.

Needs: pytest (and Hypothesis, attrs's test dependencies) in this interpreter,
and oracle-guard installed in it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

GIT_ENV = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@b",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@b",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(root: str, *args: str) -> str:
    return subprocess.run(
        ("git", *args), cwd=root, check=True, capture_output=True, text=True, env={**os.environ, **GIT_ENV}
    ).stdout


def timed(cmd: list[str], cwd: str, env: dict[str, str]) -> tuple[float, int, str]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    return (
        time.perf_counter() - start,
        proc.returncode,
        (proc.stdout + proc.stderr).strip().splitlines()[-1:][0] if (proc.stdout + proc.stderr).strip() else "",
    )


def suite(name: str, root: str, production: str, module: str, runs: int, jobs: str) -> None:
    git(root, "reset", "-q", "--hard")
    git(root, "clean", "-qfdx")
    for path in (production, module):
        with open(os.path.join(root, path), "a", encoding="utf-8") as f:
            f.write("\n# replay bench: touched\n")
    env = {**os.environ, "PYTHONPATH": os.path.join(root, "src"), "PYTHONHASHSEED": "0"}
    env.pop("PYTEST_ADDOPTS", None)
    bare = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", module]
    replay = [sys.executable, "-m", "oracle_guard", "replay", "--base", "HEAD", "--python", sys.executable]
    if jobs:
        replay += ["--jobs", jobs]
    # `python -m hooks` is oracle-guard's own entry point: the same code as the console script.
    walls: dict[str, list[float]] = {"bare": [], "replay": []}
    ratios = []
    for i in range(runs + 1):  # the first pair warms caches and is not counted
        b, b_code, b_tail = timed(bare, root, env)
        r, r_code, r_tail = timed(replay, root, {k: v for k, v in env.items() if k != "PYTHONPATH"})
        if r_code != 0 or b_code != 0:
            raise SystemExit(f"{name}: bare exit {b_code} ({b_tail}); replay exit {r_code} ({r_tail})")
        if i:
            walls["bare"].append(b)
            walls["replay"].append(r)
            ratios.append(r / b)
    print(f"{name}: {module} ({b_tail})")
    print(
        f"  bare pytest  median {statistics.median(walls['bare']):6.2f} s  (min {min(walls['bare']):.2f}, max {max(walls['bare']):.2f})"
    )
    print(
        f"  replay       median {statistics.median(walls['replay']):6.2f} s  (min {min(walls['replay']):.2f}, max {max(walls['replay']):.2f})"
    )
    print(
        f"  ratio        median {statistics.median(ratios):6.2f}x (min {min(ratios):.2f}, max {max(ratios):.2f}), {runs} pairs, target <= 2.3x"
    )
    git(root, "reset", "-q", "--hard")


def synthetic(files: int, runs: int) -> None:
    from oracle_guard.pytest_side import scratch
    from oracle_guard.repo import changes

    root = tempfile.mkdtemp(prefix="replay-bench-")
    try:
        git(root, "init", "-q", "-b", "main")
        tests = files // 5
        for i in range(files - tests):
            path = os.path.join(root, "pkg", f"m{i // 100}", f"mod{i}.py")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(f"def f{i}(x):\n    return x + {i}\n" * 20)
        for i in range(tests):
            path = os.path.join(root, "tests", f"t{i // 100}", f"test_{i}.py")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(f"def test_{i}():\n    assert {i} == {i}\n")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "base")
        with open(os.path.join(root, "pkg", "m0", "mod0.py"), "a") as f:
            f.write("# changed\n")
        with open(os.path.join(root, "tests", "t0", "test_0.py"), "a") as f:
            f.write("# changed\n")
        here = os.getcwd()
        os.chdir(root)
        try:
            change_set = changes.resolve(argparse.Namespace(base="HEAD"))
            plan = scratch.plan(change_set, scratch.TestSide(change_set.base or "", "tests/agent_contract.yaml", None))
            both, one = [], []
            for _ in range(runs + 1):
                tree = scratch.Scratch()
                start = time.perf_counter()
                scratch.export(change_set.base or "", tree.base)
                one.append(time.perf_counter() - start)
                tree.cleanup()
                tree = scratch.Scratch()
                start = time.perf_counter()
                tree.build(change_set, plan)  # what the replay does: both trees at once, then the overlay
                both.append(time.perf_counter() - start)
                tree.cleanup()
        finally:
            os.chdir(here)
        one, both = one[1:], both[1:]
        print(
            f"scratch trees, {files} files: one tree median {statistics.median(one):.3f} s, both trees median {statistics.median(both):.3f} s (max {max(both):.3f}), {runs} runs, target < 1 s"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", action="append", default=[], metavar="NAME=CLONE:PRODUCTION_FILE:TEST_MODULE")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", default="", help="pass --jobs to the replay (default: its own choice)")
    parser.add_argument("--files", type=int, default=5000)
    args = parser.parse_args()
    synthetic(args.files, args.runs)
    for spec in args.suite:
        name, _, rest = spec.partition("=")
        root, production, module = rest.split(":")
        suite(name, os.path.abspath(root), production, module, args.runs, args.jobs)


if __name__ == "__main__":
    main()
