"""oracle-replay vs a bare `pytest` of the same selection, and the scratch-tree build.

    git clone -q https://github.com/python-attrs/attrs /tmp/bench-attrs     # Hypothesis suite
    git clone -q https://github.com/pytest-dev/pluggy /tmp/bench-pluggy     # plain pytest suite
    python bench/replay.py --suite attrs=/tmp/bench-attrs:src/attr/_funcs.py:tests/test_funcs.py \\
                           --suite pluggy=/tmp/bench-pluggy:src/pluggy/_hooks.py:testing/test_hookcaller.py

With an empty TEST_MODULE (`NAME=CLONE:PRODUCTION_FILE:`) the change is
production code only: the replay runs the base test modules that reach the
file (pytest_side/selection.py, printed), the bare run is plain pytest of
those modules, and a third command replays with the canaries off
(`gate.CANARIES = False`, in-process) to price canaries and the ledger's
completeness checks; targets: replay <= 2.0x bare, canaries <= 3%.  Notices
of a flaky canary verdict or an unjudged property are counted.

"replay" is a cold replay (`ORACLE_GUARD_CACHE=off`); "warm" replays with a
base-side cache the first, uncounted round filled (probes/replay/base_cache.py),
target <= 1.3x bare.  `--make-small DIR` writes a one-module project of 40
tests to bench on (`--suite small=DIR:src/calc.py:`).

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
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench_git import GIT_ENV  # bench/ is the script's folder: first on sys.path


def git(root: str, *args: str) -> str:
    return subprocess.run(
        ("git", *args), cwd=root, check=True, capture_output=True, text=True, env={**os.environ, **GIT_ENV}
    ).stdout


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # every waited-for descendant: pytest's too
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], cwd: str, env: dict[str, str]) -> tuple[float, float, int, str, str]:
    """(wall, CPU, exit code, last output line, stderr) of CMD."""
    start, cpu = time.perf_counter(), children_cpu()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    output = (proc.stdout + proc.stderr).strip()
    wall, used = time.perf_counter() - start, children_cpu() - cpu
    return wall, used, proc.returncode, output.splitlines()[-1] if output else "", proc.stderr


def suite(name: str, root: str, production: str, module: str, runs: int, jobs: str) -> None:
    git(root, "reset", "-q", "--hard")
    git(root, "clean", "-qfdx")
    for path in (production, module):
        if not path:
            continue
        with open(os.path.join(root, path), "a", encoding="utf-8") as f:
            f.write("\n# replay bench: touched\n")
    env = {**os.environ, "PYTHONPATH": os.path.join(root, "src"), "PYTHONHASHSEED": "0"}
    env.pop("PYTEST_ADDOPTS", None)
    modules = [module] if module else selected(root)
    bare = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *modules]
    options = ["--base", "HEAD", "--python", sys.executable, *(["--jobs", jobs] if jobs else [])]
    replay = [sys.executable, "-m", "oracle_guard", "replay", *options]
    quiet = (
        "import sys; from oracle_guard.hook_ids import replay; from oracle_guard.probes.replay import gate;"
        f" gate.CANARIES = False; sys.exit(replay.main({options!r}))"
    )
    # cold: no base-side cache; warm: a cache the first (uncounted) round fills (probes/replay/base_cache.py)
    commands = {"bare": bare, "replay": replay, "warm": replay}
    warm_cache = tempfile.mkdtemp(prefix="replay-bench-cache-")
    caches = {"replay": "off", "warm": warm_cache, "no canaries": "off"}
    if not module:
        commands["no canaries"] = [sys.executable, "-c", quiet]
    walls: dict[str, list[float]] = {k: [] for k in commands}
    cpus: dict[str, list[float]] = {k: [] for k in commands}
    notices = 0
    for i in range(runs + 1):  # the first round warms caches and is not counted
        order = list(commands) if i % 2 else list(reversed(commands))
        for key in order:
            replay_env = {k: v for k, v in env.items() if k != "PYTHONPATH"} if key != "bare" else env
            if key in caches:
                replay_env["ORACLE_GUARD_CACHE"] = caches[key]
            wall, cpu, code, tail, err = timed(commands[key], root, replay_env)
            if code not in ((0, 1) if key == "bare" else (0,)):
                raise SystemExit(f"{name}: {key} exit {code} ({tail})")
            if key == "warm" and i and "from the cache" not in err:
                raise SystemExit(f"{name}: the warm replay did not use the cache: {err}")
            notices += err.count("flaky run on the new code") + err.count("not judged")
            if i:
                walls[key].append(wall)
                cpus[key].append(cpu)
    shutil.rmtree(warm_cache, ignore_errors=True)
    print(f"{name}: {len(modules)} test module(s) ({production} touched{', ' + module if module else ''})")
    try:
        print(f"  load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    except OSError:  # pragma: no cover
        pass
    for key, values in walls.items():
        print(
            f"  {key:12} median {statistics.median(values):6.2f} s  (min {min(values):.2f}, max {max(values):.2f}),"
            f" CPU median {statistics.median(cpus[key]):6.2f} s"
        )
    for what, table in (("wall", walls), ("CPU", cpus)):
        for top, bottom, target in (
            ("replay", "bare", 2.0 if not module else 2.3),
            ("warm", "bare", 1.3),
            ("warm", "replay", None),
        ):
            ratios = [r / b for r, b in zip(table[top], table[bottom])]
            goal = f", target <= {target}x" if target else ""
            print(
                f"  {top}/{bottom:6} {what:4} median {statistics.median(ratios):5.2f}x (min {min(ratios):.2f},"
                f" max {max(ratios):.2f}), {runs} rounds{goal}"
            )
        if "no canaries" in table:
            extra = [r / q - 1 for r, q in zip(table["replay"], table["no canaries"])]
            print(
                f"  canaries     {what:4} median {statistics.median(extra) * 100:+5.1f}% (min {min(extra) * 100:+.1f}%,"
                f" max {max(extra) * 100:+.1f}%) of the replay, target <= 3%"
            )
    print(f"  notices of a flaky or unjudged canary verdict: {notices} in {runs + 1} rounds")
    git(root, "reset", "-q", "--hard")


def small_project(root: str, tests: int = 40) -> None:
    """A throwaway project of one production module and one test module of TESTS tests (`--make-small DIR`)."""
    os.makedirs(os.path.join(root, "src"), exist_ok=True)
    os.makedirs(os.path.join(root, "tests"), exist_ok=True)
    with open(os.path.join(root, "src", "calc.py"), "w") as f:
        f.write("".join(f"def f{i}(x):\n    return x * {i} + 1\n\n\n" for i in range(tests)))
    with open(os.path.join(root, "tests", "test_calc.py"), "w") as f:
        f.write("import calc\n\n\n")
        f.write("".join(f"def test_f{i}():\n    assert calc.f{i}(2) == {2 * i + 1}\n\n\n" for i in range(tests)))
    with open(os.path.join(root, "pytest.ini"), "w") as f:
        f.write("[pytest]\npythonpath = src\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")


def selected(root: str) -> list[str]:
    """The base test modules the replay of the work tree's change runs."""
    from oracle_guard.pytest_side import scratch, selection
    from oracle_guard.repo import changes

    here = os.getcwd()
    os.chdir(root)
    try:
        change_set = changes.resolve(argparse.Namespace(base="HEAD"))
        side = scratch.TestSide(change_set.base or "", "tests/agent_contract.yaml", None)
        chosen = selection.select(change_set, scratch.plan(change_set, side), side)
    finally:
        os.chdir(here)
    if chosen.everything:
        raise SystemExit(f"{root}: the replay runs every test ({'; '.join(chosen.reasons)}): pick another file")
    return list(chosen.modules)


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


def canary_cost(rounds: int) -> None:
    """The canaries' absolute CPU: one pytest run of a one-test tree with them and without, paired."""
    from oracle_guard.probes.replay import run as replay_run

    root = tempfile.mkdtemp(prefix="canary-cost-")
    try:
        tree = os.path.join(root, "tree")
        os.makedirs(tree)
        with open(os.path.join(tree, "test_one.py"), "w") as f:
            f.write("def test_one():\n    assert 1 == 1\n")
        costs: dict[bool, list[float]] = {True: [], False: []}
        for i in range(rounds + 1):
            for canaries in (True, False) if i % 2 else (False, True):
                runs = replay_run.Runs(tempfile.mkdtemp(dir=root), float("inf"), 1, canaries)
                start = children_cpu()
                run = runs.run(sys.executable, {"t": tree}, [*replay_run.PYTEST_ARGS, *replay_run.NO_RANDOM_ORDER], "r")
                if not run["t"].items:
                    raise SystemExit(f"the one-test run failed: {run['t'].tail}")
                if i:
                    costs[canaries].append(children_cpu() - start)
        extra = [a - b for a, b in zip(costs[True], costs[False])]
        print(
            f"canaries on a one-test run: CPU median {statistics.median(costs[True]) * 1000:.0f} ms with,"
            f" {statistics.median(costs[False]) * 1000:.0f} ms without; paired difference median"
            f" {statistics.median(extra) * 1000:+.0f} ms per pytest run ({rounds} pairs)"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", action="append", default=[], metavar="NAME=CLONE:PRODUCTION_FILE:TEST_MODULE")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", default="", help="pass --jobs to the replay (default: its own choice)")
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--no-synthetic", action="store_true", help="skip the scratch-tree build timing")
    parser.add_argument("--canary-cost", type=int, default=0, metavar="PAIRS", help="time the canaries alone")
    parser.add_argument("--make-small", metavar="DIR", help="write a one-module, 40-test project to DIR and stop")
    args = parser.parse_args()
    if args.make_small:
        small_project(args.make_small)
        return
    if args.canary_cost:
        canary_cost(args.canary_cost)
    if not args.no_synthetic:
        synthetic(args.files, args.runs)
    for spec in args.suite:
        name, _, rest = spec.partition("=")
        root, production, module = rest.split(":")
        suite(name, os.path.abspath(root), production, module, args.runs, args.jobs)


if __name__ == "__main__":
    main()
