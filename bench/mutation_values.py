"""`check --mutate` on issue 31's three-function module: the three value weakenings and their honest twins.

    python bench/mutation_values.py --runs 3
    python bench/mutation_values.py --gate /path/to/other/venv/bin/oracle-guard --python /path/to/py312/bin/python

The module and the rows are tests/test_mutation.py's (PEOPLE, VALUE_WEAKENINGS). Each row is a throwaway
git repository: the base commits the module and its unittest tests, the change edits one test (weakened, or
refactored keeping its checks). Per row: the exit code, the OG910 count, the mutants run and caught (from the
gate's notice) and the wall seconds, median of --runs. --gate runs another build of oracle-guard (before/after);
--python is the project's interpreter (3.12+ measures coverage with sys.monitoring).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from oracle_guard.hook_ids import registry
from tests.test_mutation import PEOPLE_BASE, PEOPLE_TESTS, PT, VALUE_WEAKENINGS, people_tests

STATIC = ",".join(h.id for h in registry.HOOKS if not h.opt_in)
RAN = re.compile(r"ran (\d+) mutant\(s\) .* in ([0-9.]+) s: the base's tests caught (\d+), the new tests let (\d+)")
GIT = ("git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "commit.gpgsign=false")


def write(root: str, files: dict[str, str]) -> None:
    for path, text in files.items():
        target = os.path.join(root, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)


def value_change(name: str, which: str, prefix: str = "mutation-values-") -> str:
    """A new repository holding issue 31's row NAME (WHICH: weakened or honest) staged on its base; its path."""
    root = tempfile.mkdtemp(prefix=prefix)
    subprocess.run((*GIT, "init", "-q", "-b", "main", root), check=True)
    write(root, {**PEOPLE_BASE, PT: PEOPLE_TESTS})
    subprocess.run((*GIT, "-C", root, "add", "-A"), check=True)
    subprocess.run((*GIT, "-C", root, "commit", "-qm", "base"), check=True)
    write(root, {PT: people_tests(name, which)})
    subprocess.run((*GIT, "-C", root, "add", "-A"), check=True)
    return root


def one(gate: str, python: str, name: str, which: str) -> tuple[int, int, str, float]:
    root = value_change(name, which)
    try:
        started = time.perf_counter()
        proc = subprocess.run(
            (gate, "check", "--mutate", "--skip", STATIC, "--base", "HEAD", "--python", python),
            cwd=root,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - started
        found = RAN.search(proc.stderr)
        figures = f"{found.group(1)} run, {found.group(3)} caught, {found.group(4)} lived" if found else "no figures"
        return proc.returncode, proc.stdout.count("OG910"), figures, wall
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gate", default=shutil.which("oracle-guard", path=os.path.dirname(sys.executable)))
    parser.add_argument("--python", default=sys.executable, help="the project's interpreter")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if not args.gate:
        parser.error("no oracle-guard next to this interpreter: pass --gate")
    print(f"gate {args.gate}, project python {args.python}, load average {os.getloadavg()[0]:.1f}")
    for name in sorted(VALUE_WEAKENINGS):
        for which in ("weakened", "honest"):
            runs = [one(args.gate, args.python, name, which) for _ in range(args.runs)]
            walls = [r[3] for r in runs]
            code, og910, figures, _ = runs[0]
            print(
                f"{name} ({which}): exit {code}, OG910 x{og910}, {figures}, "
                f"wall median {statistics.median(walls):.1f} s of {', '.join(f'{w:.1f}' for w in walls)}"
            )
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
