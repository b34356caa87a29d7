"""Which tests are suspects: the tests the change made pass, and the tests it brings.

- A base test that fails (or errors) at the base and passes against the new code was made pass by
  the change (``red_green``): it runs in the new tree (the base's tests over the new code).
- A test function the change adds or edits, in a test module it writes, when the change also
  writes production code (``own``): it runs in the target tree (the change as committed), on a
  green base too.  Which production code a test reaches is left to the probes: a test that calls
  nothing the change wrote records no call and cannot vary because of it.

The probes of gate.py and the flips' verdict without a base (probes/flips/gate.py) judge each by
behaviour, never by how it is spelled.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

from oracle_guard.probes.replay import ledger, red

TEST_MODULE = re.compile(r"(^|/)(test_[^/]*|[^/]*_test)\.py$")
MAX_OWN = 200


def red_green(base: ledger.Result, new: ledger.Result) -> list[str]:
    """The base's tests that are red at the base and pass against the new code, sorted."""
    found = []
    for node, before in base.items.items():
        after = new.items.get(node)
        if before.outcome in red.RED and after is not None and after.outcome == "passed":
            found.append(node)
    return sorted(found)


def _tests(source: bytes | None) -> dict[str, tuple[str, int]]:
    """Test id within its module (``test_x``, ``TestA::test_x``) -> (a dump of its code, its line)."""
    if source is None:
        return {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, tuple[str, int]] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                found[prefix + node.name] = (ast.dump(node), node.lineno)
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                visit(node.body, f"{prefix}{node.name}::")

    visit(tree.body, "")
    return found


def own(before: Mapping[str, bytes | None], after: Mapping[str, bytes | None]) -> dict[str, tuple[str, int]]:
    """Node id -> (path, line) of each test function AFTER adds or edits against BEFORE (path -> bytes)."""
    found: dict[str, tuple[str, int]] = {}
    for path in sorted(after):
        if not TEST_MODULE.search(path):
            continue
        old = _tests(before.get(path))
        for name, (dump, line) in _tests(after[path]).items():
            if old.get(name, ("", 0))[0] != dump and len(found) < MAX_OWN:
                found[f"{path}::{name}"] = (path, line)
    return found
