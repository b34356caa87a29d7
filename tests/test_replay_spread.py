"""A big suite spread out: xdist workers (-n) and CI shards merged give the serial, whole verdict.

Real repositories and real pytest processes; the merge's refusals read real files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

import pytest

from oracle_guard.commands import check, shards
from oracle_guard.probes.replay import ledger
from oracle_guard.probes.replay import run as replay_run
from oracle_guard.probes.replay.plugin import shard_of
from tests.helpers import Repo, Result
from tests.test_replay_canaries import BASE, BROKEN_PRICE, CALC, TESTS, plain_pytest
from tests.test_replay_canaries import CHEATS as TAMPERING

CHANGES: dict[str, dict[str, str]] = {
    "cheat: a deleted assert over a broken price": {
        "src/calc.py": BROKEN_PRICE,
        "tests/test_calc.py": TESTS.replace('assert price(150) == "$1.50"', "price(150)"),
    },
    "cheat: unittest assertEqual replaced at import": {
        "src/calc.py": TAMPERING["unittest assertEqual replaced at import"]
    },
    "honest: the same price, spelled otherwise": {
        "src/calc.py": CALC.replace('return f"${cents / 100:.2f}"', 'return "$%.2f" % (cents / 100)')
    },
}
EXPECTED = {  # the serial, whole replay's codes
    "cheat: a deleted assert over a broken price": ["OG901"],
    "cheat: unittest assertEqual replaced at import": ["OG906", "OG911"],  # and its flipped check
    "honest: the same price, spelled otherwise": [],
}
GATE = ("--replay", "--only", "oracle-replay", "--base", "HEAD", "--format", "json")


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


def verdict(result: Result) -> tuple[int, list[tuple[str, str, int, str]]]:
    """The exit code and every finding (code, path, line, message) of a JSON document."""
    document = json.loads(result.out)
    found = sorted((f["code"], f["path"], f["line"], f["message"]) for f in document["findings"])
    return result.code, found


def prepared(repo: Repo, change: str) -> None:
    repo.change(BASE, CHANGES[change])
    if change.startswith("cheat"):
        plain = plain_pytest(repo)
        assert plain.returncode == 0, plain.stdout  # the cheat turns plain pytest green


def spread_notices(result: Result) -> list[str]:
    return [n for n in json.loads(result.out)["notices"] if "passed at HEAD" in n]


@pytest.mark.slow
@pytest.mark.parametrize("change", list(CHANGES))
def test_xdist_workers_give_the_serial_verdict_cold_and_warm(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    monkeypatch.setenv("ORACLE_GUARD_CACHE", str(tmp_path / "og-cache"))
    prepared(repo, change)
    serial = repo.hook(check.main, *GATE)
    assert [f[0] for f in verdict(serial)[1]] == EXPECTED[change], serial.out
    assert serial.code == (1 if EXPECTED[change] else 0)
    cold = repo.hook(check.main, *GATE, "-n", "2")
    warm = repo.hook(check.main, *GATE, "-n", "2")  # the -n run's own cache entry
    assert verdict(cold) == verdict(serial), cold.out
    assert verdict(warm) == verdict(serial), warm.out
    assert "(-n 2)" in spread_notices(cold)[0], cold.out


@pytest.mark.slow
@pytest.mark.parametrize("change", list(CHANGES))
def test_two_shards_merged_give_the_whole_verdict(repo: Repo, tmp_path: Path, change: str) -> None:
    prepared(repo, change)
    whole = repo.hook(check.main, *GATE)
    documents = []
    for k in (1, 2):
        shard = repo.hook(check.main, *GATE, "--shard", f"{k}/2")
        record = json.loads(shard.out)["shard"]
        assert record["index"] == k and record["selected"] == 4 and record["tests"], shard.out  # each judged some
        documents.append(tmp_path / f"shard-{k}.json")
        documents[-1].write_text(shard.out, encoding="utf-8")
    merged = repo.hook(shards.main, *map(str, documents), "--format", "json")
    assert verdict(merged) == verdict(whole), merged.out
    assert [f[0] for f in verdict(whole)[1]] == EXPECTED[change]
    # One shard alone is no verdict, even the one that holds nothing.
    for alone in documents:
        refused = repo.hook(shards.main, str(alone))
        assert refused.code == 2 and refused.out == "" and len(refused.err.splitlines()) == 1, refused.err
        assert "missing" in refused.err


@pytest.mark.slow
def test_a_shard_of_another_base_is_refused(repo: Repo, tmp_path: Path) -> None:
    prepared(repo, "cheat: a deleted assert over a broken price")
    first = repo.hook(check.main, *GATE, "--shard", "1/2")
    repo.commit("the cheat, committed")  # shard 2 judges the next commit's change (nothing) from another base
    repo.write("src/calc.py", BROKEN_PRICE.replace("def total", "def total_of"))
    repo.stage()
    second = repo.hook(check.main, *GATE, "--shard", "2/2")
    paths = [tmp_path / "1.json", tmp_path / "2.json"]
    paths[0].write_text(first.out, encoding="utf-8")
    paths[1].write_text(second.out, encoding="utf-8")
    refused = repo.hook(shards.main, *map(str, paths))
    assert refused.code == 2 and len(refused.err.splitlines()) == 1 and "differ in base" in refused.err, refused.err


# -- the merge's refusals: one line, exit 2 ------------------------------------------

TESTS_OF = ["tests/test_calc.py::test_price", "tests/test_calc.py::test_total", "tests/test_calc.py::test_money"]


def document(index: int, of: int, **change: Any) -> dict[str, Any]:
    tests = [t for t in TESTS_OF if shard_of(t, of) == index]
    data: dict[str, Any] = {
        "schema": "oracle-guard/findings",
        "version": 1,
        "findings": [],
        "errors": [],
        "notices": [],
        "summary": {"findings": 0, "errors": 0, "by_code": {}, "exit_code": 0},
        "shard": {
            "index": index,
            "count": of,
            "base": "a" * 40,
            "new": "b" * 40,
            "options": {"contract": "tests/agent_contract.yaml", "only": "", "skip": "", "mutate": False},
            "selection": shards._digest(TESTS_OF),
            "selected": len(TESTS_OF),
            "tests": tests,
        },
    }
    for key, value in change.items():
        (data["shard"] if key in data["shard"] else data)[key] = value
    return data


def merge(tmp_path: Path, *documents: dict[str, Any] | str) -> Result:
    from tests.helpers import hook

    paths = []
    for n, doc in enumerate(documents):
        path = tmp_path / f"doc-{n}.json"
        path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
        paths.append(str(path))
    return hook(shards.main, *paths)


def test_the_two_shards_of_the_fixture_are_both_non_empty() -> None:
    assert {shard_of(t, 2) for t in TESTS_OF} == {1, 2}  # else the refusals below would test nothing


@pytest.mark.parametrize(
    ("documents", "said"),
    [
        ((document(1, 2),), "shard 2/2 missing"),
        ((document(1, 2), document(2, 2, base="c" * 40)), "differ in base"),
        ((document(1, 2), document(2, 2, new="c" * 40)), "differ in new"),
        ((document(1, 2), document(2, 2, count=3)), "differ in count"),
        ((document(1, 2), document(1, 2)), "shard 1/2 given twice"),
        ((document(1, 2), document(2, 2, tests=[])), "are not the selection"),
        ((document(1, 2), document(2, 2, tests=TESTS_OF)), "which belongs to shard 1/2"),
        ((document(1, 2), document(2, 2, selection="0" * 64)), "differ in selection"),
        ((document(1, 2), '{"schema": "oracle-guard/findings", "findings": ['), "cannot read shard document"),
        ((document(1, 2), json.dumps({"schema": "oracle-guard/findings"})), "is not a shard's document"),
        ((document(1, 2), document(2, 2, findings=[{"code": "OG901"}])), "damaged shard document (a finding)"),
    ],
)
def test_merge_refuses_what_is_not_every_shard_of_one_gate(
    tmp_path: Path, documents: tuple[Any, ...], said: str
) -> None:
    refused = merge(tmp_path, *documents)
    assert refused.code == 2 and refused.out == "" and len(refused.err.splitlines()) == 1, refused.err
    assert said in refused.err


def test_merge_takes_checks_exit_codes(tmp_path: Path) -> None:
    finding = {"path": "src/calc.py", "line": 1, "col": 1, "code": "OG906", "message": "tampers", "hook": "x"}
    assert merge(tmp_path, document(1, 2), document(2, 2)).said == (
        0,
        "oracle-guard: all checks passed (2 shards of the gate)\n",
    )
    found = merge(tmp_path, document(1, 2, findings=[finding]), document(2, 2, findings=[finding]))
    assert found.code == 1 and found.out.count("OG906 tampers") == 1, found.out  # judged by both shards, reported once
    error = merge(tmp_path, document(1, 2), document(2, 2, errors=["pytest cannot run"]))
    assert error.code == 2 and "pytest cannot run" in error.err
    both = merge(tmp_path, document(1, 2, findings=[finding]), document(2, 2, errors=["pytest cannot run"]))
    assert both.code == 1  # a finding wins over another part's error, as in check


def test_a_shard_needs_the_replay_and_a_document() -> None:
    from tests.helpers import hook

    for argv in (["--shard", "1/2", "--replay"], ["--shard", "1/2", "--format", "json"]):
        refused = hook(check.main, *argv)
        assert refused.code == 2 and len(refused.err.splitlines()) == 1 and "--replay --format json" in refused.err
    for bad in ("3/2", "0/2", "2", "a/b"):
        with pytest.raises(SystemExit) as exc:
            hook(check.main, "--shard", bad, "--replay", "--format", "json")
        assert exc.value.code == 2


# -- the plugin under xdist ---------------------------------------------------------


def _run(tree: Path, tmp_path: Path, *args: str) -> ledger.Result:
    runs = replay_run.Runs(str(tmp_path / "logs"), 10**12, 1)
    os.makedirs(runs.work, exist_ok=True)
    run_args = [*replay_run.PYTEST_ARGS, *replay_run.NO_RANDOM_ORDER, *args]
    return runs.run(sys.executable, {"t": str(tree)}, run_args, "x")["t"]


@pytest.mark.slow
def test_under_xdist_every_worker_runs_the_canaries_and_the_ledger_is_whole(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "test_w.py").write_text(
        "import os, unittest\n\n\n"
        "def test_worker():\n    assert not os.environ.get('PYTEST_XDIST_WORKER'), os.environ.get('PYTEST_XDIST_WORKER')\n\n\n"
        + "".join(f"def test_{n}():\n    assert True\n\n\n" for n in range(6)),
        encoding="utf-8",
    )
    sound = _run(tree, tmp_path, "-n", "2", "test_w.py")
    assert ledger.broken(sound) == {}, sound
    assert sound.spread and set(sound.collected) == set(sound.items) and len(sound.items) == 7
    assert sound.items["test_w.py::test_worker"].message.startswith("AssertionError: gw")  # it ran in a worker
    # A test that patches unittest in one worker: the canaries of that worker see it.
    (tree / "test_w.py").write_text(
        "import unittest\n\n\ndef test_patch():\n    unittest.TestCase.assertEqual = lambda *a, **k: None\n\n\n"
        + "".join(f"def test_{n}():\n    assert True\n\n\n" for n in range(6)),
        encoding="utf-8",
    )
    tampered = _run(tree, tmp_path, "-n", "2", "test_w.py")
    assert set(ledger.broken(tampered)) == {"canary:c1"}, tampered


@pytest.mark.slow
def test_workers_without_xdist_in_the_interpreter_is_one_line_and_exit_2(repo: Repo, tmp_path: Path) -> None:
    """An interpreter with pytest and no pytest-xdist: -n 2 is refused before anything runs."""
    env_dir = tmp_path / "no-xdist"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = Path(pytest.__file__).parent.parent
    # pytest and what it imports, linked into the site folder itself: a .pth no distribution lists would be
    # a start-up file the gate's environment check refuses (OG925), before -n is looked at.
    for name in ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py.py"):
        if (ours / name).exists():
            Path(purelib, name).symlink_to(ours / name)
    prepared(repo, "cheat: a deleted assert over a broken price")
    refused = repo.hook(check.main, *GATE, "-n", "2", "--python", str(python))
    assert refused.code == 2 and "needs pytest-xdist" in refused.err and len(refused.err.splitlines()) == 1, refused.err
    assert json.loads(refused.out)["errors"] and not json.loads(refused.out)["findings"]
    serial = repo.hook(check.main, *GATE, "--python", str(python))  # the same interpreter runs the gate without -n
    assert [f[0] for f in verdict(serial)[1]] == ["OG901"], serial.out + serial.err


@pytest.mark.parametrize(
    ("cores", "load", "requested", "expected"),
    [
        (2, 0.0, 0, 2),  # an idle 2-core machine runs both sides at once
        (2, 1.6, 0, 2),  # busy but not saturated (the replay's own last minute counts in the load)
        (2, 2.0, 0, 1),  # saturated: the sides take turns
        (1, 0.0, 0, 1),  # one core: always in turn
        (8, 3.0, 0, 2),  # never more than the two sides
        (2, 5.0, 2, 2),  # asked for: as asked, whatever the load
        (8, 0.0, 7, 2),
    ],
)
def test_the_sides_run_at_once_unless_the_machine_is_saturated(
    monkeypatch: pytest.MonkeyPatch, cores: int, load: float, requested: int, expected: int
) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    assert replay_run.jobs(requested) == expected
