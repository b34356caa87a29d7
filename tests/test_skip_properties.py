"""Properties of the skip detectors on generated test modules.

(a) Adding any supported mark spelling, through any import form, at any place a
    mark can stand (decorator on a function, method or class, ``pytestmark`` of
    the module or a class, ``pytest.param(marks=...)``) to a generated module is
    always reported by forbid-skip-marks.
(b) Reformatting a module that already holds marks and runtime skips (an
    ``ast.unparse`` round trip, re-indentation, blank lines, comments) is never
    reported by either hook.

The checks run oracle_guard.rules.pydiff.check itself on a change set whose two sides are
held in memory: one git repository per example would make this minutes long.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracle_guard.hook_ids.forbid_runtime_skip import RULE as RUNTIME_RULE
from oracle_guard.rules.pydiff import check
from oracle_guard.rules.skipmarks import RULE as MARK_RULE
from tests.helpers import NOW, MemoryChangeSet

PATH = "tests/test_generated.py"


def findings(rule, before: str, after: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [f.text() for f in check(rule, [PATH], MemoryChangeSet({PATH: before}, {PATH: after}), None, NOW)]


# -- generated modules --------------------------------------------------------------

HARMLESS_DECORATORS = [
    "@pytest.mark.parametrize('value', [1, 2])",
    "@pytest.mark.slow",
    "@pytest.mark.usefixtures('tmp_path')",
    "@pytest.mark.filterwarnings('ignore::DeprecationWarning')",
    "@functools.lru_cache(maxsize=None)",
]
BODY_LINES = [
    "assert value == 1",
    "result = compute(value, 3)",
    "rows = df.skip(2)",
    "reader.skip = value",
    "assert 'pytest.mark.skip' not in 'xfail'",
    "# pytest.mark.skip would be wrong here",
    "assert result is not None  # never skip",
    "with pytest.raises(ValueError):\n    compute(-1)",
    "for item in range(3):\n    assert item >= 0",
    "if value > 1:\n    assert compute(value)\nelse:\n    assert not value",
]
WORDS = ["parse", "load", "save", "merge", "split", "empty", "unicode", "large", "retry", "order"]


@dataclass
class Function:
    name: str
    decorators: list[str]
    body: list[str]
    docstring: bool

    def render(self, indent: str, extra: list[str]) -> str:
        lines = [indent + d for d in self.decorators + extra]
        lines.append(f"{indent}def {self.name}(self, value):" if indent else f"{indent}def {self.name}(value):")
        if self.docstring:
            lines.append(f'{indent}    """Skip nothing: {self.name}."""')
        for stmt in self.body:
            lines += [f"{indent}    {part}" for part in stmt.splitlines()]
        return "\n".join(lines) + "\n"


@dataclass
class Class:
    name: str
    decorators: list[str]
    methods: list[Function]
    attributes: list[str] = field(default_factory=list)


functions = st.builds(
    Function,
    name=st.sampled_from(WORDS).map(lambda w: f"test_{w}"),
    decorators=st.lists(st.sampled_from(HARMLESS_DECORATORS), max_size=2, unique=True),
    body=st.lists(st.sampled_from(BODY_LINES), min_size=1, max_size=4).filter(
        lambda b: any(not s.startswith("#") for s in b)
    ),
    docstring=st.booleans(),
)
classes = st.builds(
    Class,
    name=st.sampled_from(WORDS).map(lambda w: f"Test{w.title()}"),
    decorators=st.lists(st.sampled_from(HARMLESS_DECORATORS[1:3]), max_size=1),
    methods=st.lists(functions, min_size=1, max_size=3, unique_by=lambda f: f.name),
)
modules = st.lists(st.one_of(functions, classes), min_size=1, max_size=5, unique_by=lambda item: item.name)


@dataclass
class Placement:
    """Where an added mark goes: (item index, method index or None) or the module."""

    item: int | None
    method: int | None
    how: str  # "decorator", "pytestmark", "param"


def render(items: list, imports: list[str] = (), extra: dict | None = None, tail: str = "") -> str:  # type: ignore[type-arg]
    """Source of ITEMS; EXTRA maps (item, method) to extra decorator or class-body lines."""
    extra = extra or {}
    parts = ["import functools\n\nimport pytest\n" + "".join(f"{line}\n" for line in imports)]
    for i, item in enumerate(items):
        if isinstance(item, Function):
            parts.append(item.render("", extra.get((i, None), [])))
            continue
        head = "".join(d + "\n" for d in item.decorators + extra.get((i, "class-decorator"), []))
        body = [f"    {line}\n" for line in item.attributes + extra.get((i, "class-body"), [])]
        body += [m.render("    ", extra.get((i, j), [])) for j, m in enumerate(item.methods)]
        parts.append(f"{head}class {item.name}:\n" + "\n".join(body))
    return "\n\n".join(parts) + tail


# (import lines, mark expression, code expected) -- every spelling the hook supports.
SPELLINGS = [
    ([], "pytest.mark.skip", "OG101"),
    ([], "pytest.mark.skip(reason='later')", "OG101"),
    ([], "pytest.mark.skipif(sys.platform == 'win32', reason='x')", "OG101"),
    ([], "pytest.mark.xfail", "OG101"),
    ([], "pytest.mark.xfail(strict=False)", "OG101"),
    (["import pytest as pt"], "pt.mark.skip", "OG101"),
    (["from pytest import mark as m"], "m.xfail(reason='x')", "OG101"),
    (["from pytest import mark"], "mark.skipif(True, reason='x')", "OG101"),
    (["from _pytest.mark import MARK_GEN"], "MARK_GEN.skip", "OG101"),
    (["from _pytest.mark.structures import MARK_GEN as G"], "G.xfail", "OG101"),
    (["import unittest"], "unittest.skip('x')", "OG101"),
    (["import unittest.case"], "unittest.case.skipIf(True, 'x')", "OG101"),
    (["from unittest import skipUnless"], "skipUnless(False, 'x')", "OG101"),
    (["from unittest.case import expectedFailure as ef"], "ef", "OG101"),
    (["import unittest as ut"], "ut.expectedFailure", "OG101"),
    (["later_mark = pytest.mark.skip(reason='soon')"], "later_mark", "OG101"),
    (["skipper = pytest.mark.xfail"], "skipper", "OG101"),
    ([], "getattr(pytest.mark, 'skip')", "OG101"),
    (["import unittest"], "getattr(unittest, 'skip')('x')", "OG101"),
    (["NAME = 'sk' + 'ip'"], "getattr(pytest.mark, NAME)", "OG102"),
    ([], "__import__('pytest').mark.xfail", "OG101"),
]


@st.composite
def placements(draw, items: list) -> Placement:  # type: ignore[no-untyped-def,type-arg]
    how = draw(st.sampled_from(["decorator", "pytestmark", "param"]))
    if how == "pytestmark":
        classes_here = [i for i, it in enumerate(items) if isinstance(it, Class)]
        item = draw(st.sampled_from([None] + classes_here))
        return Placement(item, None, how)
    item = draw(st.integers(0, len(items) - 1))
    method = None
    if isinstance(items[item], Class):
        method = draw(st.one_of(st.none(), st.integers(0, len(items[item].methods) - 1)))
        if method is None and how == "param":
            method = 0
    return Placement(item, method, how)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), items=modules, spelling=st.sampled_from(SPELLINGS))
@pytest.mark.slow
def test_adding_any_mark_form_anywhere_is_reported(data: st.DataObject, items: list, spelling: tuple) -> None:  # type: ignore[type-arg]
    imports, mark, code = spelling
    place = data.draw(placements(items))
    base = render(items)
    extra: dict = {}  # type: ignore[type-arg]
    tail = ""
    if place.how == "decorator":
        key = (place.item, place.method)
        if isinstance(items[place.item], Class) and place.method is None:
            key = (place.item, "class-decorator")
        extra[key] = [f"@{mark}"]
    elif place.how == "param":
        extra[(place.item, place.method)] = [f"@pytest.mark.parametrize('extra', [0, pytest.param(1, marks={mark})])"]
    elif place.item is None:
        tail = f"\npytestmark = {data.draw(st.sampled_from(['{}', '[{}]', '({},)', '[pytest.mark.slow, {}]'])).format(mark)}\n"
    else:
        extra[(place.item, "class-body")] = [f"pytestmark = [{mark}]"]
    new = render(items, ["import sys", *imports], extra, tail)
    found = findings(MARK_RULE, base, new)
    assert any(f" {code} " in line for line in found), (new, found)
    assert all(line.startswith(PATH + ":") for line in found)


# -- (b) reformatting never reports ---------------------------------------------------

EXISTING_MARKS = [
    "@pytest.mark.skip(reason='old')",
    "@pytest.mark.skipif(sys.platform == 'win32', reason='no fork')",
    "@pytest.mark.xfail(strict=True)",
    "@unittest.skipIf(sys.version_info < (3, 9), 'old python')",
]
EXISTING_RUNTIME = [
    "if sys.platform == 'win32':\n    pytest.skip('no fork')",
    "np = pytest.importorskip('numpy')",
    "return",
    "if not value:\n    return",
]


def reindent(source: str) -> str:
    """Four-space indentation to two (the generated code has no multi-line strings)."""
    return re.sub(r"^((?:    )+)", lambda m: "  " * (len(m.group(1)) // 4), source, flags=re.M)


def spread(source: str, marker: str) -> str:
    """A blank line and a comment before every top-level statement and decorator."""
    return re.sub(r"^(?=[@a-z])", f"# {marker}\n\n", source, flags=re.M)


REFORMATS = {
    "unparse": lambda s: ast.unparse(ast.parse(s)) + "\n",
    "reindent": reindent,
    "spread": lambda s: spread(s, "skip: reformatted, no new pytest.mark.skip"),
    "unparse-reindent": lambda s: reindent(ast.unparse(ast.parse(s)) + "\n"),
}


@settings(max_examples=120, deadline=None)
@given(data=st.data(), items=modules, how=st.sampled_from(sorted(REFORMATS)))
@pytest.mark.slow
def test_reformatting_a_module_with_marks_is_never_reported(data: st.DataObject, items: list, how: str) -> None:  # type: ignore[type-arg]
    extra: dict = {}  # type: ignore[type-arg]
    for i, item in enumerate(items):
        targets = (
            [(i, None)]
            if isinstance(item, Function)
            else [(i, "class-decorator")] + [(i, j) for j in range(len(item.methods))]
        )
        for key in targets:
            if data.draw(st.booleans()):
                extra[key] = [data.draw(st.sampled_from(EXISTING_MARKS))]
        functions_here = [item] if isinstance(item, Function) else item.methods
        for function in functions_here:
            if data.draw(st.booleans()):
                function.body.insert(0, data.draw(st.sampled_from(EXISTING_RUNTIME)))
    tail = data.draw(st.sampled_from(["", "\npytestmark = [pytest.mark.slow, pytest.mark.xfail(reason='x')]\n"]))
    base = render(items, ["import sys", "import unittest"], extra, tail)
    new = REFORMATS[how](base)
    assert new != base or how == "unparse"
    assert findings(MARK_RULE, base, new) == []
    assert findings(RUNTIME_RULE, base, new) == []
    # Sanity: the base really holds what would be reported if it were new.
    if extra or tail:
        assert findings(MARK_RULE, render(items, ["import sys", "import unittest"]), base)
