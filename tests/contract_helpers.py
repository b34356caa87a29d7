"""Helpers for the contract tests: contracts as text, throwaway SSH keys, approvals."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from oracle_guard.contract import approvals
from tests.helpers import Repo

CONTRACT = "tests/agent_contract.yaml"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fixture_entry(fid: str, path: str, digest: str, unlock: str = "null") -> str:
    return f"  - id: {fid}\n    path: {path}\n    sha256: {digest}\n    unlock: {unlock}\n"


def freeze_entry(
    fid: str, expires: str, reruns: int = 2, owner: str = "oncall", reason: str = "PAY-1", extra: str = ""
) -> str:
    text = f'  - id: {fid}\n    owner: "{owner}"\n    reason: "{reason}"\n    expires: "{expires}"\n    remaining_reruns: {reruns}\n'
    return text + extra


def contract_text(fixtures: str = "", freezes: str = "", max_active: int = 3, extra: str = "") -> str:
    return (
        "version: 1\n"
        + ("fixtures:\n" + fixtures if fixtures else "fixtures: []\n")
        + ("freezes:\n" + freezes if freezes else "freezes: []\n")
        + f"max_active_freezes: {max_active}\n"
        + extra
    )


def make_key(folder: Path, name: str = "alice") -> Path:
    """A throwaway ed25519 key pair; returns the private key path."""
    key = folder / f"{name}_key"
    subprocess.run(("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)), check=True)
    return key


def signers_line(key: Path, principal: str = "alice@example.com") -> str:
    return f"{principal} {Path(str(key) + '.pub').read_text().strip()}\n"


def approve(repo: Repo, key: Path, statement: str, folder: str = "tests/approvals") -> Path:
    """Sign STATEMENT with KEY and write it as an approval file in REPO."""
    signature = approvals.sign(statement, str(key))
    target = repo.path / folder / approvals.file_name(approvals.canonical(statement))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(approvals.canonical(statement) + "\n" + signature)
    repo.stage(str(target.relative_to(repo.path)))  # an approval counts only as part of the change
    return target
