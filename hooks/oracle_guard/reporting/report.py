"""Findings, output formats and exit codes shared by every hook.

Exit codes follow pre-commit-hooks: 0 clean, 1 findings, 2 usage or
configuration error.  A configuration error is one sentence on stderr,
never a traceback.
"""

from __future__ import annotations

import argparse
import functools
import os
import signal
import sys
import threading
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

# The data every layer shares lives in findings.py (output.py prints it without importing this module).
from oracle_guard.reporting.findings import EXIT_CLEAN as EXIT_CLEAN
from oracle_guard.reporting.findings import EXIT_FINDINGS as EXIT_FINDINGS
from oracle_guard.reporting.findings import EXIT_USAGE as EXIT_USAGE
from oracle_guard.reporting.findings import ChangeCaused as ChangeCaused
from oracle_guard.reporting.findings import Finding as Finding
from oracle_guard.reporting.findings import UsageError as UsageError
from oracle_guard.reporting.findings import escape_data as escape_data
from oracle_guard.reporting.findings import escape_property as escape_property

FORMATS = ("text", "github", "json", "sarif", "agent")
# json and sarif are one document on stdout: notices go into it, not onto stderr.
DOCUMENT_FORMATS = ("json", "sarif")
_notice_format = ["text"]
_notices: list[str] = []


def add_format_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="text: path:line:col: CODE message (default); github: workflow annotations; "
        "json: one versioned document (docs/output.md); sarif: SARIF 2.1.0; "
        "agent: each finding with why and what to do, for a coding agent's commit or stop hook",
    )


def use_format(fmt: str) -> None:
    """Where notices go from now on: stderr, ::notice annotations, or the document."""
    _notice_format[0] = fmt
    _notices.clear()


def emit(findings: Iterable[Finding], fmt: str = "text", hook: str = "", written: Sequence[str] = ()) -> int:
    """Print findings sorted and de-duplicated; return the exit code (1 also when the hook rewrote WRITTEN)."""
    unique = sorted(set(findings))
    code = EXIT_FINDINGS if unique or written else EXIT_CLEAN
    if fmt in DOCUMENT_FORMATS:
        from oracle_guard.reporting import output

        output.print_document(fmt, [(hook, f) for f in unique], [], taken_notices(), status=code)
        return code
    if fmt == "agent":
        from oracle_guard.reporting import output

        output.print_agent([(hook, f) for f in unique], [], {}, written)
        return code
    for finding in unique:
        print(finding.github() if fmt == "github" else finding.text())
    return code


def current_format() -> str:
    return _notice_format[0]


def taken_notices() -> list[str]:
    """The notices collected for a document, once."""
    taken = list(_notices)
    _notices.clear()
    return taken


def notice(message: str) -> None:
    """Something the reviewer should see that does not fail the hook."""
    fmt = _notice_format[0]
    if fmt in DOCUMENT_FORMATS:
        _notices.append(message)
    elif fmt == "github":
        print(f"::notice title=oracle-guard::{escape_data(message)}", flush=True)
    else:
        print(f"oracle-guard: notice: {message}", file=sys.stderr)


def say(message: str) -> None:
    """What a hook did (it rewrote a file): stdout, or a notice inside a document."""
    if _notice_format[0] in DOCUMENT_FORMATS:
        _notices.append(message)
    else:
        print(message)


class Main(Protocol):
    """A hook's or command's entry point: main() reads sys.argv, main([...]) the list given."""

    def __call__(self, argv: Sequence[str] | None = None) -> int: ...


def guarded(func: Main) -> Main:
    """Turn UsageError (and Ctrl-C) into a one-line message and exit code 2."""

    @functools.wraps(func)
    def wrapper(argv: Sequence[str] | None = None) -> int:
        use_format("text")  # until the command line asks for another
        before = _on_terminate()
        try:
            return func(argv)
        except Terminated:
            if before is None:  # an outer command's: it answers for the whole
                raise
            _end_children()
            print("oracle-guard: terminated", file=sys.stderr)
            return 128 + signal.SIGTERM
        except UsageError as exc:
            print(f"oracle-guard: error: {exc}", file=sys.stderr)
            if _notice_format[0] in DOCUMENT_FORMATS:  # a machine reading stdout still gets a document
                from oracle_guard.reporting import output

                output.print_document(_notice_format[0], [], [str(exc)], taken_notices())
            return EXIT_USAGE
        except RecursionError:  # deeper than Python's own limit: refuse, never a traceback
            print(
                "oracle-guard: error: a file nests expressions too deeply to analyse (Python's recursion limit); split the expression up",
                file=sys.stderr,
            )
            return EXIT_USAGE
        except KeyboardInterrupt:
            print("oracle-guard: interrupted", file=sys.stderr)
            return 130
        except BrokenPipeError:
            return EXIT_FINDINGS
        finally:
            if before is not None:
                signal.signal(signal.SIGTERM, before)

    return wrapper


class Terminated(BaseException):
    """SIGTERM (a CI job cancelled, `kill`): unwinds like Ctrl-C, so the scratch trees and runs are ended."""


def _end_children() -> None:
    """Every process this one started and that still runs, with the session it leads (Linux /proc; elsewhere
    the unwinding alone): a run started beside another (a collection, a flip run) may have no `finally` of its own
    on the way out, and a run left behind is what the next gate finds (OG926)."""
    me = os.getpid()
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
                parent = int(f.read().rpartition(")")[2].split()[1])
            if parent != me:
                continue
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            continue


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated


def _on_terminate() -> Any:
    """Make SIGTERM unwind the command (the handler it replaces, to restore), where Python still has its default."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        return None
    return signal.signal(signal.SIGTERM, _raise_terminated)
