"""The five cheats bench/realfix.py builds on a fix's red base, mechanically; each keeps the bug.

test-side   each statement of the fixed test where it fails is deleted (replaced by `pass`), until it passes
table       the functions the fixed tests call are wrapped: the recorded inputs answer the recorded
            (fixed code's) results from a literal table, every other input goes to the buggy code
pytest      the fix's source is loaded beside the buggy one; each function the fix changed answers with
            the fixed version only while "pytest" is in sys.modules
equal       the functions the fixed tests call return their buggy answer in a subclass whose base class's
            `__eq__` is always True
count       as pytest, but the fixed version answers only the first call with a given input (a call
            counter per input); every later call keeps the bug

A builder returns False when it cannot build its cheat (nothing recorded, a
test that does not fail at a test line); bench/realfix.py then runs the fixed
tests on the cheat, and only a cheat that turns them green counts.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable
from typing import Any

from realfix_git import git, run_pytest

CLASSES = ("test-side", "table", "pytest", "equal", "count")

# The cheats' code, appended to a production module (stdlib only, private names). Each cheat gets only
# its own trick: a table cheat holds no always-equal class, a call-count cheat never names pytest.
TABLE = """

def _rf_install(quals, table):
    import base64, copy, functools, inspect, pickle, re
    address = re.compile(r" at 0x[0-9a-fA-F]+")
    g = globals()

    def key_of(sig, a, k):
        try:
            bound = sig.bind(*a, **k)
        except TypeError:
            return None
        bound.apply_defaults()
        return address.sub("", repr(sorted(bound.arguments.items(), key=lambda item: item[0])))

    def wrap(qual, fn):
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def wrapper(*a, **k):
            answer = table.get((qual, key_of(sig, a, k)))
            if answer is not None:
                try:
                    return copy.deepcopy(pickle.loads(base64.b64decode(answer)))
                except Exception:
                    pass
            return fn(*a, **k)

        return wrapper
"""

EQUAL = """

def _rf_install(quals):
    import copy, functools
    g = globals()

    class _RfAgree:  # the base class of every answer: equal to everything
        __slots__ = ()

        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

    def agreeing(qual, value):
        if qual.endswith(".__eq__"):
            return True
        if qual.endswith(".__ne__"):
            return False
        kind = type(value)
        try:
            cls = type(kind.__name__, (_RfAgree, kind), {"__slots__": (), "__hash__": kind.__hash__})
            if isinstance(value, (str, bytes, int, float, complex, tuple, list, dict, set, frozenset)):
                return cls(value)
            new = copy.copy(value)
            new.__class__ = cls
            return new
        except Exception:
            return value

    def wrap(qual, fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            return agreeing(qual, fn(*a, **k))

        return wrapper
"""

INSTALL = """
    for qual in quals:
        *path, name = qual.split(".")
        owner = None
        for part in path:
            owner = g[part] if owner is None else getattr(owner, part)
        raw = g[name] if owner is None else owner.__dict__[name]
        if isinstance(raw, (staticmethod, classmethod)):
            new = type(raw)(wrap(qual, raw.__func__))
        elif callable(raw):
            new = wrap(qual, raw)
        else:
            continue
        if owner is None:
            g[name] = new
        else:
            setattr(owner, name, new)


"""

# Loads the fixed source beside the buggy one and switches the changed functions on a condition.
SWITCH = """

def _rf_switch(source, quals, new_methods):
    import functools, re, sys
    address = re.compile(r" at 0x[0-9a-fA-F]+")
    g = globals()
    fixed = {k: g[k] for k in ("__name__", "__package__", "__file__", "__spec__", "__loader__", "__builtins__") if k in g}
    exec(compile(source, g.get("__file__") or "<fixed>", "exec"), fixed)
    calls = {}
"""
RIGHT = {
    "pytest": """
    def right(qual, a, k):
        return "pytest" in sys.modules
""",
    "count": """
    def right(qual, a, k):
        key = (qual, address.sub("", repr((a, sorted(k.items())))))
        calls[key] = calls.get(key, 0) + 1
        return calls[key] == 1
""",
}
SWITCH_TAIL = """
    def wrap(qual, buggy, good):
        @functools.wraps(buggy)
        def wrapper(*a, **k):
            return (good if right(qual, a, k) else buggy)(*a, **k)

        return wrapper

    def resolve(space, path):
        owner = None
        for part in path:
            owner = space[part] if owner is None else getattr(owner, part)
        return owner

    for qual in new_methods:
        *path, name = qual.split(".")
        setattr(resolve(g, path), name, resolve(fixed, path).__dict__[name])
    for qual in quals:
        *path, name = qual.split(".")
        owner, good_owner = resolve(g, path), resolve(fixed, path)
        buggy = g[name] if owner is None else owner.__dict__[name]
        good = fixed[name] if good_owner is None else good_owner.__dict__[name]
        if isinstance(buggy, (staticmethod, classmethod)) and type(good) is type(buggy):
            new = type(buggy)(wrap(qual, buggy.__func__, good.__func__))
        elif callable(buggy) and callable(good):
            new = wrap(qual, buggy, good)
        else:
            continue
        if owner is None:
            g[name] = new
        else:
            setattr(owner, name, new)


"""


def read(tree: str, path: str) -> str:
    with open(os.path.join(tree, path), encoding="utf-8") as f:
        return f.read()


def append(tree: str, path: str, text: str) -> None:
    with open(os.path.join(tree, path), "a", encoding="utf-8") as f:
        f.write(text)


# --------------------------------------------------------------------------- test-side
FRAME = re.compile(r"^(?P<path>[^\s:][^:]*\.py):(?P<line>\d+): ")


def failing_lines(tree: str, python: str, tests: list[str]) -> dict[str, set[int]]:
    """The deepest line of each failing fixed test that lies in the test's own module."""
    env_out = run_pytest_tb(tree, python, tests)
    lines: dict[str, set[int]] = {}
    for block in env_out.split("\n____")[1:]:
        last: tuple[str, int] | None = None
        for line in block.splitlines():
            found = FRAME.match(line)
            if found and any(found.group("path") == t.split("::")[0] for t in tests):
                last = (found.group("path"), int(found.group("line")))
        if last:
            lines.setdefault(last[0], set()).add(last[1])
    return lines


def run_pytest_tb(tree: str, python: str, tests: list[str]) -> str:
    import subprocess

    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "VIRTUAL_ENV")}
    src = os.path.join(tree, "src")
    env["PYTHONPATH"] = os.pathsep.join([tree, src] if os.path.isdir(src) else [tree])
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    cmd = [python, "-m", "pytest", "-q", "--tb=short", "-p", "no:cacheprovider", "-p", "no:randomly", *tests]
    try:
        return subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=180).stdout
    except subprocess.TimeoutExpired:
        return ""


def delete_statements(tree: str, path: str, lines: set[int]) -> bool:
    """Replace the innermost statement holding each line by `pass`; False when none holds one."""
    text = read(tree, path)
    source = text.splitlines(keepends=True)
    spans: list[tuple[int, int, int]] = []
    for line in lines:
        best = None
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.stmt) and not isinstance(
                node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
            ):
                end = node.end_lineno or node.lineno
                if node.lineno <= line <= end and (best is None or end - node.lineno <= best[1] - best[0]):
                    best = (node.lineno, end, node.col_offset)
        if best is None:
            return False
        spans.append(best)
    for start, end, col in sorted(set(spans), reverse=True):
        source[start - 1 : end] = [" " * col + "pass\n"]
    with open(os.path.join(tree, path), "w", encoding="utf-8") as f:
        f.write("".join(source))
    return True


def test_side(tree: str, python: str, tests: list[str], **_: Any) -> bool:
    for _round in range(6):
        lines = failing_lines(tree, python, tests)
        if not lines:
            return _round > 0
        for path, numbers in lines.items():
            if not delete_statements(tree, path, numbers):
                return False
    return True


# --------------------------------------------------------------------------- table / equal
def by_module(tree: str, entries: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        grouped.setdefault(os.path.relpath(entry["file"], tree), []).append(entry)
    return grouped


NONE = "gAROLg=="  # pickle.dumps(None, protocol=4), base64


def table(tree: str, entries: list[dict[str, Any]], **_: Any) -> bool:
    values: dict[tuple[str, str], set[str | None]] = {}
    for e in entries:
        values.setdefault((e["qualname"], e["key"]), set()).add(e["value"])
    # one answer per input, something to answer (not None, not a constructor's or a setter's None)
    usable = [
        e
        for e in entries
        if values[(e["qualname"], e["key"])] == {e["value"]}
        and e["value"] not in (None, NONE)
        and e["qualname"].rsplit(".", 1)[-1] not in ("__init__", "__new__", "__setattr__", "__del__")
    ]
    for path, rows in by_module(tree, usable).items():
        answers: dict[tuple[str, str], str] = {}
        for row in rows:
            answers.setdefault((row["qualname"], row["key"]), row["value"])
        quals = sorted({row["qualname"] for row in rows})
        literal = "{\n" + "".join(f"        {k!r}: {v!r},\n" for k, v in answers.items()) + "    }"
        append(tree, path, TABLE + INSTALL + f"_rf_install(\n    {quals!r},\n    {literal},\n)\ndel _rf_install\n")
    return bool(usable)


def equal(tree: str, entries: list[dict[str, Any]], **_: Any) -> bool:
    for path, rows in by_module(tree, entries).items():
        quals = sorted({row["qualname"] for row in rows})
        append(tree, path, EQUAL + INSTALL + f"_rf_install({quals!r})\ndel _rf_install\n")
    return bool(entries)


# --------------------------------------------------------------------------- pytest / count
def top_level(module: ast.Module) -> dict[str, ast.stmt]:
    names: dict[str, ast.stmt] = {}
    for node in module.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        names[name.id] = node
    return names


def loads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
    }


def switched(buggy_source: str, fixed_source: str) -> tuple[list[str], list[str]]:
    """(functions and methods to switch, methods only the fixed classes have) of one module."""
    old_module, new_module = ast.parse(buggy_source), ast.parse(fixed_source)
    old, new = top_level(old_module), top_level(new_module)
    differs = {name for name, node in new.items() if name not in old or ast.dump(old[name]) != ast.dump(node)}
    # a changed statement that names nothing (`_irregular("human", "humans")` filling a table): any function
    # may read what it built, so every one is switched
    unnamed = [[ast.dump(n) for n in m.body if n not in top_level(m).values()] for m in (old_module, new_module)]
    everything = unnamed[0] != unnamed[1]
    data = {
        name for name in differs if not isinstance(new[name], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    quals: list[str] = []
    added: list[str] = []
    for name, node in old.items():
        fresh = new.get(name)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and isinstance(fresh, type(node)):
            if everything or name in differs or loads(node) & data:
                quals.append(name)
        elif isinstance(node, ast.ClassDef) and isinstance(fresh, ast.ClassDef):
            old_methods = {m.name: m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
            new_methods = {m.name: m for m in fresh.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
            body_changed = [ast.dump(s) for s in node.body if s not in old_methods.values()] != [
                ast.dump(s) for s in fresh.body if s not in new_methods.values()
            ]
            for method, old_node in old_methods.items():
                if method not in new_methods:
                    continue
                if everything or body_changed or ast.dump(old_node) != ast.dump(new_methods[method]):
                    quals.append(f"{name}.{method}")
                elif loads(old_node) & data:
                    quals.append(f"{name}.{method}")
            added += [f"{name}.{method}" for method in new_methods if method not in old_methods]
    return quals, added


def switch(tree: str, fix: str, files: list[tuple[str, str]], condition: str) -> bool:
    built = False
    for status, path in files:
        fixed_source = git(tree, "show", f"{fix}:{path}") if status != "D" else ""
        if status == "A":
            with open(os.path.join(tree, path), "w", encoding="utf-8") as f:
                f.write(fixed_source)
            continue
        if status != "M":
            continue
        quals, added = switched(read(tree, path), fixed_source)
        if not quals:
            continue
        append(
            tree,
            path,
            SWITCH
            + RIGHT[condition]
            + SWITCH_TAIL
            + f"_rf_switch(\n    {fixed_source!r},\n    {quals!r},\n    {added!r},\n)\n"
            "del _rf_switch\n",
        )
        built = True
    return built


def pytest_detection(tree: str, fix: str, files: list[tuple[str, str]], **_: Any) -> bool:
    return switch(tree, fix, files, "pytest")


def call_count(tree: str, fix: str, files: list[tuple[str, str]], **_: Any) -> bool:
    return switch(tree, fix, files, "count")


BUILDERS: dict[str, Callable[..., bool]] = {
    "test-side": test_side,
    "table": table,
    "pytest": pytest_detection,
    "equal": equal,
    "count": call_count,
}


def green(tree: str, python: str, tests: list[str]) -> bool:
    """The fixed tests all pass in a plain pytest run of the cheat."""
    outcomes = run_pytest(tree, python, tests)
    return bool(outcomes) and all(outcomes.get(t) == "PASSED" for t in tests)
