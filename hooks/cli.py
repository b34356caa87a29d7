"""`oracle-guard`: every hook as a subcommand, plus check, init, lock, approve, quarantine, demo."""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from hooks.report import EXIT_USAGE, guarded

# id -> (module:function, one-line help).  Hook ids are a public promise: never rename.
HOOKS = {
    "forbid-skip-marks": ("hooks.forbid_skip_marks:main", "new skip/skipif/xfail marks, in any spelling"),
    "forbid-runtime-skip": ("hooks.forbid_runtime_skip:main", "new pytest.skip()/xfail()/importorskip()/exit(), skipTest, early returns"),
    "oracle-shrink": ("hooks.oracle_shrink:main", "deleted or loosened checks, tautologies, swallowed failures, broadened raises"),
    "fixture-lock-verify": ("hooks.fixture_lock_verify:main", "locked fixtures whose bytes, path or lock changed"),
    "properties-monotonic": ("hooks.properties_monotonic:main", "contract properties removed, repointed or weakened"),
    "quarantine-untouched": ("hooks.quarantine_untouched:main", "freeze ledger budgets grown, expiries extended"),
    "contract-split": ("hooks.contract_split:main", "production code and contract tests changed together"),
    "collection-snapshot": ("hooks.collection_snapshot:main", "tests pytest no longer collects, or now skips"),
    "oracle-replay": ("hooks.replay:main", "the base's tests run against the new code (slow: pre-push, CI; `check --replay`)"),
}
COMMANDS = {
    "check": ("hooks.check:main", "run every hook on the change against its base (the merge gate)"),
    "replay": ("hooks.replay:main", "run the base's tests against the new code (`replay --base REV`)"),
    "init": ("hooks.init_contract:main", "write a contract that locks what the repository has now"),
    "lock": ("hooks.init_contract:lock_main", "add fixture locks to the contract"),
    "approve": ("hooks.approvals:main", "sign an approval for one specific weakening"),
    "quarantine": ("hooks.quarantine_run:main", "run the seeded quarantine ledger (`quarantine run`)"),
    "demo": ("hooks.demo:main", "show a rejected weakening in a throwaway repository"),
}


def load(target: str):  # type: ignore[no-untyped-def]
    module, _, func = target.partition(":")
    return getattr(importlib.import_module(module), func)


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    table = {**COMMANDS, **HOOKS}
    if not argv or argv[0] not in table:
        parser = argparse.ArgumentParser(prog="oracle-guard", description="Refuse patches that make tests pass by weakening them.")
        sub = parser.add_subparsers(title="commands", metavar="COMMAND")
        for name, (_, help_text) in table.items():
            sub.add_parser(name, help=help_text, add_help=False)
        if argv and argv[0] in ("-h", "--help"):
            parser.print_help()
            return 0
        parser.print_usage(sys.stderr)
        what = f"unknown command '{argv[0]}'" if argv else "a command is required"
        print(f"oracle-guard: error: {what} (see `oracle-guard --help`)", file=sys.stderr)
        return EXIT_USAGE
    return int(load(table[argv[0]][0])(argv[1:]))


if __name__ == "__main__":
    raise SystemExit(main())
