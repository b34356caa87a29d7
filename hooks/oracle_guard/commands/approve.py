"""`oracle-guard approve`: sign an approval for one specific weakening with your SSH key.

The command half of oracle_guard.contract.approvals (which hooks read approvals with): it
writes the signed file, stages it, and for a fixture rotation moves the lock
to the approved bytes (oracle_guard.commands.init_contract).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from oracle_guard.contract import approvals, contract
from oracle_guard.repo import git
from oracle_guard.reporting import hints
from oracle_guard.reporting.report import UsageError, guarded, notice


def _default_key() -> str | None:
    out = git.run("config", "--get", "user.signingkey", check=False).decode().strip()
    return out or None


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="oracle-guard approve",
        description="Sign an approval for one specific weakening with your SSH key.",
        epilog="statements: " + "; ".join(f"{v} ({n} arg{'s' if n > 1 else ''})" for v, n in approvals.VERBS.items()),
    )
    parser.add_argument("statement", nargs="+", help="e.g. fixture-rotate invoice_v3 OLD_SHA NEW_SHA")
    parser.add_argument(
        "-f", "--key", help="SSH private key (or public key held by ssh-agent); default: git config user.signingkey"
    )
    parser.add_argument(
        "-o", "--output", help="approval file to write (default: <approvals dir>/<verb>-<id>-<hash>.approval)"
    )
    contract.add_contract_arg(parser)
    args = parser.parse_args(argv)
    statement = approvals.parse_statement(args.statement)
    output = os.path.abspath(args.output) if args.output else None  # as the user meant it, before moving to the top
    key = args.key or _default_key()
    if key and not key.startswith("key::"):
        key = os.path.abspath(os.path.expanduser(key))
    from oracle_guard.repo import changes

    changes.enter_repo([])
    if not key:
        from oracle_guard.commands.signers_setup import setup_command

        raise UsageError(f"no signing key: pass --key ~/.ssh/id_ed25519, or set one up: `{setup_command()}`")
    import secrets

    signed = f"{statement} {approvals.NONCE}{secrets.token_hex(8)}"  # a fresh approval, never a copy of a spent one
    signature = approvals.sign(signed, key)
    if not output:
        loaded = contract.load(args.contract)
        folder = loaded.approvals if loaded else contract.Contract().approvals
        output = os.path.join(folder, approvals.file_name(signed))
    os.makedirs(os.path.dirname(output) or ".", exist_ok=True)
    with open(output, "w", encoding="utf-8", newline="\n") as f:
        f.write(signed + "\n" + signature)
    shown = os.path.relpath(output)
    shown = output if shown.startswith("..") else shown
    staged = not shown.startswith("/") and git.ok("add", "--", shown)  # only the change's own files approve
    print(f"wrote {shown}: approves `{statement}`" + (" (staged)" if staged else ""))
    verb, _, rest = statement.partition(" ")
    if verb == "fixture-rotate" and os.path.exists(args.contract):  # the lock follows the approved bytes
        from oracle_guard.commands.init_contract import rotate_lock

        fixture_id, old, new = rest.split(" ")
        if rotate_lock(args.contract, fixture_id, old, new):
            print(f"{args.contract}: '{fixture_id}' now locks sha256 {new[:12]}…")
    if not staged:
        notice(
            f"{shown} is not staged (outside the repository, or ignored): it approves nothing until it is part of the change"
        )
    print("commit it in a reviewed change; it is verified against the allowed signers at the base revision")
    missing = _signers_missing_at_head(args.contract)
    if missing is not None:
        notice("HEAD has no allowed-signers file: " + hints.create_signers(missing or None))
    return 0


def _signers_missing_at_head(contract_path: str) -> str | None:
    """None when HEAD (the usual base) has an allowed-signers file; else the path its contract names, or ""."""
    if not git.ok("rev-parse", "--verify", "--quiet", "HEAD^{commit}"):
        return ""  # no commit yet: no base, no signers
    try:
        base = contract.at_base("HEAD", contract_path)
    except UsageError:
        return None  # the hooks report a contract that does not load
    return approvals.signers_missing(base, lambda paths: git.read_blobs("HEAD", paths))


if __name__ == "__main__":
    raise SystemExit(main())
