"""Find a project's bug-fix commits whose new test fails on the parent: the rows of bench/realfix_fixes.json.

    python bench/realfix_mine.py NAME --clone /work/projects/NAME --venv /work/projects/venvs/NAME \\
        --max 10 --table bench/realfix_fixes.json

A candidate is a non-merge commit whose subject reads like a fix and that
changes production `.py` files and test files. Its red base (the parent plus
the commit's test files) is run with plain pytest on those test files; the
tests that FAIL there (not error: a test whose module or fixture breaks is no fix's test) and pass at the
commit itself are the fix's tests. A commit with none is dropped. The table
keeps commit hashes and test ids only; the rows of NAME are replaced.
The work happens in a throwaway clone of the clone (`--scratch`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys

from realfix_git import changed, git, is_production, is_test, red_base, run_pytest

FIX_WORDS = re.compile(r"\b(fix|fixe[sd]|fixing|bug|issue|regression|wrong|incorrect|crash|broken|error)\b|#\d+", re.I)
NOT_FIX = re.compile(r"\b(typo|lint|flake8|mypy|ruff|black|format|docs?|readme|ci|release|bump)\b", re.I)


def candidates(repo: str) -> list[tuple[str, str]]:
    out = git(repo, "log", "--no-merges", "--format=%H %s", "HEAD")
    found = []
    for line in out.splitlines():
        sha, subject = line.split(" ", 1)
        if not FIX_WORDS.search(subject) or NOT_FIX.search(subject):
            continue
        files = changed(repo, sha)
        if any(is_production(p) for _, p in files) and any(is_test(p) and s != "D" for s, p in files):
            found.append((sha, subject))
    return found


def judge(scratch: str, python: str, sha: str) -> list[str]:
    """The fix's tests: FAILED at its red base, PASSED at the fix ([] when none)."""
    tests = [p for s, p in changed(scratch, sha) if is_test(p) and s != "D" and not p.endswith("conftest.py")]
    red_base(scratch, sha, "realfix/mine")
    red = run_pytest(scratch, python, tests, timeout=60)
    failed = {t for t, outcome in red.items() if outcome == "FAILED"}
    if not failed:  # a module that does not collect has no FAILED test: its fix is not one to replay
        return []
    git(scratch, "checkout", "-q", "-f", sha)
    git(scratch, "clean", "-qfdx")
    fixed = run_pytest(scratch, python, tests, timeout=60)
    return sorted(t for t in failed if fixed.get(t) == "PASSED")


def save(path: str, name: str, rows: list[dict[str, object]]) -> None:
    """Replace NAME's rows of the table at PATH by ROWS."""
    table = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            table = [row for row in json.load(f) if row["project"] != name]
    with open(path, "w", encoding="utf-8") as f:
        json.dump(table + rows, f, indent=1)
        f.write("\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name")
    parser.add_argument("--clone", required=True)
    parser.add_argument("--venv", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--max", type=int, default=10)
    parser.add_argument("--scratch", default="/work/projects/realfix-scratch")
    args = parser.parse_args(argv)
    python = os.path.join(args.venv, "bin", "python")
    scratch = os.path.join(args.scratch, f"mine-{args.name}")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(args.scratch, exist_ok=True)
    git(args.scratch, "clone", "-q", "--no-hardlinks", os.path.abspath(args.clone), scratch)
    rows = []
    for sha, subject in candidates(scratch):
        if len(rows) >= args.max:
            break
        try:
            tests = judge(scratch, python, sha)
        except RuntimeError as error:  # a commit whose files do not lay over its parent
            print(f"  {sha[:10]} skipped: {error}", file=sys.stderr)
            continue
        print(f"  {sha[:10]} {len(tests)} fixed test(s)  {subject[:70]}", file=sys.stderr, flush=True)
        if tests:
            rows.append({"project": args.name, "fix": sha, "tests": tests})
            save(args.table, args.name, rows)  # row by row: a long hunt stopped early keeps what it found
    print(f"{args.name}: {len(rows)} fix(es)", file=sys.stderr)
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
