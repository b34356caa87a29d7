"""Packaging (issue 38, item 6): installing from a checkout leaves the checkout as it was, and ships the package whole.

setuptools' backend wrote build/ and hooks/oracle_guard.egg-info into the source tree on every `pip install .`;
the backend now is hatchling (pyproject.toml says why), which builds the wheel straight from the sources.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import GIT_ENV

PROJECT = Path(__file__).resolve().parent.parent


def git(cwd: Path, *args: str) -> str:
    import os

    proc = subprocess.run(("git", *args), cwd=cwd, capture_output=True, text=True, env={**os.environ, **GIT_ENV})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def checkout_copy(tmp_path: Path) -> Path:
    """The checkout's tracked files as they are in the work tree (edits not yet committed too), in a new repository."""
    copy = tmp_path / "checkout"
    tracked = git(PROJECT, "ls-files", "-z").split("\0")
    for rel in filter(None, tracked):
        source = PROJECT / rel
        if source.is_file():  # a file deleted in the work tree but not yet from git is not there to copy
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / rel)
    git(copy.parent, "init", "-q", str(copy))
    git(copy, "add", "-A")
    git(copy, "commit", "-q", "-m", "copy")
    return copy


@pytest.mark.slow
def test_pip_install_from_a_checkout_leaves_it_as_it_was_and_ships_every_file(tmp_path: Path) -> None:
    copy = checkout_copy(tmp_path)
    before = git(copy, "status", "--porcelain", "--ignored")
    target = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
        + ["--target", str(target), str(copy)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert git(copy, "status", "--porcelain", "--ignored") == before  # no build/, no *.egg-info
    # Every file git tracks in the package is installed (the contract's JSON schema too), and nothing else is.
    package = copy / "hooks" / "oracle_guard"
    shipped = {p.relative_to(target).as_posix() for p in (target / "oracle_guard").rglob("*") if p.is_file()}
    tracked = {p.relative_to(copy / "hooks").as_posix() for p in package.rglob("*") if p.is_file()}
    assert {
        p for p in shipped if "__pycache__" not in p
    } == tracked and "oracle_guard/contract/contract.schema.json" in tracked
    entry_points = next(target.glob("oracle_guard-*.dist-info")).joinpath("entry_points.txt").read_text()
    assert "oracle-guard = oracle_guard.commands.cli:main" in entry_points
    assert "[pytest11]" in entry_points and "oracle_guard = oracle_guard.pytest_side.plugin.entry" in entry_points
