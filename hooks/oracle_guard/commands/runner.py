"""Run registered hooks on one resolved change, in one process.

Used by `oracle-guard check` (the merge gate) and by the one-process
pre-commit hook `oracle-guard`.  collection-snapshot is prepared first, so
pytest collects while the static hooks read the change; every finding is
printed once however many hooks see it, and every error once however many
hooks hit it.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from typing import Any, Callable, NamedTuple, Protocol

from oracle_guard.hook_ids import registry
from oracle_guard.repo import changes, nesting
from oracle_guard.repo.context import HookContext
from oracle_guard.repo.paths import PYTHON_SUFFIXES
from oracle_guard.reporting import verdict
from oracle_guard.reporting.report import ChangeCaused, Finding, UsageError
from oracle_guard.rules.next_steps import next_steps as next_steps

GROUP_AT = verdict.GROUP_AT  # this many findings with one code in one file are shown as a group
print_text = verdict.print_text


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
        except changes.TooBig as exc:  # the change's file: judged against it (OG929), never "not judged"
            per_hook.setdefault(hook_id, []).append(exc.finding())
        except ChangeCaused as exc:  # a stop the change's files brought about: judged against it
            per_hook.setdefault(hook_id, []).append(exc.finding)
        except RecursionError:  # the change's file, when one nests that deep (OG928); else exit 2 as before
            deep = nesting.too_deep(planned[0].ctx.change_set if planned else None)
            if deep is None:
                raise
            per_hook.setdefault(hook_id, []).append(deep)
        except UsageError as exc:
            from oracle_guard.contract import broken as contract_broken  # only on a stop: PyYAML stays unimported

            ctx = planned[0].ctx if planned else None
            broken = contract_broken.finding(ctx.change_set, ctx.contract, exc) if ctx else None
            if broken is not None:  # the change's contract does not load: judged against it (OG927)
                per_hook.setdefault(hook_id, []).append(broken)
            elif str(exc) not in errors:
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


def emit(fmt: str, outcome: Outcome, extra: dict[str, Any] | None = None, tail: str = "") -> int:
    """Print the outcome in FMT (reporting/verdict.py); the exit code.

    EXTRA: more keys of the JSON document (a shard's ``shard``, commands/shards.py). TAIL: said after the count.
    """
    return verdict.emit(fmt, outcome.results, outcome.errors, outcome.steps, outcome.written, extra, tail)


SUCCESS_FORMATS = ("text", "github")  # json and sarif are one document on stdout; agent says it in its own words


def not_run(
    wanted: Sequence[str], skipped: set[str], planned: Sequence[Plan], opt_in: str, also_ran: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """(hook id, why) for each registered hook that did not run on this change; OPT_IN: why an opt-in hook did not."""
    ran = {p.hook.id for p in planned} | set(also_ran)
    why_not = []
    for hook in registry.HOOKS:
        if hook.id in ran:
            continue
        if hook.opt_in:
            why = opt_in
        elif hook.id in skipped:
            why = "--skip"
        elif hook.id not in wanted:
            why = "not in --only"
        elif hook.files:
            why = "no test file changed"
        else:
            why = "nothing to check"
        why_not.append((hook.id, why))
    static_only = [p.hook.id for p in planned if p.ctx.option("static_only")]
    return why_not + [(f"{hook_id}'s pytest run", "--skip") for hook_id in static_only]  # its configuration check ran


def success(
    fmt: str,
    quiet: bool,
    hooks: int,
    also: Sequence[str] = (),
    where: str = "",
    skipped: Sequence[tuple[str, str]] = (),
    tail: str = "",
) -> None:
    """The one line that says a clean run was a run (like ruff's "All checks passed!"); -q silences it.

    It names what ran (HOOKS hooks, and ALSO), what did not and why (SKIPPED: hook id, why), and TAIL:
    what else the run found out (a red base's fate).
    """
    if quiet or fmt not in SUCCESS_FORMATS:
        return
    ran = [f"{hooks} hook{'s' if hooks != 1 else ''}"] if hooks else []
    what = " and ".join([*ran, *also]) or "no hook had anything to check"
    by_reason: dict[str, list[str]] = {}
    for hook_id, why in skipped:
        by_reason.setdefault(why, []).append(hook_id)
    if by_reason:
        told = [f"{_and(ids)} ({why})" for why, ids in by_reason.items()]
        where += f"; not run: {', '.join(told)}"
    print(f"oracle-guard: all checks passed ({what}{where}){f'; {tail}' if tail else ''}")


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def merged(first: Outcome, second: Outcome) -> Outcome:
    """Two outcomes of one run (the hooks', then the replay's) as one, to print one document."""
    seen = {f for _, f in first.results}
    results = first.results + [(h, f) for h, f in second.results if f not in seen]
    errors = first.errors + [e for e in second.errors if e not in first.errors]
    return Outcome(results, errors, first.written + second.written, {**first.steps, **second.steps})
