"""False-alarm audit of forbid-test-aware-code on a real project's history.

Each of the last N non-merge commits that change production code (a Python
file off the test side) is judged against its parent exactly as `oracle-guard
check` would, in process and without checking anything out (the new side is
the commit itself):

    python bench/testaware_audit.py /path/to/clone 300 > audit.txt

Prints each flagged commit with its findings, then the count on stderr.
"""

from __future__ import annotations

import collections
import os
import sys
import time

from oracle_guard.hook_ids.forbid_test_aware_code import test_aware_findings
from oracle_guard.repo import changes, git
from oracle_guard.repo.paths import DEFAULT_CONTRACT, TEST_FILES


def production_commits(count: int) -> list[tuple[str, str]]:
    log = git.run("log", "--no-merges", "--format=%x00%H %s", "--name-only", "--", "*.py").decode()
    found = []
    for entry in log.split("\0")[1:]:
        head, _, names = entry.partition("\n")
        sha, _, subject = head.partition(" ")
        if any(n.endswith(".py") and not TEST_FILES.search(n) for n in names.split()):
            found.append((sha, subject))
        if len(found) == count:
            break
    return found


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    repo, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 300
    os.chdir(repo)
    codes: collections.Counter[str] = collections.Counter()
    flagged = 0
    commits = production_commits(count)
    started = time.perf_counter()
    for sha, subject in commits:
        parent = git.commit_of(f"{sha}^") or git.empty_tree()
        change_set = changes.ChangeSet(parent, f"{sha[:10]}^", sha, git.diff(parent, sha, cached=False))
        findings = test_aware_findings(change_set, DEFAULT_CONTRACT)
        if findings:
            flagged += 1
            print(f"=== {sha[:10]} {subject[:70]}")
            for finding in findings:
                print("   ", finding.text()[:300])
                codes[finding.code] += 1
    seconds = time.perf_counter() - started
    print(
        f"{repo}: {flagged} of {len(commits)} commits flagged ({100 * flagged / max(len(commits), 1):.1f}%); "
        f"findings {dict(sorted(codes.items()))}; {seconds:.1f}s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
