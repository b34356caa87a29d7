"""What pytest collects at the base revision: the gate's second witness beside the base's snapshot.

The committed snapshot is the base's record of its tests, but a change merged without the
pre-commit hook (an agent's commit, `--no-verify`, a bot) leaves it behind: a test added then is
in no snapshot, and a later change could delete it unseen.  So `oracle-guard check` also
collects the base itself, in a scratch export of the base commit (the replay's trees:
scratch.py), with the project's interpreter, while the change's own collection runs.  Only the
base's files are read there; the user's work tree, index and object store are never written.

When the change can alter only the collection of the test modules it touches (the partial
collection's plan, partial_collection.py), only their base versions are collected: every other
module collects alike on both sides, and the change's own collection is whole.  A change that
cannot alter collection at all needs no base run.

The run is started in a thread (the export writes every file of the base) and read back by
``result``; ``abandon`` ends it, whatever state it is in.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

from oracle_guard.pytest_side import bytecode, generated, scratch
from oracle_guard.repo import changes, git
from oracle_guard.repo.confine import jail
from oracle_guard.repo.interpreters import tree_env
from oracle_guard.reporting.report import UsageError

NO_RANDOM_ORDER = ("-p", "no:randomly", "-p", "no:random_order")
TIMEOUT_SECONDS = 900


class Collected(NamedTuple):
    items: dict[str, str]  # node id -> status, as the collector writes them
    errors: list[tuple[str, str]]  # (where, message)
    exit_code: int
    tail: str  # the last meaningful line of pytest's output


# Whole collections of a base commit this command made (work tree, commit, interpreter -> collection): the
# replay's warm base side takes its ids from here instead of collecting the same tree again (base_cache.py).
_whole: dict[tuple[str, str, str], Collected] = {}


def read_output(path: str) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The collector's output file (pytest_side/collection/collector.py): items and collection errors."""
    items: dict[str, str] = {}
    errors: list[tuple[str, str]] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            kind, where, rest = (line.rstrip("\n").split("\t", 2) + ["", ""])[:3]
            if kind == "item":
                items[rest] = where
            elif kind == "error":
                errors.append((where, rest))
    return items, errors


def _tail(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip() and not set(line.strip()) <= set("=_-")]
    return lines[-1][:300] if lines else ""


class BaseRun:
    """`pytest --collect-only` in a scratch export of REV, started at once in the background."""

    def __init__(self, python: str, rev: str, label: str, modules: list[str] | None = None) -> None:
        self.python = python
        self.rev = rev
        self.label = label
        self.modules = modules or []  # only these test modules (a sure plan: partial_collection.py); else all
        self.top = git.toplevel()  # asked here, in the caller's thread and folder
        self.root = tempfile.mkdtemp(prefix="oracle-guard-base-collect-", dir=scratch.scratch_home())
        self.tree = os.path.join(self.root, "base")
        self.proc: subprocess.Popen[bytes] | None = None
        self.failure: BaseException | None = None
        self.outcome: tuple[int, bytes, bytes] | None = None
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._work, daemon=True)
        self.thread.start()

    def _work(self) -> None:
        try:
            self.outcome = self._collect(list(NO_RANDOM_ORDER))
            code, _, stderr = self.outcome
            # A project whose addopts needs a random-order plugin's options: keep the plugin.
            if code == 4 and b"unrecognized arguments" in stderr and b"random" in stderr:
                self.outcome = self._collect([])
        except BaseException as exc:  # handed to result(), in the caller's thread
            self.failure = exc

    def _collect(self, extra: list[str]) -> tuple[int, bytes, bytes]:
        from oracle_guard.pytest_side.collection import collector as _collector

        if not os.path.isdir(self.tree):
            scratch.export(self.rev, self.tree)
            generated.lay(generated.needed(self.top, self.rev), [self.tree])
        out = os.path.join(self.root, "collected.txt")
        cmd = [self.python, "-c", _collector.RUNNER, os.path.abspath(_collector.__file__), out]
        cmd += ["--collect-only", "-q", "-p", "no:cacheprovider", *extra, *self.modules]
        if self.stopped.is_set():
            return (-1, b"", b"")
        env = tree_env(self.python, self.tree)
        if jail.ground().abi:
            env.pop("PYTHONDONTWRITEBYTECODE", None)  # its bytecode serves the replay's trees (bytecode.py)
        self.proc = subprocess.Popen(
            cmd,
            cwd=self.tree,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            stdout, stderr = self.proc.communicate(timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            raise UsageError(
                f"pytest --collect-only took over {TIMEOUT_SECONDS} s in a scratch tree of {self.label}"
            ) from None
        return self.proc.returncode, stdout, stderr

    def result(self) -> Collected | None:
        """The base's collection; None when this interpreter has no pytest (the caller tries another)."""
        from oracle_guard.pytest_side.collection import collector as _collector

        try:
            self.thread.join()
            if self.failure is not None:
                if isinstance(self.failure, git.GitError):
                    raise UsageError(str(self.failure)) from None
                raise self.failure
            assert self.outcome is not None
            code, stdout, stderr = self.outcome
            if code == _collector.NO_PYTEST_EXIT:
                return None
            out = os.path.join(self.root, "collected.txt")
            items, errors = read_output(out) if os.path.exists(out) else ({}, [])
            tail = _tail(stderr.decode("utf-8", "replace")) or _tail(stdout.decode("utf-8", "replace"))
            if jail.ground().abi and code in (0, 1, 2, 5):
                bytecode.keep(self.top, self.rev, bytecode.harvest(self.tree))
            return Collected(items, errors, code, tail)
        finally:
            self.abandon()

    def abandon(self) -> None:
        self.stopped.set()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        self.thread.join()
        shutil.rmtree(self.root, ignore_errors=True)


def usable(found: Collected, label: str, python: str) -> Collected:
    """FOUND when it says what the base collects (some modules may fail there: that is the base's state);
    one line and exit 2 when pytest could not collect the base at all."""
    if found.exit_code in (0, 5) or (found.errors and found.exit_code in (1, 2)):
        return found
    raise UsageError(
        f"the base's tests cannot be collected at {label} in {python} (pytest --collect-only exited "
        f"{found.exit_code}: {found.tail or 'no output'}): the gate compares the change with what the base "
        "collects; fix the base's collection, or pass --python PATH"
    )


def modules_to_collect(
    change_set: changes.ChangeSet, base_bytes: bytes | None, base_snapshot_path: str, snapshot: str, watched: set[str]
) -> list[str] | None:
    """The base's test modules whose collection the change may alter ([] for none: no run); None for all of them."""
    from oracle_guard.pytest_side.collection import partial as partial_collection

    if base_bytes is None:
        return None
    touched = partial_collection.touched(
        change_set, base_bytes, base_snapshot_path, snapshot, watched, dict(os.environ)
    )
    planned = partial_collection.plan(change_set, base_bytes, base_snapshot_path, touched) if touched else None
    if planned is None:
        production = partial_collection.production_only(touched, base_bytes, base_snapshot_path)
        return [] if production and partial_collection.production_inert(production, change_set) else None
    if planned.inert:
        return []
    at_base = change_set.read_base(planned.modules)
    return [m for m in planned.modules if at_base.get(m) is not None]


def collected(run: BaseRun, python: str, label: str) -> Collected:
    """RUN's collection of the base, in PYTHON (the interpreter that collected the change) when RUN's had no pytest."""
    found, used = run.result(), run.python
    if found is None and run.python != python:
        found, used = BaseRun(python, run.rev, label, run.modules).result(), python
    if found is None:
        raise UsageError(f"pytest does not import in {python} in a scratch tree of {label}; pass --python PATH")
    found = usable(found, label, python)
    if not run.modules and found.exit_code in (0, 5) and not found.errors:
        _whole[_key(run.top, run.rev, used)] = found
    return found


def _key(top: str, rev: str, python: str) -> tuple[str, str, str]:
    return (os.path.realpath(top), rev, os.path.abspath(python))  # a virtualenv's python names the virtualenv


def begin() -> None:
    """A command starts: no collection of an earlier one (commands run in one process one after another in tests)."""
    _whole.clear()
    bytecode.begin()


def whole(top: str, rev: str, python: str) -> Collected | None:
    """The whole, error-free collection of commit REV that this command made in PYTHON; None when it made none."""
    return _whole.get(_key(top, rev, python))


@dataclass
class Record:
    """What the base's collection added to, or took from, the base's snapshot as the change's reference."""

    unlisted: list[str] = field(default_factory=list)  # collected at the base, not in its snapshot
    gone: list[str] = field(default_factory=list)  # in its snapshot, gone from the base's own source


def reference(
    base: dict[str, tuple[str, int]],
    at_base: Collected,
    items: Mapping[str, str],
    read_base: Callable[[list[str]], dict[str, bytes | None]],
) -> tuple[dict[str, tuple[str, int]], Record]:
    """The base's tests the change must keep: those its snapshot lists, and those it collects.

    BASE is the parsed snapshot (id -> (status, line)); ITEMS what the change collects.  An id the
    base collects and its snapshot misses (a change merged without the hook added it) is the
    base's test all the same; it has no line of its own, so findings name line 1.  An id the
    snapshot lists that neither side collects is dropped only when the base's own source no
    longer defines its test (its file gone, or no `def`/`class` of that name in it): then an
    earlier change removed it, and this one cannot lose it.  Anything else stays, as the
    snapshot says: what the environment hides on both sides is still a loss.

    AT_BASE may cover only some modules, or none (the change cannot alter the others' collection:
    modules_to_collect), so outside them what the change collects is what the base collects.
    """
    from oracle_guard.contract import unstable_ids

    # Tests the snapshot counts, or lists with case ids the base no longer gives (ids that change on
    # every collection, or cases renumbered): their snapshot entries answer for them, as for the hook.
    known = unstable_ids.recorded(base) | {
        unstable_ids.function_of(n) for n in base if n not in at_base.items and unstable_ids.function_of(n) != n
    }
    record = Record()
    result = dict(base)
    for node_id in sorted(at_base.items):
        if node_id not in base and unstable_ids.function_of(node_id) not in known:
            result[node_id] = (at_base.items[node_id], 1)
            record.unlisted.append(node_id)
    failing = {where.split("::")[0] for where, _ in at_base.errors if where}
    stale = [
        n for n in base if n not in at_base.items and n not in items and unstable_ids.parse_key(n) is None and "::" in n
    ]
    files = read_base(sorted({n.split("::")[0] for n in stale} - failing))
    for node_id in stale:
        path = node_id.split("::")[0]
        if path in failing:
            continue  # the base could not say: its snapshot stands
        if not _defines(files.get(path), _name_of(node_id)):
            del result[node_id]
            record.gone.append(node_id)
    return result, record


def _name_of(node_id: str) -> str:
    """The test's own name: the id's last part, without parameters."""
    return node_id.split("::")[-1].partition("[")[0]


def _defines(source: bytes | None, name: str) -> bool:
    if source is None:
        return False
    return re.search(rb"\b(?:def|class)\s+" + re.escape(name.encode("utf-8", "replace")) + rb"\b", source) is not None


def _counts(found: Iterable[str], listed: Iterable[str]) -> tuple[int, int]:
    new, old = set(found), set(listed)
    return len(new - old), len(old - new)


def unrecorded(snapshot: str, items: Mapping[str, str], current: bytes | None, record: Record, label: str) -> str:
    """The one notice of a gate that passed a change whose snapshot does not record what it collects."""
    from oracle_guard.contract import unstable_ids
    from oracle_guard.contract.snapshot import parse_snapshot

    new, gone = _counts(items, parse_snapshot(current, snapshot) if current is not None else {})
    said = [f"{new} new id{'' if new == 1 else 's'}"] if new else []
    said += [f"{gone} renamed or retired"] if gone else []
    line = (
        f"{snapshot}: not brought up to date ({unstable_ids.cases(items)} tests: {', '.join(said) or 'statuses changed'}); "
        f"nothing {label} collects was lost, so this passes; record it: `oracle-guard collection-snapshot --base {label}`"
        f", then commit {snapshot}"
    )
    extra = []
    if record.unlisted:
        extra.append(
            f"{len(record.unlisted)} test(s) {label} collects were missing from its snapshot and were judged too"
        )
    if record.gone:
        extra.append(gone_note(record, label))
    return line + (" (" + "; ".join(extra) + ")" if extra else "")


def gone_note(record: Record, label: str) -> str:
    first = record.gone[0]
    more = f" and {len(record.gone) - 1} more" if len(record.gone) > 1 else ""
    return f"{first}{more}: listed in {label}'s snapshot, but its source at {label} no longer defines it: not this change's loss"
