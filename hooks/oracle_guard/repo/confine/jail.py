"""The ground the change's code runs on: confined by Landlock where the kernel has it, else the barrier only.

A process that runs code of the change (the replay's new side and red-base target, flip and neighbour
runs of the new side, mutation's new tests and mixed tree, the hook's collection) is started through
``Jail``: on Linux with Landlock it may write only its own tree, the files named for its results and a
private temporary folder (``TMPDIR``); from ABI 6 on it cannot signal or reach by abstract socket any
process outside its own (the gate's, the base side's).  Elsewhere, or with ``ORACLE_GUARD_CONFINE=0``,
it runs as before, behind the barrier (pytest_side/barrier.py) alone, and the output says so;
``--require-confinement`` (``require()``) makes that exit 2.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

from oracle_guard.repo.confine import landlock
from oracle_guard.reporting.report import UsageError, notice

SWITCH = "ORACLE_GUARD_CONFINE"  # "0": run the change's code unconfined (the barrier only)


@dataclass(frozen=True)
class Ground:
    abi: int  # Landlock's ABI the runs are confined with; 0: unconfined
    why: str = ""  # why unconfined

    def __str__(self) -> str:
        if self.abi:
            return f"confined (Landlock ABI {self.abi})"
        return f"unconfined: barrier only ({self.why})"


_abi: list[int] = []
_required: list[str] = []  # the option that asked for confinement
_said: list[str] = []  # the ground as said once in this process's output


def ground() -> Ground:
    """This system's ground (Landlock's ABI probed once)."""
    if os.environ.get(SWITCH, "").strip() == "0":
        return Ground(0, f"{SWITCH}=0")
    if not _abi:
        _abi.append(landlock.abi())
    return Ground(_abi[0]) if _abi[0] else Ground(0, "this system has no Landlock")


def begin() -> None:
    """A command starts: nothing said or required yet (commands run in one process one after another in tests)."""
    _required.clear()
    _said.clear()


def require(option: str = "--require-confinement") -> None:
    """From now on an unconfined run of the change's code is exit 2; at once when the ground is unconfined."""
    _required.append(option)
    here = ground()
    if not here.abi:
        raise UsageError(f"{option}: the change's code cannot be confined here ({here.why}); nothing was judged")


def said() -> str:
    """The ground the change's code ran on in this process ("" when none ran), for a success line or document."""
    return _said[0] if _said else ""


def _say(here: Ground, quiet: bool) -> None:
    if not _said:
        _said.append(str(here))
        if not quiet:
            notice(f"the change's code runs {here}")


class NotConfined(UsageError):
    """The launcher found Landlock but could not restrict itself: the system's doing, not the change's (exit 2)."""

    def __init__(self, why: str) -> None:
        super().__init__(
            f"the gate could not confine the change's code on this system, though it has Landlock ({why}); nothing"
            f" of the change ran and nothing was judged. This is the system's doing, not the change's: run with"
            f" {SWITCH}=0 to judge it behind the barrier alone (pytest_side/barrier.py), or fix the system"
        )
        self.why = why


class Jail:
    """One confined process's start: its command, its environment, and the private folder removed after it.

    TREE and FOLDERS: what it may write whole; FILES: its result files outside them (created empty here,
    as a rule can only name what exists).  Unconfined, the command and environment are left as they are.
    The first start of a process says the ground once (a notice), unless QUIET (a hook's own collection).
    """

    def __init__(self, tree: str, folders: Sequence[str] = (), files: Sequence[str] = (), quiet: bool = False) -> None:
        here = ground()
        if not here.abi and _required:
            raise UsageError(f"{_required[0]}: the change's code cannot be confined here ({here.why})")
        _say(here, quiet)
        self.confined = bool(here.abi)
        self.tmp = ""
        self.failed = ""  # where the launcher says why it could not confine; outside every folder it grants
        self.folders = [os.path.abspath(tree), *(os.path.abspath(f) for f in folders)]
        self.files = [os.path.abspath(f) for f in files]
        if self.confined:
            self.tmp = tempfile.mkdtemp(prefix="oracle-guard-confined-")
            self.failed = self.tmp + ".failed"
            for path in self.files:
                with open(path, "ab"):
                    pass

    def command(
        self, cmd: Sequence[str], env: dict[str, str], keep: Sequence[int] = ()
    ) -> tuple[list[str], dict[str, str]]:
        """CMD and ENV as started: through the launcher, with TMPDIR its own, when confined.

        KEEP: inherited sockets the launcher leaves open (it closes every other descriptor but 0-2).

        The command's program is looked up here, so that a missing one is an OSError at the start, as
        from ``subprocess.Popen``, not an exit status of the launcher.
        """
        if not self.confined:
            return list(cmd), env
        program = shutil.which(cmd[0], path=env.get("PATH")) if os.sep not in cmd[0] else cmd[0]
        if program is None or not os.access(program, os.X_OK):
            raise FileNotFoundError(2, f"No such file or directory: {cmd[0]!r}")
        launcher = [sys.executable, "-I", "-S", os.path.abspath(landlock.__file__), "--failed", self.failed]
        for folder in [*self.folders, self.tmp]:
            launcher += ["--write", folder]
        for path in self.files:
            launcher += ["--write-file", path]
        for fd in keep:
            launcher += ["--keep", str(fd)]
        if not any(_beneath(f, shared) for f in self.folders for shared in landlock.SHARED_FOLDERS):
            launcher += ["--shared"]  # else the trees beside this one are in there too (pytest_side/scratch.py)
        # HOME stays the user's and read-only (the user site-packages and the gate's own cache are there);
        # the caches that libraries keep under XDG_CACHE_HOME go to a private, empty folder (docs/ground.md).
        cache = os.path.join(self.tmp, "cache")
        os.makedirs(cache, exist_ok=True)
        return [*launcher, "--", program, *cmd[1:]], {**env, "TMPDIR": self.tmp, "XDG_CACHE_HOME": cache}

    def failure(self) -> str:
        """Why the launcher could not confine the command ("" when it did, or has not said yet)."""
        if not self.failed:
            return ""
        try:
            with open(self.failed, encoding="utf-8", errors="replace") as f:
                return f.read().strip() or "no reason given"
        except OSError:
            return ""

    def refuse_unconfined(self) -> None:
        """NotConfined when the launcher could not confine: the command never ran (a clear exit 2, never a verdict)."""
        why = self.failure()
        if why:
            raise NotConfined(why)

    def close(self) -> None:
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = ""
        if self.failed:
            with contextlib.suppress(OSError):
                os.unlink(self.failed)
            self.failed = ""


def _beneath(path: str, folder: str) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(folder)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)
