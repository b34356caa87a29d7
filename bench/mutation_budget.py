"""`check --mutate` within its default budget (60 s, 200 mutants) on every change the mutation benches judge.

    cp -a /work/projects/pluggy /tmp/budget/pluggy        # a throwaway copy: it is reset between changes
    python bench/mutation_budget.py --clone /tmp/budget/pluggy --python .venv/bin/python --history 10 --values

Each change is one whole `oracle-guard check --mutate --skip STATIC --base BASE --python PYTHON`
process, timed from outside (wall, and the CPU seconds of it and its children), with the default
--mutate-timeout and --mutate-max:

- in the clone (bench/mutation.py's changes, and the issue's configuration change): the first five test
  functions of MODULE given one harmless statement each (honest) or made `pass` (weakened), each alone and
  with a comment added to CONFTEST (every test of the suite then runs at the base);
- --history N: the clone's last N test-touching commits, each against its parent (bench/mutation_history.py);
- --values: issue 31's rows (bench/mutation_values.py), each weakened and honest.

One line a change: exit, OG910s, wall, CPU, mutants run, mutants left by the budget and by the cap, and the
one-minute load average before it. The clone is reset hard and cleaned: never point it at a copy you care about.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mutation import five_tests  # bench/mutation.py: the same five-test change

from oracle_guard.hook_ids import registry

STATIC = ",".join(h.id for h in registry.HOOKS if not h.opt_in)  # every static hook: --mutate alone judges
RAN = re.compile(r"ran (\d+) mutant\(s\) .* in ([0-9.]+) s: the base's tests caught (\d+), the new tests let (\d+)")
LEFT_TIME = re.compile(r"(\d+) of (\d+) mutant\(s\) were not run within --mutate-timeout")
LEFT_CAP = re.compile(r"(\d+) of (\d+) mutants were not run \(--mutate-max")
NEW_UNRUN = "ran out before the new tests ran once"
GIT = ("git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "commit.gpgsign=false")


class Timed(NamedTuple):
    name: str
    exit: int
    og910: int
    wall: float
    cpu: float
    ran: str
    left: str
    load: float
    cmd: str


def timed(name: str, cmd: Sequence[str], cwd: str) -> Timed:
    """One whole gate process: wall from outside, CPU of it and every process it waited for."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    found = RAN.search(proc.stderr)
    ran = f"{found.group(1)} (caught {found.group(3)})" if found else "-"
    left = [f"{m.group(1)} by time" for m in LEFT_TIME.finditer(proc.stderr)]
    left += [f"{m.group(1)} by cap" for m in LEFT_CAP.finditer(proc.stderr)]
    if NEW_UNRUN in proc.stderr:
        left.append("new side unrun")
    if not found:
        last = (proc.stderr.strip().splitlines() or [""])[-1]
        left.append(last.replace("oracle-guard: notice: ", "")[:90])
    og910 = proc.stdout.count(" OG910 ")
    return Timed(name, proc.returncode, og910, wall, cpu, ran, ", ".join(left) or "0", load, " ".join(cmd[1:4]))


def gate_cmd(gate: str, python: str, base: str) -> list[str]:
    return [gate, "check", "--mutate", "--skip", STATIC, "--base", base, "--python", python]


def reset(clone: str, commit: str) -> None:
    subprocess.run((*GIT, "-C", clone, "checkout", "-q", "--detach", "-f", commit), check=True)
    subprocess.run((*GIT, "-C", clone, "clean", "-qfdx"), check=True)


def clone_changes(gate: str, python: str, clone: str, module: str, conftest: str) -> list[Timed]:
    head = subprocess.run(("git", "-C", clone, "rev-parse", "HEAD"), capture_output=True, text=True, check=True)
    commit = head.stdout.strip()
    rows = []
    for which in ("honest", "weakened"):
        for config in (False, True):
            reset(clone, commit)
            five_tests(clone, module, weaken=which == "weakened")
            if config:
                with open(os.path.join(clone, conftest), "a", encoding="utf-8") as f:
                    f.write("# touched by bench/mutation_budget.py\n")
            subprocess.run(("git", "-C", clone, "add", "-A"), check=True)
            name = f"{os.path.basename(clone)} {module}: five tests {which}" + (
                f", {conftest} touched" if config else ""
            )
            rows.append(timed(name, gate_cmd(gate, python, "HEAD"), clone))
            print(row(rows[-1]), flush=True)
    reset(clone, commit)
    return rows


def history(gate: str, python: str, clone: str, count: int) -> list[Timed]:
    head = subprocess.run(("git", "-C", clone, "rev-parse", "HEAD"), capture_output=True, text=True, check=True)
    log = subprocess.run(
        ("git", "-C", clone, "log", "--no-merges", f"-n{count}", "--format=%H %s", "--", "tests", "testing"),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    rows = []
    try:
        for line in log:
            sha, subject = line.split(" ", 1)
            reset(clone, sha)
            rows.append(
                timed(f"{os.path.basename(clone)} {sha[:8]} {subject[:40]}", gate_cmd(gate, python, f"{sha}^"), clone)
            )
            print(row(rows[-1]), flush=True)
    finally:
        reset(clone, head.stdout.strip())
    return rows


def values(gate: str, python: str) -> list[Timed]:
    from mutation_values import value_change  # bench/mutation_values.py: the same rows, built the same way

    from tests.test_mutation import VALUE_WEAKENINGS

    rows = []
    for name in sorted(VALUE_WEAKENINGS):
        for which in ("weakened", "honest"):
            root = value_change(name, which, prefix="mutation-budget-")
            try:
                rows.append(timed(f"values: {name} ({which})", gate_cmd(gate, python, "HEAD"), root))
                print(row(rows[-1]), flush=True)
            finally:
                shutil.rmtree(root, ignore_errors=True)
    return rows


def row(t: Timed) -> str:
    return f"| {t.name} | {t.exit} | {t.og910} | {t.wall:.1f} s | {t.cpu:.1f} s | {t.ran} | {t.left} | {t.load:.1f} |"


HEADER = "| change | exit | OG910 | wall | CPU | mutants run | left | load |\n|---|---|---|---|---|---|---|---|"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--gate", default=shutil.which("oracle-guard", path=os.path.dirname(sys.executable)))
    parser.add_argument("--python", default=sys.executable, help="the project's interpreter (pytest in it)")
    parser.add_argument(
        "--clone",
        action="append",
        default=[],
        help="CLONE[:MODULE:CONFTEST], a throwaway clone (reset between changes)",
        metavar="SPEC",
    )
    parser.add_argument("--module", default="testing/test_multicall.py")
    parser.add_argument("--conftest", default="testing/conftest.py")
    parser.add_argument("--history", type=int, default=0, metavar="N", help="the clone's last N test-touching commits")
    parser.add_argument("--values", action="store_true", help="issue 31's rows (bench/mutation_values.py)")
    args = parser.parse_args(argv)
    if not args.gate:
        parser.error("no oracle-guard next to this interpreter: pass --gate")
    print(f"gate {args.gate}, project python {args.python}")
    print(HEADER, flush=True)
    steps: list[Callable[[], list[Timed]]] = []
    for spec in args.clone:
        clone, _, rest = spec.partition(":")
        module, _, conftest = rest.partition(":")
        steps.append(
            lambda c=clone, m=module or args.module, f=conftest or args.conftest: clone_changes(
                args.gate, args.python, c, m, f
            )
        )
        if args.history:
            steps.append(lambda c=clone: history(args.gate, args.python, c, args.history))
    if args.values:
        steps.append(lambda: values(args.gate, args.python))
    rows = [r for step in steps for r in step()]
    if rows:
        worst = max(rows, key=lambda r: r.wall)
        print(f"slowest: {worst.name}, {worst.wall:.1f} s wall, {worst.cpu:.1f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
