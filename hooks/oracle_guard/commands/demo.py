"""`oracle-guard demo`: watch a weakened test get rejected, in a throwaway repository."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Sequence

from oracle_guard.reporting.report import guarded
from oracle_guard.rules.args import summary

HONEST = """\
import pytest

from shop.prices import parse_price


def test_parse_price():
    assert parse_price("12.50") == 1250
    assert parse_price("0.99") == 99


def test_rejects_garbage():
    with pytest.raises(ValueError, match="not a price"):
        parse_price("twelve")
"""

WEAKENED = """\
import pytest

from shop.prices import parse_price


@pytest.mark.skip(reason="flaky")  # the agent's "fix"
def test_parse_price():
    assert parse_price("12.50") == 1250
    assert parse_price("0.99") == 99


def test_rejects_garbage():
    with pytest.raises(Exception):
        parse_price("twelve")
"""


def _git(cwd: str, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="demo",
        GIT_AUTHOR_EMAIL="demo@example.com",
        GIT_COMMITTER_NAME="demo",
        GIT_COMMITTER_EMAIL="demo@example.com",
    )
    subprocess.run(("git", *args), cwd=cwd, env=env, check=True, capture_output=True)


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="oracle-guard demo", description=summary(__doc__))
    parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="oracle-guard-demo-") as tmp:
        os.makedirs(os.path.join(tmp, "tests"))
        path = os.path.join(tmp, "tests", "test_prices.py")
        with open(path, "w") as f:
            f.write(HONEST)
        _git(tmp, "init", "-q")
        _git(tmp, "add", "-A")
        _git(tmp, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "tests that pin the price parser")
        with open(path, "w") as f:
            f.write(WEAKENED)
        _git(tmp, "add", "-A")
        print("A repository with a committed test, and this staged change:\n")
        diff = subprocess.run(("git", "diff", "--cached", "--no-color"), cwd=tmp, capture_output=True, text=True).stdout
        print(textwrap.indent(diff.split("@@", 2)[-1].split("\n", 1)[-1].rstrip(), "    "))
        print("\n$ oracle-guard check   (the staged change against HEAD)\n")
        sys.stdout.flush()
        # In-process: `python -m hooks` could import a user's own `hooks/` package instead.
        from oracle_guard.commands import check

        here = os.getcwd()
        os.chdir(tmp)
        try:
            code = check.main([])
        finally:
            os.chdir(here)
    verdict = "rejected" if code == 1 else f"exit code {code}"
    print(
        f"\n-> {verdict}. In your repository: `pre-commit install` with the config in the README, or `oracle-guard check --base origin/main` in CI."
    )
    return 0 if code == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
