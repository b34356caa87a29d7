"""Bad-input sweep: every hook of `oracle-guard check` on files of one repeated shape, timed from outside.

    python bench/bad_input_sweep.py [--oracle-guard PATH] [--bytes 20000] [--timeout 20]

For each prefix x unit below, a throwaway repository gets one commit, then
the same 20,000-byte file as production code, a test module and a conftest
(uncommitted), and `oracle-guard check --base HEAD --skip collection-snapshot`
runs on it.  Prints every run that is slow (over 3 s: libcst may take its
10 s per file to refuse a long chain), and counts as bad each one killed by a
signal, past the timeout, or that printed a traceback (one clear line and
exit 1 or 2 is the contract); exit 1 if any.  Shapes that once broke it: a run of
quotes (O(n^3) backtracking), a `####` banner after a string (exponential),
20,000 open brackets in an f-string (libcst's parser overflowed the stack).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

from bench_git import GIT_ENV  # bench/ is the script's folder: first on sys.path

UNITS = [
    "#",
    '"',
    "'",
    "\\",
    " ",
    "\t",
    "\n",
    "{",
    "}",
    "(",
    ")",
    ",",
    ".",
    ":",
    "=",
    "@",
    "-",
    "+",
    "*",
    "a",
    "_",
    "[",
    "]",
    "\r\n",
    "é",
    "\\\n",
    '"""',
    "'a' ",
    "# ",
    "import ",
    "from ",
    "pytest.",
    "os.",
    "skip",
    "    ",
]
PREFIXES = [
    "x = 'a'\n",
    "x = 'a'",
    "def test_a():\n    ",
    "@pytest.mark.",
    "import os\n",
    "s = '''",
    "f'{",
    "#",
    "assert ",
    "",
]
BASE = {
    "calc/__init__.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--oracle-guard", default=shutil.which("oracle-guard") or "oracle-guard")
    parser.add_argument("--bytes", type=int, default=20000)
    parser.add_argument("--timeout", type=float, default=20)
    args = parser.parse_args()
    env = {**os.environ, **GIT_ENV}
    bad = 0
    with tempfile.TemporaryDirectory(prefix="bad-input-") as scratch:
        for prefix in PREFIXES:
            for unit in UNITS:
                root = os.path.join(scratch, "repo")
                shutil.rmtree(root, ignore_errors=True)
                os.makedirs(root)
                subprocess.run(["git", "init", "-q", root], check=True)
                for rel, text in BASE.items():
                    os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
                    with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                        f.write(text)
                subprocess.run(["git", "add", "-A"], cwd=root, check=True)
                subprocess.run(["git", "commit", "-qm", "base"], cwd=root, check=True, env=env)
                body = prefix + unit * (args.bytes // len(unit)) + "\nfoo()\n"
                for rel in (*BASE, "conftest.py"):
                    with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                        f.write(body)
                started = time.perf_counter()
                command = [args.oracle_guard, "check", "--base", "HEAD", "--skip", "collection-snapshot"]
                try:
                    proc = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=args.timeout)
                except subprocess.TimeoutExpired:
                    print(f"TIMEOUT  prefix={prefix!r} unit={unit!r}", flush=True)
                    bad += 1
                    continue
                took = time.perf_counter() - started
                if took > 3 or proc.returncode not in (0, 1, 2) or "Traceback" in proc.stderr:
                    print(
                        f"{took:5.1f} s exit {proc.returncode} prefix={prefix!r} unit={unit!r} "
                        f"{proc.stderr.strip()[-200:]!r}",
                        flush=True,
                    )
                    bad += int(proc.returncode not in (0, 1, 2) or "Traceback" in proc.stderr)
    print(f"{len(PREFIXES) * len(UNITS)} shapes, {bad} bad", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
