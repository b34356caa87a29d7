"""Syntax newer than the interpreter running the hooks is analysed, not refused.

The snippets use PEP 695 type parameters and aliases, PEP 701 f-strings,
``except*`` and PEP 758's bare ``except A, B:``; whichever Python runs this
suite (3.9 up), a weakening in such a file is caught at the same line and
column as the newest Python would report it, and an honest change passes.
The snippets are strings: this file itself parses on 3.9.
"""

from __future__ import annotations

import ast
import sys

import pytest

from oracle_guard.analysis import pysource
from oracle_guard.commands import check
from tests.helpers import Repo

T = "tests/test_new.py"

PEP695 = """\
import pytest


def first[T](items: list[T]) -> T:
    return items[0]


type Pair[K] = tuple[K, K]


class Box[T: (int, str), *Ts, **P]:
    def __init__(self, x: T) -> None:
        self.x = x


def multi[
    T,  # a comment
    U = int,
](x: T) -> U:
    return x


def test_first():
    assert first([1, 2]) == 1
    assert first("ab") == "a"


def test_box():
    assert Box(3).x == 3
"""

PEP701 = r"""import pytest


def test_format():
    d = {"k": 1}
    assert f"{d["k"]}" == "1"
    assert f"{'\n'.join(['a', 'b'])}" == "a\nb"
    assert f'{
        d["k"]  # the key
    }' == "1"
    assert f"{f"{d["k"]}"}" == "1"


def test_other():
    assert len(f"{'x'!r}") == 3
"""

EXCEPT_STAR = """\
def parse(text):
    return int(text)


def test_parse():
    try:
        raise ExceptionGroup("g", [ValueError()])
    except* ValueError as group:
        assert group.exceptions
    assert parse("1") == 1
"""

PEP758 = """\
def parse(text):
    try:
        return int(text)
    except ValueError, TypeError:
        return None


def test_parse():
    assert parse("1") == 1
    assert parse("x") is None
"""


def run_check(repo: Repo, base: str, new: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    repo.change({T: base}, {T: new})
    code = repo.run(check.main, "--skip", "collection-snapshot")
    out = capsys.readouterr()
    return code, [line for line in out.out.splitlines() if ": OG" in line] + [
        line for line in out.err.splitlines() if "error" in line
    ]


def _replace(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


WEAKENED = [
    (
        "pep695-lost-assert",
        PEP695,
        _replace(PEP695, '    assert first("ab") == "a"\n', ""),
        [f"{T}:24:5: OG301"],
        "lost `assert first('ab') == 'a'`",
    ),
    (
        "pep695-new-skip",
        PEP695,
        _replace(PEP695, "def test_box():", "@pytest.mark.skip\ndef test_box():"),
        [f"{T}:28:2: OG101"],
        "skip mark",
    ),
    (
        "pep695-tautology",
        PEP695,
        _replace(PEP695, "assert Box(3).x == 3", "assert True"),
        [f"{T}:29:5: OG308"],
        "assert True",
    ),
    (
        "pep701-lost-assert",
        PEP701,
        _replace(PEP701, '    assert f"{f"{d["k"]}"}" == "1"\n', ""),
        [f"{T}:10:5: OG301"],
        "has 3 checks, base had 4",
    ),
    (
        "pep701-new-skip",
        PEP701,
        _replace(PEP701, "def test_other():", "@pytest.mark.skipif(True, reason='x')\ndef test_other():"),
        [f"{T}:14:2: OG101"],
        "skipif",
    ),
    (
        "pep701-runtime-skip",
        PEP701,
        _replace(PEP701, '    assert len(f"{', '    pytest.skip("later")\n    assert len(f"{'),
        [f"{T}:15:5: OG201"],
        "pytest.skip",
    ),
    (
        "except-star-swallow",
        EXCEPT_STAR,
        _replace(
            EXCEPT_STAR,
            '    assert parse("1") == 1\n',
            '    try:\n        assert parse("1") == 1\n    except* Exception:\n        pass\n',
        ),
        [f"{T}:12:5: OG305"],
        "except Exception",
    ),
    (
        "except-star-lost-assert",
        EXCEPT_STAR,
        _replace(EXCEPT_STAR, "        assert group.exceptions\n", "        pass\n"),
        [f"{T}:9:9: OG301"],
        "lost `assert group.exceptions`",
    ),
    (
        "pep758-swallow",
        PEP758,
        _replace(
            PEP758,
            '    assert parse("x") is None\n',
            '    try:\n        assert parse("x") is None\n    except AssertionError, KeyError:\n        pass\n',
        ),
        [f"{T}:12:5: OG305"],
        "AssertionError",
    ),
    (
        "pep758-weaker-check",
        PEP758,
        _replace(PEP758, 'assert parse("1") == 1', 'assert parse("1")'),
        [f"{T}:9:5: OG303"],
        "parse('1')",
    ),
]


@pytest.mark.parametrize("name, base, new, where, detail", WEAKENED, ids=[w[0] for w in WEAKENED])
def test_weakening_in_newer_syntax_is_caught(
    repo: Repo, capsys: pytest.CaptureFixture[str], name: str, base: str, new: str, where: list[str], detail: str
) -> None:
    code, lines = run_check(repo, base, new, capsys)
    assert code == 1, lines
    assert [" ".join(line.split(" ", 2)[:2]) for line in lines] == where, lines
    assert detail in lines[0], lines


HONEST = [
    ("pep695-new-test", PEP695, PEP695 + "\n\ndef test_pair():\n    p: Pair[int] = (1, 2)\n    assert p[0] == 1\n"),
    (
        "pep695-renamed-type-parameter",
        PEP695,
        _replace(
            _replace(PEP695, "def first[T](items: list[T]) -> T:", "def first[V](items: list[V]) -> V:"),
            "type Pair[K] = tuple[K, K]",
            "type Pair[E] = tuple[E, E]",
        ),
    ),
    (
        "pep695-stronger",
        PEP695,
        _replace(PEP695, "    assert Box(3).x == 3\n", "    assert Box(3).x == 3\n    assert Box(4).x == 4\n"),
    ),
    ("pep701-reformatted", PEP701, _replace(PEP701, 'assert f"{d["k"]}" == "1"', 'assert f"{ d["k"] }" == "1"')),
    (
        "pep701-new-skipped-test",
        PEP701,
        PEP701 + '\n\n@pytest.mark.skip(reason=f"{"not yet"}")\ndef test_new():\n    assert f"{1}" == "1"\n',
    ),
    (
        "except-star-more-handlers",
        EXCEPT_STAR,
        _replace(
            EXCEPT_STAR,
            "        assert group.exceptions\n",
            "        assert group.exceptions\n    except* TypeError:\n        raise\n",
        ),
    ),
    (
        "pep758-helper-catches-more",
        PEP758,
        _replace(PEP758, "except ValueError, TypeError:", "except ValueError, TypeError, OverflowError:"),
    ),
]


@pytest.mark.parametrize("name, base, new", HONEST, ids=[h[0] for h in HONEST])
def test_honest_change_in_newer_syntax_passes(
    repo: Repo, capsys: pytest.CaptureFixture[str], name: str, base: str, new: str
) -> None:
    code, lines = run_check(repo, base, new, capsys)
    assert (code, lines) == (0, [])


@pytest.mark.parametrize(
    "source", [PEP695, PEP701, EXCEPT_STAR, PEP758], ids=["pep695", "pep701", "except-star", "pep758"]
)
def test_lowered_tree_keeps_every_line_and_column(source: str) -> None:
    tree = pysource.parse(source.encode(), T)
    lines = source.encode().splitlines()
    seen = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.stmt, ast.Name)) and hasattr(node, "lineno"):
            text = lines[node.lineno - 1][node.col_offset :]
            if isinstance(node, ast.Name):
                assert text.startswith(node.id.encode()), (node.id, text)
            elif isinstance(node, ast.Assert):
                assert text.startswith(b"assert"), text
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                assert text.startswith((b"def ", b"class ")) and node.name.encode() in text, text
            seen += 1
    assert seen > 5


def test_bare_except_tuple_is_a_tuple_at_the_newest_python_s_columns() -> None:
    tree = pysource.parse(PEP758.encode(), T)
    handler = next(n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler))
    assert isinstance(handler.type, ast.Tuple)
    assert [(e.id, e.col_offset) for e in handler.type.elts] == [("ValueError", 11), ("TypeError", 23)]
    assert (handler.type.col_offset, handler.type.end_col_offset) == (11, 32)


def test_a_file_no_grammar_accepts_is_still_og001(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    broken = _replace(PEP695, "def test_box():", "def test_box(:")
    code, lines = run_check(repo, PEP695, broken, capsys)
    assert code == 1 and lines and all(": OG001 could not parse" in line for line in lines), lines


def test_newer_syntax_is_told_apart_from_errors_only_by_libcst() -> None:
    # A construct libcst reads but no rewrite keeps in place stays OG001 with the interpreter named.
    source = b"def f[\n\n    T,\n](x):\n    return x\n"
    if sys.version_info >= (3, 12):
        assert isinstance(pysource.parse(source, T), ast.Module)
    else:
        with pytest.raises(pysource.SourceError, match=r"syntax newer than Python 3\.\d+"):
            pysource.parse(source, T)


def test_type_alias_with_a_parenthesised_value_keeps_it() -> None:
    source = b"type Pair[K] = (tuple[K, K])\ntype Alias = (\n    int\n)\n"
    tree = pysource.parse(source, T)
    assert [ast.unparse(n) for n in tree.body] == (
        ["type Pair[K] = tuple[K, K]", "type Alias = int"]
        if sys.version_info >= (3, 12)
        else ["Pair: tuple[K, K]", "Alias: int"]
    )


@pytest.mark.parametrize(
    ("path", "code"),
    [("calc/__init__.py", "OG969"), (T, "OG001")],
    ids=["production", "test"],
)
def test_a_file_that_crashes_libcst_is_a_finding_not_a_crash(repo: Repo, path: str, code: str) -> None:
    """libcst's parser overflows the machine stack on 20,000 open brackets inside an f-string (a segfault
    in the hook's own process, once): it now parses in a child, and the file is one no grammar reads."""
    repo.write("calc/__init__.py", "def add(a, b):\n    return a + b\n")
    repo.write(T, "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n")
    repo.commit()
    repo.write(path, "x = f'{" + "(" * 20000 + "\n", dedent=False)
    result = repo.hook(check.main, "--base", "HEAD", "--skip", "collection-snapshot")
    assert result.code == 1 and code in result.codes, result.out
    assert f"{path}:1:" in result.out and "could not parse" in result.out, result.out


def test_newer_syntax_is_still_lowered_through_the_child() -> None:
    from oracle_guard.analysis import newsyntax

    verdict = newsyntax.verdict(b"def first[T](items: list[T]) -> T:\n    return items[0]\n")
    assert verdict.parses and verdict.lowered is not None and "def first" in verdict.lowered[0]
    assert newsyntax.verdict(b"def (:\n") == (False, None)
