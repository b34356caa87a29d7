"""Helpers for the contract tests: contracts as text, throwaway SSH keys, approvals."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

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


class Bounded(NamedTuple):
    code: int | None  # None: killed at the time limit
    out: str
    err: str
    seconds: float
    peak_mb: float  # peak resident memory of the command and the processes it waited for


# Sets the address-space limit in the command's process (a preexec), waits for it and writes the peak
# resident memory of it and its children: RUSAGE_CHILDREN of the test process would mix in every earlier one.
_LIMITED = """
import resource, subprocess, sys
cap = int(sys.argv[1]) * 2**20
code = subprocess.call(sys.argv[3:], preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (cap, cap)))
with open(sys.argv[2], "w") as f:
    f.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(code if code >= 0 else 128 - code)
"""


def run_bounded(argv: Sequence[str], cwd: Path, seconds: float = 10, megabytes: int = 200) -> Bounded:
    """Run ARGV in a subprocess under a wall-clock limit and an address-space limit of MEGABYTES.

    A reader that loops without end is killed at the time limit (code None), one that grows past the
    memory limit dies of MemoryError (a traceback the caller sees): neither can take the machine down.
    """
    with tempfile.TemporaryDirectory() as scratch:
        peak_file = Path(scratch, "peak")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PRE_COMMIT")}
        start = time.monotonic()
        proc = subprocess.Popen(
            (sys.executable, "-c", _LIMITED, str(megabytes), str(peak_file), *argv),
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # the time limit ends the command's whole process group
        )
        try:
            out, err = proc.communicate(timeout=seconds)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            return Bounded(None, out, err, time.monotonic() - start, 0.0)
        elapsed = time.monotonic() - start
        peak_kib = int(peak_file.read_text()) if peak_file.exists() else 0  # ru_maxrss is in KiB on Linux
        return Bounded(proc.returncode, out, err, elapsed, peak_kib / 1024)
