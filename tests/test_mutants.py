"""probes/mutation/mutants.py: which mutants a function gets, and that each is a small edit that compiles."""

from __future__ import annotations

import pytest

from oracle_guard.probes.mutation import mutants

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


def test_docstrings_fstrings_and_module_level_code_are_not_mutated() -> None:
    found = mutants.generate("src/x.py", SOURCE)
    assert not {m.line for m in found} & {5, 23}  # the docstring, module-level code
    assert [m.operator for m in found if m.line == 13] == ["call-removed"]  # not the f-string's parts


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
