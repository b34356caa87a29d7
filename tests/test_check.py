"""`oracle-guard check`, the merge gate: every hook on a branch against its base."""

from __future__ import annotations

from pathlib import Path

import yaml

from oracle_guard.commands import check
from oracle_guard.commands.cli import HOOKS
from oracle_guard.commands.cli import main as cli_main
from tests.helpers import Repo

PROJECT = Path(__file__).resolve().parents[1]

TEST = """\
import pytest


def test_price():
    assert parse("12.50") == 1250


def test_garbage():
    with pytest.raises(ValueError, match="not a price"):
        parse("twelve")
"""


def test_branch_weakening_is_rejected_by_each_hook_that_sees_it(repo: Repo) -> None:
    repo.write("tests/test_price.py", TEST)
    base = repo.commit("base")
    repo.write(
        "tests/test_price.py",
        TEST.replace("def test_price", "@pytest.mark.skip\ndef test_price").replace(
            'ValueError, match="not a price"', "Exception"
        ),
    )
    repo.commit("agent: make it green")
    code, out, _, _ = repo.hook(check.main, "--base", base)
    assert code == 1
    assert "OG101 new skip mark on test_price" in out
    assert "OG306 test_garbage" in out


def test_honest_branch_passes(repo: Repo) -> None:
    repo.write("tests/test_price.py", TEST)
    base = repo.commit("base")
    repo.write("tests/test_price.py", TEST + '\n\ndef test_zero():\n    assert parse("0") == 0\n')
    repo.write("src/prices.py", "def parse(text):\n    return round(float(text) * 100)\n")
    repo.commit("honest: a new test and the code")
    code, out, err, found = repo.hook(check.main, "--base", base)
    assert (code, err, found) == (0, "", []) and out == (
        f"oracle-guard: all checks passed (9 hooks against {base}; not run: oracle-replay (opt-in: --replay))\n"
    ), out
    assert repo.hook(check.main, "--base", base, "--quiet") == (0, "", "", [])  # -q: a clean run prints nothing


def test_a_change_that_only_deletes_a_test_file_is_judged(repo: Repo) -> None:
    repo.write("tests/test_price.py", TEST)
    repo.write("tests/test_other.py", "def test_other():\n    assert 1 + 1 == 2\n")
    base = repo.commit("base")
    repo.remove("tests/test_price.py")
    repo.commit("agent: delete the failing tests")
    code, out, _, _ = repo.hook(check.main, "--base", base)
    assert code == 1 and "OG302 test test_price was removed with its file" in out


def test_staged_mode_and_github_format(repo: Repo) -> None:
    repo.write("tests/test_price.py", TEST)
    repo.commit("base")
    repo.write(
        "tests/test_price.py",
        TEST.replace('    assert parse("12.50") == 1250\n', '    return\n    assert parse("12.50") == 1250\n'),
    )
    repo.stage()
    code, out, _, _ = repo.hook(check.main, "--format", "github")
    assert code == 1 and out.startswith("::error file=tests/test_price.py,line=5,col=5,title=OG202::")


def test_unknown_hook_id_is_a_usage_error(repo: Repo) -> None:
    repo.commit("base")
    code, out, err, _ = repo.hook(check.main, "--skip", "forbid-everything")
    assert code == 2 and out == "" and err.count("\n") == 1 and "unknown hook id forbid-everything" in err


def test_missing_base_is_a_usage_error(repo: Repo) -> None:
    repo.commit("base")
    code, _, err, _ = repo.hook(check.main, "--base", "origin/main")
    assert code == 2 and "base revision 'origin/main' does not exist" in err


def test_cli_lists_commands_and_refuses_unknown_ones(capsys) -> None:
    assert cli_main(["--help"]) == 0
    shown = capsys.readouterr().out
    assert all(hook in shown for hook in HOOKS) and "check" in shown
    assert cli_main(["nope"]) == 2
    assert "unknown command 'nope'" in capsys.readouterr().err


def test_manifest_lists_every_hook_with_the_gate_s_file_pattern() -> None:
    manifest = yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text())
    assert [h["id"] for h in manifest] == ["oracle-guard", *HOOKS]
    for hook in manifest:
        assert (
            hook["entry"] == ("oracle-guard hook" if hook["id"] == "oracle-guard" else hook["id"])
            and hook["language"] == "python"
        )
        # never commit-msg: it would be handed the message file; oracle-replay runs pytest twice, so not on every commit
        assert hook["stages"] == (
            ["pre-push", "manual"] if hook["id"] == "oracle-replay" else ["pre-commit", "pre-push", "manual"]
        )
        if hook["id"] in check.FILE_HOOKS:
            assert hook["files"] == check.TEST_FILES.pattern
    one = manifest[0]
    assert (
        one["pass_filenames"] is False and one["always_run"] is True and "files" not in one
    )  # one process, it asks git


def test_skipping_the_meta_hook_still_compares_pytest_configuration(repo: Repo) -> None:
    repo.write("tests/test_price.py", TEST)
    repo.write("pytest.ini", "[pytest]\naddopts = -ra\n")
    base = repo.commit("base")
    repo.write("pytest.ini", "[pytest]\naddopts = -ra --deselect tests/test_price.py::test_price\n")
    repo.commit("agent: deselect the failing test")
    code, out, _, _ = repo.hook(check.main, "--base", base, "--skip", "collection-snapshot")
    assert code == 1 and "pytest.ini:2:1: OG851 addopts now deselects" in out
    code, out, _, _ = repo.hook(check.main, "--base", base, "--only", "forbid-skip-marks")
    assert (code, out) == (
        0,
        f"oracle-guard: all checks passed (no hook had anything to check against {base}; not run: forbid-skip-marks"
        " (no test file changed), forbid-runtime-skip, oracle-shrink, fixture-lock-verify, properties-monotonic,"
        " quarantine-untouched, contract-split, forbid-test-aware-code and collection-snapshot (not in --only),"
        " oracle-replay (opt-in: --replay))\n",
    )
