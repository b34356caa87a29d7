"""collection-snapshot: compare what pytest really collects with the committed snapshot.

Static hooks see the diff; this one asks pytest.  It runs
``pytest --collect-only`` once, in the project's own interpreter, with a
small exporter plugin (oracle_guard/pytest_side/collection/collector.py, which needs only pytest) and
compares every collected node id and its skip/xfail status with the
snapshot committed at the base revision.  A test that vanished (deleted,
renamed, deselected, ignored by config or conftest) or became skipped or
xfailed is a finding.  When nothing the base lists is lost, a commit records
the new ids itself: the snapshot is written and staged with it (only growth,
renames and approved retirements, so only what makes it stronger or the same);
elsewhere (a push, a range, no snapshot in the index yet) it is written and the
hook exits 1 once, like a formatter, so the user stages the file.

Why one module: it owns one pytest run from start to verdict (start the
project's interpreter early, feed it what to collect, read the ids back,
compare them with the base snapshot), and the steps share the run's state.
What other modules need of it already lives in core: the snapshot format
(oracle_guard/contract/snapshot.py), the interpreter (oracle_guard/repo/interpreters.py), the exporter
(oracle_guard/pytest_side/collection/collector.py), partial collection (oracle_guard/pytest_side/collection/partial.py) and
the pytest configuration (oracle_guard/pytest_side/config/compare.py).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Union

from oracle_guard.contract.snapshot import WEAKER, format_snapshot, parse_snapshot, recorded_errors
from oracle_guard.pytest_side import ground
from oracle_guard.pytest_side.collection import base as base_collection
from oracle_guard.pytest_side.collection import blame, output
from oracle_guard.pytest_side.collection.partial import PYTEST_CONFIGS, relevant
from oracle_guard.pytest_side.config import compare as pytest_config
from oracle_guard.repo import changes, git
from oracle_guard.repo.confine import jail
from oracle_guard.repo.paths import DEFAULT_CONTRACT, PYTHON_SUFFIXES
from oracle_guard.reporting.report import ChangeCaused, Finding, UsageError, guarded, notice, say
from oracle_guard.rules import args as hook_args

if TYPE_CHECKING:
    from datetime import datetime

    from oracle_guard.contract.contract import Contract
    from oracle_guard.repo.context import HookContext

NO_RANDOM_ORDER = ("-p", "no:randomly", "-p", "no:random_order")
# Bounds on a collection, which runs the change's code: read by this process when it waits, never by that
# code (it runs only in the child), so a patch cannot move them; tests lower them in-process.
TIMEOUT_SECONDS = 900
OUTPUT_CAP = 256 * 1024 * 1024  # bytes of stdout and stderr together; honest -q output is ~100 bytes a test


# -- finding the project's interpreter (oracle_guard/repo/interpreters.py, shared with oracle-replay)

from oracle_guard.repo.interpreters import (  # noqa: E402,F401
    ChosenByChange,
    _in_pre_commit_store,
    _main_checkout,
    _own_bins,
    _venv_python,
    candidate_interpreters,
    no_pytest,
)
from oracle_guard.repo.interpreters import child_env as _child_env  # noqa: E402

# -- running pytest ------------------------------------------------------------


@dataclass
class Collection:
    items: dict[str, str] = field(default_factory=dict)  # node id -> status
    errors: list[tuple[str, str]] = field(default_factory=list)  # (where, message)
    params: dict[str, list[str]] = field(default_factory=dict)  # node id -> argnames, "", ids (the collector's)
    exit_code: int = 0
    python: str = ""
    tail: str = ""  # last meaningful line of pytest's output, for messages


def _tail(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip() and not set(line.strip()) <= set("=_-")]
    return lines[-1] if lines else ""


class _Run:
    """A collection run in flight: started early so the hook's own work overlaps it."""

    def __init__(self, python: str, warm: bool = False) -> None:
        from oracle_guard.pytest_side.collection import collector as _collector

        self.python = python
        self.runner = _collector
        self.why = ""  # why `import pytest` failed there (NO_PYTEST_EXIT)
        # warm: the partial run's watcher; send() names what to collect (oracle_guard/pytest_side/collection/partial.py)
        self.warm = warm
        self.paths: list[str] | None = None if warm else []  # what to collect; empty: all the configuration names
        # A folder of its own: the collection runs the change's code, confined to writing there (repo/confine).
        self.out_dir = tempfile.mkdtemp(prefix="oracle-guard-collect-")
        self.out_path = os.path.join(self.out_dir, "collected.txt")
        open(self.out_path, "wb").close()
        self.args = ["--collect-only", "-q", "-p", "no:cacheprovider", *NO_RANDOM_ORDER]
        self.sidecar = ""  # what the partial run's watcher wrote beside the output
        self.done = False
        self.jails: list[jail.Jail] = []  # each start's private temporary folder, removed with the output
        self.proc = self._start(self.args)

    def _start(self, args: list[str]) -> subprocess.Popen[bytes]:
        from oracle_guard.pytest_side.collection import partial as partial_collection

        code = output.arm(partial_collection.RUNNER if self.warm else self.runner.RUNNER, TIMEOUT_SECONDS)
        cmd = [self.python, "-c", code, os.path.abspath(self.runner.__file__), self.out_path, *args]
        confined = jail.Jail(self.out_dir, quiet=True)
        try:
            started, env = confined.command(cmd, _child_env(self.python))
            proc = subprocess.Popen(
                started,
                stdin=subprocess.PIPE if self.warm else subprocess.DEVNULL,  # never the user's terminal
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
        except OSError as exc:
            confined.close()
            self._clean()
            raise UsageError(f"cannot run {self.python}: {exc.strerror or exc}") from None
        self.jails.append(confined)
        if self.paths is not None and self.warm:
            self._send(proc, self.paths)
        return proc

    def send(self, paths: Sequence[str]) -> None:
        """What a warm run collects: PATHS, or everything when empty."""
        self.paths = list(paths)
        self._send(self.proc, self.paths)

    @staticmethod
    def _send(proc: subprocess.Popen[bytes], paths: list[str]) -> None:
        import json

        stdin, proc.stdin = proc.stdin, None  # communicate() must not touch it again
        assert stdin is not None
        try:
            stdin.write(json.dumps(paths).encode("utf-8") + b"\n")
            stdin.close()
        except BrokenPipeError:
            pass  # it ended early (no pytest there): result() says so

    def result(self) -> Collection | None:
        """The collection; None when that interpreter has no pytest."""
        if self.paths is None:
            self.send([])
        try:
            stdout, stderr = self._wait()
            # A project whose addopts needs a random-order plugin's options: keep the plugin.
            if self.proc.returncode == 4 and b"unrecognized arguments" in stderr and b"random" in stderr:
                self.proc = self._start(self.args[: -len(NO_RANDOM_ORDER)])
                stdout, stderr = self._wait()
            if self.proc.returncode == self.runner.NO_PYTEST_EXIT:
                self.why = _tail(stderr.decode("utf-8", "replace"))
                return None
            found = Collection(exit_code=self.proc.returncode, python=self.python)
            found.tail = _tail(stderr.decode("utf-8", "replace")) or _tail(stdout.decode("utf-8", "replace"))
            with open(self.out_path, encoding="utf-8") as f:
                for line in f:
                    kind, where, rest = (line.rstrip("\n").split("\t", 2) + ["", ""])[:3]
                    if kind == "item":
                        found.items[rest] = where
                    elif kind == "error":
                        found.errors.append((where, rest))
                    elif kind == "params":
                        found.params[where] = rest.split("\t")
            if os.path.exists(self.out_path + ".whole"):
                with open(self.out_path + ".whole", encoding="utf-8") as f:
                    self.sidecar = f.read()
            return found
        finally:
            self.done = True
            self._clean()

    def _clean(self) -> None:
        for confined in self.jails:
            confined.close()
        shutil.rmtree(self.out_dir, ignore_errors=True)

    def abandon(self) -> None:
        if self.done:
            return
        self.done = True
        if self.proc.poll() is None:
            self.proc.kill()
        output.drain(self.proc)
        self._clean()

    def _wait(self) -> tuple[bytes, bytes]:
        out = output.wait(self.proc, TIMEOUT_SECONDS, OUTPUT_CAP, self.python)  # Stopped: hung or flooded
        for confined in self.jails:
            confined.refuse_unconfined()  # the system's doing, never a collection the change broke
        return out


class _PartialRun:
    """A warm run told to collect only the touched test modules, spliced into the base snapshot.

    Any doubt the run itself reveals (a collection error, another exit code,
    a plugin acting on the whole item list, ids of other files) falls back to
    a full collection, which then answers (oracle_guard/pytest_side/collection/partial.py).
    """

    def __init__(self, run: _Run, modules: list[str], base_bytes: bytes, base_snapshot_path: str) -> None:
        self.python = run.python
        self.run = run
        self.modules = modules
        self.base_bytes = base_bytes
        self.base_snapshot_path = base_snapshot_path
        run.send(["-q", *modules])  # -qq: no list of ids to print (trouble is the full run's to report)

    @property
    def why(self) -> str:
        return self.run.why

    def result(self) -> Collection | None:
        from oracle_guard.pytest_side.collection import partial as partial_collection

        found = self.run.result()
        if found is None:
            return None
        if (
            not found.errors
            and found.exit_code in (0, 5)
            and not partial_collection.whole_list_plugins(self.run.sidecar)
        ):
            items = partial_collection.splice(self.base_bytes, self.base_snapshot_path, self.modules, found.items)
            if items is not None:
                found.items = items
                return found
        self.run = _Run(self.python)
        return self.run.result()

    def abandon(self) -> None:
        self.run.abandon()


class _Inert:
    """No run: the change cannot change what pytest collects (oracle_guard/analysis/inert.py), so the base snapshot answers."""

    def __init__(self, python: str, base_bytes: bytes, base_snapshot_path: str) -> None:
        self.python = python
        self.why = ""  # it never fails to run
        self.items = {n: status for n, (status, _) in parse_snapshot(base_bytes, base_snapshot_path).items()}

    def result(self) -> Collection:
        return Collection(items=dict(self.items), exit_code=0 if self.items else 5, python=self.python)

    def abandon(self) -> None:
        pass


# A run in flight: the change's collection (first), then the gate's collection of the base.
_Started = Union[_Run, _PartialRun, _Inert, base_collection.BaseRun]


def collect(python: str) -> Collection | None:
    """What PYTHON's pytest collects here (for callers that record a snapshot, e.g. `init`)."""
    return _Run(python).result()


# -- what changed --------------------------------------------------------------


def _any_relevant(change_set: changes.ChangeSet, watched: set[str]) -> bool:
    touched = change_set.changed_paths + change_set.deleted + [c.old_path for c in change_set.changes if c.old_path]
    return any(relevant(p, watched) for p in touched)


def needs_run(change_set: changes.ChangeSet, watched: set[str], snapshot: str) -> bool:
    """Whether anything that can change collection changed (or the snapshot is not in place)."""
    if change_set.base is None or _any_relevant(change_set, watched):
        return True
    here = changes.read_worktree_file(snapshot)
    if here is None:
        return True
    if change_set.target is None:  # staged run: an unstaged edit to the snapshot needs a look
        return git.read_blobs("", [snapshot]).get(snapshot) != here
    return False


# -- the hook ------------------------------------------------------------------


def _where(location: str, snapshot: str) -> str:
    path = location.split("::", 1)[0]
    return path if path and os.path.exists(path) else snapshot


def _test_part(node_id: str) -> str:
    """The id without its file: what stays the same when a test moves between files."""
    return node_id.split("::", 1)[1] if "::" in node_id else node_id


_AUTO_ID = re.compile(r"(?<=[\[-])([A-Za-z_]+)\d+(?=[-\]])")


def _unnumbered(node_id: str) -> str:
    """The id with pytest's positional parameter names (`text3`) made anonymous."""
    if not node_id.endswith("]") or "[" not in node_id:
        return node_id
    head, _, params = node_id.partition("[")
    return head + _AUTO_ID.sub(r"\1#", "[" + params)


def compare(
    base: dict[str, tuple[str, int]],
    found: Collection,
    snapshot: str,
    allowed_retire: Callable[[str], bool],
    allowed_skip: Callable[[str], bool],
    same: Callable[[list[str], list[str]], set[str]] | None = None,
) -> list[Finding]:
    """Findings for ids of the base snapshot that vanished or got weaker.

    SAME(vanished, appeared) names the vanished ids whose test lives on
    (moved, renamed, merged or split with its checks: oracle_guard/analysis/sametest/cases.py).
    """
    from oracle_guard.contract import unstable_ids  # only where pytest ran

    counted = {n: v for n, v in base.items() if unstable_ids.parse_key(n) is not None}
    base = {n: v for n, v in base.items() if n not in counted}
    # A test moved to another file keeps its class, name and parameters: pair
    # each vanished id with a new id of the same test part, once.
    moved: dict[str, list[str]] = {}
    for node_id in sorted(found.items):
        if node_id not in base:
            moved.setdefault(_test_part(node_id), []).append(node_id)
    # pytest names a parameter it cannot show by argument name and position
    # (`text3`): inserting a case renumbers the later ones.  A vanished id is
    # renumbered, not lost, when a new id differs from it only in those numbers.
    renumbered: dict[str, list[str]] = {}
    for node_id in sorted(found.items):
        if node_id not in base:
            renumbered.setdefault(_unnumbered(node_id), []).append(node_id)
    findings = []
    paired: dict[str, str | None] = {}
    for node_id in sorted(base, key=lambda n: base[n][1]):
        current = node_id if node_id in found.items else None
        if current is None and moved.get(_test_part(node_id)):
            current = moved[_test_part(node_id)].pop(0)
        if current is None and _unnumbered(node_id) != node_id and renumbered.get(_unnumbered(node_id)):
            current = renumbered[_unnumbered(node_id)].pop(0)
        paired[node_id] = current
    vanished = [n for n, current in paired.items() if current is None]
    alive: set[str] = set()
    if vanished and same is not None:
        taken = set(paired.values())
        alive = same(vanished, [n for n in sorted(found.items) if n not in base and n not in taken])
    for node_id, (old, line) in sorted(base.items(), key=lambda kv: kv[1][1]):
        current = paired[node_id]
        if current is None and node_id in alive:
            continue  # the same test under another id: its new ids are written into the snapshot
        if current is None:
            if not allowed_retire(node_id):
                findings.append(
                    Finding(
                        snapshot,
                        line,
                        1,
                        "OG801",
                        f"test no longer collected: {node_id} (retiring a test needs a signed approval)",
                    )
                )
            continue
        now = found.items[current]
        if (old, now) in WEAKER and not allowed_skip(current):
            what = "skipped" if now == "skip" else "xfailed"
            findings.append(
                Finding(
                    snapshot,
                    line,
                    1,
                    "OG802",
                    f"test now {what} at collection (was {old}): {current}; restore it or add a freeze entry",
                )
            )
    return findings + unstable_ids.weakened(counted, found.items, snapshot, allowed_retire, allowed_skip)


def check(ctx: HookContext) -> list[Finding]:
    return prepare(ctx)()


def prepare(ctx: HookContext) -> Callable[[], list[Finding]]:
    """Start pytest if this change needs it; the returned call waits for it and compares.

    The one-process hook prepares this hook first, so the static hooks run
    while pytest collects.  Options: snapshot, python, always, static_only,
    if_snapshot (see main), started (a collection main() began early),
    partial (collect only the touched test modules when that is sure to give
    the same snapshot: oracle_guard/pytest_side/collection/partial.py; the one-process hook's).
    """
    if ctx.change_set is None:
        raise UsageError("collection-snapshot compares with a base: it needs a change set")
    change_set = ctx.change_set
    # The run to abandon if anything fails: the caller's list, so that it can abandon it too.
    started: list[tuple[_Started, list[tuple[str, str]]]] = ctx.option("started")
    if started is None:
        started = []
    try:
        if ctx.option("static_only"):
            static = _configuration(ctx, change_set)
            return lambda: static
        if (
            not started
            and not ctx.option("if_snapshot")
            and (change_set.base is None or _any_relevant(change_set, {ctx.contract}))
            and not ctx.option("partial")
        ):
            started.append(_start_somewhere(ctx.option("python")))
        # Configuration that hides tests is caught without pytest, so it runs everywhere
        # (partial: after the plan has started pytest, or found it need not run).
        if ctx.option("partial"):
            return _prepare(ctx, change_set, started, lambda: _configuration(ctx, change_set))
        static = _configuration(ctx, change_set)
        return _prepare(ctx, change_set, started, lambda: static)
    except ChosenByChange as exc:
        # The interpreter a commit chose collects nothing: a finding against the change, as in the gates.
        for run, _ in started:
            run.abandon()
        chosen = [*_configuration(ctx, change_set), ground.chosen(exc)]
        return lambda: chosen
    except BaseException:
        for run, _ in started:
            run.abandon()
        raise


def _configuration(ctx: HookContext, change_set: changes.ChangeSet) -> list[Finding]:
    """The configuration's findings (pytest_config.check) less those a signed approval covers (OG316)."""
    from oracle_guard.rules import static_approvals

    return static_approvals.unapproved(ctx, pytest_config.check(change_set, ctx.contract))


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    parser = hook_args.parser("collection-snapshot", __doc__)
    hook_args.add_filenames(parser, "ignored: the hook asks git what changed")
    hook_args.add_base(parser)
    hook_args.add_contract(parser)
    parser.add_argument(
        "--snapshot",
        metavar="PATH",
        help="the snapshot file (default: the contract's `snapshot`, else collection_snapshot.txt beside the contract)",
    )
    parser.add_argument(
        "--python",
        metavar="PATH",
        help="the project's interpreter (default: active virtualenv, ./.venv, ./venv, first python3 on PATH)",
    )
    parser.add_argument(
        "--always", action="store_true", help="run pytest even when no Python file or pytest config changed"
    )
    hook_args.add_now(parser)
    parser.add_argument(
        "--static-only",
        action="store_true",
        help="only compare pytest configuration, conftest files and CI command lines with the base; never run pytest",
    )
    parser.add_argument(
        "--if-snapshot",
        action="store_true",
        help="run pytest only where a snapshot is committed or present (what `oracle-guard check` uses)",
    )
    parser.add_argument(
        "--no-write",
        action="store_true",
        help="never write the snapshot; an out-of-date one is exit 1 (what `oracle-guard check` uses)",
    )
    hook_args.add_format(parser)
    args = parser.parse_args(argv)
    jail.begin()  # a command starts: no earlier command's --require-confinement (one process runs many in tests)
    changes.enter_repo([])
    # pytest is the long pole: start it as soon as we know it must run, and
    # resolve the base, load contracts and the base snapshot while it collects.
    started: list[tuple[_Started, list[tuple[str, str]]]] = []  # the run to abandon if anything fails
    try:
        if args.always and not (args.static_only or args.if_snapshot):
            with contextlib.suppress(ChosenByChange):  # prepare() meets it again and reports OG920
                started.append(_start_somewhere(args.python))
        ctx = hook_args.context(
            args,
            changes.resolve(args),
            started=started,
            snapshot=args.snapshot,
            python=args.python,
            always=args.always,
            static_only=args.static_only,
            if_snapshot=args.if_snapshot,
            no_write=args.no_write,
        )
    except BaseException:
        for run, _ in started:
            run.abandon()
        raise
    return hook_args.finish(ctx, lambda: check(ctx), "collection-snapshot")


_PREFETCH = 16  # changed Python files whose base blobs the first read asks for too


def _prepare(
    ctx: HookContext,
    change_set: changes.ChangeSet,
    started: list[tuple[_Started, list[tuple[str, str]]]],
    static_check: Callable[[], list[Finding]],
) -> Callable[[], list[Finding]]:
    from oracle_guard.contract import contract

    now = ctx.now
    explicit = ctx.option("snapshot")
    new_contract = contract.load(ctx.contract)
    if change_set.base:
        # One git process for the base blobs read below and by the plan (each read then hits the cache).
        olds = [change_set.old_path(p) for p in change_set.changed_paths if p.endswith(".py")][:_PREFETCH]
        usual = explicit or (new_contract or contract.Contract(path=ctx.contract)).snapshot_path
        try:
            _safe_path(usual, ctx.contract)
        except UsageError:
            usual = ctx.contract  # refused below, in its turn
        # The pytest configuration too: the configuration check (below) reads every one at the base.
        configs = sorted(pytest_config.CONFIG_FILES)
        change_set.read_base([ctx.contract, usual, *(p for p in olds if p), *configs])
    base_contract = _base_contract(change_set, ctx.contract)
    snapshot = explicit or (new_contract or contract.Contract(path=ctx.contract)).snapshot_path
    # The reference is the snapshot committed at the base, where the base contract put it:
    # a patch that edits or moves the snapshot file is still compared with the old ids.
    base_snapshot_path = explicit or (base_contract or contract.Contract(path=ctx.contract)).snapshot_path
    for path in {snapshot, base_snapshot_path}:
        _safe_path(path, ctx.contract, given=bool(explicit))
    if snapshot != base_snapshot_path and change_set.base and change_set.read_base([snapshot])[snapshot] is not None:
        raise UsageError(
            f"snapshot path {snapshot!r} names a file committed at {change_set.base_label} that is not its snapshot ({base_snapshot_path}); the hook would overwrite it"
        )
    base_bytes = change_set.read_base([base_snapshot_path])[base_snapshot_path]
    if ctx.option("if_snapshot") and base_bytes is None and not os.path.exists(snapshot):
        static = static_check()
        return lambda: static  # the gate never writes a first snapshot
    watched = {snapshot, base_snapshot_path, ctx.contract}
    if not started:
        if not ctx.option("always") and not needs_run(change_set, watched, snapshot):
            static = static_check()
            return lambda: static
        if ctx.option("partial"):
            started.append(_start_planned(ctx, change_set, base_bytes, base_snapshot_path, snapshot, watched))
        else:
            started.append(_start_somewhere(ctx.option("python")))
    at_base = _start_base(ctx, change_set, started, (base_bytes, base_snapshot_path, snapshot, watched))
    static = static_check()
    base = parse_snapshot(base_bytes, base_snapshot_path)

    def finish() -> list[Finding]:
        try:
            return _compare(
                ctx,
                change_set,
                started,
                static,
                new_contract,
                base_contract,
                snapshot,
                base_snapshot_path,
                base_bytes,
                base,
                now,
                at_base,
            )
        except output.Stopped as exc:  # hung or flooded: the change's when its code runs at collection
            return [*static, _stopped(exc, change_set, snapshot, started, at_base)]
        except BaseException:
            for run, _ in started:
                run.abandon()
            raise

    return finish


def _compare(
    ctx: HookContext,
    change_set: changes.ChangeSet,
    started: list[tuple[_Started, list[tuple[str, str]]]],
    static: list[Finding],
    new_contract: Contract | None,
    base_contract: Contract | None,
    snapshot: str,
    base_snapshot_path: str,
    base_bytes: bytes | None,
    base: dict[str, tuple[str, int]],
    now: datetime,
    at_base_run: base_collection.BaseRun | None = None,
) -> list[Finding]:
    from oracle_guard.contract import unstable_ids  # only where pytest ran

    if change_set.target is not None:
        notice(
            f"pytest collects the work tree, not {os.environ.get('PRE_COMMIT_TO_REF') or change_set.target[:12]}; check that commit out to compare it"
        )
    try:
        found = _finish_somewhere(started[0])
    except output.Stopped:
        raise  # judged in _prepare's finish
    except UsageError as exc:
        lost = _pytest_lost_by_change(exc, started[0], at_base_run, change_set.base_label, snapshot)
        if lost is None:
            raise
        return static + [lost]
    missing = _third_party_missing(found.errors, change_set)
    if missing:  # the environment lacks it: the change's doing only when it removed it from what installs it
        removed = blame.missing_module(missing, found.python, change_set, snapshot)
        if removed is None:
            raise UsageError(blame.not_installed(missing, found.python, change_set))
        return [*static, removed]
    # The gate's second witness: what the base itself collects (pytest_side/collection/base.py).
    at_base = base_collection.collected(at_base_run, found.python, change_set.base_label) if at_base_run else None
    red_at_base = recorded_errors(base_bytes)  # a red base's modules that did not collect there either
    failing_at_base = {where for where, _ in at_base.errors if where} if at_base else set()
    if base_bytes is None and not any(
        p.endswith(PYTHON_SUFFIXES) for p in [*change_set.changed_paths, *change_set.deleted]
    ):
        # The first snapshot (adoption) and no Python file changed: what does not collect did not at the base either.
        red_at_base = {where for where, _ in found.errors if where}
    findings = []
    for where, message in found.errors:
        if where and where in red_at_base:
            notice(f"collection error in {where}, as at {change_set.base_label} (recorded in its snapshot): {message}")
        elif where and where in failing_at_base:
            notice(
                f"collection error in {where}, as at {change_set.base_label} (it does not collect there either): {message}"
            )
        else:
            findings.append(
                Finding(
                    _where(where, snapshot), 1, 1, "OG803", f"collection error in {where or 'the session'}: {message}"
                )
            )
    # pytest exits 2 when a module does not collect; the red base's recorded ones are no other failure.
    only_red = bool(found.errors) and not findings and found.exit_code in (1, 2)
    if found.exit_code not in (0, 5) and not findings and not only_red:
        findings.append(
            Finding(
                snapshot,
                1,
                1,
                "OG804",
                f"pytest --collect-only exited {found.exit_code} in {found.python}: {found.tail or 'no output'}",
            )
        )
    if findings:  # a partial collection would make every later id look deleted
        return static + findings

    approvals = None

    def approved(statement: str) -> bool:
        nonlocal approvals
        if approvals is None:
            from oracle_guard.contract.approvals import Approvals

            approvals = Approvals.load(change_set, base_contract, new_contract)
        return approvals.covers(statement)

    def skip_allowed(node_id: str) -> bool:
        if new_contract is not None and new_contract.freeze_for(node_id, now) is not None:
            return True
        return approved(f"test-skip {node_id}")

    def same(vanished: list[str], appeared: list[str]) -> set[str]:
        from oracle_guard.analysis.sametest import cases as sametest

        renamed = {c.old_path: c.path for c in change_set.changes if c.old_path and c.path and c.old_path != c.path}
        new_side = lambda paths: {p: changes.read_worktree_file(p) for p in paths}  # noqa: E731 - what pytest collected
        return sametest.reappearing_ids(base, found.items, vanished, appeared, change_set.read_base, new_side, renamed)

    current = changes.read_worktree_file(snapshot)
    record = base_collection.Record()
    if ctx.option("if_snapshot") and change_set.base is not None:  # the gate: the base's tests, listed or collected
        seen = at_base or base_collection.Collected({}, [], 0, "")  # no run: the change collects as the base does
        # A module the change cannot collect, as the base could not in the user's own run (red_at_base: its
        # snapshot, or the first snapshot), says nothing lost: the scratch tree's import path (src/ first) is
        # not the user's, so its ids there are no evidence the base collected them where it is used.
        seen = seen._replace(items={n: s for n, s in seen.items.items() if n.split("::", 1)[0] not in red_at_base})
        base, record = base_collection.reference(base, seen, found.items, change_set.read_base)
    # Tests whose ids change between collections: counted by function (a second collection tells).
    base = unstable_ids.steady(found, base, parse_snapshot(current, snapshot), lambda: _Run(found.python).result())
    findings = static + compare(base, found, snapshot, lambda n: approved(f"test-retire {n}"), skip_allowed, same)
    errors = [where for where, _ in found.errors if where]
    wanted = changes.same_line_endings(format_snapshot(found.items, errors).decode("utf-8"), current).encode("utf-8")
    if record.gone and (current == wanted or findings or not ctx.option("no_write")):  # else said with the rest
        notice(base_collection.gone_note(record, change_set.base_label))
    if current != wanted:
        ctx.written.append(snapshot)  # out of date: the run fails until it is staged
        if findings:  # a snapshot records a clean state
            say(
                f"{snapshot}: out of date with what pytest collects now ({unstable_ids.cases(found.items)} tests); not written: fix the findings first, then stage it"
            )
            return findings
        if ctx.option("no_write"):  # `check` writes nothing: the base's record judged the change; say what to record
            ctx.written.remove(snapshot)
            notice(base_collection.unrecorded(snapshot, found.items, current, record, change_set.base_label))
            return findings
        parse_snapshot(current, snapshot)  # never overwrite a file that is not a snapshot
        if change_set.base is not None and base_bytes is None:
            notice(f"no {base_snapshot_path} at {change_set.base_label}: recording the first snapshot")
        changes.write_atomic(snapshot, wanted)
        if not ctx.option("if_snapshot") and _records_in_the_commit(
            change_set, snapshot, base_bytes, base_snapshot_path
        ):
            ctx.written.remove(snapshot)
            git.run("add", "--", snapshot)
            say(
                f"{snapshot}: recorded what pytest collects now ({unstable_ids.cases(found.items)} tests) "
                f"and staged it with this commit: {_growth(snapshot, found, current)}"
            )
            return findings
        say(
            f"{snapshot}: updated with what pytest collects now ({unstable_ids.cases(found.items)} tests); review and stage it (collected by {found.python})"
        )
    return findings


def _records_in_the_commit(
    change_set: changes.ChangeSet, snapshot: str, base_bytes: bytes | None, base_snapshot_path: str
) -> bool:
    """Whether the rewritten snapshot goes into the commit being made, rather than failing the run once.

    The comparison with the base found nothing, so every id the base lists is still collected, paired
    with its new id, or retired with an approval: what the rewrite adds is new tests, which only make
    the snapshot stronger.  Only when the change judged is the index (a commit, not a push or a range)
    and the snapshot staged there is tracked and lists every id of the base's (not an older copy left
    in the index by `git commit PATH`, which pre-commit's stash of the newer one would conflict with).
    pre-commit fails a hook that leaves the work tree different from the index, so the file is staged
    as it is written; git reads the index again after the pre-commit hook.
    """
    if not change_set.staged or change_set.base is None:
        return False
    staged = git.read_blobs("", [snapshot]).get(snapshot)
    if staged is None:
        return False  # the first snapshot is added by hand, with the adoption
    base_ids = set(parse_snapshot(base_bytes, base_snapshot_path)) if base_bytes is not None else set()
    return base_ids <= set(parse_snapshot(staged, snapshot))


def _growth(snapshot: str, found: Collection, current: bytes | None) -> str:
    old = set(parse_snapshot(current, snapshot)) if current is not None else set()
    new, gone = len(set(found.items) - old), len(old - set(found.items))
    said = [f"{new} new id{'' if new == 1 else 's'}"] if new else []
    said += [f"{gone} renamed or retired"] if gone else []
    return ", ".join(said) or "statuses brought up to date"


_NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([A-Za-z_][\w.]*)'")


def _third_party_missing(errors: list[tuple[str, str]], change_set: changes.ChangeSet) -> str | None:
    """A module the collection cannot import that is the environment's fault, not the change's.

    That is: every collection error is a ModuleNotFoundError of a module no file
    of this repository provides (now or at the base), imported by a file whose
    base version imported it too.  A new import, or a module of the repository
    that went missing, stays a finding (OG803).
    """
    names = []
    for where, message in errors:
        match = _NO_MODULE.search(message)
        if match is None:
            return None  # any other error is the change's to answer for
        name = match.group(1)
        path = where.split("::")[0]
        old = change_set.old_path(path) if path else None
        before = change_set.read_base([old])[old] if old else None
        if before is None or not re.search(rb"\b" + re.escape(name.encode()) + rb"\b", before):
            return None  # the change added this import: its failure is the change's
        names.append(name.split(".")[0])
    for name in dict.fromkeys(names):
        specs = [f":(glob)**/{name}.py", f":(glob)**/{name}.pyi", f":(glob)**/{name}/**", f":(glob)**/{name}.so"]
        listed = git.run("ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", *specs, check=False)
        if listed.strip(b"\0"):
            return None
    if change_set.base and names:
        at_base = [
            f"/{os.fsdecode(p)}"
            for p in git.run("ls-tree", "-r", "-z", "--name-only", change_set.base, check=False).split(b"\0")
            if p
        ]
        for name in names:
            if any(p.endswith((f"/{name}.py", f"/{name}.pyi")) or f"/{name}/" in p for p in at_base):
                return None  # the repository had it: deleting it is the change's
    return names[0] if names else None


_NOT_A_SNAPSHOT = (".py", ".pyi", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".json", ".lock")


def _safe_path(path: str, contract_path: str = DEFAULT_CONTRACT, given: bool = True) -> None:
    """The snapshot is written by the hook: never through a symlink, outside the repository,
    into .git/, over a directory, or over the contract, a test, source or configuration file.

    GIVEN: the path came from --snapshot (the user's); else the contract or the default named it, and
    what the work tree holds there is the change's doing: OG806 against it, not exit 2."""
    parts = path.replace("\\", "/").split("/")
    if os.path.isabs(path) or ".." in parts:
        raise UsageError(f"snapshot path {path!r} must be relative to the repository without '..'")
    if any(p.lower() == ".git" for p in parts):
        raise UsageError(f"snapshot path {path!r} may not point into .git/")
    if path == contract_path or path.endswith(_NOT_A_SNAPSHOT) or parts[-1] in PYTEST_CONFIGS:
        raise UsageError(
            f"snapshot path {path!r} names the contract, a source or a configuration file; use a .txt file of its own"
        )
    what = None
    if os.path.islink(path):
        what = "is a symlink; the snapshot must be a regular file"
    elif os.path.isdir(path):
        what = "is a directory; the snapshot must be a file"
    elif os.path.lexists(path) and not os.path.isfile(path):
        what = "is a FIFO or special file; the snapshot must be a regular file"
    else:
        top = os.path.realpath(".")
        folder = os.path.realpath(os.path.dirname(path) or ".")
        if folder != top and not folder.startswith(top + os.sep):
            what = f"its folder resolves through a symlink to {folder}, outside the repository"
    if what is None:
        return
    if given:
        raise UsageError(f"{path}: {what}")
    text = f"{what}: the hook neither reads nor writes through it, so the change's tests cannot be compared"
    raise ChangeCaused(f"{path}: {what}", Finding(path, 1, 1, "OG806", text))


def _base_contract(change_set: changes.ChangeSet, path: str) -> Contract | None:
    from oracle_guard.contract import contract

    if change_set.base is None:
        return None
    return contract.base_from(change_set.read_base([path])[path], path)  # the other hooks' words for a broken one


def _start_base(
    ctx: HookContext,
    change_set: changes.ChangeSet,
    started: list[tuple[_Started, list[tuple[str, str]]]],
    snapshots: tuple[bytes | None, str, str, set[str]],
) -> base_collection.BaseRun | None:
    """The gate's collection of the base, beside the change's (none for the hook: it records as it goes).

    SNAPSHOTS: the base snapshot's bytes and path, the snapshot's path, the watched paths (for the plan)."""
    if not ctx.option("if_snapshot") or change_set.base is None or not started:
        return None
    modules = base_collection.modules_to_collect(change_set, *snapshots)
    if modules == []:
        return None  # the change cannot alter what the base's modules collect
    run = base_collection.BaseRun(started[0][0].python, change_set.base, change_set.base_label, modules)
    started.append((run, []))  # abandoned with the change's run if anything fails
    return run


def _start_somewhere(explicit: str | None) -> tuple[_Run | _PartialRun, list[tuple[str, str]]]:
    """The first candidate's collection of everything."""
    candidates = candidate_interpreters(explicit, dict(os.environ))
    if not candidates:
        raise UsageError("found no Python interpreter for this project; pass --python PATH")
    return _Run(candidates[0][0]), candidates


def _start_planned(
    ctx: HookContext,
    change_set: changes.ChangeSet,
    base_bytes: bytes | None,
    base_snapshot_path: str,
    snapshot: str,
    watched: set[str],
) -> tuple[_Run | _PartialRun | _Inert, list[tuple[str, str]]]:
    """Partial collection: no run for a collection-inert change, else the touched modules or everything.

    Planned before pytest starts: a run started first and killed unused when the
    change proves inert cost more CPU than the plan's delay to the others
    (oracle_guard/pytest_side/collection/partial.py has the numbers).
    """
    from oracle_guard.pytest_side.collection import partial as partial_collection

    # The changed paths that matter, asked of git once for both plans below.
    touched = partial_collection.touched(
        change_set, base_bytes, base_snapshot_path, snapshot, watched, dict(os.environ)
    )
    planned = partial_collection.plan(change_set, base_bytes, base_snapshot_path, touched)
    candidates = candidate_interpreters(ctx.option("python"), dict(os.environ))
    if not candidates:
        raise UsageError("found no Python interpreter for this project; pass --python PATH")
    python = candidates[0][0]
    if planned is None or base_bytes is None:
        production = partial_collection.production_only(touched, base_bytes, base_snapshot_path)
        if base_bytes is None or not production or not partial_collection.has_pytest(python):
            return _Run(python), candidates
        # Only code under test changed.  A small repository is proved first: a collection started and
        # dropped costs more CPU than the proof delays it.  A bigger one starts the collection, then proves.
        first = partial_collection.production_inert(production, change_set, limit=partial_collection.PROVE_FIRST_BYTES)
        if first:
            return _Inert(python, base_bytes, base_snapshot_path), candidates
        run = _Run(python)
        if first is None and partial_collection.production_inert(production, change_set):
            run.abandon()
            return _Inert(python, base_bytes, base_snapshot_path), candidates
        return run, candidates
    if planned.inert and partial_collection.has_pytest(python):
        return _Inert(python, base_bytes, base_snapshot_path), candidates
    return _PartialRun(_Run(python, warm=True), planned.modules, base_bytes, base_snapshot_path), candidates


def _pytest_lost_by_change(
    exc: UsageError,
    pending: tuple[_Started, list[tuple[str, str]]],
    at_base_run: base_collection.BaseRun | None,
    label: str,
    snapshot: str,
) -> Finding | None:
    """OG804 when pytest starts in a scratch tree of the base with the change's interpreter and not in the change's
    work tree: a module of the change stops it (named like pytest's own dependency, or failing only under a
    collection), which was exit 2, "nothing was judged". None: the base cannot tell (no base run, or no pytest
    there either), and the error stands."""
    candidates = pending[1]
    if at_base_run is None or not candidates:
        return None
    python = candidates[0][0]
    try:
        base_collection.collected(at_base_run, python, label)
    except UsageError:
        return None
    text = (
        f"pytest does not start in the change's tree with {python}, while it collects {label} in that interpreter:"
        f" a module of the change stops it ({exc})"
    )
    return Finding(snapshot, 1, 1, "OG804", text)


def _stopped(
    exc: output.Stopped,
    change_set: changes.ChangeSet,
    snapshot: str,
    started: list[tuple[_Started, list[tuple[str, str]]]],
    at_base_run: base_collection.BaseRun | None,
) -> Finding:
    """OG808/OG809 for a collection of the change's tree that was stopped, or one line and exit 2 when its cause
    is not the change: it touches no code that runs at collection, or the base's own collection beside it (the
    gate's) does not finish either, in the same interpreter."""
    started[0][0].abandon()
    found = blame.stopped(exc, change_set, snapshot)
    why = "the change touches no code that runs at collection"
    if found is not None and at_base_run is not None:
        try:
            base_collection.collected(at_base_run, started[0][0].python, change_set.base_label)
        except UsageError as base_exc:
            found, why = None, f"the base's own collection fails too ({base_exc})"
    for run, _ in started:
        run.abandon()
    if found is None:
        raise UsageError(f"{exc}; {why}") from None
    return found


def _finish_somewhere(pending: tuple[_Started, list[tuple[str, str]]]) -> Collection:
    """The first candidate interpreter that has pytest gives the collection."""
    run, candidates = pending
    assert not isinstance(run, base_collection.BaseRun)  # started first, always the change's
    tried = []
    for index, (python, origin) in enumerate(candidates):
        attempt = run if index == 0 else _Run(python)
        found = attempt.result()
        if found is not None:
            return found
        tried.append((f"{python} ({origin})", attempt.why))
    raise UsageError(no_pytest(tried))


if __name__ == "__main__":
    raise SystemExit(main())
