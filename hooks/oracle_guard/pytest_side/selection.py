"""The base tests a replay runs: the changed test modules and those that reach the changed code.

``select(change_set, plan, side)`` is the one place that decides it (the
replay and the probes built on it call it): the base versions of the test
modules the change edited, moved or deleted, plus, when production code
changed, every base test module whose imports reach a changed production
module (analysis/reach.py).  A changed file that is not Python counts as a
change of the Python files that could read it: the modules of the package it
lies in (package data) and every Python file that names it; a test that
reaches none of them cannot read it.  A pytest plugin (``pytest11``) is loaded
by every test: a change inside its entry module's import closure runs every
test, one outside it only the tests that reach it.  Every test runs when that
cannot be decided: another test-side file changed, doctests are collected from
modules, a plugin entry point that does not resolve, a file run at interpreter
start, a new top-level module.
"""

from __future__ import annotations

import os
import posixpath
import re
from typing import NamedTuple

from oracle_guard.analysis import reach
from oracle_guard.analysis.testaware import startup
from oracle_guard.pytest_side import scratch
from oracle_guard.pytest_side.config import compare as pytest_config
from oracle_guard.repo import changes, git
from oracle_guard.repo.paths import folders_above
from oracle_guard.reporting.report import UsageError

PACKAGING = ("pyproject.toml", "setup.cfg", "setup.py")
# Files whose change runs code at interpreter start, whatever imports it.
STARTUP_SUFFIXES = (".pth",)


class Selection(NamedTuple):
    modules: tuple[str, ...]  # base test modules to run (empty when everything runs)
    everything: bool  # run pytest's own selection of every test
    changed: tuple[str, ...]  # of MODULES, those the change edited, moved or deleted
    reasons: tuple[str, ...]  # why everything runs, or which files could not be decided

    @property
    def empty(self) -> bool:
        return not self.everything and not self.modules


def select(change_set: changes.ChangeSet, the_plan: scratch.Plan, side: scratch.TestSide) -> Selection:
    changed = tuple(the_plan.modules)
    if the_plan.everything:
        return Selection((), True, changed, tuple(f"{p} changed" for p in the_plan.widening))
    if not the_plan.production or change_set.base is None:
        return Selection(changed, False, changed, ())
    listed = git.run("ls-tree", "-r", "-z", "--name-only", change_set.base)
    names = [os.fsdecode(n) for n in listed.split(b"\0") if n]
    wanted = [n for n in names if n.endswith(".py") or n in pytest_config.CONFIG_FILES or n in PACKAGING]
    blobs = git.read_blobs(change_set.base, wanted)
    try:
        settings = pytest_config.settings_of({n: blobs.get(n) for n in pytest_config.CONFIG_FILES})
    except UsageError as exc:
        return Selection((), True, changed, (f"the base's pytest configuration cannot be read ({exc})",))
    packaging = {n: blobs.get(n) for n in PACKAGING}
    python = {n: d for n, d in blobs.items() if n.endswith(".py")}
    production = [*the_plan.write, *the_plan.remove]
    reasons = _whole_run_reasons(settings, production)
    if reasons:
        return Selection((), True, changed, tuple(reasons))
    project = reach.Project(
        python,
        roots=("", "src", *settings.ini.get("pythonpath", [])),
        entry_points=re.search(
            rb"entry_points|entry-points|\[project\.scripts\]|console_scripts",
            b"\n".join(d or b"" for d in packaging.values()),
        )
        is not None,
    )
    plugins = _plugin_entries(packaging, project)
    if plugins is None:
        return Selection(
            (), True, changed, ("the project is a pytest plugin (pytest11) whose entry module does not resolve",)
        )
    tests = [
        n
        for n in python
        if reach.is_test_module(
            n,
            settings.ini.get("python_files", list(reach.DEFAULT_TEST_FILES)),
            settings.ini.get("testpaths", []),
        )
    ]
    readers = _readers([p for p in production if not p.endswith(".py")], python, set(names))
    targets = [*[p for p in production if p.endswith(".py")], *readers]
    if not targets:
        # No Python file could read what changed: a computed import (which can load any module) loads no reader.
        return Selection(changed, False, changed, ())
    found = reach.tests_reaching(project, targets, tests, [*side.plugins(), *plugins])
    if found.everything:
        return Selection((), True, changed, found.reasons)
    return Selection(tuple(sorted({*changed, *found.modules})), False, changed, found.reasons)


def _whole_run_reasons(settings: pytest_config.Settings, production: list[str]) -> list[str]:
    addopts = " ".join(settings.addopts)
    if "--doctest-modules" in addopts:
        return ["doctests are collected from the modules themselves (--doctest-modules)"]
    reasons = []
    for path in production:
        if path.endswith(".py"):
            continue
        if path.endswith(STARTUP_SUFFIXES):
            reasons.append(f"{path} runs at interpreter start")
        elif "--doctest-glob" in addopts:
            reasons.append(f"{path} may be a doctest file (--doctest-glob)")
    return reasons


def _plugin_entries(packaging: dict[str, bytes | None], project: reach.Project) -> list[str] | None:
    """The project files of its pytest11 entry modules (every test loads them); None: one does not resolve."""
    found = []
    for name, data in packaging.items():
        for target in startup.entry_points(name, data, "pytest11").values():
            module = target.partition(":")[0].strip()
            files = project.resolve(module) if module else []
            if not files:
                return None
            found += files
    if not found and any(b"pytest11" in (d or b"") for d in packaging.values()):
        return None  # named in a way we do not read
    return sorted(set(found))


def _readers(data_files: list[str], python: dict[str, bytes | None], names: set[str]) -> list[str]:
    """The Python files that could read DATA_FILES: their package's modules (package data) and those naming them.

    A test reaching none of them cannot read the file (except through a path computed from parts none
    of which is spelled, see docs/replay.md), so the file is a change of these files.
    """
    readers: set[str] = set()
    texts = {p: d for p, d in python.items() if d}
    for path in data_files:
        package = _top_package(path, names)
        if package is not None:
            readers.update(p for p in python if p.startswith(package + "/"))
        readers.update(p for p, text in texts.items() if _named(path, text))
    return sorted(readers)


def _top_package(path: str, names: set[str]) -> str | None:
    """The outermost package folder PATH lies in (its code may read it by a relative path), or None."""
    found = None
    for folder in folders_above(path):  # nearest first, bounded: the last package folder is the outermost
        if posixpath.join(folder, "__init__.py") in names:
            found = folder
    return found


def _named(path: str, text: bytes) -> bool:
    """Whether TEXT spells the file's name or a folder it lies in (as a quoted or path part)."""
    base = posixpath.basename(path).encode("utf-8", "surrogateescape")
    folders = [f.encode("utf-8", "surrogateescape") for f in path.split("/")[:-1]]
    patterns = [re.compile(re.escape(base))] + [
        re.compile(rb"[\"'/\\]" + re.escape(f) + rb"[\"'/\\]") for f in folders if f not in (b".", b"")
    ]
    return any(p.search(text) for p in patterns)
