"""The next step of each finding of one run, with the exact approval command where one is offered.

`check`, the one-process hook and `oracle-guard replay` print it under each finding (`next:`) and put it
in their documents (`fix`), whichever layer found it: a static hook, collection-snapshot, the replay or
the mutation differential.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from oracle_guard.repo.context import HookContext
from oracle_guard.reporting.report import Finding, UsageError

_NODE_ID = re.compile(r"(\S+\.pyi?::[^\s;]+)")
_BEHAVIOR = re.compile(r"approve behavior-change (\S+)`")


def next_steps(ctx: HookContext, results: Sequence[tuple[str, Finding]]) -> dict[Finding, str]:
    from oracle_guard.reporting import hints
    from oracle_guard.rules import static_approvals

    steps = {}
    for _, finding in results:
        statement = static_approvals.statement_for(ctx, finding)
        node_id = statement.partition(" ")[2] if statement else None
        if node_id is None and finding.code in ("OG801", "OG802"):  # collection-snapshot names the test
            named = _NODE_ID.search(finding.message)
            node_id = named.group(1) if named else None
        if node_id is None and finding.code.startswith("OG90"):  # the replay names what to approve
            named = _BEHAVIOR.search(finding.message)
            node_id = named.group(1) if named else None
        steps[finding] = hints.next_step(finding.code, node_id)
    offered = [f for f, step in steps.items() if hints.needs_approval(step) and "allowed-signers" not in f.message]
    if offered:
        missing = _signers_missing(ctx)
        if missing is not None:
            for finding in offered:
                steps[finding] = f"{steps[finding]}; {hints.no_signers_yet(finding.code, missing or None)}"
    return steps


def _signers_missing(ctx: HookContext) -> str | None:
    """None when the base has an allowed-signers file; else the path its contract names ("" for none).

    An approval hint that leads nowhere is a dead end: without that file at the base no approval verifies.
    """
    from oracle_guard.contract import approvals, contract

    change_set = ctx.change_set
    if change_set is None or change_set.base is None:
        return ""  # nothing committed yet: no base, no signers
    try:
        base = contract.base_from(change_set.read_contract_base(ctx.contract, contract.bytes_at_base), ctx.contract)
    except UsageError:
        return None  # the contract's own error is reported by the hooks that read it
    return approvals.signers_missing(base, change_set.read_base)
