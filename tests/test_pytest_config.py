"""Static collection checks: pytest configuration, conftest files and CI command lines."""

from __future__ import annotations

import argparse

import pytest

from oracle_guard.pytest_side.config import compare as pytest_config
from oracle_guard.repo import changes
from tests.helpers import Repo


def findings(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    repo.stage()
    monkeypatch.chdir(repo.path)
    return [f.text() for f in pytest_config.check(changes.resolve(argparse.Namespace(base=None)))]


# (file, base content, new content, expected code or None for an honest change)
CASES = [
    (
        "pytest.ini",
        "[pytest]\naddopts = -ra\n",
        "[pytest]\naddopts = -ra --deselect tests/test_a.py::test_x\n",
        "OG851",
    ),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra -q --tb=short\n", None),
    (
        "pytest.ini",
        "[pytest]\naddopts = --hypothesis-profile=ci\n",
        "[pytest]\naddopts = --hypothesis-profile=dev\n",
        "OG851",
    ),
    (
        "pytest.ini",
        "[pytest]\naddopts = --hypothesis-profile=ci\n",
        "[pytest]\naddopts = --hypothesis-profile=ci -q\n",
        None,
    ),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", '[pytest]\naddopts = -ra -k "not slow"\n', "OG851"),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", '[pytest]\naddopts = -ra -m "not network"\n', "OG851"),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra --ignore=tests/test_slow.py\n", "OG851"),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra --ignore-glob=*_slow.py\n", "OG851"),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra -p no:cacheprovider\n", None),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra -p no:doctest\n", "OG851"),
    ("pytest.ini", "[pytest]\naddopts = -ra --deselect a.py::t\n", "[pytest]\naddopts = -ra\n", None),
    ("pytest.ini", "[pytest]\naddopts = --doctest-modules\n", "[pytest]\naddopts = -q\n", "OG851"),
    ("pytest.ini", "[pytest]\ntestpaths = tests docs\n", "[pytest]\ntestpaths = tests\n", "OG852"),
    ("pytest.ini", "[pytest]\ntestpaths = tests\n", "[pytest]\ntestpaths = tests docs\n", None),
    ("pytest.ini", "[pytest]\naddopts = -q\n", "[pytest]\naddopts = -q\ntestpaths = tests/unit\n", "OG852"),
    ("pytest.ini", "[pytest]\n", "[pytest]\npython_files = test_*.py\n", "OG853"),
    ("pytest.ini", "[pytest]\n", "[pytest]\npython_files = test_*.py *_test.py check_*.py\n", None),
    ("pytest.ini", "[pytest]\n", "[pytest]\npython_functions = test_fast\n", "OG853"),
    ("pytest.ini", "[pytest]\n", "[pytest]\nnorecursedirs = .* build tests/slow\n", "OG854"),
    ("pytest.ini", "[pytest]\nxfail_strict = true\n", "[pytest]\nxfail_strict = false\n", "OG855"),
    ("pytest.ini", "[pytest]\nxfail_strict = false\n", "[pytest]\nxfail_strict = true\n", None),
    # found on attrs (redteam): pytest 9's `strict = true` includes xfail_strict
    ("pyproject.toml", "[tool.pytest]\nstrict = true\n", "[tool.pytest]\nstrict = false\n", "OG855"),
    ("pyproject.toml", "[tool.pytest]\nstrict = true\n", "[tool.pytest]\nstrict = false\nxfail_strict = true\n", None),
    ("pytest.ini", "[pytest]\nstrict = true\n", "[pytest]\nxfail_strict = true\n", None),
    (
        "pytest.ini",
        "[pytest]\nfilterwarnings =\n    error\n",
        "[pytest]\nfilterwarnings =\n    ignore::DeprecationWarning\n",
        "OG856",
    ),
    (
        "pytest.ini",
        "[pytest]\nfilterwarnings =\n    error\n",
        "[pytest]\nfilterwarnings =\n    error\n    default::ResourceWarning\n",
        None,
    ),
    (
        "pyproject.toml",
        '[tool.pytest.ini_options]\naddopts = "-ra"\n',
        '[tool.pytest.ini_options]\naddopts = "-ra --deselect tests/test_a.py::test_x"\n',
        "OG851",
    ),
    (
        "pyproject.toml",
        '[tool.pytest.ini_options]\naddopts = "-ra"\n',
        '[tool.pytest.ini_options]\naddopts = ["-ra", "-k", "not slow"]\n',
        "OG851",
    ),
    (
        "pyproject.toml",
        '[tool.pytest.ini_options]\ntestpaths = ["tests", "docs"]\n',
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
        "OG852",
    ),
    (
        "pyproject.toml",
        '[project]\nname = "x"\n[tool.pytest.ini_options]\naddopts = "-ra"\n',
        '[project]\nname = "x"\nversion = "2"\n[tool.pytest.ini_options]\naddopts = "-ra"\n',
        None,
    ),
    ("setup.cfg", "[tool:pytest]\naddopts = -ra\n", "[tool:pytest]\naddopts = -ra --deselect t.py::a\n", "OG851"),
    ("tox.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra --continue-on-collection-errors\n", "OG851"),
    ("tox.ini", "[testenv]\ncommands = pytest tests\n", "[testenv]\ncommands = pytest tests -k 'not slow'\n", "OG859"),
    ("tox.ini", "[testenv]\ncommands = pytest tests\n", "[testenv]\ncommands = pytest tests -q\n", None),
    ("conftest.py", "import pytest\n", "import pytest\ncollect_ignore = ['test_slow.py']\n", "OG857"),
    ("conftest.py", "collect_ignore = ['setup.py']\n", "collect_ignore = ['setup.py']\n\nX = 1\n", None),
    ("conftest.py", "collect_ignore = []\n", "collect_ignore = []\ncollect_ignore.append('test_x.py')\n", "OG857"),
    (
        "conftest.py",
        "import pytest\n",
        "def pytest_ignore_collect(collection_path, config):\n    return 'slow' in str(collection_path)\n",
        "OG858",
    ),
    (
        "conftest.py",
        "def pytest_collection_modifyitems(items):\n    items.sort(key=str)\n",
        "def pytest_collection_modifyitems(items):\n    items.sort(key=str)\n    items[:] = [i for i in items if 'slow' not in i.name]\n",
        "OG858",
    ),
    (
        "conftest.py",
        "def pytest_collection_modifyitems(items):\n    items.sort(key=str)\n",
        "def pytest_collection_modifyitems(items):\n    items.sort(key=lambda i: i.nodeid)\n",
        None,
    ),
    (
        "conftest.py",
        "import pytest\n",
        "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n    for item in items:\n        item.add_marker(pytest.mark.integration)\n",
        None,
    ),
    (
        "conftest.py",
        "import pytest\n",
        "def pytest_collection_modifyitems(config, items):\n    config.hook.pytest_deselected(items=items[1:])\n    del items[1:]\n",
        "OG858",
    ),
    (
        ".github/workflows/ci.yml",
        "jobs:\n  t:\n    steps:\n      - run: pytest -q\n",
        "jobs:\n  t:\n    steps:\n      - run: pytest -q --deselect tests/test_a.py::test_x\n",
        "OG859",
    ),
    (
        ".github/workflows/ci.yml",
        "jobs:\n  t:\n    steps:\n      - run: pytest -q\n",
        "jobs:\n  t:\n    steps:\n      - run: python -m pytest -q -n auto\n",
        None,
    ),
    (
        "noxfile.py",
        "def tests(s):\n    s.run('pytest')\n",
        "def tests(s):\n    s.run('pytest', '-m', 'not slow')\n",
        "OG859",
    ),
    (
        "noxfile.py",
        "def tests(s):\n    s.run('pytest')\n",
        "def tests(s):\n    s.run('pytest', '-x', '--tb=short')\n",
        None,
    ),
]


@pytest.mark.parametrize(("path", "base", "new", "expected"), CASES)
def test_configuration_changes(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, path: str, base: str, new: str, expected: str | None
) -> None:
    repo.write(path, base, dedent=False)
    repo.commit("base")
    repo.write(path, new, dedent=False)
    found = findings(repo, monkeypatch)
    if expected is None:
        assert found == []
    else:
        assert found and all(f"{expected} " in f for f in found), found
        assert all(f.startswith(f"{path}:") for f in found)


def test_invalid_toml_is_a_usage_error(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-q'\n")
    repo.commit("base")
    repo.write("pyproject.toml", "[tool.pytest.ini_options\n")
    with pytest.raises(pytest_config.UsageError, match="pyproject.toml: invalid TOML"):
        findings(repo, monkeypatch)


def test_no_config_change_reads_nothing(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("tests/test_a.py", "def test_a():\n    assert 1 + 1 == 2\n")
    repo.commit("base")
    repo.write("src/x.py", "X = 1\n")
    assert findings(repo, monkeypatch) == []
