"""The mutation differential on a real project's history: `check --mutate` on each recent test-touching commit.

    python bench/mutation_history.py /tmp/mutate-bench/pluggy 20 --mutate-max 40 > history.txt

Most commits of a well-kept project are honest, so every OG910 is a place to
look: a real weakening (a feature removed with its tests) or a false alarm.
The clone is checked out commit by commit (detached) and cleaned: use a
throwaway clone no other bench uses.  Each commit is judged against its first
parent with every static hook skipped.  Prints one line per commit, then the
totals.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import time

from oracle_guard.hook_ids import registry

STATIC = ",".join(h.id for h in registry.HOOKS if not h.opt_in)  # every static hook: --mutate alone judges
RAN = re.compile(r"ran (\d+) mutant\(s\) .* the base's tests caught (\d+), the new tests let (\d+)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo")
    parser.add_argument("count", type=int, nargs="?", default=20)
    parser.add_argument("--mutate-max", default="40")
    parser.add_argument("--mutate-timeout", default="300")
    parser.add_argument("--commits", help="a file of commit ids: judge only those of the last COUNT (a rerun)")
    parser.add_argument(
        "--fallback-python",
        help="an interpreter whose pytest fits older checkouts: a commit whose tests do not run is judged again there",
    )
    args = parser.parse_args()
    gate = shutil.which("oracle-guard", path=os.path.dirname(sys.executable)) or "oracle-guard"
    log = subprocess.run(
        ["git", "-C", args.repo, "log", "--no-merges", f"-n{args.count}", "--format=%H %s", "--", "tests", "testing"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    if args.commits:
        with open(args.commits, encoding="utf-8") as f:
            wanted = {word[:10] for word in f.read().split()}
        log = [line for line in log if line[:10] in wanted]
    env = {**os.environ, "VIRTUAL_ENV": sys.prefix, "PYTHONHASHSEED": "0"}
    exits: collections.Counter[int] = collections.Counter()
    totals = collections.Counter[str]()
    try:
        for line in log:
            sha, subject = line.split(" ", 1)
            subprocess.run(["git", "-C", args.repo, "checkout", "-q", "--detach", "-f", sha], check=True)
            subprocess.run(["git", "-C", args.repo, "clean", "-qfdx"], check=True)
            started = time.monotonic()
            proc = subprocess.run(
                [gate, "check", "--mutate", "--skip", STATIC, "--base", f"{sha}^"]
                + ["--mutate-max", args.mutate_max, "--mutate-timeout", args.mutate_timeout],
                cwd=args.repo,
                env=env,
                capture_output=True,
                text=True,
            )
            older = ("pytest does not import", "do not run in", "no selected test passes")
            if proc.returncode == 2 and args.fallback_python and any(why in proc.stderr for why in older):
                proc = subprocess.run(
                    proc.args + ["--python", args.fallback_python],
                    cwd=args.repo,
                    env={**env, "VIRTUAL_ENV": os.path.dirname(os.path.dirname(args.fallback_python))},
                    capture_output=True,
                    text=True,
                )
                subject = f"[{args.fallback_python}] {subject}"
            seconds = time.monotonic() - started
            exits[proc.returncode] += 1
            found = RAN.search(proc.stderr)
            ran, caught, lived = found.groups() if found else ("-", "-", "-")
            totals["OG910"] += proc.stdout.count(" OG910 ")
            for key, value in (("mutants", ran), ("caught", caught), ("lived", lived)):
                totals[key] += int(value) if value != "-" else 0
            why = "" if found else " " + (proc.stderr.strip().splitlines() or [""])[-1][:140]
            print(
                f"{sha[:10]} exit {proc.returncode} OG910 x{proc.stdout.count(' OG910 ')} mutants {ran} caught {caught} "
                f"lived {lived} {seconds:.0f}s  {subject[:60]}{why}",
                flush=True,
            )
            for finding in proc.stdout.splitlines():
                if " OG910 " in finding:
                    print(f"    {finding[:220]}", flush=True)
    finally:
        subprocess.run(["git", "-C", args.repo, "checkout", "-q", "-f", "-"], check=False)
    print(f"exits {dict(exits)}, totals {dict(totals)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
