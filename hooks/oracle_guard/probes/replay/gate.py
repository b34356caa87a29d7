"""The replay's gate: run the base's tests on the base and on the new code, and judge the two runs.

The hook id (hook_ids/replay.py) and `oracle-guard check --replay` call ``findings_of``.  The
scratch trees come from pytest_side/scratch.py, the selection from pytest_side/selection.py, the
pytest processes from run.py (with the plugin.py each loads by path), and each run is judged from
outside its process by ledger.py.  The main run's base side may come from base_cache.py (a real
collection of the base, cached passes the new side confirms, everything else run again there).  The probes run after it: flips (and neighbours) on the tests
that passed on both sides, the flips' base side from probes/flips/cached.py where an entry can only convict.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from oracle_guard.contract import unstable_ids
from oracle_guard.probes.flips import gate as flips
from oracle_guard.probes.neighbours import calls as neighbours
from oracle_guard.probes.replay import base_cache, doctests, ledger, plainrun, red
from oracle_guard.probes.replay import run as replay_run
from oracle_guard.probes.suspects import gate as suspects_gate
from oracle_guard.probes.suspects import which
from oracle_guard.pytest_side import barrier, bytecode, ground, scratch, selection
from oracle_guard.repo import changes, git
from oracle_guard.repo.confine import jail
from oracle_guard.repo.interpreters import ChosenByChange, candidate_interpreters
from oracle_guard.reporting.report import Finding, UsageError, notice

TIMEOUT_SECONDS = 900
CANARIES = True  # plant the canaries (bench/replay.py turns them off to measure what they cost)
WEAKER = {
    "failed": "fails",
    "error": "errors",
    "skipped": "is now skipped",
    "xfailed": "now xfails",
    "xpassed": "now xpasses (was a plain pass)",
}
IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError")
ARGS_AT_MOST = 100_000  # characters of test ids on one command line (Linux allows 2 MB in all, 128 kB per argument)
NOTHING_RAN = ledger.Result({}, {}, 5, "")


def _statement(node: str) -> str:
    return f"behavior-change {node}"


def judge(
    base: ledger.Result,
    new: ledger.Result,
    base_label: str,
    cut_short: bool = False,
    counted: frozenset[str] = frozenset(),
    renamed: Mapping[str, str] | None = None,
) -> list[tuple[str, Finding]]:
    """(node id, finding) for every test that passed at the base and does not pass on the new code.

    CUT_SHORT: the new side's run ended early (its own finding): a test it never reached is not one.
    COUNTED: tests whose ids change between runs; their cases pair by position.
    RENAMED: base path -> the change's path of files it moved: a module's doctests keep their names and
    take its new path (``calc.py::calc.add`` is ``calc/__init__.py::calc.add`` once the module is a package).
    """
    found = []
    moved = unstable_ids.paired(base.items, new.items, set(counted))
    for node, before in base.items.items():
        if before.outcome != "passed":
            continue  # a base failure or skip was never an oracle
        after = new.items.get(moved.get(node, node))
        path = node.split("::", 1)[0]
        if after is None and renamed and path in renamed:
            after = new.items.get(renamed[path] + node[len(path) :])
        if after is not None and after.outcome == "passed":
            continue
        if after is None and cut_short and before.path not in new.errors:
            continue
        command = f"`oracle-guard approve {_statement(unstable_ids.approvable(node, counted))}`"
        if after is None:
            error = new.errors.get(before.path)
            if error is not None and error.split(":", 1)[0].strip().rsplit(".", 1)[-1] in IMPORT_ERRORS:
                text = f"the base's test cannot import the new code: `{error}` ({node}); restore the name, or approve the change: {command}"
                code = "OG903"
            elif error is not None:
                text = f"the base's test no longer collects against the new code: `{error}` ({node}); fix the code, or approve the change: {command}"
                code = "OG903"
            else:
                text = f"{node} passed at {base_label} and is not collected against the new code (an id built from production values?); restore it, or approve the change: {command}"
                code = "OG905"
        else:
            code = "OG901" if after.outcome in ("failed", "error") else "OG902"
            why = f": {after.message}" if after.message else ""
            text = f"{node} passed at {base_label} and {WEAKER.get(after.outcome, after.outcome)} against the new code{why}; the change alters behaviour the base's test pins: fix the code, or approve the change: {command}"
        found.append((node, Finding(before.path, before.line, 1, code, text)))
    return found


def _few(paths: Sequence[str]) -> str:
    shown = ", ".join(paths[:3])
    return shown + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def _scope(chosen: selection.Selection) -> str:
    if chosen.everything:
        return f"every test ({_few(chosen.reasons)})"
    reaching = len(chosen.modules) - len(chosen.changed)
    if chosen.reasons:  # some modules run because their imports cannot be decided: say which files
        return f"{_scope(chosen._replace(reasons=()))}, imports undecided in {_few(chosen.reasons)}"
    if not reaching:
        return f"{len(chosen.modules)} changed test module(s)"
    if not chosen.changed:
        return f"{reaching} test module(s) reaching the changed code"
    return f"{len(chosen.modules)} test module(s) ({len(chosen.changed)} changed, {reaching} reaching the changed code)"


def findings_of(args: argparse.Namespace) -> list[Finding]:
    """The replay's findings, printing nothing but notices (`check --replay` prints them in its one document).

    ``args.seen``, a list when given, gets the base side's main run (a shard's document lists what it
    judged, commands/shards.py).
    """
    started = time.monotonic()
    deadline = started + args.timeout
    changes.enter_repo([])
    change_set = changes.resolve(args)
    if change_set.base is None:
        notice("oracle-replay: nothing to replay: there is no base revision yet")
        return []
    from oracle_guard.contract import contract

    base_contract = contract.at_base(change_set.base, args.contract)
    side = scratch.TestSide(change_set.base, args.contract, base_contract)
    the_plan = scratch.plan(change_set, side)
    if not the_plan.production and not the_plan.test_side:
        notice("oracle-replay: nothing to replay: the change touches nothing pytest reads")
        return []
    chosen = selection.select(change_set, the_plan, side)
    if chosen.empty:
        if the_plan.production:
            why = f"no base test reaches the changed code ({_few([*the_plan.write, *the_plan.remove])})"
        else:
            why = "the change edits no base test (it adds tests, or touches what pytest does not run)"
        notice(f"oracle-replay: nothing to replay: {why}")
        return []
    unsound = ground.before_judging(args.python)
    if unsound:
        return unsound
    try:
        return _replay(args, change_set, the_plan, chosen, deadline, started, getattr(args, "seen", None))
    # What the change's code brought about in the gate's runs is judged against it (pytest_side/ground.py).
    except ChosenByChange as exc:
        return [ground.chosen(exc)]
    except barrier.Breach as exc:
        return [ground.breach(exc, _production_file(the_plan))]
    except barrier.Hung as exc:
        return [ground.hung(exc, _production_file(the_plan))]
    except subprocess.TimeoutExpired:
        raise UsageError(
            f"the replay took over {args.timeout:g} s (--timeout) and was stopped; nothing was judged"
        ) from None


def _base_bytecode(change_set: changes.ChangeSet) -> dict[str, bytes]:
    """The base's bytecode this command's collection of the base wrote, where the change's code runs confined."""
    if not jail.ground().abi or not change_set.base:
        return {}
    try:
        return bytecode.kept(git.toplevel(), change_set.base)
    except git.GitError:
        return {}


def _replay(
    args: argparse.Namespace,
    change_set: changes.ChangeSet,
    the_plan: scratch.Plan,
    chosen: selection.Selection,
    deadline: float,
    started: float,
    seen: list[ledger.Result] | None = None,
) -> list[Finding]:
    tree = scratch.Scratch()
    tree.pycs = _base_bytecode(change_set)
    # With xdist's workers (-n) the sides take turns unless --jobs says otherwise: -n is the run's cores.
    jobs = args.jobs or (1 if getattr(args, "workers", None) else 0)
    runs = replay_run.Runs(tempfile.mkdtemp(prefix="logs-", dir=tree.root), deadline, replay_run.jobs(jobs), CANARIES)
    with barrier.guarding(barrier.Barrier(tree.base, tree.root, runs.work)):
        return _replay_guarded(args, change_set, the_plan, chosen, started, seen, tree, runs)


def _replay_guarded(
    args: argparse.Namespace,
    change_set: changes.ChangeSet,
    the_plan: scratch.Plan,
    chosen: selection.Selection,
    started: float,
    seen: list[ledger.Result] | None,
    tree: scratch.Scratch,
    runs: replay_run.Runs,
) -> list[Finding]:
    # The interpreter's fingerprint (the cache's key) is asked while the trees are built; a change to
    # the test side alone has no new side to check a cached pass against, so no cache (base_cache.py).
    cache = base_cache.start(args.python, change_set.base or "", CANARIES, tree.root) if the_plan.production else None
    early: flips.Early | None = None
    try:
        # A change to the test side alone has no new code to lay over the base: the base run is both sides.
        sides = ("base", "new") if the_plan.production else ("base",)
        tree.build(change_set, the_plan, sides)
        trees = {s: getattr(tree, s) for s in sides}
        replay_run.seed_hypothesis_cache(list(trees.values()))
        chosen_args = list(chosen.modules)
        # Spread out (docs/oracle-replay.md, "A big suite"): xdist's -n and the shard, the main run's only.
        workers, shard = getattr(args, "workers", None), getattr(args, "shard", None)
        replay_run.require_xdist(args.python, tree.base, workers)
        main_args = [*replay_run.spread_args(workers, shard), *chosen_args]
        early = _early_flips(args.python, cache, tree, change_set, chosen_args, runs, the_plan, shard)
        python, origin, results, fixed = base_cache.main_run(cache, args.python, trees, main_args, runs)
        runs.alongside = None
        replay_run.keep_hypothesis_cache(tree.base)
        base = results["base"]
        new = results.get("new", base)
        if seen is not None:
            seen.append(base)
        passed = sum(1 for o in base.items.values() if o.outcome == "passed")
        failing = sum(1 for o in base.items.values() if o.outcome in red.RED)
        notice(
            f"oracle-replay: {python} ({origin}) ran {_scope(chosen)}: {passed} passed"
            f"{f', {failing} failed' if failing else ''} at {change_set.base_label}{_spread_text(workers, shard)},"
            f" in {time.monotonic() - started:.1f} s"
        )
        if not base.items and base.exit_code not in (0, 1, 2, 5):
            raise UsageError(_not_judged(change_set.base_label, python, base))
        if not the_plan.production:
            _tell_fate(args, base, base, change_set.base_label)
            found = _red_base(_Context(python, tree, fixed, runs, change_set, the_plan), base, base)
            return _unapproved(change_set, args.contract, found) if found else []
        if new.exit_code not in (0, 1, 2, 5) and passed and not new.items:
            where = chosen_args[0] if chosen_args else "."
            why = f"pytest cannot run the base's tests against the new code (exit {new.exit_code}): {new.tail or 'no output'}; fix the change"
            return [Finding(where, 1, 1, "OG904", why)]
        where = _production_file(the_plan)
        tampering, new = _soundness(python, trees, [*fixed, *main_args], runs, base, new, where, change_set.base_label)
        new, examples = _base_examples(_Context(python, tree, fixed, runs, change_set, the_plan), base, new)
        _tell_fate(args, base, new, change_set.base_label)
        cut_short = new.finished is None or bool(set(new.collected) - set(new.items))
        counted = frozenset(unstable_ids.counted_at_base(change_set, args.contract))
        findings: list[tuple[str, Finding]] = []
        renamed = red.renames((c.old_path, c.path) for c in change_set.changes)
        suspects = judge(base, new, change_set.base_label, cut_short, counted, renamed)
        lost = [n for n, f in suspects if f.code == "OG905"]  # ids that change on every run look uncollected
        moving = unstable_ids.recheck(
            base.items,
            lost,
            counted,
            lambda t: runs.run(python, {"base": tree.base}, [*fixed, *t], "rerun")["base"].items,
        )
        if moving:
            counted |= moving
            suspects = judge(base, new, change_set.base_label, cut_short, counted, renamed)
        if suspects:
            # A counted test's cases have other ids on every run: rerun the whole test, pair by position.
            tests = sorted({unstable_ids.approvable(n, counted) for n, _ in suspects})
            extra = doctests.args(examples) if examples else []
            again = runs.run(python, trees, [*fixed, *tests, *extra], "rerun")
            again = {s: doctests.standing_in(r, r, examples) for s, r in again.items()} if examples else again
            sound = not set(ledger.broken(again["new"])) - set(ledger.broken(again["base"]))
            for node, finding in suspects:
                twice = [
                    again[s].items.get(unstable_ids.same_case(node, base.items, again[s].items, counted))
                    for s in ("base", "new")
                ]
                if sound and all(o is not None and o.outcome == "passed" for o in twice):
                    notice(
                        f"oracle-replay: flaky on replay: {node} failed against the new code once, then passed on both sides"
                    )
                    continue
                findings.append((node, finding))
        # A red base: the base's failing tests are the task (red.py).
        findings += _red_base(_Context(python, tree, fixed, runs, change_set, the_plan), base, new)
        open_tests = sorted(n for n in red.still_red(base, new).tests if n not in {node for node, _ in findings})
        # The probes: flipped checks (and neighbouring inputs) on both sides, for tests that passed on both.
        passed_both = {
            n
            for n, o in base.items.items()
            if o.outcome == "passed" and (after := new.items.get(n)) is not None and after.outcome == "passed"
        }
        only = _shard_tests(base) if shard else []
        if not shard or base.collected:  # a shard that holds no test has nothing to flip
            findings += flips.judge(
                python,
                trees,
                fixed,
                chosen_args,
                runs.jobs,
                runs.deadline,
                runs.work,
                passed_both,
                change_set.base_label,
                the_plan.write,
                cache,
                only,
                early,
                _outcomes(base, new),
                frozenset(which.red_green(base, new)),
            )
            # The suspects: run again, in another order, watched and not, and outside pytest (probes/suspects/).
            findings += _suspects(_Context(python, tree, fixed, runs, change_set, the_plan), base, new)
        if open_tests and the_plan.production and not findings and not tampering:
            # Last of all: the still-red tests asked of runs the code cannot tell from a user's (plainrun.py).
            ctx = _Context(python, tree, fixed, runs, change_set, the_plan)
            findings += [(open_tests[0], f) for f in _plainly(ctx, open_tests)]
        findings = [(unstable_ids.approvable(node, counted), finding) for node, finding in findings]
        return tampering + (_unapproved(change_set, args.contract, findings) if findings else [])
    finally:
        runs.alongside = None
        if early is not None:
            early.kill()  # no-op for the runs judged; ends those an early verdict left behind
        if cache is not None:
            cache.close()
        tree.cleanup()


def _tell_fate(args: argparse.Namespace, base: ledger.Result, new: ledger.Result, base_label: str) -> None:
    """Record what became of the base's red tests in ``args.red``, a list when the caller wants it (its last line)."""
    told = getattr(args, "red", None)
    found = red.fate(base, new, base_label)
    if told is not None and found is not None:
        told.append(found)


def _outcomes(base: ledger.Result, new: ledger.Result) -> dict[str, str]:
    """Each base test: passed on both sides, red at the base and passing now (the task done), or neither.

    The neighbours judge only tests that pass on the new code (probes/neighbours/calls.py).
    """
    found = {}
    for node, before in base.items.items():
        after = new.items.get(node)
        passes = after is not None and after.outcome == "passed"
        if passes and before.outcome == "passed":
            found[node] = neighbours.BOTH
        elif passes and before.outcome in red.RED:
            found[node] = neighbours.FIXED
        else:
            found[node] = neighbours.OPEN
    return found


def _suspects(ctx: _Context, base: ledger.Result, new: ledger.Result) -> list[tuple[str, Finding]]:
    """The findings of the suspects' probes: the base's tests the change made pass, and the tests it brings."""
    python, tree, fixed, runs, change_set, the_plan = ctx
    if not suspects_gate.PROBES:
        return []
    modules = [p for p in the_plan.test_side if which.TEST_MODULE.search(p)]
    own = which.own(change_set.read_base(modules), change_set.read_new(modules)) if modules else {}
    target = tree.build_target(change_set) if own else None
    trees = {"base": tree.base, "new": tree.new}
    tests_at_base = (lambda: tree.build_tests_at_base(change_set, the_plan)) if own else None
    groups = suspects_gate.groups(trees, base, new, change_set.base_label, target, own, tests_at_base)
    measure = runs.base_seconds if runs.base_seconds is not None else runs.claimed_seconds
    return suspects_gate.judge(
        python, groups, fixed, runs.deadline, runs.work, change_set.base_label, the_plan.write, measure
    )


def _early_flips(
    explicit: str | None,
    cache: base_cache.Cache | None,
    tree: scratch.Scratch,
    change_set: changes.ChangeSet,
    selection: list[str],
    runs: replay_run.Runs,
    the_plan: scratch.Plan,
    shard: str | None,
) -> flips.Early | None:
    """The flip runs to start beside the main run, one side's with that side's, when two processes fit.

    Each runs in a tree of its own (a test that writes a fixed file in its folder must not meet its
    twin).  A shard's probe runs its own tests, known after its base run; on a busy machine (one
    job) the probe runs after the main run as before.
    """
    if not flips.PROBES or not the_plan.production or shard or runs.jobs < 2:
        return None
    python = cache.python if cache is not None else None
    if python is None:
        found = candidate_interpreters(explicit, dict(os.environ))
        if not found:
            return None
        python = found[0][0]
    fixed = [*replay_run.fixed_args(), *replay_run.NO_RANDOM_ORDER]
    trees = tree.build_flips(change_set, the_plan)
    barrier.trust_tree(trees["base"])
    replay_run.seed_hypothesis_cache(list(trees.values()))
    setup = flips.Setup.of(trees, fixed, selection, runs.work, the_plan.write, cache)
    early = flips.Early(python, trees, fixed, setup, runs.work)
    runs.alongside = early
    return early


def _shard_tests(base: ledger.Result) -> list[str]:
    """The tests of a shard's base run, for the probe run: each test once, without its parametrization.

    The shard holds every case of a test (plugin.py ``shard_of``); a case's id need not survive a
    command line, the test's does.  Too many for one command line: [] (the probe runs the whole selection).
    """
    tests = sorted({node.split("[", 1)[0] for node in base.collected})
    return tests if sum(len(t) + 1 for t in tests) < ARGS_AT_MOST else []


def _spread_text(workers: str | None, shard: str | None) -> str:
    told = [f"-n {workers}" if workers else "", f"shard {shard}" if shard else ""]
    return f" ({', '.join(t for t in told if t)})" if workers or shard else ""


class _Context(NamedTuple):
    """What the steps after the main run share: the interpreter, the trees, the fixed options, the processes."""

    python: str
    tree: scratch.Scratch
    fixed: list[str]
    runs: replay_run.Runs
    change_set: changes.ChangeSet
    the_plan: scratch.Plan


def _base_examples(ctx: _Context, base: ledger.Result, new: ledger.Result) -> tuple[ledger.Result, dict[str, str]]:
    """NEW, with the doctests whose examples the change edited judged by the base's examples (doctests.py).

    Also the generated file -> base node ids, written into both trees so a rerun judges them alike.
    """
    python, tree, fixed, runs, change_set, the_plan = ctx
    modules = [p for p in the_plan.write if p.endswith(".py")]
    renamed = {
        old: now for old, now in red.renames((c.old_path, c.path) for c in change_set.changes).items() if now in modules
    }
    at_base = [*modules, *renamed]
    if not modules or not any(n.partition("::")[0] in at_base for n in base.items):
        return new, {}
    new_sources = change_set.read_new(modules)
    edited = doctests.rewritten(base.items, change_set.read_base(at_base), new_sources, renamed)
    if not edited:
        return new, {}
    ids = doctests.write(tree.new, edited)
    doctests.write(tree.base, edited)
    ran = base_cache.held_to_base(runs, python, {"new": tree.new}, [*fixed, *doctests.args(ids)], "doctests")["new"]
    notice(f"oracle-replay: ran the base's examples of {len(edited)} edited docstring(s) against the new code")
    return doctests.standing_in(new, ran, ids), ids


def _not_judged(base_label: str, python: str, result: ledger.Result) -> str:
    first = (
        next(iter(result.errors.values()), "")
        or next((o.message for o in result.items.values() if o.message), "")
        or result.tail
        or "no output"
    )
    return (
        f"nothing can be judged: no selected base test collects at {base_label} nor against the new code in"
        f" {python} (pytest exited {result.exit_code}: {first}); is the project installed in that interpreter?"
    )


def _red_base(ctx: _Context, base: ledger.Result, new: ledger.Result) -> list[tuple[str, Finding]]:
    """The base's failing tests: silenced by the code (OG902), rewritten by the change (OG907), still open, or
    still red only under the gate (OG978, plainrun.py)."""
    python, tree, fixed, runs, change_set, the_plan = ctx
    found = red.silenced(base, new, change_set.base_label)
    still = red.still_red(base, new)
    open_ids = sorted([*still.tests, *still.modules])
    if not still.empty and the_plan.test_side:
        # The change touched the test side: run its own version of the still-red tests (the change as committed).
        target = tree.build_target(change_set)
        exists = red.exists_in(target)
        moved = red.renames((c.old_path, c.path) for c in change_set.changes)
        paths = red.target_paths(still, moved, exists)
        # Held to the main run's base time (measured, or the cache entry's, checked), as the new code's other runs:
        # the change's own tests that hang only in the gate's tree ran into --timeout (exit 2); now OG922.
        ran = (
            base_cache.held_to_base(runs, python, {"target": target}, [*fixed, *paths], "target")["target"]
            if paths
            else NOTHING_RAN
        )
        rewritten, open_ids = red.rewritten(still, ran, moved, exists, change_set.base_label)
        found += rewritten
    if open_ids:
        notice(red.notice_text(open_ids, change_set.base_label))
    if not found and not base.items and not new.items and (base.errors or new.errors):
        raise UsageError(_not_judged(change_set.base_label, python, base))
    return found


def _plainly(ctx: _Context, tests: list[str]) -> list[Finding]:
    """OG978 for still-red TESTS that a plain run of the work tree passes (plainrun.py); the work tree only."""
    python, _, _, runs, change_set, the_plan = ctx
    if change_set.base is None or (change_set.target is not None and not _work_tree_is(change_set.target)):
        return []  # the work tree is not the change judged: a plain run of it says nothing of that change
    measured = runs.base_seconds if runs.base_seconds is not None else runs.claimed_seconds
    limit = barrier.HANG_FLOOR + barrier.HANG_FACTOR * (measured or 0.0)
    where = (_production_file(the_plan), 1)
    return plainrun.corroborate(python, change_set.base, tests, limit, runs.deadline, where, change_set.base_label)


def _work_tree_is(target: str) -> bool:
    """Whether the work tree's tracked files are TARGET's (a committed change, checked out)."""
    return git.ok("diff", "--quiet", target, "--")


def _production_file(the_plan: scratch.Plan) -> str:
    """Where a finding about the new code as a whole points: its first changed Python file."""
    python = sorted(p for p in the_plan.write if p.endswith(".py"))
    return (python or sorted(the_plan.write) or sorted(the_plan.remove) or ["."])[0]


def _soundness(
    python: str,
    trees: dict[str, str],
    args: list[str],
    runs: replay_run.Runs,
    base: ledger.Result,
    new: ledger.Result,
    where: str,
    base_label: str,
) -> tuple[list[Finding], ledger.Result]:
    """OG906 when the new side's run breaks what the base side's run holds (ledger.broken); the result to judge.

    What breaks on the base side too is this project's way of running (a
    notice, not judged).  A new side that breaks once and is sound on a
    second run is a flake: a notice, and the second run is judged.
    """
    held = ledger.broken(base)
    for why in held.values():
        notice(f"oracle-replay: not judged: at {base_label} too, {why}")
    own = {k: v for k, v in ledger.broken(new).items() if k not in held}
    if not own:
        return [], new
    again = base_cache.held_to_base(runs, python, {"new": trees["new"]}, args, "again")["new"]  # a hang: OG922
    if not set(ledger.broken(again)) - set(held):
        notice(f"oracle-replay: flaky run on the new code ({'; '.join(own.values())}), sound on a second run")
        return [], again
    what = "; ".join(own.values())
    if "finished" in own and new.exit_code < 0:
        text = f"pytest cannot run the base's tests against the new code: {what}; fix the change"
        return [Finding(where, 1, 1, "OG904", text)], new
    text = (
        f"the new code tampers with the test run: {what}, twice, while the same run at {base_label} holds;"
        " pytest's verdict on this code cannot be trusted: remove the code that exits the process,"
        " patches the test machinery or hides outcomes"
    )
    return [Finding(where, 1, 1, "OG906", text)], new


def _unapproved(
    change_set: changes.ChangeSet, contract_path: str, findings: list[tuple[str, Finding]]
) -> list[Finding]:
    from oracle_guard.contract import contract
    from oracle_guard.contract.approvals import Approvals, canonical

    approvals = Approvals.load(
        change_set,
        contract.at_base(change_set.base, contract_path),
        contract.at_new(change_set.target, contract_path),
    )
    kept = []
    for node, finding in findings:
        if approvals.covers(_statement(node)):
            notice(f"oracle-replay: approved behaviour change: {node}")
            continue
        if approvals.allowed_signers is None or canonical(_statement(node)) in approvals.candidates:
            finding = finding._replace(message=f"{finding.message} ({approvals.explain(_statement(node))})")
        kept.append(finding)
    return kept
