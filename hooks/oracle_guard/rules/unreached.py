"""Whether the test run can execute a file at all: a script beside the tests (a profiling or release script in
`tests/`) that ends its own process is no cheat when no test, conftest or plugin imports or names it.

Read by behaviour, not by folder: the file is reached when pytest would collect it (the project's python_files,
on either side's configuration, or doctests collected from modules), when a configuration file names it (`-p`),
or when the import closure of any test module or conftest holds it (analysis/reach.py: imports, string
constants naming the file or module, and a computed import, which can load anything). What cannot be read is
reached (fail closed).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from oracle_guard.analysis import reach
from oracle_guard.pytest_side.config import compare as pytest_config
from oracle_guard.repo import changes
from oracle_guard.reporting.report import UsageError

CONFIGS = frozenset(pytest_config.CONFIG_FILES)


def unreached(path: str, files: Mapping[str, bytes | None], base_configs: Mapping[str, bytes | None]) -> bool:
    """Whether no test run of the new tree (FILES: every Python and configuration file there) can run PATH."""
    if not path.endswith(".py") or files.get(path) is None:
        return False
    name = posixpath.basename(path)
    stem = name.removesuffix(".py")
    if name in ("conftest.py", "__init__.py", "__main__.py") or stem in reach.STARTUP_MODULES:
        return False
    patterns: list[str] = []
    roots: list[str] = []
    for configs in (base_configs, {n: files.get(n) for n in CONFIGS}):
        try:
            settings = pytest_config.settings_of(dict(configs))
        except UsageError:
            return False
        if any("doctest" in option for option in settings.addopts):
            return False  # doctests collected from modules: every module is imported
        patterns += settings.ini.get("python_files", list(reach.DEFAULT_TEST_FILES))
        roots += settings.ini.get("pythonpath", [])
    if any(stem.encode() in (files.get(n) or b"") for n in (*CONFIGS, "setup.py")):
        return False  # a configuration or the packaging names it (`-p module`, a pytest11 entry point)
    if reach.is_test_module(path, patterns):
        return False
    python = {p: d for p, d in files.items() if p.endswith(".py")}
    project = reach.Project(python, roots=("", "src", *roots))
    reached = project.reaching([path])
    loaded = [p for p in python if posixpath.basename(p) == "conftest.py" or reach.is_test_module(p, patterns)]
    return not any(p in reached for p in loaded if p != path)


class NewTree:
    """The new tree's Python, configuration and packaging files of one change set, read once, when first asked."""

    def __init__(self, change_set: changes.ChangeSet, base_files: list[str]) -> None:
        self.change_set, self.base_files = change_set, base_files
        self._files: dict[str, bytes | None] | None = None

    def unreached(self, path: str) -> bool:
        if self._files is None:
            change_set = self.change_set
            gone = {c.old_path for c in change_set.changes if c.old_path and c.old_path != c.path}
            names = [p for p in {*self.base_files, *change_set.changed_paths} if p not in gone]
            wanted = [p for p in names if p.endswith(".py") or p in CONFIGS or p == "setup.py"]
            new = set(change_set.changed_paths)
            self._files = {
                **change_set.read_base([p for p in wanted if p not in new]),
                **change_set.read_new([p for p in wanted if p in new]),
            }
        base_configs = self.change_set.read_base(sorted(CONFIGS))
        return unreached(path, self._files, base_configs)
