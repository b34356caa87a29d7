"""OG965, comparisons that cannot fail: an ``__eq__`` returning True or ignoring its operand, one answering
True for an operand of another type, a constant ``__hash__``/``__len__``, an always-true ``__bool__``.
oracle_guard/analysis/testaware/finder.py calls it for every method of a class."""

from __future__ import annotations

import ast
from typing import Callable

from oracle_guard.analysis.testaware.facts import source

BINARY_DUNDERS = frozenset(
    {
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__contains__",
        "__instancecheck__",
        "__subclasscheck__",
    }
)
SCALARS = frozenset({"str", "int", "float", "bytes", "complex"})
CONTAINERS = frozenset({"list", "tuple", "dict", "set", "frozenset", "collections.OrderedDict", "collections.deque"})
# Operations that make two different values compare the same: a case fold, a modulus, a length, an order or a
# duplicate dropped, a rounding. Applied to the operands where the base compared them whole, part is ignored.
FOLDS = frozenset({"lower", "upper", "casefold", "strip", "lstrip", "rstrip", "title", "capitalize"})
# (`len` is left out: a length check before the element-wise comparison is a shortcut, not a fold.)
FOLDING_CALLS = frozenset({"round", "int", "abs", "set", "frozenset", "sorted"})
# (`__hash__` is left out: a hash may be coarser than equality, and dropping a part of it fails no check.)
NARROWING = frozenset({"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__contains__", "__bool__"})
# Folds that drop only order or repeats: what equality means for a set-like field of a plain class
# (packaging's `frozenset(self.extras)`), a weakening only on a builtin container's subclass.
ORDER_FOLDS = frozenset({"set()", "frozenset()", "sorted()"})
# `len(self)`, `bool(self)`: the object handed to a builtin reads what its own dunder reads.
SELF_DUNDERS = {"len": "__len__", "bool": "__bool__", "iter": "__iter__", "list": "__iter__", "tuple": "__iter__"}
COMPARISONS = frozenset({"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"})


def dunder(
    cls: ast.ClassDef, node: ast.FunctionDef | ast.AsyncFunctionDef, qualify: Callable[[ast.AST], str]
) -> list[tuple[ast.AST, str]]:
    """OG965 in one method of CLS: (where, message) for each way it cannot fail."""
    found: list[tuple[ast.AST, str]] = []
    name = node.name
    if name not in BINARY_DUNDERS and name not in ("__bool__", "__hash__", "__len__"):
        return found
    bases = {qualify(b) for b in cls.bases}
    where = f"{cls.name}.{name}"
    if name in COMPARISONS and bases & SCALARS:
        found.append((node, f"{where} overrides comparison on a {sorted(bases & SCALARS)[0]} subclass"))
        return found
    if name in ("__eq__", "__ne__") and bases & CONTAINERS and not _whole(node, qualify):
        # The method's own folds (an element-wise loop, boltons' OrderedMultiDict, folds nothing).
        folds = sorted(aspects(cls, node, depth=2)[1])
        if folds:
            kind = sorted(bases & CONTAINERS)[0]
            message = f"{where} compares a {kind} subclass through {', '.join(f'`{f}`' for f in folds)}"
            found.append((node, f"{message}: elements it leaves out can differ"))
            return found
    params = [a.arg for a in node.args.posonlyargs + node.args.args]
    returns = [r for r in ast.walk(node) if isinstance(r, ast.Return)]
    values = [r.value for r in returns]
    if name in BINARY_DUNDERS and len(params) >= 2:
        other = params[1]
        used = any(isinstance(n, ast.Name) and n.id == other for n in ast.walk(node))
        truthy = name != "__ne__"
        if not used and not _raises_only(node):
            found.append((node, f"{where} ignores `{other}`: it cannot fail"))
        elif (
            values
            and all(_constant(v) for v in values)
            and any(_truthy(v) == truthy for v in values)
            and (all(_truthy(v) == truthy for v in values) or not _weighs_both(node, params[0], other))
        ):
            found.append((node, f"{where} returns a constant: it cannot fail"))
        elif _true_for_foreign(node, other, truthy):
            found.append((node, f"{where} answers {truthy} for an operand of another type: it cannot fail"))
    elif name == "__bool__" and values and all(_constant(v) and _truthy(v) is True for v in values):
        found.append((node, f"{where} is always true: any `assert obj` passes"))
    elif name in ("__hash__", "__len__") and values and all(_constant(v) for v in values):
        if name == "__hash__" or any(_truthy(v) for v in values):
            found.append((node, f"{where} returns a constant whatever the object holds"))
    return found


def _whole(node: ast.FunctionDef | ast.AsyncFunctionDef, qualify: Callable[[ast.AST], str]) -> bool:
    """Whether a container subclass's comparison hands the whole value to the builtin's: ``super().__eq__(other)``,
    ``list.__eq__(self, other)``, ``list(self) == list(other)``."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in ("__eq__", "__ne__"):
            owner = sub.func.value
            if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
                return True
            if qualify(owner) in CONTAINERS:
                return True
        if isinstance(sub, ast.Compare) and all(
            isinstance(side, ast.Call) and qualify(side.func) in CONTAINERS and len(side.args) == 1
            for side in [sub.left, *sub.comparators]
        ):
            return True
    return False


def aspects(
    cls: ast.ClassDef, method: ast.FunctionDef | ast.AsyncFunctionDef, depth: int = 0
) -> tuple[set[str], set[str]]:
    """What METHOD compares: the attributes of ``self`` it reads (through the class's own helper methods, a
    couple of levels deep), and the folds it applies (``.lower()``, ``%``, ``len``, ``[-1]``, a slice)."""
    methods = {m.name: m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
    me = method.args.args[0].arg if method.args.args else "self"
    fields: set[str] = set()
    folds: set[str] = set()
    for sub in ast.walk(method):
        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == me:
            if sub.attr in methods and depth < 2 and methods[sub.attr] is not method:
                more, more_folds = aspects(cls, methods[sub.attr], depth + 1)
                fields |= more
                folds |= more_folds
            else:
                fields.add(sub.attr)
        elif isinstance(sub, ast.Call):
            dunder = SELF_DUNDERS.get(sub.func.id) if isinstance(sub.func, ast.Name) else None
            if dunder and sub.args and isinstance(sub.args[0], ast.Name) and sub.args[0].id == me:
                if dunder in methods and depth < 2 and methods[dunder] is not method:
                    more, more_folds = aspects(cls, methods[dunder], depth + 1)
                    fields |= more
                    folds |= more_folds
                continue
            if isinstance(sub.func, ast.Attribute) and sub.func.attr in FOLDS:
                folds.add(f".{sub.func.attr}()")
            elif isinstance(sub.func, ast.Name) and sub.func.id in FOLDING_CALLS:
                folds.add(f"{sub.func.id}()")
        elif isinstance(sub, ast.BinOp) and isinstance(sub.op, (ast.Mod, ast.FloorDiv)):
            folds.add("%" if isinstance(sub.op, ast.Mod) else "//")
        elif isinstance(sub, ast.Subscript) and isinstance(sub.slice, (ast.Slice, ast.Constant, ast.UnaryOp)):
            folds.add(f"[{ast.unparse(sub.slice)}]")
    return fields, folds


def narrowed(cls: ast.ClassDef, node: ast.FunctionDef | ast.AsyncFunctionDef, base: ast.ClassDef) -> str | None:
    """How NODE (a comparison dunder of CLS) compares less than the base's version of it, or None."""
    before = next(
        (m for m in base.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == node.name), None
    )
    if before is None or ast.dump(before) == ast.dump(node) or _hands_on_self(node):
        # Unchanged (what it calls may have changed, and is judged there), or the whole object handed to a
        # helper (rich's `hash(_hash_getter(self))`, `astuple(self)`): what that reads is not spelled here.
        return None
    old_fields, old_folds = aspects(base, before)
    new_fields, new_folds = aspects(cls, node)
    where = f"{cls.name}.{node.name}"
    dropped = sorted(old_fields - new_fields)
    # No field at all is a delegation (`not self == other`, `super().__eq__(other)`), judged where it lands.
    if dropped and new_fields and new_fields <= old_fields:
        return f"{where} no longer compares {', '.join(f'`{d}`' for d in dropped)}, which the base compared"
    added = sorted(new_folds - old_folds)
    if not {qualify_name(b) for b in cls.bases} & (CONTAINERS | SCALARS):
        added = [a for a in added if a not in ORDER_FOLDS]
    indexes = [a for a in added if _constant_index(a)]
    if len(indexes) > 1:
        # `[0]`, `[1]`, `[2]`: the parts compared one by one, not one part instead of the whole.
        added = [a for a in added if a not in indexes]
    if added:
        return f"{where} now compares through {', '.join(f'`{a}`' for a in added)}: it ignores part of what the base compared"
    return None


def qualify_name(node: ast.expr) -> str:
    """A base class as spelled (``list``, ``collections.OrderedDict``)."""
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError):
        return ""


def _constant_index(fold: str) -> bool:
    inner = fold[1:-1] if fold.startswith("[") and fold.endswith("]") else ""
    return inner.lstrip("-").isdigit()


def _hands_on_self(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    me = node.args.args[0].arg if node.args.args else "self"
    return any(
        isinstance(sub, ast.Call)
        and not (isinstance(sub.func, ast.Name) and sub.func.id in ("isinstance", "type", "id", "len"))
        and any(isinstance(a, ast.Name) and a.id == me for a in sub.args)
        for sub in ast.walk(node)
    )


def _weighs_both(node: ast.FunctionDef | ast.AsyncFunctionDef, me: str, other: str) -> bool:
    """Whether a comparison in NODE sets something of ME against something of OTHER (``other[k] != self[k]``,
    ``len(other) != len(self)``, through names bound from either): then ``return False`` ... ``return True``
    answers for the operand. Identity (``self is other``) weighs nothing."""
    mine, theirs = {me}, {other}
    bindings = []
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and sub.value is not None:
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
            bindings.append((targets, sub.value))
        elif isinstance(sub, (ast.For, ast.AsyncFor, ast.comprehension)):
            bindings.append(([sub.target], sub.iter))
    for _ in range(5):  # names bound from names bound from self (selfi -> selfk): a few steps are enough
        grew = False
        for targets, value in bindings:
            used = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
            bound = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            for side in (mine, theirs):
                if used & side and not bound <= side:
                    side |= bound
                    grew = True
        if not grew:
            break
    for sub in ast.walk(node):
        if isinstance(sub, ast.Compare) and not all(isinstance(op, (ast.Is, ast.IsNot)) for op in sub.ops):
            used = {n.id for n in ast.walk(sub) if isinstance(n, ast.Name)}
            if used & mine and used & theirs:
                return True
    return False


def _raises_only(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return all(isinstance(s, (ast.Raise, ast.Pass)) for s in body) or all(
        isinstance(s, ast.Return) and _is_not_implemented(s.value) for s in body
    )


def _is_not_implemented(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Name) and node.id == "NotImplemented"


def _constant(node: ast.expr | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and not _is_not_implemented(node))


def _truthy(node: ast.expr | None) -> bool:
    return bool(node.value) if isinstance(node, ast.Constant) else False


def _foreign_test(test: ast.expr, other: str) -> bool:
    """``not isinstance(other, T)``, ``type(other) is not T``, ``other.__class__ != ...``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = test.operand
        return isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "isinstance"
    if isinstance(test, ast.Compare) and any(isinstance(op, (ast.IsNot, ast.NotEq)) for op in test.ops):
        text = source(test)
        return other in text and ("type(" in text or "__class__" in text)
    return False


def _true_for_foreign(node: ast.FunctionDef | ast.AsyncFunctionDef, other: str, truthy: bool) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.If) and _foreign_test(sub.test, other):
            for stmt in sub.body:
                if isinstance(stmt, ast.Return) and _constant(stmt.value) and _truthy(stmt.value) == truthy:
                    return stmt.value is not None
        if isinstance(sub, ast.Try):
            for handler in sub.handlers:
                if not _broad(handler.type):
                    continue  # the project's own exception (requests' CookieConflictError): an answer, not a foreign type
                for stmt in handler.body:
                    if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Constant):
                        if _truthy(stmt.value) == truthy:
                            return True
    return False


# What an operand of another type raises in a comparison, and the catch-alls.
_BROAD = frozenset(
    {"Exception", "BaseException", "AttributeError", "TypeError", "ValueError", "KeyError", "IndexError"}
    | {"LookupError", "NotImplementedError", "ArithmeticError", "RuntimeError"}
)


def _broad(kind: ast.expr | None) -> bool:
    """Whether an ``except`` clause catches what a foreign operand raises (a bare one does; a builtin does)."""
    if kind is None:
        return True
    kinds = kind.elts if isinstance(kind, ast.Tuple) else [kind]
    return any(not isinstance(k, (ast.Name, ast.Attribute)) or _dotted_tail(k) in _BROAD for k in kinds)


def _dotted_tail(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


# -- mocks: objects built to equal anything ------------------------------------------------------

MOCKS = frozenset(
    f"{root}.{name}"
    for root in ("unittest.mock", "mock")
    for name in ("Mock", "MagicMock", "NonCallableMock", "NonCallableMagicMock", "AsyncMock", "PropertyMock", "ANY")
)
ANY = ("unittest.mock.ANY", "mock.ANY")


def mock_bases(node: ast.ClassDef, qualify: Callable[[ast.AST], str]) -> list[tuple[ast.AST, str]]:
    """A class that subclasses a mock: (where, message)."""
    return [
        (base, f"class {node.name} subclasses {qualify(base)}: it compares equal to anything")
        for base in node.bases
        if qualify(base) in MOCKS
    ]


def mock_built(name: str) -> str | None:
    """The message for a call building a mock, else None."""
    if name in MOCKS and name.rpartition(".")[2] != "ANY":
        return f"production code builds a {name}, which accepts and equals anything"
    return None


ANY_MESSAGE = "production code uses mock.ANY, which compares equal to anything"
