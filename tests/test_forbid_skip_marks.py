"""forbid-skip-marks in real git repositories: every form rejected, its honest neighbour accepted.

Each case commits a base, stages a change and runs the hook in-process the
way pre-commit calls it; the two big tables (REJECTED, ACCEPTED) need no git
history and run on an in-memory change set through the hook's check().  The skip marks under test live in strings only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from oracle_guard.hook_ids.forbid_skip_marks import check, main
from tests.helpers import Repo, memory_check, python_files

T = "tests/test_mod.py"

BASE = """\
import sys

import pytest


def test_a():
    assert sys.maxsize > 0


class TestB:
    def test_c(self):
        assert [1] == [1]
"""


def with_mark(decorated: str, imports: str = "import pytest") -> str:
    """BASE with IMPORTS and one decorator line above test_a."""
    return f"import sys\n\n{imports}\n\n\n{decorated}\ndef test_a():\n    assert sys.maxsize > 0\n"


# (id, new source of T, expected finding text) -- the base is BASE.
REJECTED = [
    ("skip-bare", with_mark("@pytest.mark.skip"), ":6:2: OG101 new skip mark on test_a"),
    ("skip-reason", with_mark('@pytest.mark.skip(reason="flaky")'), "OG101 new skip mark on test_a"),
    (
        "skipif",
        with_mark('@pytest.mark.skipif(sys.platform == "win32", reason="x")'),
        "OG101 new skipif mark (sys.platform == 'win32') on test_a",
    ),
    ("xfail-bare", with_mark("@pytest.mark.xfail"), "OG101 new xfail mark on test_a"),
    # A non-ASCII name is read NFKC-normalised: `ｓｋｉｐ` is `skip` (test_skips_spelled_... shows pytest agrees).
    ("skip-spelled-in-fullwidth", with_mark("@pytest.mark.ｓｋｉｐ"), "OG101 new skip mark on test_a"),
    (
        "skip-under-a-utf-7-declaration",
        "# coding: utf-7\n" + with_mark("@pytest.mark.+AHMAawBpAHA-"),
        "OG101 new skip mark on test_a",
    ),
    (
        "xfail-args",
        with_mark("@pytest.mark.xfail(strict=False, raises=ValueError)"),
        "OG101 new xfail mark (strict=False, raises=ValueError) on test_a",
    ),
    ("alias-pt", with_mark("@pt.mark.skip", "import pytest as pt"), "OG101 new skip mark on test_a"),
    (
        "from-pytest-mark-as-m",
        with_mark('@m.skipif(True, reason="")', "from pytest import mark as m"),
        "OG101 new skipif mark (True) on test_a",
    ),
    ("from-pytest-mark", with_mark("@mark.xfail", "from pytest import mark"), "OG101 new xfail mark on test_a"),
    (
        "private-mark-gen",
        with_mark("@MARK_GEN.skip", "from _pytest.mark import MARK_GEN"),
        "OG101 new skip mark on test_a",
    ),
    (
        "private-structures",
        with_mark("@G.xfail(reason='x')", "from _pytest.mark.structures import MARK_GEN as G"),
        "OG101 new xfail mark on test_a",
    ),
    (
        "from-pytest-mark-import-skip",
        with_mark("@skip", "from pytest.mark import skip"),
        "OG101 new skip mark (`skip`) on test_a",
    ),
    ("unittest-skip", with_mark('@unittest.skip("later")', "import unittest"), "OG101 new unittest skip on test_a"),
    (
        "from-unittest-skip",
        with_mark('@skip("later")', "from unittest import skip"),
        "OG101 new unittest skip on test_a",
    ),
    (
        "import-unittest-case",
        with_mark('@unittest.case.skip("later")', "import unittest.case"),
        "OG101 new unittest skip on test_a",
    ),
    (
        "from-unittest-case-skipif",
        with_mark('@skipIf(sys.version_info < (3, 99), "old")', "from unittest.case import skipIf"),
        "OG101 new unittest skipIf (sys.version_info < (3, 99)) on test_a",
    ),
    (
        "skipunless",
        with_mark('@ut.skipUnless(False, "no")', "import unittest as ut"),
        "OG101 new unittest skipUnless (False) on test_a",
    ),
    (
        "expected-failure",
        with_mark("@unittest.expectedFailure", "import unittest"),
        "OG101 new unittest expectedFailure on test_a",
    ),
    (
        "bound-call",
        with_mark("@later", 'import pytest\n\nlater = pytest.mark.skip(reason="soon")'),
        "OG101 new skip mark through `later` = `pytest.mark.skip(reason='soon')` on test_a",
    ),
    (
        "bound-alias",
        with_mark("@skipper", "import pytest\n\nskipper = pytest.mark.xfail"),
        "OG101 new xfail mark (`skipper`) on test_a",
    ),
    (
        "getattr-dynamic",
        with_mark("@getattr(pytest.mark, NAME)", 'import pytest\n\nNAME = "sk" + "ip"'),
        "OG102 unverifiable mark `getattr(pytest.mark, NAME)` (dynamic name) on test_a",
    ),
    (
        "getattr-literal",
        with_mark('@getattr(pytest.mark, "skip")'),
        "OG101 new skip mark (`getattr(pytest.mark, 'skip')`) on test_a",
    ),
    (
        "getattr-unittest-dynamic",
        with_mark('@getattr(unittest, "sk" + "ip")("x")', "import unittest"),
        "OG102 unverifiable mark",
    ),
    (
        "method",
        BASE.replace("    def test_c", "    @pytest.mark.skip\n    def test_c"),
        ":11:6: OG101 new skip mark on TestB.test_c",
    ),
    (
        "class",
        BASE.replace("class TestB", "@pytest.mark.xfail(reason='x')\nclass TestB"),
        ":10:2: OG101 new xfail mark on TestB",
    ),
    ("pytestmark-single", BASE + "\npytestmark = pytest.mark.skip\n", "OG101 new skip mark on this module"),
    (
        "pytestmark-list",
        BASE + "\npytestmark = [pytest.mark.slow, pytest.mark.skipif(True, reason='x')]\n",
        "OG101 new skipif mark (True) on this module",
    ),
    ("pytestmark-tuple", BASE + "\npytestmark = (pytest.mark.xfail,)\n", "OG101 new xfail mark on this module"),
    (
        "pytestmark-augmented",
        BASE + "\npytestmark = [pytest.mark.slow]\npytestmark += [pytest.mark.skip]\n",
        "OG101 new skip mark on this module",
    ),
    (
        "pytestmark-class",
        BASE.replace("class TestB:\n", "class TestB:\n    pytestmark = pytest.mark.skip\n"),
        "OG101 new skip mark on TestB",
    ),
    (
        "unittest-skip-flag",
        BASE.replace("class TestB:\n", "class TestB:\n    __unittest_skip__ = True\n"),
        "OG101 new `__unittest_skip__ = True` (skips the tests) on TestB",
    ),
    (
        "dunder-test-false-class",
        BASE.replace("class TestB:\n", "class TestB:\n    __test__ = False\n"),
        "OG101 new `__test__ = False` (pytest and unittest stop collecting it) on TestB",
    ),
    ("dunder-test-false-module", BASE + "\n__test__ = False\n", "OG101 new `__test__ = False`"),
    (
        "setattr-unittest-skip",
        BASE + "\nsetattr(TestB, '__unittest_skip__', True)\n",
        "OG101 new `__unittest_skip__ = True`",
    ),
    (
        "param-single",
        BASE.replace(
            "def test_a():\n",
            "@pytest.mark.parametrize('n', [1, pytest.param(2, marks=pytest.mark.skip)])\ndef test_a(n):\n",
        ),
        "OG101 new skip mark on test_a",
    ),
    (
        "param-list",
        BASE.replace(
            "def test_a():\n",
            "@pytest.mark.parametrize('n', [pytest.param(2, marks=[pytest.mark.slow, pytest.mark.xfail])])\ndef test_a(n):\n",
        ),
        "OG101 new xfail mark on test_a",
    ),
    (
        "param-tuple",
        BASE.replace(
            "def test_a():\n",
            "@pytest.mark.parametrize('n', [pytest.param(2, marks=(pytest.mark.skipif(True, reason='x'),))])\ndef test_a(n):\n",
        ),
        "OG101 new skipif mark (True) on test_a",
    ),
    (
        "renamed-test-gets-a-mark",
        BASE.replace("def test_a():\n", "@pytest.mark.skip\ndef test_a_renamed():\n"),
        "OG101 new skip mark on test_a_renamed",
    ),
    (
        "node-add-marker",
        BASE.replace("def test_a():\n", "def test_a(request):\n    request.node.add_marker(pytest.mark.skip)\n"),
        "OG101 new skip mark on test_a",
    ),
    (
        "applymarker",
        BASE.replace(
            "def test_a():\n", "def test_a(request):\n    request.applymarker(pytest.mark.xfail(run=False))\n"
        ),
        "OG101 new xfail mark (run=False) on test_a",
    ),
    (
        "add-marker-string",
        BASE.replace("def test_a():\n", "def test_a(request):\n    request.node.add_marker('skip')\n"),
        "OG101 new skip mark added at run time on test_a",
    ),
    (
        "add-marker-dynamic",
        BASE.replace("def test_a():\n", "def test_a(request):\n    request.node.add_marker(make())\n"),
        "OG102 unverifiable mark added at run time",
    ),
]


@pytest.mark.parametrize(("source", "expected"), [c[1:] for c in REJECTED], ids=[c[0] for c in REJECTED])
def test_new_mark_is_rejected(source: str, expected: str) -> None:
    code, out, err, _ = memory_check(check, {T: BASE}, {T: source})
    assert code == 1, (out, err)
    assert expected in out, out
    assert out.startswith(f"{T}:")


def test_conftest_collection_hook_adding_a_skip_marker_is_rejected(repo: Repo) -> None:
    conftest = """\
        import pytest


        def pytest_collection_modifyitems(config, items):
            for item in items:
                if "slow" in item.keywords:
                    item.add_marker(pytest.mark.skip(reason="too slow"))
    """
    code, out, _, _ = repo.judge_change(
        main, {"tests/conftest.py": "import pytest\n", T: BASE}, {"tests/conftest.py": conftest}, suffix=".py"
    )
    assert code == 1
    assert "tests/conftest.py:7:29: OG101 new skip mark on pytest_collection_modifyitems" in out


def test_widened_skipif_condition_is_reported(repo: Repo) -> None:
    narrow = with_mark('@pytest.mark.skipif(sys.platform == "win32", reason="no fork")')
    wide = with_mark('@pytest.mark.skipif(sys.platform == "win32" or True, reason="no fork")')
    code, out, _, _ = repo.judge_change(main, {T: narrow}, {T: wide}, suffix=".py")
    assert code == 1
    assert "new skipif mark (sys.platform == 'win32' or True) on test_a" in out


def test_mark_moved_onto_a_test_that_already_existed_is_reported(repo: Repo) -> None:
    # Not a rename: test_a ran at the base and is skipped now, whatever happened to test_old.
    before = BASE + "\n\n@pytest.mark.skip\ndef test_old():\n    assert 1\n"
    after = with_mark("@pytest.mark.skip") + "\n\ndef test_old_renamed():\n    assert 1\n"
    code, out, _, _ = repo.judge_change(main, {T: before}, {T: after}, suffix=".py")
    assert code == 1
    assert "OG101 new skip mark on test_a" in out


def test_mark_that_was_already_there_is_not_reported_but_a_second_one_is(repo: Repo) -> None:
    marked = with_mark("@pytest.mark.skip")
    code, out, _, _ = repo.judge_change(
        main,
        {T: marked + "\n\ndef test_z():\n    assert 1\n"},
        {T: marked + "\n\n@pytest.mark.skip\ndef test_z():\n    assert 1\n"},
        suffix=".py",
    )
    assert code == 1
    assert out.splitlines() == [f"{T}:11:2: OG101 new skip mark on test_z"]


# (id, base files, new files) -- nothing here weakens a test.
ACCEPTED = [
    (
        "new-test-with-non-ascii-names-and-text",
        {T: BASE},
        {T: BASE + '\n\ndef test_grüße():\n    größe = "straße"  # ß\n    assert größe.upper() == "STRASSE"\n'},
    ),
    (
        "brand-new-test-with-its-own-platform-skip",
        {T: BASE},
        {
            T: BASE
            + "\n\n@pytest.mark.skipif(sys.platform == 'win32', reason='no fork')\ndef test_fork():\n    assert 1\n"
        },
    ),
    (
        "brand-new-class-with-a-class-mark-and-param-marks",
        {T: BASE},
        {
            T: BASE + "\n\n@pytest.mark.skipif(sys.version_info < (3, 10), reason='match')\nclass TestMatch:\n"
            "    @pytest.mark.parametrize('n', [1, pytest.param(2, marks=pytest.mark.xfail)])\n    def test_m(self, n):\n        assert n\n"
        },
    ),
    (
        "brand-new-test-module-with-pytestmark",
        {T: BASE},
        {
            T: BASE,
            "tests/test_windows.py": "import sys\n\nimport pytest\n\npytestmark = pytest.mark.skipif(sys.platform != 'win32', reason='win')\n\n\ndef test_w():\n    assert 1\n",
        },
    ),
    (
        "old-mark-untouched-new-test-added",
        {T: with_mark("@pytest.mark.skip(reason='x')")},
        {T: with_mark("@pytest.mark.skip(reason='x')") + "\n\ndef test_new():\n    assert 2\n"},
    ),
    (
        "old-marks-every-form-untouched-file-edited",
        {
            T: BASE.replace(
                "class TestB:\n", "@unittest.skip('x')\nclass TestB:\n    pytestmark = [pytest.mark.xfail]\n"
            ).replace("import pytest\n", "import pytest\nimport unittest\n")
            + "\npytestmark = pytest.mark.skipif(True, reason='r')\n"
        },
        {
            T: BASE.replace(
                "class TestB:\n", "@unittest.skip('x')\nclass TestB:\n    pytestmark = [pytest.mark.xfail]\n"
            ).replace("import pytest\n", "import pytest\nimport unittest\n")
            + "\npytestmark = pytest.mark.skipif(True, reason='r')\n\n\ndef test_more():\n    assert 3\n"
        },
    ),
    (
        "marked-test-moved-to-another-file",
        {
            T: BASE + "\n\n@pytest.mark.skip\ndef test_moved():\n    assert 1\n",
            "tests/test_other.py": "import pytest\n",
        },
        {T: BASE, "tests/test_other.py": "import pytest\n\n\n@pytest.mark.skip\ndef test_moved():\n    assert 1\n"},
    ),
    (
        "marked-test-moved-to-a-new-file",
        {T: BASE + "\n\n@pytest.mark.xfail(strict=True)\ndef test_moved():\n    assert 1\n"},
        {
            T: BASE,
            "tests/test_new_home.py": "import pytest\n\n\n@pytest.mark.xfail(strict=True)\ndef test_moved():\n    assert 1\n",
        },
    ),
    (
        "file-renamed-with-its-marks",
        {T: with_mark("@pytest.mark.skip") + "\npytestmark = pytest.mark.xfail\n"},
        {T: None, "tests/test_renamed.py": with_mark("@pytest.mark.skip") + "\npytestmark = pytest.mark.xfail\n"},
    ),
    (
        "skip-in-strings-comments-docstrings",
        {T: BASE},
        {
            T: BASE.replace(
                "def test_a():\n",
                'def test_a():\n    """Does not @pytest.mark.skip anything."""\n    # pytest.mark.skip would be wrong here\n    assert "pytest.mark.skip" != "xfail"\n',
            )
        },
    ),
    (
        "unrelated-skip-attributes",
        {T: BASE},
        {
            T: BASE.replace(
                "def test_a():\n",
                "def test_a(df, reader):\n    rows = df.skip(3)\n    reader.skip = 2\n    skip = [1]\n    assert rows is not skip\n",
            )
        },
    ),
    (
        "other-marks",
        {T: BASE},
        {
            T: with_mark(
                "@pytest.mark.parametrize('x', [1, 2])\n@pytest.mark.slow\n@pytest.mark.usefixtures('tmp_path')\n@pytest.mark.filterwarnings('ignore')"
            ).replace("def test_a():", "def test_a(x):")
        },
    ),
    (
        "pytest-param-without-skip-marks",
        {T: BASE},
        {
            T: BASE
            + "\n@pytest.mark.parametrize('n', [pytest.param(1, marks=pytest.mark.slow, id='one')])\ndef test_p(n):\n    assert n\n"
        },
    ),
    (
        "only-the-reason-text-changed",
        {T: with_mark('@pytest.mark.skipif(sys.platform == "win32", reason="no fork")')},
        {T: with_mark('@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no fork(); see #12")')},
    ),
    (
        "unittest-reason-text-changed",
        {T: with_mark('@unittest.skipIf(sys.platform == "win32", "no fork")', "import unittest")},
        {T: with_mark('@unittest.skipIf(sys.platform == "win32", "Windows has no fork")', "import unittest")},
    ),
    (
        "reformatted",
        {T: with_mark('@pytest.mark.skipif(sys.platform=="win32",reason="no fork")\n@pytest.mark.xfail')},
        {
            T: "import sys\n\nimport pytest\n\n# a comment\n\n\n@pytest.mark.skipif(\n    sys.platform == 'win32',\n    reason='no fork',\n)\n"
            "@pytest.mark.xfail\ndef test_a():\n    assert sys.maxsize > 0\n"
        },
    ),
    (
        "alias-style-switched",
        {T: with_mark("@pytest.mark.skip")},
        {T: with_mark("@pt.mark.skip", "import pytest as pt")},
    ),
    (
        "mark-moved-into-pytestmark-of-the-same-module-is-still-new-only-if-new",
        {T: BASE + "\npytestmark = [pytest.mark.skip]\n"},
        {T: BASE + "\npytestmark = (pytest.mark.skip,)\n"},
    ),
    (
        "bound-mark-unchanged-and-reused-elsewhere-unchanged",
        {T: with_mark("@later", "import pytest\n\nlater = pytest.mark.skip(reason='a')")},
        {T: with_mark("@later", "import pytest\n\nlater = pytest.mark.skip(reason='b')")},
    ),
    (
        "assert-only-change-in-a-marked-file",
        {T: with_mark("@pytest.mark.xfail")},
        {T: with_mark("@pytest.mark.xfail").replace("sys.maxsize > 0", "sys.maxsize > 1")},
    ),
    (
        "marked-test-renamed",
        {T: with_mark("@pytest.mark.skipif(sys.platform == 'win32', reason='x')")},
        {
            T: with_mark("@pytest.mark.skipif(sys.platform == 'win32', reason='x')").replace(
                "def test_a", "def test_a_handles_big_numbers"
            )
        },
    ),
    (
        "marked-class-renamed-with-its-marked-methods",
        {
            T: BASE.replace(
                "class TestB:\n", "@pytest.mark.xfail\nclass TestB:\n    pytestmark = [pytest.mark.skip]\n"
            ).replace("    def test_c", "    @pytest.mark.skip\n    def test_c")
        },
        {
            T: BASE.replace(
                "class TestB:\n", "@pytest.mark.xfail\nclass TestRenamed:\n    pytestmark = [pytest.mark.skip]\n"
            ).replace("    def test_c", "    @pytest.mark.skip\n    def test_c")
        },
    ),
    ("skipped-test-deleted", {T: BASE + "\n\n@pytest.mark.skip\ndef test_gone():\n    assert 1\n"}, {T: BASE}),
    (
        "non-test-file-with-skip-word-only-in-names",
        {"tests/helpers.py": "def skip_rows(n):\n    return n\n"},
        {"tests/helpers.py": "def skip_rows(n):\n    return n + 1\n\n\ndef xfail_count():\n    return 0\n"},
    ),
]


@pytest.mark.parametrize(("before", "after"), [c[1:] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_honest_change_is_accepted(before: dict[str, str], after: dict[str, str | None]) -> None:
    code, out, err, _ = memory_check(check, before, after, python_files(after))
    assert (code, out, err) == (0, "", "")


# -- the freeze ledger --------------------------------------------------------------

CONTRACT = """\
version: 1
freezes:
  - id: {test_id}
    owner: alice
    reason: "flaky on CI, tracked in #7"
    expires: "2026-12-05T00:00:00Z"
    remaining_reruns: 2
"""


@pytest.mark.parametrize(
    ("test_id", "now", "expected_code"),
    [
        ("tests/test_mod.py::test_a", "2026-12-02T12:00:00Z", 0),
        ("test_a", "2026-12-02T12:00:00Z", 0),
        ("tests/test_mod.py::test_a", "2026-12-06T00:00:00Z", 1),  # expired
        ("tests/test_mod.py::test_other", "2026-12-02T12:00:00Z", 1),  # covers another test
        ("tests/test_elsewhere.py::test_a", "2026-12-02T12:00:00Z", 1),  # another file
    ],
)
def test_freeze_ledger_entry_allows_only_the_test_it_covers_while_valid(
    repo: Repo, test_id: str, now: str, expected_code: int
) -> None:
    base = {T: BASE, "tests/agent_contract.yaml": CONTRACT.format(test_id=test_id)}
    code, out, _, _ = repo.judge_change(
        main, base, {T: with_mark("@pytest.mark.xfail(reason='#7')")}, "--now", now, suffix=".py"
    )
    assert code == expected_code, out
    assert ("OG101 new xfail mark on test_a" in out) == bool(expected_code)


def test_freeze_does_not_cover_a_module_wide_mark(repo: Repo) -> None:
    base = {T: BASE, "tests/agent_contract.yaml": CONTRACT.format(test_id="test_a")}
    code, out, _, _ = repo.judge_change(
        main, base, {T: BASE + "\npytestmark = pytest.mark.skip\n"}, "--now", "2026-12-02T12:00:00Z", suffix=".py"
    )
    assert code == 1 and "on this module" in out


def test_broken_contract_is_a_usage_error(repo: Repo) -> None:
    base = {T: BASE, "tests/agent_contract.yaml": "version: 1\nfreezes: [\n"}
    code, out, err, _ = repo.judge_change(main, base, {T: with_mark("@pytest.mark.skip")}, suffix=".py")
    assert code == 2 and out == ""
    assert err.startswith("oracle-guard: error: tests/agent_contract.yaml:") and err.count("\n") == 1


# -- --all ---------------------------------------------------------------------------


def test_all_reports_every_occurrence_old_and_new(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    old = with_mark("@pytest.mark.skip") + "\npytestmark = [pytest.mark.xfail]\n"
    repo.write(T, old)
    repo.write("tests/test_two.py", "import unittest\n\n\n@unittest.expectedFailure\ndef test_x():\n    assert 0\n")
    repo.write("tests/test_clean.py", "def test_ok():\n    assert 1\n")
    repo.commit()
    code = repo.run(main, "--all", T, "tests/test_two.py", "tests/test_clean.py")
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert out == [
        f"{T}:6:2: OG101 new skip mark on test_a",
        f"{T}:10:15: OG101 new xfail mark on this module",
        "tests/test_two.py:4:2: OG101 new unittest expectedFailure on test_x",
    ]


def test_all_on_a_clean_tree_is_clean(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write(T, BASE)
    repo.commit()
    assert repo.run(main, "--all", T) == 0
    assert capsys.readouterr().out == ""


def test_github_format(repo: Repo) -> None:
    code, out, _, _ = repo.judge_change(
        main, {T: BASE}, {T: with_mark("@pytest.mark.skip")}, "--format", "github", suffix=".py"
    )
    assert code == 1
    assert out == f"::error file={T},line=6,col=2,title=OG101::new skip mark on test_a\n"


# -- bad input -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"def test_a(:\n    assert 1\n", ":1:12: OG001 could not parse"),  # no skip token at all
        (b"import pytest\n@pytest.mark.skip\ndef test_a(\n", ":3:11: OG001 could not parse"),
        (b"def test_a():\n    s = '\xff\xfe'\n", ":2:10: OG001 not valid UTF-8"),
        (b"\x00\x01\x02binary", ":1:1: OG001 not a text file"),
    ],
    ids=["syntax-error-no-token", "syntax-error-with-mark", "not-utf8", "binary"],
)
def test_unreadable_file_is_a_finding_with_a_position(
    repo: Repo, capsys: pytest.CaptureFixture[str], data: bytes, expected: str
) -> None:
    repo.write(T, BASE)
    repo.commit()
    repo.write(T, data)
    repo.stage()
    code = repo.run(main, T)
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith(T + expected) and out.count("\n") == 1


def test_all_reports_an_unparsable_file_that_could_hold_a_mark(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    # --all parses only files with a skip-like token (a file without one cannot hide a mark);
    # a commit or range check parses every changed file.
    repo.write(T, b"import pytest\n@pytest.mark.skip\ndef test_a(:\n")
    repo.write("tests/test_no_token.py", b"def test_b(:\n")
    repo.commit()
    assert repo.run(main, "--all", T, "tests/test_no_token.py") == 1
    assert capsys.readouterr().out == f"{T}:3:12: OG001 could not parse: invalid syntax\n"


def test_empty_file_and_unchanged_broken_base_are_fine(repo: Repo) -> None:
    code, out, err, _ = repo.judge_change(main, {T: "def test_a(:\n"}, {T: "", "tests/test_empty.py": ""}, suffix=".py")
    assert (code, out, err) == (0, "", "")


def test_deleted_files_are_read_for_moves_not_checked(repo: Repo) -> None:
    before = {T: with_mark("@pytest.mark.skip"), "tests/test_gone.py": "def test_b(:\n"}
    after = {T: None, "tests/test_gone.py": None, "tests/test_x.py": with_mark("@pytest.mark.skip")}
    code, out, err, _ = repo.judge_change(main, before, after, suffix=".py")
    assert (code, out, err) == (0, "", "")


def test_file_named_but_missing_is_skipped_quietly(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write(T, BASE)
    repo.commit()
    assert repo.run(main, "tests/not_there.py") == 0
    assert capsys.readouterr().out == ""


def test_first_commit_treats_every_mark_as_new(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write(T, with_mark("@pytest.mark.skip"))
    repo.stage()
    assert repo.run(main, T) == 1
    captured = capsys.readouterr()
    assert "OG101 new skip mark on test_a" in captured.out
    assert "no commits yet" in captured.err


@pytest.mark.parametrize("base", ["does-not-exist", "0" * 40])
def test_missing_base_revision_is_one_line_exit_2(repo: Repo, capsys: pytest.CaptureFixture[str], base: str) -> None:
    repo.write(T, BASE)
    repo.commit()
    assert repo.run(main, "--base", base, T) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert f"base revision '{base}' does not exist" in captured.err


def test_range_mode_through_pre_commit_refs(
    repo: Repo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write(T, BASE)
    base = repo.commit("base")
    repo.write(T, with_mark("@pytest.mark.skip"))
    repo.commit("skip it")
    repo.write(T, with_mark("@pytest.mark.skip") + "\n\ndef test_more():\n    assert 1\n")
    repo.commit("more")
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", base)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", "HEAD")
    assert repo.run(main, T) == 1
    assert "OG101 new skip mark on test_a" in capsys.readouterr().out


# -- what a clean commit costs -------------------------------------------------------

PROBE = """\
import sys
from oracle_guard.hook_ids.{module} import main
code = main(sys.argv[1:])
heavy = sorted(m for m in ("libcst", "yaml", "oracle_guard.contract.contract") if m in sys.modules)
print(code, ",".join(heavy) or "-")
"""


@pytest.mark.parametrize("module", ["forbid_skip_marks", "forbid_runtime_skip"])
def test_clean_commit_imports_neither_libcst_nor_yaml(repo: Repo, module: str) -> None:
    repo.write(T, BASE)
    repo.write("tests/agent_contract.yaml", "version: 1\n")
    repo.commit()
    repo.write(T, BASE + "\n\ndef test_more():\n    assert 2\n")
    repo.stage()
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module), T],
        cwd=repo.path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "hooks")},
    )
    assert proc.stdout == "0 -\n", proc.stderr


def test_default_contract_path_matches_the_loader() -> None:
    from oracle_guard.contract import contract
    from oracle_guard.repo import paths

    assert paths.DEFAULT_CONTRACT == contract.DEFAULT_PATH


def test_condition_names_renamed_throughout_the_file_is_a_refactor(repo: Repo) -> None:
    base = with_mark(
        "@pytest.mark.skipif(not PY310, reason='match')", "import pytest\n\nPY310 = sys.version_info >= (3, 10)"
    )
    new = with_mark(
        "@pytest.mark.skipif(not PY_3_10_PLUS, reason='match')",
        "import pytest\n\nPY_3_10_PLUS = sys.version_info >= (3, 10)",
    )
    code, out, _, _ = repo.judge_change(main, {T: base}, {T: new}, suffix=".py")
    assert code == 0, out


def test_condition_swapped_to_another_existing_name_is_reported(repo: Repo) -> None:
    consts = "import pytest\n\nIS_WINDOWS = sys.platform == 'win32'\nIS_LINUX = sys.platform == 'linux'"
    base = with_mark("@pytest.mark.skipif(IS_WINDOWS, reason='no fork')", consts)
    new = with_mark("@pytest.mark.skipif(IS_LINUX, reason='no fork')", consts)
    code, out, _, _ = repo.judge_change(main, {T: base}, {T: new}, suffix=".py")
    assert code == 1 and "OG101 new skipif mark (IS_LINUX) on test_a" in out


HELPERS = "import os\n\nimport pytest\n\nneeds_network = pytest.mark.skipif(not os.environ.get('NET'), reason='network')\n\n\ndef timed(func):\n    return func\n"
USES = """\
{imports}


@needs_network
def test_fetch():
    assert 1


{deco}def test_parse():
    assert [1][0] == 1
"""


@pytest.mark.parametrize(
    ("helpers_path", "imports"),
    [
        ("tests/helpers.py", "from tests.helpers import needs_network, timed"),
        ("tests/helpers.py", "from .helpers import needs_network, timed"),
        ("tests/conftest.py", "from conftest import needs_network, timed"),
        ("src/testing_marks.py", "from testing_marks import (\n    needs_network,\n    timed,\n)"),
    ],
    ids=["absolute", "relative", "conftest", "src-layout"],
)
def test_shared_skip_mark_imported_from_the_project_put_on_an_existing_test(
    repo: Repo, helpers_path: str, imports: str
) -> None:
    files = {helpers_path: HELPERS, "tests/__init__.py": ""}
    before = {**files, T: USES.format(imports=imports, deco="")}
    code, out, _, _ = repo.judge_change(
        main, before, {T: USES.format(imports=imports, deco="@needs_network\n")}, suffix=".py"
    )
    assert code == 1, out
    assert f"OG101 new skipif mark through `needs_network` (imported: {helpers_path}:" in out and "on test_parse" in out


def test_shared_skip_mark_imported_and_honest_neighbours(repo: Repo) -> None:
    imports = "from tests.helpers import needs_network, timed"
    before = {"tests/helpers.py": HELPERS, "tests/__init__.py": "", T: USES.format(imports=imports, deco="")}
    # a decorator from the project that is no mark; an old use untouched; a brand-new test that needs the network
    after = USES.format(imports=imports, deco="@timed\n") + "\n\n@needs_network\ndef test_download():\n    assert 2\n"
    code, out, _, _ = repo.judge_change(main, before, {T: after}, suffix=".py")
    assert code == 0, out


def test_shared_mark_definition_widened_is_reported_where_it_is_defined(repo: Repo) -> None:
    before = {"tests/conftest.py": HELPERS, T: USES.format(imports="from conftest import needs_network", deco="")}
    widened = HELPERS.replace("not os.environ.get('NET')", "True")
    code, out, _, _ = repo.judge_change(main, before, {"tests/conftest.py": widened}, suffix=".py")
    assert (
        code == 1
        and "tests/conftest.py:5:1: OG101 shared skipif mark `needs_network` changed to (True) on every test that uses it"
        in out
    )


def test_shared_mark_reason_changed_or_a_new_one_defined_is_honest(repo: Repo) -> None:
    before = {"tests/conftest.py": HELPERS}
    after = (
        HELPERS.replace("reason='network'", "reason='needs the network'")
        + "\nneeds_docker = pytest.mark.skipif(not os.environ.get('DOCKER'), reason='docker')\n"
    )
    code, out, _, _ = repo.judge_change(main, before, {"tests/conftest.py": after}, suffix=".py")
    assert code == 0, out


def test_condition_name_renamed_by_an_import_alias_is_a_refactor(repo: Repo) -> None:
    # Found on pallets/click: `from click._compat import WIN as ON_WINDOWS`, every use renamed.
    base = with_mark("@pytest.mark.skipif(WIN, reason='no sed')", "import pytest\nfrom compat import WIN")
    new = with_mark(
        "@pytest.mark.skipif(ON_WINDOWS, reason='no sed')",
        "import pytest\nfrom compat import (\n    WIN as ON_WINDOWS,\n)",
    )
    code, out, _, _ = repo.judge_change(main, {T: base}, {T: new}, suffix=".py")
    assert code == 0, out


def test_condition_aliased_to_another_imported_name_is_reported(repo: Repo) -> None:
    base = with_mark("@pytest.mark.skipif(WIN, reason='no sed')", "import pytest\nfrom compat import WIN, LINUX")
    new = with_mark(
        "@pytest.mark.skipif(ON_WINDOWS, reason='no sed')", "import pytest\nfrom compat import WIN, LINUX as ON_WINDOWS"
    )
    code, out, _, _ = repo.judge_change(main, {T: base}, {T: new}, suffix=".py")
    assert code == 1 and "OG101 new skipif mark (ON_WINDOWS) on test_a" in out


IGNORE_MARK = "@pytest.mark.filterwarnings('ignore::DeprecationWarning')\n"


@pytest.mark.parametrize(
    ("config", "rejected"),
    [
        ({"pytest.ini": "[pytest]\nfilterwarnings =\n    error\n"}, True),
        ({"pyproject.toml": "[tool.pytest.ini_options]\nfilterwarnings = ['error', 'ignore::UserWarning']\n"}, True),
        ({"setup.cfg": "[tool:pytest]\naddopts = -W error\n"}, True),
        ({"pytest.ini": "[pytest]\naddopts = -q\n"}, False),  # warnings are no errors here: nothing silenced
        ({}, False),
    ],
    ids=["ini-error", "pyproject-error", "addopts-W-error", "no-error-filter", "no-config"],
)
def test_ignore_filter_on_an_existing_test_where_warnings_are_errors(
    repo: Repo, config: dict[str, str], rejected: bool
) -> None:
    code, out, _, _ = repo.judge_change(
        main, {**config, T: BASE}, {T: BASE.replace("def test_a():\n", IGNORE_MARK + "def test_a():\n")}, suffix=".py"
    )
    assert code == (1 if rejected else 0), out
    if rejected:
        assert (
            "OG101 new `filterwarnings('ignore::DeprecationWarning')` mark where the project turns warnings into errors"
            in out
        )


def test_filterwarnings_honest_neighbours(repo: Repo) -> None:
    config = {"pytest.ini": "[pytest]\nfilterwarnings =\n    error\n"}
    old = BASE.replace("def test_a():\n", IGNORE_MARK + "def test_a():\n")
    # the same filter kept, an `error` filter added, and a brand-new test with its own ignore
    new = old.replace("class TestB:\n", "@pytest.mark.filterwarnings('error::ResourceWarning')\nclass TestB:\n")
    new += "\n\n" + IGNORE_MARK + "def test_new():\n    assert 3\n"
    code, out, _, _ = repo.judge_change(main, {**config, T: old}, {T: new}, suffix=".py")
    assert code == 0, out


def test_skips_spelled_in_fullwidth_are_skips_to_pytest(tmp_path: Path) -> None:
    """The rows above are real: pytest reads `ｓｋｉｐ` as `skip`, so a failing test turns green."""
    (tmp_path / "test_spelled.py").write_text(
        "import pytest\n\n\n@pytest.mark.ｓｋｉｐ\ndef test_a():\n    assert False\n\n\n"
        "def test_b():\n    pytest.ｓｋｉｐ('later')\n    assert False\n",
        encoding="utf-8",
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTEST_ADDOPTS": ""},
        timeout=120,
    )
    assert proc.returncode == 0 and "2 skipped" in proc.stdout, proc.stdout + proc.stderr
