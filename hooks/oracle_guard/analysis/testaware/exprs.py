"""What an expression in production code spells: folded literals, frames, exits, relative imports.

The expression-level helpers of oracle_guard/analysis/testaware/finder.py, which walks the module and decides.
"""

from __future__ import annotations

import ast

from oracle_guard.analysis.pysource import Names

EXITS = frozenset({"os._exit", "sys.exit", "exit", "quit", "SystemExit", "builtins.exit", "posix._exit"})
FRAME_ATTRS = frozenset({"f_back", "f_locals", "f_globals", "f_code", "f_lineno", "tb_frame"})
# What turns literals into a string without reading anything else (an obfuscated name is built with them).
PURE_CALLS = frozenset(
    "chr str bytes bytearray ord int hex oct reversed sorted base64 binascii codecs zlib bz2 lzma".split()
)


def folded(node: ast.AST, depth: int = 0) -> str | None:
    """The string a `+` of string literals or an f-string of literals spells, else None."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if depth > 50:
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = folded(node.left, depth + 1), folded(node.right, depth + 1)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.JoinedStr):
        if any(isinstance(v, ast.FormattedValue) and (v.conversion != -1 or v.format_spec) for v in node.values):
            return None
        parts = [folded(v.value if isinstance(v, ast.FormattedValue) else v, depth + 1) for v in node.values]
        return "".join(p for p in parts if p is not None) if all(p is not None for p in parts) else None
    return None


def from_literals(node: ast.AST, depth: int = 0) -> bool:
    """Whether NODE computes a value from literals alone, through builtins and decoders (`chr(80)`,
    `"".join(...)`, `base64.b64decode("...")`); a name read as data (`PREFIX + "_HOME"`) or a project
    function (`_env("DEBUG")`) is not."""
    if depth > 50:
        return False
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Call):
        callee = node.func
        while isinstance(callee, ast.Attribute):
            callee = callee.value
        if isinstance(callee, ast.Name) and callee.id not in PURE_CALLS:
            return False
        if not isinstance(callee, ast.Name) and not from_literals(callee, depth + 1):
            return False
        return all(from_literals(a, depth + 1) for a in [*node.args, *(k.value for k in node.keywords)])
    if isinstance(node, (ast.Name, ast.Attribute, ast.Starred, ast.Lambda, ast.NamedExpr)):
        return False
    if isinstance(node, ast.comprehension):
        return False
    children = list(ast.iter_child_nodes(node))
    return all(
        from_literals(c, depth + 1)
        for c in children
        if not isinstance(c, (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop))
    )


def mentions_frames(node: ast.AST, names: Names) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr in FRAME_ATTRS:
            return True
        if isinstance(sub, ast.Call) and (names.qualify(sub.func) or "") in (
            "inspect.currentframe",
            "sys._getframe",
            "inspect.stack",
        ):
            return True
    return False


def relative_import(node: ast.expr, path: str) -> bool:
    """``f".{name}"``, ``"." + name``, ``f"pkg.sub.{name}"`` in pkg: a submodule of the project's own package."""
    first = node.values[0] if isinstance(node, ast.JoinedStr) and node.values else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        first = node.left
    if isinstance(node, ast.Constant):  # the package argument, spelled
        first = node
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return False
    parts = path.removeprefix("src/").split("/")
    own = parts[0] if len(parts) > 1 else "\0"
    return first.value.startswith((".", own + ".")) or first.value == own


def own_package(node: ast.expr) -> bool:
    """``package=__name__`` or ``__package__``: a relative import inside the module's own package."""
    return isinstance(node, ast.Name) and node.id in ("__name__", "__package__", "__spec__.parent")


def exits(handler: ast.expr, names: Names, tree: ast.Module) -> bool:
    """Whether an atexit handler ends the process: os._exit itself, a lambda or a function of this module that does."""
    if (names.qualify(handler) or "") in EXITS:
        return True
    body: list[ast.AST] = []
    if isinstance(handler, ast.Lambda):
        body = [handler.body]
    elif isinstance(handler, ast.Name):
        body = [
            n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == handler.id
        ]
    for part in body:
        for sub in ast.walk(part):
            if isinstance(sub, ast.Call) and (names.qualify(sub.func) or "") in EXITS:
                return True
            if isinstance(sub, ast.Raise) and sub.exc is not None:
                exc = sub.exc.func if isinstance(sub.exc, ast.Call) else sub.exc
                if names.qualify(exc) == "SystemExit":
                    return True
    return False


def module_name_reads(scope: ast.AST) -> set[int]:
    """Ids of the nodes in SCOPE whose value flows only into ``X.__module__ = ...`` (through plain names that
    are otherwise only tested before a ``raise``): the caller's module name, for pickling, decides no result."""
    flows: set[str] = set()
    values: list[ast.expr] = []
    assigns = [n for n in ast.walk(scope) if isinstance(n, ast.Assign) and len(n.targets) == 1]
    for node in assigns:
        target = node.targets[0]
        if isinstance(target, ast.Attribute) and target.attr == "__module__":
            values.append(node.value)
    local = {n.targets[0].id for n in assigns if isinstance(n.targets[0], ast.Name)}
    for _ in range(5):  # module = frame.f_globals...; frame = sys._getframe(1): a few steps back
        for value in list(values):
            flows |= {n.id for n in ast.walk(value) if isinstance(n, ast.Name) and n.id in local}
        more = [
            n.value
            for n in assigns
            if isinstance(n.targets[0], ast.Name) and n.targets[0].id in flows and n.value not in values
        ]
        if not more:
            break
        values += more
    # A name that also reaches a return, a call, or a test that does more than raise is used for something else.
    allowed: set[int] = {id(n) for value in values for n in ast.walk(value)}
    allowed |= {id(n.targets[0]) for n in assigns}
    for sub in ast.walk(scope):
        if isinstance(sub, (ast.If, ast.While)) and all(isinstance(s, ast.Raise) for s in sub.body):
            allowed |= {id(n) for n in ast.walk(sub.test)}
    for sub in ast.walk(scope):
        if isinstance(sub, ast.Name) and sub.id in flows and id(sub) not in allowed:
            return set()
    return {id(n) for value in values for n in ast.walk(value)}
