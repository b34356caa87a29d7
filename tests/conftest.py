"""Fixtures for every test: a clean git environment and a fresh real repository (tests/helpers.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import GIT_ENV, Repo


@pytest.fixture(autouse=True)
def _clean_git_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests may run inside a git hook; never let its GIT_* variables leak in."""
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
