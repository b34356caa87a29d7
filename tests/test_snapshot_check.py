"""check_snapshot (the pytest plugin's check at start) refuses exactly what parse_snapshot refuses, and says the same."""

from __future__ import annotations

import pytest

from oracle_guard.contract.snapshot import HEADER, check_snapshot, parse_snapshot
from oracle_guard.reporting.findings import UsageError

LINES = [
    "run   tests/test_a.py::test_one",
    "skip tests/test_a.py::test_two[x y]",
    "skip-if-env tests/test_a.py::test_three",
    "xfail tests/test_a.py::test_four\r",
    "run  tests/test_a.py::test_\x85five",
    "# collection error: tests/test_b.py",
    "",
    "   ",
    "\t",
    "run",
    "run ",
    "run \r",
    "run\ttests/test_a.py::t",
    "runs tests/test_a.py::t",
    "skipx tests/test_a.py::t",
    " run tests/test_a.py::t",
    "RUN tests/test_a.py::t",
    "run  \rx",
    "xfail\r",
]


def outcome(data: bytes) -> tuple[tuple[str, str], tuple[str, str]]:
    try:
        parse_snapshot(data, "tests/collection_snapshot.txt")
    except UsageError as exc:
        parsed = ("refused", str(exc))
    else:
        parsed = ("read", "")
    try:
        check_snapshot(data, "tests/collection_snapshot.txt")
    except UsageError as exc:
        return parsed, ("refused", str(exc))
    return parsed, ("read", "")


@pytest.mark.parametrize("line", LINES, ids=repr)
def test_each_line_is_judged_as_the_parse_judges_it(line: str) -> None:
    parsed, checked = outcome((HEADER + "run   tests/test_a.py::first\n" + line + "\n").encode("utf-8"))
    assert checked == parsed


def test_a_whole_snapshot_and_bad_bytes() -> None:
    good = "".join(line + "\n" for line in LINES[:7])
    parsed, checked = outcome((HEADER + good).encode("utf-8"))
    assert parsed == checked == ("read", "")
    parsed, checked = outcome(b"run tests/test_a.py::\xff\n")
    assert parsed == checked and parsed[0] == "refused"
