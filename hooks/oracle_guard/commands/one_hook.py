"""The pre-commit hook `oracle-guard`: every check on the change, in one process.

    - repo: https://github.com/oracle-guard/oracle-guard
      rev: <commit>
      hooks:
        - id: oracle-guard

The change is resolved once (staged, or pre-commit's --from-ref/--to-ref on
pre-push) and each blob read once; pytest starts collecting first and the
static hooks run meanwhile.  pre-commit passes no file names (a long list
would be split over several processes): the file hooks get the changed test
files, classified as pre-commit's `types_or: [python, pyi]` would (identify
for shebang scripts); file names given by hand are used as they are.  Unlike `oracle-guard check`, it writes the first
collection snapshot, as the collection-snapshot hook does, and when only test
modules changed it collects just those, or nothing when no change can alter
what pytest collects (oracle_guard/pytest_side/collection/partial.py, oracle_guard/analysis/inert.py;
--collect-all collects everything).
"""

from __future__ import annotations

from collections.abc import Sequence

from oracle_guard.commands import runner
from oracle_guard.commands.check import is_python
from oracle_guard.repo import changes
from oracle_guard.repo.confine import jail
from oracle_guard.repo.paths import TEST_FILES
from oracle_guard.reporting.report import EXIT_CLEAN, guarded
from oracle_guard.rules import args as hook_args


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    parser = hook_args.parser("oracle-guard hook", __doc__)
    hook_args.add_filenames(parser, "test files to check (default: the changed ones, as `check` finds them)")
    hook_args.add_base(parser)
    hook_args.add_contract(parser)
    hook_args.add_now(parser)
    hook_args.add_format(parser)
    hook_args.add_quiet(parser)
    parser.add_argument(
        "--python",
        metavar="PATH",
        help="the project's interpreter for collection-snapshot (default: active virtualenv, ./.venv, ./venv, python3)",
    )
    parser.add_argument(
        "--skip",
        default="",
        metavar="IDS",
        help="comma-separated hook ids not to run (collection-snapshot: pytest is not run, its configuration comparison still is)",
    )
    parser.add_argument("--only", default="", metavar="IDS", help="comma-separated hook ids to run (default: all)")
    parser.add_argument(
        "--collect-all",
        action="store_true",
        help="collect every test (default: when only test modules changed, just those, spliced into the snapshot)",
    )
    args = parser.parse_args(argv)
    jail.begin()  # a command starts: no earlier command's --require-confinement (one process runs many in tests)
    wanted, skipped = runner.selection(args.only, args.skip)

    given = changes.enter_repo(args.filenames)
    change_set = changes.resolve(args)
    # By hand, the files named; from pre-commit (pass_filenames: false, so one process
    # however many files), the changed test files, classified as pre-commit would.
    tests = given or [
        p for p in change_set.changed_paths if TEST_FILES.search(p) and is_python(p, change_set.target is None)
    ]
    deleted = change_set.deleted  # oracle-shrink always runs, as its own hook does (always_run)
    base = hook_args.context(args, change_set)
    started: list[tuple[runner.PytestRun, object]] = []
    planned = runner.plans(base, wanted, skipped, tests, deleted, started, gate=False)
    # Partial collection is this hook's alone: the gate (`check`) always collects everything.
    extra: dict[str, object] = {"partial": not args.collect_all}
    if args.python:
        extra["python"] = args.python
    planned = [
        p._replace(ctx=p.ctx._replace(options={**p.ctx.options, **extra})) if p.hook.id == "collection-snapshot" else p
        for p in planned
    ]
    code = runner.emit(base.format, runner.run(planned, started))
    if code == EXIT_CLEAN:
        why_not = runner.not_run(wanted, skipped, planned, "its own hook id, at pre-push")
        runner.success(base.format, args.quiet, len(planned), skipped=why_not)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
