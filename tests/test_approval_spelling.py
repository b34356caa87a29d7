"""An approval re-spaced by an editor still verifies; any other change to it still fails (issue 30, item 6).

The signed bytes are the canonical statement line (oracle_guard/contract/approvals.py `canonical`), so
what an editor does around and between its words (indentation, runs of spaces, tabs, a lone CR as the
line end, a blank first line, a byte-order mark) changes nothing that was signed.  A different node id
or a touched signature, however it is spaced, approves nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from oracle_guard.contract import approvals
from oracle_guard.reporting.report import UsageError
from tests.contract_helpers import CONTRACT, contract_text, make_key, signers_line
from tests.helpers import Repo
from tests.test_approvals import load

STATEMENT = "skip-add tests/test_a.py::test_x"
OTHER = "skip-add tests/test_a.py::test_y"


def trusted_repo(repo: Repo, tmp_path: Path) -> Path:
    key = make_key(tmp_path)
    repo.write("tests/allowed_signers", signers_line(key))
    repo.write(CONTRACT, contract_text(extra="allowed_signers: tests/allowed_signers\n"))
    repo.commit("signers at the base")
    return key


def signed_file(repo: Repo, key: Path, statement: str = STATEMENT) -> Path:
    """What `oracle-guard approve` writes: the statement and a nonce on one line, then the signature."""
    line = f"{statement} {approvals.NONCE}0123456789abcdef"
    path = repo.path / "tests/approvals" / approvals.file_name(line)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(line + "\n" + approvals.sign(line, str(key)))
    return path


def respaced(path: Path, edit: Callable[[str], str], line_end: str = "\n") -> None:
    """Rewrite the statement line with EDIT and every line end as LINE_END, as an editor would save it."""
    line, _, rest = path.read_text().partition("\n")
    path.write_bytes((edit(line) + "\n" + rest).replace("\n", line_end).encode())


RESPACINGS: dict[str, tuple[Callable[[str], str], str]] = {
    "leading-spaces": (lambda line: "    " + line, "\n"),
    "runs-of-spaces": (lambda line: line.replace(" ", "   "), "\n"),
    "a-tab": (lambda line: line.replace(" ", "\t", 1), "\n"),
    "trailing-cr": (lambda line: line + "\r", "\n"),
    "all-at-once-crlf": (lambda line: "\t " + line.replace(" ", " \t  ") + "  ", "\r\n"),
    # Failed before issue 30: the statement was whatever preceded the first LF.
    "lone-cr-line-ends": (lambda line: line, "\r"),
    "lone-cr-and-tabs": (lambda line: "\t" + line.replace(" ", "\t\t"), "\r"),
    "a-blank-first-line": (lambda line: "\n" + line, "\n"),
    "indented-byte-order-mark": (lambda line: "  \ufeff" + line, "\n"),
}


@pytest.mark.parametrize("how", sorted(RESPACINGS))
def test_a_respaced_statement_line_still_verifies(repo: Repo, tmp_path: Path, how: str) -> None:
    key = trusted_repo(repo, tmp_path)
    path = signed_file(repo, key)
    respaced(path, *RESPACINGS[how])
    repo.stage()
    found = load(repo)
    assert found.covers(STATEMENT), found.explain(STATEMENT)
    assert not found.covers(OTHER)


@pytest.mark.parametrize("how", ["runs-of-spaces", "lone-cr-and-tabs", "a-blank-first-line"])
def test_a_respaced_line_naming_another_test_approves_neither(repo: Repo, tmp_path: Path, how: str) -> None:
    key = trusted_repo(repo, tmp_path)
    path = signed_file(repo, key)
    edit, line_end = RESPACINGS[how]
    respaced(path, lambda line: edit(line.replace("::test_x", "::test_y")), line_end)
    repo.stage()
    found = load(repo)
    assert not found.covers(OTHER) and not found.covers(STATEMENT)
    assert "does not verify" in found.explain(OTHER)


@pytest.mark.parametrize("how", ["runs-of-spaces", "lone-cr-and-tabs", "a-blank-first-line"])
def test_a_touched_signature_fails_however_the_line_is_spaced(repo: Repo, tmp_path: Path, how: str) -> None:
    key = trusted_repo(repo, tmp_path)
    path = signed_file(repo, key)
    lines = path.read_text().split("\n")
    body = lines[2]  # the armour's first base64 line
    lines[2] = body[:-6] + ("A" if body[-6] != "A" else "B") + body[-5:]
    path.write_text("\n".join(lines))
    respaced(path, *RESPACINGS[how])
    repo.stage()
    assert not load(repo).covers(STATEMENT)


def test_a_spent_approval_saved_with_lone_crs_stays_spent(repo: Repo, tmp_path: Path) -> None:
    key = trusted_repo(repo, tmp_path)
    path = signed_file(repo, key)
    repo.commit("approved once")
    copy = path.with_name("again.approval")
    copy.write_bytes(path.read_bytes().replace(b"\n", b"\r"))
    repo.stage()
    found = load(repo)
    assert not found.covers(STATEMENT) and "already committed at the base" in found.explain(STATEMENT)


def test_a_file_of_blank_lines_is_no_approval() -> None:
    assert approvals._signature_of(" \n\r\n\t\n") is None
    assert approvals._signature_of("\n\n" + STATEMENT + "\n") is None  # a statement without a signature


@pytest.mark.parametrize(
    "words", [[STATEMENT], ["  skip-add\t tests/test_a.py::test_x "], ["skip-add", " tests/test_a.py::test_x"]]
)
def test_approve_takes_the_statement_in_any_spacing(words: list[str]) -> None:
    assert approvals.parse_statement(words) == STATEMENT


def test_approve_still_counts_the_words_of_a_quoted_statement() -> None:
    with pytest.raises(UsageError, match="takes 1 argument"):
        approvals.parse_statement(["skip-add tests/test_a.py::test_x tests/test_a.py::test_y"])
