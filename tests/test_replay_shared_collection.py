"""The replay takes what `check`'s own collection of the base gave, where the change's code runs confined: the
base's ids for a warm base side (probes/replay/base_cache.py ``shared_collection``: one pytest process fewer) and
the base's bytecode for every scratch tree (pytest_side/bytecode.py).  Same verdicts.

Real repositories, real pytest, `check --replay` in this process (its collection of the base is kept for the
command only, pytest_side/collection/base.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from oracle_guard.commands import check
from oracle_guard.contract.snapshot import format_snapshot
from oracle_guard.hook_ids import collection_snapshot
from oracle_guard.pytest_side.collection import base as base_collection
from oracle_guard.repo.confine import jail
from tests.contract_helpers import CONTRACT, contract_text
from tests.helpers import Repo, Result, finding_lines
from tests.test_replay import BASE, BROKEN_PRICE
from tests.test_replay_cache import HONEST, WARM, entries, rewrite

pytestmark = pytest.mark.slow  # real pytest and replay subprocesses

SHARED = "from this check's own collection of the base"
SNAPSHOT = "tests/collection_snapshot.txt"
# A statement run at import: the change may alter what the base's modules collect, so check collects the base.
AT_IMPORT = "\n\nLIMIT = 3\n"
REGRESSION = {"src/shop/__init__.py": BROKEN_PRICE + AT_IMPORT}
FIXED = {"src/shop/__init__.py": HONEST["src/shop/__init__.py"] + AT_IMPORT}


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("ORACLE_GUARD_CACHE", str(tmp_path / "og-cache"))
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


def adopt(repo: Repo, after: dict[str, str]) -> None:
    """The shop project with its contract and snapshot committed, then AFTER staged."""
    for path, text in BASE.items():
        repo.write(path, text)
    repo.write(".gitignore", "__pycache__/\n.pytest_cache/\n")
    repo.write(CONTRACT, contract_text())
    with repo.cwd():
        found = collection_snapshot.collect(sys.executable)
    assert found is not None and found.items
    repo.write(SNAPSHOT, format_snapshot(found.items))
    repo.commit("adopt oracle-guard")
    for path, text in after.items():
        repo.write(path, text)
    repo.stage()


def gate(repo: Repo) -> Result:
    """`check --replay`: every hook (collection-snapshot collects the base), then the replay."""
    return repo.hook(check.main, "-q", "--replay", "--base", "HEAD", "--python", sys.executable)


@pytest.mark.parametrize("change", ["regression", "honest"])
def test_a_warm_gate_takes_the_base_ids_from_its_own_collection_and_gives_the_cold_verdict(
    repo: Repo, tmp_path: Path, change: str
) -> None:
    adopt(repo, REGRESSION if change == "regression" else FIXED)
    cold = gate(repo)
    assert WARM not in cold.err and SHARED not in cold.err, cold.err
    warm = gate(repo)
    assert WARM in warm.err, warm.err
    assert (SHARED in warm.err) == bool(jail.ground().abi), warm.err  # unconfined: the base is collected again
    assert (warm.code, warm.out) == (cold.code, cold.out)
    if change == "regression":
        lines = finding_lines(cold.out)
        assert cold.code == 1 and any("OG901 tests/test_shop.py::test_price passed at" in x for x in lines), cold
    else:
        assert (cold.code, cold.out) == (0, ""), cold
    assert base_collection.whole(str(repo.path), repo.git("rev-parse", "HEAD").strip(), sys.executable) is None


def test_a_test_the_entry_leaves_out_is_still_run_at_the_base(repo: Repo, tmp_path: Path) -> None:
    # The entry is a claim (anything running as this user can write it): the base's own collection, not the
    # entry, says which tests exist, so a test left out of it runs at the base and its OG901 stands.
    adopt(repo, REGRESSION)
    cold = gate(repo)
    assert cold.code == 1 and "OG901" in cold.out, cold
    (entry,) = entries(tmp_path)
    items = json.loads(entry.read_text(encoding="utf-8"))["items"]
    del items["tests/test_shop.py::test_price"]
    rewrite(entry, {"items": items})
    warm = gate(repo)
    assert (warm.code, warm.out) == (cold.code, cold.out), warm
    assert (SHARED in warm.err) == bool(jail.ground().abi), warm.err


def test_unconfined_the_base_is_collected_again(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(jail.SWITCH, "0")
    adopt(repo, FIXED)
    cold = gate(repo)
    warm = gate(repo)
    assert WARM in warm.err and SHARED not in warm.err, warm.err
    assert (warm.code, warm.out) == (cold.code, cold.out) == (0, ""), warm


def test_a_regression_of_the_same_size_as_the_base_file_runs_its_own_code(repo: Repo, tmp_path: Path) -> None:
    # The base's bytecode is laid into the new tree too; the changed file has the base's size and, exported in
    # the same second, its time: a timestamp pyc would run the base's code for it (tests/test_bytecode.py).
    base = BASE["src/shop/__init__.py"] + "\n\nLIMIT = 3\n"
    new = BROKEN_PRICE + "\n\nLIMIT = 4\n"
    assert len(base) == len(new) and base != new
    for path, text in BASE.items():
        repo.write(path, text)
    repo.write("src/shop/__init__.py", base)
    repo.write(".gitignore", "__pycache__/\n.pytest_cache/\n")
    repo.write(CONTRACT, contract_text())
    with repo.cwd():
        found = collection_snapshot.collect(sys.executable)
    assert found is not None
    repo.write(SNAPSHOT, format_snapshot(found.items))
    repo.commit("adopt oracle-guard")
    repo.write("src/shop/__init__.py", new)
    repo.stage()
    for _ in range(2):  # cold, then warm
        result = gate(repo)
        lines = finding_lines(result.out)
        assert result.code == 1 and any("OG901 tests/test_shop.py::test_price passed at" in x for x in lines), result
