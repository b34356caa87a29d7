"""The suspects' probes: tests the change made pass, run again where the code cannot keep its story.

A suspect is a base test that fails at the base and passes on the new code (which.py).  The
replay's flip run already flips their checks (probes/flips/gate.py judges them without a base
verdict: OG973).  Here, one more pytest process on the new tree runs the suspects three times
(plugin.py: in order, again, in reverse order, every fixture torn down between runs) and records,
in the first pass only, the calls their test code makes into the changed files.  Then:

- OG972: a suspect that passed in the replay does not pass on every run of that process, on two
  such processes, while the base's same run gives it one outcome throughout: its outcome depends on
  how often, in which order, or whether watched the code was called (recorded state).
- OG971: a recorded call made again in a plain interpreter (outside.py: no pytest, no plugins, no
  test modules, no test environment) answers otherwise than inside the test, while its two plain
  calls agree: the code knows it is tested.  Answers compare by type and value (answers.py);
  values with no stable form are compared by type only and counted.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from oracle_guard.probes import receipts
from oracle_guard.probes.neighbours.recorded import read_json
from oracle_guard.probes.replay import ledger
from oracle_guard.probes.suspects import plain, repeats, which
from oracle_guard.pytest_side import barrier
from oracle_guard.repo.interpreters import tree_env
from oracle_guard.reporting.report import Finding, notice

PROBES = True  # bench/suspects.py turns them off in-process to price them
ARGS_AT_MOST = 100_000  # characters of node ids on one command line (as probes/replay/gate.py)


class Side(NamedTuple):
    """What one suspects run of one tree reported (node ids from the repository root)."""

    complete: bool
    outcomes: dict[str, list[str]]
    calls: list[dict[str, Any]]
    unwatched: set[str]
    flipped: dict[str, str]  # doctest node -> its outcome with every expected output flipped
    hashseed: str | None
    exit_code: int
    problem: str = ""  # why its results file does not add up (probes/receipts.py): not complete then
    failed_at: dict[str, list[str]] = {}  # node -> where each run failed ("" for one that did not)


def _join(root: str, node: str) -> str:
    return node if root in ("", ".") else os.path.normpath(os.path.join(root, node)).replace(os.sep, "/")


def _run(
    python: str,
    tree: str,
    side: str,
    fixed: Sequence[str],
    nodes: Sequence[str],
    work: str,
    tag: str,
    changed: Sequence[str],
    deadline: float,
    measure: float | None = None,
) -> Side:
    """One suspects' run of NODES in TREE; MEASURE: the base time the new code's run is held to (judge)."""
    from oracle_guard.probes.runner import RUNNER, own_fds, runner_config
    from oracle_guard.probes.suspects import plugin as _plugin

    output = os.path.join(work, f"{tag}.json")
    config = os.path.join(work, f"{tag}.config.json")
    with contextlib.suppress(OSError):
        os.unlink(output)
    wanted: list[str] = []
    if sum(len(n) + 1 for n in nodes) > ARGS_AT_MOST:  # too long for one command line: their modules, filtered
        wanted, nodes = list(nodes), sorted({n.split("::", 1)[0] for n in nodes})
    with open(config, "w", encoding="utf-8") as f:
        json.dump({"changed": [os.path.join(tree, p) for p in changed if p.endswith(".py")], "nodes": wanted}, f)
    env = {**tree_env(python, tree), "ORACLE_GUARD_SUSPECTS": config}
    env, imports = barrier.env_for(side, env, tag)
    plugins = [[os.path.abspath(_plugin.__file__), output]]
    channel = receipts.Receipts()
    cmd = [python, "-c", barrier.REPORT_IMPORTS + RUNNER, runner_config(plugins, channel.fd), *fixed, *nodes]
    barrier.in_turn([side], None if side == "base" else measure)  # its own plan: held to MEASURE
    with open(os.path.join(work, f"{tag}.log"), "wb") as log:
        try:
            process = barrier.Process(
                cmd, tree, env, log, side, report=imports, writes=[output], pass_fds=own_fds(channel)
            )
        finally:
            channel.started()
        try:
            process.wait(deadline)
        except barrier.Hung as exc:  # OG922 names what ran
            exc.test = nodes[0] if len(nodes) == 1 else f"the suspects' run of {', '.join(nodes[:3])}"
            raise
        finally:
            process.kill()
            problem = channel.problem(process.proc.pid, [output])
    data = read_json(output)
    code = process.proc.returncode
    if problem:
        return Side(False, {}, [], set(), {}, None, code, problem=problem)
    if not isinstance(data, dict) or data.get("complete") is not True:
        return Side(False, {}, [], set(), {}, None, code)
    root = str(data.get("rootdir", "."))
    outcomes = {_join(root, str(n)): [str(o) for o in v] for n, v in dict(data.get("outcomes", {})).items()}
    calls = [{**c, "node": _join(root, str(c.get("node", "")))} for c in data.get("calls", [])]
    unwatched = {_join(root, str(n)) for n in data.get("unwatched", [])}
    flipped = {_join(root, str(n)): str(o) for n, o in dict(data.get("flipped", {})).items()}
    seed = data.get("hashseed")
    failed_at = {_join(root, str(n)): [str(w) for w in v] for n, v in dict(data.get("failed_at", {})).items()}
    return Side(
        True, outcomes, calls, unwatched, flipped, str(seed) if seed is not None else None, code, failed_at=failed_at
    )


def _shown(answer: Any) -> str:
    """An answer (answers.py) as the finding says it: what was returned or raised."""
    if not isinstance(answer, list) or len(answer) != 2:
        return "answers nothing readable"
    if answer[0] == "raised":
        return f"raises {answer[1]}"
    kind, form = answer[1]
    if isinstance(form, str) and form.startswith("pickle:"):
        return f"returns a {kind} (pickled {form[7:15]})"
    if isinstance(form, str):
        shown = form.partition(":")[2] if form.startswith(("repr:", "plain:")) else form
        return f"returns {kind} {shown[:80]}"
    return f"returns a {kind}"


def _call_text(call: Mapping[str, Any]) -> str:
    return f"{call.get('module')}.{call.get('qualname')}"


class Group(NamedTuple):
    """Suspects that run in one tree: the base's tests over the new code, or the change's own tests."""

    name: str  # "new" (the base's tests, red at the base) or "target" (tests the change adds or edits)
    tree: str
    where: dict[str, tuple[str, int]]  # node id -> (path, line)
    base_tree: str | None  # where the same tests run at the base; None: the change's own have no base
    why: str  # what made it a suspect, for the finding
    tests_at_base: Callable[[], str] | None = None  # the change's own: builds its tests over the base's code


def groups(
    trees: Mapping[str, str],
    base: ledger.Result,
    new: ledger.Result,
    base_label: str,
    target: str | None,
    own: Mapping[str, tuple[str, int]],
    tests_at_base: Callable[[], str] | None = None,
) -> list[Group]:
    """The replay's suspects by tree: red at the base and green now (new tree), and the change's own (TARGET)."""
    made = which.red_green(base, new)
    found = []
    if made:
        where = {n: (base.items[n].path, base.items[n].line) for n in made}
        why = f"fails at {base_label} and the change made it pass"
        found.append(Group("new", trees["new"], where, trees["base"], why))
    if own and target:
        found.append(Group("target", target, dict(own), None, "is a test the change adds or edits", tests_at_base))
    return found


def judge(
    python: str,
    suspects: Sequence[Group],
    fixed: Sequence[str],
    deadline: float,
    work: str,
    base_label: str,
    changed: Sequence[str],
    measure: float | None = None,
) -> list[tuple[str, Finding]]:
    """OG971, OG972 and OG973 (a doctest's flipped examples) for the suspects of a replay.

    MEASURE: the base's time for the whole run (measured, or a cache entry's), which sets how long a
    run of the suspects against the new code may take (pytest_side/barrier.py: past it, OG922); None:
    until the replay's --timeout.  The suspects run three times, the first traced: code that is slow
    only when watched or repeated must end in a verdict, not in --timeout.
    """
    if not PROBES or not any(p.endswith(".py") for p in changed):
        return []
    found: list[tuple[str, Finding]] = []
    for group in suspects:
        found += _judge_group(python, group, fixed, deadline, work, base_label, changed, measure)
    return found


def _judge_group(
    python: str,
    group: Group,
    fixed: Sequence[str],
    deadline: float,
    work: str,
    base_label: str,
    changed: Sequence[str],
    measure: float | None = None,
) -> list[tuple[str, Finding]]:
    nodes = sorted(group.where)
    tag = f"suspects-{group.name}"
    first = _run(python, group.tree, "new", fixed, nodes, work, tag, changed, deadline, measure)
    if first.problem:
        return [(nodes[0], _forged(group, nodes[0], first.problem))]
    if first.complete and group.base_tree is not None and not any(first.outcomes.get(n) for n in nodes):
        return [(nodes[0], _none_ran(group, nodes, first))]
    named, named_where = nodes, group.where
    if group.base_tree is None:  # the change's own tests are named by function: judge each case that ran
        cases = {n: group.where[n.split("[", 1)[0]] for n in first.outcomes if n.split("[", 1)[0] in group.where}
        group = group._replace(where=cases)
        nodes = sorted(cases)
    odd = {n: why for n in nodes if (why := _odd(first, n))}
    at_base = None
    if group.base_tree and (not first.complete or any(code == "OG972" for code, _ in odd.values())):
        at_base = _run(
            python, group.base_tree, "base", fixed, sorted(odd) or nodes, work, "suspects-base", changed, deadline
        )
    elif (
        group.tests_at_base is not None
        and first.complete
        and (varied := repeats.varied_suspects(first.outcomes, first.unwatched, odd))
    ):
        # The change's own tests over the base's code: the change's test code runs there, held as the new side.
        tree = group.tests_at_base()
        at_base = _run(python, tree, "new", fixed, varied, work, "suspects-target-at-base", changed, deadline, measure)
    elif group.tests_at_base is not None and not first.complete:  # the same run over the base's code
        tree = group.tests_at_base()
        at_base = _run(python, tree, "new", fixed, named, work, "suspects-target-at-base", changed, deadline, measure)
    if not first.complete:
        if at_base is not None and at_base.complete:
            return [(named[0], _ended(group._replace(where=named_where), named[0], first, at_base, base_label))]
        notice(f"oracle-replay: the suspects' run wrote no results (exit {first.exit_code}); not judged")
        return []
    never = [n for n in nodes if "passed" not in first.outcomes.get(n, [])]
    if never and group.base_tree is not None:  # the change's own tests may fail: they were never judged green
        notice(f"oracle-replay: not judged: {len(never)} suspect(s) never pass when run on their own ({never[0]}, ...)")
    found = _confirmed(python, group, fixed, odd, at_base, work, base_label, changed, deadline, measure, first)
    if group.base_tree is None:  # the base's tests had their flips in the replay's flip run; these have none
        found += _flips(python, group, fixed, first, work, deadline, {node for node, _ in found}, measure)
    judged = {node for node, _ in found}
    found += _answers(python, group, first, judged, work, base_label, deadline, measure)
    return found


def _ended(group: Group, node: str, first: Side, at_base: Side, base_label: str) -> Finding:
    """OG972: the suspects' run of the new code ended without its results where the same run at the base completed.

    The change's own tests run over the base's code for that; where they do not run there (they call what the
    change adds), a run that ends is still the new code's doing as far as the gate can tell (fail closed).
    """
    path, line = group.where[node]
    unknown = group.base_tree is None and not at_base.outcomes
    where = "its tests over the code at" if group.base_tree is None else "the same run at"
    text = (
        f"the suspects' run against the new code ended without its results (exit {first.exit_code}) while {where}"
        f" {base_label} completed: the new code stops the test run when its tests run again"
        + (" (they do not run over that code, so whether they end a run by themselves is unknown)" if unknown else "")
        + "; fix the code"
    )
    return Finding(path, line, 1, "OG972", text)


def _forged(group: Group, node: str, problem: str, run: str = "suspects' run") -> Finding:
    """OG976 for a probe run of the suspects (probes/flips/gate.py ``forged``), where the suspect is."""
    from oracle_guard.probes.flips import gate as flips
    from oracle_guard.probes.flips import processes

    path, line = group.where.get(node, (node.split("::", 1)[0], 1))
    return flips.forged(path, processes.Side(False, {}, {}, None, 0, "", problem=problem), run)._replace(line=line)


def _none_ran(group: Group, nodes: Sequence[str], side: Side) -> Finding:
    """OG977: the suspects' run completed and ran none of the tests the replay saw the change make pass."""
    path, line = group.where[nodes[0]]
    text = (
        f"the suspects' run against the new code completed (exit {side.exit_code}) but ran none of the"
        f" {len(nodes)} test(s) the change made pass ({nodes[0]}, ...): nothing about them was judged again; the"
        " project's options or conftest keep them from running in one process (the gate switches pytest-xdist"
        " off there); make them run in one pytest process"
    )
    return Finding(path, line, 1, "OG977", text)


def _odd(side: Side, node: str) -> tuple[str, str] | None:
    """(code, what the suspect did) when its run shows the code keeps state, hides from watching or lets a flip pass."""
    if node in side.unwatched:
        return "OG972", "removes the gate's call recorder while it runs"
    if repeats.varied(side.outcomes.get(node, [])):
        runs = ", ".join(side.outcomes.get(node, []))
        return "OG972", f"gives {runs} when run watched, again, and in reverse order in one process"
    if side.flipped.get(node) == "passed":
        return "OG973", "passes with every expected output of its examples changed (`~flip~` appended)"
    return None


def _flips(
    python: str,
    group: Group,
    fixed: Sequence[str],
    first: Side,
    work: str,
    deadline: float,
    judged: set[str],
    measure: float | None = None,
) -> list[tuple[str, Finding]]:
    """OG973: a flipped check that passes in a test the change brings, which passes (probes/flips/).

    Two flip runs; a pass in either is the finding (issue 39: a flip has no honest way to pass, and a
    code that counts its processes must not pick the run it behaves in).
    """
    from oracle_guard.probes.flips import processes

    nodes = [n for n in sorted(group.where) if n not in judged and "passed" in first.outcomes.get(n, [])]
    if not nodes:
        return []
    held: set[tuple[str, str]] = set()
    sites: dict[str, dict[str, Any]] = {}
    for tag in ("flips-own", "flips-own-again"):
        trees = {group.name: group.tree}
        ran = processes.run(python, trees, [*fixed, *nodes], 1, deadline, work, tag, claimed=measure)[group.name]
        if ran.problem:
            return [(nodes[0], _forged(group, nodes[0], ran.problem, "flip run of the change's own tests"))]
        if not ran.complete:
            notice(f"oracle-replay: the flip run of the change's own tests wrote no results (exit {ran.exit_code})")
            return []
        held |= {(node, site) for (node, site), v in ran.verdicts.items() if v.passes and node in nodes}
        sites.update(ran.sites)
    passing = sorted(held)
    found: list[tuple[str, Finding]] = []
    for node, site in passing:
        if node in {n for n, _ in found}:
            continue
        info = sites.get(site, {})
        path, line = group.where[node]
        text = (
            f"{node} {group.why}, but its flipped check passes too ({info.get('flip', 'flipped')}): the new code"
            " makes this check unable to fail (a comparison that is always true, code that reads the test's"
            f" expectation, a patched assert); fix the code, or approve the change: `oracle-guard approve"
            f" behavior-change {node}`"
        )
        found.append((node, Finding(str(info.get("path", path)), int(info.get("line", line)), 1, "OG973", text)))
    return found


def _confirmed(
    python: str,
    group: Group,
    fixed: Sequence[str],
    odd: Mapping[str, tuple[str, str]],
    at_base: Side | None,
    work: str,
    base_label: str,
    changed: Sequence[str],
    deadline: float,
    measure: float | None = None,
    first: Side | None = None,
) -> list[tuple[str, Finding]]:
    """The odd suspects whose verdict holds on a second run of the new code, and not at the base."""
    if not odd:
        return []
    tag = f"suspects-again-{group.name}"
    again = _run(python, group.tree, "new", fixed, sorted(odd), work, tag, changed, deadline, measure)
    if again.problem:
        node = sorted(odd)[0]
        return [(node, _forged(group, node, again.problem))]
    found = []
    unrepeatable: list[str] = []
    for node, (code, how) in sorted(odd.items()):
        second = _odd(again, node) if again.complete else None
        # A flipped doctest that passed once has no honest excuse (issue 39): it needs no second run.
        if code != "OG973" and (second is None or second[0] != code):
            notice(f"oracle-replay: flaky suspect: {node} {how} in one run of the new code, not in another")
            continue
        if code == "OG972" and group.base_tree and at_base is not None and at_base.complete and _odd(at_base, node):
            notice(f"oracle-replay: {node} varies between runs at {base_label} too: not judged")
            continue
        if (
            code == "OG972"
            and group.base_tree
            and at_base is not None
            and at_base.complete
            and repeats.fails_elsewhere(at_base.failed_at.get(node, []))
        ):
            # Red at the base, failing at another place when run again: the test itself is not repeatable
            # (a parametrized generator context manager is used up), so its repeats say nothing of the code.
            notice(f"oracle-replay: {node} fails at another place when run again at {base_label}: not judged")
            continue
        if (
            code == "OG972"
            and group.base_tree is None
            and at_base is not None
            and at_base.complete
            and node not in again.unwatched
            and repeats.own_repeats(
                [s.failed_at.get(node, []) for s in (first, again) if s], at_base.failed_at.get(node, [])
            )
        ):
            unrepeatable.append(node)
            continue
        if code == "OG972":
            what = "its outcome depends on how often, in which order or whether watched the code is called"
            fix = "remove the state the code keeps about its callers"
            if group.base_tree is None and (at_base is None or not at_base.outcomes.get(node)):
                what += f" (over the code at {base_label} the test does not run, so whether it repeats by itself is unknown)"
        else:
            what = "the doctest cannot fail (its output check is patched or bypassed)"
            fix = "fix the code so the doctest can fail again"
        path, line = group.where[node]
        text = (
            f"{node} {group.why}, but {how} (on two runs): {what}; {fix}, or approve the change:"
            f" `oracle-guard approve behavior-change {node}`"
        )
        found.append((node, Finding(path, line, 1, code, text)))
    if unrepeatable:
        notice(
            f"oracle-replay: not judged: {len(unrepeatable)} test(s) the change brings fail when run again over the"
            f" code at {base_label} too, where they fail on the new code ({unrepeatable[0]}, ...): not repeatable by"
            " themselves"
        )
    return found


def _answers(
    python: str,
    group: Group,
    first: Side,
    judged: set[str],
    work: str,
    base_label: str,
    deadline: float,
    measure: float | None = None,
) -> list[tuple[str, Finding]]:
    """OG971: a recorded call whose answer in two plain interpreters agrees, and differs from the test run's.

    Every recorded call is made, in order (state the code keeps builds up as in the test run); the
    calls of a test that failed, was judged already, or replaced code or values are not compared.
    """
    calls = first.calls
    replaced = {c["node"] for c in calls if c.get("replaced")}
    compared = [
        i
        for i, c in enumerate(calls)
        if c.get("compare")
        and c["node"] not in judged | replaced
        and first.outcomes.get(c["node"], [""])[0] == "passed"
    ]
    if not compared:
        return []
    share = plain.share(len(calls), deadline, measure)
    runs: list[Any] = []
    for n in (1, 2):
        runs.append(plain.run(python, group.tree, calls, first.hashseed, work, share, f"outside{n}"))
        if isinstance(runs[-1], plain.TimedOut):  # the calls returned in the test run; without it they do not
            return [_hung_outside(group, calls, compared, runs[-1])]
    ended = {r.get("ended_at") for r in runs if isinstance(r, dict) and "ended_at" in r}
    if len(ended) == 1 and all(isinstance(r, dict) and "ended_at" in r for r in runs):
        index = ended.pop()
        if isinstance(index, int) and index in compared:  # the same call ended both plain interpreters
            return [_otherwise(group, calls[index], "ends the interpreter in a plain one")]
    if not all(
        isinstance(r, dict) and isinstance(r.get("answers"), list) and len(r["answers"]) == len(calls) for r in runs
    ):
        notice("oracle-replay: the plain interpreter wrote no answers for the suspects' calls; not judged")
        return []
    answers = _answers_module()
    found: list[tuple[str, Finding]] = []
    opaque = unstable = gone = provided = 0
    flagged: set[str] = set()
    for index in compared:
        call = calls[index]
        node = call["node"]
        one, two = runs[0]["answers"][index], runs[1]["answers"][index]
        if node in flagged:
            continue
        if not one or not two:
            gone += 1
            continue
        if one != two:
            unstable += 1
            continue
        inside = call.get("answer")
        if one[0] == "raised" and inside and inside[0] == "value" and _environmental(one[1]):
            provided += 1  # a file, folder or server the test's fixtures provided and took away
            continue
        if one[0] == "broken":
            outside_text, differs = f"cannot be called ({one[1]})", True
        else:
            verdict = answers.same(inside, one)
            if verdict is None:
                opaque += 1
                continue
            outside_text, differs = _shown(one), not verdict
        if not differs:
            continue
        flagged.add(node)
        found.append(_otherwise(group, call, f"{outside_text} in a plain interpreter"))
    left = [
        f"{count} {why}"
        for count, why in (
            (opaque, "with no stable form"),
            (unstable, "that differ between two plain interpreters"),
            (gone, "whose arguments need test code"),
            (provided, "that need what the test provided (an OSError outside)"),
            (len(replaced), "test(s) that replace code or values (monkeypatch, mocker)"),
        )
        if count
    ]
    notice(
        f"oracle-replay: made {len(compared)} call(s) of {len({calls[i]['node'] for i in compared})} suspect(s)"
        f" again outside pytest{'; not compared: ' + ', '.join(left) if left else ''}"
    )
    return found


def _hung_outside(
    group: Group, calls: list[dict[str, Any]], compared: list[int], timed: plain.TimedOut
) -> tuple[str, Finding]:
    """OG971 for a plain interpreter that did not finish the calls (fail closed): naming the call it was in."""
    at = calls[timed.at] if timed.at is not None and 0 <= timed.at < len(calls) else None
    node = at["node"] if at is not None else calls[compared[0]]["node"]
    path, line = group.where.get(node, (node.split("::", 1)[0], 1))
    where = (
        f", and was still in {_call_text(at)}, as {node} calls it ({at.get('caller')}:{at.get('line')})"
        if at is not None
        else ""
    )
    text = (
        f"the calls {len({c['node'] for c in calls})} suspect(s) made into the changed code returned in the test"
        f" run, and a plain interpreter (no pytest) making them again did not finish in {timed.seconds:.0f} s"
        f"{where}: the new code behaves otherwise when not tested; fix the code"
    )
    return node, Finding(path, line, 1, "OG971", text)


def _otherwise(group: Group, call: dict[str, Any], outside: str) -> tuple[str, Finding]:
    """OG971 for CALL: what it did in the test run, and OUTSIDE (what it did in two plain interpreters)."""
    node = call["node"]
    path, line = group.where.get(node, (node.split("::", 1)[0], 1))
    text = (
        f"{_call_text(call)}, as {node} calls it ({call.get('caller')}:{call.get('line')}), {_shown(call.get('answer'))}"
        f" inside the test run and {outside} (no pytest, no plugins, no test modules), twice: the new code knows it"
        " is tested; make it answer the same whoever calls it, or approve the change:"
        f" `oracle-guard approve behavior-change {node}`"
    )
    return node, Finding(path, line, 1, "OG971", text)


def _environmental(kind: str) -> bool:
    """An OSError (a missing file, a refused connection): the outside lacks what the test's fixtures made."""
    import builtins

    found = getattr(builtins, kind.rpartition(".")[2], None) if kind.startswith("builtins.") else None
    return isinstance(found, type) and issubclass(found, OSError)


def _answers_module() -> Any:
    from oracle_guard.probes.suspects import answers

    return answers


if __name__ == "__main__":  # pragma: no cover
    sys.exit(2)
