"""The wall between the new code's processes and the base side's (pytest_side/barrier.py).

The replay runs the new code as the same user as the base side's runs.  Each cheat here ships a
bug plain pytest does not see (shown) and, from the new code, writes where a later base-side run
reads (the base's scratch tree is ``../base`` from the new tree's), or leaves a process behind to
do it.  Each must end in a refusal, never a pass; the honest runs beside them must still pass.

The tests of leftover processes hold on Linux, where the gate is its children's subreaper (and
reads /proc); elsewhere that guarantee is not given (docs/oracle-replay.md), and they would fail.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oracle_guard.commands import check
from oracle_guard.hook_ids import replay as replay_hook
from oracle_guard.pytest_side import barrier
from tests.helpers import Repo, finding_codes, project_python
from tests.test_mutation import UNKNOWN_TO_STATIC, T, module, mutate
from tests.test_replay_flips import ALWAYS_EQUAL, BASE, HONEST, REPLAY, TOUCHED, plain_pytest

# A base-side conftest.py that makes the base agree with the always-equal cheat: every price compares equal.
AGREEING_CONFTEST = """
import shop

class _Text(str):
    def __eq__(self, other):
        return True
    __hash__ = str.__hash__

_price = shop.price
shop.price = lambda cents: _Text(_price(cents))
"""

PLANT = """

import os as _os

_here = _os.getcwd()
_base = _os.path.join(_os.path.dirname(_here), "base")
if _os.path.basename(_here) == "new" and _os.path.isdir(_base):
    with open(_os.path.join(WHERE), "w") as _f:
        _f.write(AGREEING)
"""
PLACES = {
    "the base tree's conftest.py": '_base, "conftest.py"',
    "a test folder of the base tree": '_base, "tests", "conftest.py"',
    "a conftest.py beside the trees": '_os.path.dirname(_here), "conftest.py"',
}

# A process left behind: it waits for the new side's run to end, then writes into the base tree.
LEAVE_BEHIND = """

import os as _os
import sys as _sys
import time as _time

_here = _os.getcwd()
_base = _os.path.join(_os.path.dirname(_here), "base")
if _os.path.basename(_here) == "new" and _os.path.isdir(_base) and "pytest" in _sys.modules:
    _run = _os.getpid()
    if _os.fork() == 0:
        _os.setsid()
        if _os.fork() == 0:
            with open(PIDFILE + ".tmp", "w") as _f:
                _f.write(str(_os.getpid()))
            _os.rename(PIDFILE + ".tmp", PIDFILE)
            while True:
                try:
                    _os.kill(_run, 0)
                except OSError:
                    break
                _time.sleep(0.005)
            with open(_os.path.join(_base, "conftest.py"), "w") as _f:
                _f.write(AGREEING)
            _time.sleep(60)
        _os._exit(0)
"""


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    project_python(monkeypatch, tmp_path / "xdg")
    monkeypatch.setenv("ORACLE_GUARD_CONFINE", "0")  # the barrier alone; tests/test_confine.py runs these confined


def _cheat(extra: str) -> str:
    return ALWAYS_EQUAL + extra.replace("AGREEING", repr(AGREEING_CONFTEST))


@pytest.mark.slow
@pytest.mark.parametrize("place", list(PLACES))
def test_new_code_that_writes_where_the_base_reads_is_refused(repo: Repo, place: str) -> None:
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": _cheat(PLANT.replace("WHERE", PLACES[place]))})
    assert plain_pytest(repo) == 0  # the bug: every price compares equal, and plain pytest is green
    got = repo.hook(check.main, *REPLAY, "HEAD")
    # Judged against the change (docs/ground.md), never "nothing was judged" (exit 2), which a CI may pass.
    assert got.code == 1 and finding_codes(got.out) == ["OG921"], got
    assert "wrote outside its own scratch tree" in got.out and "conftest.py" in got.out


@pytest.mark.slow
def test_new_code_that_writes_into_the_base_flip_runs_tree_is_refused(repo: Repo) -> None:
    """With two processes at once the base's flip run has a tree of its own beside the base's: noted too."""
    where = '_os.path.dirname(_here), "base-flips", "conftest.py"'
    plant = PLANT.replace(
        "and _os.path.isdir(_base)", 'and _os.path.isdir(_os.path.join(_os.path.dirname(_here), "base-flips"))'
    )
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": _cheat(plant.replace("WHERE", where))})
    assert plain_pytest(repo) == 0
    got = repo.hook(replay_hook.main, "--jobs", "2", "--base", "HEAD")  # two at once, whatever the load
    assert got.code == 1 and finding_codes(got.out) == ["OG921"], got
    assert "base-flips/conftest.py" in got.out and "wrote outside its own scratch tree" in got.out


@pytest.mark.slow
def test_a_process_the_new_code_leaves_behind_is_killed_before_the_base_runs_again(repo: Repo, tmp_path: Path) -> None:
    pidfile = tmp_path / "left.pid"
    cheat = _cheat(LEAVE_BEHIND.replace("PIDFILE", repr(str(pidfile))))
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": cheat})
    got = repo.hook(check.main, *REPLAY, "HEAD")
    # Killed before it wrote: the flip run convicts; or caught writing: OG921.  Never a pass, never exit 2.
    assert got.code == 1 and ("OG911" in got.codes or finding_codes(got.out) == ["OG921"]), got
    left = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(left):
        time.sleep(0.05)
    assert not _alive(left)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


@pytest.mark.slow
def test_an_honest_change_whose_tests_write_in_their_own_tree_and_tmp_passes(repo: Repo) -> None:
    writes = (
        "\n\ndef test_writes_files(tmp_path):\n"
        '    open("out.txt", "w").write("x")\n'
        '    (tmp_path / "a").write_text("y")\n'
        '    assert open("out.txt").read() == "x"\n'
    )
    repo.change(
        {**BASE, "tests/test_io.py": writes},
        {**TOUCHED, "src/shop/__init__.py": HONEST["refactor"]},
    )
    got = repo.hook(check.main, *REPLAY, "HEAD")
    assert (got.code, got.out) == (0, ""), got


# -- the barrier itself, on folders that stand for the trees ---------------------------------------------


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    root = tmp_path / "scratch"
    paths = {
        "root": root,
        "base": root / "base",
        "new": root / "new",
        "work": root / "logs-1",
        "site": tmp_path / "site-packages",
    }
    for folder in paths.values():
        folder.mkdir(parents=True)
    (paths["base"] / "tests").mkdir()
    (paths["base"] / "tests" / "test_a.py").write_text("def test_a():\n    assert 1\n")
    (paths["work"] / "plugin").mkdir()
    (paths["work"] / "plugin" / "_oracle_guard_replay.py").write_text("# the plugin\n")
    (paths["site"] / "lib.py").write_text("VALUE = 1\n")
    (paths["site"] / "__pycache__").mkdir()
    return paths


def _barrier(layout: dict[str, Path]) -> barrier.Barrier:
    wall = barrier.Barrier(str(layout["base"]), str(layout["root"]), str(layout["work"]))
    report = layout["work"] / "imports-run-base.json"
    lib = str(layout["site"] / "lib.py")
    report.write_text(f'{{"files": ["{lib}"], "path": ["{layout["site"]}"]}}')
    wall.read_report(str(report))
    return wall


def _same_size_and_mtime(path: Path, text: str) -> None:
    before = path.stat()
    assert len(text) == before.st_size
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # only ctime tells


TAMPERING = {
    "a conftest.py added to the base tree": lambda p: (p["base"] / "conftest.py").write_text("x = 1\n"),
    "a base test rewritten, size and mtime kept": lambda p: _same_size_and_mtime(
        p["base"] / "tests" / "test_a.py", "def test_a():\n    assert 0\n"
    ),
    "a base test removed": lambda p: (p["base"] / "tests" / "test_a.py").unlink(),
    "a pytest.ini beside the trees": lambda p: (p["root"] / "pytest.ini").write_text("[pytest]\n"),
    "a conftest.py above the trees": lambda p: (p["root"].parent / "conftest.py").write_text("x = 1\n"),
    "the replay plugin's copy edited": lambda p: (p["work"] / "plugin" / "_oracle_guard_replay.py").write_text("#\n"),
    "a .pth added to the interpreter's path": lambda p: (p["site"] / "evil.pth").write_text("import os\n"),
    "a module the base imported edited": lambda p: (p["site"] / "lib.py").write_text("VALUE = 2\n"),
    "bytecode planted for a module the base imported": lambda p: (
        (p["site"] / "__pycache__")
        .joinpath(Path(__import__("importlib.util").util.cache_from_source(str(p["site"] / "lib.py"))).name)
        .write_bytes(b"\0" * 16)
    ),
}


@pytest.mark.parametrize("tamper", list(TAMPERING))
def test_a_write_where_the_base_reads_is_a_breach(layout: dict[str, Path], tamper: str) -> None:
    wall = _barrier(layout)
    wall.before("new")
    TAMPERING[tamper](layout)
    with pytest.raises(barrier.Breach, match="while the new code ran, .* changed") as caught:
        wall.after("new")
    assert caught.value.paths  # what changed, for the finding (OG921)


def test_what_an_honest_run_writes_is_no_finding(layout: dict[str, Path]) -> None:
    wall = _barrier(layout)
    wall.before("new")
    wall.before("new")  # the new side's main and flip runs at once
    (layout["new"] / "out.txt").write_text("its own tree\n")
    (layout["work"] / "run-new.log").write_text("its log\n")
    (layout["work"] / "canary-run-new").mkdir()
    (layout["site"] / "__pycache__" / "other.cpython-311.pyc").write_bytes(b"\0")  # bytecode of another module
    wall.after("new")
    wall.after("new")
    wall.before("base")  # a base run after the phase is allowed
    (layout["base"] / "tests" / "__pycache__").mkdir()  # and writes its own bytecode
    wall.after("base")
    wall.before("new")
    wall.after("new")


def _root_on_path(layout: dict[str, Path]) -> barrier.Barrier:
    """A base run whose sys.path held the scratch folder itself (inflection's and semver's doctest-collected
    docs/conf.py puts the tree's parent first)."""
    wall = _barrier(layout)
    report = layout["work"] / "imports-run-base-2.json"
    report.write_text(f'{{"files": [], "path": ["{layout["root"]}"]}}')
    wall.read_report(str(report))
    assert str(layout["root"]) in wall.path
    return wall


def test_the_scratch_folder_on_the_bases_path_does_not_make_the_new_runs_own_writes_a_breach(
    layout: dict[str, Path],
) -> None:
    wall = _root_on_path(layout)
    wall.before("new")
    (layout["new"] / "out.txt").write_text("its own tree\n")  # the new tree's folder times move
    (layout["work"] / "run-new.log").write_text("its log\n")  # and the work folder's
    wall.after("new")


@pytest.mark.parametrize("planted", ["shop.py", "conftest.py"])
def test_a_module_planted_in_the_scratch_folder_on_the_bases_path_is_a_breach(
    layout: dict[str, Path], planted: str
) -> None:
    wall = _root_on_path(layout)
    wall.before("new")
    (layout["root"] / planted).write_text("x = 1\n")  # the base's next run imports it first
    with pytest.raises(barrier.Breach) as caught:
        wall.after("new")
    assert caught.value.paths == [planted]


def test_the_base_side_never_runs_beside_the_new_code(layout: dict[str, Path]) -> None:
    wall = _barrier(layout)
    wall.before("new")
    with pytest.raises(RuntimeError):
        wall.before("base")
    wall.after("new")
    wall.before("base")
    with pytest.raises(RuntimeError):
        wall.before("new")


def test_an_orphan_of_the_new_side_is_killed_when_its_phase_ends(layout: dict[str, Path], tmp_path: Path) -> None:
    wall = _barrier(layout)
    assert wall.reaps
    pidfile = tmp_path / "orphan.pid"
    script = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        f"    open({str(pidfile)!r} + '.tmp', 'w').write(str(os.getpid()))\n"
        f"    os.rename({str(pidfile)!r} + '.tmp', {str(pidfile)!r})\n"  # whole, or not there yet
        "    time.sleep(60)\n"
        "os._exit(0)\n"
    )
    wall.before("new")
    subprocess.run([sys.executable, "-c", script], check=True)  # its child outlives it, in a session of its own
    deadline = time.monotonic() + 5
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    orphan = int(pidfile.read_text())
    assert _alive(orphan)
    wall.after("new")
    assert not _alive(orphan)


# -- the mutation check (--mutate): the new tests are the change's code there --------------------------------

PLANT_FROM_A_TEST = """
import os as _os

_base = _os.path.join(_os.path.dirname(_os.getcwd()), "base")
if _os.path.basename(_os.getcwd()) == "new" and _os.path.isdir(_base):
    with open(_os.path.join(_base, "conftest.py"), "w") as _f:
        _f.write("import pytest\\n")
"""
STOP_THE_BASE = """
import os as _os
import signal as _signal

for _pid in [p for p in _os.listdir("/proc") if p.isdigit()]:
    try:
        with open(f"/proc/{_pid}/cmdline", "rb") as _f:
            _command = _f.read()
    except OSError:
        continue
    if b"base.job.json" in _command:
        _os.kill(int(_pid), _signal.SIGKILL)
"""


def _weakened(extra: str) -> tuple[str, dict[str, str | None]]:
    before, after = UNKNOWN_TO_STATIC["a loop that checks one element"]
    return before, {T: module(after) + extra}


@pytest.mark.slow
def test_a_new_test_that_writes_where_the_base_reads_stops_the_mutation_check(repo: Repo) -> None:
    before, after = _weakened(PLANT_FROM_A_TEST)
    got = mutate(repo, before, after)
    assert plain_pytest(repo) == 0  # the weakened tests pass
    assert got.code == 1 and finding_codes(got.out) == ["OG921"] and "wrote outside its own scratch tree" in got.out, (
        got.said
    )


@pytest.mark.slow
def test_a_new_test_cannot_stop_the_base_side_of_the_mutation_check(repo: Repo) -> None:
    """The base's server has ended before the new tests start: there is nothing of the base's to stop."""
    before, after = _weakened(STOP_THE_BASE)
    got = mutate(repo, before, after)
    assert plain_pytest(repo) == 0
    assert got.code == 1 and "OG910" in got.codes, got.said


# A conftest that puts the tree's parent first on sys.path, as a doctest-collected docs/conf.py does
# (`sys.path.insert(0, os.path.abspath(".."))`): the base's runs then read the scratch folder itself.
PARENT_FIRST = (
    "import os\nimport sys\n\nsys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))\n"
)


@pytest.mark.slow
def test_an_honest_change_passes_when_the_bases_conftest_puts_the_trees_parent_on_the_path(repo: Repo) -> None:
    base = {**BASE, "conftest.py": PARENT_FIRST}
    repo.change(base, {**TOUCHED, "src/shop/__init__.py": HONEST["refactor"]})
    got = repo.hook(check.main, *REPLAY, "HEAD")
    assert (got.code, got.out) == (0, ""), got  # was OG921: "new changed" (its own tree's folder times)


@pytest.mark.slow
def test_a_conftest_planted_beside_the_trees_is_refused_when_the_base_reads_the_trees_parent(repo: Repo) -> None:
    base = {**BASE, "conftest.py": PARENT_FIRST}
    cheat = _cheat(PLANT.replace("WHERE", PLACES["a conftest.py beside the trees"]))
    repo.change(base, {**TOUCHED, "src/shop/__init__.py": cheat})
    assert plain_pytest(repo) == 0
    got = repo.hook(check.main, *REPLAY, "HEAD")
    assert got.code == 1 and finding_codes(got.out) == ["OG921"], got
    assert "conftest.py" in got.out
