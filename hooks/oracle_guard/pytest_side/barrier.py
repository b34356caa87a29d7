"""The wall between the new code's processes and the base side's: what the new code runs cannot reach the base's.

A replay runs the new code (and, on a red base, the change's own tests) as the same user as the
base side's runs.  Running beside the base, or leaving something behind for a later base run, the
new code could write a ``conftest.py`` into the base's scratch tree (it is ``../base`` from the new
tree), replace a module the base imports, or leave a process that does so later, and the base would
then agree with whatever the new code does.  Three rules keep the base side the base's:

- **Never at once.**  A base-side process never runs while a process of an untrusted side does
  (the probes start the base side first and wait for it; ``before`` refuses otherwise).
- **Nothing left behind.**  When the last untrusted process of a phase ends, every process it left
  (a double fork, ``setsid``) is killed: on Linux the gate is the children's subreaper, so orphans
  come back to it and cannot escape.  Elsewhere only the process group is killed (docs/oracle-replay.md).
- **Nothing changed.**  Before an untrusted phase starts, what a later base run reads is noted
  (inode, size, mtime and ctime: ctime cannot be set back by a user): the base tree, the scratch
  folder beside it, the replay's own inputs, the interpreter's path folders and every module file
  the base's runs imported.  When the phase ends, a difference is the new code writing where the
  base reads: a ``Breach``, which the gates judge against the change (OG921, pytest_side/ground.py).
  Unconfined, untrusted processes run with ``PYTHONDONTWRITEBYTECODE`` so that an honest run writes no
  bytecode outside its own tree.  One that runs past its limit, relative to the base side's time for
  the same phase, is stopped: ``Hung`` (OG922).

Where the system allows, the untrusted processes also run confined (repo/confine): they cannot write
outside their own tree at all, and the rules above are the second wall.

Without a current barrier (``guarding``) every call here does nothing: the hooks and other
commands run no untrusted process.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import IO

from oracle_guard.repo.confine import jail
from oracle_guard.reporting.report import UsageError

TRUSTED = "base"
IMPORTS_ENV = "ORACLE_GUARD_IMPORTS"  # where a base run writes the module files it imported (the runners)
# A runner's epilogue: the module files and path folders of this process, for the barrier.
REPORT_IMPORTS = """
def _oracle_guard_imports():
    import json, os, sys
    target = os.environ.get("ORACLE_GUARD_IMPORTS")
    if not target:
        return
    files = sorted({f for f in (getattr(m, "__file__", None) for m in list(sys.modules.values())) if isinstance(f, str)})
    try:
        with open(target, "w", encoding="utf-8") as out:
            json.dump({"files": files, "path": [p for p in sys.path if isinstance(p, str)]}, out)
    except OSError:
        pass
"""
# The trees of untrusted runs beside the base's: the new code (with the base's tests or its own), the
# change as committed, the mutation probe's new code with the base's tests, the change's tests over the base's code.
UNTRUSTED_TREES = ("new", "target", "mixed", "new-flips", "tests-at-base")
# Their outputs in the work folder: "run-new.log", "canary-run-target", "new-all.jsonl", "base-tests-new-code.log".
_UNTRUSTED_OUTPUT = re.compile(r"(^|-)(new|target)([.-]|$)")
_PR_SET_CHILD_SUBREAPER = 36
_ABOVE = ("conftest.py", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")

Stat = tuple[int, int, int, int]
# A run of the new code may take HANG_FACTOR times the base side's longest run of the same phase, plus
# HANG_FLOOR seconds (load, a slower fix), before it counts as hung (OG922, docs/ground.md).
HANG_FACTOR = 10.0
HANG_FLOOR = 120.0


class Breach(UsageError):
    """The new code changed what the base side reads (PATHS); the gates judge it as OG921."""

    def __init__(self, message: str, paths: Sequence[str]) -> None:
        super().__init__(message)
        self.paths = list(paths)


class Hung(Exception):
    """A process of the new code ran past its limit (SECONDS) where the base side took BASE_SECONDS.

    CLAIMED: BASE_SECONDS is a cache entry's word, not a measure of this run (probes/replay/base_cache.py
    checks it against a real base run before the change is judged by it).
    """

    def __init__(self, side: str, seconds: float, base_seconds: float, claimed: bool = False) -> None:
        super().__init__(f"{side} ran over {seconds:.0f} s")
        self.side, self.seconds, self.base_seconds, self.claimed = side, seconds, base_seconds, claimed
        self.test = ""  # the test it was running, when the caller can tell


def _stat(path: str) -> Stat | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _walk(root: str, out: dict[str, Stat | None]) -> None:
    out[root] = _stat(root)
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        out[entry.path] = _stat(entry.path)
        if entry.is_dir(follow_symlinks=False):
            _walk(entry.path, out)


def _listing(folder: str, out: dict[str, Stat | None], skip: Iterable[str] = ()) -> None:
    """FOLDER's own entries (not below them), but __pycache__ (an honest run may add bytecode there)."""
    skipped = {"__pycache__", *skip}
    try:
        names = sorted(n for n in os.listdir(folder) if n not in skipped)
    except OSError:
        return
    for name in names:
        out[os.path.join(folder, name)] = _stat(os.path.join(folder, name))


def _subreaper() -> bool:
    """Make this process the subreaper of its descendants (Linux): an orphan comes back here, not to init."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _children() -> set[int]:
    """This process's children, from /proc (Linux)."""
    me = os.getpid()
    found: set[int] = set()
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return found
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == me:
            found.add(pid)
    return found


class Barrier:
    """One replay's wall: BASE is the base tree, ROOT the scratch folder holding the trees, WORK the replay's folder."""

    def __init__(self, base: str, root: str, work: str) -> None:
        self.base, self.root, self.work = base, root, work
        self.trusted_trees = [base]
        self.reaps = _subreaper()
        self.untrusted = 0
        self.trusted = 0
        self.ran_untrusted = False
        self.imported: set[str] = set()
        self.path: set[str] = set()
        self.noted: dict[str, Stat | None] = {}
        self.known_children: set[int] = set()
        # One plan (``in_turn``: the same tests on each side): its base side's longest process, the measure
        # of its untrusted runs; unmeasured when the plan has no base side or its base side only collects.
        self.base_seconds = 0.0
        self._unmeasured = True
        self._claimed: float | None = None  # the plan's base time from a cache entry, when its base side only collects
        self.phase_limit: float | None = None  # the limit of the untrusted phase running now
        self.phase_claimed = False  # whether that limit stands on a claimed base time
        self.lock = threading.RLock()  # the mutation probe's fresh runs start from threads

    def trust_tree(self, tree: str) -> None:
        """Another tree of the base's, noted whole like the first (the flip run's own)."""
        with self.lock:
            self.trusted_trees.append(tree)

    # -- the base's runs tell what they read --------------------------------------------------------
    def report_path(self, tag: str) -> str:
        return os.path.join(self.work, f"imports-{tag}.json")

    def read_report(self, path: str) -> None:
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            return
        if not isinstance(data, dict):
            return
        files, path_entries = data.get("files"), data.get("path")
        if isinstance(files, list):
            self.imported.update(f for f in files if isinstance(f, str) and os.path.isabs(f))
        if isinstance(path_entries, list):
            self.path.update(p for p in path_entries if isinstance(p, str) and os.path.isabs(p))

    # -- the state a later base run reads -----------------------------------------------------------
    def _snapshot(self) -> dict[str, Stat | None]:
        noted: dict[str, Stat | None] = {}
        for tree in self.trusted_trees:
            _walk(tree, noted)
        trees = {*(os.path.basename(t) for t in self.trusted_trees), *UNTRUSTED_TREES, os.path.basename(self.work)}
        _listing(self.root, noted, trees)
        folder = os.path.dirname(self.root)
        while True:  # pytest looks above the tree for its configuration and conftest.py files
            for name in _ABOVE:
                noted[os.path.join(folder, name)] = _stat(os.path.join(folder, name))
            if os.path.dirname(folder) == folder:
                break
            folder = os.path.dirname(folder)
        for name in os.listdir(self.work) if os.path.isdir(self.work) else []:
            if _UNTRUSTED_OUTPUT.search(name):
                continue
            path = os.path.join(self.work, name)
            if os.path.isdir(path) and not os.path.islink(path):
                _walk(path, noted)
            else:
                noted[path] = _stat(path)
        inside = (self.root + os.sep,)
        for folder in sorted(self.path):
            # The scratch folder itself on a base run's path (a conftest that puts the tree's parent first) is
            # noted above, its trees and the work folder apart: listed again here, every write of an untrusted
            # run into its own tree or output would be a breach.
            if folder != self.root and not folder.startswith(inside) and os.path.isdir(folder):
                _listing(folder, noted)
        for path in sorted(self.imported):
            if path.startswith(inside):
                continue  # the base tree and the work folder are noted whole
            noted[path] = _stat(path)
            if path.endswith(".py"):
                try:
                    import importlib.util

                    cached = importlib.util.cache_from_source(path)
                except (ValueError, NotImplementedError):
                    continue
                noted[cached] = _stat(cached)
        return noted

    # -- the phases ---------------------------------------------------------------------------------
    def before(self, side: str) -> None:
        with self.lock:
            self._before(side)

    def after(self, side: str, pid: int | None = None) -> None:
        with self.lock:
            self._after(side, pid)

    def _before(self, side: str) -> None:
        if side == TRUSTED:
            if self.untrusted:
                raise RuntimeError("a base-side run was started while the new code runs")  # a bug of ours
            self.trusted += 1
            return
        if self.trusted:
            raise RuntimeError("the new code was started while a base-side run runs")  # a bug of ours
        if not self.untrusted:
            self.known_children = _children() if self.reaps else set()
            self.noted = self._snapshot()
            # Relative to the base only when the base side of the same plan ran first and was measured,
            # else to the base time a cache entry claims for it (checked by its caller before a finding).
            measured = self.base_seconds and not self._unmeasured
            self.phase_claimed = not measured and self._claimed is not None
            base = self.base_seconds if measured else self._claimed
            self.phase_limit = HANG_FLOOR + HANG_FACTOR * base if base is not None else None
        self.untrusted += 1
        self.ran_untrusted = True

    def _after(self, side: str, pid: int | None = None) -> None:
        if side == TRUSTED:
            self.trusted = max(0, self.trusted - 1)
            return
        if pid is not None and os.name == "posix":
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)  # what it left in its own group
        self.untrusted = max(0, self.untrusted - 1)
        if self.untrusted:
            return
        self._kill_leftovers()
        self._unchanged()

    def unchanged(self) -> None:
        """Breach when what the base reads changed since the last untrusted phase began (none running now).

        For a base run after an untrusted phase that was stopped (its end was quiet: its caller was failing).
        """
        with self.lock:
            if not self.untrusted and self.noted:
                self._unchanged()

    def _unchanged(self) -> None:
        changed = self._changed()
        if changed:
            where = os.path.relpath(changed[0], self.root) if changed[0].startswith(self.root) else changed[0]
            more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
            raise Breach(
                f"while the new code ran, {where}{more} changed, which the base side's runs"
                " read; the new code (or its tests) must not write outside its own tree",
                [os.path.relpath(p, self.root) if p.startswith(self.root) else p for p in changed],
            )

    def _kill_leftovers(self) -> None:
        if not self.reaps:
            return
        for _ in range(20):  # each kill may hand its own orphans back to us
            left = _children() - self.known_children
            if not left:
                return
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            for pid in left:
                with contextlib.suppress(OSError):
                    os.waitpid(pid, 0)

    def plan(self, sides: Sequence[str], claimed: float | None = None) -> None:
        """A new plan of runs: measured by its base side, when it has one; else by CLAIMED, when given."""
        with self.lock:
            self.base_seconds, self._unmeasured, self._claimed = 0.0, TRUSTED not in sides, claimed

    def measured(self) -> float | None:
        """The base side's time for the current plan, when its base side ran the tests (not a collection only)."""
        with self.lock:
            return None if self._unmeasured else self.base_seconds

    def timed(self, side: str, seconds: float | None) -> None:
        """A base-side process took SECONDS (None: it did other work than the untrusted runs after it)."""
        if side != TRUSTED:
            return
        with self.lock:
            if seconds is None:
                self._unmeasured = True
            else:
                self.base_seconds = max(self.base_seconds, seconds)

    def limit(self) -> float | None:
        """How long an untrusted process may run: relative to the base's time, or None when none was measured."""
        return self.phase_limit

    def _changed(self) -> list[str]:
        now = self._snapshot()
        changed = [p for p in set(now) | set(self.noted) if now.get(p) != self.noted.get(p)]
        # The file itself before the folder whose times it moved.
        return sorted(changed, key=lambda p: (-p.rstrip(os.sep).count(os.sep), p))


_current: Barrier | None = None


@contextlib.contextmanager
def guarding(barrier: Barrier) -> Iterator[Barrier]:
    global _current
    previous, _current = _current, barrier
    try:
        yield barrier
    finally:
        _current = previous


def in_turn(sides: Iterable[str], claimed: float | None = None) -> list[list[str]]:
    """SIDES as the groups that may run at once: the base's first and alone, then every untrusted one.

    CLAIMED: the base side's time for these runs as a cache entry gives it, for a plan whose base side
    does not run the tests (the warm cache's collection).
    """
    names = list(sides)
    if _current is not None:
        _current.plan(names, claimed)  # the untrusted runs' time limit is measured by this plan's base side
    return [[n for n in names if n == TRUSTED], [n for n in names if n != TRUSTED]]


def before(side: str) -> None:
    if _current is not None:
        _current.before(side)


def after(side: str, pid: int | None = None) -> None:
    if _current is not None:
        _current.after(side, pid)


def trust_tree(tree: str) -> None:
    if _current is not None:
        _current.trust_tree(tree)


def env_for(side: str, env: dict[str, str], tag: str) -> tuple[dict[str, str], str | None]:
    """ENV for a run of SIDE: an unconfined untrusted one writes no bytecode; a base one reports its imports.

    A confined run (repo/confine) writes bytecode as a plain run does: only into its own tree.
    """
    if _current is None:
        return env, None
    if side != TRUSTED:
        return (env, None) if jail.ground().abi else ({**env, "PYTHONDONTWRITEBYTECODE": "1"}, None)
    report = _current.report_path(tag)
    with contextlib.suppress(OSError):
        os.unlink(report)
    return {**env, IMPORTS_ENV: report}, report


def hang_limit() -> float | None:
    return _current.limit() if _current is not None else None


def unchanged() -> None:
    if _current is not None:
        _current.unchanged()


def measured() -> float | None:
    """The current plan's measured base time (None: no barrier, or its base side did not run the tests)."""
    return _current.measured() if _current is not None else None


def read_report(path: str | None) -> None:
    if _current is not None and path:
        _current.read_report(path)


class Process:
    """One pytest process of one side, in its own process group, started and ended through the barrier.

    ``wait``/``done`` end it normally (a change where the base reads is exit 2 from there); ``kill`` ends it
    early and quietly by default, as the caller is failing already.  REPORT: where a base run writes
    the module files it imported (``env_for``), read when it ends.  An untrusted side runs confined
    (repo/confine) where the system allows: it may write its tree (CWD) and the result files WRITES only.
    PASS_FDS: descriptors the process inherits (a probe's receipt socket, probes/receipts.py).
    """

    def __init__(
        self,
        cmd: Sequence[str],
        cwd: str,
        env: dict[str, str],
        log: IO[bytes],
        side: str,
        stdin: int = subprocess.DEVNULL,
        report: str | None = None,
        writes: Sequence[str] = (),
        pass_fds: Sequence[int] = (),
    ) -> None:
        self.side, self.report = side, report
        self.confined = jail.Jail(cwd, files=writes) if side != TRUSTED else None
        self.collects_only = "--collect-only" in cmd
        before(side)
        try:
            if self.confined is not None:
                cmd, env = self.confined.command(cmd, env, keep=pass_fds)
            self.proc = subprocess.Popen(
                list(cmd),
                cwd=cwd,
                stdin=stdin,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=os.name == "posix",
                pass_fds=tuple(pass_fds),
            )
        except OSError:
            self.side = ""
            self._release()
            after(side)
            raise
        self.started = time.monotonic()
        # An untrusted run's own limit, relative to the base side's time (None: the deadline alone).
        self.limit = hang_limit() if side != TRUSTED else None
        self.claimed = self.limit is not None and _current is not None and _current.phase_claimed

    def _release(self) -> None:
        if self.confined is not None:
            self.confined.close()

    def wait(self, deadline: float) -> int:
        own = self.started + self.limit if self.limit is not None else deadline
        try:
            code = self.proc.wait(timeout=max(0.0, min(deadline, own) - time.monotonic()))
        except subprocess.TimeoutExpired:
            side = self.side
            self.kill()
            if self.limit is not None and own <= deadline:
                base = (self.limit - HANG_FLOOR) / HANG_FACTOR
                raise Hung(side, self.limit, base, self.claimed) from None
            raise
        self.done()
        return code

    def check_confined(self) -> None:
        """NotConfined (a clear exit 2) when the launcher found Landlock but could not confine: nothing of it ran."""
        why = self.confined.failure() if self.confined is not None else ""
        if why:
            self.kill()
            raise jail.NotConfined(why)

    def done(self) -> None:
        """Past the barrier once: what a base run imported is noted, what an untrusted one left is killed."""
        self.check_confined()
        if self.report is not None:
            read_report(self.report)
            self.report = None
        if self.side:
            side, self.side = self.side, ""
            if _current is not None:  # a collection alone is no measure of the run after it (base_cache.py)
                _current.timed(side, None if self.collects_only else time.monotonic() - self.started)
            try:
                after(side, self.proc.pid)
            finally:
                self._release()

    def kill(self, quiet: bool = True) -> None:
        if self.proc.poll() is None:
            try:
                if os.name == "posix":
                    os.killpg(self.proc.pid, signal.SIGKILL)
                else:  # pragma: no cover
                    self.proc.kill()
            except ProcessLookupError:
                pass
            self.proc.wait()
        if not quiet:
            self.done()
        elif self.side:
            side, self.side = self.side, ""
            with contextlib.suppress(UsageError):
                after(side, self.proc.pid)
        self._release()
