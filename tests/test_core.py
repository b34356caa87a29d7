"""The shared core: base resolution, batched reads, output and exit codes."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from oracle_guard.hook_ids.forbid_skip_marks import main as skip_main
from oracle_guard.repo import changes, git
from oracle_guard.reporting.report import Finding, emit
from tests.helpers import Repo

SKIPPED = """\
    import pytest

    @pytest.mark.skip(reason="later")
    def test_a():
        assert 1 + 1 == 2
"""
PLAIN = """\
    def test_a():
        assert 1 + 1 == 2
"""


def test_finding_formats_sort_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    b = Finding("b.py", 1, 1, "OG101", "second")
    a = Finding("a.py", 9, 2, "OG101", "first, 100%")
    assert emit([b, a, b]) == 1
    assert capsys.readouterr().out.splitlines() == ["a.py:9:2: OG101 first, 100%", "b.py:1:1: OG101 second"]
    assert emit([a], "github") == 1
    assert capsys.readouterr().out == "::error file=a.py,line=9,col=2,title=OG101::first, 100%25\n"
    assert emit([]) == 0


def test_read_blobs_batches_and_reports_missing(repo, monkeypatch) -> None:
    repo.write("a.txt", "alpha\n")
    repo.write("dir/b.txt", b"\x00\x01beta")
    repo.commit()
    monkeypatch.chdir(repo.path)
    blobs = git.read_blobs("HEAD", ["a.txt", "dir/b.txt", "missing.txt", "dir"])
    assert blobs == {"a.txt": b"alpha\n", "dir/b.txt": b"\x00\x01beta", "missing.txt": None, "dir": None}


def test_read_blobs_keeps_what_a_commit_id_names_and_rereads_a_moving_name(repo, monkeypatch) -> None:
    repo.write("a.txt", "one\n")
    first = repo.commit()
    monkeypatch.chdir(repo.path)
    first_id = git.commit_of(first) or ""
    assert git.read_blobs(first_id, ["a.txt", "b.txt"]) == {"a.txt": b"one\n", "b.txt": None}
    repo.write("a.txt", "two\n")
    repo.write("b.txt", "new\n")
    repo.commit()
    # HEAD moved: a name is asked again; the first commit's id still names the first bytes, in the order asked.
    assert git.read_blobs("HEAD", ["b.txt", "a.txt"]) == {"b.txt": b"new\n", "a.txt": b"two\n"}
    assert list(git.read_blobs(first_id, ["b.txt", "a.txt"]).items()) == [("b.txt", None), ("a.txt", b"one\n")]


def test_staged_mode_without_head_treats_everything_as_new(repo, capsys) -> None:
    repo.write("tests/test_a.py", SKIPPED)
    repo.stage()
    assert repo.run(skip_main, "tests/test_a.py") == 1
    assert "tests/test_a.py:3:2: OG101 new skip mark on test_a" in capsys.readouterr().out


def test_staged_mode_compares_with_head(repo, capsys) -> None:
    repo.write("tests/test_a.py", SKIPPED)
    repo.commit()
    repo.write("tests/test_a.py", SKIPPED + "\n\n    def test_b():\n        assert 2 > 1\n")
    repo.stage()
    assert repo.run(skip_main, "tests/test_a.py") == 0, capsys.readouterr().out


def test_range_mode_uses_merge_base_of_pre_commit_refs(repo, monkeypatch, capsys) -> None:
    repo.write("tests/test_a.py", PLAIN)
    base = repo.commit("base")
    repo.write("tests/test_a.py", SKIPPED)
    repo.commit("weaken")
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", base)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", "HEAD")
    assert repo.run(skip_main, "tests/test_a.py") == 1
    assert "OG101 new skip mark on test_a" in capsys.readouterr().out


def test_explicit_base_that_does_not_exist_is_a_usage_error(repo, capsys) -> None:
    repo.write("tests/test_a.py", PLAIN)
    repo.commit()
    assert repo.run(skip_main, "--base", "origin/nope", "tests/test_a.py") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "base revision 'origin/nope' does not exist" in err


def test_shallow_clone_missing_base_says_what_to_fetch(repo, tmp_path, capsys) -> None:
    repo.write("tests/test_a.py", PLAIN)
    first = repo.commit("one")
    repo.write("tests/test_a.py", SKIPPED)
    repo.commit("two")
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo.path}", str(clone)], check=True)
    shallow = Repo(clone)
    assert shallow.run(skip_main, "--base", first, "tests/test_a.py") == 2
    assert "shallow clone" in capsys.readouterr().err


def test_paths_outside_the_repository_are_refused(repo, capsys) -> None:
    repo.commit()
    assert repo.run(skip_main, "../elsewhere.py") == 2
    assert "outside the repository" in capsys.readouterr().err


def test_rename_is_followed_to_its_old_path(repo, monkeypatch, capsys) -> None:
    repo.write("tests/test_a.py", SKIPPED)
    repo.commit()
    repo.git("mv", "tests/test_a.py", "tests/test_renamed.py")
    monkeypatch.chdir(repo.path)
    change_set = changes.resolve(argparse.Namespace(base=None))
    assert change_set.old_path("tests/test_renamed.py") == "tests/test_a.py"
    assert repo.run(skip_main, "tests/test_renamed.py") == 0, capsys.readouterr().out


def test_range_mode_sees_untracked_files_in_the_work_tree(repo, monkeypatch) -> None:
    repo.write("tests/test_a.py", PLAIN)
    base = repo.commit("base")
    repo.write("tests/test_new.py", SKIPPED)  # never added: an agent's uncommitted work
    monkeypatch.chdir(repo.path)
    change_set = changes.resolve(argparse.Namespace(base=base))
    assert "tests/test_new.py" in change_set.changed_paths
    assert change_set.old_path("tests/test_new.py") is None


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("x = os._ｅｘｉｔ\n", "a non-ASCII identifier is read NFKC-normalised"),
        ('x = "\\x50YTEST_"\n', "an escape spells any letter"),
        ('x = "\\120YTEST_"\n', "an octal escape too"),
        ('x = "PY\\\nTEST_"\n', "a backslash-newline in a string joins the lines"),
        ('x = ("PY"  # c\n     "TEST_")\n', "adjacent literals are one string"),
        ('x = "PY""TEST_"\n', "adjacent with nothing between"),
        ('x = """PY""""""TEST_"""\n', "adjacent triple-quoted"),
        ('x = "PY" + "TEST_"\n', "literals joined by +"),
        ("x = f\"PY{'TEST_'}\"\n", "a literal inside an f-string"),
        ("# coding: utf-7\nx = 1\n", "an encoding that does not read ASCII as itself"),
    ],
)
def test_lines_a_text_search_cannot_read_are_always_hot(source: str, why: str) -> None:
    from oracle_guard.analysis.sourcetext import hot_lines, opaque_lines, spells

    data = source.encode("utf-8")
    assert opaque_lines(data), why
    assert hot_lines(data, (b"PYTEST_", b"_exit")) != [] and spells(data, b"PYTEST_"), why


def test_plain_code_has_no_opaque_lines() -> None:
    from oracle_guard.analysis.sourcetext import hot_lines, opaque_lines, spells

    data = b'x = ""\ny = "".join(a)\nz = {"a": 1}\nopen(p, "rb")\nprint("a", "b")\n"""Doc."""\nw = {"k": f"{v}"}\n'
    assert opaque_lines(data) == () and hot_lines(data, (b"PYTEST_",)) == [] and not spells(data, b"PYTEST_")
    assert opaque_lines(b"# -*- coding: latin-1 -*-\nx = 1\n") == ()


# The shapes as one alternation (the first form, slower): every line it finds must stay hot.
_ONE_ALTERNATION = (
    rb"[\x80-\xff]|\\(?:[0-7xuUN]|\r?\n)"
    rb"|[\w\\][\"']+(?:[ \t\f+]|\\?\r?\n|#[^\n]*(?![^\n]))*[rRbBuUfF]{0,2}[\"']+[\w\\]"
    rb"|[\w\"']\{[ \t]*[rRbBuUfF]{0,2}[\"']"
)


def _lines_of(pattern: bytes, source: bytes) -> set[int]:
    import re

    return {source.count(b"\n", 0, m.start()) + 1 for m in re.finditer(pattern, source)}


@pytest.mark.parametrize(
    "unit", ['"', "'", '"""', "a'\n#", "a'#", "# '", "a' ", "a'\n", 'a"\n\n', "(", "{", "\\x", "é", "a'\n#a"]
)
def test_no_file_makes_the_opaque_search_backtrack_without_end(unit: str) -> None:
    """20,000 bytes of one shape: each search is linear (a run of quotes, banners, comments full of quotes
    once took seconds to minutes); in a child with a timeout, so a regression fails instead of hanging."""
    code = (
        "import sys\n"
        "from oracle_guard.analysis.sourcetext import opaque_lines\n"
        "unit = sys.argv[1].encode('utf-8')\n"
        "opaque_lines(unit * (20000 // len(unit)) + b'\\nfoo()\\n')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, unit], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_the_split_opaque_search_finds_every_line_one_alternation_finds() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from oracle_guard.analysis.sourcetext import opaque_lines

    pieces = [
        '"',
        "'",
        '"""',
        " ",
        "  ",
        "\t",
        "+",
        "\n",
        "\\\n",
        "\\x",
        "\\1",
        "#c",
        "##",
        "a",
        "b",
        "f",
        "{",
        "é",
        "_",
        "\r\n",
    ]

    @settings(max_examples=400, deadline=None, database=None)
    @given(st.lists(st.sampled_from(pieces), max_size=30))
    def run(parts: list[str]) -> None:
        source = "".join(parts).encode("utf-8")
        assert _lines_of(_ONE_ALTERNATION, source) <= set(opaque_lines.__wrapped__(source))

    run()
    # and on real code, the same lines exactly (the split search is no coarser)
    import glob
    import os

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for path in sorted(glob.glob(os.path.join(root, "hooks", "oracle_guard", "**", "*.py"), recursive=True))[:80]:
        with open(path, "rb") as f:
            data = f.read()
        assert _lines_of(_ONE_ALTERNATION, data) == set(opaque_lines.__wrapped__(data)), path
