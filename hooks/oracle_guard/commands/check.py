"""`oracle-guard check`: every hook on the change against its base — the merge gate.

    oracle-guard check --base origin/main

File-based hooks get the changed test files (as pre-commit would pass
them); the contract and collection hooks look at the repository
themselves.  The exit code is the worst of the hooks': 2 for a usage or
configuration error, else 1 for any finding.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from oracle_guard.commands import runner
from oracle_guard.hook_ids import registry
from oracle_guard.pytest_side.collection import base as base_collection
from oracle_guard.repo import changes
from oracle_guard.repo.confine import jail
from oracle_guard.repo.context import HookContext
from oracle_guard.repo.paths import PYTHON_SUFFIXES, TEST_FILES
from oracle_guard.reporting import report
from oracle_guard.reporting.report import EXIT_CLEAN, UsageError, guarded
from oracle_guard.rules import args as hook_args
from oracle_guard.rules.next_steps import next_steps

if TYPE_CHECKING:  # the replay's ledger loads only when a replay runs
    from oracle_guard.probes.replay import ledger, red

FILE_HOOKS = tuple(h.id for h in registry.HOOKS if h.files)
TAKES_NOW = tuple(h.id for h in registry.HOOKS if h.now)
REPLAY = "oracle-replay"  # opt-in: it runs pytest twice


def is_python(path: str, in_work_tree: bool) -> bool:
    """Whether pre-commit's `types_or: [python, pyi]` would pass PATH: by suffix, or identify's shebang check."""
    if path.endswith(PYTHON_SUFFIXES):
        return True  # identify tags .py and .pyi so: no need to import it
    from identify import identify

    if in_work_tree and os.path.isfile(path) and not os.path.islink(path):
        tags = identify.tags_from_path(path)  # an executable with a python shebang counts, as in pre-commit
    else:
        tags = identify.tags_from_filename(path)  # a deleted file or another commit's: its name is what there is
    return bool(tags & {"python", "pyi"})


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    finally:
        base_collection.begin()  # nothing of this command's collections outlives it


def _main(argv: Sequence[str] | None) -> int:
    parser = hook_args.parser("oracle-guard check", __doc__)
    hook_args.add_base(parser)
    hook_args.add_contract(parser)
    hook_args.add_now(parser)
    hook_args.add_format(parser)
    hook_args.add_quiet(parser)
    parser.add_argument(
        "--skip",
        default="",
        metavar="IDS",
        help="comma-separated hook ids not to run (collection-snapshot: pytest is not run, its configuration comparison still is)",
    )
    parser.add_argument("--only", default="", metavar="IDS", help="comma-separated hook ids to run (default: all)")
    parser.add_argument(
        "--write-snapshot",
        action="store_true",
        help="let collection-snapshot write an out-of-date snapshot (the gate writes nothing otherwise)",
    )
    parser.add_argument(
        "--replay",
        action="store_true",
        help="also run oracle-replay: the base's tests against the new code (runs pytest twice)",
    )
    parser.add_argument(
        "--python",
        metavar="PATH",
        help="the project's interpreter for pytest (collection-snapshot, --replay, --mutate; default: active "
        "virtualenv, ./.venv, ./venv, first python3 on PATH)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="wall-clock limit for the whole replay (--replay; default: oracle-replay's, `oracle-guard replay --help`)",
    )
    hook_args.add_mutate(parser)
    hook_args.add_workers(parser)
    hook_args.add_shard(parser)
    hook_args.add_require_confinement(parser)
    args = parser.parse_args(argv)
    hook_args.require_confinement(args)
    base_collection.begin()  # the replay may take the base's ids from this command's own collection of it
    args.shard_mutate = args.mutate
    if args.shard:
        if not args.replay or args.format != "json":
            raise UsageError(
                "--shard writes one shard's document for `oracle-guard merge`: add --replay --format json"
                " and keep stdout as the shard's file"
            )
        if args.mutate and not args.shard.startswith("1/"):
            args.mutate = False  # one designated shard runs the mutation differential whole (commands/shards.py)
            report.notice(f"oracle-guard: the mutation differential runs in shard 1/{args.shard.split('/')[1]}")

    wanted, skipped = runner.selection(args.only, args.skip)
    # oracle-replay runs pytest twice: only on request (`--replay`, or named in `--only`).
    replay = (args.replay or REPLAY in wanted) and REPLAY not in skipped
    wanted = [h for h in wanted if h != REPLAY]

    changes.enter_repo([])
    if args.base is None:
        args.base = changes.ci_base()  # CI on a detached HEAD: GITHUB_BASE_REF, else exit 2
    change_set = changes.resolve(args)
    in_tree = change_set.target is None
    tests = [p for p in change_set.changed_paths if TEST_FILES.search(p) and is_python(p, in_tree)]
    deleted_tests = [p for p in change_set.deleted if TEST_FILES.search(p) and is_python(p, False)]
    base = hook_args.context(args, change_set)
    started: list[tuple[runner.PytestRun, object]] = []
    outcome = runner.Outcome([], [], [])
    planned = runner.plans(
        base, wanted, skipped, tests, deleted_tests, started, write_snapshot=args.write_snapshot, python=args.python
    )
    if wanted:
        outcome = runner.run(planned, started)
    seen: list[ledger.Result] = []
    fates: list[red.Fate] = []
    # Every layer's findings join the hooks' before anything is printed: one count, one `next:` each, in every format.
    if replay:
        outcome = runner.merged(outcome, _replayed(args, base, seen, fates))
    if args.mutate:
        outcome = runner.merged(outcome, _mutated(args, base, change_set))
    extra: dict[str, object] = {"ground": jail.said()} if jail.said() else {}
    if args.shard:
        from oracle_guard.commands import shards  # a shard's document only: no cost to every commit

        extra["shard"] = shards.record(args, change_set, seen)
    tail = fates[-1].text() if fates else ""
    if fates:
        extra["red_base"] = fates[-1].document()
    code = runner.emit(base.format, outcome, extra or None, tail)
    if code == EXIT_CLEAN:
        also = [what for what, ran in (("the replay", replay), ("the mutation differential", args.mutate)) if ran]
        why_not = runner.not_run(wanted, skipped, planned, "opt-in: --replay", [REPLAY] if replay else [])
        # Which ground the change's code ran on, when it ran: confined, or the barrier only (repo/confine).
        ground = f"; the change's code ran {jail.said()}" if jail.said() else ""
        runner.success(
            base.format, args.quiet, len(planned), also, f" against {change_set.base_label}{ground}", why_not, tail
        )
    return code


def _replay_options(args: argparse.Namespace) -> argparse.Namespace:
    from oracle_guard.hook_ids import replay as replay_hook

    options = replay_hook.build_parser().parse_args([])
    options.base, options.contract, options.format = args.base, args.contract, args.format
    options.python = args.python
    options.workers, options.shard = args.workers, args.shard
    if args.timeout is not None:
        options.timeout = args.timeout
    return options


def _replayed(
    args: argparse.Namespace, ctx: HookContext, seen: list[ledger.Result], fates: list[red.Fate]
) -> runner.Outcome:
    from oracle_guard.hook_ids import replay as replay_hook

    try:
        options = _replay_options(args)
        options.seen = seen  # the base side's main run, for a shard's document
        options.red = fates  # what became of the base's red tests, for the last line
        found = [("oracle-replay", f) for f in sorted(set(replay_hook.findings_of(options)))]
    except changes.TooBig as exc:  # a file of the change the replay cannot read: judged against it (OG929)
        found = [("oracle-replay", exc.finding())]
    except RecursionError:  # a file of the change nested too deeply to analyse (OG928)
        found = [("oracle-replay", _too_deep(ctx.change_set))]
    except UsageError as exc:
        from oracle_guard.contract import broken as contract_broken

        broken = contract_broken.finding(ctx.change_set, args.contract, exc)
        if broken is None:
            return runner.Outcome([], [str(exc)], [])
        found = [("oracle-replay", broken)]
    return runner.Outcome(found, [], [], next_steps(ctx, found))


def _mutated(args: argparse.Namespace, ctx: HookContext, change_set: changes.ChangeSet) -> runner.Outcome:
    from oracle_guard.probes.mutation import gate as mutation_gate

    try:
        found = [("oracle-mutate", f) for f in sorted(set(mutation_gate.run(args, change_set, args.contract)))]
    except changes.TooBig as exc:
        found = [("oracle-mutate", exc.finding())]
    except RecursionError:
        found = [("oracle-mutate", _too_deep(change_set))]
    except UsageError as exc:
        from oracle_guard.contract import broken as contract_broken

        broken = contract_broken.finding(change_set, args.contract, exc)
        if broken is None:
            return runner.Outcome([], [str(exc)], [])
        found = [("oracle-mutate", broken)]
    return runner.Outcome(found, [], [], next_steps(ctx, found))


def _too_deep(change_set: changes.ChangeSet | None) -> report.Finding:
    """OG928 for the change's most deeply nested file; none deep enough: the error stands (exit 2)."""
    from oracle_guard.repo import nesting

    deep = nesting.too_deep(change_set)
    if deep is None:
        raise RecursionError("no file of the change nests deeply enough to explain it")
    return deep


if __name__ == "__main__":
    raise SystemExit(main())
