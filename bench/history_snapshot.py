"""collection-snapshot over a real project's history: which vanished ids are false alarms.

For each of a project's last N test-touching commits, pytest collects the
parent and the commit (``--python``: an interpreter with the project's test
dependencies), and collection-snapshot's own comparison runs on the two
collections, once with the shared "same test" model (oracle_guard/analysis/sametest/cases.py)
and once without it.  Every OG801 left is printed for reading.

    python bench/history_snapshot.py /path/to/clone 150 --python /venv/bin/python > snap.txt
    (humanize: --write 'src/humanize/_version.py=__version__ = "0"')

The clone is checked out commit by commit (detached) and cleaned: use a
throwaway clone.  ``PYTHONPATH`` is set to ``src:.`` so a project imports
from its checkout.  A commit whose parent or itself does not collect
cleanly (an import error, a missing dependency) is counted and skipped.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)

from oracle_guard.analysis.sametest import cases as sametest  # noqa: E402
from oracle_guard.hook_ids import collection_snapshot as cs  # noqa: E402


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=True).stdout


def collect(repo: str, sha: str, python: str, generated: list[str]) -> cs.Collection | None:
    git(repo, "checkout", "-q", "-f", sha)
    git(repo, "clean", "-qfdx")
    for spec in generated:  # files a build step would write (a version module)
        path, _, text = spec.partition("=")
        if os.path.isdir(os.path.join(repo, os.path.dirname(path))):
            with open(os.path.join(repo, path), "w", encoding="utf-8") as f:
                f.write(text + "\n")
    old = os.getcwd()
    os.chdir(repo)
    try:
        found = cs.collect(python)
    finally:
        os.chdir(old)
    if found is None or found.errors or found.exit_code not in (0, 5):
        return None
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("count", type=int, nargs="?", default=100)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument(
        "--write",
        action="append",
        default=[],
        metavar="PATH=TEXT",
        help="a file a build step would generate, written after each checkout",
    )
    args = parser.parse_args()
    repo = os.path.abspath(args.repo)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in ("src", ".", os.environ.get("PYTHONPATH", "")) if p)
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    log = git(
        repo, "log", "--no-merges", f"-n{args.count}", "--format=%H %s", "--", "tests", "testing", "test"
    ).splitlines()
    counts: collections.Counter[str] = collections.Counter()
    for line in log:
        sha, subject = line.split(" ", 1)
        before, after = collect(repo, f"{sha}~1", args.python, args.write), collect(repo, sha, args.python, args.write)
        if before is None or after is None:
            counts["not collected"] += 1
            continue
        counts["commits"] += 1
        base = {node_id: (status, i) for i, (node_id, status) in enumerate(sorted(before.items.items()), 2)}
        renamed = {}
        for row in git(repo, "diff", "--name-status", "-M", f"{sha}~1", sha).splitlines():
            parts = row.split("\t")
            if parts[0].startswith("R") and len(parts) == 3:
                renamed[parts[1]] = parts[2]

        def read_base(paths: list[str], parent: str = f"{sha}~1") -> dict[str, bytes | None]:
            out: dict[str, bytes | None] = {}
            for path in paths:
                proc = subprocess.run(["git", "-C", repo, "show", f"{parent}:{path}"], capture_output=True)
                out[path] = proc.stdout if proc.returncode == 0 else None
            return out

        def read_new(paths: list[str]) -> dict[str, bytes | None]:
            return {
                p: open(os.path.join(repo, p), "rb").read() if os.path.isfile(os.path.join(repo, p)) else None
                for p in paths
            }

        def same(vanished: list[str], appeared: list[str], base=base, after=after, renamed=renamed) -> set[str]:
            return sametest.reappearing_ids(base, after.items, vanished, appeared, read_base, read_new, renamed)

        without = cs.compare(base, after, "snapshot", lambda n: False, lambda n: True)
        with_model = cs.compare(base, after, "snapshot", lambda n: False, lambda n: True, same)
        counts["OG801 without the model"] += sum(f.code == "OG801" for f in without)
        counts["OG801"] += sum(f.code == "OG801" for f in with_model)
        if with_model or without:
            print(
                f"=== {sha[:10]} {subject[:70]} (OG801: {sum(f.code == 'OG801' for f in without)} without the model, {len(with_model)} with it)"
            )
            for finding in with_model:
                print("   ", finding.message[:200])
        sys.stdout.flush()
    print(dict(counts), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
