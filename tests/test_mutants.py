"""probes/mutation/mutants.py: which mutants a function gets, and that each is a small edit that compiles."""

from __future__ import annotations

import pytest

from oracle_guard.probes.mutation import mutants, touched

SOURCE = b'''\
import os


def parse(text, limit=3):
    """Docstring: never mutated."""
    if not text or len(text) < limit:
        raise ValueError("too short")
    total = 0
    for ch in text:
        if ch in "xy":
            continue
        total += ord(ch) * 2
    print(f"done {total}")
    return total


class Box:
    @staticmethod
    def check(a, b):
        return (a) + -b is not None and a == b


TABLE = {"module": 1 + 2}
'''


def generated() -> dict[str, mutants.Mutant]:
    return {m.key: m for m in mutants.generate("src/x.py", SOURCE)}


def line_of(mutant: mutants.Mutant) -> str:
    return mutant.apply(SOURCE).decode().splitlines()[mutant.line - 1].strip()


@pytest.mark.parametrize(
    "key, line",
    [
        ("src/x.py:6:17:bool-or", "if not text and len(text) < limit:"),
        ("src/x.py:6:8:drop-not", "if text or len(text) < limit:"),
        ("src/x.py:6:30:cmp-lt", "if not text or len(text) <= limit:"),
        ("src/x.py:7:26:string", "raise ValueError('XXtoo shortXX')"),
        ("src/x.py:8:13:number", "total = 1"),
        ("src/x.py:8:13:assign-none", "total = None"),
        ("src/x.py:10:15:cmp-in", 'if ch not in "xy":'),
        ("src/x.py:11:13:continue-break", "break"),
        ("src/x.py:12:15:aug-add", "total -= ord(ch) * 2"),
        ("src/x.py:12:26:binop-mult", "total += ord(ch) / 2"),
        ("src/x.py:13:5:call-removed", "pass"),
        ("src/x.py:14:12:return-none", "return None"),
        ("src/x.py:20:20:binop-add", "return (a) - -b is not None and a == b"),
        ("src/x.py:20:22:drop-minus", "return (a) + b is not None and a == b"),
        ("src/x.py:20:25:cmp-isnot", "return (a) + -b is None and a == b"),
        ("src/x.py:20:37:bool-and", "return (a) + -b is not None or a == b"),
        ("src/x.py:20:43:cmp-eq", "return (a) + -b is not None and a != b"),
    ],
)
def test_each_operator_edits_one_token_in_place(key: str, line: str) -> None:
    found = generated()
    assert key in found, sorted(found)
    assert line_of(found[key]) == line


def test_every_mutant_compiles_keeps_the_line_count_and_has_a_unique_key() -> None:
    found = mutants.generate("src/x.py", SOURCE)
    assert len({m.key for m in found}) == len(found) > 15
    for mutant in found:
        changed = mutant.apply(SOURCE)
        compile(changed, "x.py", "exec")
        assert changed.count(b"\n") == SOURCE.count(b"\n")


def test_docstrings_and_module_level_code_are_not_mutated_and_an_fstring_is_one_edit() -> None:
    found = mutants.generate("src/x.py", SOURCE)
    assert not {m.line for m in found} & {5, 23}  # the docstring, module-level code
    # the f-string's constant part is changed in front (one edit whatever the Python), never a part's position
    assert sorted(m.operator for m in found if m.line == 13) == ["call-removed", "fstring"]
    assert line_of(generated()["src/x.py:13:13:fstring"]) == 'print(f"XXdone {total}")'


def test_the_outermost_function_and_its_def_line_are_named() -> None:
    found = generated()
    assert (found["src/x.py:20:43:cmp-eq"].function, found["src/x.py:20:43:cmp-eq"].def_line) == ("Box.check", 18)
    assert found["src/x.py:6:8:drop-not"].function == "parse" and found["src/x.py:6:8:drop-not"].def_line == 4


def test_only_the_lines_a_test_ran() -> None:
    assert {m.line for m in mutants.generate("src/x.py", SOURCE, {20})} == {20}
    # a compound statement's header: running the `if` line is enough for its test's mutants
    assert {m.line for m in mutants.generate("src/x.py", SOURCE, {6})} == {6}


def test_a_comment_between_operands_or_odd_spacing_is_left_alone() -> None:
    source = b"def f(a, b):\n    return (a <  # why\n            b)\n"
    assert [m.operator for m in mutants.generate("m.py", source)] == ["return-none"]


def test_the_sample_is_deterministic_and_a_prefix_of_a_larger_one() -> None:
    found = mutants.generate("src/x.py", SOURCE)
    five = mutants.sample(found, 5)
    assert five == mutants.sample(list(reversed(found)), 5)
    assert mutants.sample(found, 8)[:5] == five
    assert len(mutants.sample(found, 10_000)) == len(found)


def test_a_file_that_does_not_parse_has_no_mutants() -> None:
    assert mutants.generate("bad.py", b"def f(:\n") == []


def test_locate_finds_a_function_moved_down_the_file() -> None:
    moved = b"import sys\n\n\n" + SOURCE
    [(line, text)] = mutants.locate(moved, "Box.check")
    assert line == 21 and text.startswith(b"    @staticmethod")


def test_locate_lists_every_overload_of_a_name() -> None:
    source = b"class A:\n    @overload\n    def f(self): ...\n\n    def f(self):\n        return 1\n"
    assert [line for line, _ in mutants.locate(source, "A.f")] == [2, 5]


VALUES = b"""\
def display_name(name):
    return name.strip().title()


def tags_of(raw):
    return sorted({tag.strip().lower() for tag in raw.split(",") if tag.strip()})


def badge(name, raw_tags, first) -> str:
    tags = tags_of(raw_tags)
    unique = set(tags[first:])
    return f"{display_name(name)} [{', '.join(tags)}]" + str(len(unique))


def is_short(text):
    return len(text.rstrip()) < 3


def count(items) -> int:
    total = sorted(items, key=len)
    return total.index(items[0])
"""


def value_mutants() -> dict[str, mutants.Mutant]:
    return {m.key: m for m in mutants.generate("src/v.py", VALUES)}


def value_line(mutant: mutants.Mutant) -> str:
    return mutant.apply(VALUES).decode().splitlines()[mutant.line - 1].strip()


@pytest.mark.parametrize(
    "key, line",
    [
        ("src/v.py:2:16:method-drop", "return name.title()"),
        ("src/v.py:2:24:method-drop", "return name.strip()"),
        ("src/v.py:2:12:return-neighbour", "return (name.strip().title()) + 'x'"),
        ("src/v.py:6:12:sorted-list", 'return list({tag.strip().lower() for tag in raw.split(",") if tag.strip()})'),
        ("src/v.py:6:19:set-list", 'return sorted([tag.strip().lower() for tag in raw.split(",") if tag.strip()])'),
        (
            "src/v.py:6:12:return-neighbour",
            'return (sorted({tag.strip().lower() for tag in raw.split(",") if tag.strip()}))[:-1]',
        ),
        ("src/v.py:6:31:method-drop", 'return sorted({tag.strip() for tag in raw.split(",") if tag.strip()})'),
        ("src/v.py:11:14:set-list", "unique = list(tags[first:])"),
        ("src/v.py:11:23:slice-lower", "unique = set(tags[first + 1:])"),
        ("src/v.py:12:14:fstring", "return f\"XX{display_name(name)} [{', '.join(tags)}]\" + str(len(unique))"),
        ("src/v.py:12:37:string", "return f\"{display_name(name)} [{'XX, XX'.join(tags)}]\" + str(len(unique))"),
        ("src/v.py:16:12:return-neighbour", "return not (len(text.rstrip()) < 3)"),
        ("src/v.py:16:20:method-drop", "return len(text) < 3"),
        ("src/v.py:16:31:cmp-lt", "return len(text.rstrip()) <= 3"),
        ("src/v.py:20:13:sorted-list", "total = list(items)"),
        ("src/v.py:21:12:return-neighbour", "return (total.index(items[0])) + 1"),
    ],
)
def test_each_value_operator_keeps_the_type_and_changes_the_content(key: str, line: str) -> None:
    found = value_mutants()
    assert key in found, sorted(found)
    assert value_line(found[key]) == line
    compile(found[key].apply(VALUES), "v.py", "exec")


def test_every_value_mutant_compiles_and_keeps_the_line_count() -> None:
    found = mutants.generate("src/v.py", VALUES)
    assert len({m.key for m in found}) == len(found)
    for mutant in found:
        changed = mutant.apply(VALUES)
        compile(changed, "v.py", "exec")
        assert changed.count(b"\n") == VALUES.count(b"\n")


def operators(source: bytes) -> list[str]:
    return sorted(m.operator for m in mutants.generate("m.py", source))


@pytest.mark.parametrize(
    "source, kept",
    [
        # the method changes nothing on this literal: removing it is the same program
        (b"def f():\n    return 'ok'.lower()\n", ["return-neighbour", "return-none", "string"]),
        (b"def f():\n    return 'Ok'.lower()\n", ["method-drop", "return-neighbour", "return-none", "string"]),
        # a literal already in order, or of one item: sorting it changes nothing
        (b"def f():\n    return sorted([1, 2])\n", ["number", "number", "return-neighbour", "return-none"]),
        (
            b"def f():\n    return sorted([2, 1])\n",
            ["number", "number", "return-neighbour", "return-none", "sorted-list"],
        ),
        # a literal that is a set already: the list holds the same items
        (
            b"def f(x):\n    return x in set({1, 2})\n",
            ["cmp-in", "number", "number", "return-neighbour", "return-none"],
        ),
        # a str method whose result is thrown away: removing it changes nothing (the removed call has it)
        (b"def f(x):\n    x.strip()\n", ["call-removed"]),
        # the same method twice: removing the outer one changes nothing
        (b"def f(x):\n    y = x.strip().strip()\n", ["assign-none", "method-drop"]),
        # a builtin the module binds itself is not the builtin
        (b"from x import sorted\n\n\ndef f(x):\n    y = sorted(x)\n", ["assign-none"]),
        # no constant part in the f-string: nothing for the fstring operator to change
        (b"def f(x):\n    y = f'{x}'\n", ["assign-none"]),
        # an empty list has no last element to drop; a constant has its own operators
        (b"def f():\n    return []\n", ["return-none"]),
        (b"def f():\n    return 3\n", ["number", "return-none"]),
        # an unknown type gets no neighbour; the annotation names one
        (b"def f(x):\n    return x.value\n", ["return-none"]),
        (b"def f(x) -> bool:\n    return x.value\n", ["return-neighbour", "return-none"]),
        (b"def f(x) -> 'list[int]':\n    return x.value\n", ["return-neighbour", "return-none"]),
        (b"def f(x) -> Optional[int]:\n    return x.value\n", ["return-none"]),
    ],
)
def test_an_equivalent_value_mutant_is_not_made(source: bytes, kept: list[str]) -> None:
    assert operators(source) == kept


def test_a_string_inside_an_fstring_expression_is_mutated_where_it_is_on_every_python() -> None:
    # 3.8-3.11 give an f-string's constant parts the whole f-string's position: those are never edited as strings
    source = b"def f(tags):\n    return f\"[{', '.join(tags)}] \" 'tail'\n"
    found = {m.operator: m for m in mutants.generate("m.py", source) if m.operator in ("string", "fstring")}
    assert found["string"].apply(source).decode().splitlines()[1] == "    return f\"[{'XX, XX'.join(tags)}] \" 'tail'"
    assert found["fstring"].apply(source).decode().splitlines()[1] == "    return f\"XX[{', '.join(tags)}] \" 'tail'"


MODULE = b"""\
import pytest

from shop import price

CASES = [(1, 1), (2, 2)]


def test_one():
    assert price(1) == 1


@pytest.mark.parametrize("n, expected", CASES)
def test_many(n, expected):
    assert price(n) == expected


class TestBox:
    def helper(self):
        return 3

    def test_box(self):
        assert price(self.helper()) == 3
"""


@pytest.mark.parametrize(
    "old, new, expected",
    [
        # only test functions edited or deleted: those, and nothing else of the module
        ("assert price(1) == 1", "assert price(1)", ["t.py::test_one"]),
        ("    assert price(n) == expected\n", "    pass\n", ["t.py::test_many"]),
        ("assert price(self.helper()) == 3", "assert price(self.helper())", ["t.py::TestBox::test_box"]),
        (
            '@pytest.mark.parametrize("n, expected", CASES)',
            '@pytest.mark.parametrize("n, expected", CASES[:1])',
            ["t.py::test_many"],
        ),
        ("def test_one():\n    assert price(1) == 1\n\n\n", "", ["t.py::test_one"]),
        ("def test_one():", "def test_one_renamed():", ["t.py::test_one"]),
        ("assert price(1) == 1", "assert price(1) == 1\n    assert price(0) == 0", ["t.py::test_one"]),
        # anything else changed: every test may behave differently, so the whole module
        ("CASES = [(1, 1), (2, 2)]", "CASES = [(1, 1)]", None),
        ("return 3", "return 4", None),
        ("import pytest\n", "import pytest\nimport os\n", None),
        ("class TestBox:", "class TestCrate:", None),
        ("def test_one():\n", "def test_one():\n    pass\n\n\ndef test_one():\n", None),
        ("def test_one():", "def test_one(:", None),
        # blank lines between tests change nothing: no test touched is the whole module, never nothing
        ("\n\ndef test_one", "\n\n\ndef test_one", None),
    ],
)
def test_the_base_side_runs_the_tests_the_change_touched(old: str, new: str, expected: list[str] | None) -> None:
    assert MODULE.count(old.encode()) == 1
    assert touched.touched_tests("t.py", MODULE, MODULE.replace(old.encode(), new.encode())) == expected


def test_a_class_that_inherits_the_modules_tests_makes_it_the_whole_module() -> None:
    source = MODULE + b"\n\nclass TestCrate(TestBox):\n    def helper(self):\n        return 4\n"
    changed = source.replace(b"assert price(1) == 1", b"assert price(1)")
    assert touched.touched_tests("t.py", source, changed) is None


def test_a_unittest_case_is_a_test_class_by_its_base() -> None:
    source = b"import unittest\n\n\nclass People(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(1, 1)\n"
    changed = source.replace(b"self.assertEqual(1, 1)", b"self.assertTrue(1)")
    assert touched.touched_tests("t.py", source, changed) == ["t.py::People::test_a"]
