"""Conditions that depend only on the environment the tests run in.

A new ``skipif(sys.platform == "win32")`` or a ``collect_ignore_glob`` entry
under ``if sys.version_info < (3, 12):`` removes no test from a run where the
condition is false, and whether it is false where the project's tests really
run is what the collection layer knows: collection-snapshot evaluates it in
the snapshot's environment (OG802/OG801 when it now skips or ignores tests
there) and the pytest plugin in every CI run.  So where a collection snapshot
is committed at the base, the static hooks leave such a condition to that
layer with a notice.

Only three things count as the environment: the platform (``sys.platform``,
``os.name``, ``platform.system()``, ...), the Python version or
implementation (``sys.version_info``, ``platform.python_implementation()``)
and whether a module imports (a name bound in ``try: import x`` /
``except ImportError``, ``importlib.util.find_spec``).  Environment
variables, the clock, files, the network or anything else a CI job can set
at will, a condition that names nothing of the environment, one that is
true whatever the environment (``... or True``) and anything this module
cannot follow are not environment conditions: the static finding stays.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from oracle_guard.analysis.pysource import Module, SourceError, _module_files

if TYPE_CHECKING:
    from oracle_guard.repo.changes import ChangeSet

PLATFORM, PYTHON, IMPORT = "the platform", "the Python version", "whether a module imports"

# Values and calls (with constant arguments) that say where the tests run.
ATTRIBUTES = {
    "sys.platform": PLATFORM,
    "os.name": PLATFORM,
    "sys.byteorder": PLATFORM,
    "sys.maxsize": PLATFORM,
    "os.sep": PLATFORM,
    "os.linesep": PLATFORM,
    "sys.version_info": PYTHON,
    "sys.version": PYTHON,
    "sys.hexversion": PYTHON,
    "sys.implementation": PYTHON,
    "sys.api_version": PYTHON,
}
CALLS = {
    "platform.system": PLATFORM,
    "platform.machine": PLATFORM,
    "platform.platform": PLATFORM,
    "platform.architecture": PLATFORM,
    "platform.release": PLATFORM,
    "platform.mac_ver": PLATFORM,
    "platform.win32_ver": PLATFORM,
    "platform.libc_ver": PLATFORM,
    "platform.uname": PLATFORM,
    "sysconfig.get_platform": PLATFORM,
    "struct.calcsize": PLATFORM,
    "sys.getwindowsversion": PLATFORM,
    "platform.python_implementation": PYTHON,
    "platform.python_version": PYTHON,
    "platform.python_version_tuple": PYTHON,
    "sys.is_gil_enabled": PYTHON,
    "sys._is_gil_enabled": PYTHON,
    "importlib.util.find_spec": IMPORT,
    "pkgutil.find_loader": IMPORT,
    "importlib.find_loader": IMPORT,
}
# Methods of an environment value (`sys.platform.startswith("win")`).
METHODS = {"startswith", "endswith", "lower", "upper", "casefold", "split", "partition", "strip"}
IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}
# Names pytest offers to a string condition (`skipif("sys.platform == 'win32'")`).
STRING_NAMESPACE = {"os": "os", "sys": "sys", "platform": "platform"}


class _Unknown(Exception):
    """A part of the condition that is not a constant or the environment."""


def classify(condition: ast.expr, module: Module, string_condition: bool = False) -> set[str] | None:
    """What of the environment CONDITION depends on; None when it is not an environment condition."""
    try:
        found, constant = _Walker(module).kinds(condition, string_condition)
    except (_Unknown, RecursionError):
        return None
    if not found or constant is True:
        return None  # names nothing of the environment, or is true everywhere
    return found


def describe(kinds: set[str]) -> str:
    return " and ".join(sorted(kinds))


class _Walker:
    def __init__(self, module: Module, depth: int = 0) -> None:
        self.module, self.depth = module, depth
        self._bound: dict[str, list[tuple[ast.expr | None, set[str]]]] | None = None

    def kinds(self, node: ast.expr, string_condition: bool = False) -> tuple[set[str], object]:
        """(environment kinds, the constant value or None when it depends on them)."""
        if string_condition and isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value.strip(), mode="eval").body
            except SyntaxError:
                raise _Unknown from None
            return _Walker(self.module, self.depth).with_namespace().kinds(node)
        return self._kinds(node)

    def with_namespace(self) -> _Walker:
        self.namespace = True
        return self

    namespace = False

    def _qualify(self, node: ast.expr) -> str | None:
        name = self.module.names.qualify(node)
        if self.namespace and name:
            head, _, rest = name.partition(".")
            if head in STRING_NAMESPACE:
                name = STRING_NAMESPACE[head] + ("." + rest if rest else "")
        return name

    def _kinds(self, node: ast.expr) -> tuple[set[str], object]:
        if isinstance(node, ast.Constant):
            return set(), node.value
        if isinstance(node, (ast.Tuple, ast.List)):
            parts = [self._kinds(e) for e in node.elts]
            return set().union(*(p[0] for p in parts)) if parts else set(), None if any(p[0] for p in parts) else tuple(
                p[1] for p in parts
            )
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
            kinds, value = self._kinds(node.operand)
            return kinds, (None if kinds else (not value if isinstance(node.op, ast.Not) else _neg(value)))
        if isinstance(node, ast.BoolOp):
            parts = [self._kinds(v) for v in node.values]
            kinds = set().union(*(p[0] for p in parts))
            constants = [p[1] for p in parts if not p[0]]
            if isinstance(node.op, ast.Or) and any(constants):
                return kinds, True  # `... or True`: true everywhere
            if isinstance(node.op, ast.And) and any(not c for c in constants) and constants:
                return kinds, False
            return kinds, None if kinds else (any(constants) if isinstance(node.op, ast.Or) else all(constants))
        if isinstance(node, ast.Compare):
            parts = [self._kinds(node.left)] + [self._kinds(c) for c in node.comparators]
            kinds = set().union(*(p[0] for p in parts))
            return kinds, None if kinds else _UNKNOWN_CONSTANT
        if isinstance(node, ast.Subscript):
            kinds, _ = self._kinds(node.value)
            index, _ = self._kinds(
                node.slice
                if not isinstance(node.slice, ast.Slice)
                else ast.Tuple([x for x in (node.slice.lower, node.slice.upper, node.slice.step) if x], ast.Load())
            )
            if not kinds or index:
                raise _Unknown
            return kinds, None
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, (ast.Name, ast.Attribute)):
            return self._name(node)
        raise _Unknown

    def _call(self, node: ast.Call) -> tuple[set[str], object]:
        for arg in list(node.args) + [k.value for k in node.keywords]:
            if not isinstance(arg, ast.Constant):
                raise _Unknown
        name = self._qualify(node.func) or ""
        if name in CALLS:
            return {CALLS[name]}, None
        if name == "hasattr" and len(node.args) == 2:
            target = self._qualify(node.args[0]) or ""
            if target in ("sys", "os", "platform"):
                return {PYTHON if target == "sys" else PLATFORM}, None
        if isinstance(node.func, ast.Attribute) and node.func.attr in METHODS:
            kinds, _ = self._kinds(node.func.value)
            if kinds:
                return kinds, None
        raise _Unknown

    def _name(self, node: ast.Name | ast.Attribute) -> tuple[set[str], object]:
        name = self._qualify(node) or ""
        for prefix, kind in ATTRIBUTES.items():
            if name == prefix or name.startswith(prefix + "."):
                return {kind}, None
        if isinstance(node, ast.Attribute):
            kinds, _ = self._kinds(node.value)  # `sys.version_info.major`, `IMPL.name`
            if kinds:
                return kinds, None
            raise _Unknown
        if self.namespace and node.id in STRING_NAMESPACE:
            raise _Unknown
        return self._binding(node.id)

    # -- names bound in the module (or imported from the project) -----------------

    def _binding(self, name: str) -> tuple[set[str], object]:
        bound = self.bindings().get(name)
        if bound is None:
            dotted = self.module.names.aliases.get(name)
            if dotted and dotted != name:
                return self._imported(dotted)
            raise _Unknown
        kinds: set[str] = set()
        values = []
        for value, guards in bound:
            kinds |= guards
            if value is None:
                continue  # bound by an import under the guard
            k, v = self._kinds(value)
            kinds |= k
            values.append(v)
        if kinds:
            return kinds, None
        if len(set(map(repr, values))) == 1:
            return set(), values[0]
        raise _Unknown

    def _imported(self, dotted: str) -> tuple[set[str], object]:
        """A name imported from a project module: its binding there (`from ._compat import is_py311`)."""
        module_name, _, attr = dotted.rpartition(".")
        if self.depth > 4 or self.module.reader is None or not module_name.strip("."):
            raise _Unknown
        for path in _module_files(module_name, self.module.path):
            data = self.module.reader(path)
            if data is None:
                continue
            try:
                other = Module.from_source(path, data)
            except SourceError:
                raise _Unknown from None
            other.reader = self.module.reader
            return _Walker(other, self.depth + 1)._binding(attr)
        raise _Unknown

    def bindings(self) -> dict[str, list[tuple[ast.expr | None, set[str]]]]:
        """Module-level name -> [(value or None for an import, environment kinds of the guards)]."""
        if self._bound is None:
            self._bound = {}
            for node, guards in _module_statements(self.module.tree.body, set(), self):
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            self._bound.setdefault(target.id, []).append((node.value, guards))
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                    self._bound.setdefault(node.target.id, []).append((node.value, guards))
                elif isinstance(node, (ast.Import, ast.ImportFrom)) and IMPORT in guards:
                    for alias in node.names:
                        local = alias.asname or alias.name.split(".")[0]
                        self._bound.setdefault(local, []).append((None, guards))
        return self._bound


_UNKNOWN_CONSTANT = object()  # a comparison of constants: a constant, but not worth evaluating


def _neg(value: object) -> object:
    return -value if isinstance(value, (int, float)) else _UNKNOWN_CONSTANT


def _imports(body: list[ast.stmt]) -> bool:
    for node in body:
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Import, ast.ImportFrom)):
                return True
            if (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, (ast.Name, ast.Attribute))
                and (getattr(sub.func, "id", None) or getattr(sub.func, "attr", None))
                in ("__import__", "import_module")
            ):
                return True
    return False


def _catches_import_error(handlers: list[ast.ExceptHandler]) -> bool:
    for handler in handlers:
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(isinstance(k, ast.Name) and k.id in IMPORT_ERRORS for k in kinds):
            return True
    return False


def _module_statements(body: list[ast.stmt], guards: set[str], walker: _Walker) -> Iterator[tuple[ast.stmt, set[str]]]:
    """Module-level statements with the environment kinds of the `if`/`try: import` around them."""
    for node in body:
        if isinstance(node, ast.If):
            try:
                kinds, _ = walker._kinds(node.test)
            except _Unknown:
                kinds = set()
            inner = guards | kinds if kinds else guards
            yield from _module_statements(node.body, inner, walker)
            yield from _module_statements(node.orelse, inner, walker)
        elif isinstance(node, ast.Try):
            inner = guards | {IMPORT} if _imports(node.body) and _catches_import_error(node.handlers) else guards
            yield from _module_statements(node.body, inner, walker)
            for handler in node.handlers:
                yield from _module_statements(handler.body, inner, walker)
            yield from _module_statements(node.orelse, inner, walker)
            yield from _module_statements(node.finalbody, guards, walker)
        else:
            yield node, guards


def enclosing_conditions(tree: ast.Module, target: ast.AST) -> list[ast.expr] | None:
    """The tests of the module-level `if` statements around TARGET; None when it is not at module level."""

    def search(body: list[ast.stmt], tests: list[ast.expr]) -> list[ast.expr] | None:
        for node in body:
            if isinstance(node, ast.If):
                for branch in (node.body, node.orelse):
                    found = search(branch, tests + [node.test])
                    if found is not None:
                        return found
            elif any(sub is target for sub in ast.walk(node)):
                return tests if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else None
        return None

    return search(tree.body, [])


def snapshot_committed(change_set: ChangeSet, contract_path: str) -> bool:
    """Whether a collection snapshot is committed at the base: the collection layer is configured."""
    base = change_set.base
    if base is None:
        return False
    read = change_set.read_base
    contract_bytes = read([contract_path])[contract_path]
    snapshot = None
    if contract_bytes is not None:
        from oracle_guard.contract import contract  # PyYAML: only when an environment condition asks

        try:
            snapshot = contract.loads(contract_bytes, contract_path).snapshot_path
        except Exception:  # a broken base contract configures nothing
            return False
    else:
        folder = contract_path.rpartition("/")[0]
        snapshot = f"{folder}/collection_snapshot.txt" if folder else "collection_snapshot.txt"
    return read([snapshot])[snapshot] is not None
