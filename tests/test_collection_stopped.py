"""The collection hook's runs the change can stop or starve (issue 36): each one a finding against the change
when its code can be the cause, one line and exit 2 when it cannot.

- OG808: the collection hangs (a module of the change waits at import); the limit is lowered in-process.
- OG809: the collection floods its output (hundreds of MB at import); the cap is lowered in-process.
- OG807: a test cannot import a third-party module because the change removed it from what installs it.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from oracle_guard.commands import check
from oracle_guard.hook_ids import collection_snapshot
from oracle_guard.hook_ids.collection_snapshot import main as snapshot_main
from oracle_guard.pytest_side.collection import base as base_collection
from oracle_guard.pytest_side.collection import blame, output
from tests.helpers import Repo

TEST = "import pytest\n\n\ndef test_price():\n    assert 2 + 2 == 4\n\n\ndef test_other():\n    assert 'a'.upper() == 'A'\n"
SNAP = "tests/collection_snapshot.txt"
RECORDED = "run   tests/test_price.py::test_price\nrun   tests/test_price.py::test_other\n"
NEW_TEST = "\n\ndef test_third():\n    assert 3 * 3 == 9\n"


@pytest.fixture
def this_python(monkeypatch: pytest.MonkeyPatch) -> str:
    """Collection runs in this interpreter (it has pytest), as the active virtualenv."""
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.delenv("PRE_COMMIT", raising=False)
    return sys.executable


def _base(repo: Repo, test: str = TEST, files: dict[str, str] | None = None) -> None:
    repo.write("tests/test_price.py", test)
    repo.write(SNAP, RECORDED)
    for path, text in (files or {}).items():
        repo.write(path, text)
    repo.commit("base")


# -- OG808: the collection hangs -------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_module_of_the_change_that_waits_at_import_is_og808_naming_where_it_waited(
    repo: Repo, this_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(collection_snapshot, "TIMEOUT_SECONDS", 6)
    _base(repo)
    repo.write("tests/test_wait.py", "import time\n\ntime.sleep(120)\n\n\ndef test_w():\n    assert 1\n")
    got = repo.staged_hook(snapshot_main)
    assert got.code == 1 and got.codes == ["OG808"], got
    assert "tests/test_wait.py:3:1: OG808 pytest --collect-only took over 6 s in " in got.out, got
    assert (
        "it was waiting at tests/test_wait.py:3" in got.out and "tests/test_wait.py" in got.out.split("runs there")[1]
    )


@pytest.mark.slow
def test_the_hang_stands_when_the_change_disarms_the_stack_dump(
    repo: Repo, this_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(collection_snapshot, "TIMEOUT_SECONDS", 6)
    _base(repo)
    repo.write(
        "tests/conftest.py",
        "import faulthandler, time\n\nfaulthandler.cancel_dump_traceback_later()\ntime.sleep(120)\n",
    )
    got = repo.staged_hook(snapshot_main)
    assert got.code == 1 and got.codes == ["OG808"], got
    assert f"{SNAP}:1:1: OG808 " in got.out and "where it waited is unknown" in got.out, got


@pytest.mark.slow
def test_a_change_whose_module_waits_within_the_limit_passes(
    repo: Repo, this_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(collection_snapshot, "TIMEOUT_SECONDS", 30)
    _base(repo)
    repo.write("tests/test_wait.py", "import time\n\ntime.sleep(1)\n\n\ndef test_w():\n    assert 1\n")
    got = repo.staged_hook(snapshot_main)
    assert got.code == 0 and got.codes == [], got
    assert "tests/test_wait.py::test_w" in (repo.path / SNAP).read_text()


@pytest.mark.slow
def test_a_hang_of_the_base_under_a_change_that_runs_nothing_at_collection_stays_exit_2(
    repo: Repo, this_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(collection_snapshot, "TIMEOUT_SECONDS", 6)
    _base(repo, files={"tests/conftest.py": "import os, time\n\nif os.environ.get('S44_WAIT'):\n    time.sleep(120)\n"})
    monkeypatch.setenv("S44_WAIT", "1")  # the system makes the base's conftest wait, not the change
    repo.write("README.md", "docs only\n")
    got = repo.staged_hook(snapshot_main, "--always")
    assert got.code == 2 and got.codes == [] and got.out == "", got
    assert got.err.count("\n") == 1 and "took over 6 s" in got.err, got
    assert "the change touches no code that runs at collection" in got.err, got


# A conftest that waits only in a collection: plain pytest is green, and the gate's collection hung until
# its limit and ended in exit 2, "nothing was judged", hiding the test the change deleted beside it (OG801).
WAITS_IN_A_COLLECTION = "import sys, time\n\nif '--collect-only' in sys.argv:\n    time.sleep(120)\n"


@pytest.mark.slow
@pytest.mark.parametrize("waits", [True, False], ids=["waits-in-the-collection", "the-same-deletion-alone"])
def test_the_gate_judges_a_change_that_hangs_its_collection(
    repo: Repo, this_python: str, monkeypatch: pytest.MonkeyPatch, waits: bool
) -> None:
    monkeypatch.setattr(collection_snapshot, "TIMEOUT_SECONDS", 8)
    _base(repo)
    weaker = TEST.split("\n\n\ndef test_other")[0] + "\n"  # test_other deleted
    repo.change({}, {"tests/test_price.py": weaker, **({"tests/conftest.py": WAITS_IN_A_COLLECTION} if waits else {})})
    plain = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo.path)
    assert plain.returncode == 0  # green outside a collection
    got = repo.hook(check.main, "--base", "HEAD", "--python", sys.executable)
    assert got.code == 1 and "error:" not in got.err, got.said
    if waits:
        assert "OG808" in got.codes and "it was waiting at tests/conftest.py:4" in got.out, got.said
    else:
        assert "OG801" in got.codes and "OG808" not in got.codes, got.said


@pytest.mark.slow
def test_the_gate_keeps_exit_2_when_the_base_does_not_collect_in_time_either(
    repo: Repo, this_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An honest change to a test module, while the environment makes the base's conftest wait: the gate's
    collection of the base, beside the change's, does not finish either, so the wait is not the change's."""
    monkeypatch.setattr(collection_snapshot, "TIMEOUT_SECONDS", 8)
    monkeypatch.setattr(base_collection, "TIMEOUT_SECONDS", 8)
    _base(repo, files={"tests/conftest.py": "import os, time\n\nif os.environ.get('S44_WAIT'):\n    time.sleep(120)\n"})
    monkeypatch.setenv("S44_WAIT", "1")
    repo.change({}, {"tests/test_price.py": TEST + NEW_TEST})
    got = repo.hook(check.main, "--base", "HEAD", "--python", sys.executable)
    assert got.code == 2 and "OG808" not in got.codes and got.err.count("\n") == 1, got.said
    assert "took over 8 s in " in got.err and "the base's own collection fails too (" in got.err, got.said
    assert "took over 8 s in a scratch tree of HEAD" in got.err, got.said


# -- OG809: the collection floods its output -------------------------------------------------------------------

FLOOD = "import sys\n\nsys.stdout.write('x' * {n})\nraise RuntimeError('flooded')\n"


@pytest.mark.slow
def test_a_module_of_the_change_that_floods_the_output_is_og809_and_the_hook_keeps_only_a_tail(
    repo: Repo, this_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(collection_snapshot, "OUTPUT_CAP", 1024 * 1024)
    _base(repo)
    repo.write("tests/test_flood.py", FLOOD.format(n=8 * 1024 * 1024))
    got = repo.staged_hook(snapshot_main)
    assert got.code == 1 and got.codes == ["OG809"], got
    assert f"{SNAP}:1:1: OG809 pytest --collect-only wrote over 1 MiB to its output in " in got.out, got
    assert "tests/test_flood.py" in got.out and len(got.out) < 2000, got


@pytest.mark.slow
def test_output_under_the_cap_is_judged_as_before_an_ordinary_collection_error(
    repo: Repo, this_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(collection_snapshot, "OUTPUT_CAP", 1024 * 1024)
    _base(repo)
    repo.write("tests/test_flood.py", FLOOD.format(n=100 * 1024))
    got = repo.staged_hook(snapshot_main)
    assert got.code == 1 and got.codes == ["OG803"], got
    assert "RuntimeError: flooded" in got.out, got
    repo.write("tests/test_flood.py", "import sys\n\nsys.stdout.write('x' * 102400)\n\n\ndef test_f():\n    assert 1\n")
    assert repo.staged_hook(snapshot_main).code == 0  # the same output, no error: the honest change passes


def test_the_reader_keeps_a_bounded_tail_of_a_stream_whatever_its_size() -> None:
    code = "import os\nfor _ in range(200):\n    os.write(1, b'y' * 65536)\nos.write(1, b'\\nlast line\\n')\n"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = output.wait(proc, 60, 1 << 30, "python")
    assert len(out) <= output.KEEP and out.endswith(b"last line\n") and err == b""
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with pytest.raises(output.Stopped) as stopped:
        output.wait(proc, 60, 1024 * 1024, "python")
    assert not stopped.value.hung and stopped.value.written > 1024 * 1024 and proc.returncode is not None


# -- OG807: the change removed a dependency its tests need ------------------------------------------------------

PYPROJECT = '[project]\nname = "shop"\nversion = "1.0"\ndependencies = [\n    "freezegun_not_installed>=1.2",\n    "attrs",\n]\n'


@pytest.mark.slow
@pytest.mark.parametrize("where", ["pyproject.toml", "requirements/test.txt"])
def test_a_dependency_the_change_removed_is_og807_naming_the_module_and_the_file(
    repo: Repo, this_python: str, where: str
) -> None:
    """Edited out of pyproject.toml, or its requirements file deleted: either is the change's doing."""
    declared = PYPROJECT if where == "pyproject.toml" else "attrs\nFreezegun-Not.Installed==1.2\n"
    _base(repo, test="import freezegun_not_installed\n" + TEST, files={where: declared})
    if where == "pyproject.toml":
        repo.write(where, PYPROJECT.replace('    "freezegun_not_installed>=1.2",\n', ""))
    else:
        repo.remove(where)
    repo.write("tests/test_price.py", "import freezegun_not_installed\n" + TEST + NEW_TEST)
    got = repo.staged_hook(snapshot_main)
    assert got.code == 1 and got.codes == ["OG807"], got
    at = where if where == "pyproject.toml" else SNAP  # a deleted file: the finding stands on the snapshot
    assert (
        f"{at}:1:1: OG807 pytest in " in got.out
        and "cannot import 'freezegun_not_installed', which a test imported at the base too: the change removed it"
        f" from {where}"
        in got.out
    ), got


@pytest.mark.slow
def test_a_change_that_edits_the_dependencies_for_another_reason_is_not_blamed_for_the_environment(
    repo: Repo, this_python: str
) -> None:
    _base(repo, test="import freezegun_not_installed\n" + TEST, files={"pyproject.toml": PYPROJECT})
    repo.write("pyproject.toml", PYPROJECT.replace('version = "1.0"', 'version = "1.1"').replace("attrs", "attrs>=23"))
    repo.write("tests/test_price.py", "import freezegun_not_installed\n" + TEST + NEW_TEST)
    got = repo.staged_hook(snapshot_main)
    assert got.code == 2 and got.codes == [] and got.err.count("\n") == 1, got
    assert "cannot import 'freezegun_not_installed', which is not part of this repository" in got.err
    assert "the change edits pyproject.toml but removes no mention of it" in got.err
    assert "install the distribution that provides 'freezegun_not_installed'" in got.err


@pytest.mark.slow
def test_an_honest_change_that_adds_a_dependency_and_its_import_passes(repo: Repo, this_python: str) -> None:
    import yaml  # noqa: F401 - the environment is up to date: this interpreter has it

    _base(repo, files={"pyproject.toml": PYPROJECT.replace('    "freezegun_not_installed>=1.2",\n', "")})
    repo.write("pyproject.toml", PYPROJECT.replace("freezegun_not_installed>=1.2", "PyYAML>=6"))
    repo.write("tests/test_price.py", "import yaml\n" + TEST + NEW_TEST)
    got = repo.staged_hook(snapshot_main)
    assert got.code == 0 and got.codes == [], got
    assert "tests/test_price.py::test_third" in (repo.path / SNAP).read_text()


def test_what_declares_the_environment_and_what_a_removal_is() -> None:
    for path in ("pyproject.toml", "requirements-dev.txt", "requirements/test.in", "tox.ini", "sub/setup.cfg"):
        assert blame.declares(path), path
    assert blame.declares(".github/workflows/ci.yml") and blame.declares(".pre-commit-config.yaml")
    for path in ("README.md", "src/shop/requirements.py", "tests/test_price.py", "docs/setup.md"):
        assert not blame.declares(path), path
    assert "freezegun-not-installed" in blame._names(b'"Freezegun.Not_Installed>=1"')
    assert "yaml" not in blame._names(b'"PyYAML>=6"')  # a distribution named otherwise: no removal is seen
