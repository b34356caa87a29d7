"""The run-time gate cannot be switched off, blinded or lied to from the patch.

Static half (OG870-OG876, real git repositories): each attack next to the
nearest honest change.  Run-time half (real pytest subprocesses, slow): the
plugin fails closed when its contract or its options were tampered with, and
fails the session when a report's outcome differs from what the call raised.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from oracle_guard.pytest_side.config import compare as pytest_config
from oracle_guard.repo import changes
from tests.helpers import Repo

CONTRACT = "version: 1\n"
PASSING = "def test_ok():\n    assert 1 + 1 == 2\n"
FAILING = "def test_bad():\n    assert 1 + 1 == 3\n"


def findings(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    repo.stage()
    monkeypatch.chdir(repo.path)
    return [f.text() for f in pytest_config.check(changes.resolve(argparse.Namespace(base=None)))]


def codes(found: list[str]) -> list[str]:
    return sorted(f.split(" ")[1] for f in found)


WORKFLOW = "jobs:\n  t:\n    steps:\n      - run: pytest -q\n"
WORKFLOW_ENV = "jobs:\n  t:\n    env:\n      PYTEST_ADDOPTS: {value}\n    steps:\n      - run: pytest -q\n"

# (path, base, new, expected codes); [] = the honest twin passes.
CONFIG_CASES = [
    # the gate's own options and plugin names, in every file pytest or CI reads
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra --oracle-guard-allow-skips\n", ["OG870"]),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra -p no:oracle_guard\n", ["OG870"]),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra -pno:oracle_guard_sentinel\n", ["OG870"]),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra -p no:oracle_guard_gate\n", ["OG870"]),
    (
        "pytest.ini",
        "[pytest]\naddopts = -ra\n",
        "[pytest]\naddopts = -ra --oracle-guard-contract=tests/other.yaml\n",
        ["OG870"],
    ),
    (
        "pytest.ini",
        "[pytest]\naddopts = -ra\n",
        "[pytest]\naddopts = -ra --oracle-guard-now=2020-01-01T00:00:00Z\n",
        ["OG870"],
    ),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra -p no:cacheprovider -q\n", []),
    (
        "pytest.ini",
        "[pytest]\naddopts = -ra --oracle-guard-allow-skips\n",
        "[pytest]\naddopts = -ra --oracle-guard-allow-skips -q\n",
        [],
    ),
    (
        "pyproject.toml",
        '[tool.pytest.ini_options]\naddopts = "-ra"\n',
        '[tool.pytest.ini_options]\naddopts = ["-ra", "-p", "no:oracle_guard"]\n',
        ["OG870"],
    ),
    # setup.cfg is not the file pytest picks while pytest.ini exists: still refused (`-c` or a later deletion picks it)
    (
        "setup.cfg",
        "[metadata]\nname = x\n",
        "[metadata]\nname = x\n[tool:pytest]\naddopts = --oracle-guard-allow-skips\n",
        ["OG870"],
    ),
    ("setup.cfg", "[metadata]\nname = x\n", "[metadata]\nname = x\nversion = 2\n", []),
    (
        "tox.ini",
        "[testenv]\ncommands = pytest\n",
        "[testenv]\nsetenv =\n    PYTEST_ADDOPTS=-p no:oracle_guard\ncommands = pytest\n",
        ["OG870"],
    ),
    (
        "tox.ini",
        "[testenv]\ncommands = pytest\n",
        "[testenv]\nsetenv =\n    PYTEST_DISABLE_PLUGIN_AUTOLOAD=1\ncommands = pytest\n",
        ["OG870"],
    ),
    ("tox.ini", "[testenv]\ncommands = pytest\n", "[testenv]\nsetenv =\n    PYTHONHASHSEED=0\ncommands = pytest\n", []),
    (".github/workflows/ci.yml", WORKFLOW, WORKFLOW_ENV.format(value="--oracle-guard-allow-skips"), ["OG870"]),
    (".github/workflows/ci.yml", WORKFLOW, WORKFLOW_ENV.format(value="-p no:oracle_guard"), ["OG870"]),
    (".github/workflows/ci.yml", WORKFLOW, WORKFLOW_ENV.format(value="--noconftest"), ["OG871"]),
    (".github/workflows/ci.yml", WORKFLOW, WORKFLOW_ENV.format(value="--tb=short"), []),
    (
        ".github/workflows/ci.yml",
        WORKFLOW,
        "jobs:\n  t:\n    env:\n      PYTEST_DISABLE_PLUGIN_AUTOLOAD: 1\n    steps:\n      - run: pytest -q\n",
        ["OG870"],
    ),
    (
        ".github/workflows/ci.yml",
        WORKFLOW,
        "jobs:\n  t:\n    steps:\n      - run: pytest -q --disable-plugin-autoload\n",
        ["OG870"],
    ),
    (
        ".github/workflows/ci.yml",
        WORKFLOW,
        "jobs:\n  t:\n    steps:\n      - run: pytest -q --rootdir=/tmp\n",
        ["OG871"],
    ),
    (
        ".github/workflows/ci.yml",
        WORKFLOW,
        "jobs:\n  t:\n    steps:\n      - run: pytest -q -c ci/pytest.ini\n",
        ["OG871"],
    ),
    (
        ".github/workflows/ci.yml",
        WORKFLOW,
        "jobs:\n  t:\n    steps:\n      - run: |\n          pytest -q \\\n            -o python_files=none.py\n",
        ["OG871"],
    ),
    (
        ".github/workflows/ci.yml",
        WORKFLOW,
        "jobs:\n  t:\n    steps:\n      - run: pytest -q -o console_output_style=classic\n",
        [],
    ),
    # a folded YAML string: the option is on a line of its own (read by oracle_guard/pytest_side/runners/files.py)
    (
        ".github/workflows/ci.yml",
        WORKFLOW,
        "jobs:\n  t:\n    steps:\n      - run: >\n          pytest -q\n          --noconftest\n",
        ["OG871"],
    ),
    (
        ".github/workflows/ci.yml",
        WORKFLOW,
        "jobs:\n  t:\n    steps:\n      - run: >\n          pytest -q\n          --tb=short\n",
        [],
    ),
    # -c of another tool on the same line is not pytest's
    (".github/workflows/ci.yml", WORKFLOW, "jobs:\n  t:\n    steps:\n      - run: mypy -c 'x = 1' && pytest -q\n", []),
    (".github/workflows/ci.yml", WORKFLOW, "jobs:\n  t:\n    steps:\n      - run: python -m pytest -q -n auto\n", []),
    # the gate switched on explicitly, then dropped
    (
        ".github/workflows/ci.yml",
        "jobs:\n  t:\n    steps:\n      - run: pytest -q --oracle-guard\n",
        WORKFLOW,
        ["OG870"],
    ),
    (
        ".github/workflows/ci.yml",
        "jobs:\n  t:\n    steps:\n      - run: pytest -q --oracle-guard\n",
        "jobs:\n  t:\n    steps:\n      - run: pytest -q --oracle-guard --tb=short\n",
        [],
    ),
    ("Makefile", "test:\n\tpytest\n", "export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1\ntest:\n\tpytest\n", ["OG870"]),
    ("Makefile", "test:\n\tpytest\n", "test:\n\tpytest --noconftest\n", ["OG871"]),
    ("Makefile", "test:\n\tpytest\n", "test:\n\tpytest -x\n", []),
    (
        "pytest.ini",
        "[pytest]\naddopts = -ra\n",
        "[pytest]\naddopts = -ra --setup-plan\n",
        ["OG851"],
    ),  # one finding, not two
    ("Makefile", "test:\n\tpytest\n", "test:\n\tpytest --setup-only\n", ["OG859"]),
    (
        "pytest.toml",
        "[pytest]\naddopts = ['-ra']\n",
        "[pytest]\naddopts = ['-ra', '-p', 'no:oracle_guard']\n",
        ["OG870"],
    ),
    ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra --version\n", ["OG871"]),
    (
        ".github/workflows/ci.yml",
        WORKFLOW,
        "jobs:\n  t:\n    steps:\n      - run: pytest --version\n      - run: pytest -q\n",
        [],
    ),
    (
        "Makefile",
        "test:\n\tpytest\nversion:\n\tpython --version\n",
        "test:\n\tpytest\nversion:\n\tpython --version\n\tpip --version\n",
        [],
    ),
    (
        "noxfile.py",
        "def tests(s):\n    s.run('pytest')\n",
        "def tests(s):\n    s.run('pytest', '-p', 'no:oracle_guard')\n",
        ["OG870"],
    ),
    (".env", "A=1\n", "A=1\nPYTEST_ADDOPTS=--oracle-guard-allow-skips\n", ["OG870"]),
    # a config file below the root becomes the rootdir for its tests
    ("tests/pytest.ini", None, "[pytest]\naddopts = -q\n", ["OG872"]),
    ("tests/plugins_integration/pytest.ini", None, "[pytest]\naddopts = -q\n", ["OG872"]),
    ("sub/pyproject.toml", None, '[project]\nname = "sub"\n', []),
    (
        "tests/data/broken/pyproject.toml",
        None,
        "[tool.pytest.ini_options\naddopts = \n",
        [],
    ),  # test data, not configuration
]


@pytest.mark.parametrize(("path", "base", "new", "expected"), CONFIG_CASES)
def test_gate_switches_in_configuration(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, path: str, base: str | None, new: str, expected: list[str]
) -> None:
    repo.write("tests/test_a.py", PASSING)
    repo.write("tests/agent_contract.yaml", CONTRACT)
    if base is not None:
        repo.write(path, base, dedent=False)
    repo.commit("base")
    repo.write(path, new, dedent=False)
    found = findings(repo, monkeypatch)
    assert codes(found) == expected, found
    assert all("OG87" not in f or f.startswith(f"{path}:") for f in found), found


def test_root_pytest_ini_shadowing_pyproject(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("pyproject.toml", '[tool.pytest.ini_options]\naddopts = "-p oracle_guard_pytest"\nxfail_strict = true\n')
    repo.commit("base")
    repo.write("pytest.ini", "[pytest]\naddopts = -q\n")
    found = findings(repo, monkeypatch)
    assert any("OG872 pytest now reads pytest.ini instead of pyproject.toml, and addopts" in f for f in found), found


def test_root_pytest_ini_that_carries_every_setting_over_passes(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write(
        "pyproject.toml", '[project]\nname = "x"\n[tool.pytest.ini_options]\naddopts = "-ra"\nxfail_strict = true\n'
    )
    repo.commit("base")
    repo.write("pyproject.toml", '[project]\nname = "x"\n')
    repo.write("pytest.ini", "[pytest]\naddopts = -ra --strict-markers\nxfail_strict = true\n")
    assert findings(repo, monkeypatch) == []  # found on attrs: tox.ini -> pyproject.toml with one more option


def test_moving_a_gate_option_between_ci_files_passes(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write(".github/workflows/a.yml", "jobs:\n  t:\n    steps:\n      - run: pytest --oracle-guard\n")
    repo.commit("base")
    repo.remove(".github/workflows/a.yml")
    repo.write(".github/workflows/b.yml", "jobs:\n  u:\n    steps:\n      - run: pytest -q --oracle-guard\n")
    assert findings(repo, monkeypatch) == []


# -- the contract stops being a file ----------------------------------------------


def test_contract_turned_into_a_symlink(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("tests/agent_contract.yaml", CONTRACT)
    repo.write("tests/weak.yaml", CONTRACT)
    repo.commit("base")
    (repo.path / "tests/agent_contract.yaml").unlink()
    os.symlink("weak.yaml", repo.path / "tests/agent_contract.yaml")
    assert codes(findings(repo, monkeypatch)) == ["OG873"]


def test_contract_turned_into_a_directory(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("tests/agent_contract.yaml", CONTRACT)
    repo.commit("base")
    (repo.path / "tests/agent_contract.yaml").unlink()
    repo.write("tests/agent_contract.yaml/x", "y\n")
    found = findings(repo, monkeypatch)
    assert codes(found) == ["OG873"] and "now a directory" in found[0], found


def test_contract_emptied(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("tests/agent_contract.yaml", CONTRACT)
    repo.commit("base")
    repo.write("tests/agent_contract.yaml", "\n")
    assert codes(findings(repo, monkeypatch)) == ["OG873"]


def test_contract_edited_as_a_file_is_not_this_rule(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("tests/agent_contract.yaml", CONTRACT)
    repo.commit("base")
    repo.write("tests/agent_contract.yaml", "version: 1  # the contract\n")
    assert findings(repo, monkeypatch) == []


# -- conftest and plugin code --------------------------------------------------------

FIXTURE = "import pytest\n\n\n@pytest.fixture\ndef db():\n    return {}\n"
REPORT_RECIPE = """\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)
"""

CODE_CASES = [
    # outcome rewriting
    (
        "makereport-outcome",
        "@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    rep = outcome.get_result()\n    if rep.failed:\n        rep.outcome = 'passed'\n",
        ["OG875"],
    ),
    (
        "makereport-new-style",
        "@pytest.hookimpl(wrapper=True)\ndef pytest_runtest_makereport(item, call):\n    rep = yield\n    setattr(rep, 'outcome', 'skipped')\n    return rep\n",
        ["OG875"],
    ),
    (
        "makereport-force",
        "@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    outcome.force_result(None)\n",
        ["OG875"],
    ),
    (
        "makereport-plain",
        "from _pytest.reports import TestReport\n\n\ndef pytest_runtest_makereport(item, call):\n    return TestReport(item.nodeid, item.location, {}, 'passed', None, call.when)\n",
        ["OG875"],
    ),
    (
        "call-swallowed",
        "@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_call(item):\n    try:\n        yield\n    except Exception:\n        pass\n",
        ["OG875"],
    ),
    ("pyfunc-skipped", "def pytest_pyfunc_call(pyfuncitem):\n    return True\n", ["OG875"]),
    ("protocol-skipped", "def pytest_runtest_protocol(item, nextitem):\n    return True\n", ["OG875"]),
    ("runtestloop", "def pytest_runtestloop(session):\n    return True\n", ["OG875"]),
    (
        "teststatus",
        "def pytest_report_teststatus(report, config):\n    if report.failed:\n        return 'passed', '.', 'PASSED'\n",
        ["OG875"],
    ),
    ("exitstatus", "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n", ["OG875"]),
    (
        "testsfailed",
        "@pytest.hookimpl(trylast=True)\ndef pytest_runtest_logreport(report):\n    import builtins\n    builtins.session.testsfailed = 0\n",
        ["OG875"],
    ),
    (
        "makeitem-empty",
        "def pytest_pycollect_makeitem(collector, name, obj):\n    if name.startswith('test_slow'):\n        return []\n",
        ["OG875"],
    ),
    (
        "runtest-replaced",
        "def pytest_collection_modifyitems(items):\n    for item in items:\n        item.runtest = lambda: None\n",
        ["OG875"],
    ),
    (
        "obj-replaced",
        "def pytest_collection_modifyitems(items):\n    for item in items:\n        item.obj = lambda *a, **k: None\n",
        ["OG875"],
    ),
    ("session-items", "def pytest_collection_finish(session):\n    session.items = []\n", ["OG875"]),
    # process exits
    ("os-exit", "import os\n\n\ndef pytest_sessionfinish(session):\n    os._exit(0)\n", ["OG876"]),
    (
        "sys-exit-alias",
        "from sys import exit as leave\n\n\ndef pytest_sessionfinish(session):\n    leave(0)\n",
        ["OG876"],
    ),
    ("raise-systemexit", "def pytest_sessionfinish(session):\n    raise SystemExit(0)\n", ["OG876"]),
    ("pytest-exit", "def pytest_collection_finish(session):\n    pytest.exit('done', returncode=0)\n", ["OG876"]),
    (
        "exits-failing",
        "import sys\n\n\ndef pytest_terminal_summary(terminalreporter):\n    if terminalreporter.stats.get('leak'):\n        pytest.exit('leaked', returncode=1)\n\n\ndef pytest_unconfigure(config):\n    if config.stash.get('bad', False):\n        sys.exit('bad state')\n        raise SystemExit(3)\n",
        [],
    ),
    ("pytest-exit-default", "def pytest_collection_finish(session):\n    pytest.exit('interrupted')\n", []),
    # switching the gate off from code
    (
        "unregister",
        "def pytest_configure(config):\n    config.pluginmanager.unregister(name='oracle_guard_gate')\n",
        ["OG874", "OG874"],
    ),
    (
        "set-blocked",
        "def pytest_configure(config):\n    config.pluginmanager.set_blocked('oracle' + '_guard')\n",
        ["OG874"],
    ),
    ("option-set", "def pytest_configure(config):\n    config.option.oracle_guard_allow_skips = True\n", ["OG874"]),
    ("option-setattr", "def pytest_configure(config):\n    setattr(config.option, 'collectonly', True)\n", ["OG874"]),
    (
        "gate-monkeypatched",
        "import oracle_guard_pytest\n\noracle_guard_pytest.tampered_options = lambda config: []\n",
        ["OG874"],
    ),
    (
        "gate-read",
        "def pytest_configure(config):\n    if config.option.oracle_guard_allow_skips:\n        print('local run')\n",
        ["OG874"],
    ),
    (
        "exec",
        "import os\nimport sys\n\n\ndef pytest_configure(config):\n    os.execv(sys.executable, [sys.executable, '-m', 'pytest', '-p', 'no:randomly'])\n",
        ["OG876"],
    ),
    # found on pytest's own testing/conftest.py: the variables reach only nested runs
    ("nested-run-env", "import os\n\nos.environ['PYTEST_DISABLE_PLUGIN_AUTOLOAD'] = '1'\n", []),
    # honest twins: a fixture, the documented report recipe, markers, reporting, reading options
    ("fixture", FIXTURE.replace("import pytest\n", ""), []),
    ("report-recipe", REPORT_RECIPE.replace("import pytest\n", ""), []),
    (
        "markers",
        "def pytest_collection_modifyitems(items):\n    for item in items:\n        item.add_marker(pytest.mark.integration)\n",
        [],
    ),
    (
        "terminal-summary",
        "def pytest_terminal_summary(terminalreporter, exitstatus):\n    terminalreporter.write_line(f'exit {exitstatus}')\n",
        [],
    ),
    (
        "getoption",
        "def pytest_configure(config):\n    if config.getoption('verbose') > 1:\n        config.addinivalue_line('markers', 'slow: slow')\n",
        [],
    ),
    (
        "teststatus-custom",
        "def pytest_report_teststatus(report, config):\n    if report.when == 'call' and getattr(report, 'flaky', False):\n        return 'flaky', 'F', 'FLAKY'\n",
        [],
    ),
    (
        "wrapper-reraises",
        "@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_call(item):\n    try:\n        yield\n    except Exception:\n        item.config.stash['seen'] = True\n        raise\n",
        [],
    ),
    (
        "pyfunc-wrapper-times",
        "import time\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_pyfunc_call(pyfuncitem):\n    start = time.perf_counter()\n    yield\n    pyfuncitem.user_properties.append(('t', time.perf_counter() - start))\n",
        [],
    ),
    (
        "verbose-from-code",
        "def pytest_configure(config):\n    if config.getoption('verbose') < 1:\n        config.option.verbose = 1\n",
        [],
    ),
    ("markexpr-from-code", "def pytest_configure(config):\n    config.option.markexpr = 'not slow'\n", ["OG874"]),
    (
        "helper-class-state",
        "class FakeRun:\n    def finish(self, code):\n        self.exitstatus = code\n        self.outcome = 'passed'\n",
        [],
    ),
    ("plugin-class-self", "class Recorder:\n    def __init__(self, function):\n        self.function = function\n", []),
]


@pytest.mark.parametrize(("name", "code", "expected"), CODE_CASES, ids=[c[0] for c in CODE_CASES])
def test_conftest_code(repo: Repo, monkeypatch: pytest.MonkeyPatch, name: str, code: str, expected: list[str]) -> None:
    repo.write("tests/test_a.py", PASSING)
    repo.write("tests/conftest.py", FIXTURE)
    repo.commit("base")
    repo.write("tests/conftest.py", FIXTURE + "\n\n" + code, dedent=False)
    found = findings(repo, monkeypatch)
    assert codes(found) == expected, found
    assert all(f.startswith("tests/conftest.py:") for f in found), found


def test_the_same_hook_already_at_the_base_passes(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    hook = "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0 if exitstatus == 5 else exitstatus\n"
    repo.write("tests/test_a.py", PASSING)
    repo.write("conftest.py", "import pytest\n\n\n" + hook)
    repo.commit("base")
    # an unrelated edit beside it, and the hook moved to the tests' conftest
    repo.remove("conftest.py")
    repo.write("tests/conftest.py", FIXTURE + "\n\n" + hook)
    assert findings(repo, monkeypatch) == []


def test_the_same_hook_changed_to_tamper_is_refused(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("tests/test_a.py", PASSING)
    repo.write(
        "conftest.py",
        "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0 if exitstatus == 5 else exitstatus\n",
    )
    repo.commit("base")
    repo.write("conftest.py", "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n")
    assert codes(findings(repo, monkeypatch)) == ["OG875"]


def test_plugin_module_newly_loaded_through_pytest_plugins(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    plugin = "def pytest_runtest_makereport(item, call):\n    return None\n\n\ndef pytest_runtestloop(session):\n    return True\n"
    repo.write("tests/test_a.py", PASSING)
    repo.write("tests/helpers/quiet.py", plugin)  # at the base already, but not loaded
    repo.write("tests/conftest.py", FIXTURE)
    repo.commit("base")
    repo.write("tests/conftest.py", FIXTURE + "\npytest_plugins = ['tests.helpers.quiet']\n")
    found = findings(repo, monkeypatch)
    assert codes(found) == ["OG875"] and found[0].startswith("tests/helpers/quiet.py:6:"), found


def test_plugin_module_newly_loaded_through_dash_p(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("tests/test_a.py", PASSING)
    repo.write("pytest.ini", "[pytest]\naddopts = -q\n")
    repo.commit("base")
    repo.write("quiet_plugin.py", "import os\n\n\ndef pytest_unconfigure(config):\n    os._exit(0)\n")
    repo.write("pytest.ini", "[pytest]\naddopts = -q -p quiet_plugin\n")
    found = findings(repo, monkeypatch)
    assert codes(found) == ["OG876"] and found[0].startswith("quiet_plugin.py:5:"), found


def test_installed_plugin_newly_loaded_and_honest_local_plugin_pass(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write("tests/test_a.py", PASSING)
    repo.write("pytest.ini", "[pytest]\naddopts = -q\n")
    repo.commit("base")
    repo.write(
        "timing_plugin.py", "def pytest_terminal_summary(terminalreporter):\n    terminalreporter.write_line('done')\n"
    )
    repo.write("pytest.ini", "[pytest]\naddopts = -q -p timing_plugin -p pytest_asyncio\n")
    assert findings(repo, monkeypatch) == []


def test_loaded_plugin_edited_to_tamper(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("tests/test_a.py", PASSING)
    repo.write("tests/conftest.py", "pytest_plugins = ['tests.plug']\n")
    repo.write(
        "tests/plug.py", "def pytest_terminal_summary(terminalreporter):\n    terminalreporter.write_line('done')\n"
    )
    repo.commit("base")
    repo.write("tests/conftest.py", "pytest_plugins = ['tests.plug']\nX = 1\n")
    repo.write(
        "tests/plug.py",
        "def pytest_terminal_summary(terminalreporter):\n    terminalreporter.write_line('done')\n\n\ndef pytest_sessionfinish(session):\n    session.exitstatus = 0\n",
    )
    assert codes(findings(repo, monkeypatch)) == ["OG875"]


def test_unparsable_conftest_is_a_finding(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("tests/test_a.py", PASSING)
    repo.commit("base")
    repo.write("tests/conftest.py", "def pytest_configure(config:\n")
    assert "OG001" in codes(findings(repo, monkeypatch))


# -- run time: real pytest subprocesses ------------------------------------------------


def run_pytest(root: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        # Hypothesis's plugin is not under test and costs ~1.5 s of CPU to import.
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-q", *args],
        cwd=cwd or root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTEST_ADDOPTS": ""},
    )


def project(root: Path, files: dict[str, str], contract: bool = True) -> Path:
    base = {"pytest.ini": "[pytest]\n", "tests/test_a.py": FAILING + "\n\n" + PASSING}
    if contract:
        base["tests/agent_contract.yaml"] = CONTRACT
    for rel, text in {**base, **files}.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def fails_closed(proc: subprocess.CompletedProcess[str], message: str) -> None:
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert "ERROR: oracle-guard: " in output and message in output, output
    assert output.count("ERROR: oracle-guard: ") == 1 or "tampering" in output, output  # one line, not one per test
    assert "INTERNALERROR" not in output and "Traceback" not in output, output


HOOKIMPL = "import pytest\n\n\n"
# Each of these makes a failing suite exit 0 when the gate is not there.
TAMPERING = {
    "makereport-rewrite": (
        HOOKIMPL
        + "@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    report = outcome.get_result()\n    if report.failed:\n        report.outcome = 'passed'\n",
        "tests/test_a.py::test_bad: the call raised AssertionError but its report says passed",
    ),
    "call-swallowed": (
        HOOKIMPL
        + "@pytest.hookimpl(wrapper=True)\ndef pytest_runtest_call(item):\n    try:\n        return (yield)\n    except Exception:\n        return None\n",
        "tests/test_a.py::test_bad: the call raised AssertionError but its report says passed",
    ),
    "logreport-rewrite": (
        HOOKIMPL
        + "@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_logreport(report):\n    if report.failed:\n        report.outcome = 'passed'\n    yield\n",
        "tests/test_a.py::test_bad: its call report was changed from failed to passed after it was made",
    ),
    "exitstatus-reset": (
        HOOKIMPL + "@pytest.hookimpl(trylast=True)\ndef pytest_sessionfinish(session):\n    session.exitstatus = 0\n",
        "the session was about to exit 0 with 1 failed test(s)",
    ),
    "exitstatus-reset-in-wrapper": (
        HOOKIMPL
        + "@pytest.hookimpl(hookwrapper=True, tryfirst=True)\ndef pytest_sessionfinish(session):\n    yield\n    session.exitstatus = 0\n",
        "the session was about to exit 0 with 1 failed test(s)",
    ),
    "runtestloop-replaced": (
        "def pytest_runtestloop(session):\n    return True\n",
        "tests/test_a.py::test_bad: collected but never run (2 test(s) in all)",
    ),
    "collect-only-set-late": (
        "def pytest_sessionstart(session):\n    session.config.option.collectonly = True\n",
        "tests/test_a.py::test_bad: collected but never run",
    ),
    "pytest-exit-0": (
        HOOKIMPL + "def pytest_collection_finish(session):\n    pytest.exit('done', returncode=0)\n",
        "tests/test_a.py::test_bad: collected but never run",
    ),
    "system-exit": (
        "def pytest_sessionfinish(session):\n    raise SystemExit(0)\n",
        "the process is leaving through SystemExit before the pytest session finished",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TAMPERING))
def test_outcome_tampering_fails_the_session(tmp_path: Path, name: str) -> None:
    conftest, message = TAMPERING[name]
    unguarded = run_pytest(project(tmp_path / "without", {"tests/conftest.py": conftest}, contract=False))
    assert unguarded.returncode == 0, unguarded.stdout + unguarded.stderr  # the attack works where the gate is off
    fails_closed(run_pytest(project(tmp_path / "with", {"tests/conftest.py": conftest})), message)


HONEST = """\
import unittest

import pytest


@pytest.mark.xfail(reason="bug")
def test_xfail_fails():
    assert 0


@pytest.mark.xfail(reason="bug")
def test_xfail_passes():
    assert 1


@pytest.mark.xfail(reason="bug", strict=True)
def test_xfail_strict_passes():
    assert 1


@pytest.mark.xfail(run=False, reason="crashes")
def test_xfail_not_run():
    assert 0


def test_imperative_xfail():
    pytest.xfail("later")


def test_imperative_skip():
    pytest.skip("later")


@pytest.fixture
def broken():
    raise RuntimeError("setup")


def test_setup_error(broken):
    assert broken


@pytest.fixture
def bad_teardown():
    yield
    raise RuntimeError("teardown")


def test_teardown_error(bad_teardown):
    assert bad_teardown is None


def test_subtests(subtests):
    for i in range(3):
        with subtests.test(i=i):
            assert i < 2


class T(unittest.TestCase):
    def test_fail(self):
        self.assertEqual(1, 2)

    def test_error(self):
        raise ValueError

    def test_skiptest(self):
        self.skipTest("no")

    @unittest.expectedFailure
    def test_expected(self):
        self.assertEqual(1, 2)

    def test_subtest(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertLess(i, 2)
"""


@pytest.mark.slow
def test_legitimate_outcome_changes_are_not_tampering(tmp_path: Path) -> None:
    """xfail of every kind, skips raised in the test, unittest errors, skips and subtests, fixture errors."""
    root = project(tmp_path, {"tests/test_h.py": HONEST})
    proc = run_pytest(root, "--oracle-guard-allow-skips", "-rA")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the real failures
    assert "oracle-guard" not in proc.stdout + proc.stderr, proc.stdout
    assert (
        "XFAIL tests/test_h.py::test_xfail_fails" in proc.stdout
        and "FAILED tests/test_h.py::T::test_fail" in proc.stdout
    )


@pytest.mark.slow
def test_honest_conftest_hooks_pass(tmp_path: Path) -> None:
    conftest = REPORT_RECIPE + (
        "\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_call(item):\n    yield\n    item.user_properties.append(('seen', True))\n"
        "\n\ndef pytest_collection_modifyitems(items):\n    for item in items:\n        item.add_marker(pytest.mark.integration)\n"
        "\n\ndef pytest_sessionfinish(session, exitstatus):\n    session.config.stash.get\n"
    )
    root = project(
        tmp_path,
        {"tests/conftest.py": conftest, "tests/test_a.py": PASSING, "pytest.ini": "[pytest]\nmarkers = integration\n"},
    )
    proc = run_pytest(root)
    assert proc.returncode == 0 and "oracle-guard" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["--fixtures", "--fixtures-per-test", "--setup-plan"])
def test_information_modes_are_not_tampering(tmp_path: Path, mode: str) -> None:
    proc = run_pytest(project(tmp_path, {}), mode)
    assert proc.returncode == 0 and "oracle-guard" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr


@pytest.mark.slow
def test_frozen_reruns_are_not_tampering(tmp_path: Path) -> None:
    flaky = "from pathlib import Path\n\nSEEN = Path(__file__).with_name('seen')\n\n\ndef test_flaky():\n    first = not SEEN.exists()\n    SEEN.write_text('x')\n    assert not first\n"
    freeze = 'version: 1\nfreezes:\n  - id: test_flaky\n    owner: oncall\n    reason: clock skew\n    expires: "2026-12-05T00:00:00Z"\n    remaining_reruns: 2\n'
    root = project(tmp_path, {"tests/test_a.py": flaky, "tests/agent_contract.yaml": freeze})
    proc = run_pytest(root, "--oracle-guard-now", "2026-12-02T00:00:00Z")
    assert proc.returncode == 0 and "tampering" not in proc.stdout, proc.stdout + proc.stderr


# -- run time: the gate cannot be switched off or pointed elsewhere ------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("-p", "no:oracle_guard"),
            "the run-time gate is switched off (`-p no:oracle_guard`) while tests/agent_contract.yaml exists",
        ),
        (("-p", "no:oracle_guard_gate"), "its plugin 'oracle_guard_gate' is blocked"),
        (("-p", "no:oracle_guard_watch"), "its plugin 'oracle_guard_watch' is blocked"),
        (("-p", "no:oracle_guard_recorder"), "oracle-guard's recorder is blocked"),
        (
            ("--oracle-guard-contract", "tests/none.yaml"),
            "--oracle-guard-contract tests/none.yaml: no such file under the rootdir",
        ),
        (("--rootdir", "tests"), "is not under pytest's rootdir"),
        (("-c", "ci/other.ini"), "is not under pytest's rootdir"),
        (("--noconftest",), "--noconftest drops the project's conftest files"),
    ],
    ids=[
        "no-entry-point",
        "no-gate",
        "no-watch",
        "no-recorder",
        "missing-contract",
        "rootdir",
        "other-ini",
        "noconftest",
    ],
)
def test_switching_the_gate_off_fails_closed(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    root = project(tmp_path, {"ci/other.ini": "[pytest]\n", "tests/test_a.py": PASSING, "tests/conftest.py": FIXTURE})
    fails_closed(run_pytest(root, *args), message)


@pytest.mark.slow
def test_honest_runs_keep_the_gate(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {"tests/test_a.py": PASSING, "tests/test_s.py": "import pytest\n\n\ndef test_s():\n    pytest.skip('later')\n"},
    )
    assert run_pytest(root, "-p", "no:randomly").returncode == 1  # the gate is on: the new skip fails
    assert run_pytest(root, "--oracle-guard-allow-skips").returncode == 0  # the local escape, given by the user
    assert run_pytest(root, "--oracle-guard-allow-skips", "--noconftest").returncode == 0  # no conftest to drop
    from_tests = run_pytest(root, cwd=root / "tests")  # rootdir from the root pytest.ini
    assert from_tests.returncode == 1 and "skipped or xfailed without a freeze entry" in from_tests.stdout, (
        from_tests.stdout
    )


@pytest.mark.slow
def test_a_config_file_below_the_root_cannot_hide_the_contract(tmp_path: Path) -> None:
    root = project(tmp_path, {"tests/pytest.ini": "[pytest]\n"})
    fails_closed(run_pytest(root, "tests"), "is not under pytest's rootdir")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("conftest", "option"),
    [
        (
            "def pytest_configure(config):\n    config.option.oracle_guard_allow_skips = True\n",
            "--oracle-guard-allow-skips",
        ),
        (
            "def pytest_configure(config):\n    config.option.oracle_guard_contract = 'tests/weak.yaml'\n",
            "--oracle-guard-contract",
        ),
        ("def pytest_configure(config):\n    config.option.collectonly = True\n", "--collectonly"),
    ],
    ids=["allow-skips", "contract", "collect-only"],
)
def test_gate_options_set_by_a_conftest_fail_closed(tmp_path: Path, conftest: str, option: str) -> None:
    root = project(tmp_path, {"tests/conftest.py": conftest, "tests/weak.yaml": CONTRACT})
    fails_closed(run_pytest(root), f"{option} was changed by a conftest or plugin")


@pytest.mark.slow
def test_unregistering_the_gate_fails_the_session(tmp_path: Path) -> None:
    conftest = "def pytest_sessionstart(session):\n    pm = session.config.pluginmanager\n    pm.unregister(pm.get_plugin('oracle_guard_gate'))\n"
    root = project(tmp_path, {"tests/conftest.py": conftest, "tests/test_a.py": PASSING})
    fails_closed(run_pytest(root), "the session: oracle-guard's gate was unregistered")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["directory", "symlink", "fifo", "empty"])
def test_contract_that_is_not_a_file_fails_closed(tmp_path: Path, kind: str) -> None:
    root = project(tmp_path, {"tests/test_a.py": PASSING, "tests/weak.yaml": CONTRACT}, contract=False)
    target = root / "tests/agent_contract.yaml"
    if kind == "directory":
        target.mkdir()
    elif kind == "symlink":
        target.symlink_to("weak.yaml")
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.write_text("\n")
    expected = {
        "directory": "is a directory",
        "symlink": "is a symlink",
        "fifo": "is not a regular file",
        "empty": "the contract is empty",
    }[kind]
    fails_closed(run_pytest(root), f"tests/agent_contract.yaml: {expected}" if kind != "empty" else expected)


@pytest.mark.slow
def test_snapshot_that_is_a_directory_fails_closed(tmp_path: Path) -> None:
    root = project(tmp_path, {"tests/test_a.py": PASSING})
    (root / "tests/collection_snapshot.txt").mkdir()
    fails_closed(run_pytest(root), "tests/collection_snapshot.txt: cannot read it (Is a directory)")


def test_hooks_imported_into_a_conftest_are_judged(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("tests/test_a.py", PASSING)
    repo.write(
        "tests/helpers.py",
        "def pytest_sessionfinish(session):\n    session.exitstatus = 0\n\n\ndef make():\n    return 1\n",
    )
    repo.write("tests/conftest.py", "from .helpers import make\n")
    repo.commit("base")
    repo.write("tests/conftest.py", "from .helpers import make, pytest_sessionfinish\n")
    found = findings(repo, monkeypatch)
    assert codes(found) == ["OG875"] and found[0].startswith("tests/helpers.py:2:"), found


def test_a_config_file_below_the_root_without_a_contract_passes(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found on pytest's history (testing/plugins_integration/pytest.ini): no contract, no gate to hide."""
    repo.write("tests/test_a.py", PASSING)
    repo.commit("base")
    repo.write("testing/plugins_integration/pytest.ini", "[pytest]\naddopts = -q\n")
    assert findings(repo, monkeypatch) == []
