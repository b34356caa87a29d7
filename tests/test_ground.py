"""The ground the gate stands on (docs/ground.md): its interpreter, its environment, and what the change's code does
to the gate's own runs.

Each attack here either chose the gate's interpreter, planted state before the gate ran, or acted only under the
gate (a hang, an error in the scratch trees); each was let through or left "not judged" (exit 2) before, and is a
finding now.  The honest twins beside them pass.  The tests of leftover processes hold on Linux (they read
/proc), as CI runs them.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oracle_guard.commands import check
from oracle_guard.hook_ids import collection_snapshot
from oracle_guard.hook_ids import replay as replay_hook
from oracle_guard.probes.neighbours import recorded
from oracle_guard.pytest_side import barrier, environment
from oracle_guard.repo import interpreters
from tests.helpers import Repo, Result, finding_codes, finding_lines, project_python
from tests.test_red_base import DIGITS, IMPLEMENTED, SLUG, edited_tests
from tests.test_red_base import plain_pytest as plain_pytest_in
from tests.test_replay_cache import WARM
from tests.test_replay_flips import ALWAYS_EQUAL, BASE, HONEST, REPLAY, SHOP, TOUCHED, plain_pytest, shop

REAL = sys.executable
# A `python` a change commits: the gate's runs of the new code run in the base's tree beside theirs.
SHIM = f"""#!/bin/sh
base="$(dirname "$PWD")/base"
if [ -d "$base" ]; then cd "$base"; fi
exec {REAL} "$@"
"""
VENV_CFG = f"home = {os.path.dirname(REAL)}\ninclude-system-site-packages = false\n"
BUGGY = shop('return f"${cents / 100:.2f}"', 'return f"${cents / 100:.1f}"')
# The change's own test rewritten to the bug: plain pytest is green.
AGREEING_TESTS = TOUCHED["tests/test_shop.py"].replace('"$1.50"', '"$1.5"')


def _found(got: Result) -> list[str]:
    """The codes of the findings printed, each with its next: line and all of them counted once."""
    return [line.split()[1] for line in finding_lines(got.out)]


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    project_python(monkeypatch, tmp_path / "xdg")


def _venv(repo: Repo, folder: str = ".venv") -> str:
    """A virtualenv in the work tree whose python is SHIM; returns its python."""
    repo.write(f"{folder}/pyvenv.cfg", VENV_CFG)
    python = repo.write(f"{folder}/bin/python", SHIM)
    python.chmod(python.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(python)


def _no_active_venv(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in the README's CI job: no VIRTUAL_ENV, a python3 with pytest first on PATH."""
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.setenv("PATH", os.path.dirname(REAL) + os.pathsep + os.environ.get("PATH", ""))


# -- the interpreter --------------------------------------------------------------------------------------------
def test_an_untracked_venv_in_the_work_tree_is_taken(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.change(BASE, TOUCHED)
    python = _venv(repo)
    _no_active_venv(monkeypatch)
    with repo.cwd():
        found = interpreters.candidate_interpreters(None, dict(os.environ))
    assert found[0] == (python, "./.venv"), found


@pytest.mark.parametrize("folder", [".venv", "venv"])
def test_a_tracked_venv_is_never_taken(repo: Repo, monkeypatch: pytest.MonkeyPatch, folder: str) -> None:
    repo.change(BASE, TOUCHED)
    python = _venv(repo, folder)
    repo.stage()
    _no_active_venv(monkeypatch)
    with repo.cwd():
        found = interpreters.candidate_interpreters(None, dict(os.environ))
    assert found and all(p != python for p, _ in found) and found[0][1] == "PATH", found


def test_a_tracked_python_shim_on_path_is_never_taken(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.change(BASE, TOUCHED)
    shim = repo.write("bin/python3", SHIM)
    shim.chmod(0o755)
    repo.stage()
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.setenv("PATH", os.pathsep.join([str(repo.path / "bin"), os.path.dirname(REAL), os.environ["PATH"]]))
    with repo.cwd():
        found = interpreters.candidate_interpreters(None, dict(os.environ))
    assert [p for p, _ in found] == [os.path.join(os.path.dirname(REAL), "python3")], found


def test_virtual_env_or_python_naming_a_tracked_venv_is_og920(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": BUGGY})
    python = _venv(repo)
    repo.stage()
    monkeypatch.setenv("VIRTUAL_ENV", str(repo.path / ".venv"))
    got = repo.hook(check.main, *REPLAY, "HEAD")
    assert got.code == 1 and _found(got) == ["OG920"], got.said
    assert ".venv is tracked by git" in got.out
    monkeypatch.delenv("VIRTUAL_ENV")
    got = repo.hook(check.main, *REPLAY, "HEAD", "--python", python)
    assert got.code == 1 and _found(got) == ["OG920"], got.said


@pytest.mark.slow
def test_the_collection_hook_with_a_tracked_interpreter_is_og920(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the collection hook (alone and in `oracle-guard hook`) asked for its interpreter directly: a tracked
    VIRTUAL_ENV or --python was one line and exit 2 ("nothing was judged"), not a finding against the change."""
    from oracle_guard.commands import one_hook
    from oracle_guard.hook_ids import collection_snapshot
    from tests.test_collection_snapshot import BASELINE, SNAP, TEST_A, TEST_B, format_snapshot

    repo.write("tests/test_a.py", TEST_A, dedent=False)
    repo.write("tests/test_b.py", TEST_B, dedent=False)
    repo.write(SNAP, format_snapshot(BASELINE))
    repo.commit("baseline")
    repo.write("tests/test_a.py", TEST_A + "\n# touched\n", dedent=False)
    python = _venv(repo)
    repo.stage()
    monkeypatch.setenv("VIRTUAL_ENV", str(repo.path / ".venv"))
    alone = repo.hook(collection_snapshot.main)  # a pre-commit hook's own output: its finding lines alone
    assert alone.code == 1 and alone.codes == ["OG920"] and ".venv is tracked by git" in alone.out, alone.said
    got = repo.hook(one_hook.main, "--only", "collection-snapshot")
    assert got.code == 1 and finding_codes(got.out) == ["OG920"], got.said
    monkeypatch.delenv("VIRTUAL_ENV")
    got = repo.hook(collection_snapshot.main, "--python", python, "--always")
    assert got.code == 1 and got.codes == ["OG920"], got.said
    # The nearest honest change: the same commit judged by an interpreter outside it.
    repo.git("rm", "-r", "-q", "--cached", ".venv")
    repo.write(".gitignore", "/.venv/\n")
    repo.stage()
    for main, argv in ((collection_snapshot.main, ()), (one_hook.main, ("--only", "collection-snapshot"))):
        got = repo.hook(main, *argv, "--python", sys.executable)
        assert got.code == 0 and got.codes == [], got.said


@pytest.mark.parametrize("tracked", [False, True])
def test_a_git_hooks_git_dir_does_not_decide_whether_a_venv_elsewhere_is_tracked(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tracked: bool
) -> None:
    # CI's own layout: the virtualenv inside another checkout (.ci/venv, ignored there), and the gate started from
    # a git hook that sets GIT_DIR to the user's repository.  With GIT_DIR, git took the virtualenv's folder as
    # that repository's work tree and listed its whole index: an ignored venv was "tracked" (OG920 in CI).
    repo.change(BASE, TOUCHED)
    other = Repo(tmp_path / "checkout")
    other.path.mkdir()
    other.git("init", "-q")
    other.write(".gitignore", "" if tracked else "/.ci/venv/\n")
    other.write(".ci/venv/pyvenv.cfg", VENV_CFG)
    python = other.write(".ci/venv/bin/python", SHIM)
    python.chmod(0o755)
    other.stage()
    monkeypatch.setenv("GIT_DIR", str(repo.path / ".git"))
    found = interpreters.committed(str(python))
    assert found == (str(other.path / ".ci" / "venv") if tracked else None), found


@pytest.mark.slow
def test_an_interpreter_the_change_commits_does_not_judge_it(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the committed .venv ran the gate, the new side got the base's code, and the change passed."""
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": BUGGY, "tests/test_shop.py": AGREEING_TESTS})
    _venv(repo)
    repo.stage()
    assert plain_pytest(repo) == 0  # the test rewritten to the bug: green
    _no_active_venv(monkeypatch)
    got = repo.hook(check.main, *REPLAY, "HEAD")
    assert got.code == 1 and "OG901" in got.codes, got.said  # judged in the PATH's python: the bug is seen
    assert "not running" in got.err and ".venv is tracked by git" in got.err


@pytest.mark.slow
def test_an_untracked_venv_judges_the_change_honestly(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's own ./.venv (not in git) is the normal local case: taken, and an honest change passes."""
    repo.change(BASE, TOUCHED)
    os.symlink(sys.prefix, repo.path / ".venv")  # the user's virtualenv (this one: it has pytest), not in git
    _no_active_venv(monkeypatch)
    got = repo.hook(check.main, *REPLAY, "HEAD")
    assert got.code == 0 and got.codes == [], got.said
    assert f"{repo.path / '.venv' / 'bin' / 'python'} (./.venv)" in got.err


# -- the environment ----------------------------------------------------------------------------------------
def _site(tmp_path: Path) -> tuple[str, Path]:
    """A fresh virtualenv (no pip: fast) outside the repository: its python and site-packages."""
    venv = tmp_path / "env"
    subprocess.run([REAL, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    site = Path(environment.site_folders(python)[1][0])
    assert site.is_relative_to(venv), site
    return python, site


def _record(site: Path, dist: str, files: dict[str, bytes]) -> None:
    import base64
    import hashlib

    meta = site / f"{dist}.dist-info"
    meta.mkdir()
    rows = []
    for name, data in files.items():
        (site / name).write_bytes(data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rows.append(f"{name},sha256={digest},{len(data)}")
    (meta / "RECORD").write_text("\n".join([*rows, f"{dist}.dist-info/RECORD,,"]) + "\n")


PLANTED = "import os; os.environ['PLANTED'] = 'yes'\n"


@pytest.mark.parametrize("name", ["planted.pth", "sitecustomize.py", "usercustomize.py"])
def test_a_start_up_file_no_distribution_installed_is_og925(tmp_path: Path, name: str) -> None:
    python, site = _site(tmp_path)
    (site / name).write_text(PLANTED)
    if name == "planted.pth":  # it runs at every start of the interpreter, the gate's pytest included
        shown = subprocess.run([python, "-c", "import os; print(os.environ.get('PLANTED'))"], capture_output=True)
        assert shown.stdout.strip() == b"yes"
    found = environment.check(python, str(tmp_path / "repo"))
    assert [f.code for f in found] == ["OG925"] and name in found[0].message, found


def test_a_start_up_file_a_distribution_installed_passes(tmp_path: Path) -> None:
    python, site = _site(tmp_path)
    _record(site, "honest-1.0", {"honest.pth": b"import os\n", "sitecustomize.py": b"X = 1\n"})
    assert environment.check(python, str(tmp_path / "repo")) == []


def test_an_installed_file_changed_after_the_install_is_og924(tmp_path: Path) -> None:
    python, site = _site(tmp_path)
    _record(site, "lib-1.0", {"lib.py": b"def f():\n    return 1\n"})
    assert environment.check(python, str(tmp_path / "repo")) == []  # as installed
    (site / "lib.py").write_bytes(b"def f():\n    return 2\n")
    found = environment.check(python, str(tmp_path / "repo"))
    assert [f.code for f in found] == ["OG924"] and "lib.py of the installed distribution lib-1.0" in found[0].message


def test_a_planted_environment_stops_the_gate_before_it_runs(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python, site = _site(tmp_path)
    (site / "planted.pth").write_text(PLANTED)
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": ALWAYS_EQUAL})
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "env"))
    got = repo.hook(check.main, *REPLAY, "HEAD")
    assert got.code == 1 and _found(got) == ["OG925"], got.said


DETACHED = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open(sys.argv[1] + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.rename(sys.argv[1] + ".tmp", sys.argv[1])
        time.sleep(120)
    os._exit(0)
"""


def _detached(repo: Repo, pidfile: Path) -> int:
    subprocess.run([REAL, "-c", DETACHED, str(pidfile)], cwd=repo.path, check=True)
    deadline = time.monotonic() + 10
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return int(pidfile.read_text())


def test_a_process_left_detached_in_the_work_tree_is_og926(repo: Repo, tmp_path: Path) -> None:
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": ALWAYS_EQUAL})
    pid = _detached(repo, tmp_path / "left.pid")
    try:
        got = repo.hook(check.main, *REPLAY, "HEAD")
        assert got.code == 1 and _found(got) == ["OG926"], got.said
        assert f"process {pid} is still running, detached, and runs in {repo.path}" in got.out
    finally:
        os.kill(pid, signal.SIGKILL)


def test_a_process_still_attached_to_its_parent_is_not_left_behind(repo: Repo, tmp_path: Path) -> None:
    """A server the user runs from a shell in the work tree is that shell's child: not left behind."""
    child = subprocess.Popen([REAL, "-c", "import time; time.sleep(60)"], cwd=repo.path)
    try:
        assert child.pid not in [pid for pid, _ in environment.leftovers([str(repo.path)])]
    finally:
        child.kill()
        child.wait()


# -- what the change's code does under the gate -------------------------------------------------------------
UNDER_THE_GATE = "import os as _os\n_GATE = _os.path.isdir(_os.path.join(_os.path.dirname(_os.getcwd()), 'base'))\n"
HANGS = UNDER_THE_GATE + ALWAYS_EQUAL.replace(
    "def price(cents):\n", "def price(cents):\n    if _GATE:\n        import time\n        time.sleep(3600)\n"
)
SLOWER = UNDER_THE_GATE + SHOP.replace(
    "def price(cents):\n", "def price(cents):\n    if _GATE:\n        import time\n        time.sleep(0.02)\n"
)


@pytest.fixture
def short_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(barrier, "HANG_FLOOR", 30.0)
    monkeypatch.setattr(barrier, "HANG_FACTOR", 5.0)


@pytest.mark.slow
@pytest.mark.usefixtures("short_limit")
def test_new_code_that_hangs_only_under_the_gate_is_og922(repo: Repo) -> None:
    """Before: the replay ran into --timeout, exit 2 ("nothing was judged"); a CI reading that as neutral passed it."""
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": HANGS})
    assert plain_pytest(repo) == 0  # every price compares equal, and nothing waits outside the gate
    started = time.monotonic()
    got = repo.hook(check.main, *REPLAY, "HEAD")
    assert got.code == 1 and _found(got) == ["OG922"], got.said
    assert "tests/test_shop.py::test_price" in got.out and time.monotonic() - started < 120


@pytest.mark.slow
@pytest.mark.usefixtures("short_limit")
def test_new_code_a_little_slower_under_the_gate_passes(repo: Repo) -> None:
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": SLOWER})
    got = repo.hook(check.main, *REPLAY, "HEAD")
    assert got.code == 0 and got.codes == [], got.said


def _warm(repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A replay of an honest change on BASE, which leaves the base side's entry in the cache; its path."""
    monkeypatch.setenv("ORACLE_GUARD_CACHE", str(tmp_path / "og-cache"))
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": HONEST["refactor"]})
    cold = repo.hook(check.main, *REPLAY, "HEAD")
    assert cold.code == 0 and WARM not in cold.err, cold.said
    found = [p for p in (tmp_path / "og-cache" / "replay").glob("*.json") if "probe" not in p.read_text()]
    assert len(found) == 1 and json.loads(found[0].read_text())["seconds"] > 0, found
    return found[0]


def _claim(entry: Path, seconds: float) -> None:
    data = json.loads(entry.read_text())
    data["seconds"] = seconds
    entry.write_text(json.dumps(data))


@pytest.mark.slow
@pytest.mark.usefixtures("short_limit")
def test_new_code_that_hangs_under_the_gate_with_a_warm_cache_is_og922(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Before: warm, the base side only collected, no base time was measured, and the hang ran into --timeout:
    exit 2.  The entry keeps the cold base run's time; the hang is held to it, and checked against the base."""
    _warm(repo, monkeypatch, tmp_path)
    repo.write("src/shop/__init__.py", HANGS)
    repo.stage()
    assert plain_pytest(repo) == 0  # every price compares equal, and nothing waits outside the gate
    started = time.monotonic()
    got = repo.hook(replay_hook.main, "--base", "HEAD", "--timeout", "200")
    assert got.code == 1 and finding_codes(got.out) == ["OG922"], got.said
    assert "tests/test_shop.py::test_price" in got.out and time.monotonic() - started < 150


@pytest.mark.slow
@pytest.mark.usefixtures("short_limit")
def test_new_code_a_little_slower_with_a_warm_cache_passes_from_the_cache(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _warm(repo, monkeypatch, tmp_path)
    repo.write("src/shop/__init__.py", SLOWER)
    repo.stage()
    got = repo.hook(check.main, *REPLAY, "HEAD")
    assert got.code == 0 and got.codes == [] and WARM in got.err, got.said


# A red base's test made to pass by code that hangs while a tracer watches it: the suspects' first pass is
# traced (probes/suspects/plugin.py), and ran into --timeout (exit 2) with no limit of its own.
RED_BASE = {
    "calc.py": "def double(x):\n    return x + x + 1  # the bug\n",
    "tests/test_calc.py": "from calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
    "pytest.ini": "[pytest]\npythonpath = .\n",
}
WATCHED = (
    "import sys\n\n\ndef double(x):\n    if sys.gettrace() is not None:\n        import time\n\n{}\n    return x + x\n"
)


@pytest.mark.slow
@pytest.mark.usefixtures("short_limit")
@pytest.mark.parametrize("wait", [3600, 0.05], ids=["hangs", "slower"])
def test_new_code_that_hangs_only_while_traced_is_og922_in_the_suspects_run(repo: Repo, wait: float) -> None:
    repo.change(RED_BASE, {"calc.py": WATCHED.format(f"        time.sleep({wait})")})
    assert plain_pytest(repo) == 0  # the test passes: nothing traces a plain run
    started = time.monotonic()
    got = repo.hook(check.main, "-q", "--replay", "--only", "oracle-replay", "--base", "HEAD")
    if wait < 1:  # honest and a little slower while traced: within the limit
        assert got.code == 0 and got.codes == [], got.said
        return
    assert got.code == 1 and _found(got) == ["OG922"], got.said
    assert "tests/test_calc.py::test_double" in got.out and time.monotonic() - started < 150


# Honest, and seconds slower under the gate than the base: within any limit the base's real time sets.
SLEEPS = UNDER_THE_GATE + "if _GATE:\n    import time as _time\n\n    _time.sleep(4)\n" + HONEST["refactor"]


@pytest.mark.slow
@pytest.mark.parametrize("claim", [0.0, 1e9], ids=["too-short", "too-long"])
def test_a_forged_base_time_neither_convicts_an_honest_change_nor_hides_a_hang(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, claim: float
) -> None:
    """An entry is a claim: the change's code can write it where runs are unconfined, or before the gate.  Too
    short, it stops an honest run early: the base then runs whole, and the new side again, held to the real
    limit.  Too long, it would push a hang into --timeout (exit 2): it is cut to end by half the time left."""
    monkeypatch.setattr(barrier, "HANG_FLOOR", 3.0)
    monkeypatch.setattr(barrier, "HANG_FACTOR", 5.0)
    entry = _warm(repo, monkeypatch, tmp_path)
    _claim(entry, claim)
    repo.write("src/shop/__init__.py", SLEEPS if claim == 0.0 else HANGS)
    repo.stage()
    got = repo.hook(replay_hook.main, "--base", "HEAD", "--timeout", "60")
    if claim == 0.0:
        assert got.code == 0 and got.codes == [], got.said
        assert "ran past the 3 s the cache's base time allowed" in got.err, got.err
    else:
        assert plain_pytest(repo) == 0
        assert got.code == 1 and finding_codes(got.out) == ["OG922"], got.said
    assert json.loads(entry.read_text())["seconds"] not in (0.0, 1e9)  # the base's real time, written again


# A cheat the flip run catches (OG911), which hangs only under the flip plugin: it would stop the probe that
# convicts it. The runs' argv no longer names the flips' results file (they start as `python -m pytest`), so it
# looks for the flip plugin's rewriter among the modules loaded, at call time.
UNDER_THE_FLIPS = (
    "import sys as _sys\n\n\n"
    "def _flips():\n"
    "    files = (str(getattr(_m, '__file__', None) or '') for _m in list(_sys.modules.values()))\n"
    "    return any(_f.replace('\\\\', '/').endswith('flips/rewrite.py') for _f in files)\n\n\n"
)
HANGS_UNDER_THE_FLIPS = UNDER_THE_FLIPS + ALWAYS_EQUAL.replace(
    "def price(cents):\n", "def price(cents):\n    if _flips():\n        import time\n        time.sleep(3600)\n"
)
SLOWER_UNDER_THE_FLIPS = UNDER_THE_FLIPS + HONEST["refactor"].replace(
    "def price(cents):\n", "def price(cents):\n    if _flips():\n        import time\n        time.sleep(0.02)\n"
)


def _flips_entry_stands(monkeypatch: pytest.MonkeyPatch) -> None:
    """The flips entry stands in for the base side only when the base's run has no calls to record: a change
    whose Python code is the base's (data the code reads, say; probes/neighbours/recorded.py).  As in
    tests/test_flips_cache.py, the recording is switched off to reach that path with a change of code."""
    monkeypatch.setattr(recorded, "RECORD", False)


@pytest.mark.slow
@pytest.mark.usefixtures("short_limit")
def test_new_code_that_hangs_only_under_the_flip_plugin_with_a_warm_flips_entry_is_og922(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Before: with the flip run's base side from the cache, its new side ran alone with no limit, and a hang only
    under the flip plugin ran into --timeout: exit 2, and the always-equal cheat the flips convict was not judged.
    The flips entry keeps the base flip run's time; the hang is held to it, and checked against a whole base run."""
    _flips_entry_stands(monkeypatch)
    _warm(repo, monkeypatch, tmp_path)
    flips = [
        p
        for p in (tmp_path / "og-cache" / "replay").glob("*.json")
        if json.loads(p.read_text()).get("probe") == "flips"
    ]
    assert len(flips) == 1 and json.loads(flips[0].read_text())["seconds"] > 0, flips
    repo.write("src/shop/__init__.py", HANGS_UNDER_THE_FLIPS)
    repo.stage()
    assert plain_pytest(repo) == 0  # every price compares equal, and nothing waits outside the flip run
    started = time.monotonic()
    # One job: the flip run starts after the main run, from the entry (two start beside it: the main run's limit).
    got = repo.hook(replay_hook.main, "--base", "HEAD", "--timeout", "300", "--jobs", "1")
    assert got.code == 1 and finding_codes(got.out) == ["OG922"], got.said
    assert "flip run's base side from the cache" not in got.err and time.monotonic() - started < 250


@pytest.mark.slow
@pytest.mark.usefixtures("short_limit")
def test_new_code_a_little_slower_under_the_flip_plugin_passes_from_the_flips_entry(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _flips_entry_stands(monkeypatch)
    _warm(repo, monkeypatch, tmp_path)
    repo.write("src/shop/__init__.py", SLOWER_UNDER_THE_FLIPS)
    repo.stage()
    got = repo.hook(replay_hook.main, "--base", "HEAD", "--timeout", "300", "--jobs", "1")
    assert got.code == 0 and got.codes == [], got.said
    assert "flip run's base side from the cache" in got.err, got.err


# A module of the change named like one pytest needs: outside the gate it hands over the real pluggy (plain
# pytest is green), under the gate it fails, so pytest cannot start in the new code's tree.
SHADOW = (
    UNDER_THE_GATE
    + """\
import importlib
import sys

if _GATE:
    raise ImportError("pluggy is not available here")
_here = _os.path.dirname(_os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if _os.path.abspath(p or ".") != _here]
del sys.modules[__name__]
sys.modules[__name__] = importlib.import_module(__name__)
"""
)


@pytest.mark.slow
@pytest.mark.parametrize("shadow", [True, False], ids=["shadows-pluggy-under-the-gate", "an-unrelated-module"])
def test_a_module_of_the_change_that_stops_pytest_only_in_the_new_tree_is_judged(repo: Repo, shadow: bool) -> None:
    """Before: pytest imported in the base's tree and not in the new code's, and the replay took that for an
    interpreter without pytest: exit 2, "nothing was judged", and the always-equal cheat beside it went through.
    The base side decides whether the interpreter has pytest; the new side that cannot start is OG904."""
    name = "pluggy.py" if shadow else "helpers_of_mine.py"
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": ALWAYS_EQUAL if shadow else HONEST["refactor"], name: SHADOW})
    assert plain_pytest(repo) == 0  # the real pluggy outside the gate: plain pytest is green, the bug kept
    got = repo.hook(check.main, *REPLAY, "HEAD")
    if shadow:
        assert got.code == 1 and finding_codes(got.out) == ["OG904"], got.said
        assert "pluggy is not available here" in got.out
    else:
        assert got.code == 0 and got.codes == [], got.said


# The same module, failing only in a collection (the collection hook's run of the work tree): plain pytest
# is green, and `check` without the replay stopped in exit 2 ("no pytest") with the change unjudged.
SHADOW_IN_A_COLLECTION = SHADOW.replace("if _GATE:", 'if "--collect-only" in sys.argv:')


@pytest.mark.slow
@pytest.mark.parametrize("shadow", [True, False], ids=["shadows-pluggy-in-a-collection", "an-unrelated-module"])
def test_a_module_of_the_change_that_stops_pytest_in_the_collection_is_og804(repo: Repo, shadow: bool) -> None:
    """The base, collected with the same interpreter, shows it has pytest: the work tree's stop is the change's."""
    name = "pluggy.py" if shadow else "helpers_of_mine.py"
    extra = "from shop import price\n\n\ndef test_two_fifty():\n    assert price(250) == '$2.50'\n"
    after = {**TOUCHED, "tests/test_extra.py": extra, name: SHADOW_IN_A_COLLECTION}  # a new test: it collects
    for path, text in BASE.items():
        repo.write(path, text)
    repo.stage()
    assert repo.hook(collection_snapshot.main, "--python", sys.executable, "--always").code == 1  # recorded
    repo.change({}, after)  # the base commits its snapshot: check collects the change against it
    assert plain_pytest(repo) == 0  # the real pluggy outside a collection: plain pytest is green
    got = repo.hook(check.main, "--base", "HEAD", "--python", sys.executable)
    if shadow:
        assert got.code == 1 and "OG804" in finding_codes(got.out), got.said  # OG969 too: a computed import
        assert "pytest does not start in the change's tree" in got.out and "error:" not in got.err, got.said
    else:
        assert "OG804" not in finding_codes(got.out) and "error:" not in got.err, got.said


# Under the gate, the first run of the new code ends its own pytest process (the run is broken, so the gate
# runs it again) and the second hangs: a marker in its own tree tells them apart.
EXITS_THEN_HANGS = UNDER_THE_GATE + ALWAYS_EQUAL.replace(
    "def price(cents):\n",
    "def price(cents):\n"
    "    if _GATE:\n"
    "        import time\n"
    "\n"
    "        _marker = _os.path.join(_os.getcwd(), '.ran-once')\n"
    "        if _os.path.exists(_marker):\n"
    "            time.sleep(3600)\n"
    "        open(_marker, 'w').close()\n"
    "        _os._exit(0)\n",
)
EXITS_ONCE = EXITS_THEN_HANGS.replace("time.sleep(3600)", "return _Text(f'${cents // 100}')")


@pytest.mark.slow
@pytest.mark.usefixtures("short_limit")
@pytest.mark.parametrize("second", ["hangs", "runs"])
def test_new_code_that_breaks_its_run_then_hangs_in_the_second_is_og922(repo: Repo, second: str) -> None:
    """Before: the second run of the new code (after a broken first) had no limit but --timeout: exit 2, and the
    always-equal cheat was never judged.  It is held to the main run's measured base time now: OG922.  Its twin,
    whose second run completes, is no hang: that run stands in for the first ("a flaky run"), and the flips judge
    the cheat in it (OG911).  The honest change a little slower in every run under the gate passes (above)."""
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": EXITS_THEN_HANGS if second == "hangs" else EXITS_ONCE})
    assert plain_pytest(repo) == 0  # every price compares equal, and nothing exits or waits outside the gate
    started = time.monotonic()
    # One job: the flip run starts after the main run, in the tree its first run marked (with two, an early flip
    # run in a tree of its own exits at its first call too: OG913, refused as well, but not the path shown here).
    got = repo.hook(replay_hook.main, "--base", "HEAD", "--timeout", "150", "--jobs", "1")
    if second == "hangs":
        assert got.code == 1 and finding_codes(got.out) == ["OG922"], got.said
        assert time.monotonic() - started < 140
    else:
        assert got.code == 1 and finding_codes(got.out) == ["OG911"], got.said
        assert "flaky run on the new code" in got.err


BREAKS_UNDER_THE_GATE = UNDER_THE_GATE + "if _GATE:\n    raise RuntimeError('not in a scratch tree')\n"
REWRITTEN = edited_tests(DIGITS, '    assert slugify("Room 101").startswith("room")\n')


@pytest.mark.slow
def test_the_changes_own_tests_that_break_only_in_the_gates_tree_are_og923(repo: Repo) -> None:
    """Before: the change's rewritten failing test never ran in the gate: "still red", a notice, exit 0."""
    after = {"slug.py": IMPLEMENTED, "tests/test_slug.py": REWRITTEN, "tests/conftest.py": BREAKS_UNDER_THE_GATE}
    repo.change(SLUG, after)
    assert plain_pytest_in(repo.path) == 0  # the failing test rewritten, green in the work tree
    got = repo.hook(check.main, "--replay", "--only", "oracle-replay", "--base", "HEAD")
    assert got.code == 1 and _found(got) == ["OG923"], got.said
    assert "not in a scratch tree" in got.out or "pytest exited" in got.out


HANGS_UNDER_THE_GATE = UNDER_THE_GATE + "if _GATE:\n    import time\n\n    time.sleep(3600)\n"


@pytest.mark.slow
@pytest.mark.usefixtures("short_limit")
def test_the_changes_own_tests_that_hang_only_in_the_gates_tree_are_og922(repo: Repo) -> None:
    """Before: the run of the change's own (rewritten) red test had no limit but --timeout: exit 2, nothing
    judged. It is held to the main run's measured base time now, as the new code's other runs: OG922."""
    after = {"slug.py": IMPLEMENTED, "tests/test_slug.py": REWRITTEN, "tests/conftest.py": HANGS_UNDER_THE_GATE}
    repo.change(SLUG, after)
    assert plain_pytest_in(repo.path) == 0  # the failing test rewritten, green in the work tree, no wait there
    started = time.monotonic()
    got = repo.hook(replay_hook.main, "--base", "HEAD", "--timeout", "150")
    assert got.code == 1 and finding_codes(got.out) == ["OG922"], got.said
    assert time.monotonic() - started < 140


@pytest.mark.slow
def test_the_changes_own_tests_that_run_in_the_gates_tree_are_judged_as_usual(repo: Repo) -> None:
    after = {
        "slug.py": IMPLEMENTED,
        "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef word():\n    return 'a'\n",
    }
    repo.change(SLUG, after)
    got = repo.hook(check.main, "--replay", "--only", "oracle-replay", "--base", "HEAD")
    assert got.code == 0 and got.codes == [], got.said
    assert "still fail against the new code" in got.err


HONEST_SUITE = """\
import http.server
import os
import subprocess
import sys
import threading
import urllib.request

from shop import price


def test_tmp_path_and_a_reaped_subprocess(tmp_path):
    (tmp_path / "out.txt").write_text(price(150))
    done = subprocess.run([sys.executable, "-c", "print('ok')"], capture_output=True, text=True)
    assert done.stdout.strip() == "ok" and (tmp_path / "out.txt").read_text() == "$1.50"


def test_its_own_folder():
    here = os.path.join(os.path.dirname(__file__), "written.txt")
    with open(here, "w") as f:
        f.write(price(150))
    with open(here) as f:
        assert f.read() == "$1.50"


def test_a_server_on_localhost():
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(price(150).encode())

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.server_port}/") as answer:
            assert answer.read() == b"$1.50"
    finally:
        server.shutdown()
        server.server_close()
"""


@pytest.mark.slow
def test_an_honest_suite_that_writes_spawns_and_serves_passes(repo: Repo) -> None:
    """Writes in tmp_path and its own folder, a subprocess it reaps, a server on localhost: no finding."""
    refactored = SHOP.replace('return f"${cents / 100:.2f}"', 'dollars = cents / 100\n    return f"${dollars:.2f}"')
    repo.change(
        {**BASE, "tests/test_honest.py": HONEST_SUITE},
        {**TOUCHED, "src/shop/__init__.py": refactored, "tests/test_honest.py": HONEST_SUITE + "\n# touched\n"},
    )
    got = repo.hook(check.main, *REPLAY, "HEAD")
    assert got.code == 0 and got.codes == [], got.said


def _wall(tmp_path: Path) -> barrier.Barrier:
    for name in ("base", "new", "work"):
        (tmp_path / "scratch" / name).mkdir(parents=True)
    scratch = tmp_path / "scratch"
    return barrier.Barrier(str(scratch / "base"), str(scratch), str(scratch / "work"))


def test_the_limit_of_the_new_codes_run_is_relative_to_the_same_plans_base_run(tmp_path: Path) -> None:
    wall = _wall(tmp_path)
    with barrier.guarding(wall):
        barrier.in_turn(["base", "new"])
    wall.before("base")
    wall.timed("base", 2.0)
    wall.after("base")
    wall.before("new")
    assert wall.limit() == barrier.HANG_FLOOR + barrier.HANG_FACTOR * 2.0
    wall.after("new")
    with barrier.guarding(wall):
        barrier.in_turn(["new"])  # a run of the new code alone (the doctests, a second run): no base run measures it
    wall.before("new")
    assert wall.limit() is None
    wall.after("new")
    wall.plan(["base", "new"])
    wall.before("base")
    wall.timed("base", None)  # the warm cache's base side: a collection only
    wall.after("base")
    wall.before("new")
    assert wall.limit() is None  # the --timeout budget alone
    wall.after("new")
    wall.plan(["base", "new"], claimed=3.0)  # the warm cache: the entry's base time stands in for the collection
    wall.before("base")
    wall.timed("base", None)
    wall.after("base")
    wall.before("new")
    assert wall.limit() == barrier.HANG_FLOOR + barrier.HANG_FACTOR * 3.0 and wall.phase_claimed
    wall.after("new")
    wall.plan(["base", "new"], claimed=3.0)  # a base side that ran the tests is the measure, never the claim
    wall.before("base")
    wall.timed("base", 1.0)
    wall.after("base")
    wall.before("new")
    assert wall.limit() == barrier.HANG_FLOOR + barrier.HANG_FACTOR * 1.0 and not wall.phase_claimed
    assert wall.measured() == 1.0
    wall.after("new")


@pytest.mark.slow
@pytest.mark.usefixtures("short_limit")
def test_new_tests_that_hang_only_under_the_mutation_check_are_og922(repo: Repo) -> None:
    """Before: the new side ran out of --mutate-timeout, exit 2 ("ran out of its time budget")."""
    from tests.test_mutation import UNKNOWN_TO_STATIC, T, module, mutate

    before, after = UNKNOWN_TO_STATIC["a loop that checks one element"]
    waits = "\n\n" + UNDER_THE_GATE + "if _GATE:\n    import time\n\n    time.sleep(3600)\n"
    got = mutate(repo, before, {T: module(after) + waits})
    assert got.code == 1 and _found(got) == ["OG922"], got.said


@pytest.mark.slow
@pytest.mark.usefixtures("short_limit")
def test_new_tests_that_stall_past_the_mutation_budget_are_og922(repo: Repo) -> None:
    """Before: the budget (--mutate-timeout, 60 s by default) is far shorter than the hang floor, so a stall of the
    new tests' first run ended as "the budget ran out", a notice and exit 0: the weakened test evaded OG910."""
    from tests.test_mutation import UNKNOWN_TO_STATIC, T, module, mutate

    before, after = UNKNOWN_TO_STATIC["a loop that checks one element"]
    stalls = "\n\n" + UNDER_THE_GATE + "if _GATE:\n    import time\n\n    time.sleep(3600)\n"
    got = mutate(repo, before, {T: module(after) + stalls}, "--mutate-timeout", "20")
    assert got.code == 1 and _found(got) == ["OG922"], got.said


@pytest.mark.slow
def test_new_tests_slow_past_the_mutation_budget_but_not_stalled_are_a_notice(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The honest twin: the change's tests are slower under the gate (25 s to import) but finish within the hang
    limit: the budget ran out before they ran once, which is not judged (a notice), never a finding."""
    from tests.test_mutation import UNKNOWN_TO_STATIC, T, module, mutate

    monkeypatch.setattr(barrier, "HANG_FLOOR", 45.0)
    monkeypatch.setattr(barrier, "HANG_FACTOR", 5.0)
    before, _ = UNKNOWN_TO_STATIC["a loop that checks one element"]
    slow = "\n\n" + UNDER_THE_GATE + "if _GATE:\n    import time\n\n    time.sleep(25)\n"
    got = mutate(repo, before, {T: module(before) + slow}, "--mutate-timeout", "20")
    assert got.code == 0 and got.codes == [], got.said
    assert "ran out before the new tests ran once" in got.err, got.err


def test_the_runs_get_none_of_the_variables_a_pytest_run_around_the_gate_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    # A gate started inside a test harness (our own suite, an xdist worker) must not hand its runs a signal that
    # a plain run of the user's lacks; the user's own pytest settings stay, as the user's runs have them.
    for key in ("PYTEST_CURRENT_TEST", "PYTEST_VERSION", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.setenv(key, "set by the pytest around the gate")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("PYTEST_THEME", "monokai")
    for env in (interpreters.child_env(sys.executable), interpreters.tree_env(sys.executable, "/nowhere")):
        assert not {k for k in env if k.startswith("PYTEST_")} - {"PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTEST_THEME"}
        assert env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] == "1" and env["PYTEST_THEME"] == "monokai"


@pytest.mark.slow
def test_a_gate_terminated_mid_run_ends_its_runs_and_leaves_no_scratch_tree(repo: Repo, tmp_path: Path) -> None:
    # A cancelled CI job or `kill` sends SIGTERM: the gate unwinds as on Ctrl-C (exit 143, one line), its runs
    # end with it and its scratch trees go, so nothing is left for the next gate to find (OG926) or for a disk to
    # fill with. Before, it died on the signal with its trees left in the temporary folder.
    slow = "import time\n\nfrom calc import X\n\n\ndef test_slow():\n    time.sleep(120)\n    assert X\n"
    repo.change(
        {"calc.py": "X = 1\n", "tests/test_calc.py": slow, "pytest.ini": "[pytest]\npythonpath = .\n"},
        {"calc.py": "X = 2\n"},
    )
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "ORACLE_GUARD_SCRATCH": str(scratch), "TMPDIR": str(scratch), "VIRTUAL_ENV": sys.prefix}
    env.pop("PYTEST_ADDOPTS", None)
    base = repo.git("rev-parse", "HEAD").strip()
    cmd = [sys.executable, "-m", "oracle_guard", "check", "-q", "--replay", "--only", "oracle-replay", "--base", base]
    proc = subprocess.Popen(cmd, cwd=repo.path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _runs_under(str(scratch)):
        time.sleep(0.2)
    assert _runs_under(str(scratch)), "the gate never started its base run"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, (out, err)
    assert err.strip().splitlines()[-1] == "oracle-guard: terminated", err
    time.sleep(0.5)
    left = _runs_under(str(scratch))
    for pid in left:  # never left for the tests after this one to find (OG926)
        os.kill(pid, signal.SIGKILL)
    assert left == []
    assert sorted(os.listdir(scratch)) == [], sorted(os.listdir(scratch))


def _runs_under(folder: str) -> list[int]:
    """The pids of processes whose command line names FOLDER (Linux /proc)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if folder.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found
