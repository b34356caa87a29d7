"""Bad contract values end in one line and exit 2 (or a finding), within seconds and 200 MB: never a hang.

Every case runs the real command in a subprocess under a time limit and an address-space limit
(contract_helpers.run_bounded), so a reader that walks without end is caught, not waited for.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oracle_guard.repo import paths
from tests.contract_helpers import CONTRACT, Bounded, run_bounded, sha
from tests.helpers import Repo

SECONDS = 10
MEGABYTES = 200
PROPERTY = (
    "from hypothesis import given, strategies as st\n\nfrom calc import double\n\n\n"
    "@given(st.integers())\ndef test_a(x):\n    assert double(x) == x + x\n"
)
FIXTURE = b'{"total": 3}\n'
COMMANDS = {
    "check": ("-m", "oracle_guard", "check"),
    "hook": ("-m", "oracle_guard", "hook", "--python", sys.executable),
    "properties-monotonic": ("-m", "oracle_guard.hook_ids.properties_monotonic"),
    "fixture-lock-verify": ("-m", "oracle_guard.hook_ids.fixture_lock_verify"),
    "quarantine-untouched": ("-m", "oracle_guard.hook_ids.quarantine_untouched"),
}


def _contract(module: str = "tests.test_a", name: str = "test_a") -> str:
    return (
        "version: 1\nproperties:\n"
        f"  - {{id: p, module: {json.dumps(module)}, name: {json.dumps(name)}, min_examples: 5}}\n"
        f"fixtures:\n  - {{id: f, path: tests/fixtures/a.json, sha256: {sha(FIXTURE)}}}\n"
    )


def _project(path: Path) -> Repo:
    repo = Repo(path)
    repo.git("init", "-q", "-b", "main")
    repo.git("config", "user.email", "t@example.com")
    repo.git("config", "user.name", "t")
    repo.write("calc.py", "def double(x):\n    return 2 * x\n")
    repo.write("tests/test_a.py", PROPERTY)
    repo.write("tests/fixtures/a.json", FIXTURE)
    repo.write(CONTRACT, _contract())
    repo.commit("base")
    return repo


def _run(repo: Repo, command: str) -> Bounded:
    return run_bounded((sys.executable, *COMMANDS[command]), repo.path, SECONDS, MEGABYTES)


def _assert_bounded(ran: Bounded, what: str) -> None:
    said = ran.out + ran.err
    assert ran.code is not None, f"{what}: still running after {SECONDS} s (killed)"
    assert ran.code in (0, 1, 2) and "Traceback" not in said, f"{what}: exit {ran.code}\n{said}"
    assert ran.peak_mb < MEGABYTES, f"{what}: {ran.peak_mb:.0f} MB"
    if ran.code == 2:  # one error line (notices about other things may stand beside it)
        errors = [line for line in ran.err.splitlines() if not line.startswith("oracle-guard: notice:")]
        assert len(errors) == 1 and errors[0].startswith("oracle-guard: error: "), f"{what}: {ran.err}"


@pytest.mark.parametrize(
    "path, folders",
    [
        ("tests/unit/test_x.py", ["tests/unit", "tests"]),
        ("test_x.py", []),
        ("/etc/passwd", ["/etc"]),  # absolute: a dirname loop never leaves "/"
        ("////.py", []),  # "...." as a module path: a dirname loop never leaves "////"
        ("a//b.py", ["a"]),
    ],
)
def test_the_walk_up_ends_on_any_path(path: str, folders: list[str]) -> None:
    assert paths.folders_above(path) == folders
    assert paths.conftests_above(path) == [f"{f}/conftest.py" for f in folders] + ["conftest.py"]


BAD_MODULES = ["....", "../../etc/passwd"]


@pytest.mark.parametrize("command", ["check", "hook", "properties-monotonic"])
@pytest.mark.parametrize("module", BAD_MODULES)
def test_a_module_that_is_no_dotted_name_is_refused_in_one_line(tmp_path: Path, module: str, command: str) -> None:
    repo = _project(tmp_path)
    repo.write(CONTRACT, _contract(module))
    repo.stage()
    ran = _run(repo, command)
    _assert_bounded(ran, f"{command} on module {module!r}")
    # The gate, `oracle-guard hook` and one pre-commit hook judge the change's broken contract against it
    # (OG927), never exit 2 (a single hook's exit 2 was read as "not judged" by a CI running it alone).
    assert ran.code == 1, ran.out + ran.err
    assert f"{CONTRACT}:3:21: OG927 the change's contract does not load ('module' must be a dotted" in ran.out, ran.out


@pytest.mark.parametrize("module", BAD_MODULES)
def test_a_base_contract_with_such_a_module_fails_closed_in_one_line(tmp_path: Path, module: str) -> None:
    repo = _project(tmp_path)
    repo.write(CONTRACT, _contract(module))
    repo.commit("a contract written by hand")
    repo.write(CONTRACT, _contract())  # the change mends it: the base's contract is still what judges it
    repo.stage()
    ran = _run(repo, "check")
    _assert_bounded(ran, f"base module {module!r}")
    assert ran.code == 2 and "at the base revision does not load" in ran.err, ran.err
    assert f"{CONTRACT}:3:21: 'module' must be a dotted Python name" in ran.err, ran.err


def test_the_honest_contract_passes_within_the_same_limits(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    repo.write("calc.py", "def double(x):\n    return x + x\n")
    repo.stage()
    for command in ("check", "properties-monotonic"):
        ran = _run(repo, command)
        _assert_bounded(ran, command)
        assert ran.code == 0, ran.out + ran.err


# -- a fuzz of contract values ------------------------------------------------------------------

NAMES = st.one_of(
    st.sampled_from(
        [
            *BAD_MODULES,
            "tests.test_a",
            "test_a",
            "/etc/passwd",
            "//",
            ".",
            "tests.",
            ".tests",
            "tests..test_a",
            "tests/test_a",
            "tests.test_a.test_a",
            "a" * 5000,
            ".".join(["a"] * 2000),
            "1abc",
            "class",
            "ünï",
            "tests.test_a ",
            "TestA.test_a",
        ]
    ),
    st.text(max_size=30),
)
PATHS = st.one_of(
    st.sampled_from(
        [
            "/etc/passwd",
            "../../etc/passwd",
            "....",
            "//x",
            "/",
            ".",
            "~",
            ".git/config",
            ".GIT/HEAD",
            "tests/fixtures/../../x",
            "C:/x",
            "tests/fixtures/",
            "tests/fixtures",
            "tests/fixtures/a.json",
            "tests/test_a.py",
            "a" * 300,
            "/".join(["a"] * 3000),
            "tests/" + "/".join(["..."] * 50),
        ]
    ),
    st.text(max_size=30),
)
NUMBERS = st.one_of(
    st.sampled_from(["0", "-1", "1", "3", "+3", "-0", "1e9", "0x10", "1.5", ".inf", ".nan", "null", "[]", "{}", '"3"']),
    st.integers(-(10**25), 10**25).map(str),
    st.integers(0, 10**19 - 1).map(str),  # as large as the loader takes: timedelta and range() must cope
)
INSTANTS = st.sampled_from(
    [
        '"9999-12-31T23:59:59Z"',
        '"0001-01-01T00:00:00+00:00"',
        '"2026-02-30T00:00:00Z"',
        '"2026-12-03T00:00:00+23:59"',
        '"2099-01-01T00:00:00-99:99"',
        '"2026-12-10T00:00:00Z"',
        "2026-12-10",
        '"soon"',
    ]
)


# Each key's honest value, and what the fuzz may put there instead: one to three keys out of range at
# a time, so most cases load and reach the readers (a contract with every key wrong stops at the first).
HONEST = {
    "module": '"tests.test_a"',
    "name": '"test_a"',
    "min_examples": "5",
    "fixture_path": '"tests/fixtures/a.json"',
    "expires": '"2026-12-10T00:00:00Z"',
    "remaining_reruns": "1",
    "file": '"tests/test_a.py"',
    "silent_runs_allowed": "0",
    "max_active_freezes": "3",
    "max_freeze_days": "7",
    "max_reruns": "2",
    "snapshot": '"tests/collection_snapshot.txt"',
    "approvals": '"tests/approvals"',
    "allowed_signers": "null",
    "fixture_root": '"tests/fixtures"',
    "contracts_layer": '"tests/contracts/"',
    "quarantine_layer": '"tests/quarantine/"',
}
QUOTED = {"module": NAMES, "name": NAMES}
NUMBERS_AT = ("min_examples", "remaining_reruns", "silent_runs_allowed", "max_active_freezes", "max_freeze_days")


def _value_for(key: str) -> st.SearchStrategy[str]:
    if key in QUOTED:
        return QUOTED[key].map(json.dumps)  # a YAML double-quoted scalar: any string, on one line
    if key == "expires":
        return INSTANTS
    if key in NUMBERS_AT or key == "max_reruns":
        return NUMBERS
    return PATHS.map(json.dumps)


@st.composite
def contract_texts(draw: st.DrawFn) -> str:
    wrong = draw(st.lists(st.sampled_from(sorted(HONEST)), min_size=1, max_size=3, unique=True))
    v = {key: draw(_value_for(key)) if key in wrong else honest for key, honest in HONEST.items()}
    return (
        "version: 1\nproperties:\n"
        f"  - {{id: p, module: {v['module']}, name: {v['name']}, min_examples: {v['min_examples']}}}\n"
        f"fixtures:\n  - {{id: f, path: {v['fixture_path']}, sha256: {sha(FIXTURE)}}}\n"
        "freezes:\n"
        f"  - {{id: test_a, owner: o, reason: r, expires: {v['expires']}, remaining_reruns: {v['remaining_reruns']},"
        f" file: {v['file']}, silent_runs_allowed: {v['silent_runs_allowed']}}}\n"
        f"max_active_freezes: {v['max_active_freezes']}\nmax_freeze_days: {v['max_freeze_days']}\n"
        f"max_reruns: {v['max_reruns']}\nsnapshot: {v['snapshot']}\napprovals: {v['approvals']}\n"
        f"allowed_signers: {v['allowed_signers']}\nfixture_roots: [{v['fixture_root']}]\n"
        f"layers: {{contracts: [{v['contracts_layer']}], quarantine: [{v['quarantine_layer']}]}}\n"
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return _project(tmp_path_factory.mktemp("fuzz"))


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=contract_texts(), command=st.sampled_from(sorted(COMMANDS)), at_base=st.booleans())
def test_no_contract_value_hangs_grows_or_crashes(project: Repo, text: str, command: str, at_base: bool) -> None:
    project.git("reset", "-q", "--hard", "main")
    project.git("clean", "-fdxq")
    project.write(CONTRACT, text, dedent=False)
    if at_base:  # trusted from the base: the fuzzed contract is what the change is judged by
        project.git("checkout", "-q", "-B", "fuzz")
        project.commit("fuzzed contract")
        project.write("tests/test_a.py", PROPERTY + "\n# touched\n")
    project.stage()
    try:
        _assert_bounded(_run(project, command), f"{command} ({'base' if at_base else 'new'} side) on\n{text}")
    finally:
        project.git("checkout", "-q", "-f", "main")
