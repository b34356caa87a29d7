"""`oracle-guard init` trusts the SSH key git signs with, so a change can be approved from the first pull request.

Issue 30, item 1: the allowed-signers file and the contract's `allowed_signers:` land with the adoption
commit, so the base of the next change has signers and the approval its finding prints verifies there.
Without a key, init says the one command that sets one up.  Real git, real ssh-keygen, throwaway keys.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from oracle_guard.commands import check, cli, explain, init_contract
from oracle_guard.contract import contract
from oracle_guard.reporting import hints
from tests.contract_helpers import CONTRACT, make_key
from tests.helpers import Repo

SIGNERS = hints.DEFAULT_SIGNERS
TEST = "def test_price():\n    assert 2 * 2 == 4\n"


@pytest.fixture(autouse=True)
def _own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME of the test's own: no ~/.gitconfig or ~/.ssh of the machine's decides anything here."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return home


def project(repo: Repo) -> None:
    repo.git("config", "user.email", "alice@example.com")
    repo.write("tests/test_price.py", TEST)
    repo.commit("a project")


def signing_with(repo: Repo, key: str) -> None:
    repo.git("config", "gpg.format", "ssh")
    repo.git("config", "user.signingkey", key)


def public(key: Path) -> str:
    return " ".join(Path(f"{key}.pub").read_text().split()[:2])


def init(repo: Repo, *argv: str) -> tuple[int, str, str]:
    code, out, err, _ = repo.hook(init_contract.main, "--no-snapshot", *argv)
    return code, out, err


@pytest.mark.parametrize("form", ["private key path", "public key path", "key:: literal", "private key alone"])
def test_init_trusts_the_key_git_signs_with(repo: Repo, tmp_path: Path, form: str) -> None:
    project(repo)
    key = make_key(tmp_path)
    spelled = {
        "private key path": str(key),
        "public key path": f"{key}.pub",
        "key:: literal": "key::" + Path(f"{key}.pub").read_text().strip(),
        "private key alone": str(key),
    }[form]
    expected = public(key)
    if form == "private key alone":  # no .pub beside it: ssh-keygen derives the public half
        Path(f"{key}.pub").unlink()
    signing_with(repo, spelled)
    code, out, _ = init(repo)
    assert code == 0, out
    assert f"wrote {SIGNERS}: alice@example.com may sign approvals" in out
    lines = [line for line in (repo.path / SIGNERS).read_text().splitlines() if not line.startswith("#")]
    assert lines == [f"alice@example.com {expected}"]
    loaded = contract.load(str(repo.path / CONTRACT))
    assert loaded is not None and loaded.allowed_signers == SIGNERS


def test_the_adoption_commit_makes_the_next_change_approvable_in_itself(repo: Repo, tmp_path: Path) -> None:
    project(repo)
    signing_with(repo, str(make_key(tmp_path)))
    assert init(repo)[0] == 0
    adoption = repo.commit("Adopt oracle-guard")
    repo.write("tests/test_price.py", TEST.replace("== 4", "== 5"))  # a deliberate change of an expected value
    repo.commit("price: the new rule")
    code, out, _, found = repo.hook(check.main, "--base", adoption, "--skip", "collection-snapshot")
    assert code == 1 and set(found) == {"OG314"}, out
    printed = re.search(r"`(oracle-guard approve expected-change \S+)`", out)
    assert printed is not None and "no signers at the base yet" not in out
    words = shlex.split(printed.group(1))
    assert repo.run(cli.main, *words[1:]) == 0  # the command as the finding printed it, with git's key
    repo.commit("approve the new rule")
    assert repo.hook(check.main, "--base", adoption, "--skip", "collection-snapshot", "-q") == (0, "", "", [])


def test_without_signers_in_the_adoption_the_same_approval_verifies_nothing(repo: Repo, tmp_path: Path) -> None:
    project(repo)
    key = make_key(tmp_path)
    assert init(repo, "--no-signers")[0] == 0
    adoption = repo.commit("Adopt oracle-guard")
    repo.write("tests/test_price.py", TEST.replace("== 4", "== 5"))
    repo.commit("price: the new rule")
    signing_with(repo, str(key))  # a key set up after the adoption: its signers can come only from the base
    code, out, _ = init(repo, "--force")
    assert code == 0 and f"wrote {SIGNERS}" in out
    assert repo.run(cli.main, "approve", "expected-change", "tests/test_price.py::test_price") == 0
    repo.commit("signers and an approval in the same change")
    code, out, _, found = repo.hook(check.main, "--base", adoption, "--skip", "collection-snapshot")
    assert code == 1 and set(found) == {"OG314"}, out
    assert "; no signers at the base yet: see `oracle-guard explain OG314`\n" in out


def setup_command_in(out: str) -> str:
    found = re.search(r"set up a key \(`([^`]+)`\)", out)
    assert found, out
    return found.group(1)


def run_unattended(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """COMMAND as an agent's shell runs it: no terminal and nothing on stdin, so a prompt would hang (or fail) it."""
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        start_new_session=True,  # no controlling terminal for ssh-keygen to prompt on
        timeout=60,
    )


def test_without_a_key_init_prints_a_command_that_never_prompts_and_a_plain_rerun_trusts_the_key(
    repo: Repo, _own_home: Path
) -> None:
    project(repo)
    repo.write("tests/fixtures/prices.json", '{"a": 1}\n')
    code, out, _ = init(repo)
    assert code == 0
    key = _own_home / ".ssh" / "id_ed25519"
    command = setup_command_in(out)
    assert command == (
        f'mkdir -p {_own_home}/.ssh && ssh-keygen -q -t ed25519 -N "" -C oracle-guard -f {key} && '
        f"git config gpg.format ssh && git config user.signingkey {key}"
    )
    assert "no allowed-signers file: git does not sign with an SSH key" in out
    assert "run `oracle-guard init` again" in out and "--force" not in out and "--no-signers" in out
    assert not (repo.path / SIGNERS).exists()
    before = contract.load(str(repo.path / CONTRACT))
    assert before is not None and before.allowed_signers is None and len(before.fixtures) == 1
    setup = run_unattended(command, repo.path)
    assert setup.returncode == 0, setup.stderr
    # The plain run, as the message says: no --force.
    code, out, err = init(repo)
    assert (code, err) == (0, ""), out + err
    assert f"wrote {SIGNERS}: alice@example.com may sign approvals" in out
    assert f"added to {CONTRACT}: allowed_signers: {SIGNERS} (nothing else changed)" in out
    assert (repo.path / SIGNERS).read_text().splitlines()[1:] == [f"alice@example.com {public(key)}"]
    after = contract.load(str(repo.path / CONTRACT))
    assert after is not None and after.allowed_signers == SIGNERS and after.fixtures == before.fixtures
    with repo.cwd():
        assert "ssh-keygen" not in init_contract.signers_setup.setup_command()  # the key exists now: nothing to make
    # A third plain run has nothing to add: the contract exists, as before this change.
    code, out, err = init(repo)
    assert code == 2 and "already exists; pass --force" in err and f"its signers are {SIGNERS}" in err


def test_a_plain_rerun_still_without_a_key_refuses_and_repeats_the_command(repo: Repo, _own_home: Path) -> None:
    project(repo)
    assert init(repo)[0] == 0
    written = (repo.path / CONTRACT).read_bytes()
    code, out, err = init(repo)
    assert code == 2 and err.count("\n") == 1 and "already exists" in err and "git does not sign with an SSH key" in err
    assert 'ssh-keygen -q -t ed25519 -N ""' in err and (repo.path / CONTRACT).read_bytes() == written
    assert not (repo.path / SIGNERS).exists()
    code, _, err = init(repo, "--no-signers")  # told to go without: the contract exists, nothing to do
    assert code == 2 and "already exists" in err and (repo.path / CONTRACT).read_bytes() == written


def test_a_plain_rerun_keeps_a_hand_edited_contract_and_adds_one_line(repo: Repo, tmp_path: Path) -> None:
    project(repo)
    repo.write(CONTRACT, "# ours, by hand\nversion: 1\nmax_reruns: 1  # stricter\n")
    signing_with(repo, str(make_key(tmp_path)))
    code, out, _ = init(repo)
    assert code == 0, out
    assert (repo.path / CONTRACT).read_text() == (
        f"# ours, by hand\nversion: 1\nmax_reruns: 1  # stricter\nallowed_signers: {SIGNERS}\n"
    )


@pytest.mark.slow
def test_two_plain_inits_record_the_snapshot_once_and_trust_the_key_set_up_between(repo: Repo, _own_home: Path) -> None:
    project(repo)
    code, out, err, _ = repo.hook(init_contract.main)
    assert code == 0 and "recorded tests/collection_snapshot.txt" in out, out + err
    snapshot = (repo.path / "tests/collection_snapshot.txt").read_bytes()
    assert run_unattended(setup_command_in(out), repo.path).returncode == 0
    code, out, err, _ = repo.hook(init_contract.main)
    assert code == 0 and f"wrote {SIGNERS}" in out and "kept tests/collection_snapshot.txt" in out, out + err
    assert (repo.path / "tests/collection_snapshot.txt").read_bytes() == snapshot


def test_no_signers_writes_none_and_says_nothing_about_keys(repo: Repo, tmp_path: Path) -> None:
    project(repo)
    signing_with(repo, str(make_key(tmp_path)))
    code, out, _ = init(repo, "--no-signers")
    assert code == 0 and "signers" not in out and not (repo.path / SIGNERS).exists()
    loaded = contract.load(str(repo.path / CONTRACT))
    assert loaded is not None and loaded.allowed_signers is None


def test_signers_names_the_file(repo: Repo, tmp_path: Path) -> None:
    project(repo)
    signing_with(repo, str(make_key(tmp_path)))
    code, out, _ = init(repo, "--signers", ".github/allowed_signers")
    assert code == 0 and "wrote .github/allowed_signers" in out
    assert (repo.path / ".github/allowed_signers").is_file() and not (repo.path / SIGNERS).exists()
    assert 'allowed_signers: ".github/allowed_signers"\n' in (repo.path / CONTRACT).read_text()


@pytest.mark.parametrize("path", ["../outside_signers", "/tmp/allowed_signers", ".git/allowed_signers"])
def test_a_signers_path_outside_the_repository_is_one_line_and_writes_nothing(
    repo: Repo, tmp_path: Path, path: str
) -> None:
    project(repo)
    signing_with(repo, str(make_key(tmp_path)))
    before = set(os.listdir(repo.path.parent))
    code, out, err = init(repo, "--signers", path)
    assert code == 2 and err.count("\n") == 1 and "allowed_signers" in err, err
    assert not (repo.path / CONTRACT).exists() and set(os.listdir(repo.path.parent)) == before
    assert not (repo.path / ".git/allowed_signers").exists()


@pytest.mark.parametrize("what", ["folder", "symlink"])
def test_a_signers_path_that_is_no_regular_file_is_one_line(repo: Repo, tmp_path: Path, what: str) -> None:
    project(repo)
    signing_with(repo, str(make_key(tmp_path)))
    target = repo.path / SIGNERS
    if what == "folder":
        target.mkdir()
    else:
        target.symlink_to(tmp_path / "elsewhere")
    code, _, err = init(repo)
    assert code == 2 and err.count("\n") == 1 and "must be a regular file" in err, err
    assert not (tmp_path / "elsewhere").exists()


def test_an_existing_signers_file_is_kept_and_extended_once(repo: Repo, tmp_path: Path) -> None:
    project(repo)
    bob = make_key(tmp_path, "bob")
    repo.write(SIGNERS, f"bob@example.com {public(bob)}")  # no newline at its end
    alice = make_key(tmp_path)
    signing_with(repo, str(alice))
    code, out, _ = init(repo)
    assert code == 0 and f"added {SIGNERS}" in out
    assert (repo.path / SIGNERS).read_text() == f"bob@example.com {public(bob)}\nalice@example.com {public(alice)}\n"
    code, out, _ = init(repo, "--force")  # the contract names it now: kept as it is
    assert code == 0 and "signers" not in out
    assert (repo.path / SIGNERS).read_text().count("alice@example.com") == 1


def test_force_over_a_contract_with_signers_keeps_them(repo: Repo, tmp_path: Path) -> None:
    project(repo)
    repo.write(CONTRACT, "version: 1\nallowed_signers: keys/trusted\n")
    signing_with(repo, str(make_key(tmp_path)))
    code, out, _ = init(repo, "--force")
    assert code == 0 and "signers" not in out and not (repo.path / SIGNERS).exists()
    assert "allowed_signers: keys/trusted\n" in (repo.path / CONTRACT).read_text()


@pytest.mark.parametrize(
    "email, said",
    [
        (None, "git has no user.email to name the signer"),
        ("alice smith@example.com", "cannot name a signer"),
        ("*@example.com", "cannot name a signer"),
    ],
)
def test_a_signer_needs_a_name_git_knows(repo: Repo, tmp_path: Path, email: str | None, said: str) -> None:
    project(repo)
    if email is None:
        repo.git("config", "--unset", "user.email")
    else:
        repo.git("config", "user.email", email)
    signing_with(repo, str(make_key(tmp_path)))
    code, out, _ = init(repo)
    assert code == 0 and said in out and not (repo.path / SIGNERS).exists()


def test_a_signing_key_that_is_not_a_key_is_one_line(repo: Repo, tmp_path: Path) -> None:
    project(repo)
    junk = tmp_path / "junk.pub"
    junk.write_text("not a key\n")
    signing_with(repo, str(junk))
    code, _, err = init(repo)
    assert code == 2 and err.count("\n") == 1 and "not an SSH public key" in err
    assert not (repo.path / CONTRACT).exists()


def test_the_explain_page_of_an_approvable_code_says_how_to_get_signers() -> None:
    page = explain.text_page("OG314")
    assert "\nApprovals\n" in page and "`oracle-guard init` adds one (run again over its contract)" in " ".join(
        page.split()
    )
    assert "\nApprovals\n" not in explain.text_page("OG308")  # no approval is offered there
