"""Signed approvals for the static findings: a deliberate change gets through.

    skip-add <node id>         a new skip, xfail or early return (OG101, OG201, OG202)
    check-removed <node id>    fewer checks, lost cases, @given or @example removed (OG301, OG307, OG310, OG311)
    expected-change <node id>  an expectation changed on purpose (OG303, OG304, OG306, OG309, OG312-OG314, OG316)
    test-retire <node id>      a test removed (OG302; the same statement collection-snapshot takes for OG801)

The node id is the test the finding sits in, as pytest names it without
parameters: ``tests/test_price.py::TestPrice::test_parse``.  An approval
covers every finding of its kind in that test for the change it is committed
with (it is verified against the base's allowed signers, like every other).
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Callable

from oracle_guard.reporting.report import Finding

if TYPE_CHECKING:
    from oracle_guard.repo.context import HookContext

KIND = {
    **dict.fromkeys(("OG101", "OG201", "OG202"), "skip-add"),
    **dict.fromkeys(("OG301", "OG307", "OG310", "OG311"), "check-removed"),
    **dict.fromkeys(("OG303", "OG304", "OG306", "OG309", "OG312", "OG313", "OG314", "OG316"), "expected-change"),
}


def node_id_at(ctx: HookContext, path: str, line: int) -> str | None:
    """The test (function or method, innermost) around LINE of PATH's new version."""
    from oracle_guard.analysis import pysource
    from oracle_guard.repo import changes

    reader = ctx.change_set or changes.ChangeSet(None, "", None)
    data = reader.read_new([path]).get(path)
    if data is None:
        return None
    try:
        tree = pysource.parse(data, path)
    except pysource.SourceError:
        return None
    found: list[str] | None = None

    def visit(body: list[ast.stmt], outer: list[str]) -> None:
        nonlocal found
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                if start <= line <= (node.end_lineno or node.lineno):
                    here = [*outer, node.name]
                    if not isinstance(node, ast.ClassDef):
                        found = here
                    visit(node.body, here)

    visit(tree.body, [])
    return "::".join([path, *found]) if found else None


_REMOVED = re.compile(r"^test (\S+) was removed")
_AT_BASE = re.compile(r"\(base (\S+?):\d+")


def statement_for(ctx: HookContext, finding: Finding) -> str | None:
    if finding.code == "OG302":  # the test is gone: its id is where it stood at the base
        removed = _REMOVED.match(finding.message)
        where = _AT_BASE.search(finding.message)
        if removed is None:
            return None
        return f"test-retire {where.group(1) if where else finding.path}::{removed.group(1).replace('.', '::')}"
    kind = KIND.get(finding.code)
    if kind is None:
        return None
    node_id = node_id_at(ctx, finding.path, finding.line)
    return f"{kind} {node_id}" if node_id else None


def unapproved(ctx: HookContext, findings: list[Finding]) -> list[Finding]:
    """FINDINGS less those a signed approval in the change covers (signatures checked only if one could)."""
    if (
        ctx.change_set is None
        or ctx.change_set.base is None
        or not any(f.code in KIND or f.code == "OG302" for f in findings)
    ):
        return findings
    covers: Callable[[str], bool] | None = None
    kept = []
    for finding in findings:
        statement = statement_for(ctx, finding)
        if statement is not None:
            if covers is None:
                covers = _loader(ctx)
            if covers(statement):
                continue
        kept.append(finding)
    return kept


def _loader(ctx: HookContext) -> Callable[[str], bool]:
    from oracle_guard.contract import contract
    from oracle_guard.contract.approvals import Approvals

    change_set = ctx.change_set
    assert change_set is not None and change_set.base is not None
    base = contract.base_from(change_set.read_contract_base(ctx.contract, contract.bytes_at_base), ctx.contract)
    if base is None:
        return lambda statement: False  # no contract at the base: no allowed signers, nothing approved
    new = contract.at_new(change_set.target, ctx.contract)
    return Approvals.load(change_set, base, new).covers
