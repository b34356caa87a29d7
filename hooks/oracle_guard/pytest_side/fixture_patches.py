"""OG877: an autouse fixture in a conftest.py that replaces the code the tests check.

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

from oracle_guard.analysis.checksites import HelperIndex
from oracle_guard.analysis.pysource import Module, Names, SourceError
from oracle_guard.analysis.sourcetext import spells
from oracle_guard.repo import changes, git
from oracle_guard.repo.paths import TEST_FILES
from oracle_guard.reporting.report import Finding

FIXTURE_DECORATORS = {"pytest.fixture", "pytest_asyncio.fixture"}
PATCH_CALLS = {"unittest.mock.patch", "mock.patch", "mocker.patch", "pytest_mock.MockerFixture.patch"}
PATCH_OBJECT_CALLS = {f"{p}.object" for p in PATCH_CALLS}
MAX_TEST_FILES = 2000  # more test modules under one conftest than a commit hook should read


class Patch(NamedTuple):
    fixture: str
    target: str  # dotted: module path then the attribute
    node: ast.AST


def _autouse(func: ast.FunctionDef | ast.AsyncFunctionDef, names: Names) -> bool:
    for decorator in func.decorator_list:
        if isinstance(decorator, ast.Call) and (names.qualify(decorator.func) or "") in FIXTURE_DECORATORS:
            for keyword in decorator.keywords:
                if keyword.arg == "autouse":
                    return not (isinstance(keyword.value, ast.Constant) and not keyword.value.value)
    return False


def _text(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _joined(owner: ast.expr, attr: ast.expr | None, names: Names) -> str | None:
    name, base = _text(attr), names.qualify(owner)
    return f"{base}.{name}" if name and base else None


def _call_target(call: ast.Call, names: Names) -> str | None:
    """The dotted target CALL patches, if it is a patch call."""
    func = call.func
    qualified = names.qualify(func) or ""
    args = call.args
    if isinstance(func, ast.Attribute) and func.attr == "setattr" and args:
        if len(args) == 2 and _text(args[0]):  # monkeypatch.setattr("pkg.mod.name", value)
            return _text(args[0])
        return _joined(args[0], args[1], names) if len(args) >= 2 else None
    if isinstance(func, ast.Name) and func.id == "setattr" and len(args) >= 2:
        return _joined(args[0], args[1], names)
    last = ".".join(qualified.split(".")[-2:])
    if qualified in PATCH_CALLS or last == "mocker.patch" or (isinstance(func, ast.Attribute) and last == "mock.patch"):
        return _text(args[0]) if args else None
    if qualified in PATCH_OBJECT_CALLS or qualified.endswith("mocker.patch.object"):
        return _joined(args[0], args[1], names) if len(args) >= 2 else None
    return None


def patches(module: Module) -> list[Patch]:
    """Every patch an autouse fixture of MODULE makes."""
    found: list[Patch] = []
    for node in ast.walk(module.tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not _autouse(node, module.names):
            continue
        for inner in ast.walk(node):
            target = None
            if isinstance(inner, ast.Call):
                target = _call_target(inner, module.names)
            elif isinstance(inner, ast.Assign):
                for t in inner.targets:
                    if isinstance(t, ast.Attribute):
                        base = module.names.qualify(t.value)
                        target = f"{base}.{t.attr}" if base else None
            if target and "." in target:
                found.append(Patch(node.name, target, inner))
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


def compare(path: str, base: bytes | None, new: bytes, change_set: changes.ChangeSet) -> list[Finding]:
    """OG877 for each new autouse patch in the conftest PATH of a function the tests below it check."""
    if not spells(new, b"autouse"):
        return []
    try:
        module = Module.from_source(path, new)
    except SourceError:
        return []  # pytest_config reports it
    fresh = patches(module)
    if not fresh:
        return []
    known: dict[tuple[str, str], int] = {}
    if base is not None and b"autouse" in base:
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
