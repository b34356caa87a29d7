"""Shared test helpers: real temporary git repositories, no mocked git."""

from __future__ import annotations

import os
import subprocess
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Callable

import pytest

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


class Repo:
    """A throwaway git repository with helpers to write, stage and commit."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def git(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(("git", *args), cwd=self.path, capture_output=True, text=True)
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout

    def write(self, rel: str, content: str | bytes, dedent: bool = True) -> Path:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(textwrap.dedent(content) if dedent else content, encoding="utf-8")
        return target

    def remove(self, rel: str) -> None:
        self.git("rm", "-q", rel)

    def stage(self, *paths: str) -> None:
        self.git("add", "-A", *(paths or ("--",)))

    def commit(self, message: str = "change") -> str:
        self.stage()
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD").strip()

    def change(self, before: dict[str, str], after: dict[str, str | None]) -> list[str]:
        """Commit BEFORE, then stage AFTER (None deletes); the paths still there."""
        for path, text in before.items():
            self.write(path, text)
        self.commit("base")
        for path, text in after.items():
            if text is None:
                self.remove(path)
            else:
                self.write(path, text)
        self.stage()
        return [p for p, t in after.items() if t is not None]

    def run(
        self, main: Callable[[Sequence[str] | None], int], *argv: str, capsys: pytest.CaptureFixture[str] | None = None
    ) -> int:
        """Run a hook's main() in this repository, as pre-commit would."""
        old = os.getcwd()
        os.chdir(self.path)
        try:
            return main(list(argv))
        finally:
            os.chdir(old)


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
    r.git("config", "commit.gpgsign", "false")
    return r
