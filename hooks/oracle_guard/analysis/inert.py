"""Collection-inert changes: edits of a test module that cannot change what pytest collects.

The one-process hook's partial collection (oracle_guard/pytest_side/collection/partial.py) asks
this when only test modules changed; when every change is inert, pytest need
not run at all: the collection is the base snapshot's.  Any doubt answers
"not inert" (then pytest collects the touched modules).

Import-time positions are everything in a module but the bodies of its
functions (decorators, defaults and annotations are import-time; class bodies
are, method bodies are not).  The names they reference (every ``Name``, every
attribute, every identifier in a string constant: skipif strings are
evaluated, getattr takes names) are "referenced"; so are the names the body
of a referenced function references, and the bodies of functions that may run
at import or collection time (dunders, ``pytest_*`` hooks, functions under any
other decorator, methods of a class with a metaclass, a decorator other than
pytest.mark.*, or a base other than object, unittest.TestCase and plain classes
of the module), to a fixed point, on both sides.

A function defined at module level or in a class there (recursively) is inert
when it is not referenced, is no dunder and no ``pytest_*`` hook, and its
decorators are only ``pytest.fixture``/``pytest.mark.*`` (through a plain
``import pytest``), ``staticmethod`` and ``classmethod``.  Its body is then
never run while collecting: the change is inert when both sides are equal with
the body of every inert function replaced by its docstring (doctests) and a
yield marker when it is a generator (pytest collects those differently).
An inert function without decorators or docstring may also be added or
removed when pytest would not collect it: its name matches neither
``python_functions`` nor unittest's ``test`` prefix, and it binds no name that
anything else binds.  A module that uses dynamic name access at import time
(globals(), vars(), getattr with a computed name or under another name,
__getattribute__, ...) is never inert.  Identifiers in bytes constants count
as referenced too: a pickle payload names what it calls.
"""

from __future__ import annotations

import ast
import bisect
import fnmatch
import re
from collections.abc import Iterator, Sequence
from typing import Union

FunctionNode = Union[ast.FunctionDef, ast.AsyncFunctionDef]
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
# Identifiers in a bytes constant (a pickle or marshal payload names what it calls in plain ASCII).
_BYTES_IDENTIFIER = re.compile(rb"[A-Za-z_]\w*")
# Names through which import-time code can reach a function without naming it: called by
# name (also in a skipif/xfail string, which pytest evaluates), or as an attribute.
_DYNAMIC = frozenset(
    {
        "globals",
        "locals",
        "vars",
        "eval",
        "exec",
        "compile",
        "__import__",
        "import_module",
        "dir",
        "getmembers",
        "attrgetter",
        "methodcaller",
        "getattr_static",
        "__builtins__",  # __builtins__["getattr"]
    }
)
# cls.__dict__, sys.modules, obj.__getattribute__(name) (the lookup getattr makes, by any name).
_DYNAMIC_ATTRIBUTES = _DYNAMIC | {"__dict__", "modules", "__getattribute__"}
_EVALUATED = frozenset({"skipif", "xfail"})  # marks whose string conditions pytest evaluates
# Fine with a constant name (its identifiers are referenced); dynamic with a computed one.
_BY_NAME = frozenset({"getattr", "hasattr", "setattr", "delattr"})
_SAFE_DECORATORS = frozenset({"staticmethod", "classmethod"})
# Every word whose spelling may make a module dynamic: a module whose text spells none is not walked for it.
DYNAMIC_WORDS = _DYNAMIC_ATTRIBUTES | _BY_NAME | _EVALUATED


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _scopes(tree: ast.Module) -> Iterator[tuple[str, list[ast.stmt]]]:
    """(scope path, body) of the module and of every class defined directly in it or in such a class."""
    stack: list[tuple[str, list[ast.stmt]]] = [("", tree.body)]
    while stack:
        path, body = stack.pop()
        yield path, body
        for node in body:
            if isinstance(node, ast.ClassDef):
                stack.append((f"{path}.{node.name}", node.body))


def _functions(body: list[ast.stmt]) -> list[FunctionNode]:
    return [n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


class _Side:
    """One version of the module: its tree and what its import-time code can reach."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.dynamic = False  # getattr and friends with a computed name
        self.bindings: dict[str, int] = {}  # how often each name is bound (definitions, assignments, imports)
        self.functions: list[FunctionNode] = []  # at any depth
        self.docstrings: set[int] = set()  # never evaluated while collecting (doctests run later): no references
        self.import_time_functions: list[FunctionNode] = []  # defined at import time (not inside a body)
        self.yield_lines: list[int] = []  # where a yield is: a function spanning none is no generator
        classes: dict[str, ast.ClassDef] = {}
        for node in ast.walk(tree):  # one walk: the trees of big test modules are large
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
                if _docstring(node) is not None:
                    self.docstrings.add(id(node.body[0]))
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.functions.append(node)
                elif isinstance(node, ast.ClassDef):
                    classes[node.name] = node
                if not isinstance(node, ast.Module):
                    self._bind(node.name)
            elif isinstance(node, ast.Name):
                if not isinstance(node.ctx, ast.Load):
                    self._bind(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    self._bind(alias.asname or alias.name.split(".")[0])
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                for name in node.names:
                    self._bind(name)
            elif isinstance(node, ast.ExceptHandler):
                self._bind(node.name)
            elif isinstance(node, (ast.Yield, ast.YieldFrom)):
                self.yield_lines.append(node.lineno)
            elif type(node).__name__.startswith("Match"):  # match patterns (3.10+): `case Point(x=name)`, `*rest`
                self._bind(getattr(node, "name", None))
                self._bind(getattr(node, "rest", None))
        self.yield_lines.sort()
        # `pytest` bound once, by a top-level `import pytest`: decorators spelled through it are pytest's.
        self.pytest_plain = self._imported_once("pytest")
        self._safe_lookups: set[int] | None = None  # made when first asked: most modules never need it
        # `skip_pypy = pytest.mark.skipif(...)`, bound once at the top: `@skip_pypy` is that mark.
        self.mark_aliases = {
            node.targets[0].id
            for node in tree.body
            if isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and self.bindings.get(node.targets[0].id, 0) == 1
            and isinstance(node.value, (ast.Call, ast.Attribute))
            and _allowed_decorator(node.value, self.pytest_plain)
            and not _is_fixture(node.value)
        }
        # Methods of classes whose creation runs code this module does not show (a base's
        # __init_subclass__, a metaclass, a class decorator): they may run while importing.
        self.opaque: set[int] = set()
        plain: dict[str, bool] = {}
        for _, body in _scopes(tree):
            for node in body:
                if isinstance(node, ast.ClassDef) and not self._plain_class(node, classes, plain):
                    self.opaque.update(
                        id(f) for f in ast.walk(node) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                    )

    def _imported_once(self, name: str, module: str | None = None) -> bool:
        """NAME bound once, by a top-level `import NAME` (or `from MODULE import NAME`)."""
        if self.bindings.get(name, 0) != 1:
            return False
        for node in self.tree.body:
            if module is None and isinstance(node, ast.Import):
                if any(a.name == name and a.asname is None for a in node.names):
                    return True
            elif module is not None and isinstance(node, ast.ImportFrom) and node.module == module and not node.level:
                if any(a.name == name and a.asname is None for a in node.names):
                    return True
        return False

    def _plain_class(self, node: ast.ClassDef, classes: dict[str, ast.ClassDef], plain: dict[str, bool]) -> bool:
        """Creating NODE runs nothing but its body: no metaclass or keywords, pytest marks only, known bases."""
        if node.name in plain:
            return plain[node.name]
        plain[node.name] = False  # a cycle, or a class named twice: not plain
        if node.keywords or self.bindings.get(node.name, 0) != 1:
            return False
        if not all(
            _allowed_decorator(d, self.pytest_plain, self.mark_aliases) and not _is_fixture(d)
            for d in node.decorator_list
        ):
            return False
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id == "object" and "object" not in self.bindings:
                continue
            if isinstance(base, ast.Name) and base.id == "TestCase" and self._imported_once("TestCase", "unittest"):
                continue
            if (
                isinstance(base, ast.Attribute)
                and base.attr == "TestCase"
                and isinstance(base.value, ast.Name)
                and base.value.id == "unittest"
                and self._imported_once("unittest")
            ):
                continue
            if (
                isinstance(base, ast.Name)
                and base.id in classes
                and self._plain_class(classes[base.id], classes, plain)
            ):
                continue
            return False
        plain[node.name] = True
        return True

    def safe_lookups(self) -> set[int]:
        if self._safe_lookups is None:
            self._safe_lookups = _safe_lookups(self.tree)
        return self._safe_lookups

    def _bind(self, name: str | None) -> None:
        if name:
            self.bindings[name] = self.bindings.get(name, 0) + 1

    def references(self, node: ast.AST, skip_bodies: bool) -> set[str]:
        """The names NODE references; SKIP_BODIES: not inside function bodies (only their signatures)."""
        found: set[str] = set()
        checked: set[int] = set()  # getattr-style callees whose call _check_dynamic judged
        stack: list[ast.AST] = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)) and skip_bodies and current is not node:
                self.import_time_functions.append(current)
                stack.extend(current.decorator_list)
                stack.append(current.args)
                stack.extend(n for n in (current.returns, *getattr(current, "type_params", ())) if n is not None)
                continue
            if id(current) in self.docstrings:
                continue
            if isinstance(current, ast.Name):
                found.add(current.id)
                self.dynamic = self.dynamic or current.id in _DYNAMIC
                # getattr passed on or renamed (map(getattr, ...), g = getattr): its names are not seen.
                self.dynamic = self.dynamic or (current.id in _BY_NAME and id(current) not in checked)
            elif isinstance(current, ast.Attribute):
                found.add(current.attr)
                self.dynamic = self.dynamic or current.attr in _DYNAMIC_ATTRIBUTES
                self.dynamic = self.dynamic or (current.attr in _BY_NAME and id(current) not in checked)
            elif isinstance(current, ast.Constant) and isinstance(current.value, str):
                found.update(_IDENTIFIER.findall(current.value))
            elif isinstance(current, ast.Constant) and isinstance(current.value, bytes):
                found.update(n.decode() for n in _BYTES_IDENTIFIER.findall(current.value))
            elif isinstance(current, ast.Call):
                self._check_dynamic(current)
                checked.add(id(current.func))
            elif isinstance(current, ast.ImportFrom):
                # `from shop import cases as c`: code that calls c() reaches cases without naming it.
                found.update(a.name for a in current.names if a.asname is not None)
                # `from builtins import getattr as fetch`: a lookup under another name.
                self.dynamic = self.dynamic or any(a.name in _DYNAMIC_ATTRIBUTES | _BY_NAME for a in current.names)
            stack.extend(ast.iter_child_nodes(current))
        return found

    def _check_dynamic(self, call: ast.Call) -> None:
        func = call.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name in _BY_NAME:
            if len(call.args) < 2 or not (
                (isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str))
                or id(call) in self.safe_lookups()
            ):
                self.dynamic = True
        elif name in _EVALUATED:
            for arg in (*call.args, *(k.value for k in call.keywords if k.arg == "condition")):
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    self.dynamic = self.dynamic or bool(_DYNAMIC & set(_IDENTIFIER.findall(arg.value)))


def _safe_lookups(tree: ast.Module) -> set[int]:
    """The getattr-style calls whose name is a loop variable over literal strings of its own scope.

    ``for name, wrapper in {"a": ..., "b": ...}.items(): getattr(obj, name)`` reaches
    only names the scope spells in strings, which count as referenced anyway.
    """
    safe: set[int] = set()
    scopes: list[ast.AST] = [
        tree,
        *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))),
    ]
    for scope in scopes:
        nodes = list(_own_nodes(scope))
        bindings: dict[str, int] = {}
        for node in nodes:
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                bindings[node.id] = bindings.get(node.id, 0) + 1
        kinds: dict[str, set[str | None]] = {}
        for node in nodes:
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                kind = (
                    _strings_of(node.value, {})
                    if node.value is not None and not isinstance(node, ast.AugAssign)
                    else None
                )
                for target in targets:
                    if isinstance(target, ast.Name):
                        kinds.setdefault(target.id, set()).add(kind)
        containers = {n: k for n, ks in kinds.items() if len(ks) == 1 for k in ks if k is not None}
        literal: dict[str, int] = {}
        for node in nodes:
            if not isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                continue
            kind = _strings_of(node.iter, containers)
            target = node.target
            if kind == "items" and isinstance(target, ast.Tuple) and target.elts:
                target = target.elts[0]
            elif kind not in ("elements", "dict"):  # iterating a dict yields its keys
                continue
            if isinstance(target, ast.Name):
                literal[target.id] = literal.get(target.id, 0) + 1
        names = {n for n, c in literal.items() if bindings.get(n, 0) == c}
        for node in nodes:
            if (
                isinstance(node, ast.Call)
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Name)
                and node.args[1].id in names
            ):
                safe.add(id(node))
    return safe


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of SCOPE's body, not those of functions, lambdas or classes nested in it."""
    stack: list[ast.AST] = list(getattr(scope, "body", []))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def _strings_of(node: ast.expr, containers: dict[str, str]) -> str | None:
    """ "elements": iterating NODE yields only literal strings; "dict": a dict keyed by them; "items": its .items()."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args and not node.keywords:
        inner = _strings_of(node.func.value, containers)
        if inner == "dict" and node.func.attr == "keys":
            return "elements"
        if inner == "dict" and node.func.attr == "items":
            return "items"
        return None
    if isinstance(node, ast.Name):
        return containers.get(node.id)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return "elements" if node.elts and all(_is_str(e) for e in node.elts) else None
    if isinstance(node, ast.Dict):
        return "dict" if node.keys and all(k is not None and _is_str(k) for k in node.keys) else None
    return None


def _is_str(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _allowed_decorator(
    node: ast.expr, pytest_plain: bool, mark_aliases: frozenset[str] | set[str] = frozenset()
) -> bool:
    if isinstance(node, ast.Name):
        return node.id in _SAFE_DECORATORS or node.id in mark_aliases
    target = node.func if isinstance(node, ast.Call) else node
    dotted: list[str] = []
    while isinstance(target, ast.Attribute):
        dotted.append(target.attr)
        target = target.value
    if not (pytest_plain and isinstance(target, ast.Name) and target.id == "pytest"):
        return False
    dotted.reverse()
    return dotted == ["fixture"] or (len(dotted) == 2 and dotted[0] == "mark")


def _is_fixture(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return isinstance(target, ast.Attribute) and target.attr == "fixture"


def _may_run_while_collecting(func: FunctionNode, side: _Side) -> bool:
    """A function whose body may run at import or collection time whoever names it."""
    return (
        id(func) in side.opaque
        or _is_dunder(func.name)
        or func.name.startswith("pytest_")
        or any(not _allowed_decorator(d, side.pytest_plain, side.mark_aliases) for d in func.decorator_list)
    )


def _referenced(sides: Sequence[_Side]) -> set[str]:
    """Every name import-time code of either side references, through the bodies of what it reaches."""
    by_name: dict[str, list[tuple[_Side, FunctionNode]]] = {}
    referenced: set[str] = set()
    for side in sides:
        referenced |= side.references(side.tree, skip_bodies=True)
        for func in side.import_time_functions:
            if _may_run_while_collecting(func, side):
                referenced |= side.references(func, skip_bodies=False)
        for node in side.functions:
            by_name.setdefault(node.name, []).append((side, node))
    done: set[str] = set()
    while True:
        todo = (referenced & set(by_name)) - done
        if not todo:
            return referenced
        for name in todo:
            done.add(name)
            for side, node in by_name[name]:
                referenced |= side.references(node, skip_bodies=False)


def _is_generator(func: FunctionNode) -> bool:
    stack: list[ast.AST] = list(func.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return False


def _docstring(node: FunctionNode | ast.ClassDef | ast.Module) -> ast.stmt | None:
    first = node.body[0] if node.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first
    return None


def matches(name: str, options: Sequence[str]) -> bool:
    """pytest's `_matches_prefix_or_glob_option`: a prefix, or a glob when the option has glob characters."""
    return any(
        name.startswith(option) or (any(c in option for c in "*?[") and fnmatch.fnmatch(name, option))
        for option in options
    )


def is_inert(old: bytes | ast.Module, new: bytes | ast.Module, python_functions: Sequence[str]) -> bool:
    """Whether changing a test module from OLD to NEW cannot change what pytest collects from it.

    OLD and NEW: the sources, or trees parsed from them (read, and left as they were).
    """
    return all_inert([(old, new)], python_functions)


def all_inert(
    pairs: Sequence[tuple[bytes | ast.Module, bytes | ast.Module]],
    python_functions: Sequence[str],
    context: Sequence[ast.Module | bytes] = (),
) -> bool:
    """Whether changing each module of PAIRS from OLD to NEW cannot change what pytest collects.

    CONTEXT: the trees or sources of every other module that may be imported meanwhile
    (left as they are).  Names are joined across all of them: a function a module
    changes is not inert when any module's import-time code reaches its name.  A source
    is parsed (unparsable: not inert), and walked only when its text may reach a
    changed function (oracle_guard/analysis/reach_text.py): the answer is the same.
    """
    try:
        changed = [[_Side(t if isinstance(t, ast.Module) else ast.parse(t)) for t in pair] for pair in pairs]
        others = _reaching(changed, context)
    except (SyntaxError, ValueError, RecursionError):
        return False
    sides = [side for pair in changed for side in pair] + others
    try:
        referenced = _referenced(sides)
    except RecursionError:
        return False
    if any(side.dynamic for side in sides):
        return False
    return all(_same_but_inert(pair, referenced, python_functions) for pair in changed)


def _reaching(changed: list[list[_Side]], context: Sequence[ast.Module | bytes]) -> list[_Side]:
    """The CONTEXT modules whose import-time code may reach a function of CHANGED, as sides.

    A tree is always walked.  A source whose text cannot spell a name that matters
    (reach_text.spelled: no changed function's name, no name of a function in a
    module walked here, no dynamic lookup, nothing that hides a spelling) adds no
    such name to what is referenced and makes nothing dynamic: it is parsed only.
    Walking one adds its functions' names, so the rest is read again, to a fixed point.
    """
    from oracle_guard.analysis import reach_text

    names = {f.name for pair in changed for side in pair for f in side.functions} | DYNAMIC_WORDS
    walked: list[_Side] = []
    pending: list[tuple[frozenset[str] | None, ast.Module]] = []
    for item in context:
        if isinstance(item, ast.Module):
            walked.append(_Side(item))
        else:  # unparsable: a collection error, maybe (not inert)
            pending.append((reach_text.spelled(item), ast.parse(item)))
    names.update(f.name for side in walked for f in side.functions)
    while pending:
        reach_text.with_non_ascii(names)
        reaching = [tree for words, tree in pending if words is None or not words.isdisjoint(names)]
        if not reaching:
            break
        chosen = {id(tree) for tree in reaching}
        pending = [(words, tree) for words, tree in pending if id(tree) not in chosen]
        for tree in reaching:
            side = _Side(tree)
            walked.append(side)
            names.update(f.name for f in side.functions)
    return walked


def _same_but_inert(sides: list[_Side], referenced: set[str], python_functions: Sequence[str]) -> bool:
    """Whether the two SIDES are equal once the bodies of their inert functions are set aside.

    The trees are left as they were: the rules read the same ones (pysource.shared_tree)."""
    scopes = [body for side in sides for _, body in _scopes(side.tree)]
    saved = [(body, list(body)) for body in scopes]
    bodies = [(func, func.body) for body in scopes for func in _functions(body)]
    try:
        return _compared(sides, referenced, python_functions)
    finally:  # what the comparison set aside, put back (it rewrites bodies in place)
        for func, body in bodies:
            func.body = body
        for body, before in saved:
            body[:] = before


def _compared(sides: list[_Side], referenced: set[str], python_functions: Sequence[str]) -> bool:
    def inert(func: FunctionNode, side: _Side) -> bool:
        return func.name not in referenced and not _may_run_while_collecting(func, side)

    scopes = [dict(_scopes(side.tree)) for side in sides]
    for index, side in enumerate(sides):
        other = sides[1 - index]
        for path, body in scopes[index].items():
            others = scopes[1 - index].get(path)
            kept: list[ast.stmt] = []
            for node in body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and others is not None:
                    if all(f.name != node.name for f in _functions(others)):
                        # Added or removed: only a helper pytest would never collect.
                        if not (
                            inert(node, side)
                            and not node.decorator_list
                            and _docstring(node) is None
                            and not matches(node.name, python_functions)
                            and not node.name.startswith("test")  # unittest.TestLoader's prefix
                            and side.bindings.get(node.name, 0) == 1
                            and node.name not in other.bindings
                        ):
                            return False
                        continue
                kept.append(node)
            body[:] = kept
    for side in sides:
        for _, body in _scopes(side.tree):
            for func in _functions(body):
                if inert(func, side):
                    _normalise(func, side.yield_lines)
    try:
        return _same(sides[0].tree, sides[1].tree)
    except RecursionError:
        return False


def _same(a: object, b: object) -> bool:
    """ast.dump(a) == ast.dump(b) without positions, stopping at the first difference."""
    if type(a) is not type(b):
        return False
    if isinstance(a, ast.AST):
        return all(_same(getattr(a, f, None), getattr(b, f, None)) for f in a._fields)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _normalise(func: FunctionNode, yield_lines: list[int]) -> None:
    """The body as far as collection sees it: the docstring and whether it is a generator.

    YIELD_LINES: the lines of every yield in the module; the body is walked for one only when
    a yield lies within the function's lines (most functions span none).
    """
    body: list[ast.stmt] = []
    docstring = _docstring(func)
    if docstring is not None:
        body.append(docstring)
    first = bisect.bisect_left(yield_lines, func.lineno)
    end = getattr(func, "end_lineno", None)
    spans = first < len(yield_lines) and (end is None or yield_lines[first] <= end)
    if spans and _is_generator(func):
        body.append(ast.Expr(ast.Yield(None)))
    func.body = body or [ast.Pass()]
