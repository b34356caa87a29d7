"""forbid-runtime-skip in real git repositories: every form rejected, its honest neighbour accepted.

The runtime skips under test live in strings only.
"""

from __future__ import annotations

import pytest

from oracle_guard.hook_ids.forbid_runtime_skip import check, main
from tests.helpers import Repo, memory_check

T = "tests/test_mod.py"

BASE = """\
import os
import sys
import unittest

import pytest


def helper():
    return 41


def test_a():
    value = helper() + 1
    assert value == 42


class TestB(unittest.TestCase):
    def test_c(self):
        self.assertEqual(helper(), 41)
"""


def in_test_a(*lines: str, imports: str = "") -> str:
    """BASE with LINES inserted at the top of test_a's body (and IMPORTS after pytest)."""
    body = "".join(f"    {line}\n" for line in lines)
    return BASE.replace("import pytest\n", f"import pytest\n{imports}", 1).replace(
        "def test_a():\n", "def test_a():\n" + body, 1
    )


def in_test_c(*lines: str) -> str:
    body = "".join(f"        {line}\n" for line in lines)
    return BASE.replace("    def test_c(self):\n", "    def test_c(self):\n" + body, 1)


# (id, new source of T, expected finding text) -- the base is BASE.
REJECTED = [
    ("pytest-skip-spelled-in-fullwidth", in_test_a('pytest.ｓｋｉｐ("flaky")'), "OG201 new runtime skip"),
    (
        "pytest-skip",
        in_test_a('pytest.skip("flaky")'),
        ":13:5: OG201 new runtime skip `pytest.skip('flaky')` in test_a",
    ),
    (
        "pytest-skip-module-level",
        BASE + '\npytest.skip("all", allow_module_level=True)\n',
        "OG201 new runtime skip `pytest.skip('all', allow_module_level=True)` in this module",
    ),
    ("pytest-xfail", in_test_a('pytest.xfail("known")'), "OG201 new runtime skip `pytest.xfail('known')` in test_a"),
    (
        "importorskip-in-test",
        in_test_a('np = pytest.importorskip("numpy")'),
        "OG201 new runtime skip `pytest.importorskip('numpy')` in test_a",
    ),
    (
        "importorskip-module",
        BASE + '\nyaml = pytest.importorskip("yaml")\n',
        "OG201 new runtime skip `pytest.importorskip('yaml')` in this module",
    ),
    ("pytest-exit", in_test_a('pytest.exit("stop")'), "OG201 new runtime skip `pytest.exit('stop')` in test_a"),
    ("os-exit", in_test_a("os._exit(0)"), "OG201 new runtime skip `os._exit(0)` in test_a"),
    (
        "alias-pt",
        in_test_a("pt.skip()", imports="import pytest as pt\n"),
        "OG201 new runtime skip `pt.skip()` in test_a",
    ),
    (
        "from-pytest-import-skip",
        in_test_a("skip()", imports="from pytest import skip\n"),
        "OG201 new runtime skip `skip()` in test_a",
    ),
    (
        "from-import-as-innocent-name",
        in_test_a("go('x')", imports="from pytest import skip as go\n"),
        "OG201 new runtime skip `go('x')` in test_a",
    ),
    (
        "from-private-outcomes",
        in_test_a("xfail('x')", imports="from _pytest.outcomes import xfail\n"),
        "OG201 new runtime skip `xfail('x')` in test_a",
    ),
    (
        "skiptest",
        in_test_c('self.skipTest("later")'),
        "OG201 new runtime skip `self.skipTest('later')` in TestB.test_c",
    ),
    (
        "raise-unittest-skiptest",
        in_test_a('raise unittest.SkipTest("later")'),
        "OG201 new runtime skip `raise unittest.SkipTest('later')` in test_a",
    ),
    (
        "raise-imported-skiptest",
        in_test_a("raise SkipTest", imports="from unittest import SkipTest\n"),
        "OG201 new runtime skip `raise SkipTest` in test_a",
    ),
    (
        "raise-unittest-case-skiptest",
        in_test_a("raise unittest.case.SkipTest()", imports="import unittest.case\n"),
        "OG201 new runtime skip `raise unittest.case.SkipTest()` in test_a",
    ),
    (
        "raise-pytest-skip-exception",
        in_test_a('raise pytest.skip.Exception("x")'),
        "OG201 new runtime skip `raise pytest.skip.Exception('x')` in test_a",
    ),
    (
        "raise-local-subclass",
        in_test_a("raise Later()").replace("def helper", "class Later(unittest.SkipTest):\n    pass\n\n\ndef helper"),
        "OG201 new runtime skip `raise Later()` in test_a",
    ),
    (
        "raise-local-subclass-of-subclass",
        in_test_a("raise Later2()").replace(
            "def helper",
            "class Later(pytest.skip.Exception):\n    pass\n\n\nclass Later2(Later):\n    pass\n\n\ndef helper",
        ),
        "OG201 new runtime skip `raise Later2()` in test_a",
    ),
    (
        "skip-in-fixture",
        BASE + '\n@pytest.fixture\ndef db():\n    pytest.skip("no database")\n',
        "OG201 new runtime skip `pytest.skip('no database')` in db",
    ),
    (
        "conditional-skip",
        in_test_a('if sys.platform == "win32":', '    pytest.skip("no fork")'),
        "OG201 new runtime skip `pytest.skip('no fork')` in test_a when `sys.platform == 'win32'`",
    ),
    (
        "skip-in-else",
        in_test_a("if os.environ.get('CI'):", "    pass", "else:", "    pytest.skip()"),
        "OG201 new runtime skip `pytest.skip()` in test_a when `not (os.environ.get('CI'))`",
    ),
    (
        "skip-in-except",
        in_test_a("try:", "    import numpy", "except ImportError:", "    pytest.skip('no numpy')"),
        "OG201 new runtime skip `pytest.skip('no numpy')` in test_a when `except ImportError`",
    ),
    ("early-return-first", in_test_a("return"), ":13:5: OG202 new early return in test_a before its first check"),
    (
        "early-return-after-docstring",
        in_test_a('"""Doc."""', "return"),
        ":14:5: OG202 new early return in test_a before its first check",
    ),
    (
        "if-true-return",
        in_test_a("if True:", "    return"),
        "OG202 new early return in test_a before its first check when `True`",
    ),
    (
        "conditional-return",
        in_test_a("if not os.environ.get('DB'):", "    return"),
        "OG202 new early return in test_a before its first check when `not os.environ.get('DB')`",
    ),
    (
        "return-inside-with",
        in_test_a("with open(os.devnull):", "    return"),
        "OG202 new early return in test_a before its first check",
    ),
    (
        "return-inside-try",
        in_test_a("try:", "    import numpy", "except ImportError:", "    return"),
        "OG202 new early return in test_a before its first check when `except ImportError`",
    ),
    (
        "return-inside-loop",
        in_test_a("for name in os.listdir('.'):", "    return"),
        "OG202 new early return in test_a before its first check when `for name in os.listdir('.')`",
    ),
    (
        "raise-bound-skip-exception",
        in_test_a("err = unittest.SkipTest('later')", "raise err"),
        "OG201 new runtime skip `raise err` in test_a",
    ),
    (
        "one-line-test-returning",
        BASE.replace("def test_a():\n    value = helper() + 1\n    assert value == 42\n", "def test_a(): return\n"),
        "OG202 new early return in test_a before its first check",
    ),
    (
        "one-line-if-return",
        in_test_a("if not value: return"),
        "OG202 new early return in test_a before its first check when `not value`",
    ),
    ("early-return-method", in_test_c("return None"), "OG202 new early return in TestB.test_c before its first check"),
    (
        "early-return-async",
        BASE.replace("def test_a():\n", "async def test_a():\n    return\n"),
        "OG202 new early return in test_a",
    ),
]


@pytest.mark.parametrize(("source", "expected"), [c[1:] for c in REJECTED], ids=[c[0] for c in REJECTED])
def test_new_runtime_skip_is_rejected(source: str, expected: str) -> None:
    code, out, err, _ = memory_check(check, {T: BASE}, {T: source})
    assert code == 1, (out, err)
    assert expected in out, out
    assert out.startswith(f"{T}:")


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            'if sys.platform == "win32":',
            'if sys.platform.startswith("win") or True:',
            "when `sys.platform.startswith('win') or True`",
        ),
        ('if sys.platform == "win32":', "if True:", "when `True`"),
        ('if sys.platform == "win32":', "if 1:", "when `1`"),
    ],
)
def test_widened_condition_is_reported(repo: Repo, old: str, new: str, expected: str) -> None:
    code, out, _, _ = repo.judge_change(
        main, {T: in_test_a(old, '    pytest.skip("no fork")')}, {T: in_test_a(new, '    pytest.skip("no fork")')}
    )
    assert code == 1
    assert expected in out


def test_skip_moved_onto_a_test_that_already_ran_is_reported(repo: Repo) -> None:
    before = BASE + "\n\ndef test_wip():\n    pytest.skip('wip')\n"
    after = in_test_a("pytest.skip('wip')") + "\n\ndef test_wip_done():\n    assert helper()\n"
    code, out, _, _ = repo.judge_change(main, {T: before}, {T: after})
    assert code == 1
    assert "OG201 new runtime skip `pytest.skip('wip')` in test_a" in out


def test_existing_skip_kept_and_new_one_beside_it_is_reported(repo: Repo) -> None:
    old = in_test_a("if sys.platform == 'win32':", "    pytest.skip('a')")
    code, out, _, _ = repo.judge_change(
        main,
        {T: old + "\n\ndef test_new():\n    assert 1\n"},
        {T: old + "\n\ndef test_new():\n    pytest.skip('b')\n    assert 1\n"},
    )
    assert code == 1
    assert out.splitlines() == [f"{T}:25:5: OG201 new runtime skip `pytest.skip('b')` in test_new"]


# (id, base files, new files) -- nothing here weakens a test.
ACCEPTED = [
    (
        "new-test-with-non-ascii-names-and-escapes",
        {T: BASE},
        {T: BASE + '\n\ndef test_grüße():\n    assert "\\u00df".upper() == "S" "S"\n'},
    ),
    (
        "brand-new-test-that-skips-on-one-platform",
        {T: BASE},
        {
            T: BASE
            + "\n\ndef test_fork():\n    if sys.platform == 'win32':\n        pytest.skip('no fork')\n    assert 1\n"
        },
    ),
    (
        "existing-conditional-skip-untouched",
        {T: in_test_a("if sys.platform == 'win32':", "    pytest.skip('no fork')")},
        {
            T: in_test_a("if sys.platform == 'win32':", "    pytest.skip('no fork')")
            + "\n\ndef test_new():\n    assert helper() == 41\n"
        },
    ),
    (
        "skip-reason-text-changed",
        {T: in_test_a("if sys.platform == 'win32':", "    pytest.skip('no fork')")},
        {T: in_test_a("if sys.platform == 'win32':", "    pytest.skip('Windows has no fork(); see #12')")},
    ),
    (
        "condition-reformatted",
        {T: in_test_a("if sys.platform=='win32' and not os.environ.get( 'X' ):", "    pytest.skip('no fork')")},
        {
            T: in_test_a(
                "if (",
                '    sys.platform == "win32"',
                '    and not os.environ.get("X")',
                "):  # a comment",
                "    pytest.skip(",
                "        'no fork'",
                "    )",
            )
        },
    ),
    (
        "importorskip-kept",
        {T: BASE + "\nnp = pytest.importorskip('numpy')\n"},
        {T: BASE + "\nnp = pytest.importorskip('numpy', reason='optional')\n\n\ndef test_more():\n    assert np\n"},
    ),
    (
        "trailing-return-value-in-a-test-without-checks",
        {T: BASE},
        {T: BASE + "\n\ndef test_smoke():\n    result = helper()\n    return result\n"},
    ),
    (
        "returns-in-helpers-and-fixtures",
        {T: BASE},
        {
            T: BASE
            + "\n\n@pytest.fixture\ndef db():\n    return {}\n\n\n@pytest.fixture\ndef test_data():\n    return [1, 2]\n\n\ndef make():\n    return 1\n"
        },
    ),
    (
        "return-after-the-first-assert",
        {T: BASE},
        {
            T: BASE
            + "\n\ndef test_early_exit_after_check():\n    assert helper() == 41\n    if helper():\n        return\n    assert False\n"
        },
    ),
    (
        "return-inside-pytest-raises-block",
        {T: BASE},
        {T: in_test_a("with pytest.raises(ZeroDivisionError):", "    return 1 / 0")},
    ),
    (
        "with-block-checks-before-returning",
        {T: BASE},
        {T: in_test_a("with open(os.devnull) as f:", "    assert f.read() == ''", "    return")},
    ),
    ("return-after-a-check-call", {T: BASE}, {T: in_test_c("self.assertTrue(helper())", "if helper():", "    return")}),
    (
        "return-inside-nested-function",
        {T: BASE},
        {T: BASE + "\n\ndef test_nested():\n    def inner():\n        return 1\n\n    assert inner() == 1\n"},
    ),
    (
        "skip-in-strings-comments-docstrings",
        {T: BASE},
        {
            T: in_test_a(
                '"""Never pytest.skip() this."""',
                "# pytest.skip('x') would hide it",
                "assert 'pytest.skip()' != 'raise SkipTest'",
            )
        },
    ),
    (
        "unrelated-skip-and-exit-attributes",
        {T: BASE},
        {
            T: in_test_a(
                "rows = reader.skip(3)",
                "parser.exit = None",
                "df.xfail = 1",
                "assert rows is not None",
                imports="reader = parser = df = None\n",
            )
        },
    ),
    (
        "runtime-skip-moved-to-another-file",
        {
            T: BASE + "\n\ndef test_moved():\n    pytest.importorskip('numpy')\n    assert 1\n",
            "tests/test_other.py": "import pytest\n",
        },
        {
            T: BASE,
            "tests/test_other.py": "import pytest\n\n\ndef test_moved():\n    pytest.importorskip('numpy')\n    assert 1\n",
        },
    ),
    (
        "file-renamed-with-its-early-return",
        {T: BASE + "\n\ndef test_wip():\n    return\n"},
        {T: None, "tests/test_renamed.py": BASE + "\n\ndef test_wip():\n    return\n"},
    ),
    (
        "test-with-runtime-skip-renamed",
        {T: in_test_a("if sys.platform == 'win32':", "    pytest.skip('no fork')")},
        {
            T: in_test_a("if sys.platform == 'win32':", "    pytest.skip('no fork')").replace(
                "def test_a", "def test_a_renamed"
            )
        },
    ),
    ("runtime-skip-removed", {T: in_test_a("pytest.skip('x')")}, {T: BASE}),
    ("sys-exit-in-a-script-helper", {T: BASE}, {T: BASE + "\n\ndef main():\n    sys.exit(0)\n"}),
]


@pytest.mark.parametrize(("before", "after"), [c[1:] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_honest_change_is_accepted(before: dict[str, str], after: dict[str, str | None]) -> None:
    code, out, err, _ = memory_check(check, before, after)
    assert (code, out, err) == (0, "", "")


CONTRACT = """\
version: 1
freezes:
  - id: tests/test_mod.py::test_a
    owner: alice
    reason: "flaky on CI, tracked in #7"
    expires: "2026-12-05T00:00:00Z"
    remaining_reruns: 1
"""


@pytest.mark.parametrize(("now", "expected_code"), [("2026-12-02T12:00:00Z", 0), ("2026-12-05T00:00:01Z", 1)])
def test_freeze_ledger_entry_allows_a_runtime_skip_until_it_expires(repo: Repo, now: str, expected_code: int) -> None:
    base = {T: BASE, "tests/agent_contract.yaml": CONTRACT}
    code, out, _, _ = repo.judge_change(main, base, {T: in_test_a("pytest.skip('#7')")}, "--now", now)
    assert code == expected_code, out


def test_all_reports_every_occurrence(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write(T, in_test_a("if sys.platform == 'win32':", "    pytest.skip('no fork')"))
    repo.write("tests/test_two.py", "def test_x():\n    return\n")
    repo.write("tests/test_clean.py", "def test_ok():\n    assert 1\n")
    repo.commit()
    code = repo.run(main, "--all", T, "tests/test_two.py", "tests/test_clean.py")
    assert code == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{T}:14:9: OG201 new runtime skip `pytest.skip('no fork')` in test_a when `sys.platform == 'win32'`",
        "tests/test_two.py:2:5: OG202 new early return in test_x before its first check",
    ]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"def test_a():\n    return(\n", ":2:11: OG001 could not parse"),
        (b"def test_a():\n    x = 1\n  assert x\n", ":3:11: OG001 could not parse: unindent"),
        (b"# -*- coding: latin-1 -*-\ndef test_a():\n    assert '\xe9'\n", None),  # a declared encoding is honoured
        (b"def test_a():\n    assert '\xe9'\n", ":2:13: OG001 not valid UTF-8"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", ":1:1: OG001 not a text file"),
        (b"", None),
    ],
    ids=["syntax-error", "bad-indent", "declared-latin1", "not-utf8", "binary", "empty"],
)
def test_bad_input(repo: Repo, capsys: pytest.CaptureFixture[str], data: bytes, expected: str | None) -> None:
    repo.write(T, BASE)
    repo.commit()
    repo.write(T, data)
    repo.stage()
    code = repo.run(main, T)
    out = capsys.readouterr().out
    if expected is None:
        assert (code, out) == (0, "")
    else:
        assert code == 1 and out.startswith(T + expected) and out.count("\n") == 1, out


def test_first_commit_everything_is_new(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write(T, in_test_a("pytest.skip()"))
    repo.stage()
    assert repo.run(main, T) == 1
    assert "OG201 new runtime skip `pytest.skip()` in test_a" in capsys.readouterr().out


def test_missing_base_is_one_line_exit_2(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write(T, BASE)
    repo.commit()
    assert repo.run(main, "--base", "origin/gone", T) == 2
    captured = capsys.readouterr()
    assert (
        captured.out == ""
        and captured.err
        == "oracle-guard: error: base revision 'origin/gone' does not exist (fetch it: `git fetch origin gone:refs/remotes/origin/gone`; or check the name)\n"
    )
