"""The suspects' recorded calls made again in a plain interpreter (outside.py), each run held to its share.

Two runs, their time reserved before the first starts (``share``): a hang there is the change's doing and
a finding (gate.py, OG971), never the replay's --timeout, whatever is left of it (docs/ground.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from typing import Any, NamedTuple

from oracle_guard.probes.neighbours.recorded import read_json
from oracle_guard.pytest_side import barrier

OUTSIDE_SECONDS = 60  # a plain interpreter's calls, plus a second per call: the test run made them all already
# What a plain interpreter making them needs at least, beside the base's time for the main run: less than that
# left of --timeout for each of its two runs is the budget's (exit 2), before either starts; more, and one that
# does not finish in its share is a finding, however little of its own bound was left (docs/ground.md).
OUTSIDE_FLOOR = 10.0
KEPT_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TEMP", "TMP", "SYSTEMROOT", "VIRTUAL_ENV")


class TimedOut(NamedTuple):
    """A plain interpreter that did not finish the calls in SECONDS; AT: the call it was making (None: unknown)."""

    seconds: float
    at: int | None


def run(
    python: str, tree: str, calls: list[dict[str, Any]], hashseed: str | None, work: str, seconds: float, tag: str
) -> Any:
    """The plain interpreter's answers to CALLS (outside.py), None when it wrote none, TimedOut past SECONDS."""
    from oracle_guard.probes.suspects import outside as _outside_script

    calls_path, output = os.path.join(work, f"{tag}-new-calls.json"), os.path.join(work, f"{tag}-new.json")
    paths = [tree, *([os.path.join(tree, "src")] if os.path.isdir(os.path.join(tree, "src")) else [])]
    with open(calls_path, "w", encoding="utf-8") as f:
        json.dump({"paths": paths, "calls": calls}, f)  # the paths: those tree_env gives the test run
    progress = output + _outside_script.PROGRESS
    for stale in (output, progress):
        with contextlib.suppress(OSError):
            os.unlink(stale)
    env = {k: v for k, v in os.environ.items() if k in KEPT_ENV}
    if hashseed is not None:
        env["PYTHONHASHSEED"] = hashseed  # set orders as in the test run: only the test's signals differ
    cmd = [python, "-s", os.path.abspath(_outside_script.__file__), calls_path, output]
    with open(os.path.join(work, f"{tag}-new.log"), "wb") as log:
        process = barrier.Process(cmd, tree, env, log, "new", writes=[output, progress])
        try:
            process.wait(time.monotonic() + seconds)  # its share, reserved before the first run (share)
        except subprocess.TimeoutExpired:
            made = _made(progress)
            return TimedOut(seconds, made[-1] if made else None)
        finally:
            process.kill()
    found = read_json(output)
    if found is None:  # ended before it wrote its answers: during the call it was making, if it began one
        made = _made(progress)
        return {"ended_at": made[-1]} if made else None
    return found


def _made(progress: str) -> list[int]:
    """The indexes of the calls a plain interpreter began, in order (outside.py writes each before the call)."""
    try:
        with open(progress, encoding="utf-8") as f:
            return [int(line) for line in f.read().split()]
    except (OSError, ValueError):
        return []


def share(calls: int, deadline: float, measure: float | None) -> float:
    """Each of the two plain interpreters' time: its own bound, or half of what is left of --timeout.

    Reserved before the first starts, so a slow first run cannot leave the second too little.  Less than
    a plain interpreter needs (OUTSIDE_FLOOR, plus the base's time for the main run, which made every
    call) is the budget's: the replay's --timeout, exit 2, before anything of the change runs here.
    """
    bound = OUTSIDE_SECONDS + calls
    share = min(bound, (deadline - time.monotonic()) / 2)
    if share < min(bound, OUTSIDE_FLOOR + (measure or 0.0)):
        raise subprocess.TimeoutExpired("the suspects' calls outside pytest", share)
    return share
