"""oracle-replay: the base's tests judge the new code.

    oracle-guard replay --base origin/main

Static hooks judge how a patch is spelled; this one runs the base's version
of the tests against the patched production code.  Two scratch trees are
exported from git (never the user's work tree): the base revision, and the
new production code with the base's test side.  The same selection runs in
both (pytest_side/selection.py): the base versions of the test modules the
change edited or deleted, the base test modules whose imports reach the
changed production code, or every test when that cannot be decided.  A
test that passed at the base and fails, errors, skips or xfails against the
new code is a finding (re-run once on both sides first: passing both times
is a flake, reported as a notice).  A deliberate behaviour change passes
with a signed ``behavior-change <node id>`` approval.

Each run is judged from outside its process (probes/replay/ledger.py):
planted canaries must fail (one must pass), every collected test needs an
outcome, a completion marker comes last, and the exit status must agree.
A new side that breaks what the base side holds, twice, is OG906.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import datetime, timezone

from oracle_guard import __version__
from oracle_guard.probes.replay.gate import TIMEOUT_SECONDS, findings_of
from oracle_guard.repo import changes
from oracle_guard.repo.context import HookContext
from oracle_guard.repo.paths import DEFAULT_CONTRACT
from oracle_guard.reporting import verdict
from oracle_guard.reporting.report import EXIT_CLEAN, Finding, add_format_arg, guarded, notice
from oracle_guard.rules import args as hook_args
from oracle_guard.rules.args import summary
from oracle_guard.rules.next_steps import next_steps

__all__ = ["build_parser", "findings_of", "main", "replay"]  # findings_of: `check --replay` joins them to its document


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="oracle-replay", description=summary(__doc__))
    parser.add_argument("filenames", nargs="*", help="ignored: the hook asks git what changed")
    changes.add_base_args(parser)
    parser.add_argument(
        "--contract", default=DEFAULT_CONTRACT, metavar="PATH", help=f"the contract file (default: {DEFAULT_CONTRACT})"
    )
    parser.add_argument(
        "--python",
        metavar="PATH",
        help="the project's interpreter (default: active virtualenv, ./.venv, ./venv, first python3 on PATH)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=TIMEOUT_SECONDS,
        metavar="SECONDS",
        help=f"wall-clock limit for the whole replay (default: {TIMEOUT_SECONDS})",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=0,
        metavar="N",
        help="pytest processes at once, 1 or 2 (default: 2 when two cores are free)",
    )
    hook_args.add_workers(parser)
    add_format_arg(parser)
    hook_args.add_mutate(parser)
    hook_args.add_require_confinement(parser)
    parser.add_argument("--version", action="version", version=f"%(prog)s (oracle-guard) {__version__}")
    return parser


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    hook_args.require_confinement(args)
    if not args.mutate:
        return replay(args)
    # One verdict either way: the mutation differential's findings (probes/mutation/gate.py) join the replay's.
    from oracle_guard.probes.mutation import gate as mutation_gate  # the engine loads only when asked for

    args.red = []
    found = [("oracle-replay", f) for f in sorted(set(findings_of(args)))]
    mutated = [("oracle-mutate", f) for f in sorted(set(mutation_gate.run(args, changes.resolve(args), args.contract)))]
    return _emit(args, found + [r for r in mutated if r[1] not in {f for _, f in found}])


def replay(args: argparse.Namespace) -> int:
    """The replay for parsed options, printed in their format; the exit code."""
    args.red = []  # what became of the base's red tests: said after the count, or as a notice on success
    return _emit(args, [("oracle-replay", f) for f in sorted(set(findings_of(args)))])


def _emit(args: argparse.Namespace, results: list[tuple[str, Finding]]) -> int:
    """RESULTS with their next steps, counted in one line (reporting/verdict.py), as `check --replay` prints them."""
    change_set = changes.resolve(args)
    # A context for the next steps alone (rules.args.context would redirect the notices already printed).
    ctx = HookContext(change_set, (), args.contract, datetime.now(timezone.utc), args.format, [])
    steps = next_steps(ctx, results) if results else {}
    fates = args.red
    code = verdict.emit(
        args.format,
        results,
        steps=steps,
        extra={"red_base": fates[-1].document()} if fates else None,
        tail=fates[-1].text() if fates else "",
    )
    if code == EXIT_CLEAN and fates:  # silent on success like every hook id; what became of the red tests is told
        notice(f"oracle-replay: {fates[-1].text()}")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
