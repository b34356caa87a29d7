"""Switches that hide failures (OG860-OG864, partial runs in OG851/OG859): reruns, regeneration, coverage floors, stripped asserts."""

from __future__ import annotations

import argparse

import pytest

from oracle_guard.pytest_side.config import compare as pytest_config
from oracle_guard.pytest_side.runners import files as runners
from oracle_guard.repo import changes
from tests.helpers import Repo


def findings(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    repo.stage()
    monkeypatch.chdir(repo.path)
    return [f.text() for f in pytest_config.check(changes.resolve(argparse.Namespace(base=None)))]


WF = "jobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: {}\n"
BLOCK = "jobs:\n  t:\n    steps:\n      - run: |\n          python -m pytest -q \\\n            {}\n"
ENV = "env:\n  {}\njobs:\n  t:\n    steps:\n      - run: pytest -q\n"

# (file, base content, new content, expected code or None for the honest twin)
CASES = [
    # 1. reruns belong to the ledger
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra --reruns 5\n", "OG860"),
    ("pytest.ini", "[pytest]\naddopts = -ra --reruns 5\n", "[pytest]\naddopts = -ra --reruns 2\n", None),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra --reruns=1 --reruns-delay 2\n", "OG860"),
    ("pytest.ini", "[pytest]\nreruns = 3\n", "[pytest]\nreruns = 9\n", "OG860"),
    ("pytest.ini", "[pytest]\nreruns = 9\n", "[pytest]\nreruns = 3\n", None),
    ("pytest.ini", "[pytest]\naddopts = -q\n", "[pytest]\naddopts = -q\nretries = 2\n", "OG860"),
    ("pytest.ini", "[pytest]\naddopts = -q\n", "[pytest]\naddopts = -q --force-flaky --max-runs=4\n", "OG860"),
    ("pytest.ini", "[pytest]\naddopts = -q\n", "[pytest]\naddopts = -q -o reruns=2\n", "OG860"),
    (
        "pyproject.toml",
        '[tool.pytest.ini_options]\naddopts = ["-q"]\n',
        '[tool.pytest.ini_options]\naddopts = ["-q", "--reruns", "3"]\n',
        "OG860",
    ),
    ("pyproject.toml", "[tool.pytest.ini_options]\nreruns = 1\n", "[tool.pytest.ini_options]\nreruns = 4\n", "OG860"),
    (
        "setup.cfg",
        "[tool:pytest]\naddopts = -q\n",
        "[tool:pytest]\naddopts = -q --retries 3 --retry-delay 1\n",
        "OG860",
    ),
    # pytest 9's pytest.toml: a [pytest] table with native types, ahead of every other file
    ("pytest.toml", '[pytest]\naddopts = ["-ra"]\n', '[pytest]\naddopts = ["-ra", "--reruns", "2"]\n', "OG860"),
    ("pytest.toml", '[pytest]\naddopts = ["-ra"]\n', '[pytest]\naddopts = ["-ra", "--lf"]\n', "OG851"),
    ("pytest.toml", '[pytest]\ntestpaths = ["tests", "docs"]\n', '[pytest]\ntestpaths = ["tests"]\n', "OG852"),
    ("pytest.toml", '[pytest]\naddopts = ["-ra"]\n', '[pytest]\naddopts = ["-ra", "-q"]\n', None),
    (".github/workflows/ci.yml", WF.format("pytest -q"), WF.format("pytest -q --reruns 3"), "OG860"),
    (".github/workflows/ci.yml", WF.format("pytest -q --reruns 3"), WF.format("pytest -q --reruns 1"), None),
    (".github/workflows/ci.yml", ENV.format("CI: 'true'"), ENV.format("PYTEST_ADDOPTS: --reruns 3"), "OG860"),
    (
        ".github/workflows/ci.yml",
        WF.format("pytest -q"),
        "jobs:\n  t:\n    steps:\n      - uses: nick-fields/retry@v3\n        with:\n          max_attempts: 3\n          command: pytest -q\n",
        "OG860",
    ),
    (
        ".github/workflows/ci.yml",
        WF.format("pytest -q"),
        "jobs:\n  t:\n    steps:\n      - uses: nick-fields/retry@v3\n        with:\n          max_attempts: 1\n          command: pytest -q\n",
        None,
    ),
    (
        ".github/workflows/ci.yml",
        WF.format("pytest -q"),
        "jobs:\n  t:\n    steps:\n      - uses: nick-fields/retry@v3\n        with:\n          max_attempts: 3\n          command: npm test\n",
        None,
    ),
    (
        "tox.ini",
        "[testenv]\ncommands = pytest\n",
        "[testenv]\nsetenv =\n    PYTEST_ADDOPTS = --reruns 2\ncommands = pytest\n",
        "OG860",
    ),
    (
        "tox.ini",
        "[testenv]\ncommands = pytest {posargs:-n auto}\n",
        "[testenv]\ncommands = pytest {posargs:-n auto --reruns 2}\n",
        "OG860",
    ),
    (
        "tox.ini",
        "[testenv]\ncommands = pytest {posargs:-n auto}\n",
        "[testenv]\ncommands = pytest {posargs:-n 4}\n",
        None,
    ),
    (
        "noxfile.py",
        "def t(s):\n    s.run('pytest')\n",
        "def t(s):\n    s.run('pytest', env={'PYTEST_ADDOPTS': '--reruns 2'})\n",
        "OG860",
    ),
    ("Makefile", "test:\n\tpytest\n", "PYTEST_ARGS = --reruns 3\ntest:\n\tpytest $(PYTEST_ARGS)\n", "OG860"),
    ("Makefile", "test:\n\tpytest\n", "export PYTEST_ADDOPTS = --reruns 3\ntest:\n\tpytest\n", "OG860"),
    # 2. no regeneration switches
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra --snapshot-update\n", "OG861"),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra --force-regen\n", "OG861"),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra --regen-all\n", "OG861"),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra --inline-snapshot=fix\n", "OG861"),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra --inline-snapshot create,update\n", "OG861"),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra --inline-snapshot=disable\n", None),
    (
        "pytest.ini",
        "[pytest]\naddopts = -ra\n",
        "[pytest]\naddopts = -ra --approvaltests-use-reporter=ReporterThatAutomaticallyApproves\n",
        "OG861",
    ),
    (
        "pytest.ini",
        "[pytest]\naddopts = -ra\n",
        "[pytest]\naddopts = -ra --approvaltests-use-reporter=PythonNativeReporter\n",
        None,
    ),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra --snapshot-warn-unused\n", None),
    ("pytest.ini", "[pytest]\naddopts = -ra --snapshot-update\n", "[pytest]\naddopts = -ra\n", None),
    (
        "pyproject.toml",
        '[tool.inline-snapshot]\ndefault-flags = ["report"]\n',
        '[tool.inline-snapshot]\ndefault-flags = ["fix"]\n',
        "OG861",
    ),
    (".github/workflows/ci.yml", BLOCK.format("tests"), BLOCK.format("--snapshot-update tests"), "OG861"),
    (".gitlab-ci.yml", "test:\n  script:\n    - pytest\n", "test:\n  script:\n    - pytest --force-regen\n", "OG861"),
    (".github/workflows/ci.yml", ENV.format("CI: 'true'"), ENV.format("INLINE_SNAPSHOT_DEFAULT_FLAGS: fix"), "OG861"),
    # 3. coverage floors only rise
    (
        "pytest.ini",
        "[pytest]\naddopts = --cov=pkg --cov-fail-under=90\n",
        "[pytest]\naddopts = --cov=pkg --cov-fail-under=10\n",
        "OG862",
    ),
    (
        "pytest.ini",
        "[pytest]\naddopts = --cov=pkg --cov-fail-under=90\n",
        "[pytest]\naddopts = --cov=pkg --cov-fail-under=95\n",
        None,
    ),
    ("pytest.ini", "[pytest]\naddopts = --cov=pkg --cov-fail-under 90\n", "[pytest]\naddopts = --cov=pkg\n", "OG862"),
    (
        "pytest.ini",
        "[pytest]\naddopts = --cov=pkg --cov-fail-under=90\n",
        "[pytest]\naddopts = --cov=pkg --cov-fail-under=90 --no-cov\n",
        "OG862",
    ),
    (
        "pytest.ini",
        "[pytest]\naddopts = --cov=pkg\n",
        "[pytest]\naddopts = --cov=pkg --no-cov\n",
        "OG862",
    ),  # a floor may live in CI
    ("pytest.ini", "[pytest]\naddopts = -q\n", "[pytest]\naddopts = -q --no-cov\n", None),  # nothing was measured
    (
        "pytest.ini",
        "[pytest]\naddopts = --cov --cov-fail-under 90\n",
        "[pytest]\naddopts = --cov --cov-fail-under 91\n",
        None,
    ),
    (
        ".coveragerc",
        "[report]\nexclude_also =\n    if TYPE_CHECKING:\n",
        "[report]\nexclude_also =\n    if TYPE_CHECKING:\n    raise ValueError\n",
        "OG862",
    ),
    (
        ".coveragerc",
        "[report]\nexclude_also =\n    if TYPE_CHECKING:\n",
        "[report]\nexclude_also =\n    if TYPE_CHECKING:\n    @overload\n    raise NotImplementedError\n",
        None,
    ),
    (
        ".coveragerc",
        "[report]\nexclude_also =\n    if TYPE_CHECKING:\n",
        "[report]\nexclude_also =\n    if TYPE_CHECKING:\n    def never_written_anywhere\n",
        None,
    ),
    (
        "pyproject.toml",
        '[tool.coverage.report]\nexclude_lines = ["pragma: no cover"]\n',
        '[tool.coverage.report]\nexclude_lines = ["pragma: no cover", "return w"]\n',
        "OG862",
    ),
    (".coveragerc", "[report]\nfail_under = 90\n", "[report]\nfail_under = 10\n", "OG862"),
    (".coveragerc", "[report]\nfail_under = 90\n", "[report]\nfail_under = 92.5\n", None),
    (".coveragerc", "[report]\nfail_under = 90\n", "[report]\nshow_missing = true\n", "OG862"),
    ("setup.cfg", "[coverage:report]\nfail_under = 80\n", "[coverage:report]\nfail_under = 70\n", "OG862"),
    ("tox.ini", "[coverage:report]\nfail_under = 80\n", "[coverage:report]\nfail_under = 0\n", "OG862"),
    (
        "pyproject.toml",
        "[tool.coverage.report]\nfail_under = 85\n",
        "[tool.coverage.report]\nfail_under = 50\n",
        "OG862",
    ),
    (
        "pyproject.toml",
        "[tool.coverage.report]\nfail_under = 85\n",
        "[tool.coverage.report]\nfail_under = 85\nshow_missing = true\n",
        None,
    ),
    (".coveragerc", "[run]\nomit =\n    tests/*\n", "[run]\nomit =\n    tests/*\n    src/pkg/core.py\n", "OG862"),
    (".coveragerc", "[run]\nomit =\n    tests/*\n", "[run]\nomit =\n    tests/*\n    */site-packages/*\n", None),
    (
        "pyproject.toml",
        '[tool.coverage.run]\nomit = ["tests/*"]\n',
        '[tool.coverage.run]\nomit = ["tests/*", "*/pkg/*"]\n',
        "OG862",
    ),
    (
        ".github/workflows/ci.yml",
        WF.format("pytest --cov-fail-under=90"),
        WF.format("pytest --cov-fail-under=80"),
        "OG862",
    ),
    (
        ".github/workflows/ci.yml",
        WF.format("coverage report --fail-under=90"),
        WF.format("coverage report --fail-under=91"),
        None,
    ),
    (".github/workflows/ci.yml", WF.format("coverage report --fail-under=90"), WF.format("coverage report"), "OG862"),
    # 4. no partial runs
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra --lf\n", "OG851"),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra --stepwise-skip\n", "OG851"),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra --setup-only\n", "OG851"),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra -x\n", None),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra --maxfail=1\n", None),
    ("pytest.ini", "[pytest]\naddopts = -ra -m 'not slow'\n", "[pytest]\naddopts = -ra -m 'not slow' -x\n", "OG851"),
    ("pytest.ini", "[pytest]\naddopts = -ra -m 'not slow'\n", "[pytest]\naddopts = -rA -m 'not slow'\n", None),
    (".github/workflows/ci.yml", WF.format("pytest -q"), WF.format("pytest -q --sw"), "OG859"),
    (".github/workflows/ci.yml", WF.format("pytest -q -k 'not slow'"), WF.format("pytest -xq -k 'not slow'"), "OG859"),
    (".github/workflows/ci.yml", WF.format("pytest -q"), WF.format("pytest -xq"), None),
    (".github/workflows/ci.yml", WF.format("pytest -q"), WF.format("pytest -qk 'not slow'"), "OG859"),
    (".github/workflows/ci.yml", WF.format("pytest -q"), WF.format("pytest -qm slow"), "OG859"),
    (".github/workflows/ci.yml", WF.format("pytest -q"), WF.format("pytest -vvs -rA"), None),
    (".github/workflows/ci.yml", BLOCK.format("tests"), BLOCK.format("--last-failed tests"), "OG859"),
    (".github/workflows/ci.yml", WF.format("pytest -q"), WF.format(">\n          pytest -q\n          --co"), "OG859"),
    ("scripts/test.sh", "pytest -q\n", "pytest -q \\\n  --deselect tests/test_a.py::test_x\n", "OG859"),
    # PYTEST_ADDOPTS narrows every pytest run of the file (issue 10: CI and config)
    (".github/workflows/ci.yml", ENV.format("CI: 'true'"), ENV.format("PYTEST_ADDOPTS: -k 'not slow'"), "OG859"),
    (".github/workflows/ci.yml", ENV.format("CI: 'true'"), ENV.format("PYTEST_ADDOPTS: -q --tb=short"), None),
    (
        "tox.ini",
        "[testenv]\ncommands = pytest\n",
        "[testenv]\nsetenv =\n    PYTEST_ADDOPTS=--deselect tests/test_a.py::test_x\ncommands = pytest\n",
        "OG859",
    ),
    (
        "noxfile.py",
        "def t(session):\n    session.run('pytest')\n",
        "def t(session):\n    session.env['PYTEST_ADDOPTS'] = '--lf'\n    session.run('pytest')\n",
        "OG859",
    ),
    ("Makefile", "test:\n\tpytest\n", "ARGS ?= -m 'not slow'\ntest:\n\tpytest $(ARGS)\n", "OG859"),
    ("Makefile", "test:\n\tpytest\n", "ARGS ?= -v\ntest:\n\tpytest $(ARGS)\n", None),
    (
        ".gitlab-ci.yml",
        "variables:\n  CI: 'true'\ntest:\n  script: [pytest]\n",
        "variables:\n  PYTEST_ADDOPTS: --ignore=tests/slow\ntest:\n  script: [pytest]\n",
        "OG859",
    ),
    # a failure thrown away (OG865), or run again (OG860)
    ("scripts/test.sh", "pytest -q\n", "pytest -q || true\n", "OG865"),
    ("scripts/test.sh", "pytest -q\n", "pytest -q || echo 'tests failed'\n", "OG865"),
    ("scripts/test.sh", "pytest -q\n", "pytest -q; exit 0\n", "OG865"),
    ("scripts/test.sh", "pytest -q\n", "pytest -q || exit 1\n", None),
    ("scripts/test.sh", "pytest -q\n", "pytest -q || exit\n", None),
    ("scripts/test.sh", "pytest -q\n", "pytest -q && echo ok\n", None),
    ("scripts/test.sh", "pytest -q\n", "pytest -q || pytest -q\n", "OG860"),
    ("scripts/test.sh", "pytest -q || true\n", "pytest -q --tb=short || true\n", None),
    # found on ipykernel (#1006): the base spelled the same rerun through a shell variable
    (
        ".github/workflows/ci.yml",
        BLOCK.replace(
            "python -m pytest -q \\\n            {}", 'cmd="python -m pytest -vv"\n          $cmd || $cmd --lf'
        ),
        BLOCK.replace("python -m pytest -q \\\n            {}", "pytest -vv || pytest -vv --lf"),
        None,
    ),
    (
        ".github/workflows/ci.yml",
        WF.format("pytest -q"),
        WF.format("pytest -q\n        continue-on-error: true"),
        "OG865",
    ),
    (
        ".github/workflows/ci.yml",
        WF.format("pytest -q"),
        WF.format("pytest -q\n        continue-on-error: ${{ matrix.experimental }}"),
        None,
    ),
    (
        ".github/workflows/ci.yml",
        WF.format("pytest -q") + "      - run: codecov\n",
        WF.format("pytest -q") + "      - run: codecov\n        continue-on-error: true\n",
        None,
    ),
    (
        ".gitlab-ci.yml",
        "test:\n  script:\n    - pytest\n",
        "test:\n  allow_failure: true\n  script:\n    - pytest\n",
        "OG865",
    ),
    ("tox.ini", "[testenv]\ncommands = pytest\n", "[testenv]\ncommands = - pytest\n", "OG865"),
    ("tox.ini", "[testenv]\ncommands = pytest\n", "[testenv]\nignore_outcome = true\ncommands = pytest\n", "OG865"),
    ("Makefile", "test:\n\tpytest\n", "test:\n\t-pytest\n", "OG865"),
    ("Makefile", "test:\n\tpytest\n", "test:\n\t@pytest\n", None),
    # stripped asserts
    (".github/workflows/ci.yml", WF.format("python -m pytest -q"), WF.format("python -O -m pytest -q"), "OG864"),
    (".github/workflows/ci.yml", WF.format("python -m pytest -q"), WF.format("python -OO -m pytest -q"), "OG864"),
    (".github/workflows/ci.yml", WF.format("python -m pytest -q"), WF.format("python -X dev -m pytest -q"), None),
    (".github/workflows/ci.yml", ENV.format("CI: 'true'"), ENV.format("PYTHONOPTIMIZE: '1'"), "OG864"),
    (".github/workflows/ci.yml", ENV.format("CI: 'true'"), ENV.format("PYTHONOPTIMIZE: ''"), None),
    (
        "tox.ini",
        "[testenv]\ncommands = pytest\n",
        "[testenv]\nsetenv =\n    PYTHONOPTIMIZE=2\ncommands = pytest\n",
        "OG864",
    ),
    (
        "noxfile.py",
        "def t(s):\n    s.run('pytest')\n",
        "def t(s):\n    s.env['PYTHONOPTIMIZE'] = '1'\n    s.run('pytest')\n",
        "OG864",
    ),
    (
        "noxfile.py",
        "def t(s):\n    s.run('pytest')\n",
        "def t(s):\n    s.run('python', '-O', '-m', 'pytest')\n",
        "OG864",
    ),
    ("Makefile", "test:\n\tpytest\n", "test:\n\tPYTHONOPTIMIZE=1 pytest\n", "OG864"),
]


@pytest.mark.parametrize(("path", "base", "new", "expected"), CASES)
def test_switches(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, path: str, base: str, new: str, expected: str | None
) -> None:
    repo.write("src/pkg/core.py", "def f(w):\n    if w < 0:\n        raise ValueError(w)\n    return w\n")
    repo.write(path, base, dedent=False)
    repo.commit("base")
    repo.write(path, new, dedent=False)
    found = findings(repo, monkeypatch)
    if expected is None:
        assert found == []
    else:
        assert found and all(f" {expected} " in f for f in found), found
        assert all(f.startswith(f"{path}:") for f in found), found


def test_a_regeneration_variable_counts_when_the_project_reads_it(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write(
        "tests/test_render.py",
        "import os\n\n\ndef test_render(tmp_path):\n    if os.environ.get('UPDATE_GOLDENS'):\n        (tmp_path / 'g').write_text('x')\n    assert True is not False\n",
    )
    repo.write(".github/workflows/ci.yml", ENV.format("CI: 'true'"))
    repo.commit("base")
    repo.write(".github/workflows/ci.yml", ENV.format("UPDATE_GOLDENS: '1'"))
    found = findings(repo, monkeypatch)
    assert len(found) == 1 and " OG861 `UPDATE_GOLDENS=1` is read by the project's code" in found[0], found


@pytest.mark.parametrize("setting", ["UPDATE_GOLDENS: '0'", "REGENERATE: '1'", "DATABASE_URL: sqlite://"])
def test_variables_the_project_does_not_read_or_that_are_off_pass(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, setting: str
) -> None:
    repo.write(
        "tests/test_render.py",
        "import os\n\n\ndef test_render():\n    assert os.environ.get('UPDATE_GOLDENS') != 'x'\n",
    )
    repo.write(".github/workflows/ci.yml", ENV.format("CI: 'true'"))
    repo.commit("base")
    repo.write(".github/workflows/ci.yml", ENV.format(setting))
    assert findings(repo, monkeypatch) == []


def test_an_inline_regeneration_variable_in_a_makefile(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("tests/conftest.py", "import os\n\nREGEN = os.getenv('REGENERATE') == '1'\n")
    repo.write("Makefile", "test:\n\tpytest\n")
    repo.commit("base")
    repo.write("Makefile", "test:\n\tREGENERATE=1 pytest\n")
    found = findings(repo, monkeypatch)
    assert len(found) == 1 and found[0].startswith("Makefile:2:1: OG861 `REGENERATE=1`"), found


FREEZE = """\
version: 1
freezes:
  - id: test_flaky
    owner: oncall
    reason: clock skew, PAY-4412
    expires: "2999-01-01T00:00:00Z"
    remaining_reruns: 2
"""


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("pytest tests/test_a.py::test_flaky --reruns 2", []),
        ("pytest tests/test_a.py::test_flaky --reruns 3", ["OG860"]),
        ("pytest tests/test_a.py::test_flaky tests/test_a.py::test_other --reruns 1", ["OG860"]),
        ("pytest tests --reruns 1", ["OG860"]),
    ],
)
def test_a_command_that_reruns_only_a_frozen_test_within_its_budget_passes(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, command: str, expected: list[str]
) -> None:
    repo.write("tests/agent_contract.yaml", FREEZE)
    repo.write(".github/workflows/flaky.yml", WF.format("pytest tests"))
    repo.commit("base")
    repo.write(".github/workflows/flaky.yml", WF.format(command))
    assert [f.split()[1] for f in findings(repo, monkeypatch)] == expected


PROD = "def area(w, h):\n    if w < 0:\n        raise ValueError(w)\n    return w * h\n"
PROD_PRAGMA = "def area(w, h):\n    if w < 0:  # pragma: no cover\n        raise ValueError(w)\n    return w * h\n"
TEST = "from pkg.core import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n"
TEST_CHANGED = TEST + "\n\ndef test_more():\n    assert area(1, 1) == 1\n"


@pytest.mark.parametrize(
    ("prod", "test", "expected"),
    [
        (PROD_PRAGMA, TEST_CHANGED, ["src/pkg/core.py:2:16: OG863"]),  # pragma on an existing line, with a test change
        (PROD_PRAGMA.replace("# pragma: no cover", "#pragma:no cover"), TEST_CHANGED, ["src/pkg/core.py:2:16: OG863"]),
        (PROD_PRAGMA, TEST, []),  # its own change: reviewed alone
        (PROD + "\n\ndef debug():  # pragma: no cover\n    print(1)\n", TEST_CHANGED, []),  # a new line
        (PROD.replace("w * h", "h * w"), TEST_CHANGED, []),
    ],
)
def test_pragma_no_cover_on_existing_production_lines(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, prod: str, test: str, expected: list[str]
) -> None:
    repo.write("src/pkg/core.py", PROD)
    repo.write("tests/test_core.py", TEST)
    repo.commit("base")
    repo.write("src/pkg/core.py", prod)
    repo.write("tests/test_core.py", test)
    assert [" ".join(f.split()[:2]) for f in findings(repo, monkeypatch)] == expected


# iniconfig reads the pytest section as pytest does (issue 11, item 6)
@pytest.mark.parametrize(
    ("new", "expected"),
    [
        ("[pytest]\nAddopts = --lf\n", []),  # pytest's keys are case-sensitive: it ignores `Addopts`
        ("[pytest]\naddopts = -q\n# addopts = --lf\n", []),  # a comment line
        ("[pytest]\naddopts = -q\n    --lf\n", ["OG851"]),  # a continuation line is part of the value
        ("[PYTEST]\naddopts = --lf\n", []),  # so are section names
    ],
)
def test_pytest_ini_is_read_as_pytest_reads_it(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, new: str, expected: list[str]
) -> None:
    repo.write("pytest.ini", "[pytest]\naddopts = -q\n", dedent=False)
    repo.commit("base")
    repo.write("pytest.ini", new, dedent=False)
    assert [f.split()[1] for f in findings(repo, monkeypatch)] == expected


def test_a_duplicate_key_is_refused_as_pytest_refuses_it(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("pytest.ini", "[pytest]\naddopts = -q\n", dedent=False)
    repo.commit("base")
    repo.write("pytest.ini", "[pytest]\naddopts = -q\naddopts = --lf\n", dedent=False)
    with pytest.raises(
        pytest_config.UsageError,
        match=r"pytest.ini:3: duplicate name 'addopts' \(pytest's INI reader, iniconfig, refuses it",
    ):
        findings(repo, monkeypatch)


def test_the_reader_finds_commands_in_every_runner() -> None:
    workflow = "env:\n  PYTEST_ADDOPTS: -q\njobs:\n  t:\n    steps:\n      - name: pytest --lf (a name, not a command)\n        run: |\n          python -O -m pytest \\\n            --reruns 2 tests\n"
    read = runners.read(".github/workflows/ci.yml", workflow)
    assert [(c.line, c.tool, c.args, c.interpreter) for c in read.commands] == [
        (8, "pytest", ("--reruns", "2", "tests"), ("-O",))
    ]
    assert read.pytest_arguments() == [(8, ["--reruns", "2", "tests"]), (2, ["-q"])]
    nox = "ARGS = ['--lf']\n\ndef t(session):\n    session.run('pytest', *ARGS, *session.posargs)\n"
    assert [c.args for c in runners.read("noxfile.py", nox).commands] == [("--lf",)]
    make = "OPTS := -x\nOPTS += --sw\ntest:\n\t@$(PY) -m pytest $(OPTS)\n"
    assert [c.args for c in runners.read("Makefile", make).commands] == [("-x", "--sw")]
    assert [
        c.args
        for c in runners.read(
            "scripts/t.sh", "pip install pytest-rerunfailures\ncoverage run -m pytest --lf && coverage report\n"
        ).commands
    ] == [("run", "-m", "pytest", "--lf"), ("--lf",), ("report",)]


@pytest.mark.parametrize("extra", [[], ["--skip", "collection-snapshot"]], ids=["check", "check-static-only"])
def test_oracle_guard_check_reaches_every_switch_rule(
    repo: Repo, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    from oracle_guard.commands.check import main

    repo.write("tests/test_a.py", "import pytest\n\n\ndef test_a():\n    assert 2 + 2 == 4\n")
    repo.write(".github/workflows/ci.yml", WF.format("pytest -q"))
    repo.write("pytest.ini", "[pytest]\naddopts = -q --cov-fail-under=90\n", dedent=False)
    repo.commit("base")
    repo.write(
        "tests/test_a.py", "import pytest\n\n\n@pytest.mark.flaky(reruns=3)\ndef test_a():\n    assert 2 + 2 == 4\n"
    )
    repo.write(".github/workflows/ci.yml", WF.format("python -O -m pytest -q --snapshot-update"))
    repo.write("pytest.ini", "[pytest]\naddopts = -q --cov-fail-under=50 --lf --reruns 2\n", dedent=False)
    repo.stage()
    code = repo.run(main, *extra)
    out = capsys.readouterr().out
    assert code == 1
    for expected in (
        "tests/test_a.py:4:2: OG110",
        ".github/workflows/ci.yml:5:1: OG861",
        ".github/workflows/ci.yml:5:1: OG864",
        "pytest.ini:2:1: OG860",
        "pytest.ini:2:1: OG862",
        "pytest.ini:2:1: OG851",
    ):
        assert expected in out, out


READER = (
    "tests/test_render.py",
    "import os\n\n\ndef test_render():\n    assert os.environ.get('UPDATE_GOLDENS', '0') in ('0', '1')\n",
)


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        ("def pytest_configure(config):\n    config.option.reruns = 3\n", ["OG860"]),
        ("def pytest_configure(config):\n    setattr(config.option, 'force_regen', True)\n", ["OG861"]),
        ("def pytest_configure(config):\n    config.option.snapshot_update = True\n", ["OG861"]),
        ("def pytest_configure(config):\n    config.option.no_cov = True\n", ["OG862"]),
        ("import os\n\nos.environ['UPDATE_GOLDENS'] = '1'\n", ["OG861"]),
        (
            "from approvaltests import set_default_reporter\nfrom approvaltests.reporters import ReporterThatAutomaticallyApproves\n\nset_default_reporter(ReporterThatAutomaticallyApproves())\n",
            ["OG861"],
        ),
        # honest twins
        ("def pytest_configure(config):\n    config.option.reruns = 0\n", []),
        ("def pytest_configure(config):\n    config.option.verbose = 2\n", []),
        ("def pytest_configure(config):\n    if config.option.snapshot_update == True:\n        pass\n", []),
        ("import os\n\nos.environ['UPDATE_GOLDENS'] = '0'\n", []),
        ("import os\n\nos.environ['TZ'] = 'UTC'\n", []),
    ],
)
def test_switches_flipped_in_a_conftest(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, new: str, expected: list[str]
) -> None:
    repo.write(*READER)
    repo.write("tests/conftest.py", "import os\n")
    repo.commit("base")
    repo.write("tests/conftest.py", new)
    assert [f.split()[1] for f in findings(repo, monkeypatch)] == expected


def test_a_lower_rerun_count_set_in_a_conftest_passes(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("tests/conftest.py", "def pytest_configure(config):\n    config.option.reruns = 3\n")
    repo.commit("base")
    repo.write("tests/conftest.py", "def pytest_configure(config):\n    config.option.reruns = 1\n")
    assert findings(repo, monkeypatch) == []


def test_a_regeneration_variable_nobody_else_reads_passes(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("tests/conftest.py", "import os\n")
    repo.commit("base")
    repo.write("tests/conftest.py", "import os\n\nos.environ['UPDATE_GOLDENS'] = '1'\n")
    assert findings(repo, monkeypatch) == []


def test_switches_spelled_in_strings_and_comments_of_test_code_pass(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found on this project's own history: tests that hold such code as data."""
    repo.write(*READER)
    repo.write("tests/test_data.py", "X = 1\n")
    repo.commit("base")
    repo.write(
        "tests/test_data.py",
        'CODE = "def pytest_configure(config):\\n    config.option.reruns = 3\\n"\nNAME = "ReporterThatAutomaticallyApproves"\n# config.option.force_regen = True\nENV = "os.environ[\'UPDATE_GOLDENS\'] = \'1\'"\n',
    )
    assert findings(repo, monkeypatch) == []


def test_the_reader_finds_environment_in_every_ci_dialect() -> None:
    circle = "jobs:\n  t:\n    environment:\n      - PYTEST_ADDOPTS=--lf\n    steps:\n      - run:\n          command: pytest -q\n"
    read = runners.read(".circleci/config.yml", circle)
    assert [(e.line, e.name, e.value) for e in read.env] == [(4, "PYTEST_ADDOPTS", "--lf")]
    assert [c.args for c in read.commands] == [("-q",)]
    azure = "variables:\n  - name: PYTHONOPTIMIZE\n    value: '1'\nsteps:\n  - script: python -m pytest\n"
    read = runners.read("azure-pipelines.yml", azure)
    assert [(e.name, e.value) for e in read.env] == [("PYTHONOPTIMIZE", "1")] and [c.tool for c in read.commands] == [
        "pytest"
    ]
    gitlab = "variables:\n  REGENERATE:\n    value: '1'\n    description: rewrite goldens\n"
    assert [(e.name, e.value) for e in runners.read(".gitlab-ci.yml", gitlab).env] == [("REGENERATE", "1")]
    broken = "jobs: [\n  run: pytest --lf\n"  # not YAML: read line by line, never silently empty
    assert [c.args for c in runners.read(".github/workflows/ci.yml", broken).commands] == [("--lf",)]
    script = 'cmd="python -m pytest -vv"\n$cmd || $cmd --lf\n'
    assert [(c.args, c.ignored) for c in runners.read("scripts/ci.sh", script).commands] == [
        (("-vv",), "|| python -m pytest -vv --lf"),
        (("-vv", "--lf"), ""),
    ]
