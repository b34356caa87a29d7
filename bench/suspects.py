"""The price of the suspects' probes (probes/suspects/: repeat and reorder, recorded calls made outside pytest).

    python bench/suspects.py make /tmp/bench-suspects --functions 8
    python bench/paired.py -n 5 --vs 'python -m pytest -q -p no:cacheprovider tests' -- \\
        python bench/suspects.py replay /tmp/bench-suspects --probes on      # from inside /tmp/bench-suspects

``make`` writes a git repository holding a red base (FUNCTIONS stubs raising NotImplementedError,
three tests each, and as many green tests of a finished function) and stages the honest fix of
every stub: every stub's tests are suspects.  ``replay`` runs `oracle-replay --base HEAD` on it in
this process with the suspects' probes on or off (``gate.PROBES``), exit status the replay's.
Timed as whole processes against a plain pytest of the same tests, paired, the two ratios' difference
is the probes' price in plain runs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from bench_git import GIT_ENV  # bench/ is the script's folder: first on sys.path

TEST = """
def test_{name}_small():
    assert {name}(2, 3) == {small}


def test_{name}_zero():
    assert {name}(0, 7) == {zero}


def test_{name}_large():
    assert {name}(100, 250) == {large}
"""
OPS = [("+", lambda a, b: a + b), ("*", lambda a, b: a * b), ("-", lambda a, b: a - b), ("max", max), ("min", min)]


def _source(op: str) -> str:
    return f"{op}(a, b)" if op in ("max", "min") else f"a {op} b"


def make(root: str, functions: int) -> None:
    os.makedirs(os.path.join(root, "tests"), exist_ok=True)
    stubs, fixed, tests = [], [], ["from calc import *\n"]
    for i in range(functions):
        op, call = OPS[i % len(OPS)]
        name = f"f{i}"
        stubs.append(f"def {name}(a, b):\n    raise NotImplementedError\n")
        fixed.append(f"def {name}(a, b):\n    return {_source(op)}\n")
        tests.append(TEST.format(name=name, small=call(2, 3), zero=call(0, 7), large=call(100, 250)))
        tests.append(f"\n\ndef test_done_{i}():\n    assert done({i}) == {i + 1}\n")
    done = "def done(x):\n    return x + 1\n"

    def write(path: str, text: str) -> None:
        with open(os.path.join(root, path), "w", encoding="utf-8") as f:
            f.write(text)

    def git(*args: str) -> None:
        subprocess.run(("git", *args), cwd=root, check=True, capture_output=True, env={**os.environ, **GIT_ENV})

    write("pytest.ini", "[pytest]\npythonpath = .\n")
    write("calc.py", "\n\n".join([done, *stubs]))
    write("tests/test_calc.py", "\n".join(tests))
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("-c", "commit.gpgsign=false", "commit", "-qm", "base")
    write("calc.py", "\n\n".join([done, *fixed]))
    write("tests/test_calc.py", "\n".join(tests) + "\n# touched\n")
    git("add", "-A")


def replay(root: str, probes: bool) -> int:
    from oracle_guard.hook_ids import replay as replay_hook
    from oracle_guard.probes.suspects import gate

    gate.PROBES = probes
    os.chdir(root)
    return replay_hook.main(["--base", "HEAD", "--python", sys.executable])


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    made = sub.add_parser("make")
    made.add_argument("root")
    made.add_argument("--functions", type=int, default=8)
    ran = sub.add_parser("replay")
    ran.add_argument("root")
    ran.add_argument("--probes", choices=("on", "off"), default="on")
    args = parser.parse_args()
    if args.what == "make":
        make(args.root, args.functions)
        return 0
    return replay(args.root, args.probes == "on")


if __name__ == "__main__":
    sys.exit(main())
