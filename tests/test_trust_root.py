"""Trust root and fail-closed input (issue 7): what the patch controls cannot switch the gate off.

Every attack is tried on a real repository next to the honest change closest to it.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from oracle_guard.commands import check
from oracle_guard.hook_ids.oracle_shrink import main as shrink_main
from oracle_guard.repo import nesting
from tests.helpers import Repo, finding_codes

TEST = """\
import pytest


def test_price():
    assert parse("12.50") == 1250
    assert parse("0") == 0


def test_garbage():
    with pytest.raises(ValueError, match="not a price"):
        parse("twelve")
"""
T = "tests/test_price.py"


def gate(repo: Repo, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = repo.run(check.main, *args)
    out = capsys.readouterr()
    return code, out.out, out.err


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("oracle-guard: error: "), err
    assert "Traceback" not in err
    return lines[0]


# -- 1. test files that stop being files ------------------------------------------------


def test_a_test_file_replaced_by_a_symlink_to_a_weakened_copy_loses_its_checks(repo: Repo, capsys) -> None:
    repo.write(T, TEST)
    base = repo.commit("base")
    repo.write("docs/price_copy.py", TEST.replace('    assert parse("0") == 0\n', ""))
    (repo.path / T).unlink()
    os.symlink("../docs/price_copy.py", repo.path / T)
    repo.commit("agent")
    code, out, _ = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert code == 1
    assert "OG30" in out and "test_price" in out


def test_a_test_file_replaced_by_a_symlink_to_an_equal_copy_passes(repo: Repo, capsys) -> None:
    repo.write(T, TEST)
    base = repo.commit("base")
    repo.write("docs/price_copy.py", TEST)
    (repo.path / T).unlink()
    os.symlink("../docs/price_copy.py", repo.path / T)
    repo.commit("move the test, keep a link")
    code, out, err = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert code == 0, out + err


def test_a_symlink_in_the_work_tree_is_judged_too(repo: Repo, capsys) -> None:
    repo.write(T, TEST)
    repo.commit("base")
    (repo.path / T).unlink()
    os.symlink("/dev/null", repo.path / T)
    repo.stage()
    code = repo.run(shrink_main, T)
    out = capsys.readouterr().out
    assert code == 1 and "OG302" in out and "test_price" in out


def test_a_test_file_replaced_by_a_fifo_is_a_finding_and_never_blocks(repo: Repo, capsys) -> None:
    repo.write(T, TEST)
    base = repo.commit("base")
    (repo.path / T).unlink()
    os.mkfifo(repo.path / T)
    code, out, err = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert code == 1, out + err
    assert "OG003" in out and "FIFO" in out
    assert "OG302" in out


def test_a_test_file_replaced_by_a_submodule_is_a_finding(repo: Repo, capsys, tmp_path: Path, monkeypatch) -> None:
    repo.write(T, TEST)
    base = repo.commit("base")
    repo.git("rm", "-q", T)
    other = Repo(tmp_path / "other")
    other.path.mkdir()
    other.git("init", "-q")
    other.write("x.py", "x = 1\n")
    sub = other.commit("sub")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sub},{T}")
    repo.git("commit", "-q", "-m", "agent: the test is a submodule now")
    agent = repo.git("rev-parse", "HEAD").strip()
    code, out, err = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert code == 1 and "OG302" in out, out + err
    # pre-push of that commit from elsewhere: git's mode 160000 says what it is
    repo.git("checkout", "-q", base)
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", base)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", agent)
    code, out, err = gate(repo, capsys, "--skip", "collection-snapshot")
    assert code == 1, out + err
    assert "OG003" in out and "submodule" in out
    assert "OG302" in out


def test_a_regular_file_edit_is_not_flagged_as_special(repo: Repo, capsys) -> None:
    repo.write(T, TEST)
    base = repo.commit("base")
    repo.write(T, TEST + "\n\ndef test_more():\n    assert parse('1') == 100\n")
    repo.commit("more tests")
    code, out, err = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert code == 0, out + err


NEWLINE_NAME = "tests/test_price\n.py"


def test_a_test_moved_to_a_name_with_a_newline_is_still_compared(repo: Repo, capsys) -> None:
    repo.write(T, TEST)
    base = repo.commit("base")
    repo.git("rm", "-q", T)
    repo.write(NEWLINE_NAME, TEST.replace('    assert parse("0") == 0\n', ""))
    repo.commit("agent: moved and weakened")
    code, out, err = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert code == 1, out + err
    assert "OG30" in out


def test_a_file_with_a_newline_in_its_name_reads_from_a_commit(repo: Repo, capsys) -> None:
    from oracle_guard.repo import git

    repo.write(NEWLINE_NAME, TEST)
    repo.write(T, TEST)
    repo.commit("base")
    old = os.getcwd()
    os.chdir(repo.path)
    try:
        blobs = git.read_blobs("HEAD", [NEWLINE_NAME, T, "tests/absent\n.py"])
    finally:
        os.chdir(old)
    assert blobs[NEWLINE_NAME] == TEST.encode() and blobs[T] == TEST.encode()
    assert blobs["tests/absent\n.py"] is None


def test_a_test_moved_to_a_name_with_a_newline_unchanged_passes(repo: Repo, capsys) -> None:
    repo.write(T, TEST)
    base = repo.commit("base")
    repo.git("mv", T, NEWLINE_NAME)
    repo.commit("rename")
    code, out, err = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert code == 0, out + err


# -- 7. no base means no verdict ------------------------------------------------------------


def _weakened_branch(repo: Repo) -> str:
    repo.write(T, TEST)
    base = repo.commit("base")
    repo.git("branch", "-q", "trunk")
    repo.write(T, TEST.replace('    assert parse("0") == 0\n', ""))
    head = repo.commit("agent: weaker")
    repo.git("checkout", "-q", "--detach", head)
    return base


def test_an_empty_base_is_a_usage_error(repo: Repo, capsys, monkeypatch) -> None:
    _weakened_branch(repo)
    code, out, err = gate(repo, capsys, "--base", "", "--skip", "collection-snapshot")
    assert code == 2 and "--base is empty" in one_error_line(err)
    monkeypatch.setenv("ORACLE_GUARD_BASE", "")
    code, out, err = gate(repo, capsys, "--skip", "collection-snapshot")
    assert code == 2 and "ORACLE_GUARD_BASE is set but empty" in one_error_line(err)
    monkeypatch.setenv("ORACLE_GUARD_BASE", "trunk")  # the honest spelling judges the change
    code, out, err = gate(repo, capsys, "--skip", "collection-snapshot")
    assert code == 1 and "OG301" in out


def test_ci_on_a_detached_head_without_a_base_refuses_to_pass(repo: Repo, capsys, monkeypatch) -> None:
    _weakened_branch(repo)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code, out, err = gate(repo, capsys, "--skip", "collection-snapshot")
    assert code == 2
    assert "--base origin/main" in one_error_line(err)


def test_ci_on_a_detached_head_uses_github_base_ref(repo: Repo, capsys, monkeypatch) -> None:
    base = _weakened_branch(repo)
    repo.git("update-ref", "refs/remotes/origin/trunk", base)
    monkeypatch.setenv("CI", "1")
    monkeypatch.setenv("GITHUB_BASE_REF", "trunk")
    code, out, err = gate(repo, capsys, "--skip", "collection-snapshot")
    assert code == 1 and "OG301" in out, out + err
    repo.git("update-ref", "-d", "refs/remotes/origin/trunk")  # not fetched: say how
    code, out, err = gate(repo, capsys, "--skip", "collection-snapshot")
    assert code == 2 and "git fetch origin trunk:refs/remotes/origin/trunk" in one_error_line(err)


def test_ci_with_a_staged_change_or_on_a_branch_judges_that(repo: Repo, capsys, monkeypatch) -> None:
    repo.write(T, TEST)
    repo.commit("base")
    monkeypatch.setenv("CI", "1")
    repo.write(T, TEST + "\n\ndef test_more():\n    assert parse('1') == 100\n")
    repo.stage()
    code, out, err = gate(repo, capsys, "--skip", "collection-snapshot")  # on a branch, staged
    assert code == 0, out + err
    repo.git("checkout", "-q", "--detach")
    code, out, err = gate(repo, capsys, "--skip", "collection-snapshot")  # detached, but staged
    assert code == 0, out + err


def test_a_shallow_clone_hint_is_a_command_that_works(repo: Repo, capsys, tmp_path: Path) -> None:
    repo.write(T, TEST)
    repo.commit("one")
    repo.write(T, TEST + "\n")
    repo.commit("two")
    clone = tmp_path / "shallow"
    subprocess.run(("git", "clone", "-q", "--depth", "1", f"file://{repo.path}", str(clone)), check=True)
    shallow = Repo(clone)
    code, out, err = gate(shallow, capsys, "--base", "origin/feature", "--skip", "collection-snapshot")
    line = one_error_line(err)
    assert code == 2 and "git fetch origin feature:refs/remotes/origin/feature" in line and "--unshallow" in line


# -- 2. line endings ----------------------------------------------------------------------

SKIP_BASE = "import pytest\n\n\ndef test_a():\n    assert 1 + 1 == 2\n\n\ndef test_b():\n    assert 2 * 2 == 4\n"
SKIP_NEW = SKIP_BASE.replace("def test_b", "@pytest.mark.skip\ndef test_b")


@pytest.mark.parametrize("eol", ["\r", "\r\n", "mixed"])
def test_a_new_skip_mark_in_a_cr_or_mixed_file_is_found_at_its_line(repo: Repo, capsys, eol: str) -> None:
    from oracle_guard.hook_ids.forbid_skip_marks import main as skip_main

    def spell(text: str) -> bytes:
        if eol == "mixed":
            lines = text.split("\n")
            return b"".join(line.encode() + (b"\r", b"\n", b"\r\n")[i % 3] for i, line in enumerate(lines[:-1]))
        return text.replace("\n", eol).encode()

    repo.write(T, spell(SKIP_BASE))
    repo.commit("base")
    repo.write(T, spell(SKIP_NEW))
    repo.stage()
    code = repo.run(skip_main, T)
    out = capsys.readouterr().out
    tree = ast.parse(spell(SKIP_NEW))  # where Python itself puts the mark
    line = tree.body[-1].decorator_list[0].lineno  # type: ignore[attr-defined]
    assert code == 1 and f"{T}:{line}:2: OG101" in out, out


def test_a_cr_only_file_that_only_gains_a_test_passes(repo: Repo, capsys) -> None:
    from oracle_guard.hook_ids.forbid_skip_marks import main as skip_main

    repo.write(T, SKIP_BASE.replace("\n", "\r").encode())
    repo.commit("base")
    repo.write(T, (SKIP_BASE + "\n\ndef test_c():\n    assert 3 == 3\n").replace("\n", "\r").encode())
    repo.stage()
    assert repo.run(skip_main, T) == 0, capsys.readouterr().out


# -- 9. bad input, everywhere, is one line and exit 2 ---------------------------------------

CONTRACT = "tests/agent_contract.yaml"
PROJECT = Path(__file__).resolve().parents[1]


def the_error(err: str) -> str:
    """The one error line (check may repeat it per hook; it is still one message)."""
    assert "Traceback" not in err, err
    lines = {line for line in err.splitlines() if line.strip() and "notice:" not in line}
    assert len(lines) == 1, err
    (line,) = lines
    assert line.startswith("oracle-guard: error: "), err
    return line


def cli(repo: Repo, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """oracle-guard in a child process, so that a hang is a failure and not a stuck suite."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    return subprocess.run(
        (sys.executable, "-m", "oracle_guard.commands.cli", *args),
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


@pytest.mark.parametrize(
    "contract, expected",
    [
        ("version: 1\nmax_reruns: 1" + "0" * 5000 + "\n", "5001 digits is too large"),
        ('version: 1\nsnapshot: "tests/a\\0b"\n', "control character (U+0000)"),
        (
            "version: 1\nfixtures:\n  - id: x\n    path: tests/" + "a" * 300 + "\n    sha256: " + "0" * 64 + "\n",
            "longer than a file system allows",
        ),
        (
            'version: 1\nfixtures:\n  - id: x\n    path: "tests/a\\0b"\n    sha256: ' + "0" * 64 + "\n",
            "control character",
        ),
    ],
    ids=["huge-number", "nul-in-snapshot", "long-component", "nul-in-fixture"],
)
def test_bad_contract_values_are_the_change_s_finding_and_one_line_exit_2_at_the_base(
    repo: Repo, capsys, contract: str, expected: str
) -> None:
    """The change's contract that does not load is OG927 (the change could end the gate in exit 2 beside a
    cheat); the same contract committed at the base is the base's problem: one line, exit 2."""
    repo.write(T, TEST)
    repo.write(CONTRACT, "version: 1\n")
    base = repo.commit("base")
    repo.write(CONTRACT, contract, dedent=False)
    code, out, err = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert "Traceback" not in err
    assert code == 1 and finding_codes(out) == ["OG927"], out + err
    assert any(line.startswith(f"{CONTRACT}:") and expected in line for line in out.splitlines()), out
    broken_base = repo.commit("the broken contract committed")
    repo.write("NOTES.md", "an honest change beside the base's broken contract\n")
    code, out, err = gate(repo, capsys, "--base", broken_base, "--skip", "collection-snapshot")
    assert code == 2 and expected in the_error(err), out + err


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["--replay", "--mutate"])
def test_the_merge_gates_judge_the_change_s_broken_contract(repo: Repo, mode: str) -> None:
    """`check --replay`/`--mutate` on a change whose contract is not YAML: OG927, never "nothing was judged"."""
    repo.write(T, TEST)
    repo.write(CONTRACT, "version: 1\n")
    base = repo.commit("base")
    repo.write(CONTRACT, "version: 1\nchecks: [\n", dedent=False)
    proc = cli(repo, "check", "--base", base, mode, "--python", sys.executable, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "error:" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert f"{CONTRACT}:3:1: OG927" in proc.stdout and set(finding_codes(proc.stdout)) == {"OG927"}, proc.stdout


def test_a_large_but_sane_number_still_loads(repo: Repo, capsys) -> None:
    from oracle_guard.contract import contract

    assert contract.loads("version: 1\nmax_active_freezes: 9223372036854775807\n").max_active_freezes == 2**63 - 1


@pytest.mark.parametrize("kind", ["loop", "directory", "fifo"])
@pytest.mark.slow
def test_a_contract_that_is_not_a_file_is_the_change_s_finding_without_hanging(repo: Repo, kind: str) -> None:
    repo.write(T, TEST)
    repo.write(CONTRACT, "version: 1\n")
    base = repo.commit("base")
    target = repo.path / CONTRACT
    target.unlink()
    if kind == "loop":
        os.symlink("agent_contract.yaml", target)
    elif kind == "directory":
        target.mkdir()
    else:
        os.mkfifo(target)
    for args in (
        ("check", "--base", base, "--skip", "collection-snapshot"),
        ("fixture-lock-verify",),
        ("quarantine-untouched",),
    ):
        proc = cli(repo, *args)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr and "error:" not in proc.stderr, proc.stderr
        assert f"{CONTRACT}:1:1: OG927" in proc.stdout
        if args[0] == "check":
            # The gate judges it against the change (OG927, and collection-snapshot's OG873): never "not judged".
            assert set(finding_codes(proc.stdout)) == {"OG927", "OG873"}, proc.stdout
            continue
        # A single pre-commit hook judges it against the change too (it was exit 2: the commit failed, but a
        # CI running one hook read "not judged").
        assert [line.split()[1] for line in proc.stdout.splitlines() if line.startswith(CONTRACT)] == ["OG927"]


@pytest.mark.parametrize(
    "expr", ["not " * 600 + "x", "+".join(["x"] * 800), "-" * 3000 + "x"], ids=["not-600", "binop-800", "unary-3000"]
)
def test_deeply_nested_expressions_are_a_finding_never_exit_2_or_a_traceback(repo: Repo, capsys, expr: str) -> None:
    """The change could end the gate in "nothing was judged" by committing one such file: it is judged (OG928)."""
    repo.write(T, TEST)
    base = repo.commit("base")
    repo.write(T, TEST + f"\n\ndef test_deep():\n    assert {expr}\n", dedent=False)
    code, out, err = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert "Traceback" not in err
    assert code == 1, out + err
    assert {"OG001", "OG928"} & set(finding_codes(out)), out
    if "OG928" in finding_codes(out):
        assert f"{T}:" in out and "split the nested expression" in out, out


def test_a_deep_file_the_change_left_alone_is_not_the_change_s_finding(repo: Repo, capsys) -> None:
    """OG928 names only a file of the change: a deep module of the base beside an honest change passes."""
    deep_sum = "+".join(["1"] * 800)
    repo.write("deep.py", f"TOTAL = {deep_sum}\n", dedent=False)
    repo.write(T, TEST)
    base = repo.commit("base")
    repo.write(T, TEST + "\n\ndef test_more():\n    assert 1 + 1 == 2\n", dedent=False)
    code, out, err = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert code == 0, out + err
    assert "OG928" not in out
    found = nesting.deepest(f"x = {deep_sum}\n".encode())
    assert found is not None and found[0] >= nesting.SUSPECT_DEPTH and found[1] == 1
    ordinary = nesting.deepest(b"def f(a):\n    return [(a + 1) * 2 for _ in range(3)]\n")
    assert ordinary is not None and ordinary[0] < nesting.SUSPECT_DEPTH


def test_a_deep_but_ordinary_expression_is_analysed(repo: Repo, capsys) -> None:
    repo.write(T, TEST)
    base = repo.commit("base")
    repo.write(T, TEST + "\n\ndef test_sum():\n    assert " + "+".join(["1"] * 100) + " == 100\n", dedent=False)
    code, out, err = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert code == 0, out + err


# -- 4. trust settings are monotonic and signed; 5. approvals are used once ------------------

from oracle_guard.contract import approvals as approvals_mod  # noqa: E402
from tests.contract_helpers import approve, make_key, sha, signers_line  # noqa: E402

SIGNERS = "tests/allowed_signers"


def trusted_repo(repo: Repo, tmp_path: Path, extra: str = "") -> tuple[Path, str]:
    """A base with an allowed-signers file, a contract naming it, and a test."""
    key = make_key(tmp_path)
    repo.write(SIGNERS, signers_line(key))
    repo.write(CONTRACT, f"version: 1\nallowed_signers: {SIGNERS}\n{extra}", dedent=False)
    repo.write(T, TEST)
    return key, repo.commit("base")


def contract_with(repo: Repo, body: str) -> None:
    repo.write(CONTRACT, "version: 1\n" + body, dedent=False)


def codes_of(out: str) -> set[str]:
    return {line.split(": ", 1)[1].split()[0] for line in out.splitlines() if ": OG" in line}


def judge(repo: Repo, capsys, base: str) -> tuple[int, set[str], str]:
    repo.stage()
    code, out, err = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    return code, codes_of(out), out + err


def test_a_patch_that_adds_its_own_key_to_the_signers_file_is_refused(repo: Repo, capsys, tmp_path: Path) -> None:
    _, base = trusted_repo(repo, tmp_path)
    mallory = make_key(tmp_path, "mallory")
    repo.write(SIGNERS, (repo.path / SIGNERS).read_text() + signers_line(mallory, "mallory@example.com"))
    code, codes, out = judge(repo, capsys, base)
    assert code == 1 and codes == {"OG511"}, out
    assert "signers-change " + sha((repo.path / SIGNERS).read_bytes()) in out


def test_a_signers_change_approved_by_a_base_key_passes(repo: Repo, capsys, tmp_path: Path) -> None:
    key, base = trusted_repo(repo, tmp_path)
    bob = make_key(tmp_path, "bob")
    repo.write(SIGNERS, (repo.path / SIGNERS).read_text() + signers_line(bob, "bob@example.com"))
    approve(repo, key, f"signers-change {sha((repo.path / SIGNERS).read_bytes())}")
    code, codes, out = judge(repo, capsys, base)
    assert code == 0, out


def test_a_signers_change_approved_by_the_new_key_only_is_refused(repo: Repo, capsys, tmp_path: Path) -> None:
    _, base = trusted_repo(repo, tmp_path)
    mallory = make_key(tmp_path, "mallory")
    (repo.path / SIGNERS).write_text(signers_line(mallory, "mallory@example.com"))
    approve(repo, mallory, f"signers-change {sha((repo.path / SIGNERS).read_bytes())}")
    code, codes, out = judge(repo, capsys, base)
    assert code == 1 and "OG511" in codes, out


@pytest.mark.parametrize(
    "change, code",
    [
        ("allowed_signers: null\n", "OG510"),
        ("allowed_signers: tests/other_signers\n", "OG510"),
        (f"allowed_signers: {SIGNERS}\napprovals: tests/elsewhere\n", "OG510"),
    ],
    ids=["signers-null", "signers-repointed", "approvals-moved"],
)
def test_repointing_the_trust_root_is_refused(repo: Repo, capsys, tmp_path: Path, change: str, code: str) -> None:
    _, base = trusted_repo(repo, tmp_path)
    repo.write("tests/other_signers", (repo.path / SIGNERS).read_text())
    contract_with(repo, change)
    exit_code, codes, out = judge(repo, capsys, base)
    assert exit_code == 1 and code in codes, out


def test_repointing_signers_with_an_approval_passes(repo: Repo, capsys, tmp_path: Path) -> None:
    key, base = trusted_repo(repo, tmp_path)
    repo.write("tests/other_signers", (repo.path / SIGNERS).read_text())
    contract_with(repo, "allowed_signers: tests/other_signers\n")
    approve(repo, key, f"contract-setting allowed_signers {SIGNERS} tests/other_signers")
    code, codes, out = judge(repo, capsys, base)
    assert code == 0, out


def test_removing_the_signers_file_is_refused(repo: Repo, capsys, tmp_path: Path) -> None:
    _, base = trusted_repo(repo, tmp_path)
    repo.remove(SIGNERS)
    code, codes, out = judge(repo, capsys, base)
    assert code == 1 and "OG511" in codes and "was removed" in out, out


def test_adding_signers_where_the_base_had_none_passes(repo: Repo, capsys, tmp_path: Path) -> None:
    repo.write(CONTRACT, "version: 1\n")
    repo.write(T, TEST)
    base = repo.commit("base")
    key = make_key(tmp_path)
    repo.write(SIGNERS, signers_line(key))
    contract_with(repo, f"allowed_signers: {SIGNERS}\n")
    code, codes, out = judge(repo, capsys, base)
    assert code == 0, out


def test_narrowing_fixture_roots_is_refused_and_adding_a_nested_root_passes(repo: Repo, capsys, tmp_path: Path) -> None:
    key, base = trusted_repo(repo, tmp_path)
    contract_with(repo, f"allowed_signers: {SIGNERS}\nfixture_roots: [tests]\n")  # a parent of both roots
    code, codes, out = judge(repo, capsys, base)
    assert code == 1 and codes == {"OG510"}, out
    assert "contract-setting fixture_roots tests/fixtures,tests/data tests" in out
    contract_with(repo, f"allowed_signers: {SIGNERS}\nfixture_roots: []\n")
    code, codes, out = judge(repo, capsys, base)
    assert code == 1 and codes == {"OG510"}, out
    contract_with(repo, f"allowed_signers: {SIGNERS}\nfixture_roots: [tests/fixtures, tests/data, tests/data/golden]\n")
    code, codes, out = judge(repo, capsys, base)
    assert code == 0, out


def test_raising_a_freeze_budget_needs_a_contract_setting_approval(repo: Repo, capsys, tmp_path: Path) -> None:
    key, base = trusted_repo(repo, tmp_path, "max_reruns: 2\n")
    contract_with(repo, f"allowed_signers: {SIGNERS}\nmax_reruns: 5\n")
    code, codes, out = judge(repo, capsys, base)
    assert code == 1 and codes == {"OG610"}, out
    assert "oracle-guard approve contract-setting max_reruns 2 5" in out
    approve(repo, key, "contract-setting max_reruns 2 5")
    code, codes, out = judge(repo, capsys, base)
    assert code == 0, out
    contract_with(repo, f"allowed_signers: {SIGNERS}\nmax_reruns: 1\n")  # lowering is stronger
    repo.git("rm", "-rq", "--cached", "tests/approvals")  # no approval needed for that
    code, codes, out = judge(repo, capsys, base)
    assert code == 0, out


def test_deleting_the_contract_is_refused_unless_approved(repo: Repo, capsys, tmp_path: Path) -> None:
    key, base = trusted_repo(repo, tmp_path)
    repo.remove(CONTRACT)
    code, codes, out = judge(repo, capsys, base)
    assert code == 1 and "OG512" in codes, out
    approve(repo, key, f"contract-setting contract {CONTRACT} null")
    code, codes, out = judge(repo, capsys, base)
    assert code == 0, out


def test_an_untracked_approval_file_approves_nothing(repo: Repo, capsys, tmp_path: Path) -> None:
    key, base = trusted_repo(repo, tmp_path, "max_reruns: 2\n")
    contract_with(repo, f"allowed_signers: {SIGNERS}\nmax_reruns: 3\n")
    repo.stage()
    written = approve(repo, key, "contract-setting max_reruns 2 3")
    repo.git("rm", "-q", "--cached", str(written.relative_to(repo.path)))
    code, out, err = repo.run(check.main, "--skip", "collection-snapshot"), *capsys.readouterr()
    assert code == 1 and "OG610" in out, out + err  # staged change, approval left out of it
    repo.git("add", str(written.relative_to(repo.path)))
    code, out, err = repo.run(check.main, "--skip", "collection-snapshot"), *capsys.readouterr()
    assert code == 0, out + err


@pytest.mark.slow
def test_an_approval_counts_once_a_replayed_copy_is_refused(repo: Repo, capsys, tmp_path: Path) -> None:
    key, _ = trusted_repo(repo, tmp_path, "max_reruns: 2\n")
    contract_with(repo, f"allowed_signers: {SIGNERS}\nmax_reruns: 3\n")
    first = approve(repo, key, "contract-setting max_reruns 2 3")
    repo.commit("raise, approved")
    contract_with(repo, f"allowed_signers: {SIGNERS}\nmax_reruns: 2\n")
    lowered = repo.commit("lower again")
    contract_with(repo, f"allowed_signers: {SIGNERS}\nmax_reruns: 3\n")  # the same weakening again
    code, codes, out = judge(repo, capsys, lowered)
    assert code == 1 and codes == {"OG610"} and "oracle-guard approve contract-setting max_reruns 2 3" in out, out
    copy = first.with_name("replayed" + approvals_mod.SUFFIX)  # a copy under a new name is still spent
    copy.write_bytes(first.read_bytes())
    code, codes, out = judge(repo, capsys, lowered)
    assert code == 1 and codes == {"OG610"} and "already committed at the base" in out, out
    copy.unlink()
    proc = cli(repo, "approve", "contract-setting", "max_reruns", "2", "3", "--key", str(key))  # a fresh approval
    assert proc.returncode == 0, proc.stderr
    code, codes, out = judge(repo, capsys, lowered)
    assert code == 0, out


# -- 3. the gate never writes outside its own file ----------------------------------------

from oracle_guard.commands import init_contract  # noqa: E402
from oracle_guard.contract.snapshot import format_snapshot  # noqa: E402
from oracle_guard.hook_ids import collection_snapshot  # noqa: E402

SNAP = "tests/collection_snapshot.txt"
TEST_A = 'def test_one():\n    assert int("1") == 1\n'


@pytest.mark.parametrize(
    "snapshot, expected",
    [
        (".git/hooks/pre-commit", "may not point into .git/"),
        ("../outside.txt", "may not leave the repository"),
        ("/tmp/anywhere.txt", "must be relative to the repository"),
    ],
)
def test_a_contract_path_outside_the_repository_is_the_change_s_finding(
    repo: Repo, capsys, snapshot: str, expected: str
) -> None:
    repo.write(T, TEST)
    repo.write(CONTRACT, "version: 1\n")
    base = repo.commit("base")
    repo.write(CONTRACT, f"version: 1\nsnapshot: {snapshot}\n")
    code, out, err = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert code == 1 and finding_codes(out) == ["OG927"] and expected in out, out + err
    assert "error:" not in err, err
    assert not (repo.path / ".git/hooks/pre-commit").exists()


@pytest.mark.parametrize("key", ["approvals", "allowed_signers", "fixture_roots"])
def test_every_trust_path_is_held_inside_the_repository(key: str) -> None:
    from oracle_guard.contract import contract

    value = "[../elsewhere]" if key == "fixture_roots" else "../elsewhere"
    with pytest.raises(contract.ContractError, match="may not leave the repository"):
        contract.loads(f"version: 1\n{key}: {value}\n")
    honest = "[tests/golden]" if key == "fixture_roots" else "tests/elsewhere"
    contract.loads(f"version: 1\n{key}: {honest}\n")


@pytest.mark.slow  # collection-snapshot starts pytest before it refuses the path
@pytest.mark.parametrize(
    "snapshot, expected",
    [
        ("src/app.py", "a source or a configuration file"),
        ("pyproject.toml", "configuration file"),
        (CONTRACT, "names the contract"),
        ("tests", "is a directory"),
    ],
    ids=["source", "config", "contract", "directory"],
)
def test_the_snapshot_never_names_another_file(repo: Repo, capsys, snapshot: str, expected: str) -> None:
    repo.write("src/app.py", "x = 1\n")
    repo.write("pyproject.toml", "[project]\nname = 'x'\n")
    repo.write("tests/test_a.py", TEST_A)
    repo.write(CONTRACT, f"version: 1\nsnapshot: {snapshot}\n")
    repo.commit("base")
    before = {p: (repo.path / p).read_bytes() for p in ("src/app.py", "pyproject.toml", CONTRACT)}
    code = repo.run(collection_snapshot.main, "--python", sys.executable, "--always")
    err = capsys.readouterr().err
    assert code == 2 and expected in the_error(err)
    assert {p: (repo.path / p).read_bytes() for p in before} == before


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["symlink", "directory", "fifo", "regular"])
def test_a_snapshot_the_change_makes_no_regular_file_is_its_finding(repo: Repo, kind: str) -> None:
    """The change could end `check` in "nothing was judged" by putting a symlink, folder or FIFO where the
    snapshot was: OG806 against it. The snapshot left a regular file (a new test recorded) passes."""
    _snapshot_repo(repo)
    target = repo.path / SNAP
    if kind == "regular":
        target.write_bytes(format_snapshot({"tests/test_a.py::test_one": "run", "tests/test_a.py::test_two": "run"}))
    else:
        target.unlink()
        if kind == "symlink":
            os.symlink("test_a.py", target)
        elif kind == "directory":
            target.mkdir()
        else:
            os.mkfifo(target)
    proc = cli(repo, "check", "--python", sys.executable, timeout=120)
    assert "Traceback" not in proc.stderr and "error:" not in proc.stderr, proc.stderr
    if kind == "regular":
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return
    assert proc.returncode == 1 and finding_codes(proc.stdout) == ["OG806"], proc.stdout + proc.stderr
    assert f"{SNAP}:1:1: OG806" in proc.stdout


def _snapshot_repo(repo: Repo) -> None:
    repo.write("tests/test_a.py", TEST_A)
    repo.write(SNAP, format_snapshot({"tests/test_a.py::test_one": "run"}))
    repo.commit("base")
    repo.write("tests/test_a.py", TEST_A + '\n\ndef test_two():\n    assert int("2") == 2\n')
    repo.stage()


@pytest.mark.slow
def test_check_never_writes_the_snapshot_unless_asked(repo: Repo, capsys, monkeypatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    _snapshot_repo(repo)
    before = (repo.path / SNAP).read_bytes()
    code, out, err = gate(repo, capsys)  # a new test: nothing the base collects was lost, so one notice (issue 38)
    assert code == 0 and "not brought up to date" in err and "oracle-guard collection-snapshot" in err, out + err
    assert (repo.path / SNAP).read_bytes() == before
    code, out, err = gate(repo, capsys, "--write-snapshot")
    assert code == 1 and "updated with what pytest collects now (2 tests)" in out, out + err
    assert b"tests/test_a.py::test_two" in (repo.path / SNAP).read_bytes()
    repo.stage()
    code, out, err = gate(repo, capsys)  # the honest follow-up: stage it, and the gate passes
    assert code == 0, out + err


@pytest.mark.slow
def test_the_hook_keeps_a_crlf_snapshot_crlf_and_writes_it_atomically(repo: Repo, capsys, monkeypatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    repo.write("tests/test_a.py", TEST_A)
    repo.write(SNAP, format_snapshot({"tests/test_a.py::test_one": "run"}).replace(b"\n", b"\r\n"))
    repo.commit("base")
    inode = os.stat(repo.path / SNAP).st_ino
    repo.write("tests/test_a.py", TEST_A + '\n\ndef test_two():\n    assert int("2") == 2\n')
    repo.stage()
    code = repo.run(collection_snapshot.main, "--python", sys.executable)
    assert code == 0, capsys.readouterr()  # a new test: recorded and staged with the commit
    assert repo.git("rev-parse", f":{SNAP}") == repo.git("hash-object", SNAP)  # staged byte for byte as written
    data = (repo.path / SNAP).read_bytes()
    assert b"tests/test_a.py::test_two\r\n" in data and data.count(b"\n") == data.count(b"\r\n")
    assert os.stat(repo.path / SNAP).st_ino != inode  # a new file renamed into place
    assert [p.name for p in (repo.path / "tests").iterdir() if p.name.endswith(".tmp")] == []
    repo.stage()
    assert repo.run(collection_snapshot.main, "--python", sys.executable) == 0  # CRLF is not "out of date"


LEDGER = """\
version: 1
fixtures: []
freezes:
  - id: test_flaky
    owner: oncall
    reason: PAY-1
    expires: "2099-01-01T00:00:00Z"
    remaining_reruns: 1
max_active_freezes: 1
max_freeze_days: 3
max_reruns: 1
allowed_signers: tests/allowed_signers
approvals: tests/signed
fixture_roots: [tests/fixtures]
"""


@pytest.mark.slow
def test_init_force_keeps_the_ledger_caps_signers_and_approvals(repo: Repo, capsys) -> None:
    from oracle_guard.contract import contract

    repo.write("tests/fixtures/a.json", "{}\n")
    repo.write(CONTRACT, LEDGER.replace("\n", "\r\n"), dedent=False)
    repo.commit("base")
    old = contract.loads(LEDGER)
    assert repo.run(init_contract.main, "--force") == 0, capsys.readouterr()
    raw = (repo.path / CONTRACT).read_bytes()
    assert raw.count(b"\n") == raw.count(b"\r\n")  # the file's line-ending style is kept
    new = contract.loads(raw)
    assert new.freezes == old.freezes and new.allowed_signers == old.allowed_signers and new.approvals == old.approvals
    assert (new.max_active_freezes, new.max_freeze_days, new.max_reruns) == (1, 3, 1)
    assert [f.path for f in new.fixtures] == ["tests/fixtures/a.json"]  # the honest part: the scan still locks
    assert new.fixture_roots[0] == "tests/fixtures"


def test_init_force_over_a_contract_that_does_not_load_stops(repo: Repo, capsys) -> None:
    repo.write(CONTRACT, "version: 1\nmax_reruns: many\n")
    repo.commit("base")
    assert repo.run(init_contract.main, "--force") == 2
    assert "cannot keep its ledger" in the_error(capsys.readouterr().err)
    assert (repo.path / CONTRACT).read_text() == "version: 1\nmax_reruns: many\n"


def test_lock_keeps_crlf(repo: Repo, capsys) -> None:
    from oracle_guard.contract import contract

    repo.write("tests/fixtures/a.json", "{}\n")
    repo.write(CONTRACT, "version: 1\r\n# keep me\r\nfixtures: []\r\n", dedent=False)
    repo.commit("base")
    assert repo.run(init_contract.lock_main, "tests/fixtures/a.json") == 0, capsys.readouterr()
    raw = (repo.path / CONTRACT).read_bytes()
    assert raw.count(b"\n") == raw.count(b"\r\n") and b"# keep me\r\n" in raw
    assert [f.path for f in contract.loads(raw).fixtures] == ["tests/fixtures/a.json"]


# -- fuzz: mutations of a valid contract and of a test file -------------------------------------

import random  # noqa: E402

from oracle_guard.contract import contract as contract_mod  # noqa: E402
from oracle_guard.contract import trust  # noqa: E402

FUZZ_SIGNERS_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
FUZZ_CONTRACT = f"""\
version: 1
properties:
  - id: roundtrip
    module: tests.test_price
    name: test_roundtrip
    min_examples: 50
fixtures:
  - id: invoice
    path: tests/fixtures/invoice.json
    sha256: {"0" * 64}
    unlock: null
freezes:
  - id: test_price
    owner: oncall
    reason: PAY-1
    expires: "2099-01-01T00:00:00Z"
    remaining_reruns: 1
    silent_runs_allowed: 2
max_active_freezes: 2
max_freeze_days: 5
max_reruns: 2
allowed_signers: tests/allowed_signers
fixture_roots: [tests/fixtures, tests/data]
"""
FUZZ_TEST = (
    TEST
    + """

@settings(max_examples=50)
@given(st.integers())
def test_roundtrip(n):
    assert parse(str(n)) == n * 100
"""
)
FUZZ_TEST = "from hypothesis import given, settings, strategies as st\n" + FUZZ_TEST
NASTY = [
    "null",
    "[]",
    '""',
    "1" + "0" * 5000,
    '"a\\0b"',
    "-1",
    "yes",
    "0x10",
    "!!str x",
    "&a x",
    "*a",
    "{",
    "'",
    "~",
    "2026-01-01",
    "9" * 19,
    ".git/x",
    "../x",
    "/abs",
]


def mutate_text(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        op = rng.randrange(8)
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif op == 2 and ":" in lines[i]:
            key = lines[i].split(":", 1)[0]
            lines[i] = f"{key}: {rng.choice(NASTY)}"
        elif op == 3:
            lines[i] = "".join(
                str((int(c) + rng.choice((1, 9))) % 10) if c.isdigit() and rng.random() < 0.5 else c for c in lines[i]
            )
        elif op == 4:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == 5:
            lines[i] = " " * rng.choice((0, 1, 3, 6)) + lines[i].lstrip()
        elif op == 6:
            pos = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:pos] + rng.choice(["\0", "\r", "\t", "\u2028", "é", "#", "\\"]) + lines[i][pos:]
        else:
            lines[i] = lines[i].replace("==", rng.choice(["!=", ">=", "is not", "=="]), 1)
    sep = rng.choice(["\n", "\n", "\r\n", "\r"])
    return sep.join(lines)


def test_fuzzed_contracts_load_or_refuse_in_one_line() -> None:
    rng = random.Random(20261202)
    loaded = 0
    for _ in range(400):
        text = mutate_text(FUZZ_CONTRACT, rng)
        try:
            contract_mod.loads(text.encode("utf-8", "surrogatepass"))
            loaded += 1
        except contract_mod.ContractError as exc:
            assert "\n" not in str(exc) and str(exc).startswith("tests/agent_contract.yaml"), repr(str(exc))
    assert 0 < loaded < 400  # the mutations reach both sides


def no_weaker(base: contract_mod.Contract, new: contract_mod.Contract) -> str | None:
    """Why NEW promises less than BASE, or None when it is the same or stronger."""
    props = {p.id: p for p in new.properties}
    for p in base.properties:
        q = props.get(p.id)
        if q is None or (q.module, q.name) != (p.module, p.name) or q.min_examples < p.min_examples:
            return f"property {p.id}"
    if {(f.id, f.path, f.sha256) for f in base.fixtures} - {(f.id, f.path, f.sha256) for f in new.fixtures}:
        return "fixture"
    olds = {e.id: e for e in base.freezes}
    for e in new.freezes:
        o = olds.get(e.id)
        if (
            o is None
            or e.expires_at > o.expires_at
            or e.remaining_reruns > o.remaining_reruns
            or (e.silent_runs_allowed or 0) > (o.silent_runs_allowed or 0)
        ):
            return f"freeze {e.id}"
    for knob in ("max_active_freezes", "max_freeze_days", "max_reruns"):
        if getattr(new, knob) > getattr(base, knob):
            return knob
    if new.allowed_signers != base.allowed_signers or new.approvals != base.approvals:
        return "trust root"
    if trust._roots_narrowed(base.fixture_roots, new.fixture_roots):
        return "fixture_roots"
    return None


@pytest.mark.slow
def test_fuzzed_changes_through_the_gate_never_crash_hang_or_pass_a_weakening(repo: Repo, tmp_path: Path) -> None:
    """Seeded; OG_FUZZ_SEED / OG_FUZZ_RUNS run it longer by hand (each run is one `check` process)."""
    rng = random.Random(int(os.environ.get("OG_FUZZ_SEED", "7")))
    repo.write(SIGNERS, f"alice@example.com {FUZZ_SIGNERS_KEY}\n")
    repo.write("tests/fixtures/invoice.json", "{}\n")
    digest = __import__("hashlib").sha256(b"{}\n").hexdigest()
    base_text = FUZZ_CONTRACT.replace("0" * 64, digest)
    repo.write(CONTRACT, base_text, dedent=False)
    repo.write(T, FUZZ_TEST, dedent=False)
    base = repo.commit("base")
    base_contract = contract_mod.loads(base_text)
    seen = set()
    for _ in range(int(os.environ.get("OG_FUZZ_RUNS", "8"))):
        repo.git("checkout", "-q", "-f", base, "--", ".")
        new_contract_text = mutate_text(base_text, rng) if rng.random() < 0.8 else base_text
        new_test = mutate_text(FUZZ_TEST, rng) if rng.random() < 0.5 else FUZZ_TEST
        repo.write(CONTRACT, new_contract_text.encode("utf-8", "surrogatepass"))
        repo.write(T, new_test.encode("utf-8", "surrogatepass"))
        proc = cli(
            repo, "check", "--base", base, "--skip", "collection-snapshot", "--now", "2026-12-02T00:00:00Z", timeout=60
        )
        seen.add(proc.returncode)
        assert proc.returncode in (0, 1, 2), proc.stderr
        assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, proc.stderr
        if proc.returncode == 2:
            assert all(line.startswith("oracle-guard: ") for line in proc.stderr.splitlines() if line.strip()), (
                proc.stderr
            )
        if proc.returncode == 0:
            why = no_weaker(base_contract, contract_mod.loads(new_contract_text.encode("utf-8", "surrogatepass")))
            assert why is None, f"exit 0 on a weaker contract ({why}):\n{new_contract_text}"
    assert len(seen) >= 2 and 0 in seen, seen  # the honest side is reached too


@pytest.mark.slow  # collection-snapshot starts pytest before it refuses the path
def test_a_moved_snapshot_may_not_name_another_committed_file(repo: Repo, capsys) -> None:
    repo.write("tests/test_a.py", TEST_A)
    repo.write("docs/notes.txt", "")  # committed, empty: it would parse as an empty snapshot
    repo.write(SNAP, format_snapshot({"tests/test_a.py::test_one": "run"}))
    repo.commit("base")
    repo.write(CONTRACT, "version: 1\nsnapshot: docs/notes.txt\n")
    repo.stage()
    code = repo.run(collection_snapshot.main, "--python", sys.executable, "--always")
    assert code == 2 and "is not its snapshot" in the_error(capsys.readouterr().err)
    assert (repo.path / "docs/notes.txt").read_bytes() == b""


@pytest.mark.parametrize(
    "name",
    [
        "tests/test_ price.py",
        "tests/test_\tprice.py",
        'tests/test_"price".py',
        "tests/test_prïce.py",
        "tests/-test_price.py",
    ],
)
def test_odd_characters_in_a_moved_test_file_name(repo: Repo, capsys, name: str) -> None:
    repo.write(T, TEST)
    base = repo.commit("base")
    repo.git("rm", "-q", T)
    repo.write(name, TEST.replace('    assert parse("0") == 0\n', ""))
    repo.commit("agent: moved and weakened")
    code, out, err = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert code == 1 and "OG30" in out, out + err
    repo.write(name, TEST)  # the honest move
    repo.commit("restored")
    code, out, err = gate(repo, capsys, "--base", base, "--skip", "collection-snapshot")
    assert code == 0, out + err


def test_the_shipped_schema_holds_trust_paths_inside_the_repository() -> None:
    import json

    import jsonschema

    schema = json.loads((PROJECT / "hooks/oracle_guard/contract/contract.schema.json").read_text(encoding="utf-8"))
    for value, ok in [
        ("tests/allowed_signers", True),
        ("a/..b", True),
        (None, True),
        ("../x", False),
        ("/etc/x", False),
        (".git/hooks/x", False),
        ("a/.GIT/x", False),
    ]:
        errors = list(jsonschema.Draft202012Validator(schema).iter_errors({"version": 1, "allowed_signers": value}))
        assert (not errors) == ok, value
        if value is not None:  # the loader agrees with the schema
            try:
                contract_mod.loads(f"version: 1\nallowed_signers: {json.dumps(value)}\n")
                loaded = True
            except contract_mod.ContractError:
                loaded = False
            assert loaded == ok, value
