"""quarantine-untouched: freeze ledger budgets may only shrink; every freeze is owned, time-boxed and capped.

Every run (also with no base): each entry expires in the future (``--now``)
and has at least one rerun left; no more entries than
``max_active_freezes``; no skip marks in files under the quarantine layer
(default ``tests/quarantine/``), old or new.

Relative to the base contract: no expiry extended; no ``remaining_reruns``
or ``silent_runs_allowed`` raised; no ``max_active_freezes``,
``max_freeze_days`` or ``max_reruns`` raised; no ``seed``, ``repro`` or
``file`` changed on an existing entry; a quarantined test's file not deleted
while its entry exists.  A new entry expires at most ``max_freeze_days``
after now and starts with at most ``max_reruns`` reruns (the base's limits);
with an allowed-signers file at the base it also needs a signed
``freeze-add`` approval (an approval file, or the same SSH signature inline
in the entry's ``signature`` field), otherwise it is printed as a notice for
the reviewer.  Removing entries (graduating) and lowering budgets always pass.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime, timedelta

from oracle_guard.analysis.pysource import Module, SourceError, test_functions
from oracle_guard.contract import contract
from oracle_guard.contract.approvals import Approvals, verify
from oracle_guard.contract.trust import setting_statement
from oracle_guard.repo import changes, git
from oracle_guard.repo.context import HookContext
from oracle_guard.reporting.report import Finding, guarded, notice
from oracle_guard.rules import args as hook_args
from oracle_guard.rules.skipmarks import RULE as SKIP_RULE


def _at(c: contract.Contract, entry: contract.Freeze | None = None) -> tuple[str, int, int]:
    if entry is None:
        return c.path, 1, 1
    return c.path, entry.line or 1, entry.col or 1


def ledger_findings(c: contract.Contract, now: datetime) -> list[Finding]:
    """What is wrong with the ledger on its own, whatever the base."""
    found = []
    for entry in c.freezes:
        if entry.expires_at <= now:
            found.append(
                Finding(
                    *_at(c, entry),
                    "OG601",
                    f"freeze '{entry.id}' expired at {entry.expires}: fix the test or drop the entry",
                )
            )
        if entry.remaining_reruns < 1:
            found.append(
                Finding(
                    *_at(c, entry),
                    "OG602",
                    f"freeze '{entry.id}' has no reruns left (remaining_reruns: {entry.remaining_reruns})",
                )
            )
    if len(c.freezes) > c.max_active_freezes:
        found.append(
            Finding(
                *_at(c),
                "OG603",
                f"{len(c.freezes)} freezes exceed max_active_freezes ({c.max_active_freezes}): fix or drop the oldest",
            )
        )
    return found


def diff_findings(
    base: contract.Contract, new: contract.Contract, now: datetime, approvals: Approvals
) -> list[Finding]:
    found: list[Finding] = []
    for knob in ("max_active_freezes", "max_freeze_days", "max_reruns"):
        old_value, new_value = getattr(base, knob), getattr(new, knob)
        statement = setting_statement(knob, old_value, new_value)
        if new_value > old_value and not approvals.covers(statement):
            found.append(
                Finding(
                    *_at(new), "OG610", f"{knob} raised from {old_value} to {new_value}: {approvals.explain(statement)}"
                )
            )
    old_entries = {e.id: e for e in base.freezes}
    for entry in new.freezes:
        old = old_entries.get(entry.id)
        where = _at(new, entry)
        if old is None:
            found += _new_entry(base, new, entry, now, approvals)
            continue
        if entry.expires_at > old.expires_at:
            found.append(
                Finding(
                    *where,
                    "OG611",
                    f"freeze '{entry.id}' expiry extended from {old.expires} to {entry.expires}: let it expire, then fix",
                )
            )
        if entry.remaining_reruns > old.remaining_reruns:
            found.append(
                Finding(
                    *where,
                    "OG612",
                    f"freeze '{entry.id}' rerun budget raised from {old.remaining_reruns} to {entry.remaining_reruns}",
                )
            )
        if (entry.silent_runs_allowed or 0) > (old.silent_runs_allowed or 0):
            found.append(
                Finding(
                    *where,
                    "OG612",
                    f"freeze '{entry.id}' silent-run budget raised from {old.silent_runs_allowed or 0} to {entry.silent_runs_allowed}",
                )
            )
        for name in ("seed", "repro", "file"):
            if getattr(old, name) != getattr(entry, name):
                found.append(
                    Finding(
                        *where,
                        "OG613",
                        f"freeze '{entry.id}' {name} changed from {getattr(old, name)!r} to {getattr(entry, name)!r}; a new reproduction is a new entry",
                    )
                )
    return found


def _new_entry(
    base: contract.Contract, new: contract.Contract, entry: contract.Freeze, now: datetime, approvals: Approvals
) -> list[Finding]:
    found = []
    where = _at(new, entry)
    days = min(base.max_freeze_days, new.max_freeze_days)  # the patch cannot raise its own limit
    if entry.expires_at > now + timedelta(days=days):
        found.append(
            Finding(*where, "OG614", f"new freeze '{entry.id}' expires {entry.expires}, more than {days} days from now")
        )
    reruns = min(base.max_reruns, new.max_reruns)
    if entry.remaining_reruns > reruns:
        found.append(
            Finding(
                *where,
                "OG615",
                f"new freeze '{entry.id}' starts with {entry.remaining_reruns} reruns; at most {reruns}",
            )
        )
    statement = f"freeze-add {entry.id} {entry.expires} {entry.remaining_reruns}"
    if base.allowed_signers:
        inline = (
            entry.signature
            and approvals.allowed_signers
            and verify(statement, entry.signature, approvals.allowed_signers)
        )
        if not inline and not approvals.covers(statement):
            found.append(Finding(*where, "OG616", f"new freeze '{entry.id}' {approvals.explain(statement)}"))
    else:
        notice(
            f"new freeze '{entry.id}' (owner {entry.owner}, expires {entry.expires}): a reviewer should check it; configure allowed_signers to require a signed approval"
        )
    return found


# -- the quarantine layer -----------------------------------------------------------


def _under(path: str, folders: Sequence[str]) -> bool:
    return any(path.startswith(f.rstrip("/") + "/") for f in folders)


def _layer_files(folders: Sequence[str], target: str | None) -> dict[str, bytes | None]:
    """Python files under the quarantine layer on the new side."""
    specs = [f.rstrip("/") + "/" for f in folders]
    if target:
        out = git.run("ls-tree", "-r", "-z", "--name-only", target, "--", *specs)
        names = [os.fsdecode(n) for n in out.split(b"\0") if n.endswith(b".py")]
        return git.read_blobs(target, names)
    out = git.run("ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *specs)
    names = sorted({os.fsdecode(n) for n in out.split(b"\0") if n.endswith(b".py")})
    return {n: changes.read_worktree_file(n) for n in names}


def layer_findings(c: contract.Contract, target: str | None, base: contract.Contract | None = None) -> list[Finding]:
    """No skip marks at all under the quarantine layer: a frozen test reruns, it is never skipped.

    The base's layer paths count too: moving the layer elsewhere in the same
    patch does not unguard the old folder.
    """
    found = []
    folders = tuple(dict.fromkeys(c.layers.quarantine + (base.layers.quarantine if base else ())))
    for path, data in _layer_files(folders, target).items():
        if data is None or not SKIP_RULE.may_match(data):
            continue
        try:
            module = Module.from_source(path, data)
        except SourceError as exc:
            found.append(exc.finding(path))
            continue
        for occ in SKIP_RULE.occurrences(module):
            found.append(
                Finding(
                    path,
                    occ.line,
                    occ.col,
                    "OG620",
                    f"{occ.message.replace('new ', '', 1)} under the quarantine layer: quarantine reruns a test, it never skips it",
                )
            )
    return found


def deletion_findings(new: contract.Contract, change_set: changes.ChangeSet) -> list[Finding]:
    """A quarantined test's file may not go while its ledger entry stays."""
    found = []
    deleted = set(change_set.deleted)
    for entry in new.freezes:
        named = entry.file or (entry.id.split("::", 1)[0] if "::" in entry.id else None)
        if named and named in deleted:
            found.append(
                Finding(
                    *_at(new, entry),
                    "OG621",
                    f"{named} deleted while its freeze '{entry.id}' exists: graduate or drop the entry first",
                )
            )
    anonymous = [p for p in deleted if p.endswith(".py") and _under(p, new.layers.quarantine)]
    if not anonymous or not new.freezes:
        return found
    for path, data in change_set.read_base(anonymous).items():
        try:
            tree = Module.from_source(path, data).tree if data else None
        except SourceError:
            tree = None
        for qualname, _ in test_functions(tree) if tree else ():
            test_id = f"{path}::{qualname.replace('.', '::')}"
            covering = next((e for e in new.freezes if not e.file and "::" not in e.id and e.covers(test_id)), None)
            if covering is not None:
                found.append(
                    Finding(
                        *_at(new, covering),
                        "OG621",
                        f"{path} deleted while its freeze '{covering.id}' ({qualname}) exists: graduate or drop the covering first",
                    )
                )
    return found


def check(ctx: HookContext) -> list[Finding]:
    change_set = ctx.change_set or changes.ChangeSet(None, "", None)
    new = contract.at_new(change_set.target, ctx.contract)
    base = contract.at_base(change_set.base, ctx.contract)
    if new is None:
        if base is not None and base.freezes:
            return [Finding(ctx.contract, 1, 1, "OG622", "the contract was deleted, and its freeze ledger with it")]
        return []
    findings = (
        ledger_findings(new, ctx.now)
        + layer_findings(new, change_set.target, base)
        + deletion_findings(new, change_set)
    )
    if base is not None:
        findings += diff_findings(base, new, ctx.now, Approvals.load(change_set, base, new))
    else:
        # No contract at the base: the whole ledger is new and held to the new-entry limits.
        adopted = contract.Contract(
            max_active_freezes=new.max_active_freezes, max_freeze_days=new.max_freeze_days, max_reruns=new.max_reruns
        )
        findings += diff_findings(adopted, new, ctx.now, Approvals())
    return findings


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    parser = hook_args.parser("quarantine-untouched", __doc__)
    hook_args.add_filenames(parser, "ignored: the ledger and the quarantine layer are checked whole")
    hook_args.add_base(parser)
    hook_args.add_contract(parser)
    hook_args.add_now(parser, "the current time (ISO-8601 with zone); pin it to the orchestrator's clock in CI")
    hook_args.add_format(parser)
    args = parser.parse_args(argv)
    hook_args.parse_now(args.now)  # a bad --now is the first thing said
    changes.enter_repo([])
    ctx = hook_args.context(args, changes.resolve(args))
    return hook_args.finish(ctx, lambda: check(ctx), "quarantine-untouched")


if __name__ == "__main__":
    raise SystemExit(main())
