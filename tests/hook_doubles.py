"""A stand-in hook for runner tests: check(ctx) returns the findings its options carry."""

from __future__ import annotations

from oracle_guard.repo.context import HookContext
from oracle_guard.reporting.report import Finding, UsageError


def check(ctx: HookContext) -> list[Finding]:
    if ctx.option("error"):
        raise UsageError(ctx.option("error"))
    return list(ctx.option("findings", ()))
