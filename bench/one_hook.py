"""The one-process hook `oracle-guard` through real `pre-commit run`, vs a bare collection.

On a real project (a git clone with its own `.venv` that has pytest), in a
throwaway clone: the first collection snapshot is committed, then an honest
5-file test change is staged (a helper added to 5 test files: pytest must
collect, and finds the same ids).  Paired in one run, interleaved A B A B:

    A  pre-commit run oracle-guard          (the hook, from this checkout's HEAD)
    B  .venv/bin/python -m pytest --collect-only -q

then the no-collection path: only a non-Python file staged, `pre-commit run
oracle-guard` and the hook process alone (`oracle-guard hook`).  Medians, and
the median of the pairwise ratios A/B.  Targets (issue 11): A/B <= 1.15, the
hook alone <= 0.35 s when nothing needs collecting.

    git clone https://github.com/python-humanize/humanize /tmp/humanize
    python3 -m venv /tmp/humanize/.venv && /tmp/humanize/.venv/bin/pip install -e /tmp/humanize freezegun pytest
    python bench/one_hook.py --project /tmp/humanize [--runs 7]

Needs: pre-commit and oracle-guard in this interpreter; commit this checkout first.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GIT_ENV = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@b",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@b",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def sh(cwd: str, *cmd: str, env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, cwd=cwd, env={**os.environ, **GIT_ENV, **(env or {})}, capture_output=True, text=True, check=check
    )


def timed(cwd: str, cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env={**os.environ, **GIT_ENV, **env}, capture_output=True, text=True)
    took = time.perf_counter() - start
    if proc.returncode not in (0, 5):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    return took


def setup(project: str, home: str) -> str:
    rev = sh(HERE, "git", "rev-parse", "HEAD").stdout.strip()
    work = os.path.join(tempfile.mkdtemp(prefix="og-bench-one-"), "project")
    sh(HERE, "git", "clone", "-q", project, work)
    os.symlink(os.path.join(project, ".venv"), os.path.join(work, ".venv"))
    with open(os.path.join(work, ".git", "info", "exclude"), "a") as f:
        f.write(".venv\n")
    with open(os.path.join(work, ".pre-commit-config.yaml"), "w") as f:
        f.write(f"repos:\n  - repo: {HERE}\n    rev: {rev}\n    hooks:\n      - id: oracle-guard\n")
        # pre-commit's own cost (start-up, stash, file lists): a hook that does nothing.
        f.write(
            "  - repo: local\n    hooks:\n      - id: noop\n        name: noop\n        entry: 'true'\n        language: system\n        always_run: true\n        pass_filenames: false\n"
        )
    env = {"PRE_COMMIT_HOME": home}
    sh(work, "git", "add", "-A")
    sh(
        work, sys.executable, "-m", "pre_commit", "run", "oracle-guard", env=env, check=False
    )  # installs the env, writes the snapshot
    sh(work, "git", "add", "-A")
    sh(work, "git", "-c", "commit.gpgsign=false", "commit", "-q", "--no-verify", "-m", "oracle-guard: first snapshot")
    tests = sorted(
        p
        for p in sh(work, "git", "ls-files", "tests").stdout.split()
        if os.path.basename(p).startswith("test_") and p.endswith(".py")
    )[:5]
    if len(tests) < 5:
        raise SystemExit(f"{project}: needs 5 test files, has {len(tests)}")
    for n, path in enumerate(tests):
        with open(os.path.join(work, path), "a") as f:
            f.write(f"\n\ndef _bench_helper_{n}(value):\n    return value * {n + 2}\n")
    sh(work, "git", "add", *tests)
    return work


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--project", required=True, help="a git clone with a .venv that has pytest")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="og-bench-pc-home-")
    work = setup(os.path.abspath(args.project), home)
    env = {"PRE_COMMIT_HOME": home, "PRE_COMMIT_COLOR": "never"}
    hook = [sys.executable, "-m", "pre_commit", "run", "oracle-guard"]
    bare = [os.path.join(work, ".venv", "bin", "python"), "-m", "pytest", "--collect-only", "-q"]
    noop = [sys.executable, "-m", "pre_commit", "run", "noop"]
    a, b, n = [], [], []
    timed(work, hook, env), timed(work, bare, env)  # warm-up
    for _ in range(args.runs):
        a.append(timed(work, hook, env))
        b.append(timed(work, bare, env))
        n.append(timed(work, noop, env))
    ratios = [x / y for x, y in zip(a, b)]
    beyond = [(x - z) / y for x, y, z in zip(a, b, n)]
    print(f"5-file test change, {args.runs} pairs")
    print(f"  pre-commit run oracle-guard     median {statistics.median(a):.3f} s")
    print(f"  pytest --collect-only -q        median {statistics.median(b):.3f} s")
    print(f"  pre-commit run noop (its cost)  median {statistics.median(n):.3f} s")
    print(
        f"  ratio A/B (pairwise)            median {statistics.median(ratios):.2f}x  (min {min(ratios):.2f}, max {max(ratios):.2f})"
    )
    print(f"  (A - noop)/B: the hook's own    median {statistics.median(beyond):.2f}x")

    sh(work, "git", "reset", "-q", "--hard")
    with open(os.path.join(work, "README.md"), "a") as f:
        f.write("\nA line.\n")
    sh(work, "git", "add", "README.md")
    alone = [sys.executable, "-m", "hooks.cli", "hook"]
    c, d = [], []
    timed(work, hook, env)
    for _ in range(args.runs):
        c.append(timed(work, hook, env))
        d.append(timed(work, alone, {"PYTHONPATH": HERE}))
    print("nothing to collect (README.md staged)")
    print(f"  pre-commit run oracle-guard     median {statistics.median(c):.3f} s")
    print(f"  oracle-guard hook (process)     median {statistics.median(d):.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
