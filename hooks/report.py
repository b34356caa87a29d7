"""Findings, output formats and exit codes shared by every hook.

Exit codes follow pre-commit-hooks: 0 clean, 1 findings, 2 usage or
configuration error.  A configuration error is one sentence on stderr,
never a traceback.
"""
from __future__ import annotations

import argparse
import functools
import sys
from typing import Callable, Iterable, NamedTuple, Sequence

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """Bad input or configuration: reported as one line, exit code 2."""


# NamedTuples rather than dataclasses across the hot path: importing dataclasses
# (and the inspect module it pulls in) is a tenth of a hook's start-up.
class Finding(NamedTuple):
    path: str
    line: int
    col: int
    code: str
    message: str

    def text(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}"

    def github(self) -> str:
        # Workflow commands need %, CR and LF escaped in the message and ,: in properties.
        msg = self.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        path = self.path.replace("%", "%25").replace(",", "%2C").replace(":", "%3A")
        return f"::error file={path},line={self.line},col={self.col},title={self.code}::{msg}"


FORMATS = ("text", "github")


def add_format_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="text: path:line:col: CODE message (default); github: workflow annotations",
    )


def emit(findings: Iterable[Finding], fmt: str = "text") -> int:
    """Print findings sorted and de-duplicated; return the exit code."""
    unique = sorted(set(findings))
    for finding in unique:
        print(finding.github() if fmt == "github" else finding.text())
    return EXIT_FINDINGS if unique else EXIT_CLEAN


def notice(message: str) -> None:
    """Something the reviewer should see that does not fail the hook."""
    print(f"oracle-guard: notice: {message}", file=sys.stderr)


def guarded(func: Callable[[Sequence[str] | None], int]) -> Callable[[Sequence[str] | None], int]:
    """Turn UsageError (and Ctrl-C) into a one-line message and exit code 2."""

    @functools.wraps(func)
    def wrapper(argv: Sequence[str] | None = None) -> int:
        try:
            return func(argv)
        except UsageError as exc:
            print(f"oracle-guard: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        except RecursionError:  # deeper than Python's own limit: refuse, never a traceback
            print("oracle-guard: error: a file nests expressions too deeply to analyse (Python's recursion limit); split the expression up", file=sys.stderr)
            return EXIT_USAGE
        except KeyboardInterrupt:
            print("oracle-guard: interrupted", file=sys.stderr)
            return 130
        except BrokenPipeError:
            return EXIT_FINDINGS

    return wrapper
