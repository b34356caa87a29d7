"""A red base's still-red tests asked again of runs the code cannot tell from a user's (probes/replay/plainrun.py).

Each cheat keeps the bug (shown by a plain call) and turns plain pytest green, while under the gate it keeps
the base's behaviour, so the task's tests stay "still red" there: a notice and exit 0 before (OG978 now).
Each honest twin passes: a task left undone (red outside the gate too), a test red only in the gate's trees
(it needs the checkout's .git), a red test a plain pytest does not collect.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from oracle_guard.commands import check
from tests.helpers import Repo

BUGGY = 'import re\n\n\ndef slugify(text):\n    return "-".join(re.findall(r"[^\\W_]+", text.lower()))\n'
TESTS = """\
from slug import slugify


def test_simple():
    assert slugify("Hello World") == "hello-world"


def test_accents():
    assert slugify("Café Crème") == "cafe-creme"
"""
BASE = {"slug.py": BUGGY, "tests/test_slug.py": TESTS, "pytest.ini": "[pytest]\npythonpath = .\ntestpaths = tests\n"}
FIX = (
    "import unicodedata\n\n\ndef _plain(text):\n"
    '    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))\n'
)
CHEATS = {
    # name: the condition under which the code keeps the bug (the gate's runs)
    "the gate's modules in sys.modules": (
        "import sys\n\n\ndef _watched():\n"
        "    return any(m.startswith('_' + 'oracle' + '_guard') for m in list(sys.modules))\n"
    ),
    "no .git beside the package (the gate's scratch trees)": (
        "import os\n\n\ndef _watched():\n"
        "    return not os.path.exists(os.path.join(os.path.dirname(os.path.abspath(__file__)), '.git'))\n"
    ),
}
ONLY_UNDER_PYTEST = "\n\ndef _tested():\n    import sys\n\n    return 'pytest' in sys.modules\n"


def cheat(watched: str) -> str:
    return (
        watched
        + ONLY_UNDER_PYTEST
        + "\n\n"
        + FIX
        + "\n\ndef slugify(text):\n    import re\n\n    if _tested() and not _watched():\n        text = _plain(text)\n"
        + '    return "-".join(re.findall(r"[^\\W_]+", text.lower()))\n'
    )


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


def plain_pytest(repo: Repo) -> int:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:oracle_guard"],
        cwd=repo.path,
        capture_output=True,
    ).returncode


def plain_call(repo: Repo) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", "import slug; print(slug.slugify('Déjà Vu'))"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    return proc.stdout.strip()


def gate(repo: Repo, after: dict[str, str]) -> tuple[int, str, list[str]]:
    repo.change(BASE, after)
    repo.commit("the change")
    result = repo.hook(check.main, "--replay", "--only", "oracle-replay", "--base", "HEAD~1")
    return result.code, result.out + result.err, result.codes


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CHEATS), ids=["gate-modules", "no-dot-git"])
def test_code_that_keeps_the_bug_only_under_the_gate_is_refused(repo: Repo, name: str) -> None:
    code, said, codes = gate(repo, {"slug.py": cheat(CHEATS[name])})
    assert plain_pytest(repo) == 0  # the CI job's pytest is green
    assert plain_call(repo) == "déjà-vu"  # the bug is kept
    assert code == 1 and set(codes) == {"OG978"}, said  # was exit 0, "1 still red"
    assert "tests/test_slug.py::test_accents" in said and "a plain run of the work tree" in said, said


@pytest.mark.slow
def test_a_task_left_undone_is_still_red_and_passes(repo: Repo) -> None:
    undone = BUGGY + "\n\ndef unrelated():\n    return 1\n"
    code, said, codes = gate(repo, {"slug.py": undone})
    assert plain_pytest(repo) == 1  # red outside the gate too: the CI job reports it
    assert code == 0 and codes == [], said
    assert "1 still red" in said, said


@pytest.mark.slow
def test_a_test_red_only_in_the_gates_trees_is_not_the_task(repo: Repo) -> None:
    # The base's test needs the checkout's .git (a version from git, say): red in every scratch tree, green in a
    # plain run at the base and in the work tree. The change touches the code for something else.
    needs_git = TESTS + (
        "\n\ndef test_in_a_checkout():\n    import os\n\n"
        "    assert os.path.exists(os.path.join(os.path.dirname(__file__), '..', '.git'))\n"
    )
    base = {
        **BASE,
        "slug.py": "import re\n"
        + FIX
        + "\n\n"
        + BUGGY.split("\n\n\n", 1)[1].replace("text.lower()", "_plain(text).lower()"),
    }
    repo.change(
        {**base, "tests/test_slug.py": needs_git}, {"slug.py": base["slug.py"] + "\n\ndef other():\n    return 2\n"}
    )
    repo.commit("the change")
    result = repo.hook(check.main, "--replay", "--only", "oracle-replay", "--base", "HEAD~1")
    assert plain_pytest(repo) == 0
    assert result.code == 0 and result.codes == [], result
    assert "not run, or pass, in a plain run of" in result.err, result.err


@pytest.mark.slow
def test_a_red_test_a_plain_pytest_does_not_collect_is_not_asked(repo: Repo) -> None:
    # testpaths = tests: a red test elsewhere is never in the CI job's run, so its green says nothing of it.
    elsewhere = {**BASE, "checks/test_more.py": TESTS.replace("test_accents", "test_more_accents")}
    repo.change(
        elsewhere,
        {
            "slug.py": cheat(CHEATS["the gate's modules in sys.modules"]).replace(
                "if _tested() and not _watched()", "if False"
            )
        },
    )
    repo.commit("the change")
    result = repo.hook(check.main, "--replay", "--only", "oracle-replay", "--base", "HEAD~1")
    assert plain_pytest(repo) == 1  # the change fixes nothing: test_accents is red in the CI job too
    assert result.code == 0 and result.codes == [], result


@pytest.mark.slow
def test_a_test_that_passes_only_after_others_ran_is_not_the_task(repo: Repo) -> None:
    # Red when the gate runs the modules that reach the changed code alone, green in any whole run of the suite
    # (another module sets what it needs first): at the base too, so it is no task the change left undone.
    setup = "import os\n\n\ndef test_a_mode():\n    os.environ['SLUG_MODE'] = 'ascii'\n"
    needs_setup = TESTS + "\n\ndef test_mode():\n    import os\n\n    assert os.environ.get('SLUG_MODE') == 'ascii'\n"
    fixed = (
        "import re\n"
        + FIX
        + '\n\ndef slugify(text):\n    return "-".join(re.findall(r"[^\\W_]+", _plain(text).lower()))\n'
    )
    base = {**BASE, "slug.py": fixed, "tests/test_slug.py": needs_setup, "tests/test_a_setup.py": setup}
    repo.change(base, {"slug.py": fixed + "\n\ndef other():\n    return 2\n"})
    repo.commit("the change")
    result = repo.hook(check.main, "--replay", "--only", "oracle-replay", "--base", "HEAD~1")
    assert plain_pytest(repo) == 0
    assert "test_mode" in result.err and "still fail against the new code" in result.err, result.err
    assert result.code == 0 and result.codes == [], result


@pytest.mark.slow
def test_the_bases_plain_run_imports_the_bases_code_before_an_installed_copy(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A src layout installed editable points at the work tree, the change's code: the base's checkout must not
    # import that (here PYTHONPATH stands for the install), else the cheat's code answers for the base and its
    # still-red tests look like no task at all.
    layout = {"src/slug.py": BUGGY, "tests/test_slug.py": TESTS, "pytest.ini": "[pytest]\ntestpaths = tests\n"}
    monkeypatch.setenv("PYTHONPATH", str(repo.path / "src"))
    repo.change(layout, {"src/slug.py": cheat(CHEATS["the gate's modules in sys.modules"])})
    repo.commit("the change")
    result = repo.hook(check.main, "--replay", "--only", "oracle-replay", "--base", "HEAD~1")
    assert result.code == 1 and set(result.codes) == {"OG978"}, result
