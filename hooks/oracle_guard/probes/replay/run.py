"""The replay's pytest processes: one per scratch tree, the ledger read back from outside.

Each side runs ``python -c RUNNER`` (_replay_plugin.py, loaded by path into
the project's interpreter) in its own process group, with the replay's
fixed options, the tree (and its ``src/``) first on ``PYTHONPATH``, no
``PYTEST_ADDOPTS``/``PYTEST_PLUGINS``, and, unless turned off for a bench,
the canary module written outside the tree (ledger.py).

The plugin is also loadable by name from a copy outside the tree (``-p _oracle_guard_replay``):
pytest-xdist's workers load it so, when the user asks for ``-n`` (``spread_args``) or the
project's own addopts do.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from oracle_guard.probes.replay import ledger
from oracle_guard.probes.runner import log_tail
from oracle_guard.pytest_side import barrier
from oracle_guard.repo.confine import jail
from oracle_guard.repo.interpreters import candidate_interpreters, no_pytest, tree_env
from oracle_guard.reporting.report import UsageError

NO_RANDOM_ORDER = ("-p", "no:randomly", "-p", "no:random_order")
# Both sides: no cache (no --lf/--ff state from the user's runs), every module even when one
# fails to import (an import error must not hide the other tests), no stop at the first
# failure (`-x` in addopts would leave the later tests unjudged), tracebacks with `E` lines.
CACHE_OFF = ("-p", "no:cacheprovider")
PYTEST_ARGS = (
    *CACHE_OFF,
    "-q",
    "--tb=short",
    "--continue-on-collection-errors",
    "--maxfail=0",
    "-o",
    "console_output_style=classic",
)


def fixed_args() -> tuple[str, ...]:
    """PYTEST_ARGS on this ground: confined runs keep pytest's cache, as a plain run does (issue 39).

    Unconfined, the new code's runs could leave cache state a later run reads, so the cache stays off.
    Both sides get the same options, so that a test that uses the cache runs alike on both.
    """
    return PYTEST_ARGS[len(CACHE_OFF) :] if jail.ground().abi else PYTEST_ARGS


class _Pytest:
    """One pytest process in a scratch tree, in its own process group so a timeout ends all of it."""

    def __init__(
        self, python: str, tree: str, args: Sequence[str], work: str, name: str, nonce: str, side: str = "base"
    ) -> None:
        from oracle_guard.probes import kit
        from oracle_guard.probes.replay import plugin as _replay_plugin

        self.tree = tree
        self.nonce = nonce
        self.out_path = os.path.join(work, f"{name}.tsv")
        self.log_path = os.path.join(work, f"{name}.log")
        # One canary folder per process: each writes its own bytecode cache there.
        canaries = ledger.write_canaries(os.path.join(work, f"canary-{name}"), nonce) if nonce else ""
        env, self.imports = barrier.env_for(side, tree_env(python, tree), name)
        plugin = _plugin_copy(work)
        cmd = [
            python,
            "-c",
            barrier.REPORT_IMPORTS + _replay_plugin.RUNNER,
            plugin,
            self.out_path,
            canaries,
            os.path.abspath(kit.__file__),
            "-p",
            _replay_plugin.NAME,
            *args,
        ]
        self.no_pytest = _replay_plugin.NO_PYTEST_EXIT
        with open(self.log_path, "wb") as log:
            try:
                self.process = barrier.Process(cmd, tree, env, log, side, report=self.imports, writes=[self.out_path])
            except OSError as exc:
                raise UsageError(f"cannot run {python}: {exc.strerror or exc}") from None

    def wait(self, deadline: float) -> int:
        try:
            return self.process.wait(deadline)
        except barrier.Hung as exc:
            exc.test = running(self.out_path)
            raise

    def kill(self) -> None:
        self.process.kill()

    def result(self) -> ledger.Result:
        return ledger.read(self.out_path, self.process.proc.returncode, log_tail(self.log_path), self.nonce)


def running(path: str) -> str:
    """The test a stopped run was in: the last one started and not finished in its ledger ("" when none)."""
    started = ""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                kind, _, rest = line.rstrip("\n").partition("\t")
                if kind == "started":
                    started = rest
                elif kind == "item" and rest.split("\t")[3:4] == [started]:
                    started = ""
    except OSError:
        return ""
    return started


def _plugin_copy(work: str) -> str:
    """The replay plugin as ``_oracle_guard_replay.py`` in WORK (outside every tree), for xdist's workers to import."""
    from oracle_guard.probes.replay import plugin as _replay_plugin

    path = os.path.join(work, "plugin", f"{_replay_plugin.NAME}.py")
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        shutil.copyfile(os.path.abspath(_replay_plugin.__file__), path)
    return path


class Alongside(Protocol):
    """Runs of a side started with its main run and awaited with it (probes/flips/gate.py ``Early``)."""

    def start(self, side: str, python: str) -> None: ...

    def wait(self, side: str, deadline: float) -> None: ...

    def kill(self) -> None: ...


class Runs:
    """What every pytest process of one replay shares: logs folder, deadline, parallelism, canaries."""

    def __init__(self, work: str, deadline: float, jobs: int, canaries: bool = True) -> None:
        self.work = work
        self.deadline = deadline
        self.jobs = jobs
        self.nonce = ledger.new_nonce() if canaries else ""  # names the canaries of this replay
        self.alongside: Alongside | None = None  # runs started and awaited with each side's main run
        # The main run's base side, whole and measured (base_cache.main_run): the measure of a later run of
        # the new code alone with the same tests or fewer (a second run, the base's examples), else --timeout.
        self.base_seconds: float | None = None
        # the base's time a cache entry claims for the main run (warm: the base side did not run whole)
        self.claimed_seconds: float | None = None
        # Warm: runs the main run's base side whole and returns its measured time (base_cache.held_to_base),
        # which checks the claim before a later run's hang is judged by it.
        self.whole_base: Callable[[], float | None] | None = None

    def run(
        self, python: str, trees: dict[str, str], args: Sequence[str], tag: str, measure: float | None = None
    ) -> dict[str, ledger.Result]:
        """The same pytest ARGS in each tree; two at once when jobs allows (MEASURE: run_each's CLAIMED)."""
        return self.run_each(python, {name: (tree, args, True) for name, tree in trees.items()}, tag, measure)

    def run_each(
        self,
        python: str,
        plan: Mapping[str, tuple[str, Sequence[str], bool]],
        tag: str,
        claimed: float | None = None,
    ) -> dict[str, ledger.Result]:
        """Name -> (tree, pytest args, with canaries) each; two at once when jobs allows.

        CLAIMED: the base's time for these runs from a cache entry, when the plan's base side only collects.
        """
        results: dict[str, ledger.Result] = {}
        pending: list[tuple[str, _Pytest]] = []
        try:
            # The base side first and alone: never beside the new code, which could write where it reads
            # (pytest_side/barrier.py); the untrusted sides after it, at once when jobs allows.
            for group in barrier.in_turn(plan, claimed):
                for name in group:
                    tree, args, canaries = plan[name]
                    if len(pending) >= self.jobs:
                        done_name, done = pending.pop(0)
                        done.wait(self.deadline)
                        results[done_name] = done.result()
                    nonce = self.nonce if canaries else ""
                    pending.append((name, _Pytest(python, tree, args, self.work, f"{tag}-{name}", nonce, name)))
                    if tag == "run" and self.alongside is not None:
                        self.alongside.start(name, python)
                while pending:
                    done_name, done = pending.pop(0)
                    done.wait(self.deadline)
                    results[done_name] = done.result()
                alongside = self.alongside if tag == "run" else None
                if alongside is not None:
                    for name in group:
                        alongside.wait(name, self.deadline)
        finally:
            for _, run in pending:
                run.kill()
        return results


def _unicode_cache() -> str:
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(home, "oracle-guard", "hypothesis", "unicode_data")


def seed_hypothesis_cache(trees: Sequence[str]) -> None:
    """Give each fresh tree Hypothesis's unicode tables (about 1 s of CPU to build, every run otherwise).

    The tables are derived from Python's unicodedata alone (kept per Unicode
    version) and come from our own earlier runs, never from the user's work
    tree, whose ``.hypothesis/`` the patch could have written.
    """
    cache = _unicode_cache()
    if not os.path.isdir(cache):
        return
    for tree in trees:
        target = os.path.join(tree, ".hypothesis", "unicode_data")
        if not os.path.exists(target):
            try:
                shutil.copytree(cache, target)
            except OSError:
                pass  # only an optimization


def keep_hypothesis_cache(tree: str) -> None:
    built = os.path.join(tree, ".hypothesis", "unicode_data")
    cache = _unicode_cache()
    if os.path.isdir(cache) or not os.path.isdir(built):
        return
    try:
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        partial = tempfile.mkdtemp(prefix="unicode_data-", dir=os.path.dirname(cache))
        shutil.copytree(built, os.path.join(partial, "u"))
        os.replace(os.path.join(partial, "u"), cache)
        shutil.rmtree(partial, ignore_errors=True)
    except OSError:
        pass


def jobs(requested: int) -> int:
    if requested:
        return max(1, min(2, requested))
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - Windows
        load = 0.0
    # Two sides at once unless the machine is already saturated: the sides are the same work either way,
    # and the load average counts the replay's own last minute, so "two idle cores" (or even one) would
    # serialize nearly every run on a 2-core machine.
    return 2 if cores >= 2 and load < cores else 1


# Exit 0: pytest-xdist is there; 3: pytest is, xdist is not; 4: no pytest (the next candidate is asked).
XDIST_PROBE = """\
import importlib.util, sys
sys.exit(4 if importlib.util.find_spec("pytest") is None else 0 if importlib.util.find_spec("xdist") else 3)
"""


def spread_args(workers: str | None, shard: str | None) -> list[str]:
    """The main run's options that spread it: xdist's ``-n`` and the plugin's shard."""
    from oracle_guard.probes.replay import plugin as _replay_plugin

    spread = ["-n", workers] if workers else []
    return [*spread, f"{_replay_plugin.SHARD_OPTION}={shard}"] if shard else spread


def require_xdist(explicit: str | None, tree: str, workers: str | None) -> None:
    """With ``-n``: the interpreter that will run pytest has pytest-xdist, or one line and exit 2.

    Asked from outside (the interpreter's own import system, in the base tree), before anything runs:
    a run that silently falls back to one process would hide that CI is not set up as it says.
    """
    if not workers:
        return
    for python, origin in candidate_interpreters(explicit, dict(os.environ)):
        try:
            code = subprocess.run(
                [python, "-c", XDIST_PROBE],
                cwd=tree,
                env=tree_env(python, tree),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=60,
                check=False,
            ).returncode
        except (OSError, subprocess.TimeoutExpired):
            continue
        if code == 3:
            raise UsageError(
                f"-n {workers} needs pytest-xdist in {python} ({origin}): `{python} -m pip install pytest-xdist`, or leave -n out"
            )
        if code == 0:
            return
    # No candidate has pytest: the run itself says so (run_somewhere).


def run_somewhere(
    explicit: str | None, trees: dict[str, str], args: list[str], runs: Runs
) -> tuple[str, str, dict[str, ledger.Result], list[str]]:
    """The first candidate interpreter with pytest runs both sides: (python, origin, results, args)."""
    candidates = candidate_interpreters(explicit, dict(os.environ))
    if not candidates:
        raise UsageError("found no Python interpreter for this project; pass --python PATH")
    tried = []
    for python, origin in candidates:
        run_args = [*fixed_args(), *NO_RANDOM_ORDER, *args]
        results = runs.run(python, trees, run_args, "run")
        codes = {r.exit_code for r in results.values()}
        if 4 in codes and any("random" in r.tail and "unrecognized" in r.tail for r in results.values()):
            # the project's addopts needs a random-order plugin's options: keep the plugin, fixed by its seed option
            run_args = [*fixed_args(), *args]
            results = runs.run(python, trees, run_args, "run")
            codes = {r.exit_code for r in results.values()}
        # Only the base side decides that this interpreter has no pytest: where pytest imports in the base's
        # tree and not in the new code's, a module of the change shadows one it needs, and the gate judges
        # that against the change (OG904), never "nothing was judged" (exit 2) for what the change did.
        trusted = results.get(barrier.TRUSTED)
        if trusted is not None and trusted.exit_code != _no_pytest():
            codes = {trusted.exit_code}
        if any(code == _no_pytest() for code in codes):
            why = next((r.tail for r in results.values() if r.exit_code == _no_pytest()), "")
            tried.append((f"{python} ({origin})", why))
            continue
        return python, origin, results, run_args[: len(run_args) - len(args)]
    raise UsageError(no_pytest(tried))


def _no_pytest() -> int:
    from oracle_guard.probes.replay import plugin as _replay_plugin

    return _replay_plugin.NO_PYTEST_EXIT
