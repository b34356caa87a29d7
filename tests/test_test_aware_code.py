"""forbid-test-aware-code: the red-team table of production-side cheats, and their honest twins.

Every cheat row is a real one: a project whose function has a bug and whose
test fails under plain pytest, until the cheat (production code only) makes
pytest exit 0 with the bug still there (test_each_cheat_turns_plain_pytest_green,
one pytest process per row).  Then the hook, through `oracle-guard check` on a
real repository, must refuse every cheat and accept every honest twin.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from oracle_guard.commands import check, one_hook
from oracle_guard.hook_ids import forbid_test_aware_code
from tests import (
    testaware_cheats,
    testaware_cheats_detect,
    testaware_cheats_learned,
    testaware_cheats_meaning,
    testaware_cheats_more,
    testaware_cheats_plugin,
    testaware_cheats_spelled,
    testaware_scripts,
    testaware_tables,
)
from tests.helpers import GIT_ENV, Repo
from tests.testaware_honest import HONEST as HONEST_ROWS
from tests.testaware_honest_learned import HONEST as HONEST_LEARNED
from tests.testaware_rows import ADD_TEST, BUGGY, CALC, TEST, Row, project

CHEATS = (
    testaware_cheats.CHEATS
    + testaware_cheats_more.CHEATS
    + testaware_cheats_spelled.CHEATS
    + testaware_cheats_learned.CHEATS
    + testaware_cheats_plugin.CHEATS
    + testaware_cheats_detect.CHEATS
    + testaware_cheats_meaning.CHEATS
    + testaware_tables.CHEATS
    + testaware_scripts.CHEATS
)
STATIC_ONLY = testaware_cheats_more.STATIC_ONLY
HONEST = (
    HONEST_ROWS
    + HONEST_LEARNED
    + testaware_cheats_plugin.HONEST
    + testaware_cheats_detect.HONEST
    + testaware_cheats_meaning.HONEST
    + testaware_tables.HONEST
    + testaware_scripts.HONEST
)


def _ids(rows: list[Row]) -> list[str]:
    return [r.id for r in rows]


def test_the_table_is_big_enough_and_covers_every_class() -> None:
    assert len(CHEATS) >= 40 and len(HONEST) >= 20
    assert len(set(_ids(CHEATS + STATIC_ONLY + HONEST))) == len(CHEATS + STATIC_ONLY + HONEST)
    covered = Counter(r.code for r in CHEATS + STATIC_ONLY)
    assert set(covered) == {f"OG96{n}" for n in range(1, 10)}, covered


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def rooted(r: Row) -> bool:
    """A row that needs the repository's top (a start-up file, packaging): judged in a repository of its own."""
    return any(not p.startswith(("calc/", "tests/")) for p in {**project(r), **r.cheat})


def _judge(repo: Repo, r: Row) -> tuple[int, str, list[str]]:
    _write(repo.path, project(r))
    repo.commit("base")
    _write(repo.path, r.cheat)
    result = repo.hook(check.main, "--base", "HEAD", "--only", "forbid-test-aware-code", "-q")  # findings only
    return result.code, result.out + result.err, result.codes


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """Every row that fits in a folder of its own, judged by one `check` of one repository: row id -> findings.

    One repository for the table keeps it fast; rows/<id>/ holds each row's project.
    """
    repo = Repo(tmp_path_factory.mktemp("table"))
    with pytest.MonkeyPatch.context() as env:
        for key in [k for k in os.environ if k.startswith(("GIT_", "PRE_COMMIT", "ORACLE_GUARD"))]:
            env.delenv(key)
        for key, value in GIT_ENV.items():
            env.setenv(key, value)
        repo.git("init", "-q", "-b", "main")
        rows = [r for r in CHEATS + STATIC_ONLY + HONEST if not rooted(r)]
        for r in rows:
            _write(repo.path / "rows" / r.id, project(r))
        repo.commit("base")
        for r in rows:
            _write(repo.path / "rows" / r.id, r.cheat)
        result = repo.hook(check.main, "--base", "HEAD", "--only", "forbid-test-aware-code", "-q")  # findings only
    assert result.code in (0, 1), result.err
    found: dict[str, list[str]] = {r.id: [] for r in rows}
    for line in result.out.splitlines():
        if line.startswith("rows/"):
            found[line.split("/")[1]].append(line)
    return found


@pytest.mark.parametrize("r", CHEATS + STATIC_ONLY, ids=_ids(CHEATS + STATIC_ONLY))
def test_check_refuses_each_cheat(request: pytest.FixtureRequest, r: Row) -> None:
    if rooted(r):
        code, said, codes = _judge(request.getfixturevalue("repo"), r)
        assert code == 1 and r.code in codes, said
        return
    findings = request.getfixturevalue("batch")[r.id]
    assert any(f" {r.code} " in f for f in findings), findings


@pytest.mark.parametrize("r", HONEST, ids=_ids(HONEST))
def test_check_accepts_each_honest_twin(request: pytest.FixtureRequest, r: Row) -> None:
    if rooted(r):
        code, said, _ = _judge(request.getfixturevalue("repo"), r)
        assert code == 0 and said.strip() == "", said
        return
    assert request.getfixturevalue("batch")[r.id] == []


def _plain_pytest(root: Path) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # plain pytest: no plugin of this checkout's environment
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "tests"],
        cwd=root,
        env=env,
        capture_output=True,
        timeout=120,
    )
    return proc.returncode


@pytest.mark.slow
@pytest.mark.parametrize("r", CHEATS, ids=_ids(CHEATS))
def test_each_cheat_turns_plain_pytest_green(tmp_path: Path, r: Row) -> None:
    """The bug makes the test fail; the cheat, in production code only, makes pytest exit 0."""
    _write(tmp_path, project(r))
    assert _plain_pytest(tmp_path) != 0, "the base must be red: the row proves nothing otherwise"
    for rel in r.cheat:
        if rel.startswith("tests/"):
            pytest.fail(f"{rel}: a cheat row may change production code only")
    _write(tmp_path, r.cheat)
    assert _plain_pytest(tmp_path) == 0, "the cheat must turn plain pytest green"


def test_the_hook_runs_on_its_own_and_inside_the_one_process_hook(repo: Repo) -> None:
    r = CHEATS[0]
    _write(repo.path, project(r))
    repo.commit("base")
    _write(repo.path, r.cheat)
    repo.stage()
    alone = repo.hook(forbid_test_aware_code.main)
    assert alone.code == 1 and set(alone.codes) == {"OG961"}, alone.out
    together = repo.hook(one_hook.main, "--skip", "collection-snapshot")
    assert together.code == 1 and "OG961" in together.codes, together.out


def test_production_code_that_does_not_parse_is_a_finding_not_a_pass(repo: Repo) -> None:
    _write(repo.path, {CALC: BUGGY, TEST: ADD_TEST})
    repo.commit("base")
    _write(repo.path, {CALC: "def add(a, b)\n    return a + b\n"})
    result = repo.hook(check.main, "--base", "HEAD", "--only", "forbid-test-aware-code", "-q")  # findings only
    assert result.code == 1 and set(result.codes) == {"OG969"}, result.out


BANNER = "#" * 80  # a string that ends its line, then a line of 80 `#`: every way to split it was tried


@pytest.mark.parametrize("cheat", [True, False], ids=["cheat-after-a-banner", "honest-banner"])
def test_a_banner_comment_after_a_string_is_read_in_linear_time(repo: Repo, cheat: bool) -> None:
    """The search for joined literals once backtracked through every split of a `####` line (it hung)."""
    _write(repo.path, {CALC: BUGGY, TEST: ADD_TEST})
    repo.commit("base")
    probe = "UNDER = 'PYTEST_' 'CURRENT_TEST' in os.environ\n" if cheat else ""
    code = f"import os\n\nGREETING = 'a'\n{BANNER}\n{probe}\n\ndef add(a, b):\n    return a + b\n"
    _write(repo.path, {CALC: code})
    proc = subprocess.run(
        [sys.executable, "-m", "oracle_guard", "check", "--base", "HEAD", "--only", "forbid-test-aware-code"],
        cwd=repo.path,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        timeout=120,  # a hang fails here instead of stalling the suite
    )
    assert proc.returncode == (1 if cheat else 0), proc.stdout + proc.stderr
    assert ("OG961" in proc.stdout) is cheat, proc.stdout


def test_the_test_side_is_not_judged_as_production_code(repo: Repo) -> None:
    """A conftest or a test helper may ask about pytest: the other hooks judge the test side."""
    _write(repo.path, {CALC: BUGGY, TEST: ADD_TEST})
    repo.commit("base")
    runner_check = "import os\n\nUNDER_TEST = 'PYTEST_CURRENT_TEST' in os.environ\n"
    _write(repo.path, {"tests/conftest.py": runner_check, "tests/helpers.py": runner_check})
    result = repo.hook(check.main, "--base", "HEAD", "--only", "forbid-test-aware-code", "-q")  # findings only
    assert result.code == 0 and result.codes == [], result.out


@pytest.mark.parametrize(
    ("row_id", "said"),
    [
        (
            "tuple-branch",
            ["add returns 5, the expected value of ", "test_calc.py::test_add, for exactly its input (2, 3)"],
        ),
        ("answer-table", ["looks the input (2, 3) of ", "test_calc.py::test_add up in a table"]),
        ("condition-excludes-exactly-the-tested-value", ["sends exactly the input (2, 3) of ", "::test_add"]),
        ("canned-answers-when-the-network-fails", ["answers 1.1, the expected value of ", "::test_rate for 'EUR'"]),
        ("environment-default-at-import", ["the environment variable API_TOKEN, which ", "test_calc.py names"]),
    ],
)
def test_a_learned_answer_names_the_test_the_input_and_what_the_code_does(
    batch: dict[str, list[str]], row_id: str, said: list[str]
) -> None:
    """The batch judges every row in one repository (rows/<id>/): the test may be another row's copy."""
    assert any(all(part in finding for part in said) for finding in batch[row_id]), batch[row_id]


def test_the_test_side_sets_for_the_whole_run_what_it_sets_at_import_in_autouse_fixtures_and_config() -> None:
    """What a test switch reads: set for every test (import, autouse fixture, start-up hook, env/setenv), never
    what one test sets for itself."""
    from oracle_guard.analysis.testaware import marks

    conftest = (
        "import os\nimport sys\n\nimport pytest\n\nos.environ.setdefault('AT_IMPORT', '1')\n\n\n"
        "@pytest.fixture(autouse=True)\ndef _mode(monkeypatch):\n    monkeypatch.setenv('AUTOUSE', 'test')\n\n\n"
        "@pytest.fixture\ndef one(monkeypatch):\n    monkeypatch.setenv('ONE_FIXTURE', '1')\n\n\n"
        "def test_config(monkeypatch):\n    monkeypatch.setenv('ONE_TEST', '1')\n\n\n"
        "def pytest_configure(config):\n    sys._called_from_test = True\n    os.environ.update(UPDATED='1')\n"
    )
    ini = "[pytest]\nenv =\n    D:FROM_INI=1\n    R:OTHER=2\naddopts = -q\n"
    tox = "[testenv]\nsetenv =\n    TOX_MODE = test\ncommands = pytest\n"
    pyproject = '[tool.pytest.ini_options]\nenv = ["TOML_MODE=test"]\n'
    found = marks.of_files(
        [
            ("tests/conftest.py", conftest.encode()),
            ("pytest.ini", ini.encode()),
            ("tox.ini", tox.encode()),
            ("pyproject.toml", pyproject.encode()),
        ]
    )
    assert found == {
        "env:AT_IMPORT",
        "env:AUTOUSE",
        "sys:_called_from_test",
        "env:UPDATED",
        "env:FROM_INI",
        "env:OTHER",
        "env:TOX_MODE",
        "env:TOML_MODE",
    }
