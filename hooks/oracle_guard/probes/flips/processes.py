"""One probe pytest process per scratch tree, and what each reported (flips and neighbours).

Each process runs the selection with the flips plugin (and the neighbours plugin when call
sites were found) loaded through probes/runner.py; its results files are read back only when
the run's receipts (probes/receipts.py) show they are its own process's.  The base side runs
first and alone (pytest_side/barrier.py); probes/flips/gate.py judges what the sides reported.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from oracle_guard.probes import receipts
from oracle_guard.probes.flips.cached import Verdict
from oracle_guard.probes.neighbours.recorded import read_json
from oracle_guard.probes.runner import RUNNER, log_tail, own_fds, runner_config
from oracle_guard.pytest_side import barrier
from oracle_guard.repo.interpreters import tree_env


class Side(NamedTuple):
    """What one probe run of one tree reported."""

    complete: bool
    sites: dict[str, dict[str, Any]]
    verdicts: dict[tuple[str, str], Verdict]  # (node id from the repository root, site) -> counts
    neighbours: dict[str, Any] | None
    exit_code: int
    tail: str
    seconds: float | None = None  # how long the process ran, measured from outside (the cache keeps the base's)
    problem: str = ""  # why its results files do not add up (probes/receipts.py): not complete then


def _join(root: str, node: str) -> str:
    return node if root in ("", ".") else os.path.normpath(os.path.join(root, node)).replace(os.sep, "/")


class Probe:
    """One probe pytest process in a scratch tree, in its own process group."""

    def __init__(
        self,
        python: str,
        tree: str,
        args: Sequence[str],
        work: str,
        name: str,
        calls: str | None,
        side: str,
        flips: bool = True,
    ) -> None:
        """FLIPS: load the flip plugin (False: the neighbours plugin alone, which then runs every test it is given)."""
        from oracle_guard.probes.flips import plugin as _flips_plugin

        self.flips_out = os.path.join(work, f"{name}.flips.json") if flips else None
        self.neighbours_out = os.path.join(work, f"{name}.neighbours.json") if calls else None
        self.log_path = os.path.join(work, f"{name}.log")
        self.seconds: float | None = None
        plugins = [[os.path.abspath(_flips_plugin.__file__), self.flips_out]] if self.flips_out else []
        env = tree_env(python, tree)
        if calls and self.neighbours_out:
            from oracle_guard.probes.neighbours import plugin as _neighbours_plugin

            plugins.append([os.path.abspath(_neighbours_plugin.__file__), self.neighbours_out])
            env["ORACLE_GUARD_NEIGHBOURS"] = calls
        env, self.imports = barrier.env_for(side, env, name)
        for output in (self.flips_out, self.neighbours_out):  # what is read back is this run's own
            if output:
                with contextlib.suppress(OSError):
                    os.unlink(output)
        self.receipts = receipts.Receipts()
        cmd = [python, "-c", barrier.REPORT_IMPORTS + RUNNER, runner_config(plugins, self.receipts.fd), *args]
        self.outputs = [o for o in (self.flips_out, self.neighbours_out, _recording_of(calls)) if o]
        with open(self.log_path, "wb") as log:
            try:
                self.process = barrier.Process(
                    cmd, tree, env, log, side, report=self.imports, writes=self.outputs, pass_fds=own_fds(self.receipts)
                )
            finally:
                self.receipts.started()

    def wait(self, deadline: float) -> None:
        self.process.wait(deadline)
        self.seconds = time.monotonic() - self.process.started

    def kill(self) -> None:
        self.process.kill()
        self.receipts.close()

    def side(self) -> Side:
        code, tail = self.process.proc.returncode, log_tail(self.log_path)
        problem = self.receipts.problem(self.process.proc.pid, self.outputs)
        if problem:
            return Side(False, {}, {}, None, code, tail, problem=problem)
        data = read_json(self.flips_out) if self.flips_out else {"complete": True}
        neighbours = read_json(self.neighbours_out) if self.neighbours_out else None
        if not isinstance(data, dict) or data.get("complete") is not True:
            return Side(False, {}, {}, neighbours, code, tail)
        root = str(data.get("rootdir", "."))
        verdicts: dict[tuple[str, str], Verdict] = {}
        for node, site, runs, passes in data.get("records", []):
            key = (_join(root, str(node)), str(site))
            if key in verdicts:  # one record per flip and test: a second is another run's
                return Side(False, {}, {}, None, code, tail, problem=f"two verdicts for {site} in {key[0]}")
            verdicts[key] = Verdict(int(runs), int(passes))
        return Side(True, dict(data.get("sites", {})), verdicts, neighbours, code, tail, self.seconds)


def _recording_of(config: str | None) -> str | None:
    """Where a neighbours configuration has the run record the calls its tests make (None: it records none)."""
    data = read_json(config) if config else None
    found = data.get("record") if isinstance(data, dict) else None
    return found if isinstance(found, str) else None


def run(
    python: str,
    trees: Mapping[str, str],
    args: Sequence[str],
    jobs: int,
    deadline: float,
    work: str,
    tag: str,
    calls: str | None = None,
    record: str | None = None,
    record_new: str | None = None,
    claimed: float | None = None,
    flips: bool = True,
) -> dict[str, Side]:
    """One probe process per tree (two at once when JOBS allows); RECORD, RECORD_NEW: the base's and the new
    tree's calls file instead (each records the calls its tests make).

    CLAIMED: the base side's time from a cache entry, for TREES without a base side (_warm).
    FLIPS: False runs the neighbours plugin alone (Probe)."""
    sides: dict[str, Side] = {}
    pending: list[tuple[str, Probe]] = []
    try:
        for group in barrier.in_turn(trees, claimed):  # the base side first and alone, never beside the new code
            for name in group:
                if len(pending) >= jobs:
                    done_name, done = pending.pop(0)
                    done.wait(deadline)
                    sides[done_name] = done.side()
                own = record if record and name == "base" else record_new if record_new and name == "new" else calls
                pending.append((name, Probe(python, trees[name], args, work, f"{tag}-{name}", own, name, flips)))
            while pending:
                done_name, done = pending.pop(0)
                done.wait(deadline)
                sides[done_name] = done.side()
    finally:
        for _, probe in pending:
            probe.kill()
    return sides
