"""`oracle-guard`: every hook as a subcommand, plus check, init, lock, approve, quarantine, demo, explain."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from oracle_guard import __version__
from oracle_guard.hook_ids import registry
from oracle_guard.reporting.report import EXIT_USAGE, Main, guarded

# id -> (module:function, one-line help), from the registry.  Hook ids are a public promise: never rename.
HOOKS = {hook.id: (hook.main, hook.help) for hook in registry.HOOKS}
COMMANDS = {
    "check": ("oracle_guard.commands.check:main", "run every hook on the change against its base (the merge gate)"),
    "hook": ("oracle_guard.commands.one_hook:main", "every hook in one process: the pre-commit hook id `oracle-guard`"),
    "replay": ("oracle_guard.hook_ids.replay:main", "run the base's tests against the new code (`replay --base REV`)"),
    "merge": ("oracle_guard.commands.shards:main", "one verdict from every shard's document (`check --shard K/N`)"),
    "init": ("oracle_guard.commands.init_contract:main", "write a contract that locks what the repository has now"),
    "lock": ("oracle_guard.commands.init_contract:lock_main", "add fixture locks to the contract"),
    "approve": ("oracle_guard.commands.approve:main", "sign an approval for one specific weakening"),
    "quarantine": ("oracle_guard.commands.quarantine_run:main", "run the seeded quarantine ledger (`quarantine run`)"),
    "guard": ("oracle_guard.commands.guard:main", "install, check or remove the commit guard of one agent worktree"),
    "demo": ("oracle_guard.commands.demo:main", "show a rejected weakening in a throwaway repository"),
    "explain": ("oracle_guard.commands.explain:main", "print a finding code's page (`explain OG101`; `--format json`)"),
}


def load(target: str) -> Main:
    module, _, name = target.partition(":")
    func: Main = getattr(importlib.import_module(module), name)
    return func


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    table = {**COMMANDS, **HOOKS}
    if argv[:1] == ["--version"]:
        print(f"oracle-guard {__version__}")
        return 0
    if not argv or argv[0] not in table:
        parser = argparse.ArgumentParser(
            prog="oracle-guard", description="Refuse patches that make tests pass by weakening them."
        )
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
