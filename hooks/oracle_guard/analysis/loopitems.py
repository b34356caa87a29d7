"""What a ``for`` loop runs over, when the source spells it (check counting: checksites, checknames).

``for name in names: assert getattr(x, name) == getattr(y, name)`` is one check per name only when the
names are known: a literal in the loop header, a module constant, the parameter's default (itself a
literal, a class attribute or a module constant), or a class attribute (``self.NAMES``, ``cls.NAMES``,
``type(self).NAMES``, ``TestX.NAMES``, looked up from the class the test runs in, then its bases).
Each is trusted only while nothing in the module rebinds or mutates it: a name stored to again,
deleted, declared global, changed in place (``.append``, ``[i] =``, ``+=``) or named by a ``setattr``
means the spelled items no longer say what the loop runs over, and the loop counts once.
"""

from __future__ import annotations

import ast

from oracle_guard.analysis.pysource import FunctionNode

# Methods that change a list, set or dict in place.
MUTATORS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "remove",
        "clear",
        "sort",
        "reverse",
        "add",
        "discard",
        "update",
        "popitem",
        "setdefault",
        "intersection_update",
        "difference_update",
        "symmetric_difference_update",
        "__setitem__",
        "__delitem__",
        "__iadd__",
    }
)
# Ways to rebind anything by a name computed at run time: nothing spelled can be trusted beside them.
DYNAMIC = frozenset({"globals", "vars", "locals", "exec", "eval", "__dict__", "__setattr__"})
MAX_DEPTH = 5  # a constant bound to a constant, a class to its base


def _owner_name(node: ast.expr) -> str | None:
    """`NAMES` for `NAMES`, `self.NAMES`-style chains end at their attribute."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


class _Touched(ast.NodeVisitor):
    """Every name and attribute the module stores to, deletes or mutates, once per module."""

    def __init__(self) -> None:
        self.stores: dict[str, int] = {}
        self.changed: set[str] = set()  # names mutated in place, declared global, or named by a setattr
        self.attributes: set[str] = set()  # attributes stored, deleted or mutated anywhere
        self.dynamic = False

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.stores[node.id] = self.stores.get(node.id, 0) + 1
        if node.id in DYNAMIC:
            self.dynamic = True

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.attributes.add(node.attr)
        if node.attr in DYNAMIC:
            self.dynamic = True
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self.changed.update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.changed.update(node.names)

    def _mutated(self, target: ast.expr) -> None:
        name = _owner_name(target)
        if name is not None:
            (self.changed if isinstance(target, ast.Name) else self.attributes).add(name)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self._mutated(node.value)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._mutated(node.target)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in MUTATORS:
            self._mutated(func.value)
        called = _owner_name(func)
        if called in ("setattr", "delattr"):  # setattr(obj, "NAMES", ...), monkeypatch.setattr("mod.NAMES", ...)
            named = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if not named:
                self.dynamic = True
            for text in named:
                last = text.rsplit(".", 1)[-1]
                self.changed.add(last)
                self.attributes.add(last)
        self.generic_visit(node)


def _literal(node: ast.expr) -> list[ast.expr] | None:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return list(node.elts)
    if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        return [k for k in node.keys if k is not None]
    return None


def _parameter_default(fn: FunctionNode, name: str) -> ast.expr | None | bool:
    """The default of FN's parameter NAME; None without one; False when NAME is no parameter."""
    positional = [*fn.args.posonlyargs, *fn.args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(fn.args.defaults)) + list(fn.args.defaults)
    for arg, default in [*zip(positional, defaults), *zip(fn.args.kwonlyargs, fn.args.kw_defaults)]:
        if arg.arg == name:
            return default
    if name in (fn.args.vararg.arg if fn.args.vararg else None, fn.args.kwarg.arg if fn.args.kwarg else None):
        return None
    return False


def _stored_in(fn: FunctionNode, name: str) -> bool:
    """Whether FN binds NAME itself (an assignment, a loop target, an import), shadowing what it held."""
    return any(
        isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del))
        for node in ast.walk(fn)
    ) or any(
        isinstance(node, (ast.Import, ast.ImportFrom))
        and any((a.asname or a.name.split(".")[0]) == name for a in node.names)
        for node in ast.walk(fn)
    )


class LoopItems:
    """The items of the loops of one module, as far as its source spells them and nothing changes them."""

    def __init__(self, tree: ast.Module, constants: dict[str, ast.expr], classes: dict[str, ast.ClassDef]) -> None:
        self.constants = constants
        self.classes = classes
        self.touched = _Touched()
        self.touched.visit(tree)
        self._owners = {id(n): c for c in classes.values() for n in c.body}

    def items(self, node: ast.expr, fn: FunctionNode | None, cls: ast.ClassDef | None) -> list[ast.expr] | None:
        """What a loop over NODE in FN (run through class CLS) runs over; None if the source does not say."""
        if self.touched.dynamic:
            return _literal(node)
        if isinstance(node, ast.Name):
            if fn is not None:
                default = _parameter_default(fn, node.id)
                if default is not False:  # a parameter: its default, unless the body rebinds or changes it
                    if not isinstance(default, ast.expr) or _stored_in(fn, node.id) or node.id in self.touched.changed:
                        return None
                    return self._default(default, self._owners.get(id(fn)), fn.lineno)
                if _stored_in(fn, node.id):
                    return None  # a local of the same name shadows the module's
            return self.constant(node.id)
        if isinstance(node, ast.Attribute):
            owner = self._class_of(node.value, fn, cls)
            return self._class_attribute(owner, node.attr, 0) if owner is not None else None
        return _literal(node)

    def constant(self, name: str, depth: int = 0) -> list[ast.expr] | None:
        """The items of module constant NAME: assigned once, never changed."""
        value = self.constants.get(name)
        if value is None or depth > MAX_DEPTH or self.touched.dynamic:
            return None
        if self.touched.stores.get(name, 0) != 1 or name in self.touched.changed:
            return None
        if isinstance(value, ast.Name):
            return self.constant(value.id, depth + 1)
        return _literal(value)

    def _default(self, value: ast.expr, owner: ast.ClassDef | None, before: int) -> list[ast.expr] | None:
        """A default is evaluated where the def stands: a class body's earlier names first, then the module's."""
        if isinstance(value, ast.Name):
            if owner is not None:
                earlier = [s for s in owner.body if getattr(s, "lineno", before) < before]
                found = self._assigned(earlier, value.id)
                if found is not None:
                    return self._checked_attribute(value.id, found)
            return self.constant(value.id)
        return _literal(value)

    def _class_of(self, node: ast.expr, fn: FunctionNode | None, cls: ast.ClassDef | None) -> ast.ClassDef | None:
        """The class `self.X`, `cls.X`, `type(self).X` or `TestX.X` reads X from."""
        first = (fn.args.posonlyargs + fn.args.args)[0].arg if fn and (fn.args.posonlyargs + fn.args.args) else None
        if isinstance(node, ast.Name) and node.id == first and node.id in ("self", "cls"):
            return cls
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "type"
            and len(node.args) == 1
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id == first
        ):
            return cls
        if isinstance(node, ast.Name) and node.id in self.classes and self.touched.stores.get(node.id, 0) <= 1:
            return self.classes[node.id]
        return None

    def _class_attribute(self, owner: ast.ClassDef, name: str, depth: int) -> list[ast.expr] | None:
        if depth > MAX_DEPTH:
            return None
        found = self._assigned(owner.body, name)
        if found is not None:
            return self._checked_attribute(name, found)
        for base in owner.bases:  # the first base that has it, as Python's lookup for a single chain
            if isinstance(base, ast.Name) and base.id in self.classes:
                items = self._class_attribute(self.classes[base.id], name, depth + 1)
                if items is not None:
                    return items
        return None

    def _checked_attribute(self, name: str, value: ast.expr) -> list[ast.expr] | None:
        if name in self.touched.attributes or name in self.touched.changed:
            return None  # `self.NAMES = ...` in a setup method, `NAMES.append(...)`, `setattr(cls, "NAMES", ...)`
        if isinstance(value, ast.Name):
            return self.constant(value.id)
        return _literal(value)

    @staticmethod
    def _assigned(body: list[ast.stmt], name: str) -> ast.expr | None:
        """The value the last plain `NAME = value` of BODY binds (None if none)."""
        found = None
        for stmt in body:
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                found = stmt.value
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
                found = stmt.value
        return found


def distinct(items: list[ast.expr] | None) -> int:
    """How many different items a loop runs over: `("a", "a")` compares one value, not two."""
    return len({ast.dump(item) for item in items or []})
