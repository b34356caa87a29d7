"""Whether a probe run's results files are its own process's, told from outside that process.

A probe plugin writes its results file and then sends a receipt (the file's path and digest) on a
datagram socket the gate made and handed the process (probes/kit.py ``write_results``).  The socket
has ``SO_PASSCRED``: the kernel stamps each datagram with the id of the process that sent it, and a
process can claim no other.  So when the run has ended the gate knows, for every results file,
whether exactly one receipt came, from the process it started, for exactly the bytes it reads.
A forked copy of the run (code that forks at import, whose copy runs the tests again) writes its
own verdicts into the same file: its receipt names another process, or the file no longer matches
the receipt of the run's own.  That run's results do not add up (``problem``), whatever they say.

Where the system has no ``SO_PASSCRED`` (not Linux) there is no channel and nothing is checked.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import struct
from collections.abc import Sequence

CREDENTIALS = struct.Struct("3i")  # struct ucred: pid, uid, gid
MAX_RECEIPTS = 64  # more than this from one run is a run that does not add up, read no further


class Receipts:
    """The gate's end of one run's receipt socket; ``fd`` is the end the run's process inherits."""

    def __init__(self) -> None:
        self._mine: socket.socket | None = None
        self._theirs: socket.socket | None = None
        passcred = getattr(socket, "SO_PASSCRED", None)
        if passcred is None or not hasattr(socket, "AF_UNIX"):
            return
        self._mine, self._theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._mine.setsockopt(socket.SOL_SOCKET, passcred, 1)
        self._mine.setblocking(False)

    @property
    def fd(self) -> int | None:
        return self._theirs.fileno() if self._theirs is not None else None

    def started(self) -> None:
        """The run's process holds its end now: the gate's copy goes, so only the run can send."""
        if self._theirs is not None:
            self._theirs.close()

    def _read(self) -> list[tuple[int, bytes]]:
        found: list[tuple[int, bytes]] = []
        if self._mine is None:
            return found
        while len(found) <= MAX_RECEIPTS:
            try:
                data, ancillary, _, _ = self._mine.recvmsg(4096, socket.CMSG_SPACE(CREDENTIALS.size))
            except (BlockingIOError, InterruptedError):
                break
            pid = -1
            for level, kind, cdata in ancillary:
                if level == socket.SOL_SOCKET and kind == getattr(socket, "SCM_CREDENTIALS", -1):
                    pid = CREDENTIALS.unpack(cdata[: CREDENTIALS.size])[0]
            found.append((pid, data))
        return found

    def problem(self, pid: int, outputs: Sequence[str]) -> str:
        """What does not add up in the results files OUTPUTS of the run whose process is PID ("": they do)."""
        if self._mine is None:
            return ""
        try:
            received = self._read()
        finally:
            self.close()
        if len(received) > MAX_RECEIPTS:
            return f"more than {MAX_RECEIPTS} reports came for {len(outputs)} results file(s)"
        own: dict[str, list[str]] = {}
        for sender, data in received:
            if sender != pid:
                return f"a process that is not the run's own (pid {sender}, the run's is {pid}) reported results"
            try:
                receipt = json.loads(data)
                path, digest = str(receipt["path"]), str(receipt["sha256"])
            except (ValueError, KeyError, TypeError):
                return "the run's process sent a report the gate cannot read"
            own.setdefault(os.path.abspath(path), []).append(digest)
        for output in outputs:
            digests = own.get(os.path.abspath(output), [])
            written = _digest(output)
            if len(digests) > 1:
                return f"{os.path.basename(output)} was reported {len(digests)} times by the run's process"
            if written is not None and not digests:
                return f"{os.path.basename(output)} was written, and the run's process never reported it"
            if written is not None and digests[0] != written:
                return f"{os.path.basename(output)} changed after the run's process reported it"
        return ""

    def close(self) -> None:
        for end in (self._mine, self._theirs):
            if end is not None:
                with contextlib.suppress(OSError):
                    end.close()


def _digest(path: str) -> str | None:
    """The file's digest; None when it is missing or empty (the confined run's launcher makes each results
    file empty beforehand, repo/confine: an empty one is one the run never wrote, and reads as no results)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    return hashlib.sha256(data).hexdigest() if data else None
