"""Signed approvals with throwaway ed25519 keys and the real ssh-keygen."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from oracle_guard.commands.approve import main as approve_main
from oracle_guard.contract import contract
from oracle_guard.contract.approvals import Approvals
from oracle_guard.repo import changes
from oracle_guard.reporting import report
from tests.contract_helpers import CONTRACT, approve, contract_text, make_key, signers_line
from tests.helpers import Repo

STATEMENT = "property-lower roundtrip_stable 80 40"


def signed_repo(repo: Repo, tmp_path: Path) -> Path:
    key = make_key(tmp_path)
    repo.write("tests/allowed_signers", signers_line(key))
    repo.write(CONTRACT, contract_text(extra="allowed_signers: tests/allowed_signers\n"))
    repo.commit("signers")
    return key


def load(repo: Repo) -> Approvals:
    old = os.getcwd()
    os.chdir(repo.path)
    try:
        change_set = changes.resolve(type("Args", (), {"base": None})())
        base = contract.at_base(change_set.base, CONTRACT)
        return Approvals.load(change_set, base, contract.load(CONTRACT))
    finally:
        os.chdir(old)


def test_a_valid_approval_covers_exactly_its_statement(repo: Repo, tmp_path: Path) -> None:
    key = signed_repo(repo, tmp_path)
    approve(repo, key, STATEMENT)
    found = load(repo)
    assert found.covers(STATEMENT)
    assert found.covers("  property-lower   roundtrip_stable 80 40 ")  # canonical whitespace
    assert not found.covers("property-lower roundtrip_stable 80 39")
    assert not found.covers("property-retire roundtrip_stable")


def test_no_signers_at_the_base_means_nothing_is_approved(repo: Repo, tmp_path: Path) -> None:
    key = make_key(tmp_path)
    repo.write(CONTRACT, contract_text())
    repo.commit()
    repo.write("tests/allowed_signers", signers_line(key))  # added by the patch itself
    repo.write(CONTRACT, contract_text(extra="allowed_signers: tests/allowed_signers\n"))
    approve(repo, key, STATEMENT)
    found = load(repo)
    assert not found.covers(STATEMENT)
    assert "no allowed-signers file is configured at the base revision" in found.explain(STATEMENT)


def test_signers_file_named_but_absent_at_the_base_fails_closed(repo: Repo, tmp_path: Path) -> None:
    key = make_key(tmp_path)
    repo.write(CONTRACT, contract_text(extra="allowed_signers: tests/allowed_signers\n"))
    repo.commit()
    repo.write("tests/allowed_signers", signers_line(key))
    approve(repo, key, STATEMENT)
    found = load(repo)
    assert not found.covers(STATEMENT) and "does not exist at the base revision" in found.explain(STATEMENT)


def test_a_key_the_base_does_not_trust_approves_nothing(repo: Repo, tmp_path: Path) -> None:
    signed_repo(repo, tmp_path)
    mallory = make_key(tmp_path, "mallory")
    approve(repo, mallory, STATEMENT)
    found = load(repo)
    assert not found.covers(STATEMENT)
    assert "does not verify" in found.explain(STATEMENT)


def test_an_edited_statement_invalidates_the_signature(repo: Repo, tmp_path: Path) -> None:
    key = signed_repo(repo, tmp_path)
    path = approve(repo, key, STATEMENT)
    path.write_text(path.read_text().replace("80 40", "80 1", 1))
    assert not load(repo).covers("property-lower roundtrip_stable 80 1")


def test_wrong_namespace_is_refused(repo: Repo, tmp_path: Path) -> None:
    key = signed_repo(repo, tmp_path)
    proc = subprocess.run(
        ("ssh-keygen", "-Y", "sign", "-f", str(key), "-n", "git"),
        input=(STATEMENT + "\n").encode(),
        capture_output=True,
        check=True,
    )
    repo.write("tests/approvals/x.approval", STATEMENT + "\n" + proc.stdout.decode())
    assert not load(repo).covers(STATEMENT)


def test_without_ssh_keygen_everything_fails_closed(repo: Repo, tmp_path: Path, monkeypatch, capsys) -> None:
    key = signed_repo(repo, tmp_path)
    approve(repo, key, STATEMENT)
    only_git = tmp_path / "only-git"
    only_git.mkdir()
    (only_git / "git").symlink_to(shutil.which("git"))
    monkeypatch.setenv("PATH", str(only_git))  # a machine without OpenSSH
    report.use_format("text")  # notices on stderr, whatever format an earlier test in this process left
    found = load(repo)
    assert not found.covers(STATEMENT)
    assert "ssh-keygen is not on PATH" in capsys.readouterr().err


def test_approve_subcommand_signs_with_the_git_signing_key(repo: Repo, tmp_path: Path) -> None:
    key = signed_repo(repo, tmp_path)
    repo.git("config", "user.signingkey", str(key))
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_DIR")}
    proc = subprocess.run(
        (sys.executable, "-m", "oracle_guard.commands.cli", "approve", *STATEMENT.split()),
        cwd=repo.path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    written = list((repo.path / "tests/approvals").glob("property-lower-roundtrip_stable-*.approval"))
    assert len(written) == 1 and re.match(
        re.escape(STATEMENT) + r" nonce=[0-9a-f]{16}\n-----BEGIN SSH SIGNATURE-----", written[0].read_text()
    )
    assert load(repo).covers(STATEMENT)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["fixture-rotate", "x"], "'fixture-rotate' takes 3 argument(s)"),
        (["unlock-everything"], "unknown approval 'unlock-everything'"),
        (["test-skip", "a", "--key", "/nonexistent/key"], "signing key /nonexistent/key does not exist"),
    ],
)
def test_approve_refuses_bad_input_in_one_line(repo: Repo, capsys, argv: list[str], message: str) -> None:
    assert repo.run(approve_main, *argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_approve_without_a_key_says_how_to_set_one(repo: Repo, capsys) -> None:
    assert repo.run(approve_main, "test-retire", "tests/test_a.py::test_a") == 2
    assert "git config user.signingkey" in capsys.readouterr().err


def test_approve_from_a_subfolder_writes_into_the_repositorys_approvals(repo: Repo, tmp_path: Path) -> None:
    key = signed_repo(repo, tmp_path)
    (repo.path / "src").mkdir()
    proc = subprocess.run(
        (
            sys.executable,
            "-m",
            "oracle_guard.commands.cli",
            "approve",
            "--key",
            str(key),
            "test-retire",
            "tests/test_a.py::test_a",
        ),
        cwd=repo.path / "src",
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("wrote tests/approvals/test-retire-tests_test_a.py_test_a-")
    assert load(repo).covers("test-retire tests/test_a.py::test_a")
