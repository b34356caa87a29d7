"""fixture-lock-verify in real repositories: the article's fixture rows, both directions."""

from __future__ import annotations

import os

import pytest

from oracle_guard.hook_ids.fixture_lock_verify import main
from tests.contract_helpers import CONTRACT, approve, contract_text, fixture_entry, make_key, sha, signers_line
from tests.helpers import Repo

INVOICE = b'{"total": 12}\n'
INVOICE_CRLF = b'{"total": 12}\r\n'


def locked_repo(repo: Repo, data: bytes = INVOICE, extra: str = "") -> None:
    repo.write("tests/fixtures/invoice_v3.json", data)
    repo.write(
        CONTRACT, contract_text(fixture_entry("invoice_v3", "tests/fixtures/invoice_v3.json", sha(data)), extra=extra)
    )
    repo.commit("lock invoice")


# -- absolute checks -------------------------------------------------------------


def test_unchanged_lock_passes(repo: Repo) -> None:
    locked_repo(repo)
    assert repo.staged_hook(main).said == (0, "")


def test_crlf_rewrite_is_a_mismatch_and_restoring_passes(repo: Repo) -> None:
    locked_repo(repo)
    repo.write("tests/fixtures/invoice_v3.json", INVOICE_CRLF)
    code, out = repo.staged_hook(main, "--no-diff").said
    assert code == 1
    assert out.startswith("tests/fixtures/invoice_v3.json:1:1: OG401 bytes do not match the lock 'invoice_v3'")
    assert f"approve fixture-rotate invoice_v3 {sha(INVOICE)} {sha(INVOICE_CRLF)}" in out
    repo.write("tests/fixtures/invoice_v3.json", INVOICE)
    assert repo.staged_hook(main, "--no-diff").code == 0


def test_mtime_alone_changes_nothing(repo: Repo) -> None:
    locked_repo(repo)
    os.utime(repo.path / "tests/fixtures/invoice_v3.json", (1, 1))
    assert repo.staged_hook(main).code == 0


def test_missing_fixture(repo: Repo) -> None:
    locked_repo(repo)
    repo.remove("tests/fixtures/invoice_v3.json")
    code, out = repo.staged_hook(main, "--no-diff").said
    assert code == 1 and f"{CONTRACT}:3:5: OG402 locked fixture 'invoice_v3' is missing" in out


@pytest.mark.parametrize(
    "path, why",
    [
        ("/etc/passwd", "'path' must be relative to the repository, not '/etc/passwd'"),
        ("tests/fixtures/../../secret.json", "'path' may not leave the repository ('..' in"),
    ],
)
def test_path_escapes_are_refused(repo: Repo, path: str, why: str) -> None:
    # The contract loader refuses them for every reader (tests/test_first_hour_static.py); a symlink out of
    # the fixtures root, which only the file system shows, stays OG403 (below).
    repo.write("secret.json", b"{}")
    repo.write(CONTRACT, contract_text(fixture_entry("x", path, sha(b"{}"))))
    code, out = repo.staged_hook(main, "--no-diff").said
    assert code == 2 and f"{CONTRACT}:4:11: " in out and why in out and out.count("\n") == 1, out


def test_symlink_out_of_the_fixtures_root_is_refused_but_inside_is_fine(repo: Repo, tmp_path) -> None:
    outside = tmp_path / "elsewhere.json"
    outside.write_bytes(INVOICE)
    repo.write("tests/fixtures/real.json", INVOICE)
    os.symlink(outside, repo.path / "tests/fixtures/out.json")
    os.symlink("real.json", repo.path / "tests/fixtures/in.json")
    repo.write(
        CONTRACT,
        contract_text(
            fixture_entry("out", "tests/fixtures/out.json", sha(INVOICE))
            + fixture_entry("in", "tests/fixtures/in.json", sha(INVOICE))
        ),
    )
    code, out = repo.staged_hook(main, "--no-diff").said
    assert code == 1
    assert "fixture 'out'" in out and "outside its fixtures root tests/fixtures/" in out
    assert "fixture 'in'" not in out


# -- directory locks ---------------------------------------------------------------


def snapshot_repo(repo: Repo) -> None:
    from oracle_guard.contract.digests import manifest_digest

    files = {"a.ambr": b"# name: test_a\n  1\n", "sub/b.ambr": b"# name: test_b\n  2\n"}
    for rel, data in files.items():
        repo.write(f"tests/__snapshots__/{rel}", data)
    digest = manifest_digest({rel: sha(data) for rel, data in files.items()})
    repo.write(CONTRACT, contract_text(fixture_entry("snapshots", "tests/__snapshots__", digest)))
    repo.commit("lock snapshots")


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda r: r.write("tests/__snapshots__/a.ambr", b"# name: test_a\n  9\n"), id="changed"),
        pytest.param(lambda r: r.write("tests/__snapshots__/c.ambr", b"# name: test_c\n"), id="added"),
        pytest.param(lambda r: r.remove("tests/__snapshots__/sub/b.ambr"), id="removed"),
        pytest.param(
            lambda r: (
                r.remove("tests/__snapshots__/sub/b.ambr"),
                r.write("tests/__snapshots__/b.ambr", b"# name: test_b\n  2\n"),
            ),
            id="moved-inside",
        ),
    ],
)
def test_a_locked_directory_changes_with_any_file_inside(repo: Repo, edit) -> None:
    snapshot_repo(repo)
    edit(repo)
    code, out = repo.staged_hook(main).said
    assert code == 1 and "tests/__snapshots__:1:1: OG401 bytes do not match the lock 'snapshots'" in out
    assert "; since the base: " in out  # names what changed inside


def test_a_locked_directory_ignores_ignored_files(repo: Repo) -> None:
    snapshot_repo(repo)
    repo.write(".gitignore", "*.pyc\n")
    repo.commit("ignore")
    (repo.path / "tests/__snapshots__/junk.pyc").write_bytes(b"\0")
    assert repo.staged_hook(main).said == (0, "")


# -- relative to the base: the article's rows ----------------------------------------

NEW = b'{"total": 13}\n'


def rotate(repo: Repo, unlock: str = "null") -> None:
    repo.write("tests/fixtures/invoice_v3.json", NEW)
    repo.write(CONTRACT, contract_text(fixture_entry("invoice_v3", "tests/fixtures/invoice_v3.json", sha(NEW), unlock)))


@pytest.mark.parametrize(
    "row, unlock",
    [
        ("Fixture bytes changed, unlock null", "null"),
        ("Fixture bytes changed, unlock set on agent branch", '"ok by me -- agent"'),
    ],
)
def test_article_rows_rotation_without_a_signed_approval_is_rejected(repo: Repo, row: str, unlock: str) -> None:
    locked_repo(repo)
    rotate(repo, unlock)
    code, out = repo.staged_hook(main).said
    assert code == 1, row
    assert f"{CONTRACT}:3:5: OG404 lock 'invoice_v3' rotated" in out
    assert "no allowed-signers file is configured" in out
    assert ("`unlock` is not an approval" in out) == (unlock != "null")


def signed_repo(repo: Repo, tmp_path) -> object:
    key = make_key(tmp_path)
    repo.write("tests/allowed_signers", signers_line(key))
    locked_repo(repo, extra="allowed_signers: tests/allowed_signers\n")
    return key


def test_rotation_with_a_signed_approval_passes(repo: Repo, tmp_path) -> None:
    key = signed_repo(repo, tmp_path)
    rotate(repo)
    approve(repo, key, f"fixture-rotate invoice_v3 {sha(INVOICE)} {sha(NEW)}")
    assert repo.staged_hook(main).code == 0


def test_an_approval_covers_only_its_own_statement(repo: Repo, tmp_path) -> None:
    key = signed_repo(repo, tmp_path)
    rotate(repo)
    approve(repo, key, f"fixture-rotate invoice_v3 {sha(INVOICE)} {sha(b'other')}")
    code, out = repo.staged_hook(main).said
    assert code == 1 and "OG404" in out


def test_a_key_added_by_the_patch_itself_approves_nothing(repo: Repo, tmp_path) -> None:
    signed_repo(repo, tmp_path)
    intruder = make_key(tmp_path, "mallory")
    repo.write("tests/allowed_signers", signers_line(intruder, "mallory@example.com"))
    rotate(repo)
    approve(repo, intruder, f"fixture-rotate invoice_v3 {sha(INVOICE)} {sha(NEW)}")
    code, out = repo.staged_hook(main).said
    assert code == 1 and "does not verify against the base's allowed signers" in out


def test_dropping_a_lock_needs_an_approval(repo: Repo, tmp_path) -> None:
    key = signed_repo(repo, tmp_path)
    repo.write(CONTRACT, contract_text(extra="allowed_signers: tests/allowed_signers\n"))
    code, out = repo.staged_hook(main).said
    assert code == 1 and "OG406 lock 'invoice_v3' (tests/fixtures/invoice_v3.json) dropped" in out
    approve(repo, key, f"fixture-unlock invoice_v3 {sha(INVOICE)}")
    assert repo.staged_hook(main).code == 0


def test_repointing_a_lock_needs_an_approval_but_a_pure_move_does_not(repo: Repo) -> None:
    locked_repo(repo)
    repo.write("tests/fixtures/other.json", NEW)
    repo.write(CONTRACT, contract_text(fixture_entry("invoice_v3", "tests/fixtures/other.json", sha(NEW))))
    code, out = repo.staged_hook(main).said
    assert code == 1 and "OG405 lock 'invoice_v3' repointed" in out and "OG404" in out
    repo.git("reset", "-q", "--hard")
    repo.git("clean", "-qfd")
    repo.git("mv", "tests/fixtures/invoice_v3.json", "tests/fixtures/invoice.json")
    repo.write(CONTRACT, contract_text(fixture_entry("invoice_v3", "tests/fixtures/invoice.json", sha(INVOICE))))
    code, out = repo.staged_hook(main).said
    assert code == 0 and "moved from tests/fixtures/invoice_v3.json" in out


def test_renaming_a_lock_id_with_same_path_and_digest_passes(repo: Repo) -> None:
    locked_repo(repo)
    repo.write(CONTRACT, contract_text(fixture_entry("invoice", "tests/fixtures/invoice_v3.json", sha(INVOICE))))
    assert repo.staged_hook(main).code == 0


def test_adding_a_lock_is_always_allowed(repo: Repo) -> None:
    locked_repo(repo)
    repo.write("tests/data/extra.csv", b"a,b\r\n1,2\r\n")
    repo.write(
        CONTRACT,
        contract_text(
            fixture_entry("invoice_v3", "tests/fixtures/invoice_v3.json", sha(INVOICE))
            + fixture_entry("extra", "tests/data/extra.csv", sha(b"a,b\r\n1,2\r\n"))
        ),
    )
    assert repo.staged_hook(main).code == 0


def test_first_commit_has_everything_new(repo: Repo) -> None:
    repo.write("tests/fixtures/invoice_v3.json", INVOICE)
    repo.write(CONTRACT, contract_text(fixture_entry("invoice_v3", "tests/fixtures/invoice_v3.json", sha(INVOICE))))
    code, out = repo.staged_hook(main).said
    assert code == 0 and "no commits yet" in out


def test_two_commit_rotation_is_caught_against_the_branch_base(repo: Repo) -> None:
    locked_repo(repo)
    base = repo.git("rev-parse", "HEAD").strip()
    rotate(repo)
    repo.commit("rotate")
    repo.write("README", "x\n")
    repo.commit("unrelated")
    code, out = repo.staged_hook(main, "--base", base).said
    assert code == 1 and "OG404" in out


def test_range_mode_checks_the_target_commit(repo: Repo, monkeypatch) -> None:
    locked_repo(repo)
    base = repo.git("rev-parse", "HEAD").strip()
    repo.write("tests/fixtures/invoice_v3.json", INVOICE_CRLF)
    bad = repo.commit("rewrite")
    repo.write("tests/fixtures/invoice_v3.json", INVOICE)
    repo.commit("restore")
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", base)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", bad)
    code, out = repo.staged_hook(main).said
    assert code == 1 and "OG401" in out


def test_broken_contract_is_one_og927_line(repo: Repo) -> None:
    repo.write(CONTRACT, "version: 1\nfixtures: []\nfixtures: []\n")
    code, out = repo.staged_hook(main).said
    assert code == 1 and out.count("\n") == 1 and "OG927" in out and "duplicate key 'fixtures'" in out


def test_a_fixture_root_that_is_a_symlink_out_of_the_repository_widens_nothing(repo: Repo, tmp_path) -> None:
    outside = tmp_path / "ext"
    outside.mkdir()
    (outside / "x.json").write_bytes(INVOICE)
    (repo.path / "tests").mkdir()
    os.symlink(outside, repo.path / "tests/linked")
    repo.write(
        CONTRACT,
        contract_text(fixture_entry("x", "tests/linked/x.json", sha(INVOICE)), extra="fixture_roots: [tests/linked]\n"),
    )
    code, out = repo.staged_hook(main, "--no-diff").said
    assert code == 1 and "OG403" in out and "outside the repository" in out


def test_deleting_the_contract_drops_every_lock(repo: Repo) -> None:
    locked_repo(repo)
    repo.remove(CONTRACT)
    code, out = repo.staged_hook(main).said
    assert code == 1 and f"{CONTRACT}:1:1: OG406 lock 'invoice_v3' (tests/fixtures/invoice_v3.json) dropped" in out


@pytest.mark.slow
def test_console_entry_in_a_real_process(repo: Repo) -> None:
    import subprocess
    import sys

    locked_repo(repo)
    repo.write("tests/fixtures/invoice_v3.json", INVOICE_CRLF)
    proc = subprocess.run(
        (sys.executable, "-m", "oracle_guard.commands.cli", "fixture-lock-verify"),
        cwd=repo.path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and proc.stdout.startswith("tests/fixtures/invoice_v3.json:1:1: OG401 ")


def test_setting_unlock_alone_changes_nothing_but_is_pointed_out(repo: Repo) -> None:
    locked_repo(repo)
    repo.write(
        CONTRACT,
        contract_text(fixture_entry("invoice_v3", "tests/fixtures/invoice_v3.json", sha(INVOICE), '"rotate please"')),
    )
    code, out = repo.staged_hook(main).said
    assert code == 0 and "`unlock` approves nothing here" in out


def test_a_fifo_in_place_of_a_fixture_is_refused_not_read_forever(repo: Repo, capsys) -> None:
    locked_repo(repo)
    os.remove(repo.path / "tests/fixtures/invoice_v3.json")
    os.mkfifo(repo.path / "tests/fixtures/invoice_v3.json")
    code = repo.run(main, "--no-diff")  # git cannot stage a FIFO; pre-commit --all-files still sees it
    out = capsys.readouterr().out
    assert code == 1 and "OG403" in out and "is not a regular file or directory" in out


def test_threaded_hashing_matches_hashlib(tmp_path) -> None:
    from oracle_guard.contract.digests import hash_files
    from oracle_guard.hook_ids.fixture_lock_verify import Prehash

    paths = []
    for i in range(11):
        target = tmp_path / f"f{i}.bin"
        target.write_bytes(bytes([i]) * (i * 70_001))
        paths.append(str(target))
    expected = {p: sha(open(p, "rb").read()) for p in paths}
    assert hash_files(paths, 1) == hash_files(paths, 4) == expected
    raw = "".join(f"  - path: {p}\n" for p in paths).encode()
    assert Prehash(raw).result() == {}  # absolute paths are never read ahead


def test_prehash_reads_only_plain_relative_files(tmp_path, monkeypatch) -> None:
    from oracle_guard.hook_ids.fixture_lock_verify import Prehash

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.bin").write_bytes(b"a")
    (tmp_path / "link.bin").symlink_to(tmp_path / "a.bin")
    raw = b'  - path: a.bin\n    path: "link.bin"\n  - path: ../a.bin  # comment\n'
    assert Prehash(raw).result() == {"a.bin": sha(b"a")}


def test_a_base_contract_that_does_not_load_fails_closed_in_one_line(repo: Repo) -> None:
    repo.write(CONTRACT, "version: 1\nfixtures: []\nfixtures: []\n")
    repo.git("add", "-A")
    repo.git("commit", "-q", "--no-verify", "-m", "broken contract slipped in")
    repo.write(CONTRACT, contract_text())
    code, out = repo.staged_hook(main).said
    assert code == 2 and out.count("\n") == 1
    assert "the contract at the base revision does not load, so nothing can be compared (fail closed)" in out
