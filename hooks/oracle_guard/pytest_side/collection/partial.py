"""Partial collection: when only test modules changed, collect just those and splice.

Used by the one-process hook `oracle-guard` only (`--collect-all` turns it
off; `check`, the merge gate, and collection-snapshot always collect
everything).  pytest's start-up is the same either way; what a partial run
saves is importing and collecting the modules the change did not touch.

The spliced collection is the base snapshot's ids of every untouched module
plus what pytest collects now from the touched ones, so it must equal a full
collection.  That holds when nothing but the bodies of collected test modules
changed, so any doubt means a full collection:

- a changed path (staged, unstaged or untracked) that can change collection and
  is not a test module the base snapshot lists: conftest.py, __init__.py, .pyi,
  any other .py, pytest configuration, the contract, new or renamed modules;
- a touched module with import-time effects on other modules (module-level
  calls, assignments to attributes or items, `pytest_plugins`, hook functions),
  in its base or new version, unless the change is collection-inert (below: the
  module's import-time code is then the same on both sides, so importing it does
  the same) and the module defines no hook function;
- a module the base snapshot does not list naming a touched module (a helper
  or conftest importing it); listed ones that name it are collected too;
- `PYTEST_PLUGINS` or `PYTEST_ADDOPTS` in the environment; a conftest.py that
  names a hook acting on the whole item list (pytest_collection_modifyitems,
  pytest_collection), or after the run any loaded plugin or conftest that
  implements one (pytest's own and Hypothesis's look at one item at a time);
- snapshot ids that are not paths from the repository's top (rootdir elsewhere);
- any collection error or unexpected exit code: the full run then reports it.

The base snapshot is trusted for untouched modules: the hook wrote it from a
full collection on a clean state, and later partial runs keep it so.

Collection-inert changes need no pytest at all (`Plan.inert`; the base
snapshot is the collection, oracle_guard/analysis/inert.py has the rule).  After every
condition above, each touched module's change must be inert: only the bodies
of functions nothing runs while importing or collecting it (no import-time
code, skipif string, decorator other than pytest.fixture/pytest.mark.*,
dunder or pytest_* hook reaches them), docstrings and generator-ness kept; or
new/removed undecorated, docstring-free helpers whose names match neither the
project's `python_functions` nor unittest's `test`.  And: no other module names
it (its import may call its functions), no conftest.py names a collector hook
or reads code (pytest_collect_file, pytest_pycollect_makeitem/makemodule,
getsource, __code__), addopts override no ini option (-o, -c, --rootdir) and
select nothing by what changed (--lf, --testmon, ...), and the interpreter's
environment holds pytest (looked up, not run).  Plugins installed elsewhere
are assumed to collect by names, signatures, marks and docstrings, as pytest
and the common plugins do, never by a function's body.  The plan is made
before pytest starts (collection_snapshot._start_planned): starting it first
and killing it unused cost an inert change 0.065 s on humanize's 5-file change
(11 interleaved pairs of the hook process on a shared 2-core machine), while
planning first delays every other partial collection by 0.049 s.
"""

from __future__ import annotations

import ast
import glob
import os
from typing import NamedTuple

from oracle_guard.analysis import pysource
from oracle_guard.contract.snapshot import parse_snapshot
from oracle_guard.pytest_side.collection import collector as _collector
from oracle_guard.repo import git
from oracle_guard.repo.paths import PYTHON_SUFFIXES
from oracle_guard.reporting.report import UsageError

WHOLE_LIST_HOOKS = ("pytest_collection_modifyitems", "pytest_collection")  # also spelled in RUNNER
PYTEST_CONFIGS = frozenset(
    {"pytest.ini", ".pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", "pytest.toml", ".pytest.toml"}
)
_SIDE_EFFECT_NAMES = frozenset({"pytest_plugins", "collect_ignore", "collect_ignore_glob"})
# A conftest.py naming one of these may collect from a module's text or code, not only its names.
BODY_READERS = (
    "getsource",
    "getsourcelines",
    "findsource",
    "__code__",
    "co_code",
    "pytest_collect_file",
    "pytest_pycollect_makemodule",
    "pytest_pycollect_makeitem",
)
# The most Python source read to prove a production change inert; a bigger repository collects.
CONTEXT_BYTES = 4_000_000
# Up to this much, the hook proves a production change inert before pytest starts (about 0.1 s for
# pytest-mock's 70 kB on a loaded 2-core machine): a collection started and dropped cost more CPU
# than the proof delays it.  Beyond it the collection starts first and the proof runs meanwhile.
PROVE_FIRST_BYTES = 250_000
# addopts that change collection settings from the command line, or select by what changed.
_OVERRIDES = ("-o", "--override-ini", "-c", "--config-file", "--rootdir", "--inifile")


class Plan(NamedTuple):
    modules: list[str]  # to collect: the touched test modules and the listed modules naming them
    inert: bool  # no change can change what pytest collects (oracle_guard/analysis/inert.py): the base snapshot is the collection


# The exporter plus a watcher that names every implementation of a whole-list
# hook by the module defining it, into OUTPUT + ".whole".  Once pytest is
# imported the child reads the paths to collect (a JSON list, empty for
# everything) from stdin.
RUNNER = _collector.RUNNER.replace(
    "sys.exit(int(pytest.main(sys.argv[3:], plugins=[mod])))",
    """\
import json
paths = json.loads(sys.stdin.readline() or "[]")
sys.stdin.close()
class _WholeList:
    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, config):
        names = set()
        for hook in ("pytest_collection_modifyitems", "pytest_collection"):
            for impl in getattr(config.hook, hook).get_hookimpls():
                if impl.plugin is not self:
                    names.add(getattr(impl.function, "__module__", None) or "?")
        with open(sys.argv[2] + ".whole", "w", encoding="utf-8") as f:
            f.write("\\n".join(sorted(names)))
sys.exit(int(pytest.main(sys.argv[3:] + paths, plugins=[mod, _WholeList()])))""",
)


def is_test_module(path: str) -> bool:
    """A module pytest's default python_files collects (test_*.py, *_test.py)."""
    name = path.rpartition("/")[2]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def relevant(path: str, watched: set[str]) -> bool:
    """Whether a change to PATH can change what pytest collects (WATCHED: the contract, the snapshot)."""
    name = path.rpartition("/")[2]
    return path.endswith(PYTHON_SUFFIXES) or name in PYTEST_CONFIGS or path in watched


def _file_of(node_id: str) -> str:
    return node_id.split("::", 1)[0]


def has_side_effects(tree: ast.Module | None) -> bool:
    """Whether importing the module TREE was parsed from may change how other modules collect."""
    return tree is not None and any(_effect(node) for node in tree.body)


def _parsed(sources: dict[str, bytes | None]) -> dict[str, ast.Module | None] | None:
    """Each source's tree (None: absent); None if any is unparsable (a collection error: the full run reports it)."""
    try:
        return {p: None if source is None else pysource.shared_tree(source, p) for p, source in sources.items()}
    except (SyntaxError, ValueError):
        return None


def _effect(node: ast.stmt) -> bool:
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.ClassDef, ast.Pass)):
        return False
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return node.name.startswith("pytest_")  # a hook or plugin function
    if isinstance(node, ast.Expr):
        return not isinstance(node.value, ast.Constant)  # a docstring is no effect; a call may be
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return not all(_plain_names(t) for t in targets)
    if isinstance(node, ast.If):
        return any(_effect(n) for n in node.body + node.orelse)
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return any(_effect(n) for n in node.body)  # a context manager restores what it changes (freeze_time)
    if isinstance(node, ast.Try):
        handlers = [n for h in node.handlers for n in h.body]
        return any(_effect(n) for n in node.body + handlers + node.orelse + node.finalbody)
    return True  # for, while, del, global, ...: too much to reason about


def _plain_names(target: ast.expr) -> bool:
    if isinstance(target, ast.Name):
        return target.id not in _SIDE_EFFECT_NAMES
    if isinstance(target, (ast.Tuple, ast.List)):
        return all(_plain_names(t) for t in target.elts)
    return False  # an attribute or item of something else


def plan(change_set: object, base_bytes: bytes | None, base_snapshot_path: str, touched: set[str]) -> Plan | None:
    """The test modules to collect and whether pytest need not run; None when only a full collection is sure to be right.

    TOUCHED: what touched() found (it is not changed here)."""
    from oracle_guard.repo import changes

    assert isinstance(change_set, changes.ChangeSet)
    touched = set(touched)
    if not touched:
        return None  # nothing to collect: the caller decides whether to run at all
    assert base_bytes is not None
    base_items = parse_snapshot(base_bytes, base_snapshot_path)
    listed = {_file_of(n) for n in base_items}
    if not all(is_test_module(p) and p in listed for p in touched):
        return None
    if any(not os.path.isfile(f) for f in listed):
        return None  # ids not relative to the top (rootdir elsewhere), or a touched module deleted
    modules = sorted(touched)
    # Each side parsed once, for its side effects and the collection-inert rule.
    olds = _parsed(change_set.read_base(modules))
    news = _parsed({p: changes.read_worktree_file(p) for p in modules})
    if olds is None or news is None:
        return None
    # A module with import-time effects on others cannot be spliced; it can still be inert (below): then
    # importing either version does the same.  One that defines a hook function is a plugin: collected.
    effects = [p for p in modules if has_side_effects(olds[p]) or has_side_effects(news[p])]
    if any(_defines_hook(olds[p]) or _defines_hook(news[p]) for p in effects):
        return None
    # Modules that name a touched one (importing its tests or helpers), and local whole-list hooks.
    stems = sorted({_stem(p) for p in modules})
    patterns = [arg for word in (*stems, *WHOLE_LIST_HOOKS, *BODY_READERS) for arg in ("-e", word)]
    out = git.run("grep", "-z", "-o", "-w", "-F", *patterns, "--", "*.py", check=False)
    naming: set[str] = set()
    named: set[str] = set()  # stems some other module names: its import may run their functions
    body_read = False
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        path, _, word = line.partition("\0")
        conftest = path.rpartition("/")[2] == "conftest.py"
        if word in WHOLE_LIST_HOOKS:
            # A conftest the partial run may not load; plugins and the conftests it loads, the run's watcher names.
            if conftest:
                return None
            continue
        if word in BODY_READERS:
            body_read = body_read or conftest
            continue
        if [p for p in modules if _stem(p) == word] != [path]:
            named.add(word)
        if path not in touched:
            naming.add(path)
    if not all(p in listed for p in naming):
        return None
    inert = not (named or body_read) and _all_inert(modules, olds, news)
    if effects and not inert:
        return None
    return Plan(sorted(touched | naming), inert)


def _defines_hook(tree: ast.Module | None) -> bool:
    """Whether TREE defines a `pytest_*` function anywhere (in an `if`, a class: a doubt is a plugin)."""
    from oracle_guard.analysis.pysource import statements

    return tree is not None and any(
        isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("pytest_")
        for n in statements(tree.body)
    )


def touched(
    change_set: object,
    base_bytes: bytes | None,
    base_snapshot_path: str,
    snapshot: str,
    watched: set[str],
    env: dict[str, str],
) -> set[str]:
    """The changed paths that can change collection; empty when only a full collection is sure to be right."""
    from oracle_guard.repo import changes

    assert isinstance(change_set, changes.ChangeSet)
    if change_set.base is None or change_set.target is not None or base_bytes is None:
        return set()
    if snapshot != base_snapshot_path or env.get("PYTEST_PLUGINS") or env.get("PYTEST_ADDOPTS"):
        return set()
    # What pytest sees is the work tree: staged, unstaged and untracked files alike.
    touched = set(change_set.changed_paths + change_set.deleted)
    touched.update(c.old_path for c in change_set.changes if c.old_path)
    touched.update(
        os.fsdecode(p) for p in git.run("diff", "--no-renames", "--name-only", "-z", change_set.base).split(b"\0") if p
    )
    touched.update(git.untracked())
    touched.discard(snapshot)  # compared with what we collect anyway
    return {p for p in touched if relevant(p, watched)}


def production_only(touched: set[str], base_bytes: bytes | None, base_snapshot_path: str) -> list[str]:
    """The TOUCHED modules (touched()) when each is a plain module of code under test (no test module
    the base snapshot lists or pytest's defaults would collect, no conftest.py, no stub, no
    configuration); else none."""
    if not touched or base_bytes is None:
        return []
    listed = {_file_of(n) for n in parse_snapshot(base_bytes, base_snapshot_path)}
    for path in touched:
        if path in listed or is_test_module(path) or not path.endswith(".py"):
            return []
        if path.rpartition("/")[2] == "conftest.py":
            return []
    return sorted(touched)


def _stem(path: str) -> str:
    return path.rpartition("/")[2][: -len(".py")]


def _all_inert(modules: list[str], olds: dict[str, ast.Module | None], news: dict[str, ast.Module | None]) -> bool:
    """Whether no touched module's change can change what pytest collects (oracle_guard/analysis/inert.py)."""
    from oracle_guard.analysis import inert

    functions = python_functions()
    if functions is None:
        return False
    for path in modules:
        old, new = olds[path], news[path]
        if old is None or new is None or not inert.is_inert(old, new, functions):
            return False
    return True


def production_inert(paths: list[str], change_set: object, limit: int = CONTEXT_BYTES) -> bool | None:
    """Whether changing the modules PATHS (none of them a test module) cannot change what pytest collects.

    Each must be a plain module on both sides (no conftest.py, no stub, not added
    or removed), and the change inert by the rule for test modules with names
    joined across every tracked Python module of the work tree: a function body
    that any module's import-time code (or a hook's, or a function that code
    reaches, in any module) names is not inert.  No conftest.py may read code, and
    the repository's Python must be small enough to read quickly: else a run.
    None: the other modules hold more than LIMIT bytes (CONTEXT_BYTES: too many to prove it).
    """
    from oracle_guard.analysis import inert
    from oracle_guard.repo import changes

    assert isinstance(change_set, changes.ChangeSet)
    functions = python_functions()
    if functions is None:
        return False
    olds = change_set.read_base(paths)
    news = {p: changes.read_worktree_file(p) for p in paths}
    if any(olds[p] is None or news[p] is None for p in paths):
        return False
    out = git.run("ls-files", "-z", "--", "*.py", check=False)
    others = sorted(set(os.fsdecode(p) for p in out.split(b"\0") if p) - set(paths))
    context: list[bytes] = []  # parsed by all_inert (unparsable: a collection error, maybe, the run reports it)
    size = 0
    for path in others:
        source = changes.read_worktree_file(path)
        if source is None:
            continue  # deleted in the work tree: not imported
        size += len(source)
        if size > limit:
            return None
        if path.rpartition("/")[2] == "conftest.py" and any(w.encode() in source for w in BODY_READERS):
            return False
        context.append(source)
    pairs = [(olds[p] or b"", news[p] or b"") for p in paths]
    return inert.all_inert(pairs, functions, context)


def python_functions() -> list[str] | None:
    """The project's `python_functions` as pytest reads it from the top folder; None when in doubt."""
    from oracle_guard.pytest_side.config import compare as pytest_config
    from oracle_guard.repo import changes

    blobs = {name: changes.read_worktree_file(name) for name in pytest_config.CONFIG_FILES}
    try:
        settings = pytest_config.settings_of(blobs)
    except UsageError:
        return None  # unreadable: pytest reports it
    if any(t.startswith(_OVERRIDES) or t in pytest_config.NARROWING_FLAGS for t in settings.addopts):
        return None
    return settings.ini.get("python_functions", pytest_config.DEFAULTS["python_functions"])


def has_pytest(python: str) -> bool:
    """Whether PYTHON's environment holds a pytest package, looked up without running it (else: in doubt)."""
    prefix = os.path.dirname(os.path.dirname(python))
    found = glob.glob(os.path.join(glob.escape(prefix), "lib", "python3*", "*-packages", "pytest", "__init__.py"))
    found += glob.glob(os.path.join(glob.escape(prefix), "Lib", "site-packages", "pytest", "__init__.py"))
    return bool(found)


# Plugins whose whole-list hook looks at one item at a time (Hypothesis marks its tests).
PER_ITEM_PLUGINS = frozenset({"_hypothesis_pytestplugin"})


def whole_list_plugins(names: str) -> list[str]:
    """The modules, from the watcher's file, whose whole-list hooks may look across items."""
    return [n for n in names.split("\n") if n and not n.startswith("_pytest.") and n not in PER_ITEM_PLUGINS]


def splice(
    base_bytes: bytes, base_snapshot_path: str, modules: list[str], collected: dict[str, str]
) -> dict[str, str] | None:
    """The base snapshot with the ids of MODULES replaced by COLLECTED; None if pytest named other files."""
    wanted = set(modules)
    if any(_file_of(n) not in wanted for n in collected):
        return None
    base_items = parse_snapshot(base_bytes, base_snapshot_path)
    items = {n: status for n, (status, _) in base_items.items() if _file_of(n) not in wanted}
    items.update(collected)
    return dict(sorted(items.items()))
