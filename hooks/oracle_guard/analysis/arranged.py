"""A check that compares what the test itself arranged (OG315).

A failing ``assert app.parse("x") == 3`` goes green when the test replaces
``app.parse`` with a stand-in that returns 3, wherever the replacement is
spelled: in the test's body, in a fixture the test requests (in its module or
in a conftest above it), in an autouse fixture; with ``mock.patch("app.parse",
return_value=3)``, ``patch.object(app, "parse")``, ``monkeypatch.setattr(app,
"parse", ...)``, ``setattr`` or a plain ``app.parse = lambda s: 3``.  The check
then compares the stand-in with the answer the test wrote: it cannot fail.

Judged by meaning: a replacement is a finding when the very function or method
whose result a check demands (oracle_guard.analysis.outcomes) resolves to what
is replaced, and the replacement is new since the test's base version.
Replacing a collaborator (the clock, the network, the environment) the checked
call uses is honest, and so is replacing the checked function in a test that
asserts on something else (how a caller behaves around it); ``wraps=`` keeps
the real function and is no replacement.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, NamedTuple

from oracle_guard.analysis import outcomes
from oracle_guard.analysis.checkfacts import Side, finding_at
from oracle_guard.analysis.meaning import checks as meaning
from oracle_guard.analysis.pysource import FunctionNode, Module, Names, SourceError
from oracle_guard.reporting.report import Finding

FIXTURE_DECORATORS = {"pytest.fixture", "pytest_asyncio.fixture"}
PATCH_CALLS = {"unittest.mock.patch", "mock.patch", "mocker.patch", "pytest_mock.MockerFixture.patch"}
PATCH_OBJECT_CALLS = {f"{p}.object" for p in PATCH_CALLS}
_MAX_FIXTURE_DEPTH = 3  # fixtures requesting fixtures: deeper chains are rare and each level costs a walk


class Patch(NamedTuple):
    where: str  # "the test" or "fixture `name`"
    target: str  # dotted: module path then the attribute
    node: ast.AST


def _text(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _joined(owner: ast.expr, attr: ast.expr | None, names: Names) -> str | None:
    name, base = _text(attr), names.qualify(owner)
    return f"{base}.{name}" if name and base else None


def call_target(call: ast.Call, names: Names) -> str | None:
    """The dotted target CALL replaces, if it is a patch call (``wraps=`` keeps the real one: None)."""
    if any(k.arg == "wraps" for k in call.keywords):
        return None
    func = call.func
    qualified = names.qualify(func) or ""
    args = call.args
    if isinstance(func, ast.Attribute) and func.attr == "setattr" and args:
        if len(args) == 2 and _text(args[0]):  # monkeypatch.setattr("pkg.mod.name", value)
            return _text(args[0])
        return _joined(args[0], args[1], names) if len(args) >= 2 else None
    if isinstance(func, ast.Name) and func.id == "setattr" and len(args) >= 2:
        return _joined(args[0], args[1], names)
    last = ".".join(qualified.split(".")[-2:])
    if qualified in PATCH_CALLS or last == "mocker.patch" or (isinstance(func, ast.Attribute) and last == "mock.patch"):
        return _text(args[0]) if args else None
    if qualified in PATCH_OBJECT_CALLS or qualified.endswith("mocker.patch.object"):
        return _joined(args[0], args[1], names) if len(args) >= 2 else None
    return None


def patches(fn: FunctionNode, names: Names, where: str) -> list[Patch]:
    """Every replacement FN makes: patch calls, decorators, ``setattr`` and ``obj.name = ...``."""
    found: list[Patch] = []
    for node in ast.walk(fn):
        target = None
        if isinstance(node, ast.Call):
            target = call_target(node, names)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Attribute):
                    base = names.qualify(t.value)
                    target = f"{base}.{t.attr}" if base and base not in ("self", "cls") else None
        if target and "." in target:
            found.append(Patch(where, target, node))
    return found


def fixture_name(fn: ast.AST, names: Names) -> tuple[str, bool] | None:
    """(the name a fixture is requested by, autouse) when FN is a pytest fixture, else None."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    for decorator in fn.decorator_list:
        call = decorator if isinstance(decorator, ast.Call) else None
        if (names.qualify(call.func if call else decorator) or "") not in FIXTURE_DECORATORS:
            continue
        name, autouse = fn.name, False
        for keyword in call.keywords if call else []:
            if keyword.arg == "autouse":
                autouse = not (isinstance(keyword.value, ast.Constant) and not keyword.value.value)
            elif keyword.arg == "name" and _text(keyword.value):
                name = _text(keyword.value) or name
        return name, autouse
    return None


class Fixtures:
    """The fixtures a test module can request: its own, then its conftests' (nearest first)."""

    def __init__(self, module: Module, read: Callable[[list[str]], dict[str, bytes | None]]) -> None:
        self.module = module
        self.read = read
        self._layers: list[tuple[Module, dict[str, tuple[FunctionNode, bool]]]] | None = None
        self._tops: dict[int, list[Patch]] = {}

    @property
    def layers(self) -> list[tuple[Module, dict[str, tuple[FunctionNode, bool]]]]:
        """The module's fixtures, then each conftest's up to the root (read when first asked)."""
        if self._layers is not None:
            return self._layers
        self._layers = [(self.module, self._of(self.module))]
        folder = posixpath.dirname(self.module.path)
        paths = []
        while True:
            paths.append(posixpath.join(folder, "conftest.py") if folder else "conftest.py")
            if not folder:
                break
            folder = posixpath.dirname(folder)
        blobs = self.read(paths)
        for path in paths:
            data = blobs.get(path)
            if data is None or b"fixture" not in data:
                continue
            try:
                conftest = Module.from_source(path, data)
            except SourceError:
                continue  # collection-snapshot reports a conftest that does not parse
            self._layers.append((conftest, self._of(conftest)))
        return self._layers

    @staticmethod
    def _of(module: Module) -> dict[str, tuple[FunctionNode, bool]]:
        out: dict[str, tuple[FunctionNode, bool]] = {}
        for node in ast.walk(module.tree):
            named = fixture_name(node, module.names)
            if named is not None:
                out.setdefault(named[0], (node, named[1]))  # type: ignore[arg-type]  # fixture_name: a function
        return out

    def _top_level(self, module: Module) -> list[Patch]:
        """Replacements a module makes when it is imported (``calc.price = lambda q: 4`` at the top)."""
        key = id(module)
        if key not in self._tops:
            where = f"the module ({module.path})"
            self._tops[key] = [
                p
                for stmt in module.tree.body
                if not isinstance(
                    stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
                )
                for p in patches(stmt, module.names, where)  # type: ignore[arg-type]  # any node is walked alike
            ]
        return self._tops[key]

    def arranged(self, test: FunctionNode, names: Names) -> list[Patch]:
        """Every replacement in force while TEST runs: its body, the fixtures it requests, autouse ones."""
        found = patches(test, names, "the test")
        wanted = [a.arg for a in test.args.args + test.args.kwonlyargs]
        for module, table in self.layers:
            wanted += [name for name, (_, autouse) in table.items() if autouse]
            found += self._top_level(module)
        seen: set[str] = set()
        for _ in range(_MAX_FIXTURE_DEPTH):
            more: list[str] = []
            for name in wanted:
                if name in seen:
                    continue
                seen.add(name)
                for module, table in self.layers:
                    if name in table:
                        fn = table[name][0]
                        found += patches(fn, module.names, f"fixture `{name}` ({module.path})")
                        more += [a.arg for a in fn.args.args if a.arg != "request"]
                        break
            wanted = more
        return found


def hits(target: str, call: ast.Call, names: Names, path: str = "") -> bool:
    """Whether CALL (in the module at PATH) calls what TARGET names: the same dotted function, the name as
    the test module itself binds it (``patch("tests.test_calc.price")``), or a method of that name on an object."""
    func = call.func
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if not last or target.rsplit(".", 1)[-1] != last:
        return False
    qualified = names.qualify(func)
    if qualified == target:
        return True
    owner = target.rsplit(".", 1)[0]
    own = path[: -len(".py")].replace("/", ".") if path.endswith(".py") else ""
    if isinstance(func, ast.Name) and own and (own == owner or own.endswith("." + owner)):
        return True  # the test module's own binding of the name, replaced where the test looks it up
    root = func
    while isinstance(root, ast.Attribute):
        root = root.value
    if isinstance(func, ast.Name) or (isinstance(root, ast.Name) and root.id in names.aliases):
        # a function imported by name, or reached through an imported module or class: the same
        # one only when the names agree (`from app import parse` is not `app.other.parse`)
        return qualified is not None and (qualified.endswith("." + target) or target.endswith("." + qualified))
    # A method on an object: `Parser().parse` is `app.Parser.parse`; so is `parser.parse` when the
    # replaced owner is a class.  A module's function of the same name (`requests.get` beside
    # `client.get`) is another function.
    receiver = func.value if isinstance(func, ast.Attribute) else None
    if isinstance(receiver, ast.Call):
        made = names.qualify(receiver.func)
        if made is not None:
            return made == owner or owner.endswith("." + made) or made.endswith("." + owner)
    return owner.rsplit(".", 1)[-1][:1].isupper()


def findings(
    base: tuple[FunctionNode, Fixtures, Names] | None,
    new: tuple[FunctionNode, Fixtures, Names],
    new_scope: meaning.Scope,
    new_cls: ast.ClassDef | None,
) -> list[tuple[ast.AST, str]]:
    """(check site, message) for each check of NEW that demands the result of a function its setup replaced."""
    fn, fixtures, names = new
    arranged = fixtures.arranged(fn, names)
    if not arranged:
        return []
    demanded = [d for d in outcomes.demands(fn, new_scope, new_cls) if not d.raises]
    calls = {d.call: d for d in demanded}
    hit: list[tuple[Patch, outcomes.Demand]] = []
    for patch in arranged:
        for d in calls.values():
            if hits(patch.target, d.callnode, names, fixtures.module.path):
                if patch.where != "the test" or getattr(patch.node, "lineno", 0) <= getattr(d.node, "lineno", 0):
                    hit.append((patch, d))
    if not hit:
        return []
    was: Counter[str] = Counter()
    if base is not None:
        was.update(p.target for p in base[1].arranged(base[0], base[2]))
    out = []
    reported: set[int] = set()
    for patch, d in _fresh(hit, was):
        if id(d.node) in reported:
            continue
        reported.add(id(d.node))
        out.append(
            (
                d.node,
                f"checks `{d.shown}`, but {patch.where} replaced `{patch.target}` with a stand-in "
                f"(line {getattr(patch.node, 'lineno', '?')}): the check compares what the test arranged, not the code",
            )
        )
    return out


def _fresh(hit: Iterable[tuple[Patch, outcomes.Demand]], was: Counter[str]) -> list[tuple[Patch, outcomes.Demand]]:
    """The hits whose replacement the base version of the test did not make."""
    return [(p, d) for p, d in hit if not was[p.target]]


if TYPE_CHECKING:  # an alias for annotations only: `bytes | None` is no runtime expression on 3.9
    Reader = Callable[[list[str]], dict[str, bytes | None]]


def module_findings(
    base_side: Side | None,
    new_side: Side,
    renamed: dict[int, tuple[FunctionNode, Side]],
    read_base: Reader,
    read_new: Reader,
    fixtures_elsewhere_kept: bool = False,
) -> list[Finding]:
    """OG315 for every test of NEW_SIDE, changed or not: a fixture added beside a test (autouse, or
    one it already requested) changes what it checks without changing its text.  RENAMED: a new
    test's node id -> its base version under another name.  FIXTURES_ELSEWHERE_KEPT: no conftest.py,
    plugin or code under test changed; then, when this module's own setup (everything but its
    undecorated functions) is the base's too, a test that is the base's as well is skipped: nothing
    around it can have changed what it checks."""
    new_fixtures = Fixtures(new_side.module, read_new)
    fixtures_of: dict[int, Fixtures] = {}
    base_index = base_side.analyzer.index() if base_side is not None else {}
    same_setup = (
        fixtures_elsewhere_kept
        and base_side is not None
        and _encoding_lines(base_side.module.source) == _encoding_lines(new_side.module.source)
        and _setup_of(base_side.module) == _setup_of(new_side.module)
    )
    out: list[Finding] = []
    for qualname, (node, cls, is_test) in new_side.analyzer.index().items():
        if not is_test:
            continue
        base_node, base_of = renamed.get(id(node), (base_index.get(qualname, (None, None, False))[0], base_side))
        # The same lines (decorators included) in the same encoding: the same test, compared without a walk.
        if (
            same_setup
            and base_node is not None
            and base_of is not None
            and base_of.analyzer.text_of(base_node) == new_side.analyzer.text_of(node)
        ):
            continue
        base = None
        if base_node is not None and base_of is not None:
            if id(base_of) not in fixtures_of:
                fixtures_of[id(base_of)] = Fixtures(base_of.module, read_base)
            base = (base_node, fixtures_of[id(base_of)], base_of.module.names)
        new = (node, new_fixtures, new_side.module.names)
        for site, message in findings(base, new, new_side.analyzer.scope, cls):
            out.append(finding_at(new_side, site, "OG315", f"{qualname}: {message}"))
    return out


def _encoding_lines(source: bytes) -> list[bytes]:
    """The first two lines, where a coding declaration (or a BOM) says how the rest decodes."""
    return source.split(b"\n", 2)[:2]


def _setup_of(module: Module) -> str:
    """A module as far as it can arrange a test: everything but the functions that are no fixture and
    that nothing in it names, such as the tests themselves and a helper added and not used yet (a
    fixture, an xunit ``setup_*``, a hook or a helper a test calls counts whole)."""
    named = Counter(_WORD.findall(module.source))  # every word of the text: more than the names, never fewer
    kept: list[str] = []
    stack: list[ast.stmt] = list(module.tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ClassDef):
            kept.append(ast.dump(ast.ClassDef(node.name, node.bases, node.keywords, [], node.decorator_list)))
            stack.extend(node.body)
        elif (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and not any(_names_a_fixture(d) for d in node.decorator_list)
            and named[node.name.encode()] <= 1  # its own `def` only
            and not node.name.lower().startswith(("setup", "teardown", "pytest_"))
        ):
            continue  # a test (judged on its own) or an unused helper: marks arrange nothing
        else:
            kept.append(ast.dump(node))
    return "\n".join(sorted(kept))


_WORD = re.compile(rb"[A-Za-z_]\w*")


def _names_a_fixture(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    spelled = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""
    return "fixture" in spelled.lower() or not isinstance(target, (ast.Attribute, ast.Name))
