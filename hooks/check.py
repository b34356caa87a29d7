"""`oracle-guard check`: every hook on the change against its base — the merge gate.

    oracle-guard check --base origin/main

File-based hooks get the changed test files (as pre-commit would pass
them); the contract and collection hooks look at the repository
themselves.  The exit code is the worst of the hooks': 2 for a usage or
configuration error, else 1 for any finding.
"""
from __future__ import annotations

import argparse
import re
import sys
from typing import Sequence

from hooks import changes, contract
from hooks.cli import HOOKS, load
from hooks.report import EXIT_CLEAN, EXIT_USAGE, FORMATS, UsageError, guarded

# Must match `files:` of the Python hooks in .pre-commit-hooks.yaml (a test checks it).
TEST_FILES = re.compile(r"(^|/)(tests?|testing)/|(^|/)(test_[^/]*|[^/]*_tests?|conftest)\.pyi?$")
PYTHON = re.compile(r"\.pyi?$")
FILE_HOOKS = ("forbid-skip-marks", "forbid-runtime-skip", "oracle-shrink")
TAKES_NOW = ("forbid-skip-marks", "forbid-runtime-skip", "quarantine-untouched", "collection-snapshot")
# The gate never writes a first snapshot: pytest runs only where one is committed.
EXTRA_ARGS = {"collection-snapshot": ["--if-snapshot"]}
OPT_IN = ("oracle-replay",)


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="oracle-guard check", description=__doc__.splitlines()[0])
    changes.add_base_args(parser)
    contract.add_contract_arg(parser)
    parser.add_argument("--now", metavar="TIME", help="the current time for freeze expiry (ISO-8601)")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("--skip", default="", metavar="IDS", help="comma-separated hook ids not to run (collection-snapshot: pytest is not run, its configuration comparison still is)")
    parser.add_argument("--only", default="", metavar="IDS", help="comma-separated hook ids to run (default: all)")
    parser.add_argument("--replay", action="store_true", help="also run oracle-replay: the base's tests against the new code (runs pytest twice)")
    args = parser.parse_args(argv)

    # oracle-replay runs pytest twice: only on request (`--replay`, or named in `--only`).
    wanted = [h.strip() for h in args.only.split(",") if h.strip()] or [h for h in HOOKS if h not in OPT_IN or args.replay]
    skipped = {h.strip() for h in args.skip.split(",") if h.strip()}
    unknown = sorted((set(wanted) | skipped) - set(HOOKS))
    if unknown:
        raise UsageError(f"unknown hook id {', '.join(unknown)} (known: {', '.join(HOOKS)})")

    changes.enter_repo([])
    change_set = changes.resolve(args)
    tests = [p for p in change_set.changed_paths if PYTHON.search(p) and TEST_FILES.search(p)]
    deleted_tests = [p for p in change_set.deleted if PYTHON.search(p) and TEST_FILES.search(p)]

    common = ["--contract", args.contract, "--format", args.format]
    if args.base:
        common += ["--base", args.base]
    worst = EXIT_CLEAN
    for hook in wanted:
        extra = EXTRA_ARGS.get(hook, [])
        if hook in skipped:
            if hook != "collection-snapshot":
                continue
            # Skipping the meta hook skips pytest; comparing the configuration that
            # hides tests needs nothing and still runs (`--only` leaves it out).
            extra = ["--static-only"]
        hook_argv = common + extra
        if args.now and hook in TAKES_NOW:
            hook_argv += ["--now", args.now]
        if hook in FILE_HOOKS:
            hook_argv += ["--", *tests]
        if hook in FILE_HOOKS and not tests and not (hook == "oracle-shrink" and deleted_tests):
            continue  # oracle-shrink also judges a change that only deletes test files
        code = load(HOOKS[hook][0])(hook_argv)
        sys.stdout.flush()
        worst = EXIT_USAGE if EXIT_USAGE in (code, worst) else max(worst, code)
    return worst


if __name__ == "__main__":
    raise SystemExit(main())
