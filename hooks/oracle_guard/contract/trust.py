"""The trust settings of the contract: what the base says, changed only with a signed approval.

The allowed-signers file decides which approvals count, the approvals folder
where they are found, and the fixture roots how far a locked path may
resolve.  A patch that could edit them could approve itself, so relative to
the base:

- ``allowed_signers`` repointed or set to null, or the file's bytes changed
  or removed (when the base has one): ``signers-change <sha256 of the new
  file>`` (the sha256 of no bytes when it is removed) and, for the path,
  ``contract-setting allowed_signers <old> <new>``;
- ``approvals`` moved (when the base has signers):
  ``contract-setting approvals <old> <new>``;
- ``fixture_roots`` narrowed (a root dropped or reordered, or a new root
  that holds an old one): ``contract-setting fixture_roots <old> <new>``,
  roots joined by commas, ``[]`` for none;
- the contract deleted: ``contract-setting contract <path> null``.

Adding signers where the base had none, and new roots inside the old ones,
only make the gate stricter and pass.  (Raised freeze budgets are
quarantine-untouched's OG610, approved the same way.)
"""

from __future__ import annotations

import hashlib
from typing import Any

from oracle_guard.reporting.report import Finding

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def spelled(value: Any) -> str:
    """A setting's value as one word in a statement."""
    if value is None:
        return "null"
    if isinstance(value, tuple):
        return ",".join(value) if value else "[]"
    return str(value)


def setting_statement(key: str, old: Any, new: Any) -> str:
    return f"contract-setting {key} {spelled(old)} {spelled(new)}"


def _roots_narrowed(old: tuple[str, ...], new: tuple[str, ...]) -> bool:
    old_n = [r.rstrip("/") for r in old]
    new_n = [r.rstrip("/") for r in new]
    kept = [r for r in new_n if r in old_n]
    if kept != old_n:  # a root dropped, or the order (first match wins) changed
        return True
    added = [r for r in new_n if r not in old_n]
    return any(o == a or o.startswith(a + "/") for a in added for o in old_n)


def setting_findings(base: Any, new: Any, change_set: Any, approvals: Any, path: str) -> list[Finding]:
    """Trust settings the change weakened without a signed approval (OG510-OG512)."""
    if base is None:
        return []
    found: list[Finding] = []

    def need(statement: str, code: str, what: str) -> None:
        if not approvals.covers(statement):
            found.append(Finding(path, 1, 1, code, f"{what}: {approvals.explain(statement)}"))

    if new is None:
        need(
            f"contract-setting contract {path} null",
            "OG512",
            f"the contract {path} was deleted, and every rule in it with it",
        )
        return found
    signers = base.allowed_signers
    base_signers = change_set.read_base([signers]).get(signers) if signers else None
    trusted = bool(base_signers and base_signers.strip())
    if trusted:
        if new.allowed_signers != signers:
            statement = setting_statement("allowed_signers", signers, new.allowed_signers)
            need(
                statement, "OG510", f"allowed_signers changed from {spelled(signers)} to {spelled(new.allowed_signers)}"
            )
        now_path = new.allowed_signers or signers
        untouched = now_path == signers and not change_set.is_changed(signers) and signers not in change_set.deleted
        now = (
            base_signers if untouched else change_set.read_new([now_path]).get(now_path)
        )  # no git process when untouched
        if now != base_signers:
            digest = hashlib.sha256(now or b"").hexdigest()
            what = "removed" if now is None else f"changed (sha256 {digest[:12]}…)"
            need(
                f"signers-change {digest}",
                "OG511",
                f"the allowed-signers file {now_path} was {what}; it decides which approvals count",
            )
        if new.approvals.rstrip("/") != base.approvals.rstrip("/"):
            need(
                setting_statement("approvals", base.approvals, new.approvals),
                "OG510",
                f"approvals folder moved from {base.approvals} to {new.approvals}",
            )
    if _roots_narrowed(base.fixture_roots, new.fixture_roots):
        statement = setting_statement("fixture_roots", base.fixture_roots, new.fixture_roots)
        need(
            statement,
            "OG510",
            f"fixture_roots changed from {spelled(base.fixture_roots)} to {spelled(new.fixture_roots)}, which lets locked paths resolve further",
        )
    return found
