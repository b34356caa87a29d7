"""The gate's reference: the ids the base's snapshot lists and the ids the base collects (pytest_side/collection/base.py).

Rule tables without git or pytest; tests/test_ci_only.py runs the same rules through real repositories.
"""

from __future__ import annotations

from typing import Callable

import pytest

from oracle_guard.pytest_side.collection import base as base_collection
from oracle_guard.pytest_side.collection.base import Collected, Record, reference
from oracle_guard.reporting.report import UsageError

SOURCE = {
    "tests/test_a.py": b"def test_kept():\n    pass\n\n\nclass TestBox:\n    def test_inside(self):\n        pass\n",
}


def _read(sources: dict[str, bytes]) -> Callable[[list[str]], dict[str, bytes | None]]:
    return lambda paths: {p: sources.get(p) for p in paths}


def _snapshot(*ids: str) -> dict[str, tuple[str, int]]:
    return {node_id: ("run", line) for line, node_id in enumerate(ids, 2)}


def test_an_id_the_base_collects_but_its_snapshot_misses_must_be_kept() -> None:
    base = _snapshot("tests/test_a.py::test_kept")
    at_base = Collected({"tests/test_a.py::test_kept": "run", "tests/test_a.py::test_new": "run"}, [], 0, "")
    ref, record = reference(base, at_base, {"tests/test_a.py::test_kept": "run"}, _read(SOURCE))
    assert ref["tests/test_a.py::test_new"] == ("run", 1) and record.unlisted == ["tests/test_a.py::test_new"]
    assert ref["tests/test_a.py::test_kept"] == base["tests/test_a.py::test_kept"]  # the snapshot's own line


def test_a_listed_id_whose_test_the_base_source_no_longer_defines_is_not_the_changes_loss() -> None:
    base = _snapshot("tests/test_a.py::test_kept", "tests/test_a.py::test_retired", "tests/test_gone.py::test_x")
    ref, record = reference(base, Collected({}, [], 0, ""), {"tests/test_a.py::test_kept": "run"}, _read(SOURCE))
    assert set(ref) == {"tests/test_a.py::test_kept"}
    assert record.gone == ["tests/test_a.py::test_retired", "tests/test_gone.py::test_x"]


@pytest.mark.parametrize(
    "node_id",
    ["tests/test_a.py::test_kept", "tests/test_a.py::TestBox::test_inside", "tests/test_a.py::test_kept[3]"],
)
def test_a_listed_id_whose_test_the_base_still_defines_stays_though_neither_side_collects_it(node_id: str) -> None:
    # What hides a defined test on both sides (the environment, a plugin) is still a loss.
    ref, record = reference(_snapshot(node_id), Collected({}, [], 0, ""), {}, _read(SOURCE))
    assert node_id in ref and record.gone == []


def test_a_module_that_does_not_collect_at_the_base_keeps_its_listed_ids() -> None:
    base = _snapshot("tests/test_a.py::test_retired")
    at_base = Collected({}, [("tests/test_a.py", "ImportError: nope")], 2, "")
    ref, record = reference(base, at_base, {}, _read({}))
    assert "tests/test_a.py::test_retired" in ref and record.gone == []


def test_counted_tests_and_cases_the_base_gives_other_ids_are_left_to_the_snapshot() -> None:
    base = {"tests/test_a.py::test_when[<unstable id> x2]": ("run", 2), "tests/test_a.py::test_p[a1]": ("run", 3)}
    at_base = Collected(
        {
            "tests/test_a.py::test_when[1.5]": "run",
            "tests/test_a.py::test_when[2.5]": "run",
            "tests/test_a.py::test_p[b1]": "run",
        },
        [],
        0,
        "",
    )
    defined = {"tests/test_a.py": b"def test_when(x):\n    pass\n\n\ndef test_p(y):\n    pass\n"}
    ref, record = reference(base, at_base, {}, _read(defined))
    assert ref == base and record.unlisted == []


@pytest.mark.parametrize(("code", "errors"), [(0, []), (5, []), (2, [("t.py", "x")])])
def test_a_base_collection_with_module_errors_is_usable(code: int, errors: list[tuple[str, str]]) -> None:
    found = Collected({}, errors, code, "")
    assert base_collection.usable(found, "main", "python") is found


@pytest.mark.parametrize(("code", "errors"), [(4, []), (3, []), (2, []), (1, [])])
def test_a_base_pytest_cannot_collect_is_one_line(code: int, errors: list[tuple[str, str]]) -> None:
    with pytest.raises(UsageError) as caught:
        base_collection.usable(Collected({}, errors, code, "ERROR: usage"), "main", "python")
    assert "\n" not in str(caught.value) and "cannot be collected at main" in str(caught.value)


def test_the_notice_counts_what_the_snapshot_does_not_record_and_names_the_command() -> None:
    current = b"run   tests/test_a.py::test_kept\nrun   tests/test_a.py::test_old\n"
    items = {"tests/test_a.py::test_kept": "run", "tests/test_a.py::test_new": "run", "tests/test_a.py::test_b": "run"}
    said = base_collection.unrecorded("snap.txt", items, current, Record(unlisted=["x"]), "origin/main")
    assert "(3 tests: 2 new ids, 1 renamed or retired)" in said
    assert "`oracle-guard collection-snapshot --base origin/main`" in said and "1 test(s) origin/main collects" in said
    assert "\n" not in said
