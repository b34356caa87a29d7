"""Fixtures for every test: a clean git environment and a fresh real repository (tests/helpers.py)."""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import GIT_ENV, Repo


@pytest.fixture(autouse=True)
def _clean_git_env(
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Tests may run inside a git hook; never let its GIT_* variables leak in.

    Each test has its own replay cache (created only when a replay writes to it): one test's entries,
    or the user's, never make another test's replay warm.
    """
    tag = hashlib.sha256(request.node.nodeid.encode("utf-8")).hexdigest()[:16]
    monkeypatch.setenv("ORACLE_GUARD_CACHE", str(tmp_path_factory.getbasetemp() / "og-cache" / tag))
    for key in list(os.environ):
        if key.startswith(("GIT_", "PRE_COMMIT")) or key in (
            "ORACLE_GUARD_BASE",
            "CI",
            "GITHUB_ACTIONS",
            "GITHUB_BASE_REF",
        ):
            monkeypatch.delenv(key)
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    path = tmp_path / "repo"
    path.mkdir()
    r = Repo(path)
    r.git("init", "-q", "-b", "main")
    # `git config commit.gpgsign false` without a second git process (a thousand tests make a repository)
    with open(path / ".git" / "config", "a", encoding="utf-8") as config:
        config.write("[commit]\n\tgpgsign = false\n")
    return r


@pytest.fixture
def shared_dir(tmp_path: Path) -> Iterator[Path]:
    """A folder every run of the change's code may write, confined or not (repo/confine): /dev/shm, where
    multiprocessing's semaphores live; tmp_path where there is none.  For cheats that keep state across runs."""
    if not os.path.isdir("/dev/shm"):
        yield tmp_path
        return
    folder = tempfile.mkdtemp(prefix="og-shared-", dir="/dev/shm")
    try:
        yield Path(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def project_python(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The project's interpreter is the one running these tests (it has pytest); a cache folder of the test's own.

    For modules that run real replays: `pytestmark = pytest.mark.usefixtures("project_python")`."""
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
