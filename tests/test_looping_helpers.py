"""Issue 30, item 6: a helper whose asserts became one loop over the same names keeps its count.

``same(x, y)`` with ``assert x.a == y.a; assert x.b == y.b`` rewritten as one ``assert`` in a loop over
``("a", "b")`` checks the same two values, wherever the tuple lives: in the loop header, a parameter's
default, a module constant, a class attribute. The weakening twin, the tuple shrunk to ``("a",)``, is a
check lost (OG301) in each of those places.
"""

from __future__ import annotations

import pytest

from oracle_guard.hook_ids import oracle_shrink
from tests.helpers import Result, memory_check
from tests.test_first_hour_static import codes


def judged(base: str, new: str) -> Result:
    """oracle-shrink on the change of tests/test_same.py from BASE to NEW (held in memory: no history needed)."""
    return memory_check(oracle_shrink.check, {"tests/test_same.py": base}, {"tests/test_same.py": new})


MAKE = "from types import SimpleNamespace\n\n\ndef make():\n    return SimpleNamespace(a=1, b=2)\n\n\n"
BASE = (
    MAKE
    + "def same(x, y):\n    assert x.a == y.a\n    assert x.b == y.b\n\n\n"
    + "def test_same():\n    same(make(), make())\n"
)
LOOP = "    for name in {names}:\n        assert getattr(x, name) == getattr(y, name)\n"
TEST = "\n\ndef test_same():\n    same(make(), make())\n"


def function(names: str, signature: str = "x, y", before: str = "") -> str:
    return MAKE + before + f"def same({signature}):\n" + LOOP.format(names=names) + TEST


CLASS_BASE = (
    MAKE
    + "class TestSame:\n"
    + "    def same(self, x, y):\n        assert x.a == y.a\n        assert x.b == y.b\n\n"
    + "    def test_same(self):\n        self.same(make(), make())\n"
)


def method(names: str, signature: str = "self, x, y", decorator: str = "") -> str:
    body = "".join("    " + line + "\n" for line in LOOP.format(names=names).splitlines())
    return (
        MAKE
        + "class TestSame:\n"
        + "    NAMES = {tuple}\n\n"
        + decorator
        + f"    def same({signature}):\n"
        + body
        + "\n    def test_same(self):\n        self.same(make(), make())\n"
    )


# (where the tuple lives, the new file with the tuple ("a", "b") spelled as {tuple})
PLACES = [
    ("loop header", BASE, function("{tuple}")),
    ("default", BASE, function("names", "x, y, names={tuple}")),
    ("keyword-only default", BASE, function("names", "x, y, *, names={tuple}")),
    ("module constant", BASE, function("NAMES", before="NAMES = {tuple}\n\n\n")),
    ("default bound to a module constant", BASE, function("names", "x, y, names=NAMES", "NAMES = {tuple}\n\n\n")),
    ("class attribute through self", CLASS_BASE, method("self.NAMES")),
    ("class attribute through the class", CLASS_BASE, method("TestSame.NAMES")),
    ("class attribute through cls", CLASS_BASE, method("cls.NAMES", "cls, x, y", "    @classmethod\n")),
    ("default bound to a class attribute", CLASS_BASE, method("names", "self, x, y, names=NAMES")),
]


@pytest.mark.parametrize("base, new", [p[1:] for p in PLACES], ids=[p[0] for p in PLACES])
def test_the_same_names_in_a_loop_keep_the_count(base: str, new: str) -> None:
    result = judged(base, new.replace("{tuple}", '("a", "b")'))
    assert codes(result) == [], result.out


@pytest.mark.parametrize("base, new", [p[1:] for p in PLACES], ids=[p[0] for p in PLACES])
def test_the_tuple_shrunk_to_one_name_is_a_check_lost(base: str, new: str) -> None:
    result = judged(base, new.replace("{tuple}", '("a",)'))
    assert set(codes(result)) == {"OG301"}, result.out  # the helper, and the test where it is inlined too
    assert "has 1 check, base had 2" in result.out or "no longer checks `b`" in result.out, result.out


@pytest.mark.parametrize("base, new", [p[1:] for p in PLACES[:2]], ids=[p[0] for p in PLACES[:2]])
def test_a_name_swapped_for_another_is_a_check_lost(base: str, new: str) -> None:
    """As many names, not the same ones: `b` is no longer compared."""
    result = judged(base, new.replace("{tuple}", '("a", "a")'))
    assert codes(result) == ["OG301"], result.out


def test_a_caller_that_passes_fewer_names_than_the_default_loses_a_check() -> None:
    new = function("names", 'x, y, names=("a", "b")').replace("same(make(), make())", 'same(make(), make(), ("a",))')
    assert codes(judged(BASE, new)) == ["OG301"]


def test_a_default_the_loop_rebinds_first_is_not_trusted() -> None:
    """`names = names[:1]` before the loop: the default no longer says what the loop runs over."""
    new = function("names", 'x, y, names=("a", "b")').replace("    for name", "    names = names[:1]\n    for name")
    assert codes(judged(BASE, new)) == ["OG301"]


SPELLED_BUT_CHANGED = [
    (
        "an instance attribute set in setup_method",
        CLASS_BASE,
        method("self.NAMES").replace(
            "    def test_same", "    def setup_method(self):\n        self.NAMES = ('a',)\n\n    def test_same"
        ),
    ),
    ("a module constant popped", BASE, function("NAMES", before="NAMES = ['a', 'b']\nNAMES.pop()\n\n\n")),
    (
        "a module constant rebound by a fixture",
        BASE,
        function(
            "NAMES", before="NAMES = ('a', 'b')\n\n\ndef setup_module():\n    global NAMES\n    NAMES = ('a',)\n\n\n"
        ),
    ),
    (
        "a class attribute set from outside",
        CLASS_BASE,
        method("self.NAMES") + "\n\nsetattr(TestSame, 'NAMES', ('a',))\n",
    ),
    (
        "a subclass that runs with fewer names",
        CLASS_BASE,
        MAKE
        + "class Compare:\n    NAMES = ('a', 'b')\n\n    def same(self, x, y):\n"
        + "        for name in self.NAMES:\n            assert getattr(x, name) == getattr(y, name)\n\n\n"
        + "class TestSame(Compare):\n    NAMES = ('a',)\n\n    def test_same(self):\n        self.same(make(), make())\n",
    ),
    (  # only the class attribute changes: the methods' text is the base's, the class around them is not
        "a class attribute shrunk under an unchanged loop",
        method("self.NAMES").replace("{tuple}", '("a", "b")'),
        method("self.NAMES").replace("{tuple}", '("a",)'),
    ),
]


@pytest.mark.parametrize("base, new", [c[1:] for c in SPELLED_BUT_CHANGED], ids=[c[0] for c in SPELLED_BUT_CHANGED])
def test_names_spelled_but_changed_before_the_loop_runs_are_not_trusted(base: str, new: str) -> None:
    result = judged(base, new.replace("{tuple}", '("a", "b")'))
    assert "OG301" in codes(result), result.out


def test_a_subclass_that_keeps_the_names_passes() -> None:
    new = SPELLED_BUT_CHANGED[4][2].replace("    NAMES = ('a',)\n\n", "")
    assert "('a',)" not in new
    assert codes(judged(CLASS_BASE, new)) == []


def test_a_class_attribute_grown_under_an_unchanged_loop_passes() -> None:
    base = method("self.NAMES").replace("{tuple}", '("a", "b")')
    new = method("self.NAMES").replace("{tuple}", '("a", "b", "c")')
    assert codes(judged(base, new)) == []


@pytest.mark.parametrize("base, new", [p[1:] for p in PLACES], ids=[p[0] for p in PLACES])
def test_as_many_names_but_another_one_is_named_as_left_out(base: str, new: str) -> None:
    result = judged(base, new.replace("{tuple}", '("a", "c")'))
    assert codes(result) == ["OG301"], result.out
    assert "no longer checks `b`: the base compared it, and the names it loops over leave it out" in result.out
