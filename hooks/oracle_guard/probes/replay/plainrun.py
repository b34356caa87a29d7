"""A red base's still-red tests, asked once more of runs the code cannot tell from a user's.

"Still red" is no finding: the task is not done, and the CI job's own pytest reports the red suite.
That holds only if the code behaves under the gate as it does in that pytest.  Code that tells the
gate's runs from a plain one (the gate's modules in ``sys.modules``, a scratch tree without ``.git``,
the fixed hash seed, a confined process that cannot write HOME) can keep the bug under the gate, so
the tests stay red there, and pass them in the CI job's pytest: a green suite, and a gate that said
"still red", exit 0 (tests/test_replay_plain.py).

So when base tests red at the base are still red against a change to the code, two more runs:

- **The base, plainly.**  A checkout of the base (``git worktree add``: its ``.git`` too), a plain
  ``python -m pytest`` of the whole suite in the environment the gate was started with.  The base's code
  is trusted, so this run needs no disguise.  A test that passes here was red only in the gate's trees
  (it needs the checkout's ``.git``, a writable HOME): not the task, nothing more to ask.
- **The work tree, as a user runs it**, after every other run of the replay: ``python -m pytest``, no
  argument, nothing of the gate in the process or its environment, unconfined (a confined process can
  tell that it is), in a session of its own that is killed when it ends.  Only its exit status is read,
  from outside: that is what the CI job reads too, and a code that wants that job green cannot make it
  say otherwise.

Exit 0 there, for tests that a plain ``pytest`` of the base collects and fails, is OG978: the outcome depends on whether the gate runs the code.  The
gate makes itself undumpable before (Linux), so that the unconfined run cannot reach its memory through
/proc or ptrace.  What this cannot see: code that tells the CI job's run from every other (a variable
only that job sets), and a work tree whose suite is red for another reason (docs/oracle-replay.md).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence

from oracle_guard.repo import git, interpreters
from oracle_guard.reporting.report import Finding, notice

GATE_ONLY = "ORACLE_GUARD_"  # the variables of the gate's own runs: never in a user's run of the suite
_REPORTED = re.compile(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED)\s+(\S+)", re.MULTILINE)


def user_environment() -> dict[str, str]:
    """The environment the gate was started with, without what only the gate or a pytest around it sets."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(GATE_ONLY)}
    interpreters.drop_run_vars(env)
    return env


def collected_plainly(nodes: Iterable[str], snapshot: Iterable[str]) -> list[str]:
    """The NODES a plain `pytest` collects, as the base's snapshot records them (its ids may be from a rootdir below)."""
    known = set(snapshot)
    return [n for n in nodes if n in known or any(n.endswith("/" + k) for k in known)]


def _same(node: str, reported: str) -> bool:
    return node == reported or node.endswith("/" + reported)


def _undumpable() -> None:
    """PR_SET_DUMPABLE 0: /proc/PID/mem and ptrace of the gate are closed to processes of the same user."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _run(cmd: Sequence[str], cwd: str, env: Mapping[str, str], seconds: float, output: bool) -> tuple[int | None, str]:
    """(exit status, or None when it ran past SECONDS; its output when asked), its whole session ended after."""
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(
            list(cmd),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out if output else subprocess.DEVNULL,
            stderr=subprocess.STDOUT if output else subprocess.DEVNULL,
            start_new_session=os.name == "posix",
        )
        try:
            code: int | None = process.wait(timeout=max(1.0, seconds))
        except subprocess.TimeoutExpired:
            code = None
        finally:
            if os.name == "posix":
                try:
                    os.killpg(process.pid, signal.SIGKILL)  # what it left in its session ends with it
                except OSError:
                    pass
            if process.poll() is None:
                process.kill()
                process.wait()
        out.seek(0)
        return code, out.read(1 << 20).decode("utf-8", "replace") if output else ""


def at_base_plainly(python: str, base: str, nodes: list[str], env: Mapping[str, str], deadline: float) -> list[str]:
    """Of NODES, those a plain `pytest` of a checkout of BASE collects and does not pass."""
    folder = tempfile.mkdtemp(prefix="oracle-guard-plain-base-")
    checkout = os.path.join(folder, "base")
    try:
        git.run("worktree", "add", "--detach", "-q", checkout, base)
    except git.GitError:
        shutil.rmtree(folder, ignore_errors=True)
        return []
    # The checkout's code before any installed copy (an editable install points at the work tree, the change's
    # code), as the gate's own trees have it (repo/interpreters.py tree_env); the base needs no disguise.
    front = [checkout, *([os.path.join(checkout, "src")] if os.path.isdir(os.path.join(checkout, "src")) else [])]
    env = {**env, "PYTHONPATH": os.pathsep.join([*front, *filter(None, [env.get("PYTHONPATH")])])}
    try:
        quiet = [python, "-m", "pytest"]  # pytest's cache on, as in a plain run: a test may use it
        code, out = _run([*quiet, "--collect-only", "-q"], checkout, env, deadline - time.monotonic(), True)
        collected = [line.strip() for line in out.splitlines() if "::" in line and not line.startswith(" ")]
        plain = collected_plainly(nodes, collected) if code in (0, 1, 2) else []
        if not plain:
            return []  # a plain `pytest` does not run them: the CI job's pytest says nothing of them
        # The whole suite, as the work tree's run will be: a test that passes only after others ran passes here too.
        code, out = _run([*quiet, "-rA"], checkout, env, deadline - time.monotonic(), True)
    finally:
        git.run("worktree", "remove", "--force", checkout, check=False)
        git.run("worktree", "prune", check=False)
        shutil.rmtree(folder, ignore_errors=True)
    if code is None:
        return []
    passed = [m.group(2) for m in _REPORTED.finditer(out) if m.group(1) == "PASSED"]
    return [n for n in plain if not any(_same(n, p) for p in passed)]


def corroborate(
    python: str,
    base: str,
    still_red: list[str],
    limit: float,
    deadline: float,
    where: tuple[str, int],
    base_label: str,
) -> list[Finding]:
    """OG978 when a plain run of the work tree passes where the gate's runs left STILL_RED tests failing.

    LIMIT: how long the work tree's run may take (relative to the base's time: past it, OG922); DEADLINE (a
    monotonic time): the replay's --timeout, which bounds every run here (past it, the replay's exit 2).  The
    base's runs are the base's: one that does not finish asks nothing further.
    """
    env = user_environment()
    task = at_base_plainly(python, base, still_red, env, deadline)
    if not task:
        notice(
            f"oracle-replay: the {len(still_red)} still-red test(s) are not run, or pass, in a plain run of"
            f" {base_label} ({still_red[0]}, ...): not asked of the work tree"
        )
        return []
    _undumpable()
    seconds = min(limit, deadline - time.monotonic())
    code, _ = _run([python, "-m", "pytest"], git.toplevel(), env, seconds, False)
    path, line = where
    if code is None and seconds < limit:
        raise subprocess.TimeoutExpired("python -m pytest", seconds)  # the replay's own --timeout
    if code is None:
        text = (
            f"a plain run of the work tree (`python -m pytest`, as a user runs it) did not finish in {seconds:.0f} s,"
            f" where the gate's runs ended with {task[0]} still red: fix the code"
        )
        return [Finding(path, line, 1, "OG922", text)]
    if code != 0:
        return []  # red outside the gate too: the CI job's own pytest reports it
    text = (
        f"{task[0]} fails at {base_label} (under the gate and in a plain run) and against the new code under the gate,"
        f" but a plain run of the work tree (`python -m pytest`, as a user runs it) passes: the code behaves"
        f" otherwise when the gate runs it ({len(task)} such test(s)); remove what tells the runs apart, and fix"
        " the code"
    )
    return [Finding(path, line, 1, "OG978", text)]
