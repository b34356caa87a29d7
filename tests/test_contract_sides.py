"""One contract reader per side (oracle_guard.contract.contract.at_base / at_new), failing closed.

Nothing at the contract's path is "no contract"; anything else that is not a
regular file (a symlink, a directory, a submodule, a FIFO) is an error (exit
2), on the base side, on a target commit and in the work tree.  An honest
contract still reads the same on every side.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Callable

import pytest

from oracle_guard.contract import contract
from oracle_guard.hook_ids.fixture_lock_verify import main as lock_main
from oracle_guard.hook_ids.properties_monotonic import main as properties_main
from oracle_guard.hook_ids.quarantine_untouched import main as quarantine_main
from tests.helpers import Repo

PATH = "tests/agent_contract.yaml"
HONEST = "version: 1\nmax_active_freezes: 3\n"
WEAK = "version: 1\nmax_active_freezes: 9\n"
TEST = "def test_a():\n    assert 1 + 1 == 2\n"

Main = Callable[[Sequence[str]], int]
HOOK_MAINS: dict[str, Main] = {
    "fixture-lock-verify": lock_main,
    "properties-monotonic": properties_main,
    "quarantine-untouched": quarantine_main,
}


def make_unusual(repo: Repo, kind: str) -> None:
    """Put KIND at the contract's path in the work tree and the index (a regular file may be there)."""
    target = repo.path / PATH
    if target.is_symlink() or target.is_file():
        target.unlink()
    repo.write("tests/weak.yaml", WEAK)
    if kind == "symlink":
        os.symlink("weak.yaml", target)
    elif kind == "symlink-loop":
        os.symlink("agent_contract.yaml", target)
    elif kind == "directory":
        repo.write(f"{PATH}/x.yaml", HONEST)
    elif kind == "submodule":
        head = repo.git("rev-parse", "HEAD").strip()
        repo.git("rm", "-q", "--cached", "--ignore-unmatch", PATH)
        repo.git("update-index", "--add", "--cacheinfo", f"160000,{head},{PATH}")
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        raise AssertionError(kind)


def commit_unusual(repo: Repo, kind: str) -> str:
    make_unusual(repo, kind)
    if kind == "submodule":
        repo.git("commit", "-q", "-m", kind)
        return repo.git("rev-parse", "HEAD").strip()
    return repo.commit(kind)


def restore_honest(repo: Repo) -> None:
    target = repo.path / PATH
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        for child in target.iterdir():
            child.unlink()
        target.rmdir()
    repo.write(PATH, HONEST)


@pytest.fixture
def base(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> str:
    repo.write("tests/test_a.py", TEST)
    repo.write(PATH, HONEST)
    monkeypatch.chdir(repo.path)
    return repo.commit("base")


# -- the readers ------------------------------------------------------------------------


def test_an_honest_contract_reads_the_same_on_every_side(repo: Repo, base: str) -> None:
    from_base = contract.at_base(base, PATH)
    assert from_base is not None and from_base.max_active_freezes == 3
    assert contract.at_new(base, PATH) == contract.at_new(None, PATH) == contract.load(PATH) == from_base
    assert contract.bytes_at_base(base, PATH) == contract.bytes_at_new(None, PATH) == HONEST.encode()


def test_nothing_at_the_path_is_no_contract(repo: Repo, base: str) -> None:
    repo.remove(PATH)
    gone = repo.commit("no contract")
    assert contract.at_base(gone, PATH) is None and contract.at_new(gone, PATH) is None
    assert contract.at_new(None, PATH) is None and contract.at_base(None, PATH) is None


@pytest.mark.parametrize("kind", ["symlink", "directory", "submodule"])
def test_a_committed_contract_that_is_not_a_file_is_an_error(repo: Repo, base: str, kind: str) -> None:
    rev = commit_unusual(repo, kind)
    for read in (contract.at_base, contract.at_new, contract.bytes_at_base, contract.bytes_at_new):
        with pytest.raises(contract.ContractError, match=f"{PATH}: is a"):
            read(rev, PATH)


@pytest.mark.parametrize("kind", ["symlink", "symlink-loop", "directory", "fifo"])
def test_a_work_tree_contract_that_is_not_a_file_is_an_error(repo: Repo, base: str, kind: str) -> None:
    make_unusual(repo, kind)
    for read in (contract.at_new, contract.bytes_at_new):
        with pytest.raises(contract.ContractError, match=PATH):
            read(None, PATH)
    with pytest.raises(contract.ContractError, match=PATH):
        contract.load(PATH)


def move_behind_a_symlinked_folder(repo: Repo) -> None:
    """The contract's folder becomes a symlink to another folder holding a weaker contract."""
    os.rename(repo.path / "tests", repo.path / "elsewhere")
    (repo.path / "elsewhere" / "agent_contract.yaml").write_text(WEAK)
    os.symlink("elsewhere", repo.path / "tests")
    repo.git("add", "-A")


def test_a_contract_behind_a_symlinked_folder_is_an_error_on_every_new_side(repo: Repo, base: str) -> None:
    move_behind_a_symlinked_folder(repo)
    for read in (contract.at_new, contract.bytes_at_new):
        with pytest.raises(contract.ContractError, match="tests/ is a symlink"):
            read(None, PATH)
    rev = repo.commit("contract behind a symlinked folder")
    for read in (contract.at_base, contract.at_new, contract.bytes_at_base, contract.bytes_at_new):
        with pytest.raises(contract.ContractError, match="tests/ is a symlink at"):
            read(rev, PATH)


def test_a_contract_in_real_nested_folders_still_reads(repo: Repo, base: str) -> None:
    nested = "tests/deep/er/agent_contract.yaml"
    repo.write(nested, HONEST)
    rev = repo.commit("nested contract")
    assert contract.at_new(None, nested) == contract.at_new(rev, nested) == contract.at_base(rev, nested)
    assert contract.at_base(rev, "tests/deep/missing/agent_contract.yaml") is None  # nothing there: no contract


def test_check_refuses_a_contract_behind_a_symlinked_folder(repo: Repo, base: str) -> None:
    from oracle_guard.commands import check

    move_behind_a_symlinked_folder(repo)
    result = repo.hook(check.main, "--base", base, "--skip", "collection-snapshot")
    assert result.code == 1 and set(result.codes) == {"OG927"}, result  # the change's doing: never exit 2
    assert "tests/ is a symlink" in result.out, result


def test_a_base_contract_that_does_not_load_stops_the_comparison(repo: Repo, base: str) -> None:
    repo.write(PATH, "version: 1\nmax_active_freezes: [\n")
    broken = repo.commit("broken")
    with pytest.raises(contract.ContractError, match="fail closed"):
        contract.at_base(broken, PATH)


# -- every hook that reads the contract, through its command line -------------------------


@pytest.mark.parametrize("hook", sorted(HOOK_MAINS))
def test_hooks_pass_an_honest_contract_on_both_sides(repo: Repo, base: str, hook: str, capsys) -> None:
    repo.write(PATH, HONEST.replace("3", "2"))  # stronger: fewer freezes allowed
    assert repo.run(HOOK_MAINS[hook], "--base", base) == 0, capsys.readouterr()


@pytest.mark.parametrize("kind", ["symlink", "directory", "submodule"])
@pytest.mark.parametrize("hook", sorted(HOOK_MAINS))
def test_hooks_refuse_a_base_contract_that_is_not_a_file(repo: Repo, base: str, hook: str, kind: str, capsys) -> None:
    rev = commit_unusual(repo, kind)
    restore_honest(repo)
    repo.stage()
    assert repo.run(HOOK_MAINS[hook], "--base", rev) == 2
    assert PATH in capsys.readouterr().err


@pytest.mark.parametrize("hook", sorted(HOOK_MAINS))
def test_hooks_refuse_a_work_tree_contract_linked_to_another_file(repo: Repo, base: str, hook: str, capsys) -> None:
    make_unusual(repo, "symlink")  # tests/weak.yaml loads fine: following the link would read it
    assert repo.run(HOOK_MAINS[hook], "--base", base) == 1  # the change's doing: its finding, never exit 2
    assert f"{PATH}:1:1: OG927 the change's contract does not load (is a symlink" in capsys.readouterr().out


def test_properties_monotonic_refuses_a_base_contract_that_does_not_load(repo: Repo, base: str, capsys) -> None:
    repo.write(PATH, "version: 1\nmax_active_freezes: [\n")
    broken = repo.commit("broken")
    restore_honest(repo)
    assert repo.run(properties_main, "--base", broken) == 2
    assert "fail closed" in capsys.readouterr().err
