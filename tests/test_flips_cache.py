"""The flip run's base side from the cache: same verdicts warm and cold, and no entry can hide a flip (real repos, real pytest)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from oracle_guard.commands import check
from oracle_guard.probes.flips import cached
from oracle_guard.probes.neighbours import recorded
from tests.helpers import Repo, Result
from tests.test_replay_flips import ALWAYS_EQUAL, BASE, HONEST, REPLAY, TOUCHED, plain_pytest

WARM = "the flip run's base side from the cache"
CHANGES = {"cheat": ALWAYS_EQUAL, "honest": HONEST["refactor"]}


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    # The entry stands in for the base side only when there is nothing to record there (recorded.py:
    # the calls the base's tests make into changed Python); these tests judge the entry itself.
    if "recording" not in request.node.name:
        monkeypatch.setattr(recorded, "RECORD", False)
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("ORACLE_GUARD_CACHE", str(tmp_path / "og-cache"))
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


def replay(repo: Repo) -> Result:
    return repo.hook(check.main, *REPLAY, "HEAD")


def flips_entry(tmp_path: Path) -> Path:
    (entry,) = [
        p
        for p in (tmp_path / "og-cache" / "replay").glob("*.json")
        if json.loads(p.read_text()).get("probe") == "flips"
    ]
    return entry


def forge(entry: Path, passes: str) -> None:
    """Rewrite every cached verdict: "all" passed every time at the base, "none" never passed."""
    data = json.loads(entry.read_text(encoding="utf-8"))
    data["verdicts"] = [[n, s, max(r, 1), max(r, 1) if passes == "all" else 0] for n, s, r, _ in data["verdicts"]]
    entry.write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("change", list(CHANGES))
def test_a_warm_flip_run_gives_the_cold_verdict(repo: Repo, tmp_path: Path, change: str) -> None:
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": CHANGES[change]})
    if change == "cheat":
        assert plain_pytest(repo) == 0  # the cheat turns plain pytest green
    cold = replay(repo)
    assert WARM not in cold.err and flips_entry(tmp_path).exists(), cold.err
    warm = replay(repo)
    assert WARM in warm.err, warm.err
    assert (warm.code, warm.out) == (cold.code, cold.out)
    if change == "cheat":
        assert cold.code == 1 and "tests/test_shop.py:7:5: OG911" in cold.out, cold.out
    else:
        assert (cold.code, cold.out) == (0, ""), cold


@pytest.mark.slow
def test_an_entry_saying_every_flip_passed_at_the_base_cannot_hide_og911(repo: Repo, tmp_path: Path) -> None:
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": ALWAYS_EQUAL})
    cold = replay(repo)
    assert cold.code == 1 and "OG911" in cold.out, cold
    forge(flips_entry(tmp_path), "all")  # "the flipped check could not fail at the base either"
    warm = replay(repo)
    assert (warm.code, warm.out) == (cold.code, cold.out), warm
    assert f"{WARM}, 1 test(s) run again at the base" in warm.err, warm.err


@pytest.mark.slow
def test_an_entry_saying_every_flip_failed_at_the_base_convicts_nothing_by_itself(repo: Repo, tmp_path: Path) -> None:
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": HONEST["refactor"]})
    cold = replay(repo)
    assert (cold.code, cold.out) == (0, ""), cold
    forge(flips_entry(tmp_path), "none")
    warm = replay(repo)
    assert (warm.code, warm.out) == (0, ""), warm


@pytest.mark.slow
@pytest.mark.parametrize("corrupt", ["", "{not json", "unreadable", '{"format": 1, "probe": "flips"}'])
def test_a_corrupt_or_unreadable_flips_entry_is_a_cold_run(repo: Repo, tmp_path: Path, corrupt: str) -> None:
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": ALWAYS_EQUAL})
    cold = replay(repo)
    entry = flips_entry(tmp_path)
    if corrupt == "unreadable":
        entry.chmod(0)
        if os.access(entry, os.R_OK):
            entry.chmod(0o600)  # root reads anything: a directory in its place is unreadable as a file
            entry.unlink()
            entry.mkdir()
    else:
        entry.write_text(corrupt, encoding="utf-8")
    again = replay(repo)
    assert (again.code, again.out) == (cold.code, cold.out) and WARM not in again.err, again
    assert cold.code == 1 and "OG911" in cold.out


def test_an_entry_is_read_only_in_its_exact_format(tmp_path: Path) -> None:
    where = str(tmp_path)
    verdicts = {("t.py::test_a", "s1"): cached.Verdict(2, 0), ("t.py::test_a", "s2"): cached.Verdict(1, 1)}
    cached.write(where, "k", {"s1": {"line": 3}}, verdicts, 2.5)
    entry = cached.read(where, "k")
    assert entry is not None and entry.verdicts == verdicts and entry.sites == {"s1": {"line": 3}}
    assert entry.seconds == 2.5  # the base flip run's time: the new side's measure when warm (OG922)
    assert cached.convicts(entry, ("t.py::test_a", "s1")) and not cached.convicts(entry, ("t.py::test_a", "s2"))
    assert cached.read(where, "other") is None
    good = json.loads((tmp_path / "k.json").read_text())
    for bad in (
        {"probe": "replay"},
        {"key": "other"},
        {"verdicts": [["t.py::test_a", "s1", 1, 2]]},  # more passes than runs
        {"verdicts": [["t.py::test_a", "s1", True, 0]]},
        {"verdicts": [["t.py::test_a", "s1", -1, 0]]},
        {"verdicts": {"t.py::test_a": 1}},
        {"sites": {"s1": 3}},
        {"seconds": None},  # no base time: a warm new side could not be held to a limit
        {"seconds": -1.0},
        {"seconds": True},
    ):
        (tmp_path / "k.json").write_text(json.dumps({**good, **bad}))
        assert cached.read(where, "k") is None, bad


def test_only_a_flip_the_new_side_passed_and_the_entry_does_not_convict_is_run_again() -> None:
    node, other = "t.py::test_a", "t.py::test_b"
    entry = cached.Entry({}, {(node, "s1"): cached.Verdict(1, 0), (node, "s2"): cached.Verdict(1, 1)}, 1.0)
    new = {(node, "s1"): cached.Verdict(1, 1), (other, "s3"): cached.Verdict(1, 0)}
    assert cached.to_verify(entry, new, {node, other}) == []  # s1 convicted, s3 failed on the new code
    new[(node, "s2")] = cached.Verdict(1, 1)  # passed on the new code, and the entry says it passed at the base
    assert cached.to_verify(entry, new, {node, other}) == [node]
    assert cached.to_verify(entry, new, {other}) == []  # test_a did not pass on both sides: not judged
    new[(other, "s4")] = cached.Verdict(2, 1)  # an entry that lacks a site never excuses it
    assert cached.to_verify(entry, new, {node, other}) == [node, other]
    ran = {(node, "s2"): cached.Verdict(1, 0)}
    assert cached.merged(entry, [node], ran) == ran


@pytest.mark.slow
def test_with_calls_to_record_the_base_side_runs_whole_warm_or_cold_recording(repo: Repo, tmp_path: Path) -> None:
    """The recorded calls are the base's own run; an entry could only hide them."""
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": ALWAYS_EQUAL})
    assert plain_pytest(repo) == 0  # the cheat turns plain pytest green
    cold = replay(repo)
    warm = replay(repo)
    assert WARM not in cold.err and WARM not in warm.err, warm.err
    assert (warm.code, warm.out) == (cold.code, cold.out)
    assert cold.code == 1 and "tests/test_shop.py:7:5: OG911" in cold.out, cold.out


@pytest.mark.slow
def test_a_change_of_comments_alone_records_nothing_so_the_entry_stands_recording(repo: Repo, tmp_path: Path) -> None:
    """The same code on both sides: no recorded call can show a special case, so the warm run uses the entry."""
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": BASE["src/shop/__init__.py"] + "\n# a comment\n"})
    cold = replay(repo)
    warm = replay(repo)
    assert WARM not in cold.err and WARM in warm.err, warm.err
    assert (warm.code, warm.out) == (cold.code, cold.out) == (0, "")


def test_code_changed_ignores_comments_and_blank_lines_only(tmp_path: Path) -> None:
    base, new = tmp_path / "base", tmp_path / "new"
    trees = {"base": str(base), "new": str(new)}
    for side, text in (
        (base, "def f(x):\n    return x + 1\n"),
        (new, "# why\n\ndef f(x):  # note\n    return x + 1\n"),
    ):
        (side / "m.py").parent.mkdir(parents=True, exist_ok=True)
        (side / "m.py").write_text(text, encoding="utf-8")
    assert recorded.code_changed(trees, ["m.py", "README.md"]) is False
    assert recorded.code_changed({"base": str(base)}, ["m.py"]) is True  # one tree: record as before
    (new / "m.py").write_text("def f(x):\n    return x + 2\n", encoding="utf-8")
    assert recorded.code_changed(trees, ["m.py"]) is True
    (new / "m.py").write_text('def f(x):\n    """Now documented."""\n    return x + 1\n', encoding="utf-8")
    assert recorded.code_changed(trees, ["m.py"]) is True  # a docstring is code: it can be read
    (new / "m.py").write_text("def f(x:\n", encoding="utf-8")
    assert recorded.code_changed(trees, ["m.py"]) is True  # unparsable: changed
    assert recorded.code_changed(trees, ["gone.py"]) is True  # unreadable: changed
