"""OG969, dynamic code no rule can see through: ``getattr(sys, name)``, ``eval``/``exec`` of computed code,
an import of a computed module name.  Code spelled in an ``exec("...")`` is judged like the file.
oracle_guard/analysis/testaware/finder.py hands it the calls."""

from __future__ import annotations

import ast

from oracle_guard.analysis.pysource import Module, SourceError
from oracle_guard.analysis.testaware import exprs
from oracle_guard.analysis.testaware.runner import RUNNER_MODULES
from oracle_guard.analysis.testaware.walker import SENSITIVE, Walker


def call(w: Walker, node: ast.Call, name: str) -> None:
    args = node.args
    if name in ("getattr", "setattr", "delattr", "hasattr") and len(args) >= 2:
        target = w.qualify(args[0]).split(".")[0]
        if target in SENSITIVE and not isinstance(args[1], ast.Constant):
            message = f"{name}({target}, <computed name>) cannot be checked statically"
            w.add(node, "OG969", message, key=f"{name}:{target}")
    elif name in ("eval", "exec", "builtins.eval", "builtins.exec") and args:
        if isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
            _spelled_code(w, node, name, args[0].value)
        else:  # reported once per file: a module that already generates code may do it once more
            w.add(node, "OG969", f"{name}() of computed code cannot be checked statically", key=name)
    elif name in ("importlib.import_module", "__import__", "builtins.__import__") and args:
        package = args[1] if len(args) > 1 else next((k.value for k in node.keywords if k.arg == "package"), None)
        own = package is not None and (exprs.relative_import(package, w.module.path) or exprs.own_package(package))
        spelled = isinstance(args[0], ast.Constant) or _loops_over_names(w, args[0])
        if not spelled and not exprs.relative_import(args[0], w.module.path) and not own:
            message = f"{name}() of a computed module name cannot be checked statically"
            w.add(node, "OG969", message, key=name)


def _loops_over_names(w: Walker, arg: ast.expr) -> bool:
    """``for lib in ("chardet", "charset_normalizer"): import_module(lib)``: every name is spelled, and none is
    the test machinery's or a module the rules watch."""
    if not isinstance(arg, ast.Name):
        return False
    loops = [
        n
        for n in ast.walk(w.innermost_function())
        if isinstance(n, (ast.For, ast.comprehension)) and isinstance(n.target, ast.Name) and n.target.id == arg.id
    ]
    if len(loops) != 1 or not isinstance(loops[0].iter, (ast.Tuple, ast.List)):
        return False
    names = [e.value if isinstance(e, ast.Constant) else None for e in loops[0].iter.elts]
    return all(isinstance(n, str) and n.split(".")[0] not in SENSITIVE | RUNNER_MODULES for n in names)


def _spelled_code(w: Walker, node: ast.Call, name: str, code: str) -> None:
    """exec("...") of code spelled in the file: judged like the file (code that does not parse never runs)."""
    try:
        inner = Module.from_source(w.module.path, code.encode("utf-8", "replace"))
    except (SourceError, RecursionError):
        return
    for occurrence in w.nested(inner):
        w.add(node, occurrence.code, f"in the code {name}() runs: {occurrence.message}", when=occurrence.when)
