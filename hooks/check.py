"""`oracle-guard check`: every hook on the change against its base — the merge gate.

    oracle-guard check --base origin/main

File-based hooks get the changed test files (as pre-commit would pass
them); the contract and collection hooks look at the repository
themselves.  The exit code is the worst of the hooks': 2 for a usage or
configuration error, else 1 for any finding.
"""
from __future__ import annotations

import re
from typing import Sequence

from hooks import args as hook_args
from hooks import changes, registry, runner
from hooks.report import UsageError, guarded

# Must match `files:` of the Python hooks in .pre-commit-hooks.yaml (a test checks it).
TEST_FILES = re.compile(r"(^|/)(tests?|testing)/|(^|/)(test_[^/]*|[^/]*_tests?|conftest)\.pyi?$")
PYTHON = re.compile(r"\.pyi?$")
FILE_HOOKS = tuple(h.id for h in registry.HOOKS if h.files)
TAKES_NOW = tuple(h.id for h in registry.HOOKS if h.now)


def ids(text: str) -> list[str]:
    return [h.strip() for h in text.split(",") if h.strip()]


def plans(base: runner.HookContext, wanted: Sequence[str], skipped: set[str], tests: list[str], deleted_tests: list[str], started: list, gate: bool = True) -> list[runner.Plan]:  # type: ignore[type-arg]
    """One context per hook that has something to look at."""
    result = []
    for hook_id in wanted:
        hook = registry.BY_ID[hook_id]
        options: dict[str, object] = {}
        if hook.id == "collection-snapshot":
            # The gate never writes a first snapshot: pytest runs only where one is committed.
            options = {"if_snapshot": gate, "started": started}
        if hook_id in skipped:
            if hook.id != "collection-snapshot":
                continue
            # Skipping the meta hook skips pytest; comparing the configuration that
            # hides tests needs nothing and still runs (`--only` leaves it out).
            options = {"static_only": True}
        if hook.files and not tests and not (hook.deleted and deleted_tests):
            continue  # oracle-shrink also judges a change that only deletes test files
        filenames = tuple(tests) if hook.files else ()
        result.append(runner.Plan(hook, base._replace(filenames=filenames, options=options, written=[])))
    return result


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    parser = hook_args.parser("oracle-guard check", __doc__)
    hook_args.add_base(parser)
    hook_args.add_contract(parser)
    hook_args.add_now(parser)
    hook_args.add_format(parser)
    parser.add_argument("--skip", default="", metavar="IDS", help="comma-separated hook ids not to run (collection-snapshot: pytest is not run, its configuration comparison still is)")
    parser.add_argument("--only", default="", metavar="IDS", help="comma-separated hook ids to run (default: all)")
    args = parser.parse_args(argv)

    wanted = ids(args.only) or [h.id for h in registry.HOOKS]
    skipped = set(ids(args.skip))
    unknown = sorted((set(wanted) | skipped) - set(registry.BY_ID))
    if unknown:
        raise UsageError(f"unknown hook id {', '.join(unknown)} (known: {', '.join(registry.BY_ID)})")

    changes.enter_repo([])
    change_set = changes.resolve(args)
    tests = [p for p in change_set.changed_paths if PYTHON.search(p) and TEST_FILES.search(p)]
    deleted_tests = [p for p in change_set.deleted if PYTHON.search(p) and TEST_FILES.search(p)]
    base = hook_args.context(args, change_set)
    started: list = []  # type: ignore[type-arg]
    outcome = runner.run(plans(base, wanted, skipped, tests, deleted_tests, started), started)
    return runner.emit(base.format, outcome)


if __name__ == "__main__":
    raise SystemExit(main())
