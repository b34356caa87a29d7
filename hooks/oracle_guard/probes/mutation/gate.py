"""The mutation differential: the new tests must still catch every bug the base's tests caught.

    oracle-guard check --mutate --base origin/main

When a change edits or deletes test code, the base versions of the test
modules it touched run on the base tree with a line tracer; every statement
they run in a production function is mutated (probes/mutation/mutants.py).  Each
mutant runs against the base's tests and, if they catch it, against the new
tests (the new versions of the touched modules and the test modules the
change adds, in the new tree); a mutant they let live is looked for once more
in the whole new suite, and then both sides run it again.  A mutant the base
caught twice and the new suite missed twice is a finding (OG910); one whose
verdict changed between two runs on a side is a notice; one the base's tests
never caught (an equivalent mutant, or a gap that was already there) is never
reported.  Budgets: ``--mutate-max`` mutants (the same ones for the same
change: the lowest hashes of their stable keys) and ``--mutate-timeout``
seconds; what was not run is a notice, never a pass.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from collections.abc import Sequence

from oracle_guard.probes.mutation import budget, priority, survivors, touched
from oracle_guard.probes.mutation import mutants as mutant_gen
from oracle_guard.probes.mutation import run as mutation_run
from oracle_guard.probes.mutation.covers import _cover_within, _ran
from oracle_guard.probes.mutation.fresh import FRESH_MAX, FreshSides, fresh_base_side, fresh_new_side
from oracle_guard.probes.mutation.run import BudgetSpent, Cover, Server, Verdict
from oracle_guard.probes.mutation.run import job as _job
from oracle_guard.pytest_side import barrier, generated, ground, scratch
from oracle_guard.repo import changes, git
from oracle_guard.repo.interpreters import ChosenByChange, candidate_interpreters, no_pytest
from oracle_guard.reporting.report import Finding, UsageError, notice

CODE = "OG910"
VERB = "mutants-released"
Pair = tuple[mutant_gen.Mutant, mutant_gen.Mutant]  # (base mutant, its twin in the new tree)


def statement(node: str) -> str:
    return f"{VERB} {node}"


class _Sides:
    """The two scratch trees: the base revision, and the base with the whole change laid over it."""

    def __init__(self, change_set: changes.ChangeSet) -> None:
        assert change_set.base is not None
        self.scratch = scratch.Scratch()
        scratch.export(change_set.base, self.scratch.base, self.scratch.new)
        new = self.scratch.new
        for path in change_set.deleted:
            target = os.path.join(new, path)
            if os.path.lexists(target) and not os.path.isdir(target):
                os.unlink(target)
        blobs = change_set.read_new(change_set.changed_paths)
        for change in change_set.changes:
            if change.old_path and change.old_path != change.path:
                target = os.path.join(new, change.old_path)
                if os.path.lexists(target) and not os.path.isdir(target):
                    os.unlink(target)
            if not change.path:
                continue
            target = os.path.join(new, change.path)
            if os.path.lexists(target) and not os.path.isdir(target):
                os.unlink(target)  # never write through a link
            data = blobs.get(change.path)
            if data is not None:
                os.makedirs(os.path.dirname(target) or new, exist_ok=True)
                with open(target, "wb") as f:
                    f.write(data)
        generated.lay(self.scratch.generated_modules(change_set.base), [self.scratch.base])
        generated.lay(self.scratch.generated_for_change(change_set), [new])
        self.work = mutation_run.work_dir(self.scratch.root)

    def cleanup(self) -> None:
        shutil.rmtree(self.scratch.root, ignore_errors=True)


def run(args: argparse.Namespace, change_set: changes.ChangeSet, contract_path: str) -> list[Finding]:
    """OG910 findings for the change (notices for what was not judged)."""
    started = time.monotonic()
    deadline = started + args.mutate_timeout
    if change_set.base is None:
        notice("mutation: nothing to compare: there is no base revision yet")
        return []
    from oracle_guard.contract import contract

    side = scratch.TestSide(change_set.base, contract_path, contract.at_base(change_set.base, contract_path))
    the_plan = scratch.plan(change_set, side)
    if not the_plan.modules and not the_plan.everything:
        notice("mutation: nothing to compare: the change edits and deletes no test code the base had")
        return []
    listed = git.run("ls-tree", "-r", "-z", "--name-only", change_set.base)
    production = sorted(
        p for p in (os.fsdecode(n) for n in listed.split(b"\0") if n) if p.endswith(".py") and not side(p)
    )
    if not production:
        notice("mutation: nothing to mutate: the base has no production Python files")
        return []
    # Traced on every tree: the new tree's production files too (a module renamed or added by the change),
    # or a twin mutant in `_hooks.py` would find no test that ran it there and pass for one the tests let live.
    production = sorted(
        set(production) | {c.path for c in change_set.changes if c.path and c.path.endswith(".py") and not side(c.path)}
    )
    base_modules = [] if the_plan.everything else the_plan.modules
    base_selection = [] if the_plan.everything else _touched_tests(change_set, the_plan.modules)
    # The new side: [] is the whole suite (a conftest, helper or configuration changed); None: no test
    # module is left in the change (all deleted), so only the rest of the suite can still catch anything.
    new_selection: list[str] | None = (
        []
        if the_plan.everything
        else sorted(p for p in change_set.changed_paths if scratch.TEST_MODULE.search(p) and side(p)) or None
    )
    unsound = ground.before_judging(getattr(args, "python", None))
    if unsound:
        return unsound
    sides = _Sides(change_set)
    where = (new_selection or base_modules or [production[0]])[0]
    try:
        with barrier.guarding(barrier.Barrier(sides.scratch.base, sides.scratch.root, sides.work)):
            return _judge(
                args,
                change_set,
                contract_path,
                sides,
                production,
                (base_selection, base_modules),
                new_selection,
                deadline,
                the_plan,
            )
    # What the change's code brought about in the gate's runs is judged against it (pytest_side/ground.py).
    except ChosenByChange as exc:
        return [ground.chosen(exc)]
    except barrier.Breach as exc:
        return [ground.breach(exc, where)]
    except barrier.Hung as exc:
        return [ground.hung(exc, where)]
    except ground.NotRunHere as exc:
        return [ground.scratch_only(exc.what, where, exc.exit_code, exc.tail)]
    except survivors.Ended as exc:
        return [Finding(where, 1, 1, "OG930", str(exc))]
    finally:
        sides.cleanup()


def _touched_tests(change_set: changes.ChangeSet, modules: list[str]) -> list[str]:
    """The base side's selection: of each module edited in place, the tests the change edited or deleted
    when that is all it changed there (touched.py); the whole module otherwise (moved, deleted, anything else)."""
    in_place = [m for m in modules if any(c.old_path == m and c.path == m for c in change_set.changes)]
    base, new = change_set.read_base(in_place), change_set.read_new(in_place)
    selection: list[str] = []
    for module in modules:
        before, after = base.get(module), new.get(module)
        tests = touched.touched_tests(module, before, after) if before is not None and after is not None else None
        selection.extend(tests if tests is not None else [module])
    return selection


def _python(explicit: str | None) -> str:
    candidates = candidate_interpreters(explicit, dict(os.environ))
    if not candidates:
        raise UsageError("found no Python interpreter for this project; pass --python PATH")
    return candidates[0][0]


def _judge(
    args: argparse.Namespace,
    change_set: changes.ChangeSet,
    contract_path: str,
    sides: _Sides,
    production: list[str],
    base_selections: tuple[list[str], list[str]],
    new_selection: list[str] | None,
    deadline: float,
    the_plan: scratch.Plan,
) -> list[Finding]:
    python = _python(getattr(args, "python", None))
    tree, work = sides.scratch, sides.work
    servers: list[Server] = []
    base_selection, base_modules = base_selections
    # The base side first and alone, then the new tests, never both at once (pytest_side/barrier.py):
    # the new tests run code of the change that could write where the base reads or stop its server.
    begun = time.monotonic()
    try:
        # The base keeps going past its own collection errors: what collects there is judged (a notice names the rest).
        base = Server(python, tree.base, production, base_selection, work, "base", keep_going=True)
        servers.append(base)
        base_cover = base.cover(deadline)
        if base_selection != base_modules and (not base_cover.covered or not base_cover.tests):
            # pytest did not take the touched tests by node id (a class it does not collect, say): the whole modules
            base_selection = base_modules
            base = Server(python, tree.base, production, base_selection, work, "base-modules", keep_going=True)
            servers.append(base)
            base_cover = base.cover(deadline)
        if base_cover.exit_code == _no_pytest():
            raise UsageError(no_pytest([(python, base_cover.tail)]))
        _ran(base_cover, f"the base's tests at {change_set.base_label}", python)
        red_modules = frozenset(base_cover.errors)
        if red_modules:
            notice(
                f"oracle-mutate: {len(red_modules)} test module(s) do not collect at {change_set.base_label} "
                f"({', '.join(sorted(red_modules)[:3])}{', ...' if len(red_modules) > 3 else ''}): "
                "their tests are not judged; the mutants are judged with the tests that collect"
            )
        if not base_cover.tests and red_modules:
            return []  # nothing the change touched collects at the base: no test there to weaken (said above)
        if not base_cover.tests:
            raise UsageError(
                f"no selected test runs at {change_set.base_label} in {python} (pytest exited {base_cover.exit_code}: {base_cover.tail or 'no output'}); is the project installed in that interpreter?"
            )
        if not any(t.ok for t in base_cover.tests):
            # A red base: a test that fails there catches no mutant, so there is nothing to compare.
            notice(
                f"oracle-mutate: no selected test passes at {change_set.base_label}: the {len(base_cover.tests)} red there are left out"
            )
            return []
        red_at_base = sum(1 for t in base_cover.tests if not t.ok)
        if red_at_base:
            notice(f"oracle-mutate: {red_at_base} test(s) red at {change_set.base_label} are left out")
        changed_tests = base_selection or _touched_tests(change_set, the_plan.modules)
        changed_files = sorted({c.old_path for c in change_set.changes if c.old_path} & set(production))
        pairs, only_at_import = _pairs(args, change_set, base_cover, changed_tests, changed_files)
        # The base's mutants get a share of the budget; the rest is for the new side and the second runs.
        cover_seconds = time.monotonic() - begun
        base_deadline = budget.share(deadline, cover_seconds, 2 if new_selection == [] else 3)
        base_verdicts = _base_side(base, base_cover, pairs, base_deadline)
        at_base = survivors.AtBase(base_verdicts, base.gone)
        caught = [p for p in pairs if base_verdicts[p[0].key].verdict == "killed"]
        at_import = [
            p
            for p in pairs
            if _runs_at_import(base_cover, p[0]) and base_verdicts[p[0].key].verdict in ("survived", "unreached")
        ] + only_at_import
        # A fresh run only says pass or fail: it traces nothing.
        sides_of = FreshSides(python, tree, [], work, base_cover, None, base_deadline)
        fresh_base = fresh_base_side(sides_of, at_import) if at_import else []
        _close(servers)
        # The new side: the touched tests, then the whole new suite for what they let live, each candidate twice.
        new: Server | None = None
        new_cover: Cover | None = None
        candidates = caught
        try:
            if new_selection is not None and (caught or any(fresh_base)):
                new = Server(
                    python,
                    tree.new,
                    budget.traced(caught + at_import, new=True),
                    new_selection,
                    work,
                    "new",
                    side="new",
                    keep_going=bool(red_modules),
                )
                servers.append(new)
                began = time.monotonic()
                new_cover = _ran(
                    _cover_within(new, base_cover, deadline), "the new tests", python, red_modules, new=True
                )
                # Its finds need confirming: it stops in time for three runs like this one (the base's traced all).
                stop = budget.share(deadline, time.monotonic() - began)
                candidates = survivors.survivors(new, new_cover, caught, deadline, at_base, stop) if caught else []
            if candidates and new_selection != []:
                # The tests the change touched let these live (or none is left): perhaps a test elsewhere catches them.
                new = Server(
                    python,
                    tree.new,
                    budget.traced(candidates + at_import, new=True),
                    [],
                    work,
                    "new-all",
                    side="new",
                    keep_going=bool(red_modules),
                )
                servers.append(new)
                began = time.monotonic()
                new_cover = _ran(
                    _cover_within(new, base_cover, deadline), "the new suite", python, red_modules, new=True
                )
                stop = budget.share(deadline, time.monotonic() - began)
                candidates = survivors.survivors(new, new_cover, candidates, deadline, at_base, stop)
        except BudgetSpent:
            notice(
                f"mutation: the budget (--mutate-timeout {args.mutate_timeout:g}) ran out before the new tests ran once: "
                f"the {len(caught)} mutant(s) the base's tests caught were not run against them: not judged, neither caught nor passed"
            )
            return []
        still = (
            survivors.survivors(new, new_cover, candidates, deadline)
            if candidates and new is not None and new_cover is not None
            else candidates
        )
        _close(servers)
        if candidates:  # once more at the base, in a fresh server: the new tests ran since the first
            candidates = _confirm(
                python,
                tree.base,
                budget.traced(candidates),
                base_selection,
                work,
                base_cover,
                candidates,
                still,
                deadline,
            )
        if candidates and the_plan.production:
            candidates = _same_code(
                python,
                change_set,
                the_plan,
                sides,
                budget.traced(candidates, new=True),
                base_selection,
                candidates,
                deadline,
                red_modules,
            )
        if at_import:
            candidates += fresh_new_side(
                sides_of._replace(new_cover=new_cover, deadline=deadline), at_import, fresh_base, base_verdicts
            )
    finally:
        _close(servers)
    ran = [v for v in base_verdicts.values() if v.verdict != "unrun"]
    killed = sum(1 for v in ran if v.verdict == "killed")
    notice(
        f"mutation: {python} ran {len(ran)} mutant(s) in {len(production)} production file(s) in {time.monotonic() - (deadline - args.mutate_timeout):.1f} s: the base's tests caught {killed}, the new tests let {len(candidates)} of those live"
    )
    budget.left(args, base_verdicts, pairs)
    invalid = sum(1 for v in ran if v.verdict == "invalid")
    if invalid:
        notice(f"mutation: {invalid} mutant(s) could not be applied (no such function at run time, or no compile)")
    return _findings(change_set, contract_path, base_verdicts, base_cover, candidates)


BATCH = 8  # mutants per batch sent to a server


def _close(servers: list[Server]) -> None:
    while servers:
        servers.pop().close()


def _base_side(base: Server, base_cover: Cover, pairs: Sequence[Pair], deadline: float) -> dict[str, Verdict]:
    """The base's verdict of every pair, all batches sent at once (the new side runs after, on what it caught)."""
    chunks = [list(pairs[i : i + BATCH]) for i in range(0, len(pairs), BATCH)]
    sent = [(base.submit(jobs, deadline), jobs) for jobs in ([_job(b, base_cover, b) for b, _ in c] for c in chunks)]
    verdicts: dict[str, Verdict] = {}
    for batch, jobs in sent:
        verdicts.update(base.verdicts(batch, jobs, deadline))
    return verdicts


def _confirm(
    python: str,
    base_tree: str,
    production: list[str],
    base_selection: list[str],
    work: str,
    base_cover: Cover,
    pairs: list[Pair],
    still: list[Pair],
    deadline: float,
) -> list[Pair]:
    """Each candidate once more on both sides (STILL: the new side's second run); a changed verdict is a notice."""
    jobs = [_job(b, base_cover, b, generous=True) for b, _ in pairs]
    server = Server(
        python, base_tree, production, base_selection, work, "base-again", keep_going=bool(base_cover.errors)
    )
    try:
        again_cover = budget.cover_again(server, deadline, pairs)
        again = server.verdicts(server.submit(jobs, deadline), jobs, deadline) if again_cover.covered else {}
    finally:
        server.close()
    kept = []
    for pair in pairs:
        verdict = again.get(pair[0].key, Verdict("unrun", "", "")).verdict
        if verdict in ("unrun", "invalid"):
            notice(f"mutation: {pair[0].key} was not run a second time within the budget: not judged")
        elif verdict != "killed" or pair not in still:
            notice(
                f"mutation: flaky verdict: {pair[0].description} at {pair[0].path}:{pair[0].line} was judged differently on a second run; not reported"
            )
        else:
            kept.append(pair)
    return kept


def _same_code(
    python: str,
    change_set: changes.ChangeSet,
    the_plan: scratch.Plan,
    sides: _Sides,
    production: list[str],
    base_selection: list[str],
    pairs: list[Pair],
    deadline: float,
    red_at_base: frozenset[str] = frozenset(),
) -> list[Pair]:
    """The candidates the base's tests still catch on the NEW code: only those are the tests' loss.

    The change also edits production code, so base and new differ in code as well as in tests. A mutant
    the base's own tests miss on the new code (a fix made the code robust to it, say) is hidden by that
    edit, not by the tests: oracle-replay judges production edits. The tree: the new code, the base's tests.
    """
    mixed = os.path.join(sides.scratch.root, "mixed")
    scratch.export(change_set.base or "", mixed)
    scratch.overlay(change_set, the_plan, mixed)
    generated.lay(sides.scratch.generated_for_change(change_set), [mixed])  # the new code runs here
    server = Server(
        python,
        mixed,
        production,
        base_selection,
        sides.work,
        "base-tests-new-code",
        side="new",
        keep_going=bool(red_at_base),
    )
    try:
        cover = budget.cover_again(server, deadline, pairs)
        # The base's tests do not run on the new code (or lose a module the base collected): the findings stand.
        if not cover.covered or set(cover.errors) - red_at_base:
            notice(
                f"mutation: the base's tests do not run on the new code (pytest exited {cover.exit_code}); "
                "the mutants the new tests let live are reported as they are"
            )
            return pairs
        hidden = survivors.survivors(server, cover, pairs, deadline)
    finally:
        server.close()
    if hidden:
        notice(
            f"mutation: {len(hidden)} mutant(s) the new tests let live are missed by the base's tests too once the "
            "change's production edits are in (e.g. "
            f"{hidden[0][0].description} at {hidden[0][0].path}:{hidden[0][0].line}): the code changed, not the "
            "tests' strength; not reported (oracle-replay judges the production edits)"
        )
    return [p for p in pairs if p not in hidden]


def _pairs(
    args: argparse.Namespace,
    change_set: changes.ChangeSet,
    cover: Cover,
    touched: Sequence[str],
    changed_files: Sequence[str],
) -> tuple[list[Pair], list[Pair]]:
    """The mutants of what the base's passing tests ran, most informative first (priority.py) up to
    --mutate-max, and of code only run at import (for fresh processes), each with its twin in the new tree."""
    tested: dict[str, set[int]] = {}
    for test in cover.tests:
        if test.ok:
            for path, lines in test.lines.items():
                tested.setdefault(path, set()).update(lines)
    every = _mutants(change_set, tested)
    carried, edited = _carry(change_set, every)  # before the cap: a mutant left to oracle-replay takes no slot
    ranked = priority.order(list(carried), cover, touched, changed_files)
    chosen = ranked if args.mutate_max < 0 else ranked[: args.mutate_max]
    if len(chosen) < len(ranked):
        notice(
            f"mutation: {len(ranked) - len(chosen)} of {len(ranked)} mutants were not run (--mutate-max {args.mutate_max}): they are not judged "
            "(the least informative were left: reached by no test the change touched, or by more tests it did not touch)"
        )
    carried = {m: carried[m] for m in chosen}
    only_import = {p: set(lines) - tested.get(p, set()) for p, lines in cover.import_lines.items()}
    at_import = _mutants(change_set, {p: lines for p, lines in only_import.items() if lines})
    fresh, fresh_edited = _carry(change_set, mutant_gen.sample(at_import, FRESH_MAX))
    if edited + fresh_edited:
        notice(
            f"mutation: {edited + fresh_edited} mutant(s) in functions the change edits are left to oracle-replay (--replay): they are not judged here"
        )
    imported = [m for m in carried if _runs_at_import(cover, m)]
    if imported or at_import:
        notice(
            f"mutation: {len(imported)} mutant(s) sit in code that also runs at import (judged by a code swap after "
            f"import) and {len(at_import)} in code only run at import; up to {FRESH_MAX} of these run in a fresh "
            "process, imports and all"
        )
    return list(carried.items()), list(fresh.items())


_UNRUN = Verdict("unrun", "", "")


def _no_pytest() -> int:
    from oracle_guard.probes.mutation import server as _mutation_server

    return _mutation_server.NO_PYTEST_EXIT


def _mutants(change_set: changes.ChangeSet, reached: dict[str, set[int]]) -> list[mutant_gen.Mutant]:
    sources = change_set.read_base(sorted(reached))
    found: list[mutant_gen.Mutant] = []
    for path in sorted(reached):
        data = sources.get(path)
        if data is not None:
            found.extend(mutant_gen.generate(path, data, reached[path]))
    return found


def _carry(
    change_set: changes.ChangeSet, chosen: Sequence[mutant_gen.Mutant]
) -> tuple[dict[mutant_gen.Mutant, mutant_gen.Mutant], int]:
    """Each mutant and its twin in the new tree (the same edit of the same function text); the count dropped."""
    changed = {c.old_path: c for c in change_set.changes if c.old_path}
    touched = sorted({m.path for m in chosen if m.path in changed})
    base_src = change_set.read_base(touched)
    new_src = change_set.read_new([changed[p].path or "" for p in touched if changed[p].path])
    carried: dict[mutant_gen.Mutant, mutant_gen.Mutant] = {}
    edited = 0
    found: dict[int, dict[str, list[tuple[int, bytes]]]] = {}

    def located(source: bytes | None, function: str) -> list[tuple[int, bytes]]:
        # One parse per file, not per mutant: every mutant of a big change is carried.
        if not source:
            return []
        if id(source) not in found:
            found[id(source)] = mutant_gen.locate_all(source)
        return found[id(source)].get(function, [])

    for mutant in chosen:
        change = changed.get(mutant.path)
        if change is None:
            carried[mutant] = mutant
            continue
        before, after = base_src.get(mutant.path), new_src.get(change.path or "")
        olds = located(before, mutant.function)
        news = located(after, mutant.function)
        index = next((i for i, (line, _) in enumerate(olds) if line == mutant.def_line), None)
        # The same function is the same occurrence of its name (an @overload stub repeats it).
        if index is None or len(olds) != len(news) or olds[index][1] != news[index][1] or not after or not before:
            edited += 1
            continue
        old, new = olds[index], news[index]
        shift = _offset_of(after, new) - _offset_of(before, old)
        carried[mutant] = mutant._replace(
            path=change.path or mutant.path,
            def_line=new[0],
            start=mutant.start + shift,
            end=mutant.end + shift,
            span=(mutant.span[0] + new[0] - old[0], mutant.span[1] + new[0] - old[0]),
        )
    return carried, edited


def _offset_of(source: bytes, where: tuple[int, bytes]) -> int:
    """Byte offset of the start of line WHERE[0] in SOURCE (the function's text starts there)."""
    offset = 0
    for _ in range(where[0] - 1):
        offset = source.index(b"\n", offset) + 1
    return offset


def _runs_at_import(cover: Cover, mutant: mutant_gen.Mutant) -> bool:
    lines = cover.import_lines.get(mutant.path, frozenset())
    return any(n in lines for n in range(mutant.span[0], mutant.span[1] + 1))


def _findings(
    change_set: changes.ChangeSet,
    contract_path: str,
    verdicts: dict[str, Verdict],
    cover: Cover,
    candidates: list[Pair],
) -> list[Finding]:
    if not candidates:
        return []
    from oracle_guard.contract import contract
    from oracle_guard.contract.approvals import Approvals, canonical

    approvals = Approvals.load(
        change_set,
        contract.at_base(change_set.base, contract_path),
        contract.at_new(change_set.target, contract_path),
    )
    tests = {t.node: t for t in cover.tests}
    found = []
    for mutant, _ in candidates:
        node = verdicts[mutant.key].by
        test = tests.get(node)
        name = node.rpartition("::")[2] or node
        said = statement(node)
        if approvals.covers(said):
            notice(f"mutation: approved: {name}'s catch of {mutant.description} at {mutant.path}:{mutant.line}")
            continue
        message = (
            f"the base's {name} caught {mutant.description} at {mutant.path}:{mutant.line} (in {mutant.function}); "
            f"the new tests do not: restore the check, or approve the removal: `oracle-guard approve {said}`"
        )
        if approvals.allowed_signers is None or canonical(said) in approvals.candidates:
            message = f"{message} ({approvals.explain(said)})"
        found.append(Finding(test.path if test else node.split("::")[0], test.line if test else 1, 1, CODE, message))
    return found
