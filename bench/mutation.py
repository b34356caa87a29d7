"""`check --mutate` on real projects: mutants per second, and its cost against one plain run of the tests.

    git clone -q https://github.com/pytest-dev/pluggy /tmp/mutate-bench/pluggy
    git clone -q https://github.com/python-attrs/attrs /tmp/mutate-bench/attrs
    python bench/mutation.py --suite pluggy=/tmp/mutate-bench/pluggy:testing/test_multicall.py \\
                             --suite attrs=/tmp/mutate-bench/attrs:tests/test_converters.py --runs 3

Each suite is a throwaway clone (reset hard and cleaned: never point this at a
working copy you care about, nor at a clone another bench uses).  Per suite:

- honest: five test functions of MODULE get one harmless statement each (a
  five-test change); `oracle-guard check --mutate` with every static hook
  skipped judges it once verbosely (mutants, caught, lived, seconds: the
  mutants per second are end to end, pytest start-ups included), then
  paired runs (bench/paired.py) pair it with one plain `python -m pytest -q
  MODULE` (A/B per pair, medians of --runs);
- weakened: the same five tests' bodies become `pass`; one verbose run says
  how many OG910 findings the differential gives on a real suite.

Needs: pytest and the suites' test dependencies in this interpreter, oracle-guard
installed in it.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys

from paired import PairedError, pair_runs, summarize  # bench/ is the script's folder: first on sys.path

from oracle_guard.hook_ids import registry

STATIC = ",".join(h.id for h in registry.HOOKS if not h.opt_in)  # every static hook: --mutate alone judges


def git(root: str, *args: str) -> None:
    subprocess.run(("git", *args), cwd=root, check=True, capture_output=True)


def five_tests(root: str, module: str, weaken: bool) -> list[str]:
    """Edit the first five test functions of MODULE; their names."""
    path = os.path.join(root, module)
    with open(path, encoding="utf-8") as f:
        source = f.read()
    lines = source.splitlines(keepends=True)
    every = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
    tests = sorted(every, key=lambda n: n.lineno)[:5]  # methods of test classes too
    for node in sorted(tests, key=lambda n: -(n.end_lineno or n.lineno)):
        indent = " " * node.body[0].col_offset
        head = node.body[0]
        first = min([head.lineno, *(d.lineno for d in getattr(head, "decorator_list", []))]) - 1
        if weaken:
            lines[first : node.end_lineno] = [f"{indent}pass\n"]
        else:
            lines.insert(node.end_lineno or node.lineno, f"{indent}_bench_touched = True\n")
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(lines)
    return [n.name for n in tests]


def oracle_guard() -> str:
    found = shutil.which("oracle-guard", path=os.path.dirname(sys.executable))
    if not found:
        raise SystemExit("oracle-guard is not installed next to this interpreter")
    return found


def mutate_once(root: str, env: dict[str, str]) -> tuple[int, str, str]:
    proc = subprocess.run(
        (oracle_guard(), "check", "--mutate", "--skip", STATIC, "--base", "HEAD"),
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    return proc.returncode, proc.stdout, proc.stderr


def figures(err: str) -> dict[str, float]:
    found = re.search(
        r"ran (\d+) mutant\(s\) in \d+ production file\(s\) in ([0-9.]+) s: the base's tests caught (\d+), the new tests let (\d+)",
        err,
    )
    if not found:
        return {}
    ran, seconds, caught, lived = found.groups()
    return {"mutants": int(ran), "seconds": float(seconds), "caught": int(caught), "lived": int(lived)}


def paired(root: str, module: str, env: dict[str, str], runs: int) -> dict[str, str]:
    a = [oracle_guard(), "check", "--mutate", "--skip", STATIC, "--base", "HEAD"]
    b = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", module]
    try:
        result = pair_runs(a, b, runs=runs, warmup=0, timeout=3000, cwd=root, env=env)
    except PairedError as error:
        return {"paired": str(error)}
    medians = {
        name: f"{mid:.2f}"
        for name, (_, mid, _) in summarize(result).items()
        if name.split()[0] in ("A", "B", "A/B") and name.split()[1] in ("wall", "cpu")
    }
    if result.timed_out:
        medians["paired"] = f"{len(result.a)} whole pair(s) within the 3000 s bound"
    return medians


def suite(name: str, root: str, module: str, runs: int, only: str | None = None) -> None:
    env = {**os.environ, "VIRTUAL_ENV": sys.prefix, "PYTHONPATH": "src", "PYTHONHASHSEED": "0"}
    for weaken in (False, True):
        if only and only != ("weakened" if weaken else "honest"):
            continue
        git(root, "reset", "-q", "--hard")
        git(root, "clean", "-qfdx")
        names = five_tests(root, module, weaken)
        code, out, err = mutate_once(root, env)
        got = figures(err)
        rate = got["mutants"] / got["seconds"] if got.get("seconds") else 0.0
        kind = "weakened (bodies -> pass)" if weaken else "honest (one statement added)"
        print(f"{name}: {kind}: {module} {', '.join(names)}")
        print(f"  exit {code}, OG910 x{out.count('OG910')}, {got}, {rate:.2f} mutants/s end to end")
        for line in err.splitlines():
            if "notice: mutation:" in line and " ran " not in line:
                print(f"  {line.split('notice: ', 1)[1]}")
        if not weaken and runs:
            print(
                f"  paired medians over {runs} runs (A = check --mutate, B = pytest {module}): {paired(root, module, env, runs)}"
            )
    git(root, "reset", "-q", "--hard")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", action="append", default=[], metavar="NAME=ROOT:MODULE")
    parser.add_argument("--runs", type=int, default=3, help="paired runs of check --mutate and pytest (0: none)")
    parser.add_argument("--only", choices=("honest", "weakened"), help="run one of the two changes")
    args = parser.parse_args()
    for spec in args.suite:
        name, _, rest = spec.partition("=")
        root, _, module = rest.partition(":")
        suite(name, root, module, args.runs, args.only)


if __name__ == "__main__":
    main()
