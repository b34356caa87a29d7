"""A test's parameter sets, and the id pytest gives each (part of sametest.py's notion of the same test).

Stacked ``@pytest.mark.parametrize`` decorators and a class's multiply, nearest
the function first; ``pytest.param(..., id=)``, ``ids=`` and the ids pytest
derives from literal values (escaped, de-duplicated as pytest does); a
parametrized fixture that hands its param to the test.  An id that cannot be told
statically is None.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Literal, NamedTuple

from oracle_guard.analysis.pysource import FunctionNode, Module
from oracle_guard.analysis.sametest.spelling import _body

if TYPE_CHECKING:
    from typing import TypeGuard  # Python 3.10+

MAX_CASES = 512  # parameter sets of one test, and loop iterations unrolled in one case
_UNKNOWN = object()


class _Param(NamedTuple):
    values: dict[str, ast.expr]  # argname -> value, for the body
    id: str | None


def _constants(tree: ast.Module) -> dict[str, ast.expr]:
    found: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found[node.targets[0].id] = node.value
    return found


def _elements(node: ast.expr, constants: dict[str, ast.expr], depth: int = 0) -> list[ast.expr] | None:
    """The items of a literal sequence (a display, a module constant, ``range`` of constants)."""
    if isinstance(node, ast.Name) and node.id in constants and depth < 5:
        return _elements(constants[node.id], constants, depth + 1)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return list(node.elts)
    if isinstance(node, ast.Dict) and None not in node.keys:
        return [k for k in node.keys if k is not None]
    if (  # `{"1": 1, "2": 2}.items()`, `.keys()`, `.values()` of a literal dict (or a constant bound to one)
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("items", "keys", "values")
        and not node.args
        and not node.keywords
        and depth < 5
    ):
        table = constants.get(node.func.value.id) if isinstance(node.func.value, ast.Name) else node.func.value
        if isinstance(table, ast.Dict) and None not in table.keys:
            keys = [k for k in table.keys if k is not None]
            if node.func.attr == "keys":
                return keys
            if node.func.attr == "values":
                return list(table.values)
            return [ast.Tuple([k, v], ast.Load()) for k, v in zip(keys, table.values)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" and not node.keywords:
        try:
            bounds = [ast.literal_eval(a) for a in node.args]
            items = list(range(*bounds))
        except (ValueError, TypeError, SyntaxError):
            return None
        return [ast.Constant(i) for i in items] if len(items) <= MAX_CASES else None
    return None


def _escaped(text: str | bytes) -> str:
    """pytest's ascii_escaped: printable ASCII as it is, the rest as escapes."""
    if isinstance(text, bytes):
        text = text.decode("ascii", "backslashreplace")
    elif not text.isascii():
        text = text.encode("unicode_escape").decode("ascii")
    return text.translate(_NON_PRINTABLE)


_NON_PRINTABLE = {i: f"\\x{i:02x}" for i in range(128) if i not in range(32, 127)} | {
    ord("\t"): "\\t",
    ord("\r"): "\\r",
    ord("\n"): "\\n",
}


def _value_id(value: ast.expr, argname: str, index: int, module: Module, constants: dict[str, ast.expr]) -> str | None:
    """The id pytest derives from one parameter value; None when it cannot be told here."""
    if (
        isinstance(value, ast.Name)
        and value.id in constants
        and isinstance(constants[value.id], (ast.Constant, ast.UnaryOp))
    ):
        value = constants[value.id]
    try:
        literal = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        literal = _UNKNOWN
    if isinstance(literal, (str, bytes)):
        return _escaped(literal) if len(literal) <= 100 else None  # long strings: version-dependent
    if literal is None or isinstance(literal, (int, float, complex, bool)):
        return str(literal)
    if literal is not _UNKNOWN:
        return f"{argname}{index}"  # a tuple, list, dict or set of literals
    if isinstance(value, ast.Lambda):
        return "<lambda>"
    if isinstance(value, ast.Name):
        defined = {
            n.name for n in module.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        }
        if value.id in defined or value.id in module.names.aliases:
            return (module.names.qualify(value) or value.id).rsplit(".", 1)[-1]  # a function's or class's __name__
        return None
    if isinstance(
        value, (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp, ast.JoinedStr)
    ):
        return f"{argname}{index}"
    return None  # an attribute, a call: an enum member or an object with __name__ may be anything


def _is_param_call(node: ast.expr, module: Module) -> TypeGuard[ast.Call]:
    return isinstance(node, ast.Call) and (module.names.qualify(node.func) or "") == "pytest.param"


def _parametrize(
    deco: ast.expr, module: Module, constants: dict[str, ast.expr]
) -> list[_Param] | None | Literal[False]:
    """The parameter sets of one decorator; False when it is no parametrize, None when unknown."""
    deco = module.names.expand(deco)
    if not isinstance(deco, ast.Call) or (module.names.qualify(deco.func) or "") != "pytest.mark.parametrize":
        return False
    kw = {k.arg: k.value for k in deco.keywords if k.arg}
    argnames_node = deco.args[0] if deco.args else kw.get("argnames")
    argvalues_node = deco.args[1] if len(deco.args) > 1 else kw.get("argvalues")
    if argnames_node is None or argvalues_node is None:
        return None
    try:
        raw = ast.literal_eval(argnames_node)
    except (ValueError, TypeError, SyntaxError):
        return None
    argnames = (
        [a.strip() for a in raw.split(",") if a.strip()]
        if isinstance(raw, str)
        else list(raw)
        if isinstance(raw, (list, tuple))
        else None
    )
    if not argnames or not all(isinstance(a, str) for a in argnames):
        return None
    rows = _elements(argvalues_node, constants)
    if not rows or len(rows) > MAX_CASES:
        return None
    indirect = kw.get("indirect")
    try:
        indirect_value = ast.literal_eval(indirect) if indirect is not None else False
    except (ValueError, TypeError, SyntaxError):
        return None
    direct = [
        a
        for a in argnames
        if not (indirect_value is True or (isinstance(indirect_value, (list, tuple)) and a in indirect_value))
    ]
    ids_node = kw.get("ids")
    explicit: list[object] | None = None
    if ids_node is not None:
        items = _elements(ids_node, constants)
        if items is None:
            return None  # ids=callable or computed: the ids cannot be told
        explicit = [ast.literal_eval(i) if isinstance(i, ast.Constant) else _UNKNOWN for i in items]
    params: list[_Param] = []
    for index, row in enumerate(rows):
        given_id: object = None
        if _is_param_call(row, module):
            values = list(row.args)
            id_kw = next((k.value for k in row.keywords if k.arg == "id"), None)
            if id_kw is not None:
                given_id = id_kw.value if isinstance(id_kw, ast.Constant) else _UNKNOWN
        elif len(argnames) == 1:
            values = [row]
        elif isinstance(row, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in row.elts):
            values = list(row.elts)
        else:
            return None
        if len(values) != len(argnames):
            return None
        if given_id is None and explicit is not None and index < len(explicit):
            given_id = explicit[index]
        if given_id is _UNKNOWN:
            case_id = None
        elif isinstance(given_id, str):
            case_id = _escaped(given_id)
        elif given_id is not None:
            case_id = str(given_id)
        else:
            parts = [_value_id(v, a, index, module, constants) for v, a in zip(values, argnames)]
            known_parts = [p for p in parts if p is not None]
            case_id = "-".join(known_parts) if len(known_parts) == len(parts) else None
        params.append(_Param({a: v for a, v in zip(argnames, values) if a in direct}, case_id))
    return _unique(params)


def _unique(params: list[_Param]) -> list[_Param]:
    """pytest's suffixes for ids that are not unique (``a0``, ``a1``; ``1_0`` after a digit)."""
    ids = [p.id for p in params]
    if None in ids or len(set(ids)) == len(ids):
        return params
    counts = {i: ids.count(i) for i in ids}
    taken = set(ids)
    next_suffix: dict[str, int] = {}
    out = []
    for p in params:
        new_id = p.id
        if counts[p.id] > 1:
            assert p.id is not None
            sep = "_" if p.id and p.id[-1].isdigit() else ""
            n = next_suffix.get(p.id, 0)
            new_id = f"{p.id}{sep}{n}"
            while new_id in taken:
                n += 1
                new_id = f"{p.id}{sep}{n}"
            next_suffix[p.id] = n + 1
        out.append(_Param(p.values, new_id))
    return out


def _parameter_sets(
    fn: FunctionNode, classes: list[ast.ClassDef], module: Module, constants: dict[str, ast.expr]
) -> list[_Param] | None:
    """Every parameter set, in pytest's id order: the decorator nearest the function first, then the classes'."""
    decorators = list(reversed(fn.decorator_list))
    for cls in reversed(classes):
        decorators += list(reversed(cls.decorator_list))
    sets: list[_Param] = [_Param({}, "")]
    for deco in decorators:
        found = _parametrize(deco, module, constants)
        if found is False:
            continue
        if found is None or len(sets) * len(found) > MAX_CASES:
            return None
        sets = [
            _Param(
                {**outer.values, **inner.values},
                None if outer.id is None or inner.id is None else (f"{outer.id}-{inner.id}" if outer.id else inner.id),
            )
            for inner in found
            for outer in sets
        ]
    # A parametrized fixture that hands its param to the test (`return request.param`) is a
    # parameter too: the class under test given as a fixture is written in like one.
    taken = set().union(*(p.values for p in sets)) if sets else set()
    for arg in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
        if arg.arg in taken or arg.arg in ("self", "cls", "request"):
            continue
        values = _fixture_params(arg.arg, classes, module, constants)
        if values is None:
            continue
        if len(sets) * len(values) > MAX_CASES:
            return None
        sets = [
            _Param({**outer.values, **({arg.arg: v} if v is not None else {})}, None) for v in values for outer in sets
        ]
    return sets


def _fixture_params(
    name: str, classes: list[ast.ClassDef], module: Module, constants: dict[str, ast.expr]
) -> list[ast.expr | None] | None:
    """The params of fixture NAME defined in the module or the test's classes: each value when the
    fixture returns `request.param` as it is, else None per param; None when NAME is no such fixture."""
    scopes = [module.tree.body] + [c.body for c in classes]
    found = None
    for body in scopes:
        for node in body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for deco in node.decorator_list:
                if not (isinstance(deco, ast.Call) and (module.names.qualify(deco.func) or "") == "pytest.fixture"):
                    continue
                kw = {k.arg: k.value for k in deco.keywords if k.arg}
                given = kw.get("name")
                if (given.value if isinstance(given, ast.Constant) else node.name) == name and "params" in kw:
                    found = (node, kw["params"])
    if found is None:
        return None
    node, params = found
    items = _elements(params, constants)
    if items is None:
        return None
    items = [i.args[0] if _is_param_call(i, module) and i.args else i for i in items]
    body = _body(node)
    passes = (
        len(body) == 1
        and isinstance(body[0], (ast.Return, ast.Expr))
        and ast.unparse(getattr(body[0], "value", None) or ast.Constant(None))
        in ("request.param", "(yield request.param)")
    )
    return [i if passes else None for i in items]
