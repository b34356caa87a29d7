"""The replay's base-side cache: same verdicts warm and cold, and no entry can hide a finding (real repos, real pytest)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from oracle_guard.commands import check
from oracle_guard.probes.replay import base_cache, ledger
from tests.helpers import Repo, Result
from tests.test_replay import BASE, BROKEN_PRICE, WEAKENINGS, shop
from tests.test_replay_canaries import BASE as CALC_BASE
from tests.test_replay_canaries import CHEATS, plain_pytest

WARM = "the base side's outcomes from the cache"
HONEST = {
    "src/shop/__init__.py": shop("return name.title()", "return ' '.join(w.capitalize() for w in name.split(' '))")
}
CHEAT = WEAKENINGS["expected value through .lower()"]


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("ORACLE_GUARD_CACHE", str(tmp_path / "og-cache"))
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


def replay(repo: Repo) -> Result:
    return repo.hook(check.main, "-q", "--replay", "--only", "oracle-replay", "--base", "HEAD")


def entries(tmp_path: Path) -> list[Path]:
    """The main run's entries (the flip run's name their probe: tests/test_flips_cache.py)."""
    found = sorted((tmp_path / "og-cache" / "replay").glob("*.json"))
    return [p for p in found if "probe" not in json.loads(p.read_bytes() or b"{}")]


def rewrite(entry: Path, change: dict[str, object]) -> None:
    data = json.loads(entry.read_text(encoding="utf-8"))
    data.update(change)
    entry.write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("change", ["cheat", "honest"])
def test_a_warm_replay_gives_the_cold_verdict(repo: Repo, tmp_path: Path, change: str) -> None:
    repo.change(BASE, CHEAT if change == "cheat" else HONEST)
    if change == "cheat":
        plain = plain_pytest(repo)
        assert plain.returncode == 0, plain.stdout  # the cheat turns plain pytest green
    cold = replay(repo)
    assert len(entries(tmp_path)) == 1 and WARM not in cold.err, cold.err
    warm = replay(repo)
    # a cached pass stands where the new side passes too; the test the new side fails runs again at the base
    said = "(3 cached passes, 1 run again at the base)" if change == "cheat" else "(4 cached passes)"
    assert f"{WARM} {said}" in warm.err, warm.err
    assert (warm.code, warm.out) == (cold.code, cold.out)
    if change == "cheat":
        assert cold.code == 1 and "OG901 tests/test_shop.py::test_label passed at" in cold.out, cold.out
    else:
        assert (cold.code, cold.out) == (0, ""), cold


@pytest.mark.slow
def test_a_red_base_test_the_change_fixes_is_run_again_at_the_base(repo: Repo, tmp_path: Path) -> None:
    repo.change({**BASE, "src/shop/__init__.py": BROKEN_PRICE}, {"src/shop/__init__.py": BASE["src/shop/__init__.py"]})
    cold = replay(repo)
    assert (cold.code, cold.out) == (0, "") and "3 passed, 1 failed at" in cold.err, cold
    warm = replay(repo)
    assert f"{WARM} (3 cached passes, 1 run again at the base)" in warm.err, warm.err
    assert (warm.code, warm.out) == (cold.code, cold.out) and "3 passed, 1 failed at" in warm.err


@pytest.mark.slow
def test_a_base_pass_rewritten_as_failed_cannot_hide_og901(repo: Repo, tmp_path: Path) -> None:
    repo.change(BASE, {"src/shop/__init__.py": BROKEN_PRICE})
    cold = replay(repo)
    assert cold.code == 1 and "OG901 tests/test_shop.py::test_price passed at" in cold.out, cold
    (entry,) = entries(tmp_path)
    items = json.loads(entry.read_text(encoding="utf-8"))["items"]
    for lie in ("failed", "skipped", "error"):
        items["tests/test_shop.py::test_price"][0] = lie
        rewrite(entry, {"items": items})
        warm = replay(repo)
        assert (warm.code, warm.out) == (cold.code, cold.out), (lie, warm)
        assert "the base side runs whole" in warm.err and WARM not in warm.err, warm.err


@pytest.mark.slow
def test_a_test_left_out_of_the_entry_is_run_at_the_base(repo: Repo, tmp_path: Path) -> None:
    repo.change(BASE, {"src/shop/__init__.py": BROKEN_PRICE})
    cold = replay(repo)
    (entry,) = entries(tmp_path)
    items = json.loads(entry.read_text(encoding="utf-8"))["items"]
    del items["tests/test_shop.py::test_price"]
    rewrite(entry, {"items": items})
    warm = replay(repo)
    assert (warm.code, warm.out) == (cold.code, cold.out) and cold.code == 1, warm


@pytest.mark.slow
def test_an_entry_claiming_a_broken_canary_cannot_hide_og906(repo: Repo, tmp_path: Path) -> None:
    cheat = CHEATS["atexit os._exit(0) at import"]
    repo.change(CALC_BASE, {"src/calc.py": cheat})
    assert plain_pytest(repo).returncode == 0  # the cheat turns plain pytest green
    cold = replay(repo)
    assert cold.code == 1 and " OG906 " in cold.out, cold
    (entry,) = entries(tmp_path)
    # What a cold run at the base would hold if the base broke the same way: an entry cannot say it.
    rewrite(entry, {"canaries": {"c0": "passed"}, "exit_code": 0, "finished": None, "broken": ["exit", "canary:c0"]})
    warm = replay(repo)
    assert (warm.code, warm.out) == (cold.code, cold.out), warm
    assert "not judged" not in warm.err, warm.err


@pytest.mark.slow
@pytest.mark.parametrize("corrupt", ["", "{not json", '{"format": 1}', "[1, 2]", "\xff\xfe"])
def test_a_corrupt_entry_is_a_cold_run(repo: Repo, tmp_path: Path, corrupt: str) -> None:
    repo.change(BASE, {"src/shop/__init__.py": BROKEN_PRICE})
    cold = replay(repo)
    (entry,) = entries(tmp_path)
    entry.write_bytes(corrupt.encode("utf-8", "surrogateescape"))
    again = replay(repo)
    assert (again.code, again.out) == (cold.code, cold.out) and WARM not in again.err, again
    assert json.loads(entry.read_text(encoding="utf-8"))["items"], "the cold run writes the entry again"


@pytest.mark.slow
def test_a_cache_folder_inside_the_work_tree_is_refused(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORACLE_GUARD_CACHE", str(repo.path / ".cache"))
    repo.change(BASE, {"src/shop/__init__.py": BROKEN_PRICE})
    for _ in range(2):
        result = replay(repo)
        assert result.code == 1 and "OG901" in result.out and WARM not in result.err, result
        assert "lies inside the repository's work tree" in result.err, result.err
    assert not (repo.path / ".cache").exists()


def test_an_entry_is_read_only_in_its_exact_format(tmp_path: Path) -> None:
    fixed = [["-q"], ["-q", "-p", "no:randomly"]]
    sound = ledger.Result({"t.py::a": ledger.Outcome("passed", "t.py", 1, "")}, {}, 1, "", ("t.py::a",), 1, {}, False)
    base_cache.write(str(tmp_path), "k", ["-q"], sound, 2.5)
    assert base_cache.read(str(tmp_path), "k", fixed) == base_cache.Entry(("-q",), dict(sound.items), 2.5)
    assert base_cache.read(str(tmp_path), "other", fixed) is None  # missing
    (tmp_path / "other.json").write_text((tmp_path / "k.json").read_text())
    assert base_cache.read(str(tmp_path), "other", fixed) is None  # under another key's name
    bad_times: list[dict[str, object]] = [{"seconds": s} for s in (None, -1, "2", True, float("inf"))]
    for bad in (
        {"fixed": ["-p", "no:canaries"]},
        {"items": {"t.py::a": ["passed", "t.py", "1", ""]}},
        {"format": 0},
        *bad_times,  # no base time: a warm run could not hold a hang of the new code to a limit
    ):
        data = json.loads((tmp_path / "k.json").read_text())
        data.update(bad)
        (tmp_path / "k.json").write_text(json.dumps(data))
        assert base_cache.read(str(tmp_path), "k", fixed) is None, bad
    broken = sound._replace(exit_code=0)  # a base run that is not sound is never kept
    base_cache.write(str(tmp_path), "b", ["-q"], broken, 2.5)
    assert not (tmp_path / "b.json").exists()
    base_cache.write(str(tmp_path), "u", ["-q"], sound, None)  # nor one whose time was not measured
    assert not (tmp_path / "u.json").exists()


def test_the_cache_folder_comes_from_the_environment_and_never_from_the_work_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    top = tmp_path / "repo"
    top.mkdir()
    monkeypatch.setenv("ORACLE_GUARD_CACHE", str(tmp_path / "ci"))
    assert base_cache.folder(str(top)) == str(tmp_path / "ci" / "replay")
    monkeypatch.delenv("ORACLE_GUARD_CACHE")
    assert base_cache.folder(str(top)) == str(tmp_path / "xdg" / "oracle-guard" / "replay")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert base_cache.folder(str(top)) == str(tmp_path / "home" / ".cache" / "oracle-guard" / "replay")
    assert capsys.readouterr().err == ""
    (top / "link").symlink_to(tmp_path / "elsewhere")
    for inside in (top, top / "sub", top / ".git"):
        monkeypatch.setenv("ORACLE_GUARD_CACHE", str(inside))
        assert base_cache.folder(str(top)) is None
        assert "lies inside the repository's work tree" in capsys.readouterr().err
    monkeypatch.setenv("XDG_CACHE_HOME", str(top / ".cache"))  # a work tree that holds the XDG cache
    monkeypatch.delenv("ORACLE_GUARD_CACHE")
    assert base_cache.folder(str(top)) is None
    monkeypatch.setenv("ORACLE_GUARD_CACHE", str(top / "link"))  # a link out of the tree is outside it
    assert base_cache.folder(str(top)) == str(top / "link" / "replay")
