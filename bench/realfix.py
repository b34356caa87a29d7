"""Precision on real fixes: upstream bug fixes replayed from a red base, honest and cheated (issue 39, item 7).

    python bench/realfix.py --table bench/realfix_fixes.json --venv-root /work/projects/venvs --out docs/realfix.md

Each row of the table (bench/realfix_mine.py finds them: a commit, and its
tests that fail on its parent with its test changes and pass at it) becomes:

- a red base: the fix's parent plus the fix's test changes, committed on a
  scratch branch of a throwaway clone of CLONE_ROOT/PROJECT;
- the honest patch: the fix's production files laid over the red base;
- five cheats on the red base that keep the bug (bench/realfix_cheats.py):
  test-side, table, pytest, equal, count. Each is run with plain pytest on
  the fixed tests first; only one that turns them all green counts.

Each patch, committed, is judged by the oracle-guard beside this interpreter
(`--gate` to choose) in three modes: `check --base RED` (static),
`check --replay --base RED`, `check --mutate --base RED`, with
`--python VENV_ROOT/PROJECT/bin/python`, one at a time, each under a timeout.
The honest patch must exit 0 in every mode; a cheat is refused when a mode
exits non-zero. The static hooks run in every mode, so a cheat the static
mode refuses is refused by the others too: they are not run for it unless
`--all-modes` (the honest patch always runs all three). `--probes-alone`
runs replay and mutate with every static hook skipped, on every patch: what
the probes refuse by behaviour, whatever the spelling. Writes the markdown
report to --out and every verdict to --json, fix by fix (`--resume` that
file to go on after a stop; only on the same gate code).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

from realfix_cheats import BUILDERS, CLASSES, green
from realfix_git import commit_all, git, honest_files, is_production, is_test, lay_over, red_base, run_pytest
from realfix_imported import BUILDERS as IMPORTED
from realfix_report import report

MODES = {"static": [], "replay": ["--replay"], "mutate": ["--mutate"]}
FINDING = re.compile(r": (OG\d{3}) ")
HERE = os.path.dirname(os.path.abspath(__file__))


def gate_run(args: argparse.Namespace, tree: str, python: str, red: str, mode: str) -> dict[str, Any]:
    cmd = [args.gate, "check", "--base", red, "--python", python, *MODES[mode]]
    if mode == "mutate":
        cmd += ["--mutate-max", str(args.mutate_max), "--mutate-timeout", str(args.mutate_timeout)]
    if mode != "static" and args.probes_alone:
        cmd += ["--skip", static_hooks()]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    env["VIRTUAL_ENV"] = os.path.dirname(os.path.dirname(python))
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=args.timeout)
        code, out = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired:
        code, out = -1, f"timed out after {args.timeout}s"
    codes = sorted(set(FINDING.findall(out)))
    last = [line for line in out.splitlines() if line.strip()][-3:]
    return {"exit": code, "codes": codes, "seconds": round(time.monotonic() - started, 1), "tail": last}


def static_hooks() -> str:
    """Every static hook's id, from the gate under judgement: `--skip` them and the probes judge alone."""
    from oracle_guard.hook_ids import registry

    return ",".join(h.id for h in registry.HOOKS if not h.opt_in)


def record(tree: str, python: str, tests: list[str]) -> list[dict[str, Any]]:
    """The calls the fixed tests make into production code, on the honest fix (bench/realfix_record.py)."""
    files = git(tree, "ls-files").splitlines()
    with tempfile.TemporaryDirectory(prefix="realfix-record-") as scratch:
        out = os.path.join(scratch, "entries.json")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "VIRTUAL_ENV")}
        src = os.path.join(tree, "src")
        env["PYTHONPATH"] = os.pathsep.join([tree, *([src] if os.path.isdir(src) else []), HERE])
        env.update(
            PYTHONDONTWRITEBYTECODE="1",
            PYTHONHASHSEED="0",
            REALFIX_RECORD=out,
            REALFIX_TEST_FILES=json.dumps([os.path.join(tree, p) for p in files if is_test(p)]),
            REALFIX_PROD_FILES=json.dumps([os.path.join(tree, p) for p in files if is_production(p)]),
        )
        cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "realfix_record"]
        subprocess.run(cmd + tests, cwd=tree, env=env, capture_output=True, text=True, timeout=300)
        if not os.path.exists(out):
            return []
        with open(out, encoding="utf-8") as f:
            return list(json.load(f))


def judge(args: argparse.Namespace, tree: str, python: str, red: str, honest: bool) -> dict[str, Any]:
    """Each mode's verdict; a cheat the static mode refuses inherits that verdict unless --all-modes."""
    verdicts: dict[str, Any] = {"static": gate_run(args, tree, python, red, "static")}
    for mode in ("replay", "mutate"):
        if verdicts["static"]["exit"] != 0 and not honest and not (args.all_modes or args.probes_alone):
            verdicts[mode] = {**verdicts["static"], "inherited": True}
        else:
            verdicts[mode] = gate_run(args, tree, python, red, mode)
    return verdicts


def one_fix(
    args: argparse.Namespace, row: dict[str, Any], tree: str, python: str, judged: dict[str, Any] | None = None
) -> dict[str, Any]:
    """One fix's verdicts: the honest patch's in every mode (JUDGED: an --honest-only run's, kept), then the
    cheats' unless --honest-only."""
    fix, tests = row["fix"], row["tests"]
    red = red_base(tree, fix, "realfix/red")
    result: dict[str, Any] = {"project": row["project"], "fix": fix, "tests": len(tests), "cheats": {}}
    before = run_pytest(tree, python, tests)
    result["red_base_fails"] = all(before.get(t) == "FAILED" for t in tests)
    files = honest_files(tree, fix)
    git(tree, "checkout", "-q", "-f", "-B", "realfix/honest", red)
    lay_over(tree, fix, files)
    commit_all(tree, f"realfix honest: {fix[:10]}")
    result["honest_green"] = all(run_pytest(tree, python, tests).get(t) == "PASSED" for t in tests)
    entries = record(tree, python, tests)
    result["recorded_calls"] = len(entries)
    result["honest"] = judged["honest"] if judged else judge(args, tree, python, red, honest=True)
    result["honest_only"] = bool(args.honest_only)
    for name in [] if args.honest_only else args.classes.split(","):
        git(tree, "checkout", "-q", "-f", "-B", f"realfix/{name}", red)
        git(tree, "clean", "-qfdx")
        try:
            built = {**BUILDERS, **IMPORTED}[name](
                tree=tree, python=python, tests=tests, entries=entries, fix=fix, files=files
            )
        except (SyntaxError, ValueError, KeyError, RuntimeError, OSError) as error:  # a shape the builder lacks
            built, why = False, f"{type(error).__name__}: {error}"[:200]
        else:
            why = ""
        cheat: dict[str, Any] = {"built": built, "why": why, "green": built and green(tree, python, tests)}
        if cheat["green"]:
            commit_all(tree, f"realfix cheat {name}: {fix[:10]}")
            cheat["verdicts"] = judge(args, tree, python, red, honest=False)
        result["cheats"][name] = cheat
    return result


def describe(gate: str) -> str:
    """Which gate judged: its version and the commit of the checkout this bench runs from."""
    proc = subprocess.run([gate, "--version"], capture_output=True, text=True)
    version = (proc.stdout + proc.stderr).strip().splitlines()[-1:] or ["unknown version"]
    return f"`{version[0]}` (bench checkout {git(HERE, 'rev-parse', '--short', 'HEAD').strip()})"


def kept(table: list[dict[str, Any]], done: dict[str, Any], results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the --json file keeps, in the table's order: this run's verdicts, else the --resume file's.

    A run that stops (or is stopped) before a fix, or leaves it out (--only), keeps that fix's earlier
    verdicts: the cheats' run resumed on the --honest-only run's file must not drop the honest verdicts
    of the fixes it has not reached yet."""
    now = {r["fix"]: r for r in results}
    return [now.get(row["fix"], done.get(row["fix"])) for row in table if row["fix"] in now or row["fix"] in done]


def save(path: str, results: list[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1)
        f.write("\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", required=True)
    parser.add_argument("--venv-root", required=True)
    parser.add_argument("--out", required=True, help="the markdown report")
    parser.add_argument("--json", help="every verdict (default: the report's path with .json)")
    parser.add_argument("--clone-root", default="/work/projects")
    parser.add_argument("--scratch", default="/work/projects/realfix-scratch")
    parser.add_argument("--gate", default=shutil.which("oracle-guard", path=os.path.dirname(sys.executable)))
    parser.add_argument("--timeout", type=float, default=600, help="seconds for one gate run")
    parser.add_argument("--mutate-max", type=int, default=20)
    parser.add_argument("--mutate-timeout", type=int, default=180)
    parser.add_argument("--all-modes", action="store_true", help="run replay and mutate on statically refused cheats")
    parser.add_argument(
        "--probes-alone", action="store_true", help="replay and mutate skip every static hook (implies --all-modes)"
    )
    parser.add_argument("--only", help="comma-separated projects or fix prefixes")
    parser.add_argument(
        "--classes",
        default=",".join(CLASSES),
        help=f"the cheats to build, comma-separated (default: {','.join(CLASSES)}; also: {','.join(IMPORTED)})",
    )
    parser.add_argument(
        "--honest-only",
        action="store_true",
        help="judge the honest patches alone; a later run without it (--resume) adds the cheats, keeping them",
    )
    parser.add_argument(
        "--resume", help="a --json file of an earlier run on the same code: its fixes are not run again"
    )
    parser.add_argument("--report-only", action="store_true", help="write the report of the --resume file's fixes")
    parser.add_argument(
        "--overlay",
        action="append",
        default=[],
        help="a --json file of a later run of some cheat classes (--classes): its honest verdicts and those"
        " classes' cheats replace the --resume file's, fix by fix (the report's command names both); again"
        " for a still later run, applied in order",
    )
    args = parser.parse_args(argv)
    unknown = set(args.classes.split(",")) - set(BUILDERS) - set(IMPORTED)
    if unknown:
        print(f"realfix: no such cheat class: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    if not args.gate:
        print("realfix: no oracle-guard beside this interpreter: pass --gate", file=sys.stderr)
        return 2
    try:
        with open(args.table, encoding="utf-8") as f:
            rows = json.load(f)
    except (OSError, ValueError) as error:
        print(f"realfix: cannot read {args.table}: {error}", file=sys.stderr)
        return 2
    table = rows
    if args.only:
        wanted = args.only.split(",")
        rows = [r for r in rows if r["project"] in wanted or any(r["fix"].startswith(w) for w in wanted)]
    out_json = args.json or os.path.splitext(args.out)[0] + ".json"
    done: dict[str, Any] = {}
    if args.resume and os.path.exists(args.resume):
        with open(args.resume, encoding="utf-8") as f:
            done = {r["fix"]: r for r in json.load(f)}
    for overlay in args.overlay:
        with open(overlay, encoding="utf-8") as f:
            for later in json.load(f):
                earlier = done.setdefault(later["fix"], later)
                earlier["honest"] = later["honest"]
                earlier["cheats"] = {**earlier.get("cheats", {}), **later.get("cheats", {})}
    results = []
    trees: dict[str, str] = {}
    for row in rows:
        project = row["project"]
        earlier = done.get(row["fix"])
        if earlier is not None and (args.honest_only or args.report_only or not earlier.get("honest_only")):
            results.append(earlier)
            continue
        if args.report_only:
            continue
        python = os.path.join(args.venv_root, project, "bin", "python")
        if project not in trees:
            trees[project] = os.path.join(args.scratch, f"bench-{project}")
            shutil.rmtree(trees[project], ignore_errors=True)
            os.makedirs(args.scratch, exist_ok=True)
            git(args.scratch, "clone", "-q", os.path.join(args.clone_root, project), trees[project])
        started = time.monotonic()
        try:
            result = one_fix(args, row, trees[project], python, earlier)
        except (RuntimeError, OSError, SyntaxError, ValueError, subprocess.TimeoutExpired) as error:
            print(f"{project:10} {row['fix'][:10]} not judged: {type(error).__name__}: {error}", flush=True)
            if earlier is not None:
                results.append(earlier)  # an --honest-only run's verdicts stay
            continue
        result["seconds"] = round(time.monotonic() - started)
        results.append(result)
        save(out_json, kept(table, done, results))  # fix by fix: a run stopped early keeps what it judged
        cheats = " ".join(
            f"{n}:{'-' if not c['green'] else ','.join(str(v['exit']) for v in c['verdicts'].values())}"
            for n, c in result["cheats"].items()
        )
        honest = ",".join(str(v["exit"]) for v in result["honest"].values())
        print(f"{project:10} {row['fix'][:10]} honest {honest}  {cheats}  {result['seconds']}s", flush=True)
    command = "python bench/realfix.py " + " ".join(argv if argv is not None else sys.argv[1:])
    save(out_json, kept(table, done, results))
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(report(results, command, describe(args.gate), len(rows)))
    print(f"wrote {args.out} and {out_json}")
    counts = collections.Counter(v["exit"] for r in results for v in r["honest"].values())
    return 0 if set(counts) <= {0} else 1


if __name__ == "__main__":
    raise SystemExit(main())
