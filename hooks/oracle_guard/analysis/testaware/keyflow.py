"""What a production expression is worth at a tested call: the data flow of OG966.

A condition or a lookup key in a function is evaluated with the function's parameters bound to the values
a base test passes (oracle_guard/analysis/testaware/evidence.py), through what the function derives from
them: locals assigned once, tuples, ``hash``/``len``/``repr``/``str``, slices, string methods, f-strings,
arithmetic.  The module's constant tables (literals, rows added at import, a JSON or CSV file beside the
code, a table imported from another module of the change) are values too.  Whatever cannot be evaluated
is MISSING, and a MISSING key selects nothing.
"""

from __future__ import annotations

import ast
import operator
from typing import Any, Callable, Optional

from oracle_guard.analysis.pysource import Module, SourceError, _module_files
from oracle_guard.analysis.testaware.evidence import MISSING, SeenCall, value

Reader = Callable[[str], Optional[bytes]]  # a file of the change, new side (None: not in the change)
FunctionNode = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_BUILTINS: dict[str, Callable[..., Any]] = {
    "len": len, "repr": repr, "str": str, "hash": hash, "tuple": tuple, "frozenset": frozenset, "sorted": sorted,
    "abs": abs, "int": int, "float": float, "bool": bool, "min": min, "max": max, "sum": sum, "round": round,
    "ord": ord, "chr": chr, "list": list, "type": lambda v: type(v).__name__,
}  # fmt: skip
_METHODS = frozenset(
    "lower upper strip lstrip rstrip casefold title capitalize split rsplit replace join encode decode "
    "startswith endswith get count index find zfill".split()
)
_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Mod: operator.mod,
    ast.FloorDiv: operator.floordiv, ast.BitXor: operator.xor, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
}  # fmt: skip
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.eq, ast.IsNot: operator.ne,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}  # fmt: skip
_BIG = 10_000  # a derived value this long is no key anyone spells


class Scope:
    """One function's names: its parameters, the locals it assigns once, the names it rebinds otherwise."""

    def __init__(
        self,
        func: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
        method: bool,
        nodes: list[ast.AST] | None = None,
    ) -> None:
        args = func.args
        positional = [a.arg for a in args.posonlyargs + args.args]
        self.skip_first = method and bool(positional) and positional[0] in ("self", "cls")
        self.positional = positional[1:] if self.skip_first else positional
        self.vararg = args.vararg.arg if args.vararg else None
        self.kwonly = [a.arg for a in args.kwonlyargs]
        self.kwarg = args.kwarg.arg if args.kwarg else None
        self.defaults: dict[str, ast.expr] = dict(
            zip(positional[len(positional) - len(args.defaults) :], args.defaults)
        )
        self.defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
        self.params = set(self.positional + self.kwonly) | {n for n in (self.vararg, self.kwarg) if n}
        assigned: dict[str, list[ast.expr | None]] = {}
        for node in own_nodes(func) if nodes is None else nodes:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                assigned.setdefault(node.targets[0].id, []).append(node.value)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                assigned.setdefault(node.id, []).append(None)
        # `x = expr` once (the Assign and its Name both counted): a derived value; any other rebinding hides it.
        self.locals = {n: v[0] for n, v in assigned.items() if len(v) == 2 and v[0] is not None}
        self.opaque = {n for n, v in assigned.items() if n not in self.locals}

    def bind(self, call: SeenCall) -> dict[str, Any] | None:
        """The parameters' values at CALL (MISSING where the test does not spell one), or None if it cannot be this
        function's call."""
        env: dict[str, Any] = {}
        args = list(call.args)
        if len(args) > len(self.positional) and not self.vararg:
            return None
        for name, arg in zip(self.positional, args):
            env[name] = arg
        if self.vararg:
            env[self.vararg] = tuple(args[len(self.positional) :])
        extra: dict[str, Any] = {}
        for key, arg in call.kwargs:
            if key in self.params and key not in (self.vararg, self.kwarg):
                env[key] = arg
            elif self.kwarg:
                extra[key] = arg
            else:
                return None
        if self.kwarg:
            env[self.kwarg] = extra
        for name in self.positional + self.kwonly:
            if name not in env:
                env[name] = value(self.defaults.get(name), {})
        return env

    def params_in(self, node: ast.AST, depth: int = 0) -> set[str]:
        """The parameters NODE reads, directly or through the locals assigned once."""
        found: set[str] = set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                if sub.id in self.params:
                    found.add(sub.id)
                elif sub.id in self.locals and depth < 10:
                    found |= self.params_in(self.locals[sub.id], depth + 1)
        return found

    def required(self) -> set[str]:
        """The positional parameters without a default: what every call passes."""
        return {p for p in self.positional if p not in self.defaults}

    def flows_from_params(self, node: ast.AST, depth: int = 0) -> bool:
        """Whether NODE reads a parameter, directly or through the locals assigned once."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                if sub.id in self.params:
                    return True
                if sub.id in self.locals and depth < 10 and self.flows_from_params(self.locals[sub.id], depth + 1):
                    return True
        return False


def own_nodes(func: ast.AST) -> list[ast.AST]:
    """Every node of FUNC's own body: nested functions, classes and lambdas are scopes of their own."""
    found: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(func))
    while stack:
        node = stack.pop()
        found.append(node)
        if isinstance(node, _SCOPES):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found


def derive(node: ast.AST, env: dict[str, Any], scope: Scope | None, consts: dict[str, Any], depth: int = 0) -> Any:
    """NODE's value with ENV bound, or MISSING."""
    if depth > 40:
        return MISSING
    try:
        found = _derive(node, env, scope, consts, depth)
    except Exception:  # a derivation the test's value does not support (len of an int): no value, not a crash
        return MISSING
    if isinstance(found, (str, bytes, tuple, list)) and len(found) > _BIG:
        return MISSING
    return found


def _derive(node: ast.AST, env: dict[str, Any], scope: Scope | None, consts: dict[str, Any], depth: int) -> Any:
    def again(sub: ast.AST, inner: dict[str, Any] = env, inner_scope: Scope | None = scope) -> Any:
        return derive(sub, inner, inner_scope, consts, depth + 1)

    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if scope is not None and node.id in scope.locals and node.id not in env.get("\0seen", ()):
            seen = (*env.get("\0seen", ()), node.id)
            return again(scope.locals[node.id], {**env, "\0seen": seen})
        if scope is not None and node.id in scope.opaque:
            return MISSING
        if node.id in env and node.id != "\0seen":
            return env[node.id]
        return consts.get(node.id, MISSING)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [again(e) for e in node.elts]
        if any(i is MISSING for i in items):
            return MISSING
        return {ast.Tuple: tuple, ast.List: list, ast.Set: frozenset}[type(node)](items)
    if isinstance(node, ast.Dict):
        keys, values = [again(k) if k else MISSING for k in node.keys], [again(v) for v in node.values]
        return MISSING if any(i is MISSING for i in keys + values) else dict(zip(keys, values))
    if isinstance(node, ast.UnaryOp):
        operand = again(node.operand)
        if operand is MISSING:
            return MISSING
        unary: dict[type, Callable[[Any], Any]] = {
            ast.USub: operator.neg,
            ast.UAdd: operator.pos,
            ast.Not: operator.not_,
            ast.Invert: operator.invert,
        }
        return unary[type(node.op)](operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = again(node.left), again(node.right)
        if left is MISSING or right is MISSING or isinstance(left, str) and isinstance(node.op, ast.Mod):
            return MISSING
        if isinstance(node.op, ast.Mult) and (
            isinstance(left, (str, bytes, tuple, list)) or isinstance(right, (str, bytes, tuple, list))
        ):
            return MISSING
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.BoolOp):
        result: Any = MISSING
        for sub in node.values:
            result = again(sub)
            if result is MISSING:
                return MISSING
            if bool(result) == isinstance(node.op, ast.Or):
                return result
        return result
    if isinstance(node, ast.Compare):
        left = again(node.left)
        for op, comparator in zip(node.ops, node.comparators):
            right = again(comparator)
            if left is MISSING or right is MISSING:
                return MISSING
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        test = again(node.test)
        return MISSING if test is MISSING else again(node.body if test else node.orelse)
    if isinstance(node, ast.Subscript):
        container, index = again(node.value), again(node.slice)
        return MISSING if container is MISSING or index is MISSING else container[index]
    if isinstance(node, ast.Slice):
        parts = [again(p) if p is not None else None for p in (node.lower, node.upper, node.step)]
        return MISSING if MISSING in parts else slice(*parts)
    if isinstance(node, ast.JoinedStr):
        parts = [again(v) for v in node.values]
        return MISSING if MISSING in parts else "".join(str(p) for p in parts)
    if isinstance(node, ast.FormattedValue):
        inner = again(node.value)
        spec = again(node.format_spec) if node.format_spec else ""
        if inner is MISSING or spec is MISSING:
            return MISSING
        converters: dict[int, Callable[[Any], Any]] = {115: str, 114: repr, 97: ascii}
        inner = converters.get(node.conversion, lambda v: v)(inner)
        return format(inner, spec)
    if isinstance(node, ast.Call) and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args):
        args = [again(a) for a in node.args]
        if MISSING in args:
            return MISSING
        if isinstance(node.func, ast.Name) and node.func.id in _BUILTINS and node.func.id not in env:
            if node.func.id == "hash" and _has_text(args[0]):
                return MISSING  # a string's hash differs per process: no test can rely on it
            return _BUILTINS[node.func.id](*args)
        if isinstance(node.func, ast.Attribute) and node.func.attr in _METHODS:
            owner = again(node.func.value)
            if isinstance(owner, (str, bytes, tuple, list, dict)):
                return getattr(owner, node.func.attr)(*args)
    return MISSING


def _has_text(item: Any) -> bool:
    if isinstance(item, (str, bytes)):
        return True
    return isinstance(item, (tuple, frozenset)) and any(_has_text(i) for i in item)


# -- the module's constant tables --------------------------------------------------------------------------------


def constants(module: Module, reader: Reader | None, depth: int = 0) -> dict[str, Any]:
    """The module-level names bound to a constant: literals, rows added at import, a data file of the change,
    a constant imported from another module of the change."""
    found: dict[str, Any] = {}
    rebound: set[str] = set()
    for node in module.tree.body:
        target, expr = _bound(node)
        if target is not None and expr is not None:
            if target in found or target in rebound:
                rebound.add(target)
                found.pop(target, None)
                continue
            literal = derive(expr, {}, None, found)
            if literal is MISSING and reader is not None:
                literal = _data_file(expr, module.path, reader)
            if literal is not MISSING:
                found[target] = literal
            continue
        _add_rows(node, found)
        if isinstance(node, ast.ImportFrom) and reader is not None and depth == 0:
            dotted = "." * node.level + (node.module or "")
            for alias in node.names:
                imported = _imported(dotted, alias.name, module.path, reader)
                if imported is not MISSING:
                    found[alias.asname or alias.name] = imported
    return found


def _bound(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id, node.value
    return None, None


def _add_rows(node: ast.stmt, found: dict[str, Any]) -> None:
    """``TABLE[key] = value`` and ``TABLE.update({...})`` at import: more rows of a constant table."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
        target = node.targets[0]
        if isinstance(target.value, ast.Name) and isinstance(found.get(target.value.id), dict):
            key, row = derive(target.slice, {}, None, found), derive(node.value, {}, None, found)
            if key is not MISSING and row is not MISSING:
                found[target.value.id] = {**found[target.value.id], key: row}
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        if (
            isinstance(call.func, ast.Attribute)
            and call.func.attr == "update"
            and isinstance(call.func.value, ast.Name)
        ):
            name = call.func.value.id
            rows = derive(call.args[0], {}, None, found) if len(call.args) == 1 else MISSING
            if isinstance(found.get(name), dict) and isinstance(rows, dict):
                found[name] = {**found[name], **rows}


def _imported(dotted: str, name: str, importer: str, reader: Reader) -> Any:
    for path in _module_files(dotted, importer):
        data = reader(path)
        if data is None:
            continue
        try:
            other = Module.from_source(path, data)
        except (SourceError, RecursionError, ValueError):
            return MISSING
        return constants(other, reader, depth=1).get(name, MISSING)
    return MISSING


def _data_file(expr: ast.expr, importer: str, reader: Reader) -> Any:
    """The table a JSON or CSV file of the change holds, when EXPR names it (``json.load(open(HERE / "a.json"))``)."""
    names = [
        n.value
        for n in ast.walk(expr)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.endswith((".json", ".csv"))
    ]
    if not names:
        return MISSING
    import csv  # only a module that names a data file pays for the parsers
    import io
    import json

    folder = importer.rsplit("/", 1)[0] + "/" if "/" in importer else ""
    for name in names:
        for path in dict.fromkeys([folder + name.lstrip("./"), name.lstrip("./")]):
            data = reader(path)
            if data is None:
                continue
            try:
                if path.endswith(".json"):
                    loaded = json.loads(data)
                    return loaded if isinstance(loaded, dict) else MISSING
                rows = list(csv.reader(io.StringIO(data.decode("utf-8", "replace"))))
                return {r[0]: _cell(r[1]) for r in rows if len(r) >= 2}
            except ValueError:
                return MISSING
    return MISSING


def _cell(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return text
