"""The skip-mark rule: which marks skip or xfail a test, in any spelling.

forbid-skip-marks reports the new ones; quarantine-untouched counts them
under the freeze ledger.  Both import this rule, so neither hook imports
the other.  What counts: decorators on functions, methods and classes,
``pytestmark`` (module or class, single, list, tuple, ``+=``),
``pytest.param(..., marks=...)``, marks added at run time
(``item.add_marker(...)``), unittest's ``skip``/``skipIf``/``skipUnless``/
``expectedFailure``, ``__unittest_skip__ = True``, ``__test__ = False``,
through any import alias or a name bound to a mark.
"""

from __future__ import annotations

import ast
import re
from datetime import datetime
from typing import TYPE_CHECKING

from oracle_guard.analysis.pysource import DYNAMIC, Module, PrunedVisitor, ScopeNode
from oracle_guard.analysis.sourcetext import hot_lines, opaque_lines, text_of
from oracle_guard.repo.paths import DEFAULT_CONTRACT
from oracle_guard.reporting.report import notice
from oracle_guard.rules.pydiff import LazyLedger, Occurrence, Rule

if TYPE_CHECKING:
    from oracle_guard.contract.contract import Contract

SKIP_MARKS = {
    "pytest.mark.skip": "skip mark",
    "pytest.mark.skipif": "skipif mark",
    "pytest.mark.xfail": "xfail mark",
    "unittest.skip": "unittest skip",
    "unittest.skipIf": "unittest skipIf",
    "unittest.skipUnless": "unittest skipUnless",
    "unittest.expectedFailure": "unittest expectedFailure",
    "nose.tools.nottest": "nose nottest",
    "nose.tools.nontrivial.nottest": "nose nottest",
}
# Reruns outside the freeze ledger (OG110): a flaky test retried silently is a skipped failure.
RERUN_MARKS = {
    "pytest.mark.flaky": "flaky mark",  # pytest-rerunfailures (reruns=) and pytest-retry (retries=)
    "flaky.flaky": "flaky decorator",  # the `flaky` package (max_runs=)
    "flaky.flaky_decorator.flaky": "flaky decorator",
    "tenacity.retry": "tenacity retry decorator",
    "retrying.retry": "retrying decorator",
    "backoff.on_exception": "backoff decorator",
    "backoff.on_predicate": "backoff decorator",
}
SKIP_MARKS.update(RERUN_MARKS)
# The project's own retry helpers (`@retry(3)`, `@helpers.retry_on_failure`) on a test.
RETRY_NAME = re.compile(r"(^|_)(retry|retries|retrying|rerun|reruns|flaky)($|_)|^retry|retry$", re.I)
RERUN_NEXT = f"reruns belong to the freeze ledger: remove it, or add a freeze entry for the test (owner, expiry, remaining_reruns) in {DEFAULT_CONTRACT}"
MARK_NAMES = {"skip", "skipif", "xfail"}  # for string markers: item.add_marker("xfail")
DYNAMIC_BASES = {"pytest.mark", "unittest"}
# Arguments that only explain a skip; changing them is not a new skip.
REASON_ARGS = {"reason", "msg"}


# Where a skip mark can be spelled; a file (or statement) without one of these,
# or a local name bound to a mark, cannot hold a new mark.
TOKENS = (
    b"skip",
    b"xfail",
    b"expectedFailure",
    b"expecting_failure",
    b"__test__",
    b"nottest",
    b"getattr",
    b"add_marker",
    b"applymarker",
    b"ark(",
    b"filterwarnings",
    b"flaky",
    b"retry",
    b"retries",
    b"rerun",
    b"backoff",
    b"Retry",
    b"Flaky",
)


# `from .helpers import needs_db` then `@needs_db`: a decorator imported from the
# project itself may be a shared skip mark, resolved in its own module.
_FROM_IMPORT = re.compile(rb"^[ \t]*from[ \t]+([.\w]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]+)", re.M)
_THIRD_PARTY = ("pytest", "_pytest", "unittest", "hypothesis", "nose", "__future__", "typing", "os", "sys")


def imported_decorators(source: bytes) -> list[bytes]:
    """Names imported from project modules and used as a decorator or marker in SOURCE."""
    found = []
    if opaque_lines(source):  # `from .helpers import ｎeeds_db` binds `needs_db`
        source = (text_of(source) or "").encode("utf-8")
    for match in _FROM_IMPORT.finditer(source):
        module = match.group(1)
        if module.split(b".")[0].decode() in _THIRD_PARTY:
            continue
        for part in match.group(2).strip(b"()").split(b","):
            name = part.split()[-1].strip() if part.split() else b""
            if name and (b"@" + name in source or b"marker(" + name in source):
                found.append(name)
    return found


class SkipMarkRule(Rule):
    TRIGGER = re.compile(b"|".join(re.escape(t) for t in TOKENS))

    def could_match(self, source: bytes) -> bool:
        if any(token in source for token in TOKENS):  # many `in` scans beat one alternation
            return True
        return b"import" in source and bool(imported_decorators(source))

    def occurrences(self, module: Module) -> list[Occurrence]:
        prepared = self._prepared.pop(id(module), None)
        if prepared is not None and prepared[0].module is module and prepared[1] is module.reader:
            finder = prepared[0]
        else:  # none, or made for another module or another change's reader (imported marks read through it)
            finder = _Finder(module)
        for node in module.visited():
            finder.visit(node)
        for occurrence, kinds in finder.environment.items():
            self.environment[(module.path, occurrence)] = kinds
        return finder.found

    # id(module) -> its finder and the reader it read imported marks with, made by context() for occurrences()
    _prepared: dict[int, tuple[_Finder, object]] = {}

    def context(self, module: Module) -> object | None:
        """What a statement's marks depend on beyond itself: the names bound to marks, imported marks, warnings as errors."""
        finder = _Finder(module)
        if len(self._prepared) > 64:  # left by modules never visited: only the latest matter
            self._prepared.clear()
        self._prepared[id(module)] = (finder, module.reader)
        imported = sorted((name, kind, repr(finder.imported_env.get(name))) for name, kind in finder.imported.items())
        errors = b"filterwarnings" in module.source and finder.warnings_are_errors()
        return (imported, errors)

    def no_stronger(self, new: tuple[str, ...], base: tuple[str, ...]) -> bool:
        """A rerun mark whose count went down (or stayed) is the honest twin of one that went up."""
        # Any spelling to any other (`@flaky(max_runs=3)` -> `@pytest.mark.flaky(max_runs=3)`): the count decides.
        return (
            new[0] == base[0]
            and new[3:] == base[3:]
            and _is_rerun(new[1])
            and _is_rerun(base[1])
            and rerun_count(new[2], new[1]) <= rerun_count(base[2], base[1])
        )

    def _allowed_by_ledger(
        self, occurrence: Occurrence, path: str, ledger: Contract | LazyLedger | None, now: datetime
    ) -> bool:
        """A rerun mark also has to fit the covering freeze's remaining_reruns."""
        if occurrence.code != "OG110":
            return super().allowed(occurrence, path, ledger, now)
        if ledger is None or occurrence.qualname == "<module>":
            return False
        entry = ledger.freeze_for(f"{path}::{occurrence.qualname.replace('.', '::')}", now)
        return entry is not None and rerun_count(occurrence.key[2], occurrence.key[1]) <= entry.remaining_reruns

    # A new mark whose condition depends only on the environment, where a collection
    # snapshot is committed at the base: the collection layer decides (oracle_guard/analysis/envcondition.py).
    environment: dict[tuple[str, Occurrence], set[str]] = {}
    _snapshot: bool | None = None
    _snapshot_of: object = None

    def allowed(self, occurrence: Occurrence, path: str, ledger: Contract | LazyLedger | None, now: datetime) -> bool:
        if self._allowed_by_ledger(occurrence, path, ledger, now):
            return True
        if occurrence.code == "OG110":
            return False
        if (path, occurrence) not in self.environment or self.change_set is None:
            return False
        if self._snapshot_of is not self.change_set:
            from oracle_guard.analysis import envcondition

            self._snapshot_of = self.change_set
            self._snapshot = envcondition.snapshot_committed(
                self.change_set, getattr(ledger, "path", None) or DEFAULT_CONTRACT
            )
        if self._snapshot:
            notice(
                f"{path}:{occurrence.line}:{occurrence.col}: {occurrence.message.split(' (its condition')[0]}: its condition depends only on "
                f"{envcondition_describe(self.environment[(path, occurrence)])}; left to collection-snapshot (OG802 where it skips the tests) and the pytest plugin"
            )
        return bool(self._snapshot)


def envcondition_describe(kinds: set[str]) -> str:
    return " and ".join(sorted(kinds))


CONDITIONAL = {"pytest.mark.skipif", "pytest.mark.xfail", "unittest.skipIf", "unittest.skipUnless"}
ENV_HINT = "commit a collection snapshot and collection-snapshot judges it where the tests run"


def _is_rerun(kind: str) -> bool:
    return kind in RERUN_MARKS or kind.startswith("retry:")


_COUNT = re.compile(
    r"(?:^|, )(?:(reruns|retries|max_runs|max_tries|tries|times|attempts|max_attempts|stop_max_attempt_number)=)?(-?\d+)(?=,|$)"
)


def rerun_count(detail: str, kind: str = "pytest.mark.flaky") -> float:
    """Reruns a mark's arguments give (`reruns=3`, `retries=2`, `max_runs=4` is 3, a bare mark is 1).

    Only the marks whose defaults are known get a default: for anything else a
    count that cannot be read is unbounded, so no freeze can be said to cover it.
    """
    attempts = re.search(r"stop_after_attempt\((\d+)\)", detail)  # tenacity
    if attempts:
        return float(attempts.group(1)) - 1
    for match in _COUNT.finditer(detail):
        value = float(match.group(2))
        return (
            value - 1
            if match.group(1)
            in ("max_runs", "max_tries", "tries", "attempts", "max_attempts", "stop_max_attempt_number")
            else value
        )
    if not detail and kind in ("pytest.mark.flaky", "flaky.flaky", "flaky.flaky_decorator.flaky"):
        return 1.0
    if kind in ("pytest.mark.flaky", "flaky.flaky", "flaky.flaky_decorator.flaky") and not any(
        k in detail for k in ("reruns=", "retries=", "max_runs=")
    ):
        return 1.0  # only other keywords (`delay=`, `condition=`): the default count
    return float("inf")


def _owner(scopes: list[ScopeNode]) -> str:
    return ".".join(s.name for s in scopes) or "<module>"


class _Finder(PrunedVisitor):
    def __init__(self, module: Module) -> None:
        self.module = module
        self.names = module.names
        self.scopes: list[ScopeNode] = []
        self.param: str = ""  # identity of the enclosing pytest.param(...), if any
        self.found: list[Occurrence] = []
        self.environment: dict[Occurrence, set[str]] = {}  # occurrence -> what of the environment its condition reads
        self.imported = self._imported_marks()
        self.hot = hot_lines(
            module.source, TOKENS + self._names_bound_to_marks() + tuple(n.encode() for n in self.imported)
        )

    def _imported_marks(self) -> dict[str, tuple[str, str, str]]:
        """Local name -> (kind, condition, definition) for skip marks imported from the project."""
        found: dict[str, tuple[str, str, str]] = {}
        self.imported_env: dict[str, set[str] | None] = {}
        for raw in imported_decorators(self.module.source):
            name = raw.decode()
            dotted = self.names.aliases.get(name)
            resolved = self.module.imported_binding(dotted) if dotted else None
            if resolved is None:
                continue
            value, other = resolved
            target = value.func if isinstance(value, ast.Call) else value
            qualified = other.names.qualify(target) or ""
            if qualified in SKIP_MARKS:
                condition = self._condition(value, qualified) if isinstance(value, ast.Call) else ""
                other.reader = self.module.reader
                self.imported_env[name] = (
                    self._environment(value, qualified, other) if isinstance(value, ast.Call) else None
                )
                found[name] = (qualified, condition, f"{other.path}: {other.segment(value)}")
        return found

    def _names_bound_to_marks(self) -> tuple[bytes, ...]:
        """Local names that stand for a mark (`ef = unittest.expectedFailure`, `later = pytest.mark.skip()`)."""
        bound = [name for name in self.names.aliases if self._mark_kind(ast.Name(name, ast.Load()))]
        for name, call in self.names.bindings.items():
            if self._mark_kind(call) or self._mark_kind(call.func):
                bound.append(name)
        return tuple(name.encode() for name in bound)

    # -- scopes ----------------------------------------------------------------

    def _visit_def(self, node: ScopeNode) -> None:
        self.scopes.append(node)  # decorators apply to the definition they decorate
        for deco in node.decorator_list:
            if self._retry_decorator(deco):
                continue
            self.visit(deco)
        for child in ast.iter_child_nodes(node):
            if child not in node.decorator_list:
                self.visit(child)
        self.scopes.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _visit_def

    def _retry_decorator(self, deco: ast.expr) -> bool:
        """`@retry(3)`, `@helpers.retry_on_failure`: a retry helper that no mark table names."""
        target = deco.func if isinstance(deco, ast.Call) else deco
        if self._mark_kind(target) or self._mark_kind(deco):
            return False
        spelled = self.names.qualify(target) or ast.unparse(target)
        if not RETRY_NAME.search(spelled.rsplit(".", 1)[-1]):
            return False
        detail = self._condition(deco, spelled) if isinstance(deco, ast.Call) else ""
        shown = f"({detail})" if detail else ""
        self._add(deco, f"retry:{spelled}", detail, f"new retry decorator `{spelled}{shown}`")
        return True

    # -- reports ---------------------------------------------------------------

    def _add(
        self, node: ast.AST, kind: str, detail: str, message: str, owner: str | None = None, env: set[str] | None = None
    ) -> None:
        owner = owner or _owner(self.scopes)
        line, col = self.module.position(node)
        where = "this module" if owner == "<module>" else owner
        if owner.startswith("<mark "):
            where = "every test that uses it"
        code = "OG102" if kind == "unverifiable" else "OG110" if _is_rerun(kind) else "OG101"
        suffix = f": {RERUN_NEXT}" if code == "OG110" else ""
        hint = (
            f" (its condition depends only on {envcondition_describe(env)}: {ENV_HINT})"
            if env and code == "OG101"
            else ""
        )
        occurrence = Occurrence(
            (owner, kind, detail, self.param), owner, line, col, code, f"{message} on {where}{suffix}{hint}"
        )
        self.found.append(occurrence)
        if env and code == "OG101":
            self.environment[occurrence] = env

    def _environment(self, call: ast.Call, kind: str, module: Module | None = None) -> set[str] | None:
        """What of the environment a conditional mark's condition depends on (None: not only that)."""
        if kind not in CONDITIONAL:
            return None
        from oracle_guard.analysis import envcondition  # only for a new conditional mark

        conditions = list(call.args[:1] if kind.startswith("unittest.") else call.args)
        conditions += [k.value for k in call.keywords if k.arg == "condition"]
        if not conditions:
            return None
        found: set[str] = set()
        for condition in conditions:
            kinds = envcondition.classify(condition, module or self.module, string_condition=kind.startswith("pytest."))
            if kinds is None:
                return None
            found |= kinds
        return found

    def _mark_kind(self, node: ast.AST) -> str | None:
        name = self.names.qualify(node)
        if name is None:
            return None
        if name in SKIP_MARKS:
            return name
        base, _, last = name.rpartition(".")
        if last == DYNAMIC and base in DYNAMIC_BASES:
            return "unverifiable"
        return None

    def _condition(self, call: ast.Call, kind: str) -> str:
        args = call.args
        if kind.startswith("unittest.skip") and kind != "unittest.skip":
            args = args[:1]  # skipIf(condition, reason)
        elif kind in ("unittest.skip", "pytest.mark.skip"):
            args = []
        parts = [ast.unparse(a) for a in args]
        parts += [f"{k.arg}={ast.unparse(k.value)}" for k in call.keywords if k.arg not in REASON_ARGS]
        return ", ".join(parts)

    # -- expressions -----------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> None:
        spelled = self._mark_kind(node)  # getattr(pytest.mark, ...) names a mark itself
        if spelled == "unverifiable":
            self._add(
                node, spelled, ast.unparse(node), f"unverifiable mark `{self.module.segment(node)}` (dynamic name)"
            )
            return
        if spelled:
            self._add(node, spelled, "", f"new {SKIP_MARKS[spelled]} (`{self.module.segment(node)}`)")
            return
        func = self.names.expand(node.func) if isinstance(node.func, ast.Name) else node.func
        kind = self._mark_kind(func)
        if kind == "unverifiable":
            self._add(node, kind, ast.unparse(node), f"unverifiable mark `{self.module.segment(node)}` (dynamic name)")
            return
        if kind:
            detail = self._condition(node, kind)
            shown = f" ({detail})" if detail else ""
            self._add(node, kind, detail, f"new {SKIP_MARKS[kind]}{shown}", env=self._environment(node, kind))
            for child in list(node.args) + [k.value for k in node.keywords]:
                self.visit(child)
            return
        callee = self.names.qualify(node.func) or ""
        if callee == "pytest.mark.filterwarnings" and self._silences_an_error(node):
            text = node.args[0].value  # type: ignore[attr-defined]  # a str constant: _silences_an_error
            self._add(
                node,
                callee,
                text,
                f"new `filterwarnings({text!r})` mark where the project turns warnings into errors (a failure silenced)",
            )
        if callee.endswith(("add_marker", "applymarker")):
            self._marker_argument(node)
        if callee in ("pytest.param", "_pytest.mark.param"):
            saved = self.param
            ident = next((ast.unparse(k.value) for k in node.keywords if k.arg == "id"), None)
            self.param = f"param[{ident or ', '.join(ast.unparse(a) for a in node.args)}]"
            self.generic_visit(node)
            self.param = saved
            return
        if callee in ("setattr",) and len(node.args) == 3:
            self._flag_attribute(node, node.args[1], node.args[2], owner=ast.unparse(node.args[0]))
        if (
            callee.endswith(("Mark", "MarkDecorator"))
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in MARK_NAMES
        ):
            self._add(node, f"pytest.mark.{node.args[0].value}", "", f"new {node.args[0].value} mark built by hand")
        self.generic_visit(node)

    def _silences_an_error(self, call: ast.Call) -> bool:
        """An `ignore` filter, in a project whose pytest configuration makes warnings errors."""
        arg = call.args[0] if call.args else None
        if not (
            isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.strip().startswith("ignore")
        ):
            return False
        return self.warnings_are_errors()

    def warnings_are_errors(self) -> bool:
        """Whether this side's pytest configuration turns warnings into errors (read once)."""
        if self._warnings_are_errors is None:
            self._warnings_are_errors = False
            if self.module.reader is not None:
                from oracle_guard.pytest_side.config import (
                    compare as pytest_config,  # only for a file that spells an ignore filter
                )

                blobs = {
                    name: self.module.reader(name)
                    for name in ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
                }
                try:
                    settings = pytest_config.settings_of(blobs)
                except Exception:  # a broken config is collection-snapshot's finding, not this one's
                    settings = pytest_config.Settings()
                filters = settings.ini.get("filterwarnings", [])
                options = settings.addopts
                self._warnings_are_errors = any(f.strip().startswith("error") for f in filters) or any(
                    o in ("-Werror", "-W error") or (o == "error" and i and options[i - 1] == "-W")
                    for i, o in enumerate(options)
                )
        return self._warnings_are_errors

    _warnings_are_errors: bool | None = None

    def _marker_argument(self, call: ast.Call) -> None:
        if not call.args:
            return
        arg = call.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            if arg.value in MARK_NAMES:
                self._add(call, f"pytest.mark.{arg.value}", "", f"new {arg.value} mark added at run time")
            return
        expanded = self.names.expand(arg) if isinstance(arg, ast.Name) else arg
        target = expanded.func if isinstance(expanded, ast.Call) else expanded
        # A resolvable pytest/unittest mark is judged where it is spelled (visited
        # after this); anything else (`make()`, a loop variable) cannot be proven harmless.
        if not (self.names.qualify(target) or "").startswith(("pytest.mark.", "unittest.")):
            self._add(
                call,
                "unverifiable",
                ast.unparse(arg),
                f"unverifiable mark added at run time: `{self.module.segment(call)}`",
            )

    def visit_Attribute(self, node: ast.Attribute) -> None:
        kind = self._mark_kind(node)
        if kind and kind != "unverifiable":
            self._add(node, kind, "", f"new {SKIP_MARKS[kind]}")
            return
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        kind: str | None  # the mark NODE stands for
        if isinstance(node.ctx, ast.Load) and node.id in self.imported:
            kind, detail, where = self.imported[node.id]
            self._add(
                node,
                kind,
                detail,
                f"new {SKIP_MARKS[kind]} through `{node.id}` (imported: {where})",
                env=self.imported_env.get(node.id),
            )
            return
        if isinstance(node.ctx, ast.Load):
            kind = self._mark_kind(node)
            bound = self.names.expand(node)
            if kind and kind != "unverifiable":
                self._add(node, kind, "", f"new {SKIP_MARKS[kind]} (`{node.id}`)")
            elif bound is not node and isinstance(bound, ast.Call):
                kind = self._mark_kind(bound.func)
                if kind and kind != "unverifiable":
                    detail = self._condition(bound, kind)
                    self._add(
                        node,
                        kind,
                        detail,
                        f"new {SKIP_MARKS[kind]} through `{node.id}` = `{self.module.segment(bound)}`",
                        env=self._environment(bound, kind),
                    )

    # -- statements ------------------------------------------------------------

    def _flag_attribute(self, node: ast.AST, name_node: ast.AST, value: ast.AST, owner: str | None = None) -> None:
        name = name_node.value if isinstance(name_node, ast.Constant) else None
        truth = value.value if isinstance(value, ast.Constant) else None
        if name == "__unittest_skip__" and truth:
            self._add(
                node, "unittest.skip", "__unittest_skip__", "new `__unittest_skip__ = True` (skips the tests)", owner
            )
        elif name == "__unittest_expecting_failure__" and truth:
            self._add(node, "unittest.expectedFailure", name, f"new `{name} = True` (an expected failure)", owner)
        elif name == "__test__" and truth is not None and not truth:
            self._add(node, "__test__", "", "new `__test__ = False` (pytest and unittest stop collecting it)", owner)

    def _assignment(self, node: ast.stmt, targets: list[ast.expr], value: ast.expr | None) -> None:
        for target in targets:
            if isinstance(target, ast.Name):
                self._flag_attribute(node, ast.Constant(target.id), value or ast.Constant(None))
            elif isinstance(target, ast.Attribute):
                owner = ast.unparse(target.value)
                owner = (
                    ".".join(s.name for s in self.scopes) + "." + owner
                    if self.scopes and owner in ("self", "cls")
                    else owner
                )
                self._flag_attribute(node, ast.Constant(target.attr), value or ast.Constant(None), owner)
        # `later = pytest.mark.skip(...)` / `skip = pytest.mark.skip` is counted where it is used.
        plain = [t for t in targets if isinstance(t, ast.Name) and t.id != "pytestmark"]
        if value is not None and plain and len(plain) == len(targets):
            direct = value.func if isinstance(value, ast.Call) else value
            kind = self._mark_kind(direct)
            if kind not in (None, "unverifiable"):
                if not self.scopes and isinstance(value, ast.Call):
                    # A shared mark's definition: its condition widened skips every test using it.
                    detail = self._condition(value, kind)
                    for target in plain:
                        owner = f"<mark {target.id}>"
                        shown = f" ({detail})" if detail else ""
                        self._add(
                            node,
                            kind,
                            detail,
                            f"shared {SKIP_MARKS[kind]} `{target.id}` changed to{shown}",
                            owner,
                            env=self._environment(value, kind),
                        )
                for child in ast.iter_child_nodes(value):
                    if child is not direct:
                        self.visit(child)
                return
        if value is not None:
            self.visit(value)

    def visit_Assign(self, node: ast.Assign) -> None:
        self._assignment(node, node.targets, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._assignment(node, [node.target], node.value)

    def visit_Import(self, node: ast.Import) -> None:
        return  # `from pytest.mark import skip` names a mark only where it is used

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        return  # as visit_Import


RULE = SkipMarkRule()
