"""A finding, the exit codes and the escapes of GitHub's workflow commands: the data every layer shares.

Exit codes follow pre-commit-hooks: 0 clean, 1 findings, 2 usage or
configuration error.
"""

from __future__ import annotations

from typing import NamedTuple

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


def combined(*codes: int) -> int:
    """One exit code for parts of one run: a finding from any part is 1, even where another part could not run."""
    if EXIT_FINDINGS in codes:
        return EXIT_FINDINGS
    return EXIT_USAGE if EXIT_USAGE in codes else max(codes, default=EXIT_CLEAN)


class UsageError(Exception):
    """Bad input or configuration: reported as one line, exit code 2."""


class ChangeCaused(UsageError):
    """A stop the change's own files brought about: the hooks' runner reports FINDING against the change
    instead of exit 2 (a CI that reads exit 2 as "not judged" would let a cheat beside it through)."""

    def __init__(self, message: str, finding: Finding) -> None:
        super().__init__(message)
        self.finding = finding


# NamedTuples rather than dataclasses across the hot path: importing dataclasses
# (and the inspect module it pulls in) is a tenth of a hook's start-up.
class Finding(NamedTuple):
    path: str
    line: int
    col: int
    code: str
    message: str

    def text(self) -> str:
        # One line whatever the path or message holds (a file name, a process's arguments, a test's output).
        return one_line(f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}")

    def github(self) -> str:
        # Workflow commands need %, CR and LF escaped in the message and ,: in properties.
        return f"::error file={escape_property(self.path)},line={self.line},col={self.col},title={self.code}::{escape_data(self.message)}"


_CONTROL = {c: repr(chr(c))[1:-1] for c in [*range(32), 127]}


def one_line(text: str) -> str:
    """TEXT with its control characters written as Python escapes (a newline as backslash-n)."""
    return text.translate(_CONTROL) if not text.isprintable() else text


def escape_data(text: str) -> str:
    """A workflow command's message: %, CR and LF escaped (GitHub's rules)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: also : and , (and CR/LF in a path)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")
