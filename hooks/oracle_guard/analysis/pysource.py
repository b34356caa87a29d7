"""Parsing test modules and naming what their expressions refer to.

The standard ``ast`` module does the parsing: it is about ten times faster
than libcst and gives positions for free, and none of the rules needs
comments or whitespace.  libcst is imported only when ``ast`` fails: it
parses every grammar up to 3.14, and the constructs newer than the
interpreter running the hook are lowered in place (oracle_guard/analysis/newsyntax.py) so the
same rules run; a file no grammar accepts stays a finding.

Import aliases are resolved here from the module's own import statements and
simple assignments (``m = pytest.mark``), never through libcst's
QualifiedNameProvider, which costs several parses.
"""

from __future__ import annotations

import ast
import bisect
import sys
from collections.abc import Iterator, Sequence
from typing import Any, Callable, Union

from oracle_guard.reporting.report import Finding

FunctionNode = Union[ast.FunctionDef, ast.AsyncFunctionDef]
ScopeNode = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef]

# Private spellings and re-exports mapped to the public name a rule matches.
_CANONICAL_PREFIXES = (
    ("_pytest.mark.structures.MARK_GEN", "pytest.mark"),
    ("_pytest.mark.MARK_GEN", "pytest.mark"),
    ("pytest.MARK_GEN", "pytest.mark"),
    ("_pytest.outcomes.Skipped", "pytest.skip.Exception"),
    ("_pytest.outcomes.XFailed", "pytest.xfail.Exception"),
    ("_pytest.outcomes.Exit", "pytest.exit.Exception"),
    ("_pytest.outcomes.Failed", "pytest.fail.Exception"),
    ("_pytest.outcomes.skip", "pytest.skip"),
    ("_pytest.outcomes.xfail", "pytest.xfail"),
    ("_pytest.outcomes.importorskip", "pytest.importorskip"),
    ("_pytest.outcomes.exit", "pytest.exit"),
    ("_pytest.outcomes.fail", "pytest.fail"),
    ("_pytest.python_api.raises", "pytest.raises"),
    ("_pytest.raises.raises", "pytest.raises"),
    ("_pytest.python_api.approx", "pytest.approx"),
    ("_pytest.recwarn.warns", "pytest.warns"),
    ("_pytest.recwarn.deprecated_call", "pytest.deprecated_call"),
    ("_pytest.python.Metafunc", "pytest.Metafunc"),
    ("nose.plugins.skip.SkipTest", "unittest.SkipTest"),
    ("nose.SkipTest", "unittest.SkipTest"),
    ("unittest2", "unittest"),
    ("unittest.case", "unittest"),
    ("hypothesis._settings", "hypothesis"),
    ("hypothesis.core", "hypothesis"),
    ("hypothesis.control", "hypothesis"),
    ("hypothesis.strategies._internal.core", "hypothesis.strategies"),
    ("hypothesis.strategies._internal.numbers", "hypothesis.strategies"),
    ("hypothesis.strategies._internal.collections", "hypothesis.strategies"),
    ("hypothesis.strategies._internal.strings", "hypothesis.strategies"),
    ("hypothesis.strategies._internal.misc", "hypothesis.strategies"),
)

DYNAMIC = "<dynamic>"
# `try` with `except*` (3.11+) is judged like any `try`; older interpreters see it lowered to one.
if sys.version_info >= (3, 11):
    TRY_NODES = (ast.Try, ast.TryStar)
else:
    TRY_NODES = (ast.Try,)


# First words of every prefix above: most names match none, and one C-level
# startswith() with a tuple rules them out (canonical() runs for every attribute).
_CANONICAL_STARTS = tuple({p.split(".")[0] for p, _ in _CANONICAL_PREFIXES} | {"pytest.MARK_GEN"})


def canonical(name: str) -> str:
    if not name.startswith(_CANONICAL_STARTS) or (name.startswith("pytest") and not name.startswith("pytest.MARK_GEN")):
        return name
    for prefix, public in _CANONICAL_PREFIXES:
        if name == prefix or name.startswith(prefix + "."):
            return public + name[len(prefix) :]
    return name


DEEP = "nests expressions too deeply to check (Python's recursion limit); split the expression up"


class SourceError(Exception):
    def __init__(self, line: int, col: int, message: str, binary: bool = False) -> None:
        super().__init__(message)
        self.line, self.col, self.message = line, col, message
        self.binary = binary  # not text at all (NUL bytes, undecodable): no Python, whatever its name

    def finding(self, path: str, code: str = "OG001") -> Finding:
        return Finding(path, max(self.line, 1), max(self.col, 1), code, self.message)


def _newer_syntax(source: bytes) -> bool:
    """True when libcst (which always parses up to 3.14) accepts what ast refused."""
    try:
        from oracle_guard.analysis import newsyntax  # imports libcst: only reached for files ast cannot parse
    except ImportError:  # pragma: no cover - a dependency, but be clear if missing
        return False
    return newsyntax.verdict(source).parses


def _first_bad_byte(source: bytes) -> tuple[int, int] | None:
    """Line and column of the first byte that is not UTF-8 (every Python reports it elsewhere)."""
    try:
        source.decode("utf-8")
    except UnicodeDecodeError as exc:
        head = source[: exc.start]
        line_start = head.rfind(b"\n") + 1
        return head.count(b"\n") + 1, len(head[line_start:].decode("utf-8", "replace")) + 1
    return None  # valid UTF-8: a declared encoding it does not match


def _on_the_line(source: bytes, line: int | None, col: int | None) -> int:
    """COL, or the line's last character when it points past it (3.9 puts an unexpected EOF there)."""
    lines = source.splitlines()
    if not line or not col or not 0 < line <= len(lines):
        return col or 1
    return max(1, min(col, len(lines[line - 1].decode("utf-8", "replace").rstrip())))


def _lowered(source: bytes) -> ast.Module | None:
    """The tree of a file with syntax newer than this interpreter, lowered in place (oracle_guard/analysis/newsyntax.py)."""
    try:
        from oracle_guard.analysis import newsyntax  # imports libcst: only reached for files ast cannot parse
    except ImportError:  # pragma: no cover - libcst is a dependency
        return None
    return newsyntax.lower(source)


# One process runs every hook (`oracle-guard check`, the `oracle-guard` hook): each blob is parsed
# once, not once per hook or rule (the collection hook's inert proof and the switch check read the
# rules' trees: a 1,430-line test module took 7 ms a parse, six parses a commit).  Trees are shared,
# so callers copy before transforming (expectations.py deep-copies); a few recent files only.
_PARSED_MAX = 64
_TREES: dict[tuple[str, bytes | str], ast.Module] = {}  # ast.parse's trees
_LOWERED: dict[tuple[str, bytes], ast.Module] = {}  # trees of syntax newer than this Python, lowered


def _kept(cache: dict[Any, ast.Module], key: Any, tree: ast.Module) -> ast.Module:
    if len(cache) >= _PARSED_MAX:
        cache.pop(next(iter(cache)))
    cache[key] = tree
    return tree


def forget() -> None:
    """Drop every kept tree (a bench timing the parse itself)."""
    _TREES.clear()
    _LOWERED.clear()


def parse(source: bytes, path: str) -> ast.Module:
    """Parse SOURCE or raise SourceError with a one-line reason and position."""
    lowered = _LOWERED.get((path, source))
    return lowered if lowered is not None else _parse(source, path)


def shared_tree(source: bytes | str, path: str = "<unknown>") -> ast.Module:
    """``ast.parse(SOURCE, filename=PATH)``, once per (path, text) in the process; raises as it does.

    The tree is shared: read it, never change it (copy first).
    """
    found = _TREES.get((path, source))
    return found if found is not None else _kept(_TREES, (path, source), ast.parse(source, filename=path))


def _parse(source: bytes, path: str) -> ast.Module:
    if b"\0" in source:
        raise SourceError(1, 1, "not a text file (it contains NUL bytes); cannot check it", binary=True)
    try:
        return shared_tree(source, path)
    except SyntaxError as exc:
        text = str(exc.msg)
        if "decode" in text or "unicode error" in text or "encoding" in text:
            line, col = _first_bad_byte(source) or (exc.lineno or 1, exc.offset or 1)
            raise SourceError(
                line, col, "not valid UTF-8 (or its declared encoding); cannot check it", binary=True
            ) from None
        if "too many nested" in text:  # a limit every newer Python keeps too: no grammar reads it
            raise SourceError(exc.lineno or 1, exc.offset or 1, f"could not parse: {text}") from None
        lowered = _lowered(source)
        if lowered is not None:
            return _kept(_LOWERED, (path, source), lowered)
        if _newer_syntax(source):
            v = sys.version_info
            raise SourceError(
                exc.lineno or 1,
                exc.offset or 1,
                f"uses syntax newer than Python {v.major}.{v.minor}, which runs oracle-guard; "
                "set `language_version` for oracle-guard to your project's Python",
            ) from None
        col = _on_the_line(source, exc.lineno, exc.offset) if "unexpected EOF" in text else exc.offset or 1
        raise SourceError(exc.lineno or 1, col, f"could not parse: {text}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise SourceError(1, 1, f"could not parse: {exc}") from None


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class Names:
    """Alias table of one module: local name -> canonical dotted name.

    Imports anywhere in the module count (tests often import inside a
    function); a later rebinding simply wins.  Assignments of a resolvable
    expression to a plain name (``m = pytest.mark``) are aliases too, and
    assignments of a call (``later = pytest.mark.skip(...)``) are remembered
    as bindings so that ``@later`` can be seen through.
    """

    def __init__(self, aliases: dict[str, str] | None = None, bindings: dict[str, ast.Call] | None = None) -> None:
        self.aliases: dict[str, str] = aliases if aliases is not None else {}
        self.bindings: dict[str, ast.Call] = bindings if bindings is not None else {}

    @classmethod
    def of(cls, tree: ast.Module, source: bytes | None = None) -> Names:
        """The alias table of TREE; pass SOURCE to skip looking for ``:=`` when it has none."""
        names = cls()
        # Imports and assignments are statements: walking statements only is several
        # times faster than ast.walk over every expression node.
        statements_ = list(statements(tree.body))
        for node in statements_:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        names.aliases[alias.asname] = canonical(alias.name)
                    else:
                        top = alias.name.split(".")[0]
                        names.aliases[top] = top
            elif isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                for alias in node.names:
                    if alias.name == "*":
                        continue
                    full = f"{module}.{alias.name}" if module and not module.endswith(".") else module + alias.name
                    names.aliases[alias.asname or alias.name] = canonical(full)
        # Assignments in a second pass so that they see every import.
        for node in statements_:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        names._bind(target.id, node.value)
        if source is None or b":=" in source:
            for node in ast.walk(tree):
                if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
                    names._bind(node.target.id, node.value)
        return names

    def _bind(self, name: str, value: ast.expr) -> None:
        if isinstance(value, (ast.Name, ast.Attribute)) or _is_import_call(value):
            resolved = self.qualify(value)
            if resolved and resolved != name:
                self.aliases[name] = resolved
                return
        if isinstance(value, ast.Call):
            self.bindings[name] = value

    def qualify(self, node: ast.AST, _depth: int = 0) -> str | None:
        """Canonical dotted name of NODE, e.g. ``pt.mark.skip`` -> ``pytest.mark.skip``."""
        if _depth > 20:
            return None
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualify(node.value, _depth + 1)
            return canonical(f"{base}.{node.attr}") if base else None
        if isinstance(node, ast.Call):
            func = node.func
            if _is_import_call(node):
                return canonical(node.args[0].value)  # type: ignore[attr-defined]  # a str constant: _is_import_call
            # getattr(obj, "name") and obj.__getattr__("name")
            if isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) >= 2:
                base = self.qualify(node.args[0], _depth + 1)
                attr = node.args[1]
            elif isinstance(func, ast.Attribute) and func.attr in ("__getattr__", "__getattribute__") and node.args:
                base = self.qualify(func.value, _depth + 1)
                attr = node.args[0]
            else:
                return None
            if not base:
                return None
            if isinstance(attr, ast.Constant) and isinstance(attr.value, str):
                return canonical(f"{base}.{attr.value}")
            return f"{base}.{DYNAMIC}"
        return None

    def expand(self, node: ast.expr) -> ast.expr:
        """See through a name bound to a call: ``@later`` -> ``pytest.mark.skip(...)``."""
        seen = 0
        while isinstance(node, ast.Name) and node.id in self.bindings and seen < 10:
            node = self.bindings[node.id]
            seen += 1
        return node


_NESTED_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def statements(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every statement in BODY and the blocks nested in it, in source order."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        for attr in _NESTED_BODIES:
            nested = getattr(node, attr, None)
            if nested and isinstance(nested, list):
                stack.extend(reversed(nested))


def _is_import_call(node: ast.AST) -> bool:
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)):
        return False
    if not isinstance(node.args[0].value, str):
        return False
    name = _dotted(node.func)
    return name in ("__import__", "importlib.import_module", "import_module")


class Files:
    """A reader of one side's files (Module.reader) that can also read many in one go."""

    def __init__(self, read: Callable[[Sequence[str]], dict[str, bytes | None]]) -> None:
        self._read = read

    def __call__(self, path: str) -> bytes | None:
        return self._read([path])[path]

    def many(self, paths: Sequence[str]) -> dict[str, bytes | None]:
        return self._read(paths)


class Module:
    """A parsed file with its alias table and byte-accurate positions."""

    def __init__(self, path: str, source: bytes, tree: ast.Module, names: Names) -> None:
        self.path, self.source, self.tree, self.names = path, source, tree, names
        # Reads another file of the repository on the same side of the change
        # (set by the engine), so a name imported from the project can be seen through.
        self.reader: Callable[[str], bytes | None] | None = None
        # The top-level statements a rule need visit (None: all of them): set by an engine that
        # proved the others the base's, in the same context (oracle_guard/rules/pydiff.py, _focus).
        self.focus: list[ast.stmt] | None = None

    def visited(self) -> list[ast.stmt]:
        """The top-level statements a rule visits: the focus, or the whole module."""
        return self.tree.body if self.focus is None else self.focus

    def imported_binding(self, dotted: str) -> tuple[ast.expr, Module] | None:
        """What a name imported from the project is bound to in its own module.

        ``from .helpers import skip_on_ci`` (``.helpers.skip_on_ci``) or
        ``from tests.conftest import needs_db``: the module-level value of the
        name in the first candidate file that exists, with that file's module.
        """
        module_name, _, attr = dotted.rpartition(".")
        if self.reader is None or not module_name.strip(".") or not attr:
            return None
        candidates = _module_files(module_name, self.path)
        # A reader that reads many files at once (Files) asks git once for every candidate, not once each.
        many = self.reader.many(candidates) if isinstance(self.reader, Files) else None
        for path in candidates:
            data = many[path] if many is not None else self.reader(path)
            if data is None:
                continue
            try:
                other = Module.from_source(path, data)
            except SourceError:
                return None
            value = None
            for node in other.tree.body:
                if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in node.targets):
                    value = node.value
                elif (
                    isinstance(node, ast.AnnAssign)
                    and isinstance(node.target, ast.Name)
                    and node.target.id == attr
                    and node.value is not None
                ):
                    value = node.value
            return (value, other) if value is not None else None
        return None

    @classmethod
    def from_source(cls, path: str, source: bytes) -> Module:
        if b"\r" in source:  # Python ends a line at \r\n and at a lone \r: so does every position here
            source = source.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        tree = parse(source, path)
        try:
            names = Names.of(tree, source)
        except RecursionError:  # ast parsed it, but it nests past what a visitor can walk
            raise SourceError(1, 1, DEEP) from None
        return cls(path, source, tree, names)

    def position(self, node: ast.AST) -> tuple[int, int]:
        """1-based line and character column (ast columns count UTF-8 bytes)."""
        line = getattr(node, "lineno", 1)
        offset = getattr(node, "col_offset", 0)
        lines = self.source.splitlines()
        if 0 < line <= len(lines):
            prefix = lines[line - 1][:offset]
            return line, len(prefix.decode("utf-8", "replace")) + 1
        return line, offset + 1

    def finding(self, node: ast.AST, code: str, message: str) -> Finding:
        line, col = self.position(node)
        return Finding(self.path, line, col, code, message)

    def segment(self, node: ast.AST, limit: int = 80) -> str:
        """The source text of NODE on one line, shortened for messages."""
        text = " ".join(ast.unparse(node).split())
        return text if len(text) <= limit else text[: limit - 3] + "..."


class PrunedVisitor(ast.NodeVisitor):
    """A NodeVisitor that skips statements whose lines hold none of the hot lines.

    A rule that can only find something where one of its tokens (or a local
    name bound to one) is spelled visits just those statements; the rest of
    a large test module is never walked.
    """

    hot: list[int]

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.stmt):
            start = node.lineno
            decorators = getattr(node, "decorator_list", None)
            if decorators:
                start = min(start, min(d.lineno for d in decorators))
            i = bisect.bisect_left(self.hot, start)
            if i == len(self.hot) or self.hot[i] > (node.end_lineno or node.lineno):
                return
        super().visit(node)


def _module_files(module_name: str, importer: str) -> list[str]:
    """Repository files a module name may live in, as pytest's rootdir imports find them."""
    level = len(module_name) - len(module_name.lstrip("."))
    parts = [p for p in module_name.lstrip(".").split(".") if p]
    if not parts:
        return []
    rel = "/".join(parts)
    if level:
        folder = importer.rsplit("/", 1)[0] if "/" in importer else ""
        for _ in range(level - 1):
            folder = folder.rsplit("/", 1)[0] if "/" in folder else ""
        roots = [folder]
    else:  # absolute: from the repository root, src/, or the importer's folder and its parents (rootdir-style)
        here = importer.rsplit("/", 1)[0] if "/" in importer else ""
        roots = ["", "src"]
        while here:
            roots.append(here)
            here = here.rsplit("/", 1)[0] if "/" in here else ""
    found = []
    for root in roots:
        prefix = f"{root}/" if root else ""
        found += [f"{prefix}{rel}.py", f"{prefix}{rel}/__init__.py"]
    return list(dict.fromkeys(found))


def walk_scoped(tree: ast.AST) -> Iterator[tuple[ast.AST, tuple[ScopeNode, ...]]]:
    """Every node with the stack of functions and classes enclosing it."""
    stack: list[tuple[ast.AST, tuple[ScopeNode, ...]]] = [(tree, ())]
    while stack:
        node, scopes = stack.pop()
        yield node, scopes
        inner = scopes + (node,) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else scopes
        for child in reversed(list(ast.iter_child_nodes(node))):
            # Decorators belong to the enclosing scope's view of the definition,
            # but are reported on the definition they decorate.
            stack.append((child, inner))


def qualname(scopes: tuple[ScopeNode, ...]) -> str:
    return ".".join(s.name for s in scopes) or "<module>"


def is_test_name(name: str) -> bool:
    return name.startswith("test")


def test_functions(tree: ast.Module) -> Iterator[tuple[str, FunctionNode]]:
    """Functions pytest or unittest would collect as tests, with qualnames.

    pytest's defaults: ``test*`` functions at module level and ``test*``
    methods of ``Test*`` classes; unittest: ``test*`` methods of any class
    (it cannot be told statically whether a base is a TestCase).
    """

    def visit(body: list[ast.stmt], prefix: str, in_class: bool) -> Iterator[tuple[str, FunctionNode]]:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_test_name(node.name):
                yield prefix + node.name, node
            elif isinstance(node, ast.ClassDef):
                yield from visit(node.body, f"{prefix}{node.name}.", True)

    yield from visit(tree.body, "", False)


def body_fingerprint(node: FunctionNode | ast.ClassDef, any_leading_constant: bool = False) -> str:
    """NODE's body without its docstring, positions, decorators and name: equal for a
    renamed or moved definition; "" when nothing is left.

    ANY_LEADING_CONSTANT drops a leading ``...`` or number like a docstring
    (oracle-shrink's notion of the same test: a stub body is no body).
    """
    body = node.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and (any_leading_constant or isinstance(body[0].value.value, str))
    ):
        body = body[1:]
    return ast.dump(ast.Module(body=body, type_ignores=[]), annotate_fields=False) if body else ""


def definitions(tree: ast.Module) -> dict[str, str]:
    """qualname -> body_fingerprint of every function and class, so a renamed
    or moved definition can be recognised."""
    found: dict[str, str] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = prefix + node.name
                found[qual] = body_fingerprint(node)
                visit(node.body, qual + ".")

    visit(tree.body, "")
    return found
