"""A replay run's ledger, read and judged from outside the process that wrote it.

Inside the pytest process the code under test controls everything: it can
exit early with status 0 (``atexit.register(os._exit, 0)``), replace
``unittest.TestCase.assertEqual``, rebind ``builtins.AssertionError`` or
leave through ``sys.exit(0)`` in a hook.  So the replay plugin
(_replay_plugin.py) streams a ledger to a file as the run goes: the
collected ids, one outcome per test as it ends, collection errors, and a
completion marker with pytest's exit status, written last.  Every run also
carries planted *canaries* (``canary_source``), tests supplied from outside
the user's tree whose outcome is known: three that must fail (a plain
``assert``, ``unittest``'s ``assertEqual``, a ``pytest.raises`` that does not
raise) and one that must pass.  ``broken`` lists what a finished ledger says
went wrong; a run is sound when it lists nothing.

Ledger lines (tab-separated; paths and ids relative to pytest's rootdir,
which the first line gives relative to the folder pytest ran in)::

    rootdir<TAB>path
    collected<TAB>node id
    item<TAB>outcome<TAB>path<TAB>line<TAB>node id<TAB>first line of the failure
    error<TAB>path<TAB>first line of the error
    pool<TAB>node id      (a shard's run: every selected id, before the shard was kept)
    canary<TAB>outcome<TAB>path<TAB>line<TAB>node id<TAB>   (pytest-xdist: one per worker and canary)
    done<TAB>exit status

Under pytest-xdist each worker runs the canaries after its last test, outside pytest's count (they
do not set its exit status), and the controller writes one canary line per worker and canary: a
canary's outcome is the first one that is not the expected one.
"""

from __future__ import annotations

import os
import secrets
import signal
from typing import NamedTuple

# role -> (what the canary is, the outcome it must have)
CANARIES = {
    "c0": ("failing assert", "failed"),
    "c1": ("failing unittest assertEqual", "failed"),
    "c2": ("pytest.raises that does not raise", "failed"),
    "c3": ("passing test", "passed"),
}
CANARY_SOURCE = '''\
"""oracle-guard replay canaries: planted tests whose outcome is known (never part of your tree)."""

import unittest

import pytest


def test_c0_NONCE():
    seen = [1, 2]
    assert seen == [1, 3]


class TestC1NONCE(unittest.TestCase):
    def test_c1_NONCE(self):
        self.assertEqual("left", "right")


def test_c2_NONCE():
    with pytest.raises(ValueError):
        int("7")


def test_c3_NONCE():
    assert sorted([2, 1]) == [1, 2]
'''


def new_nonce() -> str:
    return secrets.token_hex(6)


def canary_source(nonce: str) -> str:
    return CANARY_SOURCE.replace("NONCE", nonce)


def write_canaries(folder: str, nonce: str) -> str:
    """The canary module in FOLDER (outside every tree pytest collects); its path."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"test_canary_{nonce}.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(canary_source(nonce))
    return path


class Outcome(NamedTuple):
    outcome: str
    path: str  # the test's file, relative to the repository
    line: int
    message: str


class Result(NamedTuple):
    items: dict[str, Outcome]  # node id relative to the repository -> outcome (canaries apart)
    errors: dict[str, str]  # file relative to the repository -> first line of its collection error
    exit_code: int  # the process's
    tail: str
    collected: tuple[str, ...] = ()  # node ids pytest collected (canaries apart)
    finished: int | None = None  # the exit status pytest wrote last; None: the run never got there
    canaries: dict[str, str] = {}  # role -> outcome ("" when it did not run)
    planted: bool = False  # whether the run carried canaries
    pool: tuple[str, ...] = ()  # a shard's run: every selected node id before the shard was kept
    spread: bool = False  # pytest-xdist's workers ran the canaries, beside pytest's exit status


def _join(root: str, path: str) -> str:
    return path if root in ("", ".") else os.path.normpath(os.path.join(root, path)).replace(os.sep, "/")


def _canary_role(node: str, nonce: str) -> str | None:
    if not nonce or nonce not in node:
        return None
    name = node.rsplit("::", 1)[-1]
    role = name[len("test_") :].split("_", 1)[0]
    return role if role in CANARIES else None


def read(path: str, exit_code: int, tail: str, nonce: str = "") -> Result:
    """The ledger at PATH (missing or cut short: what is there); canaries by NONCE apart."""
    items: dict[str, Outcome] = {}
    errors: dict[str, str] = {}
    collected: list[str] = []
    pool: list[str] = []
    canaries: dict[str, str] = {role: "" for role in CANARIES} if nonce else {}
    finished = None
    spread = False
    root = "."
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
    except OSError:  # missing, or made unreadable by the run (a mode bars no write grant): no completion marker
        lines = []
    for line in lines:
        parts = line.split("\t")
        kind = parts[0]
        if kind == "rootdir" and len(parts) == 2:
            root = parts[1]
        elif kind == "collected" and len(parts) >= 2:
            node = "\t".join(parts[1:])
            if _canary_role(node, nonce) is None:
                collected.append(_join(root, node))
        elif kind in ("item", "canary") and len(parts) >= 6:
            outcome, file, number, node, message = parts[1], parts[2], parts[3], parts[4], "\t".join(parts[5:])
            role = _canary_role(node, nonce)
            spread = spread or (kind == "canary" and role is not None)
            if role is not None:
                if canaries[role] in ("", CANARIES[role][1]):  # one line per xdist worker: keep what is wrong
                    canaries[role] = outcome
            elif kind == "item":
                items[_join(root, node)] = Outcome(outcome, _join(root, file), int(number or 1), message)
        elif kind == "error" and len(parts) >= 3:
            errors[_join(root, parts[1])] = "\t".join(parts[2:])
        elif kind == "pool" and len(parts) >= 2:
            node = "\t".join(parts[1:])
            if _canary_role(node, nonce) is None:
                pool.append(_join(root, node))
        elif kind == "done" and len(parts) == 2 and parts[1].lstrip("-").isdigit():
            finished = int(parts[1])
    return Result(
        items, errors, exit_code, tail, tuple(collected), finished, canaries, bool(nonce), tuple(pool), spread
    )


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def broken(result: Result) -> dict[str, str]:
    """What the ledger and the exit status say went wrong: key -> sentence (empty: a sound run).

    The keys let the replay compare the two sides: a key broken on the new
    side only is the new code's doing.
    """
    found: dict[str, str] = {}
    code = result.exit_code
    if result.finished is None:
        how = f"was killed by {_signal_name(code)}" if code < 0 else f"exited {code}"
        found["finished"] = f"the pytest process {how} before pytest finished (no completion marker)"
    missing = [n for n in result.collected if n not in result.items]
    if missing:
        found["complete"] = f"{len(missing)} collected test(s) have no outcome (first: {missing[0]})"
    failed = sum(1 for o in result.items.values() if o.outcome in ("failed", "error"))
    if not result.spread:  # canaries run by xdist's workers do not count in pytest's exit status
        failed += sum(1 for o in result.canaries.values() if o in ("failed", "error"))
    failed += len(result.errors)
    if result.finished == 0 and failed:
        found["exit"] = f"pytest's exit status 0 disagrees with {failed} failed test(s)"
    elif result.finished is not None and code >= 0 and code != result.finished:
        found["exit"] = f"pytest finished with exit status {result.finished} but the process exited {code}"
    elif failed and code == 0:
        found["exit"] = f"the process exited 0 although {failed} test(s) failed"
    for role, outcome in result.canaries.items():
        what, expected = CANARIES[role]
        if outcome == expected or (not outcome and "finished" in found):
            continue
        said = {"": "did not run", "passed": "passed", "failed": "failed", "error": "errored"}.get(
            outcome, f"ended {outcome}"
        )
        found[f"canary:{role}"] = f"the planted {what} {said} (it must {'pass' if expected == 'passed' else 'fail'})"
    return found
