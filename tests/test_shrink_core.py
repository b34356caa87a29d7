"""The core pieces oracle-shrink is built from: file pairing, body fingerprints, check sites."""

from __future__ import annotations

import ast
import textwrap

import pytest

from oracle_guard.analysis.checksites import is_check_name, live_nodes
from oracle_guard.analysis.pysource import body_fingerprint, definitions
from oracle_guard.repo import changes, git
from oracle_guard.repo.filepairs import pair_files


def _change_set(base: dict[str, bytes], new: dict[str, bytes], moves: list[git.Change]) -> changes.ChangeSet:
    """A change set whose blobs are already read: no git needed."""
    change_set = changes.ChangeSet("base", "base", "target", moves)
    change_set._base_blobs.update(base)
    change_set._new_blobs.update(new)
    return change_set


def test_files_pair_with_their_old_name_and_deleted_files_are_read_on_the_base() -> None:
    change_set = _change_set(
        base={"tests/old.py": b"old", "tests/gone.py": b"gone", "docs/gone.txt": b"text", "tests/same.py": b"same"},
        new={"tests/new.py": b"new", "tests/same.py": b"same", "tests/other.py": b"other", "README": b"r"},
        moves=[
            git.Change("R", "tests/new.py", "tests/old.py"),
            git.Change("D", None, "tests/gone.py"),
            git.Change("D", None, "docs/gone.txt"),
            git.Change("A", "tests/other.py", None),
            git.Change("M", "README", "README"),
        ],
    )
    files = pair_files(change_set, ["tests/new.py", "tests/same.py"], (".py", ".pyi"))
    assert files.paths == ["tests/new.py", "tests/same.py", "tests/other.py"]  # reported first, README filtered out
    assert files.old_of == {"tests/new.py": "tests/old.py", "tests/same.py": "tests/same.py", "tests/other.py": None}
    assert files.deleted == ["tests/gone.py"]
    assert files.base_data("tests/new.py") == b"old" and files.base_data("tests/other.py") is None
    assert [p for p in files.paths if files.changed(p)] == ["tests/new.py", "tests/other.py"]
    every = pair_files(change_set, ["tests/new.py"])  # no suffix filter: what pydiff reads
    assert "README" in every.paths and every.deleted == ["tests/gone.py", "docs/gone.txt"]


def _function(source: str) -> ast.FunctionDef:
    node = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


@pytest.mark.parametrize(
    ("one", "other", "same"),
    [
        ("def test_a():\n    assert f() == 1\n", "def test_b():\n    '''Renamed.'''\n    assert f() == 1\n", True),
        ("def test_a():\n    assert f() == 1\n", "def test_a():\n    assert f() == 2\n", False),
        ("def test_a():\n    assert f()\n", "def test_a():\n\n\n    assert (f())\n", True),  # positions aside
    ],
    ids=["renamed-with-docstring", "other-expected-value", "moved-lines"],
)
def test_a_body_fingerprint_ignores_name_docstring_and_positions(one: str, other: str, same: bool) -> None:
    assert (body_fingerprint(_function(one)) == body_fingerprint(_function(other))) is same


def test_only_oracle_shrink_drops_a_leading_ellipsis_like_a_docstring() -> None:
    stub = _function("def test_a():\n    ...\n")
    assert body_fingerprint(stub, any_leading_constant=True) == ""  # a stub body matches nothing
    assert body_fingerprint(stub) != ""
    assert body_fingerprint(_function("def test_a():\n    '''Only a docstring.'''\n")) == ""
    tree = ast.parse("class C:\n    '''Doc.'''\n    def m(self):\n        return 1\n")
    assert set(definitions(tree)) == {"C", "C.m"}


@pytest.mark.parametrize(
    ("name", "is_check"),
    [
        ("assert_called_once_with", True),
        ("self._assert_ok", True),
        ("check_rows", True),
        ("verify_output", True),
        ("fail", True),
        ("checkout", False),  # a prefix needs its underscore
        ("expectation", False),
        ("run", False),
    ],
)
def test_check_names(name: str, is_check: bool) -> None:
    assert is_check_name(name) is is_check


def test_checks_after_a_return_or_under_if_false_are_not_live() -> None:
    fn = _function(
        """
        def test_a():
            assert one()
            if False:
                assert two()
            raise AssertionError("three")
            return
            assert four()
        """
    )
    calls = {n.func.id for n in live_nodes(fn.body) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert calls == {"one", "AssertionError"}
