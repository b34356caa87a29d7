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

from oracle_guard import __version__
from oracle_guard.probes.replay.gate import TIMEOUT_SECONDS, findings_of
from oracle_guard.repo import changes
from oracle_guard.repo.paths import DEFAULT_CONTRACT
from oracle_guard.reporting.report import add_format_arg, emit, guarded
from oracle_guard.rules import args as hook_args
from oracle_guard.rules.args import summary

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
    # One document either way: the mutation differential's findings (probes/mutation/gate.py) join the replay's.
    from oracle_guard.probes.mutation import gate as mutation_gate  # the engine loads only when asked for

    found = findings_of(args)
    found += mutation_gate.run(args, changes.resolve(args), args.contract)
    return emit(found, args.format, hook="oracle-replay")


def replay(args: argparse.Namespace) -> int:
    """The replay for parsed options, printed in their format; the exit code."""
    return emit(findings_of(args), args.format, hook="oracle-replay")


if __name__ == "__main__":
    raise SystemExit(main())
