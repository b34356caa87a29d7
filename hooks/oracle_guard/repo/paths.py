"""Names every hook agrees on: where the contract lives, what a test file is.

Spelled once here (tests/test_architecture.py checks it), standard library
only: the hooks that never load the contract must not pay for PyYAML, and
the pytest plugin's entry point imports this too.
"""

from __future__ import annotations

import posixpath
import re

DEFAULT_CONTRACT = "tests/agent_contract.yaml"

# Here, not in repo/changes.py (which re-exports them): the contract's reader needs them, and the pytest
# plugin loads that reader in every gated test run without git's helpers.
MAX_FILE_BYTES = 16 * 1024 * 1024  # a checked file's limit, unless the base contract's max_file_bytes raises it
MAX_FILE_BYTES_SETTING = 1024 * 1024 * 1024  # the most max_file_bytes may say: a hook holds the file in memory

# What a test file is: pre-commit's `files:` of the Python hooks in .pre-commit-hooks.yaml and this
# repository's .pre-commit-config.yaml (tests/test_architecture.py pins both to this string).
TEST_FILES_PATTERN = r"(^|/)(tests?|testing)/|(^|/)(test_[^/]*|[^/]*_tests?|conftest)\.pyi?$"
TEST_FILES = re.compile(TEST_FILES_PATTERN)

# Python source and stub files, for str.endswith.
PYTHON_SUFFIXES = (".py", ".pyi")


def folders_above(path: str) -> list[str]:
    """The folders holding PATH, nearest first: ``a/b/c.py`` -> ``["a/b", "a"]``.

    One step per component of PATH, so it ends on any input: a ``dirname`` loop
    never leaves ``/`` or ``//`` (an absolute path from a malformed contract).
    """
    parts = path.split("/")[:-1]
    folders = ("/".join(parts[:i]).rstrip("/") for i in range(len(parts), 0, -1))
    return list(dict.fromkeys(folder for folder in folders if folder))


def conftests_above(path: str) -> list[str]:
    """The conftest.py files that apply to PATH (a repository-relative file), nearest first."""
    return [posixpath.join(folder, "conftest.py") for folder in folders_above(path)] + ["conftest.py"]
