"""A collection process's stdout and stderr, read without trusting their size or its time.

The collection runs the change's code, so what it writes and how long it takes are the change's to
choose: a conftest that prints hundreds of MB, a module that waits at import. Each stream is drained
by a thread that keeps only its last `KEEP` bytes (what messages and faulthandler's dump need), the
total is counted, and the process is killed when it writes more than the cap or outlives the limit.
What stopped it is `Stopped`: the hook decides whether the change is to blame (OG808/OG809) or not
(one line, exit 2).
"""

from __future__ import annotations

import re
import subprocess
import threading
import time
from collections import deque
from typing import IO

from oracle_guard.reporting.findings import UsageError

KEEP = 64 * 1024  # bytes kept of each stream's end
DRAIN_SECONDS = 5.0  # after the process ended: a child of it that holds the pipe is not waited for


class Stopped(UsageError):
    """The collection was killed: it hung (HUNG) or flooded its output. Exit 2 unless the hook blames the change."""

    def __init__(self, message: str, hung: bool, seconds: float, written: int, stderr: bytes) -> None:
        super().__init__(message)
        self.hung = hung
        self.seconds = seconds
        self.written = written
        self.stderr = stderr


class _Tail:
    """One stream drained in a thread: its last KEEP bytes and how many it wrote in all."""

    def __init__(self, stream: IO[bytes] | None, over: threading.Event, cap: int, counted: list[int]) -> None:
        # OVER is set once the streams together wrote more than CAP bytes (COUNTED, shared).
        self.chunks: deque[bytes] = deque()
        self.kept = 0
        self.stream = stream
        self.over, self.cap, self.counted = over, cap, counted
        self.thread = threading.Thread(target=self._read, daemon=True)
        if stream is not None:
            self.thread.start()

    def _read(self) -> None:
        assert self.stream is not None
        read = getattr(self.stream, "read1", self.stream.read)
        while True:
            try:
                chunk = read(65536)
            except (OSError, ValueError):
                return
            if not chunk:
                return
            self.chunks.append(chunk)
            self.kept += len(chunk)
            while self.kept - len(self.chunks[0]) >= KEEP:
                self.kept -= len(self.chunks.popleft())
            self.counted[0] += len(chunk)  # two writers: a race costs a chunk of accuracy, never the bound
            if self.counted[0] > self.cap:
                self.over.set()
                return  # read no more: the writer blocks on the full pipe until it is killed

    def text(self) -> bytes:
        if self.stream is not None:
            self.thread.join(DRAIN_SECONDS)
        return b"".join(list(self.chunks))[-KEEP:]


def wait(proc: subprocess.Popen[bytes], limit: float, cap: int, what: str) -> tuple[bytes, bytes]:
    """PROC's stdout and stderr tails once it ends; Stopped when it outlives LIMIT s or writes over CAP bytes."""
    wake = threading.Event()  # the process ended, or its output passed the cap: no polling, no added latency
    counted = [0]
    out, err = (_Tail(s, wake, cap, counted) for s in (proc.stdout, proc.stderr))

    def reap() -> None:
        proc.wait()
        wake.set()

    threading.Thread(target=reap, daemon=True).start()
    start = time.monotonic()
    wake.wait(limit)
    stopped = proc.poll() is None
    if stopped:
        proc.kill()
        proc.wait()
    tails = out.text(), err.text()
    hung = counted[0] <= cap
    if stopped or not hung:  # over the cap is a flood even when the process ended first (a race decides that)
        said = f"took over {limit:g} s" if hung else f"wrote over {_size(cap)} to its output"
        raise Stopped(f"pytest --collect-only {said} in {what}", hung, time.monotonic() - start, counted[0], tails[1])
    return tails


def drain(proc: subprocess.Popen[bytes]) -> None:
    """Reap a killed PROC without waiting on a pipe that a child of it may still hold."""
    proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            _Tail(stream, threading.Event(), 1 << 62, [0]).text()


def _size(count: int) -> str:
    return f"{count / (1024 * 1024):g} MiB" if count >= 1024 * 1024 else f"{count} bytes"


# faulthandler's dump: `File "PATH", line N in NAME`, innermost frame first (per thread).
_FRAME = re.compile(rb'^\s*File "([^"]+)", line (\d+) in ', re.M)


def waited_at(stderr: bytes) -> list[tuple[str, int]]:
    """The frames of faulthandler's last dump in STDERR, innermost first (empty when it was not written)."""
    at = stderr.rfind(b"Timeout (")
    if at < 0:
        return []
    return [(m.group(1).decode("utf-8", "replace"), int(m.group(2))) for m in _FRAME.finditer(stderr, at)]


def arm(code: str, limit: float) -> str:
    """CODE that first arms faulthandler to dump every thread's stack a little before LIMIT s.

    Only a help to say where it waited: the change's code can disarm it, so no verdict rests on it."""
    before = max(limit - min(10.0, limit / 5), 0.1)
    # A copy of stderr's descriptor: pytest's capture redirects descriptor 2 itself while it collects.
    dump = f"faulthandler.dump_traceback_later({before!r}, exit=False, file=open(os.dup(2), 'w'))"
    return f"import faulthandler, os\n{dump}\n{code}"


def last_line(data: bytes, width: int = 200) -> str:
    """The last non-blank line of DATA, cut to WIDTH characters (a flood's line can be any length)."""
    lines = [line.strip() for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    return (lines[-1][:width] + ("..." if len(lines[-1]) > width else "")) if lines else ""
