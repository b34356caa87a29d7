"""check_snapshot (the pytest plugin's check at start) refuses exactly what parse_snapshot refuses, and says the same."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


@pytest.mark.parametrize("line", LINES, ids=repr)
def test_the_first_line_is_judged_as_the_parse_judges_it(line: str) -> None:
    # The check searches from each newline; the first line has none before it and is matched on its own.
    parsed, checked = outcome((line + "\nrun   tests/test_a.py::first\n").encode("utf-8"))
    assert checked == parsed


def test_the_last_line_without_a_newline_is_judged_as_the_parse_judges_it() -> None:
    for line in LINES:
        parsed, checked = outcome((HEADER + "run   tests/test_a.py::first\n" + line).encode("utf-8"))
        assert checked == parsed, repr(line)


_PIECES = st.sampled_from(["run", "skip", "xfail", "skip-if-env", "#", " ", "  ", "\t", "\r", "\n", "\x85", "x", "::t"])


@given(st.lists(_PIECES, max_size=30).map("".join))
@settings(max_examples=400, deadline=None)
def test_any_text_is_refused_by_the_check_exactly_when_the_parse_refuses_it(text: str) -> None:
    parsed, checked = outcome(text.encode("utf-8"))
    assert checked == parsed
