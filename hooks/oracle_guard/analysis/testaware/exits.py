"""OG963, ending the run or deciding what a failure does: ``os._exit``, ``sys.exit`` outside an entry point,
an exit at interpreter shutdown, an excepthook, a signal handler or tracer set at import.
oracle_guard/analysis/testaware/finder.py hands it the nodes."""

from __future__ import annotations

import ast

from oracle_guard.analysis.testaware import exprs
from oracle_guard.analysis.testaware.facts import PLUGIN
from oracle_guard.analysis.testaware.walker import Walker

EXITS = exprs.EXITS
HOOK_SLOTS = frozenset({"sys.excepthook", "threading.excepthook", "sys.unraisablehook", "sys.breakpointhook"})
IMPORT_TIME_CALLS = frozenset({"signal.signal", "sys.settrace", "sys.setprofile", "threading.settrace"})


def attribute(w: Walker, node: ast.Attribute) -> bool:
    if node.attr == "_exit" and w.qualify(node) in ("os._exit", "posix._exit"):
        # Everywhere, a pytest plugin too: its status bypasses pytest's (a forked worker's exit is the base's).
        w.add(node, "OG963", f"{w.qualify(node)} ends the process at once: library code must not end the run")
        return True
    return False


def raised(w: Walker, node: ast.Raise) -> None:
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    if exc is not None and w.qualify(exc) in ("SystemExit", "builtins.SystemExit") and not w.in_entry_point:
        message = "raises SystemExit outside an entry point: library code must not end the run"
        w.add(node, "OG963", message, when=_failing(node.exc))


def call(w: Walker, node: ast.Call, name: str) -> bool:
    if name in EXITS and name != "SystemExit":
        if isinstance(node.func, ast.Name) and w.bound_locally(node.func.id):
            pass  # a parameter or local named `exit` (a callback), not the builtin
        elif name not in ("os._exit", "posix._exit") and not w.in_entry_point:  # os._exit: attribute()
            message = f"{name}() outside an entry point: library code must not end the run"
            w.add(node, "OG963", message, when=_failing(node))
        return True
    if name == "atexit.register":
        if node.args and exprs.exits(node.args[0], w.names, w.module.tree):
            message = "registers an exit at interpreter shutdown: it overrides the test run's status"
            w.add(node, "OG963", message)
        return True
    if name in IMPORT_TIME_CALLS:
        if w.import_time and not w.in_entry_point:
            w.add(node, "OG963", f"{name}() at import time changes how the test process runs")
        return True
    return False


def _failing(exit: ast.expr | None) -> str:
    """PLUGIN for an exit that can only fail the run (`sys.exit(1)`, `sys.exit("message")`): a pytest plugin's
    way to stop on a bad configuration. Any other exit counts in a plugin too: its status would be the run's."""
    code = exit.args[0] if isinstance(exit, ast.Call) and exit.args else None
    if isinstance(code, ast.Constant) and code.value not in (0, None, False, ""):
        return PLUGIN
    return ""


def hook_slot(w: Walker, node: ast.AST, slot: str) -> bool:
    """``sys.excepthook = ...``: whoever sets it decides what a failure does (a program may, a library not)."""
    if slot not in HOOK_SLOTS:
        return False
    if not w.in_entry_point:
        w.add(node, "OG963", f"replaces {slot}: it decides what a failure does")
    return True
