"""Paired runs: two commands timed in turn (A B A B ...) as whole processes, with public tools only.

    python bench/paired.py [-n 5] [--warmup 1] [--timeout 900] [--output FILE] [--vs 'B CMD'] -- A CMD [ARG ...]

Each command is started as a child process (no shell: --vs is one string split
as a shell splits words; a pipe or a redirection is written `sh -c '...'`),
with an empty standard input and both output streams thrown away (or appended
to --output FILE).  WARMUP runs of each are not counted; then RUNS pairs run,
A then B.  Per run: wall seconds (time.perf_counter just before the start and
just after the child is reaped), user and system CPU seconds and the peak
resident memory as the kernel accounts the reaped child (os.wait4: the child
plus the descendants it waited for; the peak is the largest single process).
`cpu` is user + system.  A/B is taken pair by pair, so a machine that drifts
in speed during the call moves both sides of each ratio alike.

Output, one figure a line, min median max (quote the median; the spread says
how noisy the machine was):

    A: python -c pass
    B: python -c 'sum(range(10**7))'
    5 pairs after 1 warm-up each (A then B), min median max
    peak floor MiB 15.1 (this process's resident size: a small command's peak reads as this)
    A wall s         0.0278     0.0284     0.0398
    A cpu s          0.0114     0.0118     0.0151
    A user s         0.0039     0.0076     0.0118
    A sys s          0.0000     0.0039     0.0078
    A peak MiB      14.9570    14.9570    14.9570
    A exit          0 x5
    B wall s         0.3028     0.3355     0.3499
    ...                                        (B's cpu, user, sys, peak, exit)
    A/B wall         0.0830     0.0902     0.1138
    A/B cpu          0.0870     0.0904     0.1080

The peak floor: Linux carries the forking process's resident size into the
child's accounting (fork, then exec), so a small command's peak reads as about
this script's size when it started the child (the largest such size is
printed; where /proc is missing, this process's own peak).
Without --vs only A's lines are printed.  Exit status: 0 every run was started
and reaped (the commands' own exit codes are printed, not acted on); 2 unusable
arguments or a command that cannot be started (one line on stderr); 3 the
--timeout bound (one bound on the whole call, warm-up included) ended it early:
the whole pairs finished by then are printed.  Each run is in its own session;
what it leaves running in its process group is killed after it exits.

Other bench scripts import it: `pair_runs(a, b, runs=...)` returns the runs,
`summarize(result)` the {"A wall": (min, median, max), ...} table.
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO

FIGURES = ("wall", "cpu", "user", "sys", "peak")
UNITS = {"wall": "s", "cpu": "s", "user": "s", "sys": "s", "peak": "MiB"}
# ru_maxrss is KiB on Linux and the BSDs, bytes on macOS.
MAXRSS_TO_MIB = 1 / (1024 * 1024) if sys.platform == "darwin" else 1 / 1024


class PairedError(Exception):
    """A command that cannot be started, or unusable arguments: the CLI prints it as one line, exit 2."""


@dataclass(frozen=True)
class Run:
    wall: float
    user: float
    sys: float
    peak: float  # MiB
    exit: int

    @property
    def cpu(self) -> float:
        return self.user + self.sys


@dataclass
class Result:
    a: list[Run] = field(default_factory=list)
    b: list[Run] = field(default_factory=list)  # empty without B; else as long as a (whole pairs only)
    timed_out: bool = False
    floor: float = 0.0  # MiB: this process's largest resident size at a start (see the module docstring)


def _check_startable(command: Sequence[str], cwd: str | None) -> None:
    if not command:
        raise PairedError("an empty command")
    program = command[0]
    if os.sep in program and cwd and not os.path.isabs(program):
        program = os.path.join(cwd, program)
    if shutil.which(program) is None:
        raise PairedError(f"cannot start {shlex.join(command)}: {command[0]} is not an executable file or on PATH")


def _resident_mib() -> float:
    """This process's resident size now: what a child it starts inherits in its peak (not our own peak, which
    carries the size of whatever started us)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize() / (1024 * 1024)
    except (OSError, IndexError, ValueError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * MAXRSS_TO_MIB


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone already


def _run_once(
    command: Sequence[str], cwd: str | None, env: dict[str, str] | None, output: IO[bytes] | int, seconds_left: float
) -> Run | None:
    """One timed run, or None when the time bound killed it."""
    killed = threading.Event()
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(
            list(command),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            start_new_session=True,  # its own process group: the bound and the clean-up reach its children
        )
    except OSError as error:
        raise PairedError(f"cannot start {shlex.join(command)}: {error.strerror or error}") from None

    def kill() -> None:
        killed.set()
        _kill_group(proc.pid)

    timer = threading.Timer(max(seconds_left, 0.0), kill)
    timer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    except BaseException:
        _kill_group(proc.pid)
        proc.wait()
        raise
    finally:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
    _kill_group(proc.pid)  # what it left running in its group
    if killed.is_set():
        return None
    return Run(wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss * MAXRSS_TO_MIB, proc.returncode)


def pair_runs(
    a: Sequence[str],
    b: Sequence[str] | None = None,
    *,
    runs: int = 5,
    warmup: int = 1,
    timeout: float = 900.0,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    output: str | None = None,
) -> Result:
    """Run A (and B, in turn) WARMUP times uncounted, then RUNS times each; raise PairedError if one cannot start."""
    if runs < 1 or warmup < 0 or timeout <= 0:
        raise PairedError(
            f"runs must be at least 1, warmup at least 0, timeout above 0 (got {runs}, {warmup}, {timeout})"
        )
    commands = [a] if b is None else [a, b]
    for command in commands:
        _check_startable(command, cwd)
    deadline = time.monotonic() + timeout
    result = Result()
    sink: IO[bytes] | int = open(output, "ab") if output else subprocess.DEVNULL  # closed below
    try:
        for index in range(warmup + runs):
            done: list[Run] = []
            for command in commands:
                result.floor = max(result.floor, _resident_mib())
                run = _run_once(command, cwd, env, sink, deadline - time.monotonic())
                if run is None:
                    result.timed_out = True
                    return result  # an unfinished pair is not counted
                done.append(run)
            if index >= warmup:
                result.a.append(done[0])
                if b is not None:
                    result.b.append(done[1])
    finally:
        if not isinstance(sink, int):
            sink.close()
    return result


def _spread(values: Sequence[float]) -> tuple[float, float, float]:
    return min(values), statistics.median(values), max(values)


def _ratio(top: float, bottom: float) -> float:
    return top / bottom if bottom else float("inf")


def summarize(result: Result) -> dict[str, tuple[float, float, float]]:
    """{"A wall": (min, median, max), ... "A/B cpu": ...}; empty when no whole run finished."""
    table: dict[str, tuple[float, float, float]] = {}
    for side, found in (("A", result.a), ("B", result.b)):
        if found:
            for figure in FIGURES:
                table[f"{side} {figure}"] = _spread([getattr(run, figure) for run in found])
    if result.a and result.b:
        for figure in ("wall", "cpu"):
            ratios = [_ratio(getattr(x, figure), getattr(y, figure)) for x, y in zip(result.a, result.b)]
            table[f"A/B {figure}"] = _spread(ratios)
    return table


def _exits(found: Sequence[Run]) -> str:
    codes = [run.exit for run in found]
    return ", ".join(f"{code} x{codes.count(code)}" for code in sorted(set(codes)))


def report(result: Result, a: Sequence[str], b: Sequence[str] | None, warmup: int) -> str:
    lines = [f"A: {shlex.join(a)}"] + ([f"B: {shlex.join(b)}"] if b is not None else [])
    kind = "pairs" if b is not None else "runs"
    lines.append(f"{len(result.a)} {kind} after {warmup} warm-up each{' (A then B)' if b else ''}, min median max")
    lines.append(
        f"peak floor MiB {result.floor:.1f} (this process's resident size: a small command's peak reads as this)"
    )
    table = summarize(result)
    for side, found in (("A", result.a), ("B", result.b)):
        if not found:
            continue
        for figure in FIGURES:
            low, mid, high = table[f"{side} {figure}"]
            lines.append(f"{f'{side} {figure} {UNITS[figure]}':<12}{low:>11.4f}{mid:>11.4f}{high:>11.4f}")
        lines.append(f"{f'{side} exit':<12}{'':>4}{_exits(found)}")
    for figure in ("wall", "cpu"):
        if f"A/B {figure}" in table:
            low, mid, high = table[f"A/B {figure}"]
            lines.append(f"{f'A/B {figure}':<12}{low:>11.4f}{mid:>11.4f}{high:>11.4f}")
    if result.timed_out:
        lines.append("the --timeout bound ended the call early: the figures above are the whole pairs finished by then")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="paired.py", description=__doc__.split("\n\n")[0] if __doc__ else None, allow_abbrev=False
    )
    parser.add_argument("-n", "--runs", type=int, default=5, help="counted runs of each command (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="uncounted runs of each first (default 1)")
    parser.add_argument("--timeout", type=float, default=900.0, help="one bound in seconds on the whole call")
    parser.add_argument("--vs", metavar="'B CMD'", help="the second command (B), one string split as a shell does")
    parser.add_argument("--output", metavar="FILE", help="append both commands' output here (default: discard)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- A CMD [ARG ...]")
    args = parser.parse_args(argv)
    a = args.command[1:] if args.command[:1] == ["--"] else args.command
    try:
        b = shlex.split(args.vs) if args.vs is not None else None
        if not a:
            raise PairedError("no command A: give it after --")
        result = pair_runs(
            a, b, runs=args.runs, warmup=args.warmup, timeout=args.timeout, output=args.output, cwd=None, env=None
        )
    except (PairedError, ValueError) as error:  # ValueError: --vs with an unclosed quote
        print(f"paired.py: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # --output not writable
        print(f"paired.py: {error.filename}: {error.strerror}", file=sys.stderr)
        return 2
    print(report(result, a, b, args.warmup))
    return 3 if result.timed_out else 0


if __name__ == "__main__":
    raise SystemExit(main())
