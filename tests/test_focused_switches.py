"""The code-switch scan reads a big test module only when a statement not on the other side spells a switch.

pytest_side/switches/in_code.py `_no_switch_changed`: facts (options set on `config.option`, auto-approving
reporters, regeneration variables) are compared as a multiset and each comes from a statement that spells
a switch's word, so when every top-level statement missing from the other side is free of those words,
no fact can differ.  A switch flipped in a changed statement of a big module is found; a helper added,
a statement moved, or an unrelated test changed passes without reading the module.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from oracle_guard.pytest_side.switches import in_code as code_switches
from tests.helpers import Repo
from tests.test_switches import READER, findings

T = "tests/test_big.py"
FILLER = "".join(f"\n\ndef test_{n}():\n    value = {n} + 1\n    assert value == {n + 1}\n" for n in range(40))
CONFIGURE = "\n\ndef pytest_configure(config):\n    config.option.reruns = 0\n"
BASE = (
    "import os\n"
    + CONFIGURE
    + FILLER
    + "\n\ndef test_env():\n    os.environ['TZ'] = 'UTC'\n    assert os.environ['TZ']\n"
)

CASES = {
    # (new content of T, expected codes, whether the module is read)
    "a regeneration variable set in a changed test": (
        BASE.replace("os.environ['TZ'] = 'UTC'", "os.environ['UPDATE_GOLDENS'] = '1'"),
        ["OG861"],
        True,
    ),
    "reruns raised in a changed hook": (BASE.replace("reruns = 0", "reruns = 3"), ["OG860"], True),
    "a switch set in a new test among unchanged ones": (
        BASE + "\n\ndef test_more():\n    os.environ['UPDATE_GOLDENS'] = '1'\n    assert 1\n",
        ["OG861"],
        True,
    ),
    "a helper appended": (BASE + "\n\ndef _helper(value):\n    return value\n", [], False),
    "an unrelated test changed": (BASE.replace("value == 8\n", "value == 8\n    assert value > 0\n"), [], False),
    "the hook moved below the tests": (BASE.replace(CONFIGURE, "") + CONFIGURE, [], False),
    "a switch's word in a changed statement, the same facts": (
        BASE.replace("os.environ['TZ'] = 'UTC'\n", "os.environ['TZ'] = 'UTC'\n    os.environ['LANG'] = 'C'\n"),
        [],
        True,
    ),
}


@pytest.mark.parametrize(("new", "expected", "read"), list(CASES.values()), ids=list(CASES))
def test_switches_in_a_big_test_module(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, new: str, expected: list[str], read: bool
) -> None:
    repo.write(*READER)
    repo.write(T, BASE)
    repo.commit("base")
    repo.write(T, new)
    answers: list[bool] = []
    original = code_switches._no_switch_changed

    def spy(old: str, text: str, blobs: Any = None) -> bool:
        answers.append(original(old, text, blobs))
        return answers[-1]

    monkeypatch.setattr(code_switches, "_no_switch_changed", spy)
    assert [f.split()[1] for f in findings(repo, monkeypatch)] == expected
    assert answers == [not read]


SHARED = "import os\n\n\ndef test_a():\n    os.environ['X'] = '1'\n"


@pytest.mark.parametrize(
    ("raw", "shared"),
    [
        (SHARED.encode(), True),  # plain UTF-8: the rules' tree of the same blob
        (b"\xef\xbb\xbf" + SHARED.encode(), False),  # a BOM: the bytes' parse drops it, the text's does not
        (b"# -*- coding: latin-1 -*-\n" + SHARED.encode(), False),  # a coding line the text's parse ignores
        (SHARED.replace("\n", "\r\n").encode(), False),
        (SHARED.encode() + b"# \xff\n", False),  # not UTF-8: the text has a replacement character
    ],
    ids=["plain", "bom", "coding line", "crlf", "not utf-8"],
)
def test_the_switch_scan_shares_the_rules_tree_only_where_it_is_the_texts(raw: bytes, shared: bool) -> None:
    import ast

    from oracle_guard.analysis import pysource

    def dumped(parse: Callable[[], ast.Module]) -> str:
        try:
            return ast.dump(parse())
        except SyntaxError as exc:  # a BOM in a str: U+FEFF is no character Python reads
            return f"SyntaxError: {exc.msg}"

    text = raw.decode("utf-8", "replace")
    got = dumped(lambda: code_switches._tree(text, "tests/test_a.py", raw))
    assert got == dumped(lambda: ast.parse(text))  # whichever parse, the text's tree (or its error)
    if got.startswith("SyntaxError"):  # the text does not parse; the bytes do: the scan kept the text's answer
        assert (got == dumped(lambda: pysource.shared_tree(raw, "tests/test_a.py"))) is shared
        return
    tree = code_switches._tree(text, "tests/test_a.py", raw)
    try:
        rules = pysource.shared_tree(raw, "tests/test_a.py")
    except SyntaxError:
        rules = None  # not UTF-8: the bytes do not parse at all
    assert (tree is rules) is shared  # elsewhere the text is parsed itself: the bytes' parse may differ


@pytest.mark.parametrize(
    ("old", "new", "same"),
    [
        (SHARED, SHARED + "\n\ndef _helper():\n    return 1\n", True),
        (SHARED, SHARED + "\n\ndef test_b(config):\n    config.option.update_goldens = True\n", False),
    ],
    ids=["a helper added", "a switch flipped"],
)
def test_the_switch_scan_answers_the_same_from_the_shared_tree(old: str, new: str, same: bool) -> None:
    blobs = (("tests/test_a.py", old.encode()), ("tests/test_a.py", new.encode()))
    assert code_switches._no_switch_changed(old, new, blobs) is same
    assert code_switches._no_switch_changed(old, new) is same
