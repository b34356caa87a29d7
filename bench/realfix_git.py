"""Git and pytest plumbing shared by bench/realfix.py and bench/realfix_mine.py.

A fix is a commit that changes production code and test code; its red base is
the parent with the fix's test files (and its text files holding doctest
examples) laid over it (committed on a scratch branch), its honest patch the
fix's production files laid over the red base.
Nothing here writes outside the scratch clone it is given.
"""

from __future__ import annotations

import os
import re
import subprocess

from bench_git import GIT_ENV  # bench/ is the script's folder: first on sys.path

IDENTITY = ["-c", "user.name=realfix", "-c", "user.email=realfix@bench", "-c", "commit.gpgsign=false"]
TEST_FILE = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$|_test\.py$|(^|/)conftest\.py$")
NOT_PRODUCTION = re.compile(r"^(docs?|benchmarks?|perf|scripts|bin|dev|examples?|extra|tools)/|(^|/)setup\.py$|noxfile")
SUMMARY = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S.*?)(?: - .*)?$")


def git(repo: str, *args: str, check: bool = True) -> str:
    proc = subprocess.run(
        ["git", "-C", repo, *IDENTITY, *args], capture_output=True, text=True, env={**os.environ, **GIT_ENV}
    )
    if check and proc.returncode:
        raise RuntimeError(f"git {' '.join(args)}: {proc.stderr.strip()[:300]}")
    return proc.stdout


def changed(repo: str, commit: str) -> list[tuple[str, str]]:
    """(status, path) of each file COMMIT changes against its first parent (renames as delete + add)."""
    out = git(repo, "diff", "--no-renames", "--name-status", f"{commit}^", commit)
    return [(line[0], line.split("\t", 1)[1]) for line in out.splitlines() if "\t" in line]


def is_test(path: str) -> bool:
    return path.endswith(".py") and bool(TEST_FILE.search(path))


def is_production(path: str) -> bool:
    return path.endswith(".py") and not is_test(path) and not NOT_PRODUCTION.search(path)


def lay_over(repo: str, commit: str, files: list[tuple[str, str]]) -> None:
    """Make the work tree's FILES what they are at COMMIT (deleted ones removed)."""
    for status, path in files:
        if status == "D":
            git(repo, "rm", "-q", "--ignore-unmatch", "--", path)
        else:
            git(repo, "checkout", commit, "--", path)


def commit_all(repo: str, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "--no-verify", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def red_base(repo: str, fix: str, branch: str) -> str:
    """Check out a scratch branch at FIX^ plus FIX's test files; return its commit."""
    git(repo, "checkout", "-q", "-f", "-B", branch, f"{fix}^")
    git(repo, "clean", "-qfdx")
    lay_over(repo, fix, [f for f in changed(repo, fix) if is_test(f[1]) or doctest_text(repo, fix, f)])
    return commit_all(repo, f"realfix red base: {fix[:10]}^ with its test changes")


def doctest_text(repo: str, fix: str, change: tuple[str, str]) -> bool:
    """A text file (not Python) FIX leaves with doctest examples: a test when the project collects it
    (`--doctest-glob`), so it is the red base's, as semver's docs/usage/*.rst are."""
    status, path = change
    if path.endswith(".py") or status == "D":
        return False
    return b">>>" in subprocess.run(["git", "-C", repo, "show", f"{fix}:{path}"], capture_output=True).stdout


def honest_files(repo: str, fix: str) -> list[tuple[str, str]]:
    return [f for f in changed(repo, fix) if is_production(f[1])]


def run_pytest(repo: str, python: str, args: list[str], timeout: float = 180) -> dict[str, str]:
    """Outcome of each test id of a plain `python -m pytest ARGS` run in REPO ({} when pytest did not run)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "VIRTUAL_ENV")}
    src = os.path.join(repo, "src")
    env["PYTHONPATH"] = os.pathsep.join([repo, src] if os.path.isdir(src) else [repo])
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    cmd = [python, "-m", "pytest", "-rA", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *args]
    try:
        proc = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {}
    outcomes: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        found = SUMMARY.match(line)
        if found and "::" in found.group(2):
            outcomes[found.group(2)] = found.group(1)
    return outcomes
