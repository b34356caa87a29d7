"""Red-team the gate the way an outside evaluation would: real repos, real tests.

    python bench/redteam.py attrs /tmp/eval-attrs
    python bench/redteam.py click /tmp/eval-click [RECIPE ...]

Each recipe (a row of bench/redteam_recipes.py) edits real test files of a
throwaway clone (attrs or click, no oracle-guard contract), is committed on
its own branch from a fixed base, and is judged by `oracle-guard check --base
<base> --skip collection-snapshot` (the brief's command) and by the full
`oracle-guard check --base <base>` (which adds the static pytest-config half
of collection-snapshot; without a committed snapshot it never runs pytest).
A weakening recipe is `caught` or `MISSED`; an honest one is `clean` or
`FALSE-ALARM`.  The clone is reset hard and cleaned: never point this at a
working copy you care about.  REDTEAM_VERBOSE=1 prints the findings of every
miss and false alarm.

The base is the clone's origin/HEAD (or $REDTEAM_BASE) plus one setup commit
(tests/test_eval_*.py) adding shapes the project lacks: pytest.approx/isclose,
unittest asserts and assertRaises, @settings in a variable and a constant,
data.draw.  Weakening recipes of the pytest configuration are caught by the
full check only (they are collection-snapshot's static half).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from redteam_edits import apply_edits
from redteam_recipes import RECIPES, SETUP


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def prepare_base(project: str, repo: str) -> str:
    """One setup commit on the clone's HEAD: extra test shapes the project lacks."""
    git(repo, "checkout", "-q", "-f", "--detach", os.environ.get("REDTEAM_BASE", "origin/HEAD"))
    git(repo, "clean", "-qfdx")
    apply_edits(repo, SETUP[project])
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=redteam", "-c", "user.email=r@t", "commit", "-q", "--allow-empty", "-m", "redteam base")
    return git(repo, "rev-parse", "HEAD").strip()


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    project, repo, only = sys.argv[1], sys.argv[2], set(sys.argv[3:])
    beside = os.path.join(os.path.dirname(sys.executable), "oracle-guard")
    gate = beside if os.path.exists(beside) else shutil.which("oracle-guard") or "oracle-guard"
    base = prepare_base(project, repo)
    tally = {"weak": [0, 0], "honest": [0, 0]}
    brief_ok = {"weak": 0, "honest": 0}
    for recipe in RECIPES:
        kind, name = recipe.kind, recipe.name
        if recipe.project != project or (only and name not in only):
            continue
        git(repo, "checkout", "-q", "-f", "-B", f"redteam/{name}", base)
        git(repo, "clean", "-qfdx")
        apply_edits(repo, recipe.edits)
        git(repo, "add", "-A")
        git(repo, "-c", "user.name=redteam", "-c", "user.email=r@t", "commit", "-q", "-m", name)
        verdicts = []
        outputs = []
        for extra in (["--skip", "collection-snapshot"], []):
            proc = subprocess.run([gate, "check", "--base", base, *extra], cwd=repo, capture_output=True, text=True)
            flagged = proc.returncode != 0
            if kind == "weak":
                verdicts.append("caught" if flagged else "MISSED")
            else:
                verdicts.append("FALSE-ALARM" if flagged else "clean")
            outputs.append((proc.stdout + proc.stderr).strip())
        ok = verdicts[1] in ("caught", "clean")
        brief_ok[kind] += verdicts[0] in ("caught", "clean")
        tally[kind][0] += ok
        tally[kind][1] += 1
        codes = sorted(set(re.findall(r"\b(OG\d+)\b", outputs[1])))
        print(f"{kind:6} {name:38} brief:{verdicts[0]:11} full:{verdicts[1]:11} {' '.join(codes)}")
        if (verdicts[1] in ("MISSED", "FALSE-ALARM") or verdicts[0] != verdicts[1]) and os.environ.get(
            "REDTEAM_VERBOSE"
        ):
            for line in outputs[1].splitlines()[:6]:
                print("        ", line[:220])
    git(repo, "checkout", "-q", "-f", "--detach", base)
    print(
        f"{project}: weakening caught {tally['weak'][0]}/{tally['weak'][1]} (full check; {brief_ok['weak']} with --skip collection-snapshot); "
        f"honest clean {tally['honest'][0]}/{tally['honest'][1]} ({brief_ok['honest']})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
