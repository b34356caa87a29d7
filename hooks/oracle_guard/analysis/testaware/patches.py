"""OG964, patching the test machinery or the language (``unittest``, ``pytest``, ``builtins``, ``sys.modules``,
import hooks, a rigged clock or RNG), and OG968's ``pytest_plugins`` in a production module.
oracle_guard/analysis/testaware/finder.py hands it the nodes."""

from __future__ import annotations

import ast

from oracle_guard.analysis.testaware import exits
from oracle_guard.analysis.testaware.facts import PLUGIN
from oracle_guard.analysis.testaware.runner import RUNNER_MODULES
from oracle_guard.analysis.testaware.walker import MACHINERY, RIGGED, Walker


def name(w: Walker, node: ast.Name) -> None:
    if isinstance(node.ctx, ast.Store) and node.id == "AssertionError":
        w.add(node, "OG964", "rebinds AssertionError: code must not change what a failed check raises")


def call(w: Walker, node: ast.Call, name: str) -> bool:
    if name in ("setattr", "delattr"):
        if node.args:
            patched(w, node, node.args[0], node.args[1] if len(node.args) > 1 else None)
        return True
    if name.startswith(("sys.meta_path.", "sys.path_hooks.")):
        # A pytest plugin's job (assertion rewriting, type-checking imports).
        w.add(node, "OG964", f"{name}() installs an import hook: code must not change how tests import", when=PLUGIN)
        return True
    if name == "random.seed":
        if w.import_time:
            w.add(node, "OG964", "seeds the shared random generator at import: a rigged RNG")
        return True
    if name.startswith("sys.modules.") and name.rpartition(".")[2] in ("update", "setdefault", "__setitem__"):
        module_entry(w, node, node.args[0] if node.args else None)
        return True
    return False


def stored(w: Walker, target: ast.expr, node: ast.stmt) -> None:
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            stored(w, element, node)
        return
    if isinstance(target, ast.Name) and target.id == "pytest_plugins" and w.import_time:
        w.add(node, "OG968", "pytest_plugins in production code loads plugins into the test run")
    if isinstance(target, ast.Attribute):
        patched(w, node, target.value, ast.Constant(target.attr))
    elif isinstance(target, ast.Subscript):
        owner = w.qualify(target.value)
        if owner == "sys.modules":
            module_entry(w, node, target.slice)
        elif owner in ("__builtins__", "builtins.__dict__", "vars(builtins)"):
            w.add(node, "OG964", "writes into builtins: code must not change the language the tests run in")


def patched(w: Walker, node: ast.AST, owner_node: ast.expr, attr: ast.expr | None) -> None:
    owner = w.qualify(owner_node)
    attr_name = attr.value if isinstance(attr, ast.Constant) and isinstance(attr.value, str) else None
    slot = f"{owner}.{attr_name}" if attr_name else ""
    if exits.hook_slot(w, node, slot):
        return
    root = owner.split(".")[0]
    if root in MACHINERY or owner.startswith("unittest.") or slot == "builtins.AssertionError":
        w.add(node, "OG964", f"patches {slot or owner}: code must not change the test machinery or the language")
    elif root in RIGGED and w.import_time:
        w.add(node, "OG964", f"patches {slot or owner} at import: a rigged clock or RNG")
    elif owner in ("sys.meta_path", "sys.path_hooks") or slot in ("sys.meta_path", "sys.path_hooks"):
        w.add(node, "OG964", "installs an import hook: code must not change how tests import", when=PLUGIN)


def module_entry(w: Walker, node: ast.AST, key: ast.expr | None) -> None:
    """``sys.modules[name] = ...``: a lazy module of its own is honest, a module the tests import is not."""
    own = w.module.path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        name = key.value
        if name.split(".")[0] in RUNNER_MODULES or name == "builtins":
            w.add(node, "OG964", f"replaces sys.modules[{name!r}]: the test machinery")
        elif not own.endswith(name) and not name.startswith(own.split(".")[-1]) and w.facts.tests_import(name):
            w.add(node, "OG964", f"replaces sys.modules[{name!r}], a module the base's tests import")
        return
    if key is None or any(isinstance(n, ast.Name) and n.id == "__name__" for n in ast.walk(key)):
        return  # its own module under another object (a lazy module)
    # Once per file: a module that already aliases modules under computed names (requests' packages.py
    # vendoring shim) may alias one more.
    message = "writes sys.modules under a computed name: cannot be checked statically"
    w.add(node, "OG969", message, key="sys.modules")
