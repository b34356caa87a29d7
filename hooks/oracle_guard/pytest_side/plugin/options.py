"""The gate's options as the user gave them, against what a conftest or plugin set from code.

Read by the entry point when the gate switches on and by the watch at the end
of the session; a module of its own so neither imports the other.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for annotations only
    import pytest


def _argument_tokens(config: pytest.Config) -> list[str]:
    """What the user and the project asked for: the command line, PYTEST_ADDOPTS and addopts."""
    import shlex

    tokens = [str(t) for t in config.getini("addopts")]  # pytest's order: the last one wins
    try:
        tokens += shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
    except ValueError:
        pass
    return tokens + [str(t) for t in config.invocation_params.args]


def _option_value(tokens: list[str], option: str) -> str | None:
    value = None
    for index, token in enumerate(tokens):
        if token == option and index + 1 < len(tokens):
            value = tokens[index + 1]
        elif token.startswith(option + "="):
            value = token[len(option) + 1 :]
    return value


def tampered_options(config: pytest.Config) -> list[str]:
    """Gate options whose value did not come from the command line or the configuration."""
    tokens = _argument_tokens(config)
    found = []
    flags = {
        "oracle_guard_allow_skips": ["--oracle-guard-allow-skips"],
        "collectonly": ["--co", "--collect-only", "--collectonly"],
    }
    for dest, spellings in flags.items():
        if config.getoption(dest) and not any(s in tokens for s in spellings):
            found.append(spellings[-1])
    if "--oracle-guard" in tokens and not config.getoption("oracle_guard"):
        found.append("--oracle-guard")
    for dest, option in (
        ("oracle_guard_contract", "--oracle-guard-contract"),
        ("oracle_guard_now", "--oracle-guard-now"),
    ):
        if config.getoption(dest) != _option_value(tokens, option):
            found.append(option)
    return found
