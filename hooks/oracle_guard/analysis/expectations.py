"""Expected values rewritten in place: the cheapest way to turn a test green.

A test asserted ``parse_price("12.50") == 1250``; the code now returns 1249,
and the patch changes the test to expect 1249.  Nothing was deleted and the
count of checks is the same, so only a comparison of the checks themselves
sees it: a check whose shape is unchanged but whose constants differ from
the base's is an oracle rewritten to agree with new behaviour.  Assertion
messages do not count; renaming, reformatting and moving the test do not
either.
"""

from __future__ import annotations

import ast
import copy
import re
from collections import Counter
from dataclasses import dataclass

from oracle_guard.analysis.pysource import FunctionNode

_MESSAGE_KWARGS = {"msg", "message", "err_msg", "reason"}
_TWO_ARG_ASSERTS = {
    "assertEqual",
    "assertEquals",
    "assertNotEqual",
    "assertAlmostEqual",
    "assertIs",
    "assertIsNot",
    "assertIn",
    "assertNotIn",
    "assertGreater",
    "assertGreaterEqual",
    "assertLess",
    "assertLessEqual",
    "assertCountEqual",
    "assertListEqual",
    "assertDictEqual",
    "assertSetEqual",
    "assertTupleEqual",
    "assertSequenceEqual",
    "assertMultiLineEqual",
    "assertRegex",
    "assertIsInstance",
    "assertRaisesRegex",
}


@dataclass(frozen=True)
class Check:
    shape: str  # the check with every constant replaced by a placeholder
    constants: tuple[str, ...]
    node: ast.AST
    inputs: tuple[bool, ...] = ()  # per constant: an argument of a call (what is asked), not the answer


# Tolerances have their own rule (loosened is OG304, tightened is fine): part of the shape.
_TOLERANCE_KWARGS = {"rel", "abs", "rtol", "atol", "rel_tol", "abs_tol", "places", "delta", "decimal", "significant"}


_NUMBERED_FIELD = re.compile(r"\{\d+\}")


class _Blank(ast.NodeTransformer):
    """Replaces constants by placeholders, noting which were inputs (call arguments)."""

    def __init__(self) -> None:
        self.constants: list[str] = []
        self.inputs: list[bool] = []
        self._depth = 0

    def visit_keyword(self, node: ast.keyword) -> ast.AST:
        return node if node.arg in _TOLERANCE_KWARGS else self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if _constructs_value(node):
            # list("abc"), Decimal("1.50"), date(2024, 1, 2): an expected value spelled as a call
            if (
                self._depth == 0
                and all(_literal(a) for a in node.args)
                and all(_literal(k.value) for k in node.keywords)
            ):
                return self._note(ast.unparse(node), node, "_V_")
            node.args = [self.visit(a) for a in node.args]
            node.keywords = [self.visit(k) for k in node.keywords]
            return node
        node.func = self.visit(node.func)
        self._depth += 1
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [self.visit(k) for k in node.keywords]
        self._depth -= 1
        return node

    def _note(self, text: str, node: ast.AST, name: str) -> ast.AST:
        self.constants.append(text)
        self.inputs.append(self._depth > 0)
        return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node)

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        # ``abs(a - b) < eps``: eps is a tolerance (OG304's business), so part of the shape.
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
            left, right = node.left, node.comparators[0]
            if _is_abs(left) or _is_abs(right):
                node.left = self.visit(left) if _is_abs(left) else left
                node.comparators = [self.visit(right) if _is_abs(right) else right]
                return node
        return self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, (int, float, complex, str, bytes)) and not isinstance(node.value, bool):
            value = node.value
            if isinstance(value, str):  # pyupgrade's '{0}' -> '{}' asks the same
                value = _NUMBERED_FIELD.sub("{}", value)
            return self._note(repr(value), node, "_C_")
        return node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        return self._note(ast.unparse(node), node, "_F_")

    def _display(self, node: ast.AST) -> ast.AST:
        # (1, 2) -> (1,), {"a": 1, "b": 2} -> {"a": 1}: the whole literal is the expected value
        if self._depth == 0 and _literal(node) and not isinstance(node, ast.Constant):
            return self._note(_NUMBERED_FIELD.sub("{}", ast.unparse(node)), node, "_V_")
        return self.generic_visit(node)

    visit_Tuple = visit_List = visit_Set = visit_Dict = _display


# Calls that build a value rather than ask the code under test something.
_VALUE_CONSTRUCTORS = {
    "list",
    "tuple",
    "dict",
    "set",
    "frozenset",
    "str",
    "bytes",
    "bytearray",
    "int",
    "float",
    "complex",
    "bool",
    "Decimal",
    "Fraction",
    "date",
    "datetime",
    "time",
    "timedelta",
    "UUID",
    "Path",
    "PurePath",
    "PurePosixPath",
    "PosixPath",
    "OrderedDict",
    "Counter",
    "deque",
}


def _constructs_value(node: ast.Call) -> bool:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in _VALUE_CONSTRUCTORS


def _literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _literal(node.operand)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _literal(k) for k in node.keys) and all(_literal(v) for v in node.values)
    if isinstance(node, ast.Call) and _constructs_value(node):
        return all(_literal(a) for a in node.args) and all(_literal(k.value) for k in node.keywords)
    return False


def _is_abs(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "abs"


def _without_message(stmt: ast.stmt) -> ast.AST | None:
    """The part of a statement that decides pass or fail; None when it is no check."""
    if isinstance(stmt, ast.Assert):
        return stmt.test
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        name = (
            call.func.attr
            if isinstance(call.func, ast.Attribute)
            else call.func.id
            if isinstance(call.func, ast.Name)
            else ""
        )
        if not name.startswith("assert"):
            return None
        call = copy.copy(call)
        call.keywords = [k for k in call.keywords if k.arg not in _MESSAGE_KWARGS]
        if name in _TWO_ARG_ASSERTS or "close" in name.lower() or "almost" in name.lower():
            call.args = call.args[:2]
        return call
    return None


def checks(func: FunctionNode) -> list[Check]:
    found = []
    for node in ast.walk(func):
        if not isinstance(node, ast.stmt) or node is func:
            continue
        core = _without_message(node)
        if core is None:
            continue
        blank = _Blank()
        core = copy.deepcopy(core)
        if isinstance(core, ast.Call):  # self.assertEqual(actual, expected): its arguments are the check
            core.args = [blank.visit(a) for a in core.args]
            core.keywords = [blank.visit(k) for k in core.keywords]
        else:
            core = blank.visit(core)
        shape = ast.dump(core, annotate_fields=False)
        if blank.constants:
            found.append(Check(shape, tuple(blank.constants), node, tuple(blank.inputs)))
    return found


class _DropChecks(ast.NodeTransformer):
    def visit_Assert(self, node: ast.Assert) -> None:
        return None

    def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
        return None if _without_message(node) is not None else node


_SETUPS: dict[int, tuple[FunctionNode, str]] = {}


def _setup(func: FunctionNode) -> str:
    """Everything in the test but its checks: inputs, calls, fixtures, decorators (worked out once)."""
    hit = _SETUPS.get(id(func))
    if hit is not None and hit[0] is func:
        return hit[1]
    if len(_SETUPS) > 512:
        _SETUPS.clear()
    stripped = _DropChecks().visit(copy.deepcopy(func))
    stripped.name = ""
    text = ast.dump(stripped, annotate_fields=False)
    _SETUPS[id(func)] = (func, text)
    return text


def same_setup(base: FunctionNode, new: FunctionNode) -> bool:
    """Whether the two versions differ only in their checks."""
    return _setup(base) == _setup(new)


def _beyond(found: list[Check], common: Counter[tuple[str, tuple[str, ...]]]) -> list[Check]:
    """The checks of FOUND left once those the other side has too are set aside."""
    left = Counter(common)
    rest = []
    for check in found:
        key = (check.shape, check.constants)
        if left[key] > 0:
            left[key] -= 1
        else:
            rest.append(check)
    return rest


def rewritten(base: FunctionNode, new: FunctionNode) -> list[tuple[Check, Check]]:
    """Pairs (base check, new check) with the same shape but other constants.

    Only where the rest of the test is unchanged: when its inputs changed too,
    the test now asks another question, and its new answer is not a rewrite.
    """
    if _setup(base) != _setup(new):
        return []
    base_checks, new_checks = checks(base), checks(new)
    exact = Counter((c.shape, c.constants) for c in base_checks) & Counter((c.shape, c.constants) for c in new_checks)
    removed, added = _beyond(base_checks, exact), _beyond(new_checks, exact)
    pairs = []
    for old in removed:
        match = next((c for c in added if c.shape == old.shape), None)
        if match is not None:
            added.remove(match)
            asked_again = any(a != b and is_input for a, b, is_input in zip(old.constants, match.constants, old.inputs))
            if not asked_again:  # only the expected answer changed
                pairs.append((old, match))
    return pairs


def describe(old: Check, new: Check) -> str:
    changed = [(a, b) for a, b in zip(old.constants, new.constants) if a != b]
    shown = ", ".join(f"{a} -> {b}" for a, b in changed[:3])
    return f"expected value rewritten ({shown})"
