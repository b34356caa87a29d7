"""One plain `pytest` run against a cold and a warm `oracle-guard check --replay`, paired (bench/paired.py).

    git clone -q https://github.com/pytoolz/toolz /tmp/bench-toolz     # a fast suite (about 1 s)
    python -m pip install toolz pytest -e .                             # its version metadata; oracle-guard
    python bench/replay_cache.py /tmp/bench-toolz toolz/dicttoolz.py [--runs 7]

A red base (issue 37's sqlparse and cachetools rows): --red FUNCTION commits PRODUCTION_FILE with
FUNCTION's body (its docstring kept) replaced by `raise NotImplementedError` on the branch
replay-cache-bench-red, and puts the body back in the work tree: the change is the honest
implementation of a stub its tests fail on.  Run again, the branch is made again from its parent.

    git clone -q https://github.com/andialbrecht/sqlparse /tmp/bench-sqlparse
    python bench/replay_cache.py /tmp/bench-sqlparse sqlparse/utils.py --red remove_quotes --runs 3
    git clone -q https://github.com/tkem/cachetools /tmp/bench-cachetools   # src layout: pip install -e it
    python bench/replay_cache.py /tmp/bench-cachetools src/cachetools/keys.py --red typedkey

The clone is reset hard and cleaned (never point this at a working copy you care about), then
PRODUCTION_FILE gets a small function appended (--comment: a comment) and is left changed in the
work tree: the replay judges that change against HEAD.  "plain" is `python -m pytest -q -p
no:cacheprovider -p no:randomly` in the clone, the project's own configuration deciding what runs
(the whole suite, once), with bytecode written and cached as on a developer's machine
(PYTHONDONTWRITEBYTECODE is dropped from the environment).  "cold" is the
replay with an empty cache folder (emptied before each run, so each run also writes its entries);
"warm" is the replay with a cache folder the uncounted warm-up run filled
(probes/replay/base_cache.py, probes/flips/cached.py).  Two paired calls, plain then replay in turn
(paired.pair_runs), one per replay; the ratios are replay/plain per pair, medians quoted.
Targets (issue 37): warm <= 1.5x, cold <= 2.5x.  Before timing, one warm run is checked to exit 0
and to say that the main run's base side came from the cache (with --comment, the flip run's too:
a code change has the base's flip run record the calls into it, so that side runs fresh).

Needs: this interpreter with pytest, the project's test dependencies and oracle-guard installed.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from bench_git import GIT_ENV  # bench/ is the script's folder: first on sys.path
from paired import Run, pair_runs

WARM_NOTICES = ("the base side's outcomes from the cache", "the flip run's base side from the cache")
RED_BRANCH = "replay-cache-bench-red"
RED_SUBJECT = "replay cache bench: red base"


def git(root: str, *args: str) -> None:
    subprocess.run(("git", *args), cwd=root, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def git_out(root: str, *args: str) -> str:
    return subprocess.run(
        ("git", *args), cwd=root, check=True, capture_output=True, text=True, env={**os.environ, **GIT_ENV}
    ).stdout.strip()


def red_base(root: str, path: str, function: str) -> None:
    """Commit PATH with FUNCTION's body replaced by a stub (the red base); the work tree gets the body back."""
    start = "HEAD~1" if git_out(root, "log", "-1", "--format=%s") == RED_SUBJECT else "HEAD"
    git(root, "checkout", "-q", "-B", RED_BRANCH, git_out(root, "rev-parse", start))
    full = os.path.join(root, path)
    with open(full, encoding="utf-8") as f:
        text = f.read()
    found = [
        n
        for n in ast.walk(ast.parse(text))
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == function
    ]
    if len(found) != 1:
        raise SystemExit(f"{path}: {len(found)} functions named {function}, want one")
    body = found[0].body
    if ast.get_docstring(found[0]) is not None:
        body = body[1:]
    if not body:
        raise SystemExit(f"{path}: {function} has no body beside its docstring")
    lines = text.splitlines(keepends=True)
    first, last = body[0].lineno - 1, body[-1].end_lineno or body[-1].lineno
    stub = " " * body[0].col_offset + "raise NotImplementedError\n"
    with open(full, "w", encoding="utf-8") as f:
        f.write("".join([*lines[:first], stub, *lines[last:]]))
    git(root, "commit", "-qam", RED_SUBJECT)
    with open(full, "w", encoding="utf-8") as f:
        f.write(text)


def replay(cache: str, empty_first: bool) -> list[str]:
    """The replay command, its cache folder given by ORACLE_GUARD_CACHE (emptied first for a cold run)."""
    command = [sys.executable, "-m", "oracle_guard", "check", "-q", "--replay", "--base", "HEAD"]
    command += ["--python", sys.executable]
    if not empty_first:
        return ["env", f"ORACLE_GUARD_CACHE={cache}", *command]
    return ["sh", "-c", 'rm -rf "$1" && shift && exec env ORACLE_GUARD_CACHE="$0" "$@"', cache, cache, *command]


def ratios(top: list[Run], bottom: list[Run], figure: str) -> list[float]:
    return [getattr(t, figure) / getattr(b, figure) for t, b in zip(top, bottom)]


def line(name: str, values: list[float], unit: str) -> str:
    return f"  {name:18} median {statistics.median(values):6.2f}{unit} (min {min(values):.2f}, max {max(values):.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clone")
    parser.add_argument("production_file")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--comment", action="store_true", help="append a comment instead of a function")
    parser.add_argument("--red", metavar="FUNCTION", help="a red base: FUNCTION stubbed at the base, implemented now")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds for each paired call")
    args = parser.parse_args()
    root = os.path.abspath(args.clone)
    git(root, "reset", "-q", "--hard")
    git(root, "clean", "-qfdx")
    if args.red:
        red_base(root, args.production_file, args.red)
    else:
        with open(os.path.join(root, args.production_file), "a", encoding="utf-8") as f:
            # A code change by default (the base's flip run records the calls into it, so its base side runs
            # fresh even warm); --comment: a comment only (the same code: the flips entry stands in).
            f.write(
                "\n# replay cache bench: touched\n" if args.comment else "\n\ndef _bench_touched():\n    return 1\n"
            )
    # As on a developer's machine: bytecode is written and cached (the plain run reads its rewritten
    # test modules from __pycache__; the replay's fresh trees cannot, see docs/speed.md).
    dropped = ("PYTEST_ADDOPTS", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    plain = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    caches = tempfile.mkdtemp(prefix="replay-cache-bench-")
    try:
        cold = replay(os.path.join(caches, "cold"), empty_first=True)
        warm = replay(os.path.join(caches, "warm"), empty_first=False)
        for command in (warm, warm):  # the first fills the cache, the second must use it
            proc = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
        expected = WARM_NOTICES if args.comment else WARM_NOTICES[:1]
        if proc.returncode != 0 or not all(n in proc.stderr for n in expected):
            raise SystemExit(f"the warm replay did not run from the cache (exit {proc.returncode}):\n{proc.stderr}")
        from_cache = [n for n in WARM_NOTICES if n in proc.stderr]
        results = {
            name: pair_runs(plain, command, runs=args.runs, timeout=args.timeout, cwd=root, env=env)
            for name, command in (("cold", cold), ("warm", warm))
        }
    finally:
        shutil.rmtree(caches, ignore_errors=True)
        git(root, "reset", "-q", "--hard")
    try:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        load = "?"
    print(
        f"{os.path.basename(root)}: {args.production_file} touched; {args.runs} pairs per replay, load average at the end {load}"
    )
    print(f"warm: {'; '.join(from_cache)}")
    for name, result in results.items():
        exits = sorted({r.exit for r in result.a} | {r.exit for r in result.b})
        print(f"{name} (exit codes {exits})")
        print(line("plain wall", [r.wall for r in result.a], " s"))
        print(line(f"{name} wall", [r.wall for r in result.b], " s"))
        print(line(f"{name} cpu", [r.cpu for r in result.b], " s"))
        target = 2.5 if name == "cold" else 1.5
        print(line(f"{name}/plain wall", ratios(result.b, result.a, "wall"), "x") + f", target <= {target}x")
        print(line(f"{name}/plain cpu", ratios(result.b, result.a, "cpu"), "x"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
