"""The allowed-signers file `oracle-guard init` writes, from the SSH key git already signs with.

Approvals verify against the signers file as it stands at the base revision
(oracle_guard/contract/approvals.py), so a file committed with the adoption is
what lets the next pull request approve a deliberate change in itself.  The key
is git's: ``gpg.format ssh`` and ``user.signingkey`` (a key path, public or
private, or git's ``key::`` literal), the principal ``user.email`` — the key
and name `oracle-guard approve` signs with by default.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from typing import NamedTuple

from oracle_guard.repo import git
from oracle_guard.reporting.report import UsageError

HEADER = "# Who may sign oracle-guard approvals (ssh-keygen allowed-signers); trusted as committed at the base.\n"
# A public key as allowed-signers and ssh-keygen spell it: its type, then its base64 blob.
_PUBLIC_KEY = re.compile(r"((?:ssh|ecdsa|sk-ssh|sk-ecdsa)-[A-Za-z0-9@.-]+) ([A-Za-z0-9+/]+={0,3})(?:\s|$)")
_PRINCIPAL = re.compile(r"[^\s,\"'#*?!]+")
DEFAULT_KEY = "~/.ssh/id_ed25519"


class Signer(NamedTuple):
    principal: str
    public_key: str  # "TYPE BASE64"

    def line(self) -> str:
        return f"{self.principal} {self.public_key}\n"


def _config(name: str) -> str:
    return git.run("config", "--get", name, check=False).decode("utf-8", "replace").strip()


def setup_command() -> str:
    """The one command that lets git (and `oracle-guard approve`) sign with an SSH key; it never prompts.

    An agent's shell has no terminal: ssh-keygen's passphrase prompt would hang it, so the key gets an empty
    one (-N "") at a path given (-f), and git is told to sign with it (this repository only).
    """
    path = os.path.expanduser(DEFAULT_KEY)
    quoted = shlex.quote(path)
    make = "" if os.path.exists(path) else f'ssh-keygen -q -t ed25519 -N "" -C oracle-guard -f {quoted} && '
    if make and not os.path.isdir(os.path.dirname(path)):
        make = f"mkdir -p {shlex.quote(os.path.dirname(path))} && " + make  # ssh-keygen -f makes no folder
    return f"{make}git config gpg.format ssh && git config user.signingkey {quoted}"


def public_key(key: str) -> str:
    """KEY's public half as "TYPE BASE64": git's `key::` literal, a .pub file, or the .pub beside a private key."""
    text: str | None = key[5:] if key.startswith("key::") else None
    if text is None:
        path = os.path.expanduser(key)
        text = _read(path) if path.endswith(".pub") else _read(path + ".pub") or _derived(path)
        if text is None:
            raise UsageError(f"signing key {key}: no public key beside it ({key}.pub) and ssh-keygen cannot read it")
    found = _PUBLIC_KEY.search(text.strip())
    if found is None:
        raise UsageError(f"signing key {key}: not an SSH public key")
    return f"{found.group(1)} {found.group(2)}"


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(64 * 1024)
    except OSError:
        return None


def _derived(private: str) -> str | None:
    """The public key of a private key file without a .pub beside it (never prompts for a passphrase)."""
    tool = shutil.which("ssh-keygen")
    if tool is None or not os.path.isfile(private):
        return None
    proc = subprocess.run((tool, "-y", "-P", "", "-f", private), capture_output=True, stdin=subprocess.DEVNULL)
    return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None


def from_git(key: str | None = None) -> tuple[Signer | None, str]:
    """The signer git is set up to sign as (KEY overrides git's key), or None and why not."""
    if key is None:
        if _config("gpg.format") != "ssh" or not _config("user.signingkey"):
            return None, "git does not sign with an SSH key (`git config gpg.format` is not ssh, or no user.signingkey)"
        key = _config("user.signingkey")
    principal = _config("user.email")
    if not principal:
        return None, "git has no user.email to name the signer (`git config user.email you@example.com`)"
    if not _PRINCIPAL.fullmatch(principal):
        return None, f"user.email {principal!r} cannot name a signer (no spaces, commas, quotes or wildcards)"
    return Signer(principal, public_key(key)), ""


def write(path: str, signer: Signer) -> str:
    """Write (or extend) the allowed-signers file at PATH with SIGNER; what was done, for init's report."""
    if os.path.islink(path) or os.path.isdir(path):
        raise UsageError(
            f"{path}: is a symlink or a folder; the allowed-signers file must be a regular file in the repository"
        )
    old = _read(path) if os.path.exists(path) else None
    if old is not None and signer.public_key in old:
        return f"kept {path}: it already trusts {signer.principal}'s key"
    if old is None:
        text = HEADER + signer.line()
    else:
        text = old + ("\n" if old and not old.endswith("\n") else "") + signer.line()
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write the allowed-signers file ({exc.strerror})") from None
    verb = "added" if old is not None else "wrote"
    return f"{verb} {path}: {signer.principal} may sign approvals (the key git signs with); commit it with the contract"
