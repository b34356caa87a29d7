"""Adopting oracle-guard in a project that has its own `hooks` and `tests` packages (issue 18, item 1).

oracle-guard's import package is `oracle_guard` (the `hooks/` folder of this repository is only its
source root), so a project's own `hooks` package neither shadows it nor is shadowed by it: `init`,
`python -m pytest` with the plugin active, `check` and `check --replay` all work there, and the
project's tests still import `hooks.myhook`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import Repo

pytestmark = pytest.mark.slow  # real init, pytest and replay processes

PROJECT_FILES = {
    "hooks/__init__.py": '"""The project\'s own git-hook helpers."""\n',
    "hooks/myhook.py": "def slug(text):\n    return text.strip().lower().replace(' ', '-')\n",
    "tests/__init__.py": "",
    "tests/test_myhook.py": (
        "from hooks.myhook import slug\n\n\n"
        "def test_slug():\n    assert slug(' Hello World ') == 'hello-world'\n\n\n"
        "def test_slug_of_one_word():\n    assert slug('Word') == 'word'\n"
    ),
    "conftest.py": "import pytest\n\n\n@pytest.fixture\ndef greeting():\n    return 'hi'\n",
}


def run(repo: Repo, *argv: str) -> subprocess.CompletedProcess[str]:
    """ARGV in REPO as a user runs it: this interpreter's virtualenv active, no PYTHONPATH of ours."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    env["VIRTUAL_ENV"] = sys.prefix
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return subprocess.run(argv, cwd=repo.path, env=env, capture_output=True, text=True, timeout=300)


def oracle_guard(repo: Repo, *argv: str) -> subprocess.CompletedProcess[str]:
    return run(repo, str(Path(sys.executable).parent / "oracle-guard"), *argv)


def test_a_project_with_its_own_hooks_package_adopts_and_is_guarded(repo: Repo) -> None:
    for path, text in PROJECT_FILES.items():
        repo.write(path, text)
    repo.commit("project with its own hooks package")

    init = oracle_guard(repo, "init")
    assert init.returncode == 0, init.stdout + init.stderr
    assert "recorded tests/collection_snapshot.txt: 2 tests collected" in init.stdout

    tests = run(repo, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider")
    assert tests.returncode == 0 and "2 passed" in tests.stdout, tests.stdout + tests.stderr
    assert "INTERNALERROR" not in tests.stdout + tests.stderr
    # The plugin is on in this project: a skip nobody approved fails the run.
    repo.write("tests/test_later.py", "import pytest\n\n\ndef test_later():\n    pytest.skip('later')\n")
    skipped = run(repo, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider")
    assert skipped.returncode != 0 and "oracle-guard" in skipped.stdout + skipped.stderr, skipped.stdout
    (repo.path / "tests/test_later.py").unlink()
    base = repo.commit("adopt oracle-guard")

    # The honest change passes the gate and replay ...
    repo.write("hooks/myhook.py", PROJECT_FILES["hooks/myhook.py"] + "\n\ndef shout(text):\n    return text.upper()\n")
    repo.write(
        "tests/test_myhook.py",
        PROJECT_FILES["tests/test_myhook.py"].replace("import slug", "import shout, slug")
        + "\n\ndef test_shout():\n    assert shout('a') == 'A'\n",
    )
    repo.stage()
    snapshot = oracle_guard(repo, "collection-snapshot")  # the commit's hook: records the new test id
    assert "tests/test_myhook.py::test_shout" in (repo.path / "tests/collection_snapshot.txt").read_text(), (
        snapshot.stdout + snapshot.stderr
    )
    repo.commit("shout")
    check = oracle_guard(repo, "check", "--base", base)
    assert check.returncode == 0, check.stdout + check.stderr
    replay = oracle_guard(repo, "check", "--replay", "--base", base)
    assert replay.returncode == 0, replay.stdout + replay.stderr

    # ... and a weakening in the same project is refused by both.
    repo.write("hooks/myhook.py", "def slug(text):\n    return 'hello-world'\n\n\ndef shout(text):\n    return 'A'\n")
    repo.write(
        "tests/test_myhook.py",
        (repo.path / "tests/test_myhook.py").read_text().replace("    assert slug('Word') == 'word'\n", "    pass\n"),
    )
    repo.commit("cheat")
    check = oracle_guard(repo, "check", "--base", base)
    assert check.returncode == 1 and "OG301" in check.stdout, check.stdout + check.stderr
    replay = oracle_guard(repo, "check", "--replay", "--base", base, "--only", "oracle-replay")
    assert replay.returncode == 1 and "OG901" in replay.stdout, replay.stdout + replay.stderr
