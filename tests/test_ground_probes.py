"""The probes' runs of the change's code never end in exit 2 (docs/ground.md, "What ends in exit 2").

Each cheat here hangs or kills only where a probe runs the change's code: after a warm main run whose base
side only collected (the base's examples against the new code), outside pytest (the suspects' plain
interpreter), or in the mutation server.  Each ended in exit 2 ("nothing was judged") or a notice before,
and is a finding now; the honest twin beside it passes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oracle_guard.hook_ids import replay as replay_hook
from oracle_guard.pytest_side import barrier
from tests.helpers import Repo, finding_codes
from tests.test_replay_cache import WARM


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("ORACLE_GUARD_CACHE", "off")
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


def _plain_pytest(repo: Repo) -> int:
    """A bare pytest in the work tree, the way a CI job or an agent would run it."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:oracle_guard"]
    return subprocess.run(cmd, cwd=repo.path, capture_output=True, text=True).returncode


# -- the base's examples after a warm main run ------------------------------------------------------------------
# The base documents double(2); the change documents double(3) and hangs on 2 only, which no test of the
# change calls: plain pytest and the main run are green, the base's examples against the new code hang.
DOCTESTED = {
    "calc.py": 'def double(x):\n    """\n    >>> double(2)\n    4\n    """\n    return x + x\n',
    "tests/test_calc.py": "from calc import double\n\n\ndef test_double():\n    assert double(5) == 10\n",
    "pytest.ini": "[pytest]\npythonpath = .\naddopts = --doctest-modules\n",
}
REWORDED = 'def double(x):\n    """\n    >>> double(3)\n    6\n    """\n{}    return x * 2\n'
HANGS_ON_TWO = "    if x == 2:\n        import time\n\n        time.sleep(3600)\n"


def _warm_doctested(repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A cold replay of the honest rewording of DOCTESTED, which leaves the base side's entry in the cache."""
    monkeypatch.setenv("ORACLE_GUARD_CACHE", str(tmp_path / "og-cache"))
    repo.change(DOCTESTED, {"calc.py": REWORDED.format("")})
    cold = repo.hook(replay_hook.main, "--base", "HEAD", "--timeout", "120")
    assert cold.code == 0 and WARM not in cold.err, cold.said
    entries = [p for p in (tmp_path / "og-cache" / "replay").glob("*.json") if "probe" not in p.read_text()]
    assert len(entries) == 1 and json.loads(entries[0].read_text())["seconds"] > 0, entries


@pytest.mark.slow
@pytest.mark.parametrize("code", ["hangs", "honest"])
def test_the_base_examples_after_a_warm_main_run_are_held_to_the_entrys_checked_time(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, code: str
) -> None:
    """Before: warm, the main run's base side only collected, so no base time was measured and the run of the
    base's examples against the new code had no limit but --timeout: exit 2.  It is held to the entry's time
    now (cut to half the time left), checked against a whole base run before the hang is judged: OG922."""
    monkeypatch.setattr(barrier, "HANG_FLOOR", 10.0)
    monkeypatch.setattr(barrier, "HANG_FACTOR", 5.0)
    _warm_doctested(repo, monkeypatch, tmp_path)
    repo.write("calc.py", REWORDED.format(HANGS_ON_TWO if code == "hangs" else ""))
    repo.stage()
    assert _plain_pytest(repo) == 0  # the change's own example and test pass; nothing calls double(2)
    started = time.monotonic()
    got = repo.hook(replay_hook.main, "--base", "HEAD", "--timeout", "90")
    assert WARM in got.err, got.said  # the main run was warm: its base side only collected
    if code == "honest":
        assert got.code == 0 and got.codes == [], got.said
        return
    assert got.code == 1 and finding_codes(got.out) == ["OG922"], got.said
    assert "test_og_base_doctest_0.txt" in got.out and "the base ran whole in" in got.err, got.said
    assert "--timeout" not in got.err and time.monotonic() - started < 85
