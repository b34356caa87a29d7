"""Names every hook agrees on: where the contract lives, what a test file is.

Spelled once here (tests/test_architecture.py checks it), standard library
only: the hooks that never load the contract must not pay for PyYAML, and
the pytest plugin's entry point imports this too.
"""

from __future__ import annotations

import posixpath
import re

DEFAULT_CONTRACT = "tests/agent_contract.yaml"

# What a test file is: pre-commit's `files:` of the Python hooks in .pre-commit-hooks.yaml and this
# repository's .pre-commit-config.yaml (tests/test_architecture.py pins both to this string).
TEST_FILES_PATTERN = r"(^|/)(tests?|testing)/|(^|/)(test_[^/]*|[^/]*_tests?|conftest)\.pyi?$"
TEST_FILES = re.compile(TEST_FILES_PATTERN)

# Python source and stub files, for str.endswith.
PYTHON_SUFFIXES = (".py", ".pyi")


def conftests_above(path: str) -> list[str]:
    """The conftest.py files that apply to PATH (a repository-relative file), nearest first."""
    found = []
    folder = posixpath.dirname(path)
    while True:
        found.append(posixpath.join(folder, "conftest.py") if folder else "conftest.py")
        if not folder:
            return found
        folder = posixpath.dirname(folder)
