"""The command line every hook shares: one definition and one help text each.

`main(argv)` of a hook is a thin adapter: parser() + the add_*() it takes,
then context() and finish().  Nothing here imports PyYAML: a hook that
finds nothing never pays for the contract loader.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from oracle_guard import __version__
from oracle_guard.repo.context import HookContext
from oracle_guard.repo.paths import DEFAULT_CONTRACT
from oracle_guard.reporting import report

if TYPE_CHECKING:
    from oracle_guard.repo.changes import ChangeSet


class _Parser(argparse.ArgumentParser):
    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]  # argparse's overloads: this one is used
        parsed = super().parse_args(args, namespace)
        report.use_format(getattr(parsed, "format", "text"))  # errors from here on are in the asked format
        return parsed


def summary(doc: str | None) -> str | None:
    """The first line of a module's docstring, for --help; None under `python -OO` (__doc__ is None)."""
    return doc.strip().splitlines()[0] if doc and doc.strip() else None


def parser(prog: str, doc: str | None) -> argparse.ArgumentParser:
    result = _Parser(prog=prog, description=summary(doc))
    add_version(result)
    return result


def add_version(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", action="version", version=f"%(prog)s (oracle-guard) {__version__}")


def add_filenames(
    parser: argparse.ArgumentParser, help: str = "files to check (pre-commit passes the changed ones)"
) -> None:
    parser.add_argument("filenames", nargs="*", help=help)


def add_base(parser: argparse.ArgumentParser) -> None:
    from oracle_guard.repo import changes

    changes.add_base_args(parser)


def add_contract(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--contract", default=DEFAULT_CONTRACT, metavar="PATH", help=f"the contract file (default: {DEFAULT_CONTRACT})"
    )


def add_now(
    parser: argparse.ArgumentParser, help: str = "the current time for freeze expiry (ISO-8601; default: the clock)"
) -> None:
    parser.add_argument("--now", metavar="TIME", help=help)


def add_quiet(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="print nothing when nothing is found (no one-line success summary)"
    )


def add_format(parser: argparse.ArgumentParser) -> None:
    report.add_format_arg(parser)


def parse_now(text: str | None) -> datetime:
    if not text:
        return datetime.now(timezone.utc)
    from oracle_guard.contract import contract  # PyYAML: only when a time is pinned

    return contract.parse_now(text)


def context(
    args: argparse.Namespace, change_set: ChangeSet | None, filenames: Sequence[str] = (), **options: Any
) -> HookContext:
    fmt = getattr(args, "format", "text")
    if report.current_format() != fmt:  # a Namespace built by hand; parse_args already set it otherwise
        report.use_format(fmt)
    contract_path = getattr(args, "contract", DEFAULT_CONTRACT)
    if change_set is not None:
        from oracle_guard.repo import changes

        changes.use_file_limit(
            functools.lru_cache(maxsize=1)(functools.partial(base_file_limit, change_set, contract_path))
        )
    return HookContext(
        change_set=change_set,
        filenames=tuple(filenames),
        contract=getattr(args, "contract", DEFAULT_CONTRACT),
        now=parse_now(getattr(args, "now", None)),
        format=fmt,
        written=[],
        options=options,
    )


def base_file_limit(change_set: ChangeSet, contract_path: str) -> int:
    """The base contract's max_file_bytes: asked only when a file is over the default, so no run pays for it."""
    from oracle_guard.contract import contract  # PyYAML: only for a file that large

    base = contract.base_from(change_set.read_contract_base(contract_path, contract.bytes_at_base), contract_path)
    return base.max_file_bytes if base is not None else contract.Contract().max_file_bytes


def finish(
    ctx: HookContext, findings: list[report.Finding] | Callable[[], list[report.Finding]], hook: str = ""
) -> int:
    """Print FINDINGS (or what calling it finds) in the context's format; the exit code (1 if a file was rewritten).

    A hook stopped because the change's contract does not load, where the base's does, reports that as
    the change's finding (OG927, contract/broken.py), as `check` does; any other stop stands (exit 2).
    """
    if callable(findings):
        try:
            findings = findings()
        except report.UsageError as exc:
            from oracle_guard.contract import broken  # only on a stop: PyYAML stays unimported

            found = broken.finding(ctx.change_set, ctx.contract, exc)
            if found is None:
                raise
            findings = [found]
    return report.emit(findings, ctx.format, hook=hook, written=ctx.written)


# Here, not in probes/mutation/gate.py: parsing --mutate must not import the mutation engine.
MUTATE_MAX = 200
MUTATE_TIMEOUT = 60  # issue 37: a change is judged within a minute; what is left is a notice


def add_require_confinement(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--require-confinement",
        action="store_true",
        help="exit 2 unless the change's code can run confined (Linux with Landlock); without it, where it"
        " cannot, the runs stand behind the barrier alone and the output says so",
    )


def require_confinement(args: argparse.Namespace) -> None:
    """A command's start: with --require-confinement, exit 2 now when the change's code cannot run confined."""
    from oracle_guard.repo.confine import jail

    jail.begin()
    if getattr(args, "require_confinement", False):
        jail.require()


def add_mutate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mutate",
        action="store_true",
        help="also run the mutation differential: mutants the base's tests caught must be caught by the new tests",
    )
    parser.add_argument(
        "--mutate-max",
        type=int,
        default=MUTATE_MAX,
        metavar="N",
        help=f"at most N mutants, the most informative first (default: {MUTATE_MAX})",
    )
    parser.add_argument(
        "--mutate-timeout",
        type=float,
        default=MUTATE_TIMEOUT,
        metavar="SECONDS",
        help=f"wall-clock budget of the mutation check in seconds; the most informative mutants run first (default: {MUTATE_TIMEOUT})",
    )


def _workers(text: str) -> str:
    if text in ("auto", "logical") or (text.isdigit() and int(text) >= 1):
        return text
    raise argparse.ArgumentTypeError(f"expected a number of workers >= 1, auto or logical, got {text!r}")


def add_workers(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-n",
        "--workers",
        type=_workers,
        default=None,
        metavar="N",
        help="run the replay's main pytest runs with pytest-xdist's -n N (needs pytest-xdist in the project's "
        "interpreter; the mutation differential stays one process)",
    )


def _shard(text: str) -> str:
    index, slash, count = text.partition("/")
    if slash and index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count):
        return f"{int(index)}/{int(count)}"
    raise argparse.ArgumentTypeError(f"expected K/N with 1 <= K <= N (e.g. 2/4), got {text!r}")


def add_shard(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--shard",
        type=_shard,
        default=None,
        metavar="K/N",
        help="replay only shard K of N of the selected base tests (with --replay --format json: the shard's "
        "document for `oracle-guard merge`)",
    )
