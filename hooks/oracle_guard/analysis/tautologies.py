"""Assert conditions that can never be false: shared by oracle-shrink (OG308) and properties-monotonic (OG507).

A core module so neither hook imports the other; only `ast` is needed.
"""

from __future__ import annotations

import ast


def truthy_constant(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return bool(node.value) and node.value is not Ellipsis or node.value is Ellipsis
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return len(node.elts) > 0
    if isinstance(node, ast.Dict):
        return len(node.keys) > 0
    if isinstance(node, (ast.Lambda, ast.JoinedStr)) and not isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and isinstance(node.operand, ast.Constant):
        return not node.operand.value
    return False


def pure(node: ast.AST) -> bool:
    """No call, await or yield inside: evaluating it twice gives the same object."""
    return not any(isinstance(n, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom)) for n in ast.walk(node))


def tautology(test: ast.expr) -> bool:
    """An assert condition that can never be false."""
    if truthy_constant(test):
        return True
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return any(tautology(v) for v in test.values)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return all(tautology(v) for v in test.values)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right, op = test.left, test.comparators[0], test.ops[0]
        if isinstance(op, (ast.Eq, ast.Is, ast.LtE, ast.GtE)) and ast.dump(left) == ast.dump(right) and pure(left):
            return True  # `cls(1) == cls(1)` tests __eq__; only a plain value compared with itself is vacuous
        if isinstance(op, (ast.Eq, ast.Is)) and isinstance(left, ast.Constant) and isinstance(right, ast.Constant):
            return left.value == right.value
        if (
            isinstance(op, ast.In)
            and isinstance(right, (ast.Tuple, ast.List, ast.Set))
            and any(ast.dump(e) == ast.dump(left) for e in right.elts)
        ):
            return True
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "isinstance"
        and len(test.args) == 2
    ):
        kind = test.args[1]
        return isinstance(kind, ast.Name) and kind.id == "object"
    return False
