"""What forbid-test-aware-code costs a commit: `check --skip collection-snapshot` paired three ways.

    python bench/testaware_speed.py --before /path/to/old-venv/bin/oracle-guard [--runs 21] [--keep DIR]

A throwaway clone of this repository's HEAD gets three commits, each judged
against its parent: a test-only change (a helper added to one test module),
one production file changed (about 300 lines), three production files
changed (about 1,150 lines).  For each, paired runs (bench/paired.py: medians
of the pairwise CPU and wall ratios):

  hook   this install's `check`       vs the same skipping forbid-test-aware-code
  before this install's `check`       vs BEFORE's `check` (an install of the code before the hook)
  staged this install's `oracle-guard hook` (the one-process pre-commit hook, pytest collecting in
         --project-python) on the change staged, vs BEFORE's

Use non-editable installs (an editable install's import finder costs ~1.9x
CPU here), and a quiet machine: the effects are tens of milliseconds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from bench_git import GIT_ENV  # bench/ is the script's folder: first on sys.path
from paired import PairedError, pair_runs, summarize

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HELPER = "\n\ndef _extra_helper(value: int) -> int:\n    return value + 1\n"
SCENARIOS = {
    "test-only": ["tests/test_contract.py"],
    "one production file": ["hooks/oracle_guard/repo/changes.py"],
    "three production files": [
        "hooks/oracle_guard/repo/changes.py",
        "hooks/oracle_guard/analysis/reach.py",
        "hooks/oracle_guard/contract/contract.py",
    ],
}


def git(cwd: str, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, check=True, capture_output=True)


def pair(cwd: str, a: list[str], b: list[str], runs: int) -> str:
    try:
        result = pair_runs(a, b, runs=runs, timeout=900, cwd=cwd)
    except PairedError as error:
        return f"paired runs failed: {error}"
    table = summarize(result)
    if "A/B cpu" not in table:
        return "paired runs: no whole pair within the 900 s bound"
    late = f" ({len(result.a)} pairs: the 900 s bound ended it)" if result.timed_out else ""
    found = {kind: table[f"A/B {kind}"] for kind in ("cpu", "wall")}
    return ", ".join(f"{k} {mid:.2f}x (min {low:.2f}, max {high:.2f})" for k, (low, mid, high) in found.items()) + late


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the oracle-guard script of an install of the code before")
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument(
        "--project-python", help="an interpreter with this project's test dependencies, for the staged pairing"
    )
    parser.add_argument("--keep", help="use (and keep) this folder for the clone")
    args = parser.parse_args()
    now = shutil.which("oracle-guard", path=os.path.dirname(sys.executable)) or "oracle-guard"
    root = args.keep or tempfile.mkdtemp(prefix="testaware-speed-")
    clone = os.path.join(root, "repo")
    if not os.path.isdir(clone):
        subprocess.run(["git", "clone", "-q", HERE, clone], check=True)
    try:
        if args.project_python:
            # A snapshot that matches what pytest collects here, as in a healthy repository (one out of date makes
            # every commit collect twice, to tell unstable ids from lost tests: not this hook's cost).
            from oracle_guard.contract.snapshot import format_snapshot
            from oracle_guard.hook_ids.collection_snapshot import collect

            git(clone, "checkout", "-q", "--detach", "origin/HEAD")
            os.environ["VIRTUAL_ENV"] = os.path.dirname(os.path.dirname(args.project_python))
            os.chdir(clone)
            found = collect(args.project_python)
            assert found is not None, "pytest does not run in --project-python"
            with open(os.path.join(clone, "tests", "collection_snapshot.txt"), "wb") as f:
                f.write(format_snapshot(found.items))
            git(clone, "commit", "-q", "--allow-empty", "-am", "the snapshot as collected here")
            git(clone, "branch", "-f", "bench-base")
        for name, files in SCENARIOS.items():
            git(clone, "checkout", "-q", "--detach", "bench-base" if args.project_python else "origin/HEAD")
            for path in files:
                with open(os.path.join(clone, path), "a", encoding="utf-8") as f:
                    f.write(HELPER)
            git(clone, "commit", "-q", "-am", name)
            check = ["check", "--base", "HEAD~1", "--skip", "collection-snapshot"]
            print(f"{name}:", flush=True)
            hook = pair(
                clone, [now, *check], [now, *check[:-1], "collection-snapshot,forbid-test-aware-code"], args.runs
            )
            print(f"  hook   (with / skipping it):   {hook}", flush=True)
            before = pair(clone, [now, *check], [args.before, *check], args.runs)
            print(f"  before (this code / BEFORE):  {before}", flush=True)
            if args.project_python:
                git(clone, "reset", "-q", "--soft", "HEAD~1")
                venv = os.path.dirname(os.path.dirname(args.project_python))
                os.environ["VIRTUAL_ENV"] = venv  # the project's interpreter, for both
                staged = pair(clone, [now, "hook"], [args.before, "hook"], args.runs)
                print(f"  staged (this hook / BEFORE's): {staged}", flush=True)
                git(clone, "reset", "-q", "--hard")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
