"""oracle-replay: the base's tests judge the new code.

    oracle-guard replay --base origin/main

Static hooks judge how a patch is spelled; this one runs the base's version
of the tests the patch touched against the patched production code.  Two
scratch trees are exported from git (never the user's work tree): the base
revision, and the new production code with the base's test side.  The same
selection runs in both: the base versions of the test modules the change
edited or deleted, or every test when another test-side file changed (a
conftest, pytest configuration, a helper, a golden, a plugin).  A test that
passed at the base and fails, errors, skips or xfails against the new code
is a finding (re-run once on both sides first: passing both times is a
flake, reported as a notice).  A deliberate behaviour change passes with a
signed ``behavior-change <node id>`` approval.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from typing import NamedTuple

from oracle_guard import __version__
from oracle_guard.pytest_side import scratch
from oracle_guard.repo import changes
from oracle_guard.repo.interpreters import candidate_interpreters, child_env
from oracle_guard.repo.paths import DEFAULT_CONTRACT
from oracle_guard.reporting.report import EXIT_USAGE, Finding, UsageError, add_format_arg, emit, guarded, notice
from oracle_guard.rules import mutation_gate
from oracle_guard.rules.args import summary

TIMEOUT_SECONDS = 900
NO_RANDOM_ORDER = ("-p", "no:randomly", "-p", "no:random_order")
# Both sides: no cache (no --lf/--ff state from the user's runs), every module even when one
# fails to import (an import error must not hide the other tests), no stop at the first
# failure (`-x` in addopts would leave the later tests unjudged), tracebacks with `E` lines.
PYTEST_ARGS = (
    "-p",
    "no:cacheprovider",
    "-q",
    "--tb=short",
    "--continue-on-collection-errors",
    "--maxfail=0",
    "-o",
    "console_output_style=classic",
)
WEAKER = {
    "failed": "fails",
    "error": "errors",
    "skipped": "is now skipped",
    "xfailed": "now xfails",
    "xpassed": "now xpasses (was a plain pass)",
}
IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError")
GIT_REPO_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
)


class Outcome(NamedTuple):
    outcome: str
    path: str  # the test's file, relative to the repository
    line: int
    message: str


class Result(NamedTuple):
    items: dict[str, Outcome]  # node id relative to the repository -> outcome
    errors: dict[str, str]  # file relative to the repository -> first line of its collection error
    exit_code: int
    tail: str


def _join(root: str, path: str) -> str:
    return path if root in ("", ".") else os.path.normpath(os.path.join(root, path)).replace(os.sep, "/")


def _tail(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = [line.strip() for line in f if line.strip() and not set(line.strip()) <= set("=_-")]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


class _Pytest:
    """One pytest process in a scratch tree, in its own process group so a timeout ends all of it."""

    def __init__(self, python: str, tree: str, args: Sequence[str], work: str, name: str) -> None:
        from oracle_guard.pytest_side import _replay_plugin

        self.tree = tree
        self.out_path = os.path.join(work, f"{name}.tsv")
        self.log_path = os.path.join(work, f"{name}.log")
        env = child_env(python)
        env["PYTHONHASHSEED"] = "0"
        env.pop("PYTEST_ADDOPTS", None)
        env.pop("PYTEST_PLUGINS", None)  # plugins come from the tree's own configuration only
        for key in GIT_REPO_VARS:  # set inside a git hook: a test running git must not reach the user's repository
            env.pop(key, None)
        # The tree's code before any installed copy (an editable install points at the user's work tree).
        front = [os.path.join(tree, "src")] if os.path.isdir(os.path.join(tree, "src")) else []
        env["PYTHONPATH"] = os.pathsep.join([tree, *front, *filter(None, [env.get("PYTHONPATH")])])
        cmd = [python, "-c", _replay_plugin.RUNNER, os.path.abspath(_replay_plugin.__file__), self.out_path, *args]
        self.no_pytest = _replay_plugin.NO_PYTEST_EXIT
        with open(self.log_path, "wb") as log:
            try:
                self.proc = subprocess.Popen(
                    cmd,
                    cwd=tree,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=env,
                    start_new_session=os.name == "posix",
                )
            except OSError as exc:
                raise UsageError(f"cannot run {python}: {exc.strerror or exc}") from None

    def wait(self, deadline: float) -> int:
        try:
            return self.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.kill()
            raise

    def kill(self) -> None:
        if self.proc.poll() is not None:
            return
        try:
            if os.name == "posix":
                os.killpg(self.proc.pid, signal.SIGKILL)
            else:  # pragma: no cover
                self.proc.kill()
        except ProcessLookupError:
            pass
        self.proc.wait()

    def result(self) -> Result:
        items: dict[str, Outcome] = {}
        errors: dict[str, str] = {}
        root = "."
        try:
            with open(self.out_path, encoding="utf-8") as f:
                for line in f:
                    parts = line.rstrip("\n").split("\t")
                    if parts[0] == "rootdir":
                        root = parts[1]
                    elif parts[0] == "item" and len(parts) >= 6:
                        outcome, path, number, node, message = (
                            parts[1],
                            parts[2],
                            parts[3],
                            parts[4],
                            "\t".join(parts[5:]),
                        )
                        items[_join(root, node)] = Outcome(outcome, _join(root, path), int(number or 1), message)
                    elif parts[0] == "error" and len(parts) >= 3:
                        errors[_join(root, parts[1])] = "\t".join(parts[2:])
        except FileNotFoundError:
            pass
        return Result(items, errors, self.proc.returncode, _tail(self.log_path))


def _run(
    python: str, trees: dict[str, str], args: Sequence[str], jobs: int, deadline: float, work: str, tag: str
) -> dict[str, Result]:
    """The same pytest ARGS in each tree; two at once when JOBS allows."""
    results: dict[str, Result] = {}
    pending: list[tuple[str, _Pytest]] = []
    try:
        for name, tree in trees.items():
            if len(pending) >= jobs:
                done_name, done = pending.pop(0)
                done.wait(deadline)
                results[done_name] = done.result()
            pending.append((name, _Pytest(python, tree, args, work, f"{tag}-{name}")))
        for name, run in pending:
            run.wait(deadline)
            results[name] = run.result()
        pending = []
    finally:
        for _, run in pending:
            run.kill()
    return results


def _unicode_cache() -> str:
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(home, "oracle-guard", "hypothesis", "unicode_data")


def _seed_hypothesis_cache(trees: Sequence[str]) -> None:
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


def _keep_hypothesis_cache(tree: str) -> None:
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


def _jobs(requested: int) -> int:
    if requested:
        return max(1, min(2, requested))
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - Windows
        load = 0.0
    return 2 if cores - load >= 2 else 1


def _run_somewhere(
    explicit: str | None, trees: dict[str, str], args: list[str], jobs: int, deadline: float, work: str
) -> tuple[str, str, dict[str, Result], list[str]]:
    """The first candidate interpreter with pytest runs both sides: (python, origin, results, args)."""
    candidates = candidate_interpreters(explicit, dict(os.environ))
    if not candidates:
        raise UsageError("found no Python interpreter for this project; pass --python PATH")
    tried = []
    for python, origin in candidates:
        run_args = [*PYTEST_ARGS, *NO_RANDOM_ORDER, *args]
        results = _run(python, trees, run_args, jobs, deadline, work, "run")
        codes = {r.exit_code for r in results.values()}
        if 4 in codes and any("random" in r.tail and "unrecognized" in r.tail for r in results.values()):
            # the project's addopts needs a random-order plugin's options: keep the plugin, fixed by its seed option
            run_args = [*PYTEST_ARGS, *args]
            results = _run(python, trees, run_args, jobs, deadline, work, "run")
            codes = {r.exit_code for r in results.values()}
        if any(code == _no_pytest() for code in codes):
            tried.append(f"{python} ({origin})")
            continue
        return python, origin, results, run_args[: len(run_args) - len(args)]
    raise UsageError(
        f"pytest is not installed in {', '.join(tried)}; install it there or pass --python PATH to the project's interpreter"
    )


def _no_pytest() -> int:
    from oracle_guard.pytest_side import _replay_plugin

    return _replay_plugin.NO_PYTEST_EXIT


def _statement(node: str) -> str:
    return f"behavior-change {node}"


def judge(base: Result, new: Result, base_label: str) -> list[tuple[str, Finding]]:
    """(node id, finding) for every test that passed at the base and does not pass on the new code."""
    found = []
    for node, before in base.items.items():
        if before.outcome != "passed":
            continue  # a base failure or skip was never an oracle
        after = new.items.get(node)
        if after is not None and after.outcome == "passed":
            continue
        command = f"`oracle-guard approve {_statement(node)}`"
        if after is None:
            error = new.errors.get(before.path)
            if error is not None and error.split(":", 1)[0].strip().rsplit(".", 1)[-1] in IMPORT_ERRORS:
                text = f"the base's test cannot import the new code: `{error}` ({node}); restore the name, or approve the change: {command}"
                code = "OG903"
            elif error is not None:
                text = f"the base's test no longer collects against the new code: `{error}` ({node}); fix the code, or approve the change: {command}"
                code = "OG903"
            else:
                text = f"{node} passed at {base_label} and is not collected against the new code (an id built from production values?); restore it, or approve the change: {command}"
                code = "OG905"
        else:
            code = "OG901" if after.outcome in ("failed", "error") else "OG902"
            why = f": {after.message}" if after.message else ""
            text = f"{node} passed at {base_label} and {WEAKER.get(after.outcome, after.outcome)} against the new code{why}; the change alters behaviour the base's test pins: fix the code, or approve the change: {command}"
        found.append((node, Finding(before.path, before.line, 1, code, text)))
    return found


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="oracle-replay", description=summary(__doc__))
    parser.add_argument("filenames", nargs="*", help="ignored: the hook asks git what changed")
    changes.add_base_args(parser)
    parser.add_argument(
        "--contract", default=DEFAULT_CONTRACT, metavar="PATH", help=f"the contract file (default: {DEFAULT_CONTRACT})"
    )
    parser.add_argument(
        "--python",
        metavar="PATH",
        help="the project's interpreter (default: active virtualenv, ./.venv, ./venv, first python3 on PATH)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=TIMEOUT_SECONDS,
        metavar="SECONDS",
        help=f"wall-clock limit for the whole replay (default: {TIMEOUT_SECONDS})",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=0,
        metavar="N",
        help="pytest processes at once, 1 or 2 (default: 2 when two cores are free)",
    )
    add_format_arg(parser)
    mutation_gate.add_args(parser)
    parser.add_argument("--version", action="version", version=f"%(prog)s (oracle-guard) {__version__}")
    return parser


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code = replay(args)
    if not args.mutate:
        return code
    mutated = mutation_gate.main_for(args)  # rules/mutation_gate.py: the mutation differential
    return EXIT_USAGE if EXIT_USAGE in (code, mutated) else max(code, mutated)


def replay(args: argparse.Namespace) -> int:
    """The replay for parsed options (`check --replay` fills in its own base, contract and format)."""
    started = time.monotonic()
    deadline = started + args.timeout
    changes.enter_repo([])
    change_set = changes.resolve(args)
    if change_set.base is None:
        notice("oracle-replay: nothing to replay: there is no base revision yet")
        return 0
    from oracle_guard.contract import contract

    base_contract = contract.at_base(change_set.base, args.contract)
    side = scratch.TestSide(change_set.base, args.contract, base_contract)
    the_plan = scratch.plan(change_set, side)
    if not the_plan.production or not the_plan.test_side:
        what = (
            "only the test side"
            if the_plan.test_side
            else "only production code"
            if the_plan.production
            else "nothing pytest reads"
        )
        notice(f"oracle-replay: nothing to replay: the change touches {what}")
        return 0
    if not the_plan.modules and not the_plan.everything:
        notice("oracle-replay: nothing to replay: the change adds tests but changes none the base had")
        return 0
    selection = [] if the_plan.everything else the_plan.modules
    try:
        return _replay(args, change_set, the_plan, selection, deadline, started)
    except subprocess.TimeoutExpired:
        raise UsageError(
            f"the replay took over {args.timeout:g} s (--timeout) and was stopped; nothing was judged"
        ) from None


def _replay(
    args: argparse.Namespace,
    change_set: changes.ChangeSet,
    the_plan: scratch.Plan,
    selection: list[str],
    deadline: float,
    started: float,
) -> int:
    jobs = _jobs(args.jobs)
    tree = scratch.Scratch()
    work = tempfile.mkdtemp(prefix="logs-", dir=tree.root)
    try:
        tree.build(change_set, the_plan)
        trees = {"base": tree.base, "new": tree.new}
        _seed_hypothesis_cache(list(trees.values()))
        python, origin, results, fixed = _run_somewhere(args.python, trees, selection, jobs, deadline, work)
        _keep_hypothesis_cache(tree.base)
        base, new = results["base"], results["new"]
        scope = (
            f"{len(selection)} changed test module(s)"
            if selection
            else f"every test ({', '.join(the_plan.widening[:3])} changed)"
        )
        passed = sum(1 for o in base.items.values() if o.outcome == "passed")
        notice(
            f"oracle-replay: {python} ({origin}) ran {scope}: {passed} passed at {change_set.base_label}, in {time.monotonic() - started:.1f} s"
        )
        if not passed and (
            base.exit_code not in (0, 1, 5)
            or base.errors
            or any(o.outcome in ("failed", "error") for o in base.items.values())
        ):
            # Nothing passed at the base: there is no oracle to compare with, and a silent pass would lie.
            first = (
                next(iter(base.errors.values()), "")
                or next((o.message for o in base.items.values() if o.message), "")
                or base.tail
                or "no output"
            )
            raise UsageError(
                f"no selected test passes at {change_set.base_label} in {python} (pytest exited {base.exit_code}: {first}); is the project installed in that interpreter?"
            )
        findings: list[tuple[str, Finding]] = []
        if new.exit_code not in (0, 1, 2, 5) and passed and not new.items:
            where = selection[0] if selection else "."
            return emit(
                [
                    Finding(
                        where,
                        1,
                        1,
                        "OG904",
                        f"pytest cannot run the base's tests against the new code (exit {new.exit_code}): {new.tail or 'no output'}; fix the change",
                    )
                ],
                args.format,
            )
        suspects = judge(base, new, change_set.base_label)
        if suspects:
            again = _run(python, trees, [*fixed, *sorted({n for n, _ in suspects})], jobs, deadline, work, "rerun")
            for node, finding in suspects:
                twice = [again[s].items.get(node) for s in ("base", "new")]
                if all(o is not None and o.outcome == "passed" for o in twice):
                    notice(
                        f"oracle-replay: flaky on replay: {node} failed against the new code once, then passed on both sides"
                    )
                    continue
                findings.append((node, finding))
        return emit(_unapproved(change_set, args.contract, findings) if findings else [], args.format)
    finally:
        tree.cleanup()


def _unapproved(
    change_set: changes.ChangeSet, contract_path: str, findings: list[tuple[str, Finding]]
) -> list[Finding]:
    from oracle_guard.contract import contract
    from oracle_guard.contract.approvals import Approvals, canonical

    approvals = Approvals.load(
        change_set,
        contract.at_base(change_set.base, contract_path),
        contract.at_new(change_set.target, contract_path),
    )
    kept = []
    for node, finding in findings:
        if approvals.covers(_statement(node)):
            notice(f"oracle-replay: approved behaviour change: {node}")
            continue
        if approvals.allowed_signers is None or canonical(_statement(node)) in approvals.candidates:
            finding = finding._replace(message=f"{finding.message} ({approvals.explain(_statement(node))})")
        kept.append(finding)
    return kept


if __name__ == "__main__":
    raise SystemExit(main())
