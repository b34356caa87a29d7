"""The collection snapshot file: `<status> <node id>` lines, sorted by id, under one header.

Core module (no hook logic): collection-snapshot writes and compares it, the
pytest plugin reads the statuses the base knew, `init` records the first one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from oracle_guard.reporting.report import UsageError

HEADER = "# oracle-guard collection snapshot: <status> <pytest node id>, sorted by id. Written by collection-snapshot; stage it.\n"
STATUSES = (
    "run",
    "skip-if-env",
    "xfail",
    "skip",
)  # strongest first; skip-if-env: runs here, a false skipif/xfail condition on it
WEAKER = {("run", "xfail"), ("run", "skip"), ("xfail", "skip"), ("skip-if-env", "xfail"), ("skip-if-env", "skip")}


def parse_snapshot(data: bytes | None, path: str) -> dict[str, tuple[str, int]]:
    """node id -> (status, line number); empty for a missing file."""
    if data is None:
        return {}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not valid UTF-8 (byte {exc.start})") from None
    result: dict[str, tuple[str, int]] = {}
    # Only "\n" ends a line: str.splitlines() would also split ids at \x85 or U+2028.
    for number, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip() or line.startswith("#"):
            continue
        status, _, node_id = line.partition(" ")
        node_id = node_id.lstrip(" ")
        if status not in STATUSES or not node_id:
            raise UsageError(
                f"{path}:{number}: expected `<run|skip|xfail> <node id>` (or skip-if-env), got {line[:60]!r}"
            )
        result[node_id] = (status, number)
    return result


# The start of a line parse_snapshot may refuse: not `<status> <id>` with a status it knows, a comment or
# nothing.  One search of the whole text (at C speed) where the parse is a Python loop over every line.
# Anchored on the newline before each line (the first line apart), so the search visits line starts only
# rather than trying `^` at every character: 5x faster on a 62,000-line snapshot.
_LINE_OK = r"(?:run|skip-if-env|xfail|skip) +[^ \r\n]|#|\n|\Z"
_UNSURE_FIRST = re.compile(rf"(?!{_LINE_OK})")
_UNSURE_NEXT = re.compile(rf"\n(?!{_LINE_OK})")


def check_snapshot(data: bytes | None, path: str) -> None:
    """Refuse what parse_snapshot refuses, with its message, without building the map (the pytest plugin
    checks the committed snapshot at start and reads it only when a test skips)."""
    if data is None:
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not valid UTF-8 (byte {exc.start})") from None
    if _UNSURE_FIRST.match(text) is not None or _UNSURE_NEXT.search(text) is not None:
        parse_snapshot(data, path)  # a line it may refuse: the parse says whether, and where


# A module that does not collect (a red base: a stub's name not there yet) is recorded on a comment line,
# which every reader of the ids passes over; only the base's own lines ever excuse an error (recorded_errors).
ERROR_LINE = "# collection error: "


def format_snapshot(items: dict[str, str], errors: Iterable[str] = ()) -> bytes:
    recorded = "".join(f"{ERROR_LINE}{path}\n" for path in sorted(set(errors)) if path and "\n" not in path)
    body = "".join(f"{status:<5} {node_id}\n" for node_id, status in sorted(items.items()))
    return (HEADER + recorded + body).encode("utf-8")


def recorded_errors(data: bytes | None) -> set[str]:
    """The modules a snapshot records as not collecting (read from the BASE's snapshot only)."""
    if data is None:
        return set()
    text = data.decode("utf-8", "replace")
    return {line[len(ERROR_LINE) :].rstrip("\r") for line in text.split("\n") if line.startswith(ERROR_LINE)}
