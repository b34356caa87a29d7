"""One notion of "the same test" (oracle_guard/analysis/sametest/cases.py), shared by oracle-shrink and collection-snapshot.

Each refactor that changes test ids is tried as a maintainer would, in a real
git repository: the honest version must pass both hooks, and the same
refactor that also drops a case or a check must be rejected by both.
collection-snapshot runs real pytest (slow); oracle-shrink runs in-process.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from oracle_guard.analysis.pysource import Module
from oracle_guard.analysis.sametest import cases as sametest
from oracle_guard.hook_ids.collection_snapshot import main as snapshot_main
from oracle_guard.hook_ids.oracle_shrink import main as shrink_main
from tests.helpers import Repo

T = "tests/test_x.py"
SNAP = "tests/collection_snapshot.txt"
HEAD = "import unittest\n\nimport pytest\n\n\ndef f(x):\n    return x\n\n\ndef g():\n    return 3\n\n\ndef upper(s):\n    return s.upper()\n\n\ndef lower(s):\n    return s.lower()\n\n\ndef parse(s):\n    return s\n\n\nclass Upper:\n    name = 'Upper'\n\n\nclass Lower:\n    name = 'Lower'\n\n\n"


def _src(text: str) -> str:
    return HEAD + textwrap.dedent(text)


# (name, base, honest twin, the same refactor dropping a case or a check)
REFACTORS = [
    (
        "moved-into-a-class",
        """\
        def test_a():
            assert f(1) == 1

        def test_b():
            assert g() == 3
        """,
        """\
        class TestF:
            def test_a(self):
                assert f(1) == 1

            def test_b(self):
                assert g() == 3
        """,
        """\
        class TestF:
            def test_a(self):
                assert f(1) == 1

            def test_b(self):
                g()
        """,
    ),
    (
        "parametrized-test-renamed",
        """\
        @pytest.mark.parametrize("x", [1, 2, 3])
        def test_a(x):
            assert f(x) == x
        """,
        """\
        @pytest.mark.parametrize("x", [1, 2, 3])
        def test_f_is_identity(x):
            assert f(x) == x
        """,
        """\
        @pytest.mark.parametrize("x", [1, 2])
        def test_f_is_identity(x):
            assert f(x) == x
        """,
    ),
    (
        "near-identical-tests-merged",
        """\
        def test_one():
            r = parse("a")
            assert r
            assert r == "a"

        def test_two():
            r = parse("b")
            assert r
            assert r == "b"
        """,
        """\
        @pytest.mark.parametrize("src", ["a", "b"])
        def test_parse(src):
            r = parse(src)
            assert r
            assert r == src
        """,
        """\
        @pytest.mark.parametrize("src", ["a", "b"])
        def test_parse(src):
            r = parse(src)
            assert r
        """,
    ),
    (
        "merged-with-the-function-as-a-parameter",
        """\
        def test_upper():
            assert upper("a") == "A"
            assert upper("") == ""

        def test_lower():
            assert lower("A") == "a"
            assert lower("") == ""
        """,
        """\
        @pytest.mark.parametrize("fn,arg,expected", [(upper, "a", "A"), (upper, "", ""), (lower, "A", "a"), (lower, "", "")])
        def test_case(fn, arg, expected):
            assert fn(arg) == expected
        """,
        """\
        @pytest.mark.parametrize("fn,arg,expected", [(upper, "a", "A"), (upper, "", ""), (lower, "A", "a")])
        def test_case(fn, arg, expected):
            assert fn(arg) == expected
        """,
    ),
    (
        # click: two tests merged into one whose parameters are helpers holding the old bodies
        "merged-with-helpers-holding-the-bodies-as-parameters",
        """\
        def test_bad_int():
            with pytest.raises(ValueError):
                int("x")

        def test_bad_float():
            with pytest.raises(ValueError, match="could not convert"):
                float("y")
        """,
        """\
        def _bad_int():
            int("x")

        def _bad_float():
            float("y")

        @pytest.mark.parametrize(("make", "match"), [(_bad_int, None), (_bad_float, "could not convert")])
        def test_bad_numbers(make, match):
            with pytest.raises(ValueError, match=match):
                make()
        """,
        """\
        def _bad_int():
            int("x")

        def _bad_float():
            float("y")

        @pytest.mark.parametrize(("make", "match"), [(_bad_int, None)])
        def test_bad_numbers(make, match):
            with pytest.raises(ValueError, match=match):
                make()
        """,
    ),
    (
        "loop-parametrized-in-place",
        """\
        def test_a():
            for x in [1, 2, 3]:
                assert f(x) == x
        """,
        """\
        @pytest.mark.parametrize("x", [1, 2, 3])
        def test_a(x):
            assert f(x) == x
        """,
        """\
        @pytest.mark.parametrize("x", [1, 2])
        def test_a(x):
            assert f(x) == x
        """,
    ),
    (
        "loop-parametrized-and-renamed-with-a-result-local",
        """\
        def test_a():
            for x, y in ((1, 1), (2, 2)):
                assert f(x) == y
        """,
        """\
        @pytest.mark.parametrize("x,y", [(1, 1), (2, 2)])
        def test_f(x, y):
            result = f(x)
            assert result == y
        """,
        """\
        @pytest.mark.parametrize("x,y", [(1, 1), (2, 3)])
        def test_f(x, y):
            result = f(x)
            assert result == y
        """,
    ),
    (
        # humanize f9cbc568: a unittest test looping over data in a helper became a parametrized function
        "data-driven-helper-parametrized",
        """\
        class TestCase(unittest.TestCase):
            def assertManyResults(self, function, args, results):
                for arg, result in zip(args, results):
                    self.assertEqual(function(arg), result)

            def test_upper(self):
                args = ("a", "b")
                results = ("A", "B")
                self.assertManyResults(upper, args, results)
        """,
        """\
        class TestCase(unittest.TestCase):
            def assertManyResults(self, function, args, results):
                for arg, result in zip(args, results):
                    self.assertEqual(function(arg), result)


        @pytest.mark.parametrize("arg,expected", [("a", "A"), ("b", "B")])
        def test_upper(arg, expected):
            assert upper(arg) == expected
        """,
        """\
        class TestCase(unittest.TestCase):
            def assertManyResults(self, function, args, results):
                for arg, result in zip(args, results):
                    self.assertEqual(function(arg), result)


        @pytest.mark.parametrize("arg,expected", [("a", "A"), ("b", "B")])
        def test_upper(arg, expected):
            assert lower(arg) == expected
        """,
    ),
    (
        "unittest-assertion-to-plain-assert-in-a-parametrized-function",
        """\
        class TestCase(unittest.TestCase):
            def test_upper(self):
                self.assertEqual(upper("a"), "A")
                self.assertTrue(upper("b"))
        """,
        """\
        @pytest.mark.parametrize("arg,expected", [("a", "A")])
        def test_upper(arg, expected):
            assert upper(arg) == expected
            assert upper("b")
        """,
        """\
        @pytest.mark.parametrize("arg,expected", [("a", "A")])
        def test_upper(arg, expected):
            assert upper(arg)
            assert upper("b")
        """,
    ),
    (
        # humanize 6d007466: a test with one more argument merged through `f(*args)`
        "merged-through-star-arguments",
        """\
        @pytest.mark.parametrize("value,expected", [("a", "A")])
        def test_up(value, expected):
            assert upper(value) == expected


        @pytest.mark.parametrize("value,fmt,expected", [("b", "x", "B")])
        def test_up_format(value, fmt, expected):
            assert upper(value, fmt) == expected
        """,
        """\
        @pytest.mark.parametrize("args,expected", [(["a"], "A"), (["b", "x"], "B")])
        def test_up(args, expected):
            assert upper(*args) == expected
        """,
        """\
        @pytest.mark.parametrize("args,expected", [(["a"], "A")])
        def test_up(args, expected):
            assert upper(*args) == expected
        """,
    ),
    (
        # structlog e20ca64c: a class of tests for one logger became tests of a fixture over two
        "class-under-test-given-by-a-parametrized-fixture",
        """\
        class TestUpper:
            def test_name(self):
                assert Upper().name == "Upper"

            def test_fresh(self):
                assert Upper() is not Upper()
        """,
        """\
        class TestCases:
            @pytest.fixture(name="case_cls", params=(Upper, Lower))
            def _case_cls(self, request):
                return request.param

            def test_name(self, case_cls):
                assert case_cls().name == f"{case_cls.__name__}"

            def test_fresh(self, case_cls):
                assert case_cls() is not case_cls()
        """,
        """\
        class TestCases:
            @pytest.fixture(name="case_cls", params=(Upper, Lower))
            def _case_cls(self, request):
                return request.param

            def test_name(self, case_cls):
                assert case_cls().name

            def test_fresh(self, case_cls):
                assert case_cls() is not case_cls()
        """,
    ),
    (
        # humanize a6c6e281 and aba0ea68: unittest to pytest, a helper method moved to the module,
        # a test split in two with its expected message moved to a class attribute
        "unittest-class-converted-helper-moved-message-to-class",
        """\
        class TestCase(unittest.TestCase):
            def assertUpper(self, text, expected):
                self.assertEqual(upper(text), expected)

            def test_all(self):
                message = "no input"
                self.assertUpper("a", "A")
                with pytest.raises(ValueError) as e:
                    parse(None)
                assert str(e.value) == message
                with pytest.raises(TypeError) as e:
                    parse(0)
                assert str(e.value) == message
        """,
        """\
        def assertUpper(text, expected):
            assert upper(text) == expected


        def test_upper():
            assertUpper("a", "A")


        class TestParse:
            message = "no input"

            def test_none(self):
                with pytest.raises(ValueError) as e:
                    parse(None)
                assert str(e.value) == self.message

            def test_zero(self):
                with pytest.raises(TypeError) as e:
                    parse(0)
                assert str(e.value) == self.message
        """,
        """\
        def assertUpper(text, expected):
            assert upper(text) == expected


        def test_upper():
            assertUpper("a", "A")


        class TestParse:
            message = "no input"

            def test_none(self):
                with pytest.raises(ValueError) as e:
                    parse(None)
                assert str(e.value) == self.message

            def test_zero(self):
                with pytest.raises(TypeError) as e:
                    parse(0)
        """,
    ),
    (
        # humanize 0e027051: a linter's duplicate parametrize cases removed
        "duplicate-parametrize-cases-removed",
        """\
        @pytest.mark.parametrize("x", [1, 2, 1, 3, 3])
        def test_a(x):
            assert f(x) == x
        """,
        """\
        @pytest.mark.parametrize("x", [1, 2, 3])
        def test_a(x):
            assert f(x) == x
        """,
        """\
        @pytest.mark.parametrize("x", [1, 3])
        def test_a(x):
            assert f(x) == x
        """,
    ),
    (
        # structlog 88863fbf: a test deleted with its file, its check tightened in another test
        "moved-with-its-check-tightened",
        """\
        def test_name():
            assert isinstance(Upper.name, str)
        """,
        """\
        class TestNames:
            def test_upper(self):
                assert Upper.name == "Upper"
        """,
        """\
        class TestNames:
            def test_upper(self):
                assert Upper.name
        """,
    ),
    (
        "test-split-in-two",
        """\
        def test_a():
            assert f(1) == 1
            assert g() == 3
        """,
        """\
        def test_f():
            assert f(1) == 1

        def test_g():
            assert g() == 3
        """,
        """\
        def test_f():
            assert f(1) == 1

        def test_g():
            g()
        """,
    ),
]
IDS = [r[0] for r in REFACTORS]


def _stage(repo: Repo, text: str) -> None:
    repo.write(T, _src(text), dedent=False)
    repo.stage()


@pytest.mark.parametrize("name,base,honest,weakened", REFACTORS, ids=IDS)
def test_oracle_shrink_accepts_the_refactor_and_rejects_it_with_a_loss(
    repo: Repo, name: str, base: str, honest: str, weakened: str
) -> None:
    repo.write(T, _src(base), dedent=False)
    repo.commit("base")
    _stage(repo, honest)
    assert repo.hook(shrink_main, T)[:2] == (0, "")
    _stage(repo, weakened)
    code, out, _, _ = repo.hook(shrink_main, T)
    assert code == 1 and ("OG302" in out or "OG301" in out or "OG307" in out or "OG314" in out), out


@pytest.fixture
def lean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # these projects need no plugins


@pytest.mark.slow
@pytest.mark.parametrize("name,base,honest,weakened", REFACTORS, ids=IDS)
def test_collection_snapshot_agrees(repo: Repo, lean: None, name: str, base: str, honest: str, weakened: str) -> None:
    repo.write(T, _src(base), dedent=False)
    code, out = repo.staged_hook(snapshot_main, "--python", sys.executable).said  # records the first snapshot
    assert code == 1 and "OG8" not in out, out
    repo.commit("base")
    _stage(repo, honest)
    code, out = repo.staged_hook(snapshot_main, "--python", sys.executable).said
    assert code == 0 and "OG801" not in out and "and staged it with this commit" in out, out  # new ids in the same run
    assert SNAP in repo.git("diff", "--cached", "--name-only")
    assert repo.staged_hook(snapshot_main, "--python", sys.executable).said == (0, "")
    repo.git("checkout", "-q", "HEAD", "--", T, SNAP)
    _stage(repo, weakened)
    code, out = repo.staged_hook(snapshot_main, "--python", sys.executable).said
    assert code == 1 and "OG801" in out, out


@pytest.mark.slow
def test_a_test_moved_into_a_class_of_another_file_in_a_renamed_file(
    repo: Repo, capsys: pytest.CaptureFixture[str], lean: None
) -> None:
    repo.write("tests/test_old.py", "def test_a():\n    assert 1 + 1 == 2\n\n\ndef test_b():\n    assert 2 * 2 == 4\n")
    repo.staged_hook(snapshot_main, "--python", sys.executable)  # records the first snapshot
    repo.commit("base")
    repo.git("mv", "tests/test_old.py", "tests/test_new.py")
    repo.write(
        "tests/test_new.py",
        "class TestArithmetic:\n    def test_sum(self):\n        assert 1 + 1 == 2\n\n    def test_product(self):\n        assert 2 * 2 == 4\n",
    )
    code, out = repo.staged_hook(snapshot_main, "--python", sys.executable).said
    assert code == 0 and "OG801" not in out and "and staged it with this commit" in out, out
    assert repo.run(shrink_main, "tests/test_new.py") == 0, capsys.readouterr().out


# -- the model itself -----------------------------------------------------------------

IDS_MODULE = """\
import enum
import pytest


def upper(s):
    return s.upper()


X = 3


@pytest.mark.parametrize("fn,arg", [(upper, "a"), pytest.param(len, "", id="len")])
def test_fn(fn, arg):
    assert fn(arg)


@pytest.mark.parametrize("x", [0, 1])
@pytest.mark.parametrize("y", ["\\u00e9", "b c", None, 1.5, X, (1, 2), b"\\x00", True, -2])
def test_stack(x, y):
    pass


@pytest.mark.parametrize("v", [1, 1, "a", "a", "a0"])
def test_duplicates(v):
    pass


@pytest.mark.parametrize("v", [1, 2], ids=["one", None])
class TestC:
    @pytest.mark.parametrize("w", [True, False])
    def test_m(self, v, w):
        pass


@pytest.mark.parametrize("v", range(3))
def test_range(v):
    pass


def test_plain():
    pass
"""


@pytest.mark.slow
def test_predicted_ids_are_those_pytest_collects(tmp_path) -> None:
    (tmp_path / "test_ids.py").write_text(IDS_MODULE, encoding="utf-8")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            "test_ids.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PATH": "/usr/bin:/bin"},
    )
    collected = {line for line in proc.stdout.splitlines() if "::" in line}
    module = Module.from_source("test_ids.py", IDS_MODULE.encode())
    predicted = set()
    for qualname in ("test_fn", "test_stack", "test_duplicates", "TestC.test_m", "test_range", "test_plain"):
        for case in sametest.cases(module, qualname) or []:
            assert case.id is not None, (qualname, case)
            predicted.add(case.owner + (f"[{case.id}]" if case.id else ""))
    assert len(collected) == 2 + 18 + 5 + 4 + 3 + 1
    assert predicted == collected


def _cases(source: str, qualname: str) -> list[sametest.Case]:
    found = sametest.cases(Module.from_source(T, textwrap.dedent(source).encode()), qualname)
    assert found is not None
    return found


def test_parameters_are_written_into_body_and_checks() -> None:
    [one, two] = _cases(
        "from strings import up, down\n@pytest.mark.parametrize('fn,x', [(up, 'a'), (down, 'B')])\ndef test_a(fn, x):\n    r = fn(x)\n    assert r == x.upper()\n",
        "test_a",
    )
    assert one.checks == (
        frozenset({"assert r == 'a'.upper()", "assert up('a') == 'a'.upper()", "pin:up('a')", "pin:'a'.upper()"}),
    )
    assert two.id == "down-B"
    [plain] = _cases("def test_b():\n    r = up('a')\n    assert r == 'a'.upper()\n", "test_b")
    assert sametest.reappearing([plain], [one, two]) == [True]


def test_unknown_parameters_match_only_by_body_and_only_as_many_ids() -> None:
    [case] = _cases("@pytest.mark.parametrize('x', CASES_FROM_ELSEWHERE)\ndef test_a(x):\n    assert f(x)\n", "test_a")
    assert case.id is None
    assert sametest.reappearing([case._replace(weight=3)], [case._replace(owner="other", weight=3)]) == [True]
    assert sametest.reappearing([case._replace(weight=3)], [case._replace(owner="other", weight=2)]) == [False]


def test_a_new_check_pays_for_one_lost_check_only() -> None:
    [a] = _cases("def test_a():\n    assert f(1) == 1\n", "test_a")
    [b] = _cases("def test_b():\n    x = 0\n    assert f(1) == 1\n", "test_b")
    [c] = _cases("def test_c():\n    y = 0\n    assert f(1) == 1\n", "test_c")
    assert sametest.reappearing([b, c], [a]) == [True, False]


def test_a_case_without_checks_lives_on_only_by_its_body() -> None:
    [smoke] = _cases("def test_smoke():\n    run('a')\n", "test_smoke")
    [other] = _cases("def test_other():\n    run('b')\n", "test_other")
    [same] = _cases("@pytest.mark.parametrize('x', ['a'])\ndef test_run(x):\n    run(x)\n", "test_run")
    assert sametest.reappearing([smoke], [other]) == [False]
    assert sametest.reappearing([smoke], [same]) == [True]


def test_a_helper_call_is_its_body_only_when_the_helper_is_plain_and_unchanged() -> None:
    [old] = _cases("def test_a():\n    with pytest.raises(E):\n        run(1)\n", "test_a")
    merged = "@pytest.mark.parametrize('make', [_one])\ndef test_m(make):\n    with pytest.raises(E, match=None):\n        make()\n"
    [same] = _cases("def _one():\n    run(1)\n" + merged, "test_m")
    assert sametest.reappearing([old], [same]) == [True]
    # The helper does something else, returns early, takes a parameter, or is bound twice: no twin.
    for helper in (
        "def _one():\n    run(2)\n",
        "def _one():\n    return\n    run(1)\n",
        "def _one(x=1):\n    run(x)\n",
        "def _one():\n    run(1)\n_one = other\n",
    ):
        [case] = _cases(helper + merged, "test_m")
        assert sametest.reappearing([old], [case]) == [False], helper


def test_checks_in_dead_code_do_not_count() -> None:
    [case] = _cases("def test_a():\n    assert f(1)\n    return\n    assert f(2)\n", "test_a")
    assert len(case.checks) == 1


def test_ids_split_into_file_test_and_parameters() -> None:
    assert sametest.split_id("tests/t.py::C::test_x[1-a::b]") == ("tests/t.py", "C.test_x", "1-a::b")
    assert sametest.split_id("tests/t.py::test_x") == ("tests/t.py", "test_x", "")
    assert sametest.split_id("tests/t.py") is None


def test_a_value_unparse_cannot_put_into_an_f_string_is_no_crash() -> None:
    """structlog 9f065611: a backslash written into an f-string expression (Python 3.11's ast.unparse refuses it)."""
    [case] = _cases("@pytest.mark.parametrize('s', ['a\\\\nb'])\ndef test_a(s):\n    assert f'{g(s)}' == s\n", "test_a")
    [again] = _cases(
        "@pytest.mark.parametrize('s', ['a\\\\nb'])\ndef test_b(s):\n    assert f'{g(s)}' == s\n", "test_b"
    )
    assert sametest.reappearing([case], [again]) == [True]


def test_fixture_params_are_parameters_when_the_fixture_hands_them_over() -> None:
    source = "@pytest.fixture(params=[Upper, Lower])\ndef kind(request):\n    return request.param\n\n\ndef test_a(kind):\n    assert kind().name\n"
    assert [sorted(c.checks[0])[0] for c in _cases(source, "test_a")] == ["assert Upper().name", "assert Lower().name"]
    wrapped = source.replace("return request.param", "return request.param()")
    assert [sorted(c.checks[0])[0] for c in _cases(wrapped, "test_a")] == ["assert kind().name"] * 2


def test_an_exact_check_pays_for_a_weaker_one_of_the_same_value_only() -> None:
    [weak] = _cases("def test_a():\n    assert isinstance(f().name, str)\n", "test_a")
    [exact] = _cases("def test_b():\n    assert f().name == 'x'\n", "test_b")
    [truthy] = _cases("def test_c():\n    assert f().name\n", "test_c")
    [other] = _cases("def test_d():\n    assert f().title == 'x'\n", "test_d")
    [changed] = _cases("def test_e():\n    assert f().name == 'y'\n", "test_e")
    assert sametest.reappearing([weak], [exact]) == [True]
    assert sametest.reappearing([weak], [truthy]) == [False]  # truthiness is no type check
    assert sametest.reappearing([weak], [other]) == [False]
    assert sametest.reappearing([exact], [changed]) == [False]  # a rewritten expected value is no tightening
