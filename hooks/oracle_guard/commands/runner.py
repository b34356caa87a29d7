"""Run registered hooks on one resolved change, in one process.

Used by `oracle-guard check` (the merge gate) and by the one-process
pre-commit hook `oracle-guard`.  collection-snapshot is prepared first, so
pytest collects while the static hooks read the change; every finding is
printed once however many hooks see it, and every error once however many
hooks hit it.
"""

from __future__ import annotations

import functools
import re
import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any, Callable, NamedTuple, Protocol

from oracle_guard.hook_ids import registry
from oracle_guard.repo.context import HookContext
from oracle_guard.repo.paths import PYTHON_SUFFIXES
from oracle_guard.reporting import report
from oracle_guard.reporting.report import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, Finding, UsageError

GROUP_AT = 6  # this many findings with one code in one file are shown as a group
GROUP_SHOWN = 3


class Plan(NamedTuple):
    hook: registry.Hook
    ctx: HookContext


class Outcome(NamedTuple):
    results: list[tuple[str, Finding]]  # (hook id, finding), in hook order, each once
    errors: list[str]  # one line each, each once
    written: list[str]
    steps: dict[Finding, str] = {}  # the next step per finding, with its exact approval command


def ids(text: str) -> list[str]:
    return [h.strip() for h in text.split(",") if h.strip()]


def selection(only: str, skip: str) -> tuple[list[str], set[str]]:
    """--only and --skip: the hooks to run (registry order) and those to skip; unknown ids are an error."""
    wanted = ids(only) or [h.id for h in registry.HOOKS if not h.opt_in]
    skipped = set(ids(skip))
    unknown = sorted((set(wanted) | skipped) - set(registry.BY_ID))
    if unknown:
        raise UsageError(f"unknown hook id {', '.join(unknown)} (known: {', '.join(registry.BY_ID)})")
    return wanted, skipped


class PytestRun(Protocol):
    """collection-snapshot's pytest run in flight (the STARTED list holds it): abandoned if anything fails."""

    def abandon(self) -> None: ...


def plans(
    base: HookContext,
    wanted: Sequence[str],
    skipped: set[str],
    tests: list[str],
    deleted_tests: list[str],
    started: list[tuple[PytestRun, object]],
    gate: bool = True,
    write_snapshot: bool = False,
    python: str | None = None,
) -> list[Plan]:
    """One context per hook that has something to look at."""
    result = []
    for hook_id in wanted:
        hook = registry.BY_ID[hook_id]
        if hook.opt_in:
            continue  # run by its caller (check --replay), not through check(ctx)
        options: dict[str, object] = {}
        if hook.id == "collection-snapshot":
            # The gate never writes a first snapshot: pytest runs only where one is committed.
            # and, unless told to, never writes one at all: an out-of-date snapshot fails it.
            options = {"if_snapshot": gate, "no_write": gate and not write_snapshot, "started": started}
            if python:
                options["python"] = python
        if hook_id in skipped:
            if hook.id != "collection-snapshot":
                continue
            # Skipping the meta hook skips pytest; comparing the configuration that
            # hides tests needs nothing and still runs (`--only` leaves it out).
            options = {"static_only": True}
        if hook.files and not tests and not (hook.deleted and deleted_tests):
            continue  # oracle-shrink also judges a change that only deletes test files
        filenames = tuple(tests) if hook.files else ()
        result.append(Plan(hook, base._replace(filenames=filenames, options=options, written=[])))
    return result


def run(planned: Sequence[Plan], started: list[tuple[PytestRun, object]]) -> Outcome:
    """Every plan's findings; collection-snapshot's pytest runs while the others work."""
    per_hook: dict[str, list[Finding]] = {}
    errors: list[str] = []
    pending: list[tuple[str, Callable[[], list[Finding]]]] = []

    def attempt(hook_id: str, call: Callable[[], list[Finding]]) -> None:
        try:
            per_hook.setdefault(hook_id, []).extend(call())
        except UsageError as exc:
            if str(exc) not in errors:
                errors.append(str(exc))
        sys.stdout.flush()

    try:
        for plan in planned:  # pytest first: it is the long pole
            if plan.hook.id == "collection-snapshot":
                from oracle_guard.hook_ids import collection_snapshot

                def later(ctx: HookContext = plan.ctx) -> list[Finding]:
                    finish = collection_snapshot.prepare(ctx)
                    pending.append(("collection-snapshot", finish))
                    return []

                attempt(plan.hook.id, later)
        if planned:
            prefetch(planned[0].ctx)
        for plan in planned:
            if plan.hook.id != "collection-snapshot":
                attempt(plan.hook.id, functools.partial(_check_one, plan))
        for hook_id, finish in pending:
            attempt(hook_id, finish)
    except BaseException:
        for pytest_run, _ in started:
            pytest_run.abandon()
        raise

    seen: set[Finding] = set()
    results = []
    for plan in planned:  # registry order, sorted within a hook, as the hooks print them
        for finding in sorted(set(per_hook.get(plan.hook.id, []))):
            if finding not in seen:
                seen.add(finding)
                results.append((plan.hook.id, finding))
    written = [p for plan in planned for p in plan.ctx.written]
    return Outcome(results, errors, written, next_steps(planned[0].ctx, results) if planned else {})


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


_NODE_ID = re.compile(r"(\S+\.pyi?::[^\s;]+)")
_BEHAVIOR = re.compile(r"approve behavior-change (\S+)`")


def _check_one(plan: Plan) -> list[Finding]:
    return plan.hook.check()(plan.ctx)


def prefetch(ctx: HookContext) -> None:
    """Both sides of every changed Python file and the contract in one git process each; the hooks then read the cache."""
    change_set = ctx.change_set
    if change_set is None:
        return
    paths = [p for p in change_set.changed_paths if p.endswith(PYTHON_SUFFIXES)] + [ctx.contract]
    olds = [o for o in (change_set.old_path(p) for p in paths) if o]
    change_set.read_base(olds + [p for p in change_set.deleted if p.endswith(PYTHON_SUFFIXES)])
    if change_set.target:
        change_set.read_new(paths)


def emit(fmt: str, outcome: Outcome, extra: dict[str, Any] | None = None) -> int:
    """Print the outcome in FMT; the exit code (1 for any finding or rewritten file, else 2 for any error).

    EXTRA: more keys of the JSON document (a shard's ``shard``, commands/shards.py).
    """
    for error in outcome.errors:
        print(f"oracle-guard: error: {error}", file=sys.stderr)
    # A finding (or a rewritten file) is 1 even beside a part that could not run: its error is printed all the same.
    code = EXIT_FINDINGS if outcome.results or outcome.written else EXIT_USAGE if outcome.errors else EXIT_CLEAN
    if fmt in report.DOCUMENT_FORMATS:
        from oracle_guard.reporting import output

        output.print_document(fmt, outcome.results, outcome.errors, report.taken_notices(), outcome.steps, code, extra)
    elif fmt == "agent":
        from oracle_guard.reporting import output

        output.print_agent(outcome.results, outcome.errors, outcome.steps, outcome.written)
    elif fmt == "github":
        for _, finding in outcome.results:
            print(finding.github())
    else:
        print_text(outcome.results, outcome.steps)
    return code


SUCCESS_FORMATS = ("text", "github")  # json and sarif are one document on stdout; agent says it in its own words


def success(fmt: str, quiet: bool, hooks: int, also: Sequence[str] = (), where: str = "") -> None:
    """The one line that says a clean run was a run (like ruff's "All checks passed!"); -q silences it."""
    if quiet or fmt not in SUCCESS_FORMATS:
        return
    ran = [f"{hooks} hook{'s' if hooks != 1 else ''}"] if hooks else []
    what = " and ".join([*ran, *also]) or "no hook had anything to check"
    print(f"oracle-guard: all checks passed ({what}{where})")


def merged(first: Outcome, second: Outcome) -> Outcome:
    """Two outcomes of one run (the hooks', then the replay's) as one, to print one document."""
    seen = {f for _, f in first.results}
    results = first.results + [(h, f) for h, f in second.results if f not in seen]
    errors = first.errors + [e for e in second.errors if e not in first.errors]
    return Outcome(results, errors, first.written + second.written, {**first.steps, **second.steps})


def print_text(results: Sequence[tuple[str, Finding]], steps: dict[Finding, str] | None = None) -> None:
    """Each finding and its next step, many alike in one file as a group, then a count per code."""
    groups = Counter((f.path, f.code) for _, f in results)
    # Tests that vanish or skip together usually share a configuration change (OG85x) found in the same run.
    causes = [f for _, f in results if f.code.startswith("OG85")]
    shown: Counter[tuple[str, str]] = Counter()
    for _, finding in results:
        key = (finding.path, finding.code)
        shown[key] += 1
        if groups[key] < GROUP_AT or shown[key] <= GROUP_SHOWN:
            print(finding.text())
            if steps and finding in steps:
                print(f"    next: {steps[finding]}")
        elif shown[key] == GROUP_SHOWN + 1:
            cause = (
                f"likely one cause, {causes[0].code} at {causes[0].path}:{causes[0].line}"
                if causes and finding.code in ("OG801", "OG802")
                else "likely one cause"
            )
            # Worded so that no line but a finding's reads `path:...: OGnnn` (tools count those).
            print(
                f"{finding.path}: and {groups[key] - GROUP_SHOWN} more {finding.code} like these ({cause}; --format json lists each)"
            )
    if results:
        counts = Counter(f.code for _, f in results)
        print(
            f"oracle-guard: {len(results)} finding{'s' if len(results) != 1 else ''} ("
            + ", ".join(f"{code} x{n}" for code, n in sorted(counts.items()))
            + ")"
        )
