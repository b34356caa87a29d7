"""Run the mutation server (_mutation_server.py) in the project's interpreter, in a scratch tree.

One server process collects once and then forks a child per mutant (code
objects swapped, nothing re-imported): that is the cheap unit.  Mutants are
split over ``jobs`` servers, each its own process group, so a 2-core machine
runs two at once and a timeout ends all of a server's children.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from collections.abc import Sequence
from typing import Any, Callable, NamedTuple

from oracle_guard.probes.mutation.mutants import Mutant
from oracle_guard.probes.runner import log_tail
from oracle_guard.pytest_side import barrier
from oracle_guard.repo.interpreters import tree_env
from oracle_guard.reporting.report import UsageError

# No cache state from the user's runs, no random order (the same tests in the same order on both sides).
PYTEST_ARGS = ("-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:random_order", "-q", "--tb=short")


class BudgetSpent(UsageError):
    """The budget ran out before a side's tests ran once: at the base nothing is judged (exit 2); after the
    base's mutants ran, what the base caught is left untried (a notice, probes/mutation/gate.py)."""


class TestRun(NamedTuple):
    node: str  # node id relative to the repository
    ok: bool
    why: str
    path: str  # the test's file, relative to the repository
    line: int
    seconds: float
    lines: dict[str, frozenset[int]]  # production file -> lines the test ran


class Cover(NamedTuple):
    tests: list[TestRun]
    import_lines: dict[str, frozenset[int]]
    exit_code: int
    tail: str
    root: str  # pytest's rootdir relative to the tree: server-native node ids are relative to it
    covered: bool = True  # False: pytest stopped before running the tests (a collection error, a crash)
    errors: tuple[str, ...] = ()  # what did not collect (a server told to keep going runs the rest)

    def reaching(self, path: str, span: tuple[int, int]) -> list[TestRun]:
        """Passing tests that ran a line of SPAN in PATH, in collection order."""
        wanted = range(span[0], span[1] + 1)
        return [t for t in self.tests if t.ok and any(n in t.lines.get(path, ()) for n in wanted)]


class Verdict(NamedTuple):
    verdict: str  # killed, survived, unreached, unrun, invalid
    by: str  # node id (repository-relative) of the test that failed, for killed
    why: str


class Job(NamedTuple):
    id: str
    path: str
    function: str
    def_line: int
    start: int
    end: int
    replacement: str
    tests: list[str]  # node ids relative to the repository
    timeout: float


def timeout(tests: Sequence[TestRun], generous: bool) -> float:
    """A mutant's time limit from the durations its own tests took in the traced run (a hang counts as caught).

    Tight in the first pass, where a timeout only ever removes a finding (a mutant caught at the base is
    then looked for on the new side); generous when a catch at the base is confirmed, since there a
    timeout on a loaded machine would stand for a real catch and make a finding.
    """
    spent = sum(t.seconds for t in tests)
    return max(5.0, 10 * spent + 2.0) if generous else max(1.0, 5 * spent + 0.5)


def job(mutant: Mutant, cover: Cover, key_of: Mutant, generous: bool = False) -> Job:
    tests = cover.reaching(mutant.path, mutant.span)
    return Job(
        key_of.key,
        mutant.path,
        mutant.function,
        mutant.def_line,
        mutant.start,
        mutant.end,
        mutant.replacement,
        [t.node for t in tests],
        timeout(tests, generous),
    )


def _join(root: str, path: str) -> str:
    return path if root in ("", ".") else os.path.normpath(os.path.join(root, path)).replace(os.sep, "/")


def _unjoin(root: str, node: str) -> str:
    if root in ("", "."):
        return node
    prefix = root.replace(os.sep, "/").rstrip("/") + "/"
    return node[len(prefix) :] if node.startswith(prefix) else node


POLL_SECONDS = 0.01


class Server:
    """One server process in TREE: it runs SELECTION once with the tracer, then mutant batches as they come."""

    def __init__(
        self,
        python: str,
        tree: str,
        production: Sequence[str],
        selection: Sequence[str],
        work: str,
        name: str,
        mutant: Job | None = None,
        side: str = "base",
        keep_going: bool = False,
    ) -> None:
        """SIDE: "base" for the base's tests on the base code; any other runs code of the change (barrier.py).

        KEEP_GOING: modules that do not collect are named (Cover.errors) and the rest runs; the caller judges
        whether that may be (a base's own collection error), else pytest stops at the first, as it does."""
        from oracle_guard.probes.mutation import server as _mutation_server

        self.out_path = os.path.join(work, f"{name}.jsonl")
        self.log_path = os.path.join(work, f"{name}.log")
        job_path = os.path.join(work, f"{name}.job.json")
        with open(job_path, "w", encoding="utf-8") as f:
            # With MUTANT: a fresh process whose imports see the mutated source (code that runs at import).
            fresh = {"mutant": mutant._asdict()} if mutant is not None else {}
            json.dump({"root": tree, "production": list(production), **fresh}, f)
        env = tree_env(python, tree)
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # a mutated module must never leave a .pyc behind
        cmd = [
            python,
            "-c",
            _mutation_server.RUNNER,
            os.path.abspath(_mutation_server.__file__),
            job_path,
            self.out_path,
            *PYTEST_ARGS,
            *(["--continue-on-collection-errors"] if keep_going else []),
            *selection,
        ]
        self.root = "."
        self._read = 0  # bytes of the output file parsed so far
        self._records: list[dict[str, Any]] = []
        self._batches = 0
        self.gone: int | None = None  # its exit status when it ended by itself before a batch was done
        with open(self.log_path, "wb") as log:
            try:
                self.process = barrier.Process(cmd, tree, env, log, side, stdin=subprocess.PIPE, writes=[self.out_path])
            except OSError as exc:
                raise UsageError(f"cannot run {python}: {exc.strerror or exc}") from None
        self.proc = self.process.proc

    def _poll(self) -> None:
        try:
            with open(self.out_path, "rb") as f:
                f.seek(self._read)
                data = f.read()
        except OSError:  # not yet written, or made unreadable by the tests it runs: nothing more is reported
            return
        end = data.rfind(b"\n") + 1  # only whole lines: the server may be writing the next one
        self._read += end
        for line in data[:end].splitlines():
            record = json.loads(line)
            if "rootdir" in record:
                self.root = record["rootdir"]
            else:
                self._records.append(record)

    def _until(self, done: Callable[[], bool], deadline: float) -> bool:
        """Wait until DONE holds (True), the server exits or the deadline passes (False)."""
        while True:
            self._poll()
            if done():
                return True
            if self.proc.poll() is not None:
                self._poll()
                return done()
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_SECONDS)

    def cover(self, deadline: float) -> Cover:
        covered = self._until(lambda: any("covered" in r for r in self._records), deadline)
        self.process.check_confined()  # a launcher that could not confine: the system's doing, never OG923
        if not covered:
            self.kill()
            if self.proc.returncode is None or time.monotonic() >= deadline:
                raise BudgetSpent(
                    "the mutation check ran out of its time budget (--mutate-timeout) before the tests ran once"
                )
        tests: list[TestRun] = []
        imports: dict[str, frozenset[int]] = {}
        errors: list[str] = []
        for record in self._records:
            if "collect_error" in record:
                errors.append(_join(self.root, str(record["collect_error"])))
            elif "import_lines" in record:
                imports = {k: frozenset(v) for k, v in record["import_lines"].items()}
            elif "node" in record:
                tests.append(
                    TestRun(
                        _join(self.root, record["node"]),
                        bool(record["ok"]),
                        str(record["why"]),
                        _join(self.root, record["path"]),
                        int(record["line"]),
                        float(record["seconds"]),
                        {k: frozenset(v) for k, v in record["lines"].items()},
                    )
                )
        code = self.proc.returncode if self.proc.poll() is not None else 0
        return Cover(tests, imports, code, self.tail(), self.root, covered, tuple(dict.fromkeys(errors)))

    def submit(self, jobs: Sequence[Job], deadline: float) -> int:
        """Send a batch of mutants; its number, for `verdicts`."""
        self._batches += 1
        wall = time.time() + max(0.0, deadline - time.monotonic()) - 1.0
        mutants = [{**job._asdict(), "tests": [_unjoin(self.root, n) for n in job.tests]} for job in jobs]
        line = json.dumps({"batch": self._batches, "deadline": wall, "mutants": mutants}) + "\n"
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(line.encode("utf-8"))
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # the server is gone: `verdicts` says unrun
        return self._batches

    def ready(self, batch: int) -> bool:
        self._poll()
        return any(r.get("done") == batch for r in self._records) or self.proc.poll() is not None

    def verdicts(self, batch: int, jobs: Sequence[Job], deadline: float) -> dict[str, Verdict]:
        """The verdict of each job of BATCH; `unrun` for those the server never reached."""
        finished = self._until(lambda: any(r.get("done") == batch for r in self._records), deadline)
        wanted = {job.id for job in jobs}
        found: dict[str, Verdict] = {}
        for record in self._records:
            if record.get("id") in wanted:
                by = record.get("by", "")
                found[record["id"]] = Verdict(
                    record["verdict"], _join(self.root, by) if by else "", record.get("why", "")
                )
        if not finished and self.proc.poll() is not None:
            self.gone = self.proc.returncode  # ended by itself, not by the deadline (survivors.py: OG930)
        if not finished:
            self.kill()
        why = "" if finished else self.tail()
        return {job.id: found.get(job.id, Verdict("unrun", "", why)) for job in jobs}

    def kill(self) -> None:
        self.process.kill()

    def close(self) -> None:
        """End the server: every verdict is in by now, and its exit (pytest's summary) says nothing we read."""
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        self.process.kill(quiet=False)  # what the new tests wrote where the base reads is exit 2 here

    def tail(self) -> str:
        return log_tail(self.log_path)


def work_dir(under: str) -> str:
    return tempfile.mkdtemp(prefix="mutation-", dir=under)
