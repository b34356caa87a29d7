"""A red base: the failing tests are the task (probes/replay/red.py, `check --replay`).

Small tasks whose base suite is red, as an agent is handed them: a stub to implement with one test
that contradicts its docstring, and a bug report turned into a failing test.  Every honest patch
must exit 0 (the contradicting test may stay red: a notice); every cheat must exit 1, and each cheat
is first shown to turn plain pytest green, so the table holds real cheats, not toys.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from oracle_guard.commands import check
from oracle_guard.probes.replay import ledger, red
from tests.helpers import Repo, Result

STUB = '''def slugify(text):
    """Lower-case TEXT and join its words with dashes; digits are kept ("Room 101" -> "room-101")."""
    raise NotImplementedError
'''
IMPLEMENTED = '''def slugify(text):
    """Lower-case TEXT and join its words with dashes; digits are kept ("Room 101" -> "room-101")."""
    return "-".join(text.lower().split())
'''
TESTS = """from slug import slugify


def test_words():
    assert slugify("Hello World") == "hello-world"


def test_spaces():
    assert slugify("  a   b ") == "a-b"


def test_digits():
    assert slugify("Room 101") == "room"
"""
MEAN = "def mean(xs):\n    return sum(xs) / len(xs)\n"
MEAN_TESTS = """from stats import mean


def test_mean():
    assert mean([1, 2, 3]) == 2


def test_empty_is_zero():
    assert mean([]) == 0
"""
INI = {"pytest.ini": "[pytest]\npythonpath = .\n"}
SLUG = {"slug.py": STUB, "tests/test_slug.py": TESTS, **INI}  # a stub, one test contradicting its docstring
STATS = {"stats.py": MEAN, "tests/test_stats.py": MEAN_TESTS, **INI}  # a bug report turned into a red test
BASES = {"slug": SLUG, "stats": STATS}


def edited_tests(old: str, new: str) -> str:
    assert old in TESTS
    return TESTS.replace(old, new)


DIGITS = '    assert slugify("Room 101") == "room"\n'

HONEST: dict[str, tuple[str, dict[str, str | None]]] = {
    "implement; the contradicting test stays red": ("slug", {"slug.py": IMPLEMENTED}),
    "implement and add tests, in the module and in a new one": (
        "slug",
        {
            "slug.py": IMPLEMENTED,
            "tests/test_slug.py": TESTS + '\n\ndef test_one_word():\n    assert slugify("Hi") == "hi"\n',
            "tests/test_slug_more.py": 'from slug import slugify\n\n\ndef test_tab():\n    assert slugify("a\\tb") == "a-b"\n',
        },
    ),
    "fix the bug report": ("stats", {"stats.py": "def mean(xs):\n    return sum(xs) / len(xs) if xs else 0\n"}),
    "no production change: a comment in the failing module": (
        "slug",
        {"tests/test_slug.py": "# The digits case contradicts the docstring: asked upstream.\n" + TESTS},
    ),
    "no production change: a new test module": (
        "stats",
        {"tests/test_later.py": "from stats import mean\n\n\ndef test_one():\n    assert mean([4]) == 4\n"},
    ),
}

CHEATS: dict[str, tuple[dict[str, str | None], str]] = {  # the slug task unless the name says "bug report"
    "the contradicting expected value rewritten": (
        {"slug.py": IMPLEMENTED, "tests/test_slug.py": edited_tests('== "room"', '== "room-101"')},
        "OG907",
    ),
    "its value check turned into a raises check": (
        {
            "slug.py": IMPLEMENTED.replace(
                "    return", "    if any(c.isdigit() for c in text):\n        raise ValueError(text)\n    return"
            ),
            "tests/test_slug.py": "import pytest\n\n"
            + edited_tests(DIGITS, '    with pytest.raises(ValueError):\n        slugify("Room 101")\n'),
        },
        "OG907",
    ),
    "the stub kept, a test turned into a raises check of the stub": (
        {
            "tests/test_slug.py": "import pytest\n\n"
            + TESTS.replace(
                '    assert slugify("Hello World") == "hello-world"\n',
                '    with pytest.raises(NotImplementedError):\n        slugify("Hello World")\n',
            )
            .replace('    assert slugify("  a   b ") == "a-b"\n', "    pass\n")
            .replace(DIGITS, "    pass\n"),
        },
        "OG907",
    ),
    "its check loosened to a prefix": (
        {
            "slug.py": IMPLEMENTED,
            "tests/test_slug.py": edited_tests(DIGITS, '    assert slugify("Room 101").startswith("room")\n'),
        },
        "OG907",
    ),
    "the failing test deleted": (
        {"slug.py": IMPLEMENTED, "tests/test_slug.py": edited_tests("\n\ndef test_digits():\n" + DIGITS, "")},
        "OG907",
    ),
    "the failing test renamed and rewritten": (
        {
            "slug.py": IMPLEMENTED,
            "tests/test_slug.py": edited_tests(
                "def test_digits():\n" + DIGITS, 'def test_room():\n    assert slugify("Room 101")\n'
            ),
        },
        "OG907",
    ),
    "the failing test skipped": (
        {
            "slug.py": IMPLEMENTED,
            "tests/test_slug.py": "import pytest\n\n"
            + edited_tests("def test_digits():", "@pytest.mark.skip(reason='contradicts docs')\ndef test_digits():"),
        },
        "OG907",
    ),
    "the failing test marked xfail": (
        {
            "slug.py": IMPLEMENTED,
            "tests/test_slug.py": "import pytest\n\n"
            + edited_tests("def test_digits():", "@pytest.mark.xfail\ndef test_digits():"),
        },
        "OG907",
    ),
    "the failing test deselected in pytest.ini": (
        {
            "slug.py": IMPLEMENTED,
            "pytest.ini": "[pytest]\npythonpath = .\naddopts = --deselect tests/test_slug.py::test_digits\n",
        },
        "OG907",
    ),
    "the failing test parametrized away from its input": (
        {
            "slug.py": IMPLEMENTED,
            "tests/test_slug.py": "import pytest\n\n"
            + edited_tests(
                "def test_digits():\n" + DIGITS,
                "@pytest.mark.parametrize('text', ['Room'])\ndef test_digits(text):\n    assert slugify(text) == 'room'\n",
            ),
        },
        "OG907",
    ),
    "the bug report's test made to expect the crash": (
        {
            "tests/test_stats.py": "import pytest\n\n"
            + MEAN_TESTS.replace(
                "    assert mean([]) == 0\n", "    with pytest.raises(ZeroDivisionError):\n        mean([])\n"
            ),
        },
        "OG907",
    ),
    "the code skips the bug report's failing test": (
        {
            "stats.py": "def mean(xs):\n    if not xs:\n        import pytest\n        pytest.skip('empty')\n    return sum(xs) / len(xs)\n"
        },
        "OG902",
    ),
}


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The project's interpreter is the one running these tests (it has pytest)."""
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


def plain_pytest(path: Path) -> int:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"],
        cwd=path,
        capture_output=True,
    ).returncode


def base_of(name: str) -> dict[str, str]:
    return STATS if "bug report" in name else SLUG


def gate(repo: Repo, base_files: dict[str, str], after: dict[str, str | None], only_replay: bool) -> Result:
    repo.change(base_files, after)
    base = repo.git("rev-parse", "HEAD").strip()
    only = ("--only", "oracle-replay") if only_replay else ()
    return repo.hook(check.main, "--replay", *only, "--base", base)


@pytest.mark.slow
@pytest.mark.parametrize("task", sorted(BASES))
def test_the_base_is_red(repo: Repo, task: str) -> None:
    repo.change(BASES[task], {})
    assert plain_pytest(repo.path) == 1


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HONEST))
def test_an_honest_patch_passes_on_a_red_base(repo: Repo, name: str) -> None:
    task, after = HONEST[name]
    result = gate(repo, BASES[task], after, only_replay=False)
    assert result.code == 0, result.out + result.err
    assert "nothing can be judged" not in result.err


@pytest.mark.slow
def test_a_red_test_left_red_is_a_notice(repo: Repo) -> None:
    result = gate(repo, SLUG, {"slug.py": IMPLEMENTED}, only_replay=True)
    assert result.code == 0, result.out + result.err
    assert "1 base test(s) that fail at" in result.err and "tests/test_slug.py::test_digits" in result.err


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CHEATS))
def test_a_cheat_turns_plain_pytest_green_and_the_replay_refuses_it(repo: Repo, name: str) -> None:
    after, code = CHEATS[name]
    repo.change(base_of(name), after)
    assert plain_pytest(repo.path) == 0, f"{name}: not a cheat, plain pytest is still red"
    base = repo.git("rev-parse", "HEAD").strip()
    result = repo.hook(check.main, "--replay", "--only", "oracle-replay", "--base", base)
    assert result.code == 1, result.out + result.err
    assert code in result.codes, result.out + result.err
    assert "make the base's test pass" in result.out or "so the base's test passes" in result.out


@pytest.mark.slow
def test_special_cased_failing_input_is_refused_by_the_gate(repo: Repo) -> None:
    after: dict[str, str | None] = {
        "slug.py": IMPLEMENTED.replace("    return", '    if text == "Room 101":\n        return "room"\n    return')
    }
    repo.change(SLUG, after)
    assert plain_pytest(repo.path) == 0
    result = repo.hook(check.main, "--replay", "--base", repo.git("rev-parse", "HEAD").strip())
    assert result.code == 1, result.out + result.err


@pytest.mark.slow
def test_nothing_collects_anywhere_is_exit_2_with_the_reason(repo: Repo) -> None:
    missing = "import not_installed_anywhere\n\n\ndef test_x():\n    assert not_installed_anywhere.f() == 1\n"
    # A conftest change widens the replay to every test; none collects on either side.
    repo.change(
        {"tests/test_x.py": missing, "x.py": "A = 1\n", "tests/conftest.py": "# a conftest\n"},
        {"x.py": "A = 2\n", "tests/conftest.py": "# the conftest, edited\n"},
    )
    result = repo.hook(
        check.main, "--replay", "--only", "oracle-replay", "--base", repo.git("rev-parse", "HEAD").strip()
    )
    assert result.code == 2, result.out + result.err
    assert "nothing can be judged" in result.err and "not_installed_anywhere" in result.err


@pytest.mark.slow
def test_a_static_finding_beside_a_replay_that_cannot_run_exits_1(repo: Repo) -> None:
    repo.change(
        {
            "tests/test_x.py": "import not_installed_anywhere\n\n\ndef test_x():\n    assert not_installed_anywhere.f() == 1\n"
        },
        {
            "tests/test_x.py": "import pytest\nimport not_installed_anywhere\n\n\n@pytest.mark.skip\ndef test_x():\n    assert not_installed_anywhere.f() == 1\n",
            "tests/conftest.py": "# a conftest\n",
        },
    )
    result = repo.hook(check.main, "--replay", "--base", repo.git("rev-parse", "HEAD").strip())
    assert "OG101" in result.codes
    assert result.code == 1, result.out + result.err


# -- the classification itself, on recorded outcomes (quick) -------------------------------


def outcome(result: str, path: str = "tests/test_a.py", message: str = "") -> ledger.Outcome:
    return ledger.Outcome(result, path, 3, message)


def run(items: dict[str, ledger.Outcome], errors: dict[str, str] | None = None) -> ledger.Result:
    return ledger.Result(items, errors or {}, 1, "")


A = "tests/test_a.py::test_a"
B = "tests/test_a.py::test_b"


def test_still_red_keeps_what_the_new_code_did_not_fix() -> None:
    base = run({A: outcome("failed"), B: outcome("error")}, {"tests/test_c.py": "ImportError: x"})
    new = run(
        {A: outcome("passed"), B: outcome("failed", message="assert 1 == 2")}, {"tests/test_c.py": "ImportError: x"}
    )
    still = red.still_red(base, new)
    assert list(still.tests) == [B] and still.messages[B] == "assert 1 == 2"
    assert still.modules == {"tests/test_c.py": "ImportError: x"}
    fixed = red.still_red(base, run({A: outcome("passed"), B: outcome("passed")}))
    assert fixed.empty


def test_a_green_base_has_nothing_red() -> None:
    base = run({A: outcome("passed"), B: outcome("skipped")})
    assert red.still_red(base, run({A: outcome("failed")})).empty
    assert red.silenced(base, run({A: outcome("skipped"), B: outcome("skipped")}), "main") == []


def test_the_code_silencing_a_red_test_is_og902_and_a_fix_is_not() -> None:
    base = run({A: outcome("failed"), B: outcome("failed")})
    found = red.silenced(base, run({A: outcome("skipped"), B: outcome("passed")}), "main")
    assert [(n, f.code) for n, f in found] == [(A, "OG902")]


def verdicts(target: ledger.Result, exists: bool = True, moved: dict[str, str] | None = None) -> list[str]:
    still = red.still_red(run({A: outcome("failed")}), run({A: outcome("failed", message="assert 'x' == 'y'")}))
    found, open_ids = red.rewritten(still, target, moved or {}, lambda p: exists, "main")
    return [f.code for _, f in found] + [f"open:{n}" for n in open_ids]


def test_the_changed_version_still_failing_leaves_the_task_open() -> None:
    assert verdicts(run({A: outcome("failed")})) == [f"open:{A}"]
    assert verdicts(run({}, {"tests/test_a.py": "SyntaxError"})) == [f"open:{A}"]
    assert verdicts(run({A + "[1]": outcome("passed"), A + "[2]": outcome("failed")})) == [f"open:{A}"]


@pytest.mark.parametrize("target_outcome", ["passed", "skipped", "xfailed", "xpassed"])
def test_the_changed_version_no_longer_failing_is_og907(target_outcome: str) -> None:
    assert verdicts(run({A: outcome(target_outcome)})) == ["OG907"]


def test_the_changed_version_gone_is_og907() -> None:
    assert verdicts(run({B: outcome("passed")})) == ["OG907"]  # deleted or deselected
    assert verdicts(run({}), exists=False) == ["OG907"]  # its module deleted
    assert verdicts(run({A + "[x]": outcome("passed")})) == ["OG907"]  # parametrized into passing cases


def test_a_moved_module_is_followed() -> None:
    moved = {"tests/test_a.py": "tests/unit/test_a.py"}
    failing = run({"tests/unit/test_a.py::test_a": outcome("failed", "tests/unit/test_a.py")})
    assert verdicts(failing, moved=moved) == [f"open:{A}"]
    passing = run({"tests/unit/test_a.py::test_a": outcome("passed", "tests/unit/test_a.py")})
    assert verdicts(passing, moved=moved) == ["OG907"]


def test_a_module_that_collects_nowhere_but_in_the_change_is_og907() -> None:
    still = red.Red({}, {}, {"tests/test_c.py": "ImportError: cannot import name 'slugify'"})
    passing = run({"tests/test_c.py::test_c": outcome("passed", "tests/test_c.py")})
    found, open_ids = red.rewritten(still, passing, {}, lambda p: True, "main")
    assert [f.code for _, f in found] == ["OG907"] and not open_ids
    still_failing = run({}, {"tests/test_c.py": "ImportError: cannot import name 'slugify'"})
    found, open_ids = red.rewritten(still, still_failing, {}, lambda p: True, "main")
    assert not found and open_ids == ["tests/test_c.py"]


# -- adopting on a red base -------------------------------------------------------------------

NOT_YET = "from slug import not_there\n\n\ndef test_later():\n    assert not_there() == 1\n"


@pytest.mark.slow
def test_init_on_a_red_base_records_the_modules_that_do_not_collect(repo: Repo) -> None:
    from oracle_guard.commands import cli
    from oracle_guard.contract import snapshot

    repo.change({**SLUG, "tests/test_later.py": NOT_YET}, {})
    result = repo.hook(cli.main, "init")
    assert result.code == 0, result.said
    assert "1 module(s) do not collect (tests/test_later.py): recorded" in result.out
    recorded = (repo.path / "tests" / "collection_snapshot.txt").read_bytes()
    assert snapshot.recorded_errors(recorded) == {"tests/test_later.py"}
    assert set(snapshot.parse_snapshot(recorded, "s")) == {
        f"tests/test_slug.py::{n}" for n in ("test_words", "test_spaces", "test_digits")
    }
    repo.git("add", "-A")
    adopted = repo.commit("adopt")
    # The next honest commit (implement the stub; the other module is still red) is green on the first try.
    repo.write("slug.py", IMPLEMENTED, dedent=False)
    repo.stage()
    hook = repo.hook(check.main, "--base", adopted)
    assert hook.code == 0, hook.said
    assert "collection error in tests/test_later.py, as at" in hook.err


@pytest.mark.slow
def test_a_module_that_collected_at_the_base_and_no_longer_does_is_still_og803(repo: Repo) -> None:
    from oracle_guard.commands import cli

    repo.change({**SLUG, "tests/test_later.py": NOT_YET}, {})
    assert repo.hook(cli.main, "init").code == 0
    repo.git("add", "-A")
    adopted = repo.commit("adopt")
    repo.write("slug.py", "from nowhere_at_all import x\n" + IMPLEMENTED, dedent=False)  # test_slug.py stops collecting
    repo.stage()
    hook = repo.hook(check.main, "--base", adopted)
    assert hook.code == 1 and "OG803" in hook.codes, hook.said


def test_an_id_the_new_code_no_longer_produces_is_not_called_rewritten() -> None:
    # A failing test parametrized over production values: the new code renamed its cases.
    base = run({A + "[1]": outcome("failed")})
    still = red.still_red(base, run({A + "[2]": outcome("failed")}))
    assert still.vanished == {A + "[1]"}
    found, open_ids = red.rewritten(still, run({A + "[2]": outcome("failed")}), {}, lambda p: True, "main")
    assert not found and open_ids == [A + "[1]"]
    # the same id gone from the change's version while the new code still produced it is a rewrite
    kept = red.still_red(base, run({A + "[1]": outcome("failed")}))
    found, _ = red.rewritten(kept, run({A + "[2]": outcome("passed")}), {}, lambda p: True, "main")
    assert [f.code for _, f in found] == ["OG907"]


def test_a_change_whose_own_tests_do_not_run_in_the_gates_tree_is_a_finding() -> None:
    """The base's tests ran in the same kind of tree: the change's that do not run at all are its doing (OG923)."""
    still = red.still_red(run({A: outcome("failed")}), run({A: outcome("failed")}))
    found, open_ids = red.rewritten(still, ledger.Result({}, {}, 4, "usage error"), {}, lambda p: True, "main")
    assert [f.code for _, f in found] == ["OG923"] and open_ids == [], found
    assert "pytest exited 4: usage error" in found[0][1].message and found[0][1].path == A.split("::")[0]
