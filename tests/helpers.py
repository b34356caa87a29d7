"""What the tests share: a real git repository, one way to run a hook, and an in-memory change set.

- ``Repo``: a throwaway git repository (real git, never mocked) to write, stage and commit in.
- ``hook(main, *argv)``: run a hook's ``main()`` in the current folder as pre-commit would, and
  return a ``Result`` (exit code, stdout, stderr and the OG codes in the output).
- ``MemoryChangeSet`` and ``memory_check``: a change whose two sides are held in memory, judged by a
  hook's ``check(ctx)``.  A rule table that needs no git history runs on it: one git repository per
  row would make those tables minutes long.  Real-git and real-pre-commit tests stay for the rest.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, NamedTuple

from oracle_guard.repo import git
from oracle_guard.repo.changes import ChangeSet
from oracle_guard.repo.context import HookContext
from oracle_guard.reporting import report
from oracle_guard.reporting.report import Finding
from oracle_guard.rules import args as hook_args

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}
NOW = datetime(2026, 12, 2, tzinfo=timezone.utc)
CODE = re.compile(r"\bOG\d{3}\b")


class Result(NamedTuple):
    code: int
    out: str
    err: str
    codes: list[str]  # the OG codes in stdout then stderr, in order of appearance

    @property
    def said(self) -> tuple[int, str]:
        """The exit code and everything printed (stdout, then stderr)."""
        return self.code, self.out + self.err


def result(code: int, out: str, err: str) -> Result:
    return Result(code, out, err, CODE.findall(out) + CODE.findall(err))


@contextlib.contextmanager
def _captured() -> Iterator[tuple[io.StringIO, io.StringIO]]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        yield out, err


def hook(main: Callable[..., int], *argv: str) -> Result:
    """Run a hook's main(ARGV) in the current folder; what it printed is captured here, not by pytest."""
    with _captured() as (out, err):
        code = main(list(argv))
    return result(code, out.getvalue(), err.getvalue())


_FINDING_LINE = re.compile(r"^[^\s:][^:]*:\d+:\d+: OG\d{3} ")


def finding_codes(out: str) -> list[str]:
    """The codes of the finding lines of a text run, in order; the run's count line must count exactly them.

    Unlike ``finding_lines``, notices may stand between them (a run that names its ground, a flaky flip).
    """
    found = [line.split()[1] for line in out.splitlines() if _FINDING_LINE.match(line)]
    counted = re.search(r"^oracle-guard: (\d+) findings? \(", out, re.M)
    assert counted and int(counted.group(1)) == len(found), out
    return found


def finding_lines(out: str) -> list[str]:
    """The finding lines of a text run of `check` (any layer) or the one hook, checked to add up.

    Each finding is followed by its `next:` line, the output ends with their count, and nothing else is on
    stdout (no group of six alike expected).
    """
    lines = out.splitlines()
    found = [line for line in lines if _FINDING_LINE.match(line)]
    for n, line in enumerate(lines[:-1]):
        if _FINDING_LINE.match(line):
            assert lines[n + 1].startswith("    next: "), f"no next: line under {line!r}"
    assert found and re.match(rf"oracle-guard: {len(found)} findings? \(", lines[-1]), out
    assert len(lines) == 2 * len(found) + 1, out
    return found


class Repo:
    """A throwaway git repository with helpers to write, stage and commit."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def git(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(("git", *args), cwd=self.path, capture_output=True, text=True)
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout

    def write(self, rel: str, content: str | bytes, dedent: bool = True) -> Path:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(textwrap.dedent(content) if dedent else content, encoding="utf-8")
        return target

    def remove(self, rel: str) -> None:
        self.git("rm", "-q", rel)

    def stage(self, *paths: str) -> None:
        self.git("add", "-A", *(paths or ("--",)))

    def commit(self, message: str = "change") -> str:
        self.stage()
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD").strip()

    def change(self, before: Mapping[str, str], after: Mapping[str, str | None]) -> list[str]:
        """Commit BEFORE, then stage AFTER (None deletes); the paths still there."""
        for path, text in before.items():
            self.write(path, text)
        self.commit("base")
        for path, new_text in after.items():
            if new_text is None:
                self.remove(path)
            else:
                self.write(path, new_text)
        self.stage()
        return [p for p, t in after.items() if t is not None]

    @contextlib.contextmanager
    def cwd(self) -> Iterator[None]:
        old = os.getcwd()
        os.chdir(self.path)
        try:
            yield
        finally:
            os.chdir(old)

    def run(self, main: Callable[..., int], *argv: str) -> int:
        """Run a hook's main() in this repository, as pre-commit would (output left to pytest's capture)."""
        with self.cwd():
            return main(list(argv))

    def hook(self, main: Callable[..., int], *argv: str) -> Result:
        """hook(MAIN, *ARGV) in this repository."""
        with self.cwd():
            return hook(main, *argv)

    def staged_hook(self, main: Callable[..., int], *argv: str) -> Result:
        """Stage everything, then hook(MAIN, *ARGV) in this repository."""
        self.stage()
        return self.hook(main, *argv)

    def judge_change(
        self,
        main: Callable[..., int],
        before: Mapping[str, str],
        after: Mapping[str, str | None],
        *argv: str,
        suffix: str = "",
    ) -> Result:
        """Commit BEFORE, stage AFTER, run MAIN on ARGV and the staged files ending in SUFFIX (pre-commit's `types`)."""
        files = [p for p in self.change(before, after) if p.endswith(suffix)]
        return self.hook(main, *argv, *files)


def _bytes(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode()


class MemoryChangeSet(ChangeSet):
    """A change whose base and new trees are given, not read from git.

    BEFORE is the base tree; AFTER changes it (None deletes a file).  Every
    path of AFTER is added or modified or deleted; there are no renames (git
    would pair a similar deleted and added file), so a table that needs
    git's rename detection stays on a real repository.
    """

    def __init__(self, before: Mapping[str, str | bytes], after: Mapping[str, str | bytes | None]) -> None:
        changes = []
        for path, data in after.items():
            if data is None:
                changes.append(git.Change("D", None, path))
            else:
                changes.append(git.Change("M" if path in before else "A", path, path if path in before else None))
        super().__init__("0" * 40, "base", None, changes)
        self.base_tree = {p: _bytes(d) for p, d in before.items()}
        self.new_tree = dict(self.base_tree)
        for path, data in after.items():
            if data is None:
                self.new_tree.pop(path, None)
            else:
                self.new_tree[path] = _bytes(data)

    def read_base(self, paths: list[str]) -> dict[str, bytes | None]:
        return {p: self.base_tree.get(p) for p in paths}

    def read_contract_base(self, path: str, reader: Callable[[str | None, str], bytes | None]) -> bytes | None:
        return self.read_base([path]).get(path)  # no tree to ask for the mode: the bytes are the contract

    def read_new(self, paths: list[str]) -> dict[str, bytes | None]:
        return {p: self.new_tree.get(p) for p in paths}


def python_files(after: Mapping[str, str | bytes | None]) -> list[str]:
    """The paths of AFTER pre-commit passes to a `types: [python]` hook: the Python files still there."""
    return [p for p, data in after.items() if data is not None and p.endswith(".py")]


def memory_check(
    check: Callable[[HookContext], list[Finding]],
    before: Mapping[str, str | bytes],
    after: Mapping[str, str | bytes | None],
    files: Sequence[str] | None = None,
    *,
    now: datetime = NOW,
    fmt: str = "text",
    contract: str = hook_args.DEFAULT_CONTRACT,
    prog: str = "",
    **options: Any,
) -> Result:
    """Judge the change BEFORE -> AFTER with a hook's CHECK, printed the way its main() prints.

    FILES are the names pre-commit would pass (default: every path of AFTER that is not deleted).
    It runs in an empty folder, so nothing of this checkout (its contract, its approvals) is read.
    """
    change_set = MemoryChangeSet(before, after)
    names = tuple(files if files is not None else [p for p, d in after.items() if d is not None])
    ctx = HookContext(change_set, names, contract, now, fmt, [], options)

    @report.guarded
    def main(argv: Sequence[str] | None = None) -> int:
        report.use_format(fmt)
        return hook_args.finish(ctx, check(ctx), prog)

    old = os.getcwd()
    with tempfile.TemporaryDirectory() as empty:
        os.chdir(empty)
        try:
            return hook(main)
        finally:
            os.chdir(old)


def project_python(monkeypatch: Any, cache_home: Path) -> None:
    """The gate's runs use this interpreter, an XDG cache of the test's own, no gate cache, no options from the shell."""
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home))
    monkeypatch.setenv("ORACLE_GUARD_CACHE", "off")
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
