"""`oracle-guard guard install|status|uninstall`: one agent worktree's commit guard, in real git worktrees."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from oracle_guard.commands import guard
from oracle_guard.contract.snapshot import format_snapshot
from tests.helpers import GIT_ENV, Repo

TEST = "import pytest\n\n\ndef test_price():\n    assert 2 + 2 == 4\n"
CONTRACT = "tests/agent_contract.yaml"


def project(repo: Repo, tmp_path: Path) -> tuple[Path, Path]:
    repo.write("tests/test_price.py", TEST)
    repo.write(
        CONTRACT,
        "version: 1\nfixtures: []\nfreezes: []\nmax_active_freezes: 3\nallowed_signers: tests/allowed_signers\n",
    )
    repo.write("tests/allowed_signers", "alice@example.com ssh-ed25519 AAAA\n")
    repo.write("tests/collection_snapshot.txt", format_snapshot({"tests/test_price.py::test_price": "run"}))
    repo.commit("base")
    agent, other = tmp_path / "agent", tmp_path / "other"
    repo.git("worktree", "add", "-q", "-b", "agent", str(agent))
    repo.git("worktree", "add", "-q", "-b", "other", str(other))
    return agent, other


def run(*argv: str) -> int:
    return guard.main(list(argv))


def hooks_path(where: Path) -> str:
    proc = subprocess.run(
        ["git", "-C", str(where), "config", "--get", "core.hooksPath"], capture_output=True, text=True
    )
    return proc.stdout.strip()


def writable(path: Path) -> bool:
    return bool(path.stat().st_mode & stat.S_IWUSR)


def test_install_guards_that_worktree_only_and_says_what_it_did(repo: Repo, tmp_path: Path, capsys) -> None:
    agent, other = project(repo, tmp_path)
    base = repo.git("rev-parse", "HEAD").strip()
    assert run("install", str(agent)) == 0
    out = capsys.readouterr().out
    assert f"recorded the branch point {base[:12]} as this worktree's base" in out
    assert "made tests/agent_contract.yaml read-only" in out and "made tests/collection_snapshot.txt read-only" in out
    assert "made tests/allowed_signers read-only" in out
    assert hooks_path(agent).endswith("oracle-guard-hooks")
    assert hooks_path(other) == "" and hooks_path(repo.path) == ""  # no other worktree touched
    assert not writable(agent / CONTRACT) and writable(repo.path / CONTRACT) and writable(other / CONTRACT)
    assert run("status", str(agent)) == 0
    assert f"base: {base}" in capsys.readouterr().out
    assert run("status", str(other)) == 1


@pytest.mark.slow
def test_the_installed_hook_refuses_a_weakening_commit_and_lets_an_honest_one_through(
    repo: Repo, tmp_path: Path, capsys
) -> None:
    agent, _ = project(repo, tmp_path)
    assert run("install", str(agent)) == 0
    env = {**os.environ, **GIT_ENV}
    env = {k: v for k, v in env.items() if not k.startswith(("PRE_COMMIT", "VIRTUAL_ENV"))}
    (agent / "tests/test_price.py").write_text(TEST.replace("def test_price", "@pytest.mark.skip\ndef test_price"))
    subprocess.run(["git", "-C", str(agent), "add", "-A"], check=True, env=env)
    refused = subprocess.run(
        ["git", "-C", str(agent), "-c", "commit.gpgsign=false", "commit", "-m", "agent: green"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert refused.returncode != 0
    said = refused.stdout + refused.stderr  # git shows a hook's output on stderr
    assert "OG101 new skip mark on test_price" in said and "   do: remove the mark" in said
    (agent / "tests/test_price.py").write_text(TEST.replace("2 + 2 == 4", "2 + 2 == 4 and 3 * 3 == 9"))
    subprocess.run(["git", "-C", str(agent), "add", "-A"], check=True, env=env)
    honest = subprocess.run(
        ["git", "-C", str(agent), "-c", "commit.gpgsign=false", "commit", "-m", "honest"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert honest.returncode == 0, honest.stdout + honest.stderr


def test_uninstall_undoes_everything(repo: Repo, tmp_path: Path, capsys) -> None:
    agent, _ = project(repo, tmp_path)
    assert run("install", str(agent)) == 0
    assert run("uninstall", str(agent)) == 0
    out = capsys.readouterr().out
    assert "removed this worktree's core.hooksPath" in out and "made tests/agent_contract.yaml writable again" in out
    assert hooks_path(agent) == "" and writable(agent / CONTRACT) and writable(agent / "tests/allowed_signers")
    assert run("status", str(agent)) == 1
    assert run("uninstall", str(agent)) == 0 and "nothing to undo" in capsys.readouterr().out


def test_install_refuses_what_it_cannot_do_in_one_line(repo: Repo, tmp_path: Path, capsys) -> None:
    agent, _ = project(repo, tmp_path)
    assert run("install", str(tmp_path / "nowhere")) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert run("install", str(agent), "--base", "no-such-rev") == 2
    assert "base revision 'no-such-rev' does not exist" in capsys.readouterr().err
    assert run("install", str(repo.path)) == 2  # the main checkout itself: no branch point to find
    assert "pass --base REV" in capsys.readouterr().err


def test_install_says_when_it_shadows_the_repository_s_hooks(repo: Repo, tmp_path: Path, capsys) -> None:
    agent, _ = project(repo, tmp_path)
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 0\n")
    assert run("install", str(agent)) == 0
    assert "no longer runs the hooks in" in capsys.readouterr().out
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"  # the shared hook itself is untouched
