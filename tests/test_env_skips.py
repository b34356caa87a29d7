"""Skips and collection ignores whose condition depends only on the environment.

Where a collection snapshot is committed at the base, a new skipif (or
collect_ignore entry) that depends only on the platform, the Python version
or whether a module imports is left to the collection layer with a notice:
collection-snapshot evaluates it where the snapshot is recorded (OG802 when
the test now skips there), the pytest plugin where the tests run.  Anything
else keeps its static finding.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from oracle_guard.contract.snapshot import format_snapshot, parse_snapshot
from oracle_guard.hook_ids import collection_snapshot, forbid_skip_marks
from tests.helpers import Repo

T = "tests/test_io.py"
SNAP = "tests/collection_snapshot.txt"

BASE = """\
import importlib.util
import os
import platform
import sys
import time

import pytest

from tests._compat import is_py311_plus

try:
    import orjson
except ImportError:
    orjson = None

try:
    __import__("cbor2")
except ImportError:
    NO_CBOR2 = True
else:
    NO_CBOR2 = False

NO_MSGSPEC = platform.python_implementation() == "PyPy"
FLAG = True
FROM_ENV = os.environ.get("NO_NET")


def test_read():
    assert len("ab") == 2
"""
COMPAT = "import sys\n\nis_py311_plus = sys.version_info >= (3, 11)\n"

ENVIRONMENT = [
    ("platform", 'pytest.mark.skipif(sys.platform == "win32", reason="posix only")', "the platform"),
    ("os-name", 'pytest.mark.skipif(os.name == "nt", reason="posix only")', "the platform"),
    ("python-version", 'pytest.mark.skipif(sys.version_info < (3, 10), reason="3.10+")', "the Python version"),
    ("version-major", "pytest.mark.skipif(sys.version_info.major < 3, reason='py3')", "the Python version"),
    ("implementation", 'pytest.mark.skipif(NO_MSGSPEC, reason="no msgspec on PyPy")', "the Python version"),
    ("try-import-none", 'pytest.mark.skipif(orjson is None, reason="needs orjson")', "whether a module imports"),
    ("try-import-flag", 'pytest.mark.skipif(NO_CBOR2, reason="needs cbor2")', "whether a module imports"),
    (
        "find-spec",
        'pytest.mark.skipif(importlib.util.find_spec("numpy") is None, reason="numpy")',
        "whether a module imports",
    ),
    ("imported-from-project", 'pytest.mark.skipif(not is_py311_plus, reason="3.11+")', "the Python version"),
    ("string-condition", "pytest.mark.skipif(\"sys.platform == 'darwin'\")", "the platform"),
    ("startswith", 'pytest.mark.skipif(sys.platform.startswith("win"), reason="posix")', "the platform"),
    (
        "both",
        'pytest.mark.skipif(sys.platform == "win32" and sys.version_info < (3, 12), reason="x")',
        "the Python version and the platform",
    ),
    ("conditional-xfail", 'pytest.mark.xfail(platform.system() == "Darwin", reason="macOS bug")', "the platform"),
]
NOT_ENVIRONMENT = [
    ("constant-true", "pytest.mark.skipif(True, reason='x')"),
    ("true-everywhere", 'pytest.mark.skipif(sys.platform == "win32" or True, reason="x")'),
    ("plain-skip", "pytest.mark.skip(reason='later')"),
    ("environment-variable", 'pytest.mark.skipif(os.environ.get("CI") == "1", reason="x")'),
    ("getenv", 'pytest.mark.skipif(not os.getenv("DB"), reason="x")'),
    ("bound-to-environment-variable", "pytest.mark.skipif(FROM_ENV, reason='x')"),
    (
        "mixed-with-environment-variable",
        'pytest.mark.skipif(sys.platform == "win32" and "CI" in os.environ, reason="x")',
    ),
    ("clock", "pytest.mark.skipif(time.time() > 0, reason='x')"),
    ("file", 'pytest.mark.skipif(not os.path.exists("/etc/hosts"), reason="x")'),
    ("names-nothing", "pytest.mark.skipif(FLAG, reason='x')"),
    ("string-reading-the-environment", "pytest.mark.skipif(\"os.environ.get('CI')\")"),
    ("xfail-without-condition", "pytest.mark.xfail(reason='flaky')"),
]


def _mark(repo: Repo, mark: str, snapshot: bool) -> list[str]:
    before = {T: BASE, "tests/_compat.py": COMPAT, "tests/__init__.py": ""}
    if snapshot:
        before[SNAP] = format_snapshot({f"{T}::test_read": "run"}).decode()
    return repo.change(before, {T: BASE.replace("def test_read():", f"@{mark}\ndef test_read():")})


@pytest.mark.parametrize("name, mark, kinds", ENVIRONMENT, ids=[e[0] for e in ENVIRONMENT])
def test_environment_skip_is_a_notice_where_a_snapshot_is_committed(
    repo: Repo, name: str, mark: str, kinds: str
) -> None:
    code, out, err, _ = repo.hook(forbid_skip_marks.main, *_mark(repo, mark, snapshot=True))
    assert (code, out) == (0, "")
    assert f"notice: {T}:28:2: new " in err and f"depends only on {kinds}; left to collection-snapshot" in err, err


@pytest.mark.parametrize("name, mark, kinds", ENVIRONMENT[:3], ids=[e[0] for e in ENVIRONMENT[:3]])
def test_environment_skip_stays_a_finding_without_a_snapshot(repo: Repo, name: str, mark: str, kinds: str) -> None:
    code, out, _, _ = repo.hook(forbid_skip_marks.main, *_mark(repo, mark, snapshot=False))
    assert code == 1
    assert (
        out.startswith(f"{T}:28:2: OG101 new skipif mark")
        and f"depends only on {kinds}: commit a collection snapshot" in out
    ), out


@pytest.mark.parametrize("name, mark", NOT_ENVIRONMENT, ids=[e[0] for e in NOT_ENVIRONMENT])
def test_other_conditions_stay_a_finding_with_a_snapshot(repo: Repo, name: str, mark: str) -> None:
    code, out, err, _ = repo.hook(forbid_skip_marks.main, *_mark(repo, mark, snapshot=True))
    assert code == 1 and out.startswith(f"{T}:28:2: OG101 new ") and "depends only" not in out, out
    assert "left to collection-snapshot" not in err


def test_environment_skip_through_unittest_and_a_shared_mark(repo: Repo) -> None:
    base = BASE + "\n\nclass TestIO(unittest.TestCase):\n    def test_write(self):\n        self.assertTrue(True)\n"
    base = base.replace("import time\n", "import time\nimport unittest\n")
    new = base.replace(
        "    def test_write", '    @unittest.skipIf(sys.platform == "win32", "posix")\n    def test_write'
    )
    new = new.replace(
        "FLAG = True\n", 'FLAG = True\nposix_only = pytest.mark.skipif(os.name == "nt", reason="posix")\n'
    )
    new = new.replace("def test_read():", "@posix_only\ndef test_read():")
    paths = repo.change({T: base, "tests/_compat.py": COMPAT, SNAP: "run   x\n"}, {T: new})
    code, out, err, _ = repo.hook(forbid_skip_marks.main, *paths)
    assert (code, out) == (0, ""), out
    assert err.count("left to collection-snapshot") == 2, err  # the shared mark where it is used, the unittest skip


CONFTEST = """\
import os
import sys

collect_ignore = ["setup.py"]
collect_ignore_glob = []
"""


@pytest.mark.parametrize(
    "added, finding",
    [
        ('if sys.version_info < (3, 12):\n    collect_ignore_glob.append("*_695.py")\n', False),
        ('if platform.python_implementation() == "PyPy":\n    collect_ignore_glob.append("*_cpython.py")\n', False),
        ('if sys.platform == "win32":\n    collect_ignore += ["test_posix.py"]\n', False),
        ('collect_ignore_glob.append("*_695.py")\n', True),
        ('if os.environ.get("QUICK"):\n    collect_ignore_glob.append("test_slow*.py")\n', True),
        ('if sys.version_info < (3, 12) or True:\n    collect_ignore_glob.append("*_695.py")\n', True),
    ],
    ids=["python-version", "implementation", "platform", "unconditional", "environment-variable", "true-everywhere"],
)
def test_collect_ignore_under_an_environment_condition(
    repo: Repo, capsys: pytest.CaptureFixture[str], added: str, finding: bool
) -> None:
    conftest = CONFTEST.replace("import os\n", "import os\nimport platform\n")
    repo.change({"tests/conftest.py": conftest, SNAP: "run   x\n"}, {"tests/conftest.py": conftest + added})
    code = repo.run(collection_snapshot.main, "--static-only")
    out = capsys.readouterr()
    if finding:
        assert code == 1 and ": OG857 new collection ignore" in out.out and "depends only" not in out.out, out
    else:
        assert (code, out.out) == (0, ""), out
        assert "OG801 where it ignores tests of the snapshot" in out.err, out.err


def test_collect_ignore_under_an_environment_condition_is_a_finding_without_a_snapshot(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    added = 'if sys.version_info < (3, 12):\n    collect_ignore_glob.append("*_695.py")\n'
    repo.change({"tests/conftest.py": CONFTEST}, {"tests/conftest.py": CONFTEST + added})
    code = repo.run(collection_snapshot.main, "--static-only")
    out = capsys.readouterr().out
    assert (
        code == 1
        and "tests/conftest.py:7:32: OG857" in out
        and "depends only on the Python version: commit a collection snapshot" in out
    ), out


# -- the collection layer decides: real pytest ---------------------------------------

PLAIN = """\
import sys

import pytest


def test_read():
    assert len("ab") == 2
"""


@pytest.fixture
def project(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> Repo:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    repo.write("tests/test_io.py", PLAIN, dedent=False)
    repo.write(SNAP, format_snapshot({f"{T}::test_read": "run"}))
    repo.commit("baseline")
    return repo


@pytest.mark.slow
def test_environment_skip_true_in_the_snapshot_environment_is_og802(project: Repo) -> None:
    project.write(
        T,
        PLAIN.replace(
            "def test_read", f"@pytest.mark.skipif(sys.platform == {sys.platform!r}, reason='x')\ndef test_read"
        ),
        dedent=False,
    )
    code, out = project.staged_hook(collection_snapshot.main, "--python", sys.executable).said
    assert code == 1 and f"OG802 test now skipped at collection (was run): {T}::test_read" in out, out


@pytest.mark.slow
def test_environment_skip_false_in_the_snapshot_environment_passes_and_is_recorded(project: Repo) -> None:
    project.write(
        T,
        PLAIN.replace("def test_read", "@pytest.mark.skipif(sys.platform == 'no-such-os', reason='x')\ndef test_read"),
        dedent=False,
    )
    code, out = project.staged_hook(collection_snapshot.main, "--python", sys.executable).said
    assert code == 0 and "OG8" not in out and "staged it with this commit" in out, out  # recorded like a new test
    assert {k: v[0] for k, v in parse_snapshot((project.path / SNAP).read_bytes(), SNAP).items()} == {
        f"{T}::test_read": "skip-if-env"
    }
    project.commit("record it")
    project.write(
        T,
        PLAIN.replace("def test_read", "@pytest.mark.skipif(sys.platform != 'no-such-os', reason='x')\ndef test_read"),
        dedent=False,
    )
    code, out = project.staged_hook(
        collection_snapshot.main, "--python", sys.executable
    ).said  # the same test skipped here now: weaker than skip-if-env
    assert code == 1 and f"OG802 test now skipped at collection (was skip-if-env): {T}::test_read" in out, out


# -- the run-time plugin: skip-if-env lets the recorded condition skip, nothing else ----------


def _pytest(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-q", "-rs"],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTEST_ADDOPTS": ""},
    )


def _plugin_project(tmp_path: Path, test: str, status: str) -> Path:
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    files = {
        "pytest.ini": "[pytest]\n",
        "tests/agent_contract.yaml": "version: 1\n",
        "tests/test_io.py": test,
        SNAP: format_snapshot({f"{T}::test_read": status}).decode(),
    }
    for rel, text in files.items():
        (root / rel).write_text(textwrap.dedent(text), encoding="utf-8")
    return root


# True where this suite runs: the "other environment" the snapshot did not see.
HERE = f"sys.platform == {sys.platform!r}"


@pytest.mark.slow
@pytest.mark.parametrize(
    "mark, status, passes",
    [
        (f"@pytest.mark.skipif({HERE}, reason='not here')", "skip-if-env", True),
        (f"@pytest.mark.skipif({HERE!r})", "skip-if-env", True),
        (f"@pytest.mark.xfail({HERE}, reason='not here')", "skip-if-env", True),
        (f"@pytest.mark.skipif({HERE}, reason='not here')", "run", False),
        ("@pytest.mark.skip(reason='later')", "skip-if-env", False),
        (
            "@pytest.mark.skipif(sys.platform == 'no-such-os', reason='x')\n@pytest.mark.skip(reason='later')",
            "skip-if-env",
            False,
        ),
        ("@pytest.mark.xfail(reason='later')", "skip-if-env", False),
    ],
    ids=[
        "skipif",
        "string-skipif",
        "conditional-xfail",
        "recorded-as-run",
        "plain-skip",
        "plain-skip-beside-a-skipif",
        "plain-xfail",
    ],
)
def test_plugin_lets_the_recorded_condition_skip_and_nothing_else(
    tmp_path: Path, mark: str, status: str, passes: bool
) -> None:
    test = f"import sys\n\nimport pytest\n\n\n{mark}\ndef test_read():\n    assert len('ab') == 3\n"
    proc = _pytest(_plugin_project(tmp_path, test, status))
    if passes:
        assert proc.returncode == 0, proc.stdout
    else:
        assert proc.returncode == 1 and "session failed" in proc.stdout, proc.stdout


@pytest.mark.slow
def test_plugin_fails_a_runtime_skip_in_a_skip_if_env_test(tmp_path: Path) -> None:
    test = "import sys\n\nimport pytest\n\n\n@pytest.mark.skipif(sys.platform == 'no-such-os', reason='x')\ndef test_read():\n    pytest.skip('not today')\n"
    proc = _pytest(_plugin_project(tmp_path, test, "skip-if-env"))
    assert proc.returncode == 1 and f"SKIPPED {T}::test_read" in proc.stdout, proc.stdout


@pytest.mark.slow
def test_plugin_fails_a_module_skipped_at_collection_whose_tests_are_skip_if_env(tmp_path: Path) -> None:
    test = (
        "import sys\n\nimport pytest\n\npytest.importorskip('no_such_module_here')\n\n\n"
        "@pytest.mark.skipif(sys.platform == 'no-such-os', reason='x')\ndef test_read():\n    assert True\n"
    )
    root = _plugin_project(tmp_path, test, "skip-if-env")
    (root / "tests/test_ok.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    proc = _pytest(root)
    assert proc.returncode == 1 and f"SKIPPED {T}: not skipped/xfailed in the snapshot" in proc.stdout, proc.stdout
