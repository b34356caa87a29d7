"""A red base: the base's failing tests are the task, and the change must make their base versions pass.

Every base test that failed or errored at the base (or whose module did not collect there) is
classified by what the change did with it, judged from runs, never from how the test is spelled:

- its base version passes against the new code: the change fixed it, nothing to say;
- its base version now skips or xfails against the new code: the code silenced it (OG902);
- its base version still fails against the new code: the task is not done.  When the change also
  touched the test side, the change's own version of the test runs in a third tree (the change as
  committed, its tests included); if that version passes, skips, xfails or is gone, the change
  rewrote the failing test instead of the code (OG907).  Otherwise it is a notice: the CI run's
  own pytest reports the red suite, the gate judges weakening.

A person who decides the test itself was wrong signs ``behavior-change NODE`` (the finding says so).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Callable, NamedTuple

from oracle_guard.probes.replay import ledger
from oracle_guard.pytest_side import ground
from oracle_guard.reporting.report import Finding

RED = ("failed", "error")
SILENCED = {"skipped": "now skips", "xfailed": "now xfails"}
VERDICTS = {
    "passed": "passes",
    "xpassed": "passes (as an xpass)",
    "skipped": "is skipped",
    "xfailed": "is marked xfail",
}


class Red(NamedTuple):
    """What was red at the base and is still red against the new code."""

    tests: dict[str, ledger.Outcome]  # base node id -> its base outcome
    messages: dict[str, str]  # base node id -> how its base version fails against the new code
    modules: dict[str, str]  # base test module that collects neither at the base nor on the new code -> error
    vanished: frozenset[str] = (
        frozenset()
    )  # of TESTS, ids the new code's run did not collect (ids from production values)

    @property
    def empty(self) -> bool:
        return not self.tests and not self.modules


def still_red(base: ledger.Result, new: ledger.Result) -> Red:
    """The base's failures whose base versions still fail, error or do not collect against the new code."""
    tests: dict[str, ledger.Outcome] = {}
    messages: dict[str, str] = {}
    vanished = set()
    for node, before in base.items.items():
        if before.outcome not in RED:
            continue
        after = new.items.get(node)
        if after is None or after.outcome in RED:
            tests[node] = before
            messages[node] = (after.message if after is not None else new.errors.get(before.path, "")) or before.message
            if after is None and before.path not in new.errors:
                vanished.add(node)
    modules = {path: error for path, error in base.errors.items() if path in new.errors}
    return Red(tests, messages, modules, frozenset(vanished))


def silenced(base: ledger.Result, new: ledger.Result, base_label: str) -> list[tuple[str, Finding]]:
    """Base failures whose base versions skip or xfail against the new code: the code silenced the task."""
    found = []
    for node, before in base.items.items():
        after = new.items.get(node)
        if before.outcome in RED and after is not None and after.outcome in SILENCED:
            text = (
                f"{node} fails at {base_label} and {SILENCED[after.outcome]} against the new code"
                f"{': ' + after.message if after.message else ''}; the code silences the failing test instead of"
                f" fixing it: make the base's test pass, or approve the change: `oracle-guard approve behavior-change {node}`"
            )
            found.append((node, Finding(before.path, before.line, 1, "OG902", text)))
    return found


def renames(pairs: Iterable[tuple[str | None, str | None]]) -> dict[str, str]:
    """Base path -> the change's path, for (old, new) pairs of a change's files that moved."""
    return {old: new for old, new in pairs if old and new and old != new}


def target_paths(red: Red, moved: dict[str, str], exists: Callable[[str], bool]) -> list[str]:
    """The change's versions of the test modules holding the still-red tests, where they still exist."""
    paths = {moved.get(p, p) for p in {o.path for o in red.tests.values()} | set(red.modules)}
    return sorted(p for p in paths if exists(p))


def _family(items: dict[str, ledger.Outcome], node: str) -> list[ledger.Outcome]:
    """The cases of NODE when the change parametrized it (`test_x` -> `test_x[...]`)."""
    return [o for n, o in items.items() if n.startswith(node + "[")]


def _verdict(node: str, target: ledger.Result, exists: Callable[[str], bool], path: str) -> str | None:
    """What the change's own version of a still-red base test does; None: it still fails (the task is open)."""
    if not exists(path):
        return "is gone (its module was deleted)"
    after = target.items.get(node)
    if after is not None:
        return None if after.outcome in RED else VERDICTS.get(after.outcome, after.outcome)
    if path in target.errors:
        return None  # the change's version does not collect either: still red
    cases = _family(target.items, node)
    if cases:
        if any(o.outcome in RED for o in cases):
            return None
        return "was parametrized into cases that all pass"
    function, bracket, _ = node.partition("[")
    if bracket and _family(target.items, function):
        return "lost this failing case from its parametrization"
    return "is gone (deleted, renamed or deselected)"


def rewritten(
    red: Red,
    target: ledger.Result,
    moved: dict[str, str],
    exists: Callable[[str], bool],
    base_label: str,
) -> tuple[list[tuple[str, Finding]], list[str]]:
    """OG907 for each still-red test whose changed version no longer fails; the ids still red."""
    found: list[tuple[str, Finding]] = []
    open_ids: list[str] = []
    if not target.items and not target.errors and target.exit_code not in (0, 1, 2, 5):
        # pytest could not run the change's own tests at all in the gate's tree, where the base's ran: the
        # change's doing (a conftest that breaks outside the work tree, say), judged against it (OG923).
        first = min([*(o.path for o in red.tests.values()), *red.modules])
        what = "the change's own version of the tests that fail at " + base_label
        return [(first, ground.scratch_only(what, first, target.exit_code, target.tail))], []
    for node, before in sorted(red.tests.items()):
        path = moved.get(before.path, before.path)
        mapped = path + node[len(before.path) :]
        verdict = _verdict(mapped, target, exists, path)
        if node in red.vanished and verdict is not None and target.items.get(mapped) is None:
            verdict = None  # its id was gone against the new code already: the code named it, not the test edit
        if verdict is None:
            open_ids.append(node)
            continue
        failure = red.messages.get(node, "")
        shown = f" ({failure})" if failure else ""
        where = target.items.get(mapped)
        now = f" (now at {path}:{where.line})" if where is not None and where.line else ""
        text = (
            f"{node} fails at {base_label} and its base version still fails against the new code{shown};"
            f" the change's own version of the test {verdict}{now}: the change rewrote the failing test instead of"
            f" fixing the code. Fix the code so the base's test passes, or, if the test was wrong, approve it:"
            f" `oracle-guard approve behavior-change {node}`"
        )
        found.append((node, Finding(before.path, before.line, 1, "OG907", text)))
    for module, error in sorted(red.modules.items()):
        path = moved.get(module, module)
        cases = [o for o in target.items.values() if o.path == path]
        if not exists(path):
            verdict = "is gone"
        elif path in target.errors or any(o.outcome in RED for o in cases):
            open_ids.append(module)
            continue
        else:
            verdict = "collects and its tests pass" if cases else "collects but holds no test any more"
        text = (
            f"the base's tests in {module} do not collect at {base_label} nor against the new code ({error});"
            f" the change's own version of the module {verdict}: the change rewrote the failing tests instead of"
            " fixing the code. Fix the code so the base's tests collect and pass, or, if they were wrong, approve"
            f" it: `oracle-guard approve behavior-change {module}`"
        )
        found.append((module, Finding(module, 1, 1, "OG907", text)))
    return found, open_ids


def notice_text(open_ids: list[str], base_label: str) -> str:
    shown = ", ".join(open_ids[:3]) + (f" and {len(open_ids) - 3} more" if len(open_ids) > 3 else "")
    return (
        f"oracle-replay: {len(open_ids)} base test(s) that fail at {base_label} still fail against the new code"
        f" ({shown}): the task is not done; left out of the probes"
    )


def exists_in(tree: str) -> Callable[[str], bool]:
    return lambda path: os.path.isfile(os.path.join(tree, path))


class Fate(NamedTuple):
    """What became of the base's red tests: the line a replay ends with, and its JSON (docs/output.md)."""

    base_label: str
    red: int  # base tests that failed or errored at the base
    now_pass: int  # of them, those whose base version passes against the new code
    still_red: int  # of them, those whose base version still fails, errors or does not collect
    modules: int = 0  # base test modules that did not collect at the base
    modules_still: int = 0  # of them, those that still do not collect against the new code

    def text(self) -> str:
        told = (
            f"{self.now_pass} of {self.red} test{'s' if self.red != 1 else ''} red at {self.base_label} now pass;"
            f" {self.still_red} still red"
        )
        others = self.red - self.now_pass - self.still_red
        if others:
            told += f"; {others} now skip{'s' if others == 1 else ''} or xfail{'s' if others == 1 else ''}"
        if self.modules:
            told += (
                f"; {self.modules} test module{'s' if self.modules != 1 else ''} that did not collect at"
                f" {self.base_label}: {self.modules_still} still do{'es' if self.modules_still == 1 else ''} not"
            )
        return told

    def document(self) -> dict[str, object]:
        return {
            "base": self.base_label,
            "red": self.red,
            "now_pass": self.now_pass,
            "still_red": self.still_red,
            "modules": self.modules,
            "modules_still": self.modules_still,
            "text": self.text(),
        }


def fate(base: ledger.Result, new: ledger.Result, base_label: str) -> Fate | None:
    """What became of the base's red tests against the new code (judged on the base's versions); None: none was red."""
    red = [node for node, o in base.items.items() if o.outcome in RED]
    if not red and not base.errors:
        return None
    now_pass = sum(1 for n in red if (after := new.items.get(n)) is not None and after.outcome in ("passed", "xpassed"))
    still = still_red(base, new)
    return Fate(base_label, len(red), now_pass, len(still.tests), len(base.errors), len(still.modules))
