"""The pytest settings of one revision, as read from its configuration files (pytest_config compares them).

A module of its own so the readers of other tools' tables (switches.py) share
the TOML reader and the Settings type without importing the comparison.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Settings:
    """The pytest settings of one revision that decide what is collected."""

    source: str = ""
    ini: dict[str, list[str]] = field(default_factory=dict)
    addopts: list[str] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)  # key -> line, for findings

    def set(self, key: str, values: list[str], text: str) -> None:
        if key == "addopts":
            self.addopts = values
        else:
            self.ini[key] = values
        self.lines[key] = line_of(text, key)


def line_of(text: str, needle: str) -> int:
    for number, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return number
    return 1


def load_toml(text: str) -> dict[str, Any]:  # TOML values: any of its types
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.9/3.10 only
        import tomli as tomllib
    return tomllib.loads(text)
