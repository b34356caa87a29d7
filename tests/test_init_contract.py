"""`oracle-guard init` and `oracle-guard lock` in real repositories."""

from __future__ import annotations

import sys

import pytest

from oracle_guard.commands.init_contract import add_locks, lock_main, main
from oracle_guard.contract import contract
from oracle_guard.hook_ids.fixture_lock_verify import main as verify_main
from tests.contract_helpers import CONTRACT, sha
from tests.helpers import Repo

PROPERTY_TEST = """\
from hypothesis import given, settings, strategies as st

@settings(max_examples=40, deadline=None)
@given(st.text())
def test_roundtrip(s):
    assert s == s[::-1][::-1]
"""


@pytest.fixture
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "oracle_guard.analysis.hypothesis.model", None)  # import fails


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The real model, watched: which modules init asks about (properties-monotonic's
    rules then decide what may be locked, so the model must be the real one)."""
    from oracle_guard.analysis.hypothesis import model as hypothesis_model

    seen: list[str] = []
    real = hypothesis_model.properties_in

    def properties_in(module):  # the interface analysis/hypothesis/model.py provides
        seen.append(module.path)
        return real(module)

    monkeypatch.setattr(hypothesis_model, "properties_in", properties_in)
    return seen


def populated(repo: Repo) -> None:
    repo.write("tests/fixtures/invoice_v3.json", b'{"total": 12}\r\n')
    repo.write("tests/data/rows.csv", b"a,b\n")
    repo.write("tests/__snapshots__/test_ui.ambr", "# name: test_ui\n")
    repo.write("tests/test_ui.py", "def test_ui(snapshot):\n    assert snapshot == 1\n")
    repo.write("tests/test_report.py", "def test_report(data_regression):\n    data_regression.check({})\n")
    repo.write("tests/test_report/test_report.yml", "{}\n")
    repo.write("tests/golden/report.approved.txt", "ok\n")
    repo.write("tests/properties/test_codec.py", PROPERTY_TEST)
    repo.write("src/app.py", "x = 1\n")
    repo.commit("project")


@pytest.mark.slow
def test_init_locks_what_is_there_and_the_result_verifies(repo: Repo, capsys, no_model) -> None:
    populated(repo)
    assert repo.run(main) == 0
    out = capsys.readouterr().out
    assert (
        "wrote tests/agent_contract.yaml: 5 fixture lock(s), 0 properties" in out and "- id: fixture-lock-verify" in out
    )
    written = (repo.path / CONTRACT).read_text()
    assert "# TODO: register Hypothesis properties" in written
    c = contract.loads(written)
    assert {f.path for f in c.fixtures} == {
        "tests/__snapshots__",
        "tests/test_report",
        "tests/fixtures/invoice_v3.json",
        "tests/data/rows.csv",
        "tests/golden/report.approved.txt",
    }
    assert c.freezes == () and c.max_active_freezes == 3
    assert next(f for f in c.fixtures if f.path.endswith("invoice_v3.json")).sha256 == sha(b'{"total": 12}\r\n')
    repo.stage()
    assert repo.run(verify_main) == 0, capsys.readouterr().out


@pytest.mark.slow
def test_init_registers_properties_with_their_effective_max_examples(repo: Repo, capsys, fake_model) -> None:
    populated(repo)
    assert repo.run(main) == 0
    c = contract.loads((repo.path / CONTRACT).read_text())
    assert fake_model == ["tests/properties/test_codec.py"]
    assert [(p.module, p.name, p.min_examples) for p in c.properties] == [
        ("tests.properties.test_codec", "test_roundtrip", 40)
    ]
    assert "TODO" not in (repo.path / CONTRACT).read_text()


@pytest.mark.slow
def test_init_without_a_property_model_leaves_a_todo_even_with_no_property_files(repo: Repo, capsys, no_model) -> None:
    repo.write("tests/fixtures/a.json", b"{}")
    assert repo.run(main) == 0
    assert "# TODO: register Hypothesis properties" in (repo.path / CONTRACT).read_text()


@pytest.mark.slow
def test_init_refuses_to_overwrite_without_force(repo: Repo, capsys, no_model) -> None:
    populated(repo)
    repo.write(CONTRACT, "version: 1\n")
    assert repo.run(main) == 2
    assert "already exists; pass --force" in capsys.readouterr().err
    assert repo.run(main, "--force") == 0


def test_lock_appends_keeping_comments_and_verifies(repo: Repo, capsys) -> None:
    repo.write("tests/fixtures/a.json", b"{}")
    repo.write("tests/fixtures/b.json", b"[]")
    repo.write(
        CONTRACT,
        f"version: 1\n# keep me\nfixtures:\n  - id: a\n    path: tests/fixtures/a.json  # first\n    sha256: {sha(b'{}')}\n\nmax_active_freezes: 3\n",
    )
    assert repo.run(lock_main, "tests/fixtures/b.json", "tests/fixtures/a.json") == 0
    out = capsys.readouterr().out
    assert "already locked as 'a'" in out and "locked tests/fixtures/b.json" in out
    text = (repo.path / CONTRACT).read_text()
    assert "# keep me" in text and "# first" in text
    assert [f.path for f in contract.loads(text).fixtures] == ["tests/fixtures/a.json", "tests/fixtures/b.json"]
    repo.stage()
    assert repo.run(verify_main) == 0


def test_lock_a_changed_file_explains_the_rotation_and_changes_nothing(repo: Repo, capsys) -> None:
    repo.write("tests/fixtures/a.json", b"{}")
    before = f"version: 1\nfixtures:\n  - id: a\n    path: tests/fixtures/a.json\n    sha256: {sha(b'[]')}\n"
    repo.write(CONTRACT, before)
    assert repo.run(lock_main, "tests/fixtures/a.json") == 0
    assert f"approve fixture-rotate a {sha(b'[]')} {sha(b'{}')}" in capsys.readouterr().out
    assert (repo.path / CONTRACT).read_text() == before


@pytest.mark.parametrize(
    "text",
    [
        "version: 1\n",
        "version: 1\nfixtures:\nmax_active_freezes: 3\n",
        "version: 1\nfixtures: []\nmax_active_freezes: 3\n",
        "version: 1\nfixtures: [{id: x, path: p, sha256: " + "a" * 64 + "}]\n",
    ],
)
def test_add_locks_in_every_shape_of_fixtures(text: str) -> None:
    new = contract.Fixture("n", "tests/data/n.bin", "b" * 64)
    result = contract.loads(add_locks(text, [new]))
    assert result.fixtures[-1] == new
    assert result.fixtures[:-1] == contract.loads(text).fixtures


def test_lock_refuses_escapes_and_missing_paths(repo: Repo, capsys) -> None:
    repo.write(CONTRACT, "version: 1\n")
    assert repo.run(lock_main, "tests/fixtures/nope.json") == 2
    assert "does not exist" in capsys.readouterr().err
    assert repo.run(lock_main, "../outside") == 2
    assert "outside the repository" in capsys.readouterr().err


def test_lock_without_a_contract_says_run_init(repo: Repo, capsys) -> None:
    repo.write("tests/fixtures/a.json", b"{}")
    assert repo.run(lock_main, "tests/fixtures/a.json") == 2
    assert "run `oracle-guard init` first" in capsys.readouterr().err


def test_lock_a_directory_with_an_explicit_id(repo: Repo, capsys) -> None:
    repo.write("tests/golden/a.txt", "a\n")
    repo.write("tests/golden/b/c.txt", "c\n")
    repo.write(CONTRACT, "version: 1\nfixtures: []\n")
    assert repo.run(lock_main, "tests/golden/", "--id", "goldens") == 0
    (lock,) = contract.loads((repo.path / CONTRACT).read_text()).fixtures
    assert (lock.id, lock.path) == ("goldens", "tests/golden")
    repo.stage()
    assert repo.run(verify_main) == 0
    repo.write("tests/golden/b/c.txt", "changed\n")
    repo.stage()
    assert repo.run(verify_main) == 1
    assert "tests/golden:1:1: OG401 bytes do not match the lock 'goldens'" in capsys.readouterr().out


@pytest.mark.slow
def test_init_with_custom_roots(repo: Repo, capsys, no_model) -> None:
    repo.write("spec/vectors/v1.bin", b"\x00\x01")
    repo.write("tests/fixtures/ignored.json", b"{}")
    assert repo.run(main, "--root", "spec/vectors") == 0
    c = contract.loads((repo.path / CONTRACT).read_text())
    assert [f.path for f in c.fixtures] == ["spec/vectors/v1.bin"] and c.fixture_roots == ("spec/vectors",)


PROPERTIES = {
    # Crash-only: relies on the code's own exceptions (only ValueError may escape).
    "tests/properties/test_parse.py": """\
from hypothesis import given, strategies as st

from app import parse


@given(st.text())
def test_parse_only_raises_value_error(s):
    try:
        parse(s)
    except ValueError:
        pass


@given(st.binary())
def test_parse_never_crashes(b):
    parse(b.decode("latin-1"))


class TestRoundtrip:
    @given(st.integers())
    def test_roundtrip(self, n):
        assert int(str(n)) == n
""",
    # A profile loaded by a conftest lowers every property below Hypothesis' default 100.
    "tests/properties/conftest.py": "from hypothesis import settings\n\nsettings.register_profile('ci', max_examples=30)\nsettings.load_profile('ci')\n",
    # Truly vacuous: the hook would reject it, so init must not lock it.
    "tests/test_vacuous.py": "from hypothesis import given, strategies as st\n\n\n@given(st.text())\ndef test_nothing(s):\n    assert True\n",
}


@pytest.mark.slow
def test_init_then_every_hook_passes_on_the_untouched_repository(repo: Repo, capsys) -> None:
    from oracle_guard.commands.check import main as check_main
    from oracle_guard.commands.cli import HOOKS, load

    populated(repo)
    for path, text in PROPERTIES.items():
        repo.write(path, text)
    repo.write("src/app.py", "def parse(s):\n    return s\n")
    repo.commit("project")
    assert repo.run(main) == 0
    out = capsys.readouterr().out
    assert "not registered: tests.test_vacuous:test_nothing: OG507" in out
    c = contract.loads((repo.path / CONTRACT).read_text())
    assert {(p.name, p.min_examples) for p in c.properties} == {
        ("test_parse_only_raises_value_error", 30),
        ("test_parse_never_crashes", 30),
        ("TestRoundtrip.test_roundtrip", 30),
        ("test_roundtrip", 40),
    }
    repo.commit("oracle-guard init")
    files = repo.git("ls-files").split()
    for hook, (target, _) in sorted(HOOKS.items()):
        argv = ["--static-only"] if hook == "collection-snapshot" else files  # as pre-commit --all-files runs them
        assert repo.run(load(target), *argv) == 0, (hook, capsys.readouterr())
    assert repo.run(check_main, "--base", "HEAD~1") == 0, capsys.readouterr()
