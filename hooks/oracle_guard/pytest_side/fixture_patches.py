"""OG877: a fixture in a conftest.py that replaces the code the tests check.

``@pytest.fixture(autouse=True)`` runs around every test below its conftest, so
``monkeypatch.setattr(app, "parse", lambda x: 1)`` there makes each test that
checks ``app.parse`` check the stand-in: the suite goes green and proves
nothing.  Patching what the code *uses* is honest and common (the clock, the
network, environment variables, a third-party client), so a patch is a finding
only when all of these hold:

- it is new since the base (the same fixture patching the same target passes);
- its target is a function defined in a repository file that is not a test
  file (oracle_guard.analysis.checksites.HelperIndex resolves it);
- a test module under the conftest's folder names that function (imports or
  calls it): the tests check it.

A fixture that is not autouse is judged by what requests it: a new patch there
is a finding when a test below the conftest requests the fixture and checks the
result of the very function it replaces (oracle_guard.analysis.arranged, which
judges the same in test modules as OG315).

Spellings: ``monkeypatch.setattr(obj, "name", ...)`` and ``("pkg.mod.name", ...)``,
``mocker.patch("pkg.mod.name")``, ``mock.patch(...)``/``patch.object(obj, "name")``
(started, or as a context manager), ``setattr(obj, "name", ...)`` and
``obj.name = ...``.  Called from pytest_config.check with the conftests it read.
"""

from __future__ import annotations

import ast
import os
import posixpath
from typing import NamedTuple

from oracle_guard.analysis import arranged, outcomes
from oracle_guard.analysis.checksites import CheckSites, HelperIndex
from oracle_guard.analysis.meaning import checks as meaning
from oracle_guard.analysis.pysource import Module, SourceError
from oracle_guard.analysis.sourcetext import spells
from oracle_guard.repo import changes, git
from oracle_guard.repo.paths import TEST_FILES
from oracle_guard.reporting.report import Finding

MAX_TEST_FILES = 2000  # more test modules under one conftest than a commit hook should read


class Patch(NamedTuple):
    fixture: str
    target: str  # dotted: module path then the attribute
    node: ast.AST
    autouse: bool


def patches(module: Module) -> list[Patch]:
    """Every patch a fixture of MODULE makes."""
    found: list[Patch] = []
    for node in ast.walk(module.tree):
        named = arranged.fixture_name(node, module.names)
        if named is None:
            continue
        for patch in arranged.patches(node, module.names, ""):  # type: ignore[arg-type]  # a fixture is a function
            found.append(Patch(named[0], patch.target, patch.node, named[1]))
    return found


def _test_files(folder: str, change_set: changes.ChangeSet) -> list[str]:
    """Python test modules under FOLDER on the new side."""
    spec = [folder + "/"] if folder else []
    if change_set.target:
        out = git.run("ls-tree", "-r", "-z", "--name-only", change_set.target, "--", *spec, check=False)
    else:
        out = git.run("ls-files", "-z", "--cached", "--", *spec, check=False)
    names = [os.fsdecode(n) for n in out.split(b"\0") if n.endswith(b".py")]
    return [n for n in names if TEST_FILES.search(n) and posixpath.basename(n) != "conftest.py"][:MAX_TEST_FILES]


def _named_in(module: Module, function: str, defined_in: str, helpers: HelperIndex) -> bool:
    """Whether MODULE names FUNCTION of the file DEFINED_IN (an import of it, or a call through its module)."""
    for node in ast.walk(module.tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == function for a in node.names):
            package = "." * node.level + (node.module or "")
            found = helpers.resolve(module.path, f"{package}.{function}" if node.module else package + function)
            if found is not None and found[0].path == defined_in:
                return True
        elif isinstance(node, ast.Attribute) and node.attr == function:
            qualified = module.names.qualify(node)
            found = helpers.resolve(module.path, qualified) if qualified else None
            if found is not None and found[0].path == defined_in:
                return True
    return False


def _checked_by(
    folder: str, function: str, defined_in: str, change_set: changes.ChangeSet, helpers: HelperIndex
) -> str | None:
    """A test module under FOLDER that names FUNCTION of DEFINED_IN, or None."""
    paths = _test_files(folder, change_set)
    blobs = change_set.read_new(paths)
    for path in paths:
        data = blobs.get(path)
        if data is None or not spells(data, function.encode()):
            continue
        try:
            module = Module.from_source(path, data)
        except SourceError:
            continue  # another rule reports a test module that does not parse
        if _named_in(module, function, defined_in, helpers):
            return path
    return None


def _requested_by(folder: str, patch: Patch, change_set: changes.ChangeSet) -> str | None:
    """The node id of a test under FOLDER that requests PATCH's fixture and checks the patched function."""
    paths = _test_files(folder, change_set)
    blobs = change_set.read_new(paths)
    for path in paths:
        data = blobs.get(path)
        if data is None or not spells(data, patch.fixture.encode()):
            continue
        try:
            module = Module.from_source(path, data)
        except SourceError:
            continue  # another rule reports a test module that does not parse
        analyzer = CheckSites(module, None)
        scope = meaning.Scope(analyzer.names, analyzer.constants, analyzer.functions)
        for qualname, (fn, cls, is_test) in analyzer.index().items():
            if not is_test or patch.fixture not in {a.arg for a in fn.args.args + fn.args.kwonlyargs}:
                continue
            if any(
                arranged.hits(patch.target, d.callnode, module.names, path) for d in outcomes.demands(fn, scope, cls)
            ):
                return f"{path}::{qualname.replace('.', '::')}"
    return None


def compare(path: str, base: bytes | None, new: bytes, change_set: changes.ChangeSet) -> list[Finding]:
    """OG877 for each new fixture patch in the conftest PATH of a function the tests below it check."""
    if not spells(new, b"fixture"):
        return []
    try:
        module = Module.from_source(path, new)
    except SourceError:
        return []  # pytest_config reports it
    fresh = patches(module)
    if not fresh:
        return []
    known: dict[tuple[str, str], int] = {}
    if base is not None and b"fixture" in base:
        try:
            for old in patches(Module.from_source(path, base)):
                known[(old.fixture, old.target)] = known.get((old.fixture, old.target), 0) + 1
        except SourceError:
            pass
    helpers = HelperIndex(change_set.read_new)
    folder = posixpath.dirname(path)
    findings = []
    for patch in fresh:
        key = (patch.fixture, patch.target)
        if known.get(key):
            known[key] -= 1
            continue
        resolved = helpers.resolve(path, patch.target)
        if resolved is None or TEST_FILES.search(resolved[0].path):
            continue  # not the repository's production code: the clock, the network, a library
        function = patch.target.rsplit(".", 1)[-1]
        if not patch.autouse:
            user = _requested_by(folder, patch, change_set)
            if user is not None:
                findings.append(
                    module.finding(
                        patch.node,
                        "OG877",
                        f"fixture `{patch.fixture}` replaces `{patch.target}` ({resolved[0].path}), whose result "
                        f"{user}, which requests it, checks: the check compares the stand-in, not the code",
                    )
                )
            continue
        checked = _checked_by(folder, function, resolved[0].path, change_set, helpers)
        if checked is None:
            continue  # no test below this conftest checks it: a stand-in for what the code uses
        findings.append(
            module.finding(
                patch.node,
                "OG877",
                f"autouse fixture `{patch.fixture}` replaces `{patch.target}` ({resolved[0].path}), which {checked} "
                "checks: every test below this conftest now checks the stand-in, not the code",
            )
        )
    return findings
