"""The base side's outcomes, kept per base: a second replay on the same base runs a collection there, not the tests.

An entry holds one cold base run's outcomes (node id -> outcome, file, line, message), keyed by
what determines them: the base commit's tree, the exact pytest arguments, the interpreter (its real
path, version and installed distributions, asked from it once) and oracle-guard's own version, its
replay plugin's source and the canary setting.  Entries live where the patch does not choose:
``$ORACLE_GUARD_CACHE/replay``, else ``$XDG_CACHE_HOME/oracle-guard/replay`` or
``~/.cache/oracle-guard/replay``; a folder inside the repository's work tree is refused.

The code under test runs as the same user and can write any entry, so an entry is a claim, never a
verdict (docs/oracle-replay.md, "The base side's cache"): the base tree is always collected for real,
a cached pass is used only where the new side passes the same test too, and every other collected
test (a cached failure, error, skip or xfail, a test the entry lacks, a cached pass the new side does
not pass) runs again in the base tree by its id.  An entry that disagrees with that run, a run that is
not sound on either side, or anything unreadable: the base side runs whole, as without a cache.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import tempfile
import time
from collections.abc import Sequence
from typing import NamedTuple

from oracle_guard.probes.replay import ledger
from oracle_guard.probes.replay import run as replay_run
from oracle_guard.pytest_side import barrier
from oracle_guard.repo.confine import jail
from oracle_guard.repo.interpreters import child_env
from oracle_guard.reporting.report import notice

FORMAT = 1
OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
KEEP_DAYS = 30  # entries not read or written for this long are removed when one is written
# What the interpreter says about itself: version and every installed distribution (name, version).
FINGERPRINT = """\
import json, sys
try:
    from importlib import metadata
    dists = sorted({(str(d.metadata["Name"] or ""), str(d.version or "")) for d in metadata.distributions()})
except Exception as exc:
    dists = repr(exc)
print(json.dumps([sys.version, sys.executable, dists]))
"""


def folder(top: str) -> str | None:
    """Where entries live; None (and a notice) when that folder lies inside the work tree TOP."""
    root = os.environ.get("ORACLE_GUARD_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "oracle-guard"
    )
    where = os.path.join(os.path.abspath(root), "replay")
    real, tree = os.path.realpath(where), os.path.realpath(top)
    if real == tree or real.startswith(tree.rstrip(os.sep) + os.sep):
        notice(
            f"oracle-replay: not using the cache folder {where}: it lies inside the repository's work tree,"
            " which the change controls; the base side runs (set ORACLE_GUARD_CACHE to a folder outside it)"
        )
        return None
    return where


class Probe:
    """The interpreter's fingerprint, asked in a child process started early (it runs beside the tree build)."""

    def __init__(self, python: str, cwd: str) -> None:
        self.python = python
        try:
            self.proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                [python, "-c", FINGERPRINT],
                cwd=cwd,
                env=child_env(python),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError:
            self.proc = None

    def text(self, timeout: float = 60.0) -> str | None:
        """The fingerprint (None: the interpreter could not say, so there is no cache for it); asked once."""
        if not hasattr(self, "said"):
            self.said = self._ask(timeout)
        return self.said

    def _ask(self, timeout: float) -> str | None:
        if self.proc is None:
            return None
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None
        if self.proc.returncode != 0:
            return None
        try:
            version, executable, dists = json.loads(out)
        except ValueError:
            return None
        if not isinstance(dists, list) or not any(isinstance(d, list) and d[:1] == ["pytest"] for d in dists):
            return None  # no pytest there: the cold path finds the interpreter and says why
        return json.dumps([version, os.path.realpath(executable or self.python), dists])


def _own_version() -> str:
    from importlib import metadata

    from oracle_guard.probes.replay import plugin

    try:
        version = metadata.version("oracle-guard")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a checkout
        version = "unknown"
    with open(plugin.__file__, "rb") as f:
        return f"{version} {hashlib.sha256(f.read()).hexdigest()}"


def key(
    tree: str, args: Sequence[str], python: str, fingerprint: str, canaries: bool, probe: dict[str, str] | None = None
) -> str:
    """The entry's name: a digest of everything that determines the base side's answers.

    PROBE: a probe's own inputs (its name and its plugins' sources) for a probe's entry.
    """
    material = {
        "probe": probe or {},
        "format": FORMAT,
        "tree": tree,
        "args": list(args),
        "python": os.path.realpath(python),
        "interpreter": fingerprint,
        "oracle_guard": _own_version(),
        "canaries": canaries,
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode("utf-8")).hexdigest()


class Entry(NamedTuple):
    fixed: tuple[str, ...]  # the fixed pytest options the cold run used (one of FIXED_CHOICES)
    items: dict[str, ledger.Outcome]
    # The cold run's base time (its longest process, as the barrier measured it from outside): the measure
    # of the new side's hang limit when only a collection runs at the base (pytest_side/barrier.py).
    seconds: float


def _outcome(value: object) -> ledger.Outcome | None:
    if not isinstance(value, list) or len(value) != 4:
        return None
    outcome, path, line, message = value
    if outcome not in OUTCOMES or not isinstance(path, str) or not isinstance(message, str):
        return None
    if not isinstance(line, int) or isinstance(line, bool):
        return None
    return ledger.Outcome(outcome, path, line, message)


def read(where: str, name: str, fixed_choices: Sequence[Sequence[str]]) -> Entry | None:
    """The entry NAME in WHERE; None when it is missing, unreadable or not exactly of our format."""
    data = load(where, name)
    if data is None:
        return None
    fixed, items, seconds = data.get("fixed"), data.get("items"), data.get("seconds")
    if not isinstance(items, dict) or not isinstance(fixed, list) or fixed not in [list(c) for c in fixed_choices]:
        return None  # the options come from our own list only: an entry never chooses how the new side runs
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not math.isfinite(seconds) or seconds < 0:
        return None  # no base time: a warm run could not hold a hang of the new code to a limit (OG922)
    outcomes = {}
    for node, value in items.items():
        outcome = _outcome(value)
        if outcome is None:
            return None
        outcomes[node] = outcome
    return Entry(tuple(fixed), outcomes, float(seconds))


def write(where: str, name: str, fixed: Sequence[str], result: ledger.Result, seconds: float | None) -> None:
    """Keep RESULT (a cold base run whose ledger is sound, which took SECONDS) as entry NAME.

    A run whose time was not measured is not kept; a cache that cannot be written is none.
    """
    if ledger.broken(result) or not result.items or seconds is None:
        return
    data = {
        "format": FORMAT,
        "key": name,
        "fixed": list(fixed),
        "seconds": seconds,
        "items": {node: list(o) for node, o in result.items.items()},
    }
    store(where, name, data)


def store(where: str, name: str, data: object) -> None:
    """Write DATA as entry NAME, whole or not at all; a cache that cannot be written is none."""
    try:
        os.makedirs(where, mode=0o700, exist_ok=True)
        handle, partial = tempfile.mkstemp(prefix=".entry-", dir=where)
        with os.fdopen(handle, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(partial, os.path.join(where, f"{name}.json"))
        _prune(where)
    except OSError:
        pass  # only a speed-up


def load(where: str, name: str) -> dict[str, object] | None:
    """Entry NAME as a JSON object of our FORMAT naming itself, kept while it is used; None otherwise."""
    path = os.path.join(where, f"{name}.json")
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != name:
        return None
    try:
        os.utime(path)
    except OSError:
        pass
    return data


def _prune(where: str) -> None:
    old = time.time() - KEEP_DAYS * 86400
    with os.scandir(where) as entries:
        for entry in entries:
            if entry.name.endswith(".json") and entry.stat().st_mtime < old:
                os.remove(entry.path)


def to_verify(collection: ledger.Result, entry: Entry, new: ledger.Result) -> list[str] | None:
    """The collected base tests whose cached outcome cannot be taken on the entry's word; None: no usable collection.

    A cached pass is taken only where the new side passes the same test (it can then only add
    findings: flips run on it, on both sides); everything else the entry says excuses something.
    """
    code = collection.finished
    if code is None or code != collection.exit_code or code not in (0, 1, 2, 5) or collection.items:
        return None  # not a finished collection (a collection runs no test)
    verify = []
    for node in collection.collected:
        cached = entry.items.get(node)
        after = new.items.get(node)
        trusted = (
            cached is not None
            and cached.outcome == "passed"
            and cached.path == node.partition("::")[0]
            and after is not None
            and after.outcome == "passed"
        )
        if not trusted:
            verify.append(node)
    return verify


def assemble(
    collection: ledger.Result, entry: Entry, verify: list[str], ran: ledger.Result | None, canaries: bool
) -> ledger.Result | None:
    """The base side from a real collection, trusted cached passes and the re-run of VERIFY; None: run it cold.

    RAN (the re-run) must be sound, give every id in VERIFY an outcome, and agree with the entry on each.
    """
    items = {n: entry.items[n] for n in collection.collected if n not in verify}
    if verify:
        if ran is None or ledger.broken(ran):
            return None
        for node in verify:
            got, cached = ran.items.get(node), entry.items.get(node)
            if got is None or cached is None or got.outcome != cached.outcome:
                return None  # the entry lacks it or says otherwise (a lie, a stale entry, or an order-dependent test)
            items[node] = got
    failed = any(o.outcome in ("failed", "error") for o in items.values()) or bool(collection.errors) or canaries
    code = 1 if failed else (0 if items else 5)
    roles = {role: expected for role, (_, expected) in ledger.CANARIES.items()} if canaries else {}
    result = ledger.Result(
        items,
        dict(collection.errors),
        code,
        collection.tail,
        collection.collected,
        code,
        roles,
        canaries,
        collection.pool,
    )
    return None if ledger.broken(result) else result


class Cache:
    """One replay's use of the cache: where, for which interpreter, the fingerprint being asked."""

    def __init__(
        self, where: str, python: str, origin: str, tree: str, canaries: bool, cwd: str, top: str = "", rev: str = ""
    ) -> None:
        self.where = where
        self.python = python
        self.origin = origin
        self.tree = tree
        self.top = top  # the work tree and base commit: this command's own collection of the base (shared_collection)
        self.rev = rev
        self.canaries = canaries
        self.probe = Probe(python, cwd)
        self.name: str | None = None

    def close(self) -> None:
        if self.probe.proc is not None and self.probe.proc.poll() is None:
            self.probe.proc.kill()
            self.probe.proc.wait()

    def entry_for(self, args: Sequence[str]) -> Entry | None:
        fingerprint = self.probe.text()
        if fingerprint is None:
            return None
        self.name = key(self.tree, args, self.python, fingerprint, self.canaries)
        fixed = [[*replay_run.fixed_args(), *replay_run.NO_RANDOM_ORDER], list(replay_run.fixed_args())]
        return read(self.where, self.name, fixed)

    def probe_key(self, probe: str, args: Sequence[str], sources: Sequence[str]) -> str | None:
        """The name of PROBE's entry for pytest ARGS, its plugins' SOURCES hashed in; None: no cache for it."""
        fingerprint = self.probe.text()
        if fingerprint is None:
            return None
        digest = hashlib.sha256()
        try:
            for path in sources:
                with open(path, "rb") as f:
                    digest.update(hashlib.sha256(f.read()).digest())
        except OSError:
            return None
        inputs = {"name": probe, "sources": digest.hexdigest()}
        return key(self.tree, args, self.python, fingerprint, self.canaries, inputs)

    def keep(self, python: str, fixed: Sequence[str], base: ledger.Result) -> None:
        """Keep BASE, the base side just run whole, with the time the barrier measured for it."""
        if self.name is not None and python == self.python:
            write(self.where, self.name, fixed, base, barrier.measured())


def start(explicit: str | None, base: str, canaries: bool, cwd: str) -> Cache | None:
    """The cache for this replay (its fingerprint process started), or None when there is none to use."""
    from oracle_guard.repo import git
    from oracle_guard.repo.interpreters import candidate_interpreters
    from oracle_guard.reporting.report import UsageError

    if os.environ.get("ORACLE_GUARD_CACHE") == "off":
        return None
    try:
        top = git.toplevel()
        where = folder(top)
        tree = os.fsdecode(git.run("rev-parse", f"{base}^{{tree}}").strip())
        candidates = candidate_interpreters(explicit, dict(os.environ))
    except (UsageError, git.GitError):
        return None  # the cold path says what is wrong
    if where is None or not candidates:
        return None
    python, origin = candidates[0]
    return Cache(where, python, origin, tree, canaries, cwd, top, base)


def main_run(
    cache: Cache | None, explicit: str | None, trees: dict[str, str], args: list[str], runs: replay_run.Runs
) -> tuple[str, str, dict[str, ledger.Result], list[str]]:
    """The replay's main run, (python, origin, results, fixed options): from the cache where it holds, else cold."""
    # With no new side (a change to the test side alone) a cached pass could hide an OG907: no cache.
    usable = cache if cache is not None and "new" in trees else None
    entry = usable.entry_for([*replay_run.fixed_args(), *replay_run.NO_RANDOM_ORDER, *args]) if usable else None
    if usable is None or entry is None:
        python, origin, results, fixed = replay_run.run_somewhere(explicit, trees, args, runs)
        runs.base_seconds = barrier.measured()
        if usable is not None:
            usable.keep(python, fixed, results["base"])
        return python, origin, results, fixed
    python, fixed = usable.python, list(entry.fixed)
    runs.claimed_seconds = entry.seconds
    runs.whole_base = lambda: _whole_base(usable, python, trees["base"], fixed, args, runs)
    shared = shared_collection(usable, trees["base"], args)
    plan = {"new": (trees["new"], [*fixed, *args], True)}
    if shared is None:
        plan = {"base": (trees["base"], [*fixed, "--collect-only", *args], False), **plan}
    else:
        notice(
            f"oracle-replay: the base's {len(shared.collected)} test id(s) from this check's own collection of"
            " the base (collection-snapshot), not collected again"
        )
    try:
        got = runs.run_each(python, plan, "run", claim(entry.seconds, runs.deadline))
    except barrier.Hung as exc:
        if not exc.claimed:
            raise
        return _held_to_the_claim(usable, python, trees, fixed, args, runs, exc)
    new = got["new"]
    collection = got["base"] if shared is None else shared
    base = _warm_base(python, trees["base"], fixed, runs, collection, entry, new, usable.canaries)
    if base is None:
        # The base side whole, as without a cache (the new side's run is the one a cold replay makes).
        base = runs.run(python, {"base": trees["base"]}, [*fixed, *args], "run")["base"]
        runs.base_seconds = barrier.measured()
        usable.keep(python, fixed, base)
    return python, usable.origin, {"base": base, "new": new}, fixed


def _whole_base(
    usable: Cache, python: str, tree: str, fixed: list[str], args: list[str], runs: replay_run.Runs
) -> float | None:
    """The main run's base side whole, measured (once): the check of a claim a later run's hang met."""
    if runs.base_seconds is None:
        barrier.unchanged()  # the stopped run's end was quiet: the base runs only where it left nothing (OG921)
        base = runs.run(python, {"base": tree}, [*fixed, *args], "run-whole")["base"]
        runs.base_seconds = barrier.measured()
        usable.keep(python, fixed, base)
    return runs.base_seconds


def held_to_base(
    runs: replay_run.Runs, python: str, trees: dict[str, str], args: Sequence[str], tag: str
) -> dict[str, ledger.Result]:
    """A later run of the change's code alone (a second run, the base's examples, the target tree), held to the
    main run's base time: measured, else the cache entry's (cut as ``claim``), checked by a whole base run
    before a hang is judged by it; OG922 either way, never --timeout (docs/ground.md)."""
    if runs.base_seconds is not None or runs.claimed_seconds is None or runs.whole_base is None:
        return runs.run(python, trees, args, tag, runs.base_seconds)
    try:
        return runs.run(python, trees, args, tag, claim(runs.claimed_seconds, runs.deadline))
    except barrier.Hung as exc:
        seconds = runs.whole_base()
        if seconds is None:
            raise  # a base run whole is always measured: not reached
        limit = barrier.HANG_FLOOR + barrier.HANG_FACTOR * seconds
        if exc.seconds >= limit:
            hung = barrier.Hung(exc.side, exc.seconds, seconds)
            hung.test = exc.test
            raise hung from None
        notice(
            f"oracle-replay: the {tag} run of the new code ran past the {exc.seconds:.0f} s the cache's base time"
            f" allowed; the base ran whole in {seconds:.1f} s, so it runs again, held to {limit:.0f} s"
        )
        return runs.run(python, trees, args, tag, seconds)


def claim(seconds: float, deadline: float) -> float:
    """The entry's base time as the new side's measure, cut so that its limit ends by half the time left.

    A claim is checked against a real base run before a hang is judged by it (``_held_to_the_claim``):
    the other half leaves room for that run, so a claim too long can never push a hang into --timeout.
    """
    room = max(0.0, deadline - time.monotonic())
    return min(seconds, max(0.0, (room / 2 - barrier.HANG_FLOOR) / barrier.HANG_FACTOR))


def _held_to_the_claim(
    usable: Cache,
    python: str,
    trees: dict[str, str],
    fixed: list[str],
    args: list[str],
    runs: replay_run.Runs,
    exc: barrier.Hung,
) -> tuple[str, str, dict[str, ledger.Result], list[str]]:
    """The new side ran past the limit the entry's base time set: the base runs whole, and its real time decides.

    The entry is a claim (the change's code may have written it, where runs are unconfined or before
    the gate): a hang is OG922 only when the new side ran at least as long as the measured base allows;
    a limit that was too short runs the new side again, held to the real one.
    """
    alongside, runs.alongside = runs.alongside, None
    if alongside is not None:
        alongside.kill()  # the early flip runs: the flips run after, as without them
    barrier.unchanged()  # the stopped run's end was quiet: the base runs only where it left nothing (OG921)
    base = runs.run(python, {"base": trees["base"]}, [*fixed, *args], "run")["base"]
    seconds = runs.base_seconds = barrier.measured()
    usable.keep(python, fixed, base)
    if seconds is None:
        raise exc  # pragma: no cover - a base run whole is always measured
    if exc.seconds >= barrier.HANG_FLOOR + barrier.HANG_FACTOR * seconds:
        hung = barrier.Hung(exc.side, exc.seconds, seconds)
        hung.test = exc.test
        raise hung
    limit = barrier.HANG_FLOOR + barrier.HANG_FACTOR * seconds
    notice(
        f"oracle-replay: the new side ran past the {exc.seconds:.0f} s the cache's base time allowed; the base ran"
        f" whole in {seconds:.1f} s, so the new side runs again, held to {limit:.0f} s"
    )
    again = runs.run_each(python, {"new": (trees["new"], [*fixed, *args], True)}, "run", seconds)
    return python, usable.origin, {"base": base, "new": again["new"]}, fixed


def shared_collection(cache: Cache, tree: str, args: Sequence[str]) -> ledger.Result | None:
    """This command's own whole collection of the base (pytest_side/collection/base.py), as the warm base side's
    collection of the selection ARGS; None when there is none to take, and the base is collected here.

    It is a real collection of the same commit by the same interpreter, made by the gate in this process,
    so it says which tests exist as well as a second one would.  Taken only where the change's code runs
    confined: unconfined, the base side runs first so that the barrier notes what the base reads before
    the new code runs (pytest_side/barrier.py).  Only for a plain selection (test modules or folders, no
    option), and when every id names a file of the base TREE (ids relative to it).
    """
    from oracle_guard.pytest_side.collection import base as base_collection

    if not jail.ground().abi or not cache.top or not cache.rev or any(a.startswith("-") for a in args):
        return None
    found = base_collection.whole(cache.top, cache.rev, cache.python)
    if found is None or found.errors or found.exit_code not in (0, 5):
        return None
    wanted = [a.rstrip("/") for a in args]
    ids = []
    for node in found.items:
        path = node.partition("::")[0]
        if not os.path.isfile(os.path.join(tree, path)):
            return None  # ids relative to another folder (a rootdir below the tree): collect here
        if not wanted or any(path == w or path.startswith(w + "/") for w in wanted):
            ids.append(node)
    code = 0 if ids else 5
    return ledger.Result({}, {}, code, found.tail, tuple(ids), code)


def _warm_base(
    python: str,
    tree: str,
    fixed: list[str],
    runs: replay_run.Runs,
    collection: ledger.Result,
    entry: Entry,
    new: ledger.Result,
    canaries: bool,
) -> ledger.Result | None:
    if ledger.broken(new):
        return None  # OG904/OG906 are judged against a base side that really ran
    verify = to_verify(collection, entry, new)
    if verify is None or len(verify) * 2 > len(collection.collected):
        return None
    if _still_red(verify, entry, new):
        notice(
            "oracle-replay: the cache says base tests failed that fail against the new code too; the base side runs whole"
        )
        return None
    ran = runs.run(python, {"base": tree}, [*fixed, *verify], "verify")["base"] if verify else None
    base = assemble(collection, entry, verify, ran, canaries)
    if base is None:
        notice("oracle-replay: the cached base side disagrees with the base's own run; the base side runs whole")
        return None
    again = f", {len(verify)} run again at the base" if verify else ""
    notice(
        f"oracle-replay: the base side's outcomes from the cache ({len(base.items) - len(verify)} cached passes{again})"
    )
    return base


def _still_red(verify: list[str], entry: Entry, new: ledger.Result) -> bool:
    """Whether the entry says a test failed at the base that the new side does not pass either.

    That claim would turn an OG901 into a "still red" notice, and a test can fail by itself yet pass
    after the tests before it: only a whole base run settles it.
    """
    for node in verify:
        cached = entry.items.get(node)
        after = new.items.get(node) if new is not None else None
        if (
            cached is not None
            and cached.outcome in ("failed", "error")
            and (after is None or after.outcome != "passed")
        ):
            return True
    return False
