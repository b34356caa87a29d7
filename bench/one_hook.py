"""The one-process hook `oracle-guard` through real `pre-commit run`, vs a bare collection.

On a real project (a git clone with its own `.venv` that has pytest), in a
throwaway clone: the first collection snapshot is committed, then an honest
5-file test change is staged (a private helper added to 5 test files: the
same ids either way; the hook proves that without pytest where the change is
collection-inert, oracle_guard/analysis/inert.py, and collects the touched modules where it
is not, e.g. here, where oracle_guard/repo/paths.py names a touched test module).  Paired in one run, interleaved A [R] B N:

    A  pre-commit run oracle-guard          (the hook, from this checkout's HEAD)
    R  the same hook from --against REF's code (optional: branch vs base)
    B  .venv/bin/python -m pytest --collect-only -q
    N  pre-commit run noop                  (pre-commit's own start-up: a hook that does nothing)
    F  pre-commit run collect               (the fair floor: a hook that runs B, through pre-commit)

then the no-collection path: only a non-Python file staged, `pre-commit run
oracle-guard` and the hook process alone (`oracle-guard hook`).  Medians, and
the medians of the pairwise ratios.  Targets: A/F <= 1.0 (issue 37), the
hook alone <= 0.35 s when nothing needs collecting (issue 11).

    git clone https://github.com/python-humanize/humanize /tmp/humanize
    python3 -m venv /tmp/humanize/.venv && /tmp/humanize/.venv/bin/pip install -e /tmp/humanize freezegun pytest
    python bench/one_hook.py --project /tmp/humanize [--runs 7] [--against main]
    python bench/one_hook.py --project . --venv /path/to/venv --runs 5   # this repository

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

from bench_git import GIT_ENV  # bench/ is the script's folder: first on sys.path

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sh(cwd: str, *cmd: str, env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, cwd=cwd, env={**os.environ, **GIT_ENV, **(env or {})}, capture_output=True, text=True, check=check
    )


# As on a developer's machine: bytecode is cached (pre-commit's install compiles the hook;
# pytest caches its rewritten test modules), so a PYTHONDONTWRITEBYTECODE here is dropped.
BASE_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cwd: str, cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env={**BASE_ENV, **GIT_ENV, **env}, capture_output=True, text=True)
    took = time.perf_counter() - start
    if proc.returncode not in (0, 5):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    return took


AGAINST_CONFIG = ".og-bench-against.yaml"  # the --against hook's config, beside the project's own
FLOOR_CONFIG = ".og-bench-floor.yaml"  # the collect-only hook's config


def setup(project: str, home: str, against: str | None, venv: str, change: str) -> str:
    rev = sh(HERE, "git", "rev-parse", "HEAD").stdout.strip()
    work = os.path.join(tempfile.mkdtemp(prefix="og-bench-one-"), "project")
    sh(HERE, "git", "clone", "-q", project, work)
    os.symlink(venv, os.path.join(work, ".venv"))
    with open(os.path.join(work, ".git", "info", "exclude"), "a") as f:
        f.write(f".venv\n{AGAINST_CONFIG}\n{FLOOR_CONFIG}\n")
    with open(os.path.join(work, ".pre-commit-config.yaml"), "w") as f:
        f.write(f"repos:\n  - repo: {HERE}\n    rev: {rev}\n    hooks:\n      - id: oracle-guard\n")
        # pre-commit's own cost (start-up, stash, file lists): a hook that does nothing.
        f.write(
            "  - repo: local\n    hooks:\n      - id: noop\n        name: noop\n        entry: 'true'\n        language: system\n        always_run: true\n        pass_filenames: false\n"
        )
    # The fair floor (issue 37): a hook that only collects, on the same commit, through the same pre-commit.
    # Its own file, left out of git: in the project's config the gate rightly calls it a CI run that only
    # collects (OG859).
    with open(os.path.join(work, FLOOR_CONFIG), "w") as f:
        f.write(
            "repos:\n  - repo: local\n    hooks:\n      - id: collect\n        name: collect\n        entry: .venv/bin/python -m pytest --collect-only -q\n        language: system\n        always_run: true\n        pass_filenames: false\n"
        )
    env = {"PRE_COMMIT_HOME": home}
    if against:
        with open(os.path.join(work, AGAINST_CONFIG), "w") as f:
            f.write(f"repos:\n  - repo: {HERE}\n    rev: {against}\n    hooks:\n      - id: oracle-guard\n")
        sh(work, sys.executable, "-m", "pre_commit", "install-hooks", "-c", AGAINST_CONFIG, env=env)
    sh(work, "git", "add", "-A")
    sh(
        work, sys.executable, "-m", "pre_commit", "run", "oracle-guard", env=env, check=False
    )  # installs the env, writes the snapshot
    # A committed snapshot may be out of date with the project: record what a full collection finds.
    python = os.path.join(work, ".venv", "bin", "python")
    sh(
        work,
        sys.executable,
        "-m",
        "oracle_guard.hook_ids.collection_snapshot",
        "--always",
        "--python",
        python,
        env={"PYTHONPATH": os.path.join(HERE, "hooks")},  # not HERE: its tests/ package would shadow the project's
        check=False,
    )
    sh(work, "git", "add", "-A")
    sh(work, "git", "-c", "commit.gpgsign=false", "commit", "-q", "--no-verify", "-m", "oracle-guard: first snapshot")
    tests = sorted(
        p
        for p in sh(work, "git", "ls-files", "tests").stdout.split()
        if os.path.basename(p).startswith("test_") and p.endswith(".py")
    )[:5]
    if change == "production":
        # A one-function production change: the first module of the package the project builds.
        # (`git ls-files src` then .py: the pathspecs `src` `*.py` together also list docs/conf.py, first.)
        tests = sorted(
            p
            for p in sh(work, "git", "ls-files", "src").stdout.split()
            if p.endswith(".py") and not os.path.basename(p).startswith(("test_", "conftest")) and "/tests/" not in p
        )[:1]
    if not tests:
        raise SystemExit(f"{project}: no {change} file to change")
    for n, path in enumerate(tests):
        with open(os.path.join(work, path), "a") as f:
            f.write(f"\n\ndef _bench_helper_{n}(value):\n    return value * {n + 2}\n")
    sh(work, "git", "add", *tests)
    return work


def median_ratio(xs: list[float], ys: list[float]) -> str:
    ratios = [x / y for x, y in zip(xs, ys)]
    return f"median {statistics.median(ratios):.2f}x  (min {min(ratios):.2f}, max {max(ratios):.2f})"


def code_of(rev: str) -> str:
    """REV's tree in a temporary folder, for timing its hook process alone."""
    folder = tempfile.mkdtemp(prefix="og-bench-rev-")
    archive = subprocess.run(["git", "archive", rev], cwd=HERE, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
    compiled(folder)
    return folder


def compiled(folder: str) -> None:
    """Bytecode for the hook's code, as an installed package has."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(folder, "hooks")], env=BASE_ENV, check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--project", required=True, help="a git clone with a .venv that has pytest")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--venv", metavar="DIR", help="the project's virtualenv with pytest (default: PROJECT/.venv)")
    parser.add_argument(
        "--change",
        choices=("tests", "production"),
        default="tests",
        help="what the timed commit changes: a helper in up to 5 test files, or one function in the first module under src/",
    )
    parser.add_argument("--against", metavar="REF", help="also time the hook from REF's code (e.g. main), paired")
    args = parser.parse_args()
    against = sh(HERE, "git", "rev-parse", args.against).stdout.strip() if args.against else None
    home = tempfile.mkdtemp(prefix="og-bench-pc-home-")
    venv = os.path.abspath(args.venv or os.path.join(args.project, ".venv"))
    work = setup(os.path.abspath(args.project), home, against, venv, args.change)
    env = {"PRE_COMMIT_HOME": home, "PRE_COMMIT_COLOR": "never"}
    hook = [sys.executable, "-m", "pre_commit", "run", "oracle-guard"]
    old_hook = [*hook, "-c", AGAINST_CONFIG]
    bare = [os.path.join(work, ".venv", "bin", "python"), "-m", "pytest", "--collect-only", "-q"]
    noop = [sys.executable, "-m", "pre_commit", "run", "noop"]
    collect = [sys.executable, "-m", "pre_commit", "run", "collect", "-c", FLOOR_CONFIG]
    a: list[float] = []
    r: list[float] = []
    b: list[float] = []
    n: list[float] = []
    floor: list[float] = []
    timed(work, hook, env), timed(work, bare, env), timed(work, collect, env)  # warm-up
    if against:
        timed(work, old_hook, env)
    for _ in range(args.runs):
        a.append(timed(work, hook, env))
        if against:
            r.append(timed(work, old_hook, env))
        b.append(timed(work, bare, env))
        n.append(timed(work, noop, env))
        floor.append(timed(work, collect, env))
    print(f"{args.change} change, {args.runs} pairs ({os.path.basename(os.path.abspath(args.project))})")
    print(f"  A pre-commit run oracle-guard     median {statistics.median(a):.3f} s")
    if against:
        print(f"  R the same, {args.against} ({against[:9]})  median {statistics.median(r):.3f} s")
    print(f"  B pytest --collect-only -q        median {statistics.median(b):.3f} s")
    print(f"  N pre-commit run noop             median {statistics.median(n):.3f} s")
    print(f"  F pre-commit run collect (floor)  median {statistics.median(floor):.3f} s")
    print(f"  A/F (pairwise, the target)        {median_ratio(a, floor)}")
    print(f"  A/B (pairwise)                    {median_ratio(a, b)}")
    if against:
        print(f"  R/B (pairwise)                    {median_ratio(r, b)}")
        print(f"  A/R (pairwise)                    {median_ratio(a, r)}")
    beyond = [(x - z) / y for x, y, z in zip(a, b, n)]
    print(f"  (A - N)/B: the hook's own         median {statistics.median(beyond):.2f}x")

    sh(work, "git", "reset", "-q", "--hard")
    with open(os.path.join(work, "README.md"), "a") as f:
        f.write("\nA line.\n")
    sh(work, "git", "add", "README.md")
    alone = [sys.executable, "-m", "oracle_guard.commands.cli", "hook"]
    compiled(HERE)
    old_code = code_of(against) if against else ""
    c: list[float] = []
    d: list[float] = []
    e: list[float] = []
    timed(work, hook, env)
    for _ in range(args.runs):
        c.append(timed(work, hook, env))
        d.append(timed(work, alone, {"PYTHONPATH": os.path.join(HERE, "hooks")}))
        if against:
            e.append(timed(work, alone, {"PYTHONPATH": os.path.join(old_code, "hooks")}))
    print("nothing to collect (README.md staged)")
    print(f"  pre-commit run oracle-guard       median {statistics.median(c):.3f} s")
    print(f"  oracle-guard hook (process)       median {statistics.median(d):.3f} s")
    if against:
        print(f"  the same, {args.against}              median {statistics.median(e):.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
