"""Limits with a next step (issue 30, item 3): a checked file's size, and a binary file in a Python path.

A file over the limit is exit 2 with one line naming the contract's `max_file_bytes` (read from the
base: a patch cannot raise it for itself) and the other way out; a binary file in production code is
OG970, whose next step fits a binary file, not OG969's "spell the name statically".
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from oracle_guard.commands import check
from oracle_guard.contract import contract
from oracle_guard.repo import changes
from oracle_guard.reporting import hints
from oracle_guard.reporting.report import UsageError
from oracle_guard.rules import args as hook_args
from tests.contract_helpers import CONTRACT
from tests.helpers import Repo, finding_codes, finding_lines

OVER = changes.MAX_FILE_BYTES + 1
RAISED = 2 * changes.MAX_FILE_BYTES
STATIC = ("--skip", "collection-snapshot")


def big(repo: Repo, path: str = "src/shop/generated.py") -> None:
    repo.write(path, b"#" * OVER)


def read_new(repo: Repo, path: str, limit_asked: bool = True) -> bytes | None:
    """PATH's new bytes as every run reads them: the change set, its limit reader set by the run's context."""
    with repo.cwd():
        change_set = changes.resolve(argparse.Namespace(base=None))
        hook_args.context(argparse.Namespace(contract=CONTRACT), change_set)
        if not limit_asked:
            changes.use_file_limit(lambda: pytest.fail("the limit was asked for a small file"))
        return change_set.read_new([path])[path]


def test_a_file_over_the_limit_is_one_finding_naming_the_setting_and_the_other_way(repo: Repo) -> None:
    """Before: exit 2, "nothing was judged", which the change caused by committing the file: a CI that reads
    exit 2 as neutral let the change through.  Now OG929 against the change, once, whatever hooks read it."""
    repo.write(CONTRACT, "version: 1\n")
    repo.write("src/shop/__init__.py", "RATE = 2\n")
    repo.commit("base")
    big(repo)
    repo.stage()
    code, out, err, codes = repo.hook(check.main, *STATIC)
    assert code == 1 and finding_codes(out) == ["OG929"] and "all checks passed" not in out, (out, err)
    (line,) = finding_lines(out)
    assert line.startswith("src/shop/generated.py:1:1: OG929 ")
    assert f"src/shop/generated.py: {OVER} bytes is over the {changes.MAX_FILE_BYTES}-byte limit" in out
    assert "raise `max_file_bytes` in the contract" in out and "build the generated file instead" in out
    assert "docs/contract.md#checked-file-size" in out and "error:" not in err
    page = (Path(__file__).resolve().parents[1] / "docs/contract.md").read_text(encoding="utf-8")
    assert "\n## Checked file size\n" in page  # the anchor the message names


def test_the_base_contract_s_max_file_bytes_lets_the_file_be_read(repo: Repo) -> None:
    repo.write(CONTRACT, f"version: 1\nmax_file_bytes: {RAISED}\n")
    repo.commit("raised in its own reviewed commit")
    big(repo)
    repo.stage()
    data = read_new(repo, "src/shop/generated.py")
    assert data is not None and len(data) == OVER


def test_the_same_file_under_the_base_s_raised_limit_is_judged_and_passes(repo: Repo) -> None:
    """The honest twin of OG929: the base raised the limit in its own commit; the file is read and judged."""
    repo.write(CONTRACT, f"version: 1\nmax_file_bytes: {RAISED}\n")
    repo.write("src/shop/__init__.py", "RATE = 2\n")
    repo.commit("raised in its own reviewed commit")
    big(repo)
    repo.stage()
    code, out, err, codes = repo.hook(check.main, *STATIC)
    assert (code, codes) == (0, []) and "OG929" not in out + err, (out, err)


def test_a_raise_in_the_same_change_does_not_count(repo: Repo) -> None:
    repo.write(CONTRACT, "version: 1\n")
    repo.commit("base")
    repo.write(CONTRACT, f"version: 1\nmax_file_bytes: {RAISED}\n")
    big(repo)
    repo.stage()
    with pytest.raises(UsageError, match="over the 16777216-byte limit"):
        read_new(repo, "src/shop/generated.py")
    code, out, _, codes = repo.hook(check.main, *STATIC)
    # The limit still refuses the file (OG929); contract-split's finding is beside it.
    assert code == 1 and "over the 16777216-byte limit" in out and set(codes) == {"OG701", "OG929"}


def test_a_file_over_the_raised_limit_is_still_refused(repo: Repo) -> None:
    repo.write(CONTRACT, f"version: 1\nmax_file_bytes: {changes.MAX_FILE_BYTES + 10}\n")
    repo.commit("raised a little")
    repo.write("src/shop/generated.py", b"#" * (changes.MAX_FILE_BYTES + 11))
    repo.stage()
    with pytest.raises(UsageError, match=f"over the {changes.MAX_FILE_BYTES + 10}-byte limit"):
        read_new(repo, "src/shop/generated.py")


def test_a_file_read_outside_the_change_set_gets_the_raised_limit_too(repo: Repo) -> None:
    repo.write(CONTRACT, f"version: 1\nmax_file_bytes: {RAISED}\n")
    repo.commit("raised in its own reviewed commit")
    big(repo, "tests/golden/report.bin")  # goldens and the snapshot are read without the change set
    repo.stage()
    with repo.cwd():
        change_set = changes.resolve(argparse.Namespace(base=None))
        hook_args.context(argparse.Namespace(contract=CONTRACT), change_set)
        data = changes.read_worktree_file("tests/golden/report.bin")
        assert data is not None and len(data) == OVER
        changes.enter_repo([])  # the next run starts from the default until its context reads its base
        with pytest.raises(UsageError, match="over the 16777216-byte limit"):
            changes.read_worktree_file("tests/golden/report.bin")


def test_files_under_the_default_never_read_the_contract(repo: Repo) -> None:
    repo.write(CONTRACT, "version: 1\n")
    repo.commit("base")
    repo.write("src/shop/small.py", "RATE = 2\n")
    repo.write(CONTRACT, "version: [not, a, contract\n")  # would be exit 2 if it were read
    repo.stage()
    assert read_new(repo, "src/shop/small.py", limit_asked=False) == b"RATE = 2\n"


@pytest.mark.parametrize(
    "value, said",
    [
        (changes.MAX_FILE_BYTES - 1, "must be at least 16777216"),
        (changes.MAX_FILE_BYTES_SETTING + 1, "must be at most 1073741824"),
        ("-1", "must be at least"),
        ("'big'", "must be a whole number"),
        ("true", "must be a whole number"),
    ],
)
def test_max_file_bytes_only_raises_and_is_bounded(value: object, said: str) -> None:
    with pytest.raises(contract.ContractError, match=said) as exc:
        contract.loads(f"version: 1\nmax_file_bytes: {value}\n")
    assert str(exc.value).startswith(f"{contract.DEFAULT_PATH}:2:")


def test_max_file_bytes_round_trips() -> None:
    written = contract.dumps(contract.Contract(max_file_bytes=RAISED))
    assert f"max_file_bytes: {RAISED}\n" in written and contract.loads(written).max_file_bytes == RAISED
    assert "max_file_bytes" not in contract.dumps(contract.Contract())


# -- a binary file in a Python path ---------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        b"PK\x03\x04\x00\x00rates\x00\x01",  # a zip: `python shop/rates.py` would run its __main__.py
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        "RATE = 'caf\u00e9'\n".encode("latin-1"),  # Latin-1 bytes, no declaration: not UTF-8
    ],
)
def test_a_binary_production_file_is_og970_with_a_next_step_that_fits(repo: Repo, data: bytes) -> None:
    repo.write("shop/__init__.py", "RATE = 2\n")
    repo.commit("base")
    repo.write("shop/rates.py", data)
    repo.stage()
    code, out, _, found = repo.hook(check.main, *STATIC)
    assert code == 1 and set(found) == {"OG970"}, out
    assert f"    next: {hints.next_step('OG970')}\n" in out and "spell the name" not in out


@pytest.mark.parametrize(
    "data",
    [
        b"RATES = {'standard': 2}\n",
        b"# -*- coding: latin-1 -*-\nRATE = 'caf\xe9'\n",  # declared: Python reads it, so do the rules
        b"RATE = 'caf\xc3\xa9'\n",
    ],
)
def test_python_source_in_any_declared_encoding_passes(repo: Repo, data: bytes) -> None:
    repo.write("shop/__init__.py", "RATE = 2\n")
    repo.commit("base")
    repo.write("shop/rates.py", data)
    repo.stage()
    code, out, _, found = repo.hook(check.main, *STATIC)
    assert (code, found) == (0, []), out
    imported = subprocess.run(
        [sys.executable, "-c", "import shop.rates"], cwd=repo.path, capture_output=True, text=True
    )
    assert imported.returncode == 0, imported.stderr  # the honest twin is Python indeed


def test_python_refuses_to_import_the_binary_file_too(repo: Repo) -> None:
    repo.write("shop/__init__.py", "")
    repo.write("shop/rates.py", b"PK\x03\x04\x00\x00rates\x00\x01")
    imported = subprocess.run([sys.executable, "-c", "import shop.rates"], cwd=repo.path, capture_output=True)
    assert imported.returncode != 0  # what OG970 says: a .py that is not source is no Python module


def test_a_binary_test_file_stays_og001(repo: Repo) -> None:
    repo.write("tests/test_a.py", "def test_a():\n    assert 1 == 1\n")
    repo.commit("base")
    repo.write("tests/test_b.py", b"\x00\x01binary")
    repo.stage()
    code, out, _, found = repo.hook(check.main, *STATIC)
    assert code == 1 and "OG001" in found and "OG970" not in found and "not a text file" in out, out
