"""collection-snapshot vs a bare `pytest --collect-only -q`, in the same environment.

Two suites: a generated one (50 files x 100 tests = 5,000 ids) and a real
project's test suite from its PyPI sdist (default: more-itertools, pure
Python, no test dependencies).  Each is a fresh git repository with its
snapshot committed; the hook runs as a subprocess (its own start-up, git
reads, the collection run with the exporter plugin, the comparison) with
`--always`, so pytest really runs.  Runs are interleaved; medians of 5.
The no-change path (nothing relevant staged: pytest is not run) is timed too.
Installed pytest plugins are not autoloaded (they would pad both sides);
`--autoload` measures with them.

    python bench/collection_overhead.py [--project more-itertools] [--runs 5]

Needs: pytest in this interpreter, oracle-guard installed in it, network
access to PyPI (or a pip cache) for the sdist.
"""

from __future__ import annotations

import argparse
import glob
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

from bench_git import GIT_ENV  # bench/ is the script's folder: first on sys.path

FILES, TESTS_PER_FILE = 50, 100


def git(root: str, *args: str) -> None:
    subprocess.run(("git", *args), cwd=root, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def generated(root: str) -> str:
    os.makedirs(os.path.join(root, "tests"))
    for f in range(FILES):
        body = ["import pytest\n\n"]
        for t in range(TESTS_PER_FILE // 5):
            body.append(f"@pytest.mark.parametrize('n', range(5))\ndef test_{t}(n):\n    assert n * {t} >= 0\n\n\n")
        with open(os.path.join(root, "tests", f"test_gen_{f}.py"), "w") as fh:
            fh.write("".join(body))
    return root


def real_project(name: str, cache: str) -> str:
    os.makedirs(cache, exist_ok=True)
    found = glob.glob(os.path.join(cache, "*.tar.gz"))
    if not found:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", "-d", cache, name],
            check=True,
        )
        found = glob.glob(os.path.join(cache, "*.tar.gz"))
    target = tempfile.mkdtemp(prefix="og-bench-real-")
    with tarfile.open(found[0]) as tar:
        tar.extractall(target)
    (inner,) = [os.path.join(target, d) for d in os.listdir(target)]
    return inner


def prepare(root: str, hook: str) -> None:
    git(root, "init", "-q", "-b", "main")
    subprocess.run(
        [hook, "--always", "--python", sys.executable], cwd=root, capture_output=True, env={**os.environ, **EXTRA_ENV}
    )  # writes the snapshot
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    check = subprocess.run(
        [hook, "--always", "--python", sys.executable],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, **EXTRA_ENV},
    )
    if check.returncode != 0:
        raise SystemExit(f"hook is not clean on the committed project {root}: {check.stdout}{check.stderr}")


CPU: dict[str, list[float]] = {}
# Installed pytest plugins (Hypothesis's costs ~1.5 s of CPU to import) would
# pad both sides and hide the hook's fixed cost: off unless --autoload.
EXTRA_ENV: dict[str, str] = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], root: str, label: str = "") -> float:
    """Wall seconds; the CPU seconds of the command and its children go to CPU[label]."""
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, capture_output=True, env={**os.environ, "PYTHONHASHSEED": "0", **EXTRA_ENV})
    elapsed = time.perf_counter() - start
    CPU.setdefault(label, []).append(_children_cpu() - cpu)
    if proc.returncode not in (0,):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stdout[-400:]!r}")
    return elapsed


def measure(label: str, root: str, hook: str, runs: int) -> None:
    bare_cmd = [sys.executable, "-m", "pytest", "--collect-only", "-q"]
    hook_cmd = [hook, "--always", "--python", sys.executable]
    idle_cmd = [hook, "--python", sys.executable]
    # The hook's own flags, to separate its overhead from what they save.
    same_cmd = bare_cmd + ["-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:random_order"]
    timed(bare_cmd, root)  # warm the file cache and .pyc files for both
    bare, same, ours, idle = [], [], [], []
    CPU.clear()
    for _ in range(runs):
        bare.append(timed(bare_cmd, root, "bare"))
        same.append(timed(same_cmd, root, "same"))
        ours.append(timed(hook_cmd, root, "hook"))
        idle.append(timed(idle_cmd, root, "idle"))
    count = sum(1 for line in open(os.path.join(root, "tests", "collection_snapshot.txt")) if not line.startswith("#"))
    b, s, o, i = (statistics.median(x) for x in (bare, same, ours, idle))
    print(
        f"{label}: {count} tests | bare `pytest --collect-only -q` {b:.3f} s | collection-snapshot {o:.3f} s"
        f" | ratio {o / b:.3f}x | vs bare with the hook's -p flags {s:.3f} s: {o / s:.3f}x | nothing changed (no pytest) {i:.3f} s"
    )
    cb, cs, co = (statistics.median(CPU[k]) for k in ("bare", "same", "hook"))
    print(
        f"  CPU seconds (user+sys, load-independent): bare {cb:.3f} | same flags {cs:.3f} | hook {co:.3f} | ratio {co / cb:.3f}x, {co / cs:.3f}x"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", default="more-itertools", help="a PyPI project whose sdist ships its tests")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "og-bench-sdist"))
    parser.add_argument(
        "--autoload", action="store_true", help="let pytest load installed plugins (both sides pay for them)"
    )
    args = parser.parse_args()
    if args.autoload:
        EXTRA_ENV.clear()
    hook = shutil.which("collection-snapshot", path=os.path.dirname(sys.executable))
    if not hook:
        raise SystemExit("collection-snapshot is not installed next to this interpreter")
    print(
        f"python {sys.version.split()[0]}, pytest {__import__('pytest').__version__}, medians of {args.runs}, plugin autoload {'on' if args.autoload else 'off'}, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    with tempfile.TemporaryDirectory(prefix="og-bench-gen-") as tmp:
        root = generated(tmp)
        prepare(root, hook)
        measure(f"generated ({FILES} files)", root, hook, args.runs)
    root = real_project(args.project, os.path.join(args.cache, args.project))
    try:
        prepare(root, hook)
        measure(f"{args.project} sdist ({os.path.basename(root)})", root, hook, args.runs)
    finally:
        shutil.rmtree(os.path.dirname(root))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
