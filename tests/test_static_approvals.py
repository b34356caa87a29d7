"""Approvals for static findings (skip-add, check-removed, expected-change) and `lock --rotate`."""

from __future__ import annotations

from pathlib import Path

import pytest

from oracle_guard.commands import check, init_contract
from oracle_guard.commands.approve import main as approve_main
from oracle_guard.hook_ids.fixture_lock_verify import main as lock_verify_main
from tests.contract_helpers import CONTRACT, approve, contract_text, fixture_entry, make_key, sha, signers_line
from tests.helpers import Repo

TEST = """\
import pytest


class TestPrice:
    def test_parse(self):
        assert parse("12.50") == 1250
        assert parse("0") == 0

    def test_garbage(self):
        with pytest.raises(ValueError, match="not a price"):
            parse("twelve")


def test_total():
    assert total([1, 2]) == 3
"""
SKIP = TEST.replace("def test_total", "@pytest.mark.skip(reason='total is being redesigned')\ndef test_total")
FEWER = TEST.replace('        assert parse("0") == 0\n', "")
BROADER = TEST.replace('ValueError, match="not a price"', 'Exception, match="not a price"')


def signed(repo: Repo, tmp_path: Path) -> Path:
    key = make_key(tmp_path)
    repo.write("tests/allowed_signers", signers_line(key))
    repo.write(CONTRACT, contract_text(extra="allowed_signers: tests/allowed_signers\n"))
    repo.write("tests/test_price.py", TEST)
    repo.commit("base: signers and the tests")
    return key


def gate(repo: Repo, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = repo.run(check.main, "--skip", "collection-snapshot", "-q")  # findings only: no success line
    return code, capsys.readouterr().out


@pytest.mark.parametrize(
    "changed, code, statement",
    [
        (SKIP, "OG101", "skip-add tests/test_price.py::test_total"),
        (FEWER, "OG301", "check-removed tests/test_price.py::TestPrice::test_parse"),
        (BROADER, "OG306", "expected-change tests/test_price.py::TestPrice::test_garbage"),
    ],
    ids=["skip-add", "check-removed", "expected-change"],
)
def test_a_signed_statement_lets_exactly_that_finding_through(
    repo: Repo, tmp_path: Path, capsys, changed: str, code: str, statement: str
) -> None:
    key = signed(repo, tmp_path)
    repo.write("tests/test_price.py", changed)
    repo.stage()
    status, out = gate(repo, capsys)
    assert status == 1 and code in out
    assert "    next: " in out and f"`oracle-guard approve {statement}`" in out  # the exact command to run
    approve(repo, key, statement)
    repo.stage()
    assert gate(repo, capsys) == (0, "")


def test_an_approval_for_another_test_or_kind_covers_nothing(repo: Repo, tmp_path: Path, capsys) -> None:
    key = signed(repo, tmp_path)
    repo.write("tests/test_price.py", SKIP)
    approve(repo, key, "skip-add tests/test_price.py::TestPrice::test_parse")  # another test
    approve(repo, key, "check-removed tests/test_price.py::test_total")  # another kind
    repo.stage()
    status, out = gate(repo, capsys)
    assert status == 1 and "OG101" in out


def test_a_patch_cannot_approve_itself_with_its_own_signers(repo: Repo, tmp_path: Path, capsys) -> None:
    repo.write("tests/test_price.py", TEST)
    repo.commit("base without signers")
    key = make_key(tmp_path)
    repo.write("tests/allowed_signers", signers_line(key))
    repo.write(CONTRACT, contract_text(extra="allowed_signers: tests/allowed_signers\n"))
    repo.write("tests/test_price.py", SKIP)
    approve(repo, key, "skip-add tests/test_price.py::test_total")
    repo.stage()
    status, out = gate(repo, capsys)
    assert status == 1 and "OG101" in out


def test_approve_accepts_the_new_statements_and_refuses_extra_words(repo: Repo, tmp_path: Path, capsys) -> None:
    key = signed(repo, tmp_path)
    assert repo.run(approve_main, "--key", str(key), "check-removed", "tests/test_price.py::TestPrice::test_parse") == 0
    assert "approves `check-removed tests/test_price.py::TestPrice::test_parse`" in capsys.readouterr().out
    assert repo.run(approve_main, "--key", str(key), "skip-add", "a", "b") == 2


def locked(repo: Repo, tmp_path: Path) -> tuple[Path, str]:
    key = make_key(tmp_path)
    repo.write("tests/allowed_signers", signers_line(key))
    repo.write("tests/fixtures/invoice.json", '{"total": 1250}\n')
    old = sha(b'{"total": 1250}\n')
    repo.write(
        CONTRACT,
        "# the contract\n"
        + contract_text(
            fixture_entry("invoice", "tests/fixtures/invoice.json", old),
            extra="allowed_signers: tests/allowed_signers\n",
        ),
    )
    repo.commit("base with a lock")
    return key, old


def test_lock_rotate_updates_the_contract_and_the_approval_lets_it_through(repo: Repo, tmp_path: Path, capsys) -> None:
    key, old = locked(repo, tmp_path)
    repo.write("tests/fixtures/invoice.json", '{"total": 1249}\n')
    new = sha(b'{"total": 1249}\n')
    assert repo.run(lock_verify_main) == 1 and "OG401" in capsys.readouterr().out
    assert repo.run(init_contract.lock_main, "--rotate", "invoice") == 0
    out = capsys.readouterr().out
    assert f"oracle-guard approve fixture-rotate invoice {old} {new}" in out
    text = (repo.path / CONTRACT).read_text()
    assert new in text and old not in text and text.startswith("# the contract\n")  # only the digest changed
    code = repo.run(lock_verify_main)
    out = capsys.readouterr().out
    assert code == 1 and "OG401" not in out and "OG404" in out  # the lock moved: now it needs its approval
    approve(repo, key, f"fixture-rotate invoice {old} {new}")
    repo.stage()
    assert repo.run(lock_verify_main) == 0


def test_approve_fixture_rotate_also_rotates_the_lock(repo: Repo, tmp_path: Path, capsys) -> None:
    key, old = locked(repo, tmp_path)
    repo.write("tests/fixtures/invoice.json", '{"total": 1249}\n')
    new = sha(b'{"total": 1249}\n')
    assert repo.run(approve_main, "--key", str(key), "fixture-rotate", "invoice", old, new) == 0
    assert f"'invoice' now locks sha256 {new[:12]}" in capsys.readouterr().out
    repo.stage()
    assert repo.run(lock_verify_main) == 0


def test_lock_rotate_refuses_an_unknown_id_or_a_missing_file_in_one_line(repo: Repo, tmp_path: Path, capsys) -> None:
    locked(repo, tmp_path)
    assert repo.run(init_contract.lock_main, "--rotate", "nope") == 2
    assert capsys.readouterr().err == f"oracle-guard: error: no lock with id 'nope' in {CONTRACT}\n"
    (repo.path / "tests/fixtures/invoice.json").unlink()
    assert repo.run(init_contract.lock_main, "--rotate", "invoice") == 2
    assert "does not exist; restore it" in capsys.readouterr().err
    assert repo.run(init_contract.lock_main, "--rotate", "invoice", "tests/x") == 2


def test_a_removed_test_is_retired_with_the_statement_collection_snapshot_takes(
    repo: Repo, tmp_path: Path, capsys
) -> None:
    key = signed(repo, tmp_path)
    repo.write("tests/test_price.py", TEST.replace("def test_total():\n    assert total([1, 2]) == 3\n", ""))
    repo.stage()
    status, out = gate(repo, capsys)
    assert status == 1 and "OG302 test test_total was removed" in out
    assert "`oracle-guard approve test-retire tests/test_price.py::test_total`" in out
    approve(repo, key, "test-retire tests/test_price.py::TestPrice::test_parse")  # another test: nothing
    repo.stage()
    assert gate(repo, capsys)[0] == 1
    approve(repo, key, "test-retire tests/test_price.py::test_total")
    repo.stage()
    assert gate(repo, capsys) == (0, "")
