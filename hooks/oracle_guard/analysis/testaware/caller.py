"""OG962, reading the caller: its frame, its locals, its source line.  oracle_guard/analysis/testaware/finder.py
hands it the nodes."""

from __future__ import annotations

import ast

from oracle_guard.analysis.testaware import exprs
from oracle_guard.analysis.testaware.walker import Walker

STACK_CALLS = frozenset(
    {
        "inspect.stack",
        "inspect.getouterframes",
        "traceback.extract_stack",
        "traceback.walk_stack",
        "traceback.format_stack",
        "linecache.getline",
        "linecache.getlines",
        "inspect.getframeinfo",
    }
)
LIVE_FRAMES = frozenset(
    {"inspect.currentframe", "sys._getframe", "inspect.stack", "inspect.getouterframes", "traceback.extract_stack"}
    | {"traceback.walk_stack", "traceback.format_stack", "traceback.print_stack"}
)
FRAME_ATTRS = exprs.FRAME_ATTRS


def live_frames(w: Walker) -> bool:
    """Whether the enclosing function takes a live frame (its own stack, not an exception's traceback).

    A traceback formatter reads `f_code` and source lines of the frames an exception carries: honest.
    Reading the running stack (`inspect.currentframe()`, `sys._getframe()`, `inspect.stack()`, `.f_back`)
    is how code finds its caller.
    """
    scope = w.innermost_function()
    if id(scope) not in w.live:
        w.live[id(scope)] = any(
            (isinstance(n, ast.Attribute) and n.attr == "f_back")
            or (isinstance(n, ast.Call) and w.qualify(n.func) in LIVE_FRAMES)
            for n in ast.walk(scope)
        )
    return w.live[id(scope)]


def attribute(w: Walker, node: ast.Attribute) -> bool:
    if node.attr in FRAME_ATTRS and isinstance(node.ctx, ast.Load) and live_frames(w):
        w.add(node, "OG962", f"reads another frame (`.{node.attr}`): code must not read its caller")
        return True
    return False


def call(w: Walker, node: ast.Call, name: str) -> bool:
    if name in STACK_CALLS:
        if not name.startswith("linecache.") or live_frames(w):
            w.add(node, "OG962", f"{name}() reads the call stack or a source line: code must not read its caller")
        return True
    if name == "sys._getframe":
        depth = node.args[0] if node.args else None
        if depth is not None and not (isinstance(depth, ast.Constant) and depth.value == 0):
            w.add(node, "OG962", "sys._getframe(n) reads a caller's frame: code must not read its caller")
        return True
    if name in ("inspect.getsource", "inspect.getsourcelines") and exprs.mentions_frames(node, w.names):
        w.add(node, "OG962", f"{name}() of a frame reads the caller's source")
        return True
    return False
