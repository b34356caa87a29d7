"""One plain `pytest` run against a cold and a warm `oracle-guard check --replay`, paired (bench/paired.py).

    git clone -q https://github.com/pytoolz/toolz /tmp/bench-toolz     # a fast suite (about 1 s)
    python -m pip install toolz pytest -e .                             # its version metadata; oracle-guard
    python bench/replay_cache.py /tmp/bench-toolz toolz/dicttoolz.py [--runs 7]

The clone is reset hard and cleaned (never point this at a working copy you care about), then
PRODUCTION_FILE gets a comment appended and is left changed in the work tree: the replay judges that
change against HEAD.  "plain" is `python -m pytest -q -p no:cacheprovider -p no:randomly` in the
clone, the project's own configuration deciding what runs (the whole suite, once).  "cold" is the
replay with an empty cache folder (emptied before each run, so each run also writes its entries);
"warm" is the replay with a cache folder the uncounted warm-up run filled
(probes/replay/base_cache.py, probes/flips/cached.py).  Two paired calls, plain then replay in turn
(paired.pair_runs), one per replay; the ratios are replay/plain per pair, medians quoted.
Targets (issue 31): warm <= 1.3x, cold <= 2.0x.  Before timing, one warm run is checked to exit 0
and to say that both base sides came from the cache.

Needs: this interpreter with pytest, the project's test dependencies and oracle-guard installed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from bench_git import GIT_ENV  # bench/ is the script's folder: first on sys.path
from paired import Run, pair_runs

WARM_NOTICES = ("the base side's outcomes from the cache", "the flip run's base side from the cache")


def git(root: str, *args: str) -> None:
    subprocess.run(("git", *args), cwd=root, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def replay(cache: str, empty_first: bool) -> list[str]:
    """The replay command, its cache folder given by ORACLE_GUARD_CACHE (emptied first for a cold run)."""
    command = [sys.executable, "-m", "oracle_guard", "check", "-q", "--replay", "--base", "HEAD"]
    command += ["--python", sys.executable]
    if not empty_first:
        return ["env", f"ORACLE_GUARD_CACHE={cache}", *command]
    return ["sh", "-c", 'rm -rf "$1" && shift && exec env ORACLE_GUARD_CACHE="$0" "$@"', cache, cache, *command]


def ratios(top: list[Run], bottom: list[Run], figure: str) -> list[float]:
    return [getattr(t, figure) / getattr(b, figure) for t, b in zip(top, bottom)]


def line(name: str, values: list[float], unit: str) -> str:
    return f"  {name:18} median {statistics.median(values):6.2f}{unit} (min {min(values):.2f}, max {max(values):.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clone")
    parser.add_argument("production_file")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    root = os.path.abspath(args.clone)
    git(root, "reset", "-q", "--hard")
    git(root, "clean", "-qfdx")
    with open(os.path.join(root, args.production_file), "a", encoding="utf-8") as f:
        f.write("\n# replay cache bench: touched\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTHONPATH")}
    plain = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    caches = tempfile.mkdtemp(prefix="replay-cache-bench-")
    try:
        cold = replay(os.path.join(caches, "cold"), empty_first=True)
        warm = replay(os.path.join(caches, "warm"), empty_first=False)
        for command in (warm, warm):  # the first fills the cache, the second must use it
            proc = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
        if proc.returncode != 0 or not all(n in proc.stderr for n in WARM_NOTICES):
            raise SystemExit(f"the warm replay did not run from the cache (exit {proc.returncode}):\n{proc.stderr}")
        results = {
            name: pair_runs(plain, command, runs=args.runs, cwd=root, env=env)
            for name, command in (("cold", cold), ("warm", warm))
        }
    finally:
        shutil.rmtree(caches, ignore_errors=True)
        git(root, "reset", "-q", "--hard")
    try:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        load = "?"
    print(
        f"{os.path.basename(root)}: {args.production_file} touched; {args.runs} pairs per replay, load average at the end {load}"
    )
    for name, result in results.items():
        exits = sorted({r.exit for r in result.a} | {r.exit for r in result.b})
        print(f"{name} (exit codes {exits})")
        print(line("plain wall", [r.wall for r in result.a], " s"))
        print(line(f"{name} wall", [r.wall for r in result.b], " s"))
        print(line(f"{name} cpu", [r.cpu for r in result.b], " s"))
        target = 2.0 if name == "cold" else 1.3
        print(line(f"{name}/plain wall", ratios(result.b, result.a, "wall"), "x") + f", target <= {target}x")
        print(line(f"{name}/plain cpu", ratios(result.b, result.a, "cpu"), "x"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
