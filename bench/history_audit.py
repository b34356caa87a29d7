"""False-alarm audit: run `oracle-guard check` on each recent commit of a real project.

Most commits of a well-kept project are honest, so every finding on its
history is a place to look: either a real weakening the maintainers chose
(a feature removed with its tests, a platform skip) or a false alarm to fix.

    python bench/history_audit.py /path/to/clone 150 > audit.txt

The clone is checked out commit by commit (detached) and cleaned: use a
throwaway clone.  Prints each flagged commit with its findings, then a
summary of exit codes and finding codes on stderr.
"""

from __future__ import annotations

import collections
import os
import re
import shutil
import subprocess
import sys


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    repo, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 100
    beside = os.path.join(os.path.dirname(sys.executable), "oracle-guard")
    gate = beside if os.path.exists(beside) else shutil.which("oracle-guard") or "oracle-guard"
    log = subprocess.run(
        ["git", "-C", repo, "log", "--no-merges", f"-n{count}", "--format=%H %s", "--", "tests", "testing", "test"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    exits: collections.Counter[int] = collections.Counter()
    codes: collections.Counter[str] = collections.Counter()
    for line in log:
        sha, subject = line.split(" ", 1)
        subprocess.run(["git", "-C", repo, "checkout", "-q", "-f", sha], check=True)
        subprocess.run(["git", "-C", repo, "clean", "-qfdx"], check=True)
        proc = subprocess.run(
            [gate, "check", "--base", f"{sha}~1", "--skip", "collection-snapshot"],
            cwd=repo,
            capture_output=True,
            text=True,
        )
        exits[proc.returncode] += 1
        if proc.returncode:
            print(f"=== {sha[:10]} {subject[:70]} (exit {proc.returncode})")
            for finding in (proc.stdout + proc.stderr).splitlines():
                print("   ", finding[:300])
                codes.update(re.findall(r": (OG\d+) ", finding))
    print(f"{len(log)} commits; exit codes {dict(exits)}; findings {dict(sorted(codes.items()))}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
