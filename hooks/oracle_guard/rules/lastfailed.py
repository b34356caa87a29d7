"""Say first when a weakening finding is on a test pytest last saw fail (oracle_guard.repo.lastfailed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from oracle_guard.repo import lastfailed
from oracle_guard.reporting.report import Finding

if TYPE_CHECKING:
    from oracle_guard.repo.context import HookContext

# Findings that weaken one test (its marks, its checks, its expected values, its stand-ins).
WEAKENINGS = frozenset(("OG101", "OG201", "OG202") + tuple(f"OG3{n:02d}" for n in range(1, 17)))


def mark(ctx: HookContext, findings: list[Finding]) -> list[Finding]:
    """FINDINGS, those on a test that was failing with the message led by lastfailed.FAILING."""
    if not findings or not any(f.code in WEAKENINGS for f in findings):
        return findings
    ids = lastfailed.failing()
    if not ids:
        return findings
    from oracle_guard.rules import static_approvals

    out = []
    for finding in findings:
        node_id = None
        if finding.code == "OG302":
            statement = static_approvals.statement_for(ctx, finding)
            node_id = statement.split(" ", 1)[1] if statement else None
        elif finding.code in WEAKENINGS:
            node_id = static_approvals.node_id_at(ctx, finding.path, finding.line)
        if node_id is not None and node_id in ids and not finding.message.startswith(lastfailed.FAILING):
            finding = finding._replace(message=lastfailed.FAILING + finding.message)
        out.append(finding)
    return out
