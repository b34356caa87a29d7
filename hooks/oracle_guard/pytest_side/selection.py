"""The base tests a replay runs: the changed test modules and those that reach the changed code.

``select(change_set, plan, side)`` is the one place that decides it (the
replay and the probes built on it call it): the base versions of the test
modules the change edited, moved or deleted, plus, when production code
changed, every base test module whose imports reach a changed production
module (analysis/reach.py), or every test when that cannot be decided:
another test-side file changed, doctests are collected from modules, the
project is a pytest plugin, a production file that is not Python sits in a
package or is named by the project's Python code, a new top-level module.
"""

from __future__ import annotations

import os
import posixpath
import re
from typing import NamedTuple

from oracle_guard.analysis import reach
from oracle_guard.pytest_side import pytest_config, scratch
from oracle_guard.repo import changes, git
from oracle_guard.repo.paths import folders_above
from oracle_guard.reporting.report import UsageError

PACKAGING = ("pyproject.toml", "setup.cfg", "setup.py")
TOOLING = {"setup.py", "noxfile.py", "tasks.py", "fabfile.py", "conftest_docs.py"}
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
    packaging = b"\n".join(blobs.get(n) or b"" for n in PACKAGING)
    python = {n: d for n, d in blobs.items() if n.endswith(".py")}
    production = [*the_plan.write, *the_plan.remove]
    reasons = _whole_run_reasons(settings, packaging, production, python, set(names))
    if reasons:
        return Selection((), True, changed, tuple(reasons))
    project = reach.Project(
        python,
        roots=("", "src", *settings.ini.get("pythonpath", [])),
        entry_points=re.search(rb"entry_points|entry-points|\[project\.scripts\]|console_scripts", packaging)
        is not None,
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
    found = reach.tests_reaching(project, [p for p in production if p.endswith(".py")], tests, side.plugins())
    if found.everything:
        return Selection((), True, changed, found.reasons)
    return Selection(tuple(sorted({*changed, *found.modules})), False, changed, found.reasons)


def _whole_run_reasons(
    settings: pytest_config.Settings,
    packaging: bytes,
    production: list[str],
    python: dict[str, bytes | None],
    base_names: set[str],
) -> list[str]:
    addopts = " ".join(settings.addopts)
    if "--doctest-modules" in addopts:
        return ["doctests are collected from the modules themselves (--doctest-modules)"]
    if any(p.endswith(".py") for p in production) and b"pytest11" in packaging:
        return ["the project is a pytest plugin (pytest11): every test loads it"]
    reasons = []
    texts = [d for p, d in python.items() if d and not _tooling(p)]
    for path in production:
        if path.endswith(".py"):
            continue
        if path.endswith(STARTUP_SUFFIXES):
            reasons.append(f"{path} runs at interpreter start")
        elif "--doctest-glob" in addopts:
            reasons.append(f"{path} may be a doctest file (--doctest-glob)")
        elif _in_package(path, base_names):
            reasons.append(f"{path} is package data")
        elif _named(path, texts):
            reasons.append(f"{path} is named by the project's Python code")
    return reasons


def _tooling(path: str) -> bool:
    """Python files no test imports: packaging, task runners, the docs' configuration."""
    return path in TOOLING or path.startswith(("docs/", "doc/"))


def _in_package(path: str, names: set[str]) -> bool:
    return any(posixpath.join(folder, "__init__.py") in names for folder in folders_above(path))


def _named(path: str, texts: list[bytes]) -> bool:
    """Whether any Python file spells the file's name or a folder it lies in (as a quoted or path part)."""
    base = posixpath.basename(path).encode("utf-8", "surrogateescape")
    folders = [f.encode("utf-8", "surrogateescape") for f in path.split("/")[:-1]]
    patterns = [re.compile(re.escape(base))] + [
        re.compile(rb"[\"'/\\]" + re.escape(f) + rb"[\"'/\\]") for f in folders if f not in (b".", b"")
    ]
    return any(p.search(text) for p in patterns for text in texts)
