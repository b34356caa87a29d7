"""quarantine-untouched: every freeze/quarantine row of both articles' tables, both directions."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from oracle_guard.hook_ids.quarantine_untouched import main
from tests.contract_helpers import CONTRACT, approve, contract_text, freeze_entry, make_key, signers_line
from tests.helpers import Repo

NOW = "2026-12-02T12:00:00Z"
SOON = "2026-12-05T00:00:00Z"  # inside max_freeze_days (7)
LATER = "2026-12-07T00:00:00Z"
TOO_LATE = "2026-12-20T00:00:00Z"
PAST = "2026-11-30T00:00:00Z"

BASE_LEDGER = freeze_entry(
    "test_report_render_flaky", SOON, 2, extra="    seed: 20260906\n    silent_runs_allowed: 8\n"
)


@dataclass
class Row:
    table: str  # which article table row (or issue rule) this comes from
    ledger: str  # the freezes: section after the patch
    code: str | None  # expected finding code, None: accepted
    max_active: int = 3
    base_max_active: int = 3


ROWS = [
    Row(
        "article 1: New freeze with owner and expiry -> allow if under max",
        BASE_LEDGER + freeze_entry("test_new_flake", LATER, 1),
        None,
    ),
    Row(
        "article 1: New freeze ... -> (over max: reject)",
        BASE_LEDGER + freeze_entry("a", LATER, 1) + freeze_entry("b", LATER, 1),
        "OG603",
        max_active=2,
        base_max_active=2,
    ),
    Row(
        "article 1: Freeze expiry moved forward -> reject",
        freeze_entry("test_report_render_flaky", LATER, 2, extra="    seed: 20260906\n    silent_runs_allowed: 8\n"),
        "OG611",
    ),
    Row(
        "article 1: Freeze expiry moved back (nearest honest edit) -> allow",
        freeze_entry(
            "test_report_render_flaky",
            "2026-12-03T00:00:00Z",
            2,
            extra="    seed: 20260906\n    silent_runs_allowed: 8\n",
        ),
        None,
    ),
    Row(
        "article 1: Rerun budget increased -> reject",
        freeze_entry("test_report_render_flaky", SOON, 3, extra="    seed: 20260906\n    silent_runs_allowed: 8\n"),
        "OG612",
    ),
    Row(
        "article 1: Rerun budget lowered (nearest honest edit) -> allow",
        freeze_entry("test_report_render_flaky", SOON, 1, extra="    seed: 20260906\n    silent_runs_allowed: 8\n"),
        None,
    ),
    Row(
        "article 1: Active freezes exceed max -> reject",
        BASE_LEDGER + freeze_entry("a", LATER, 1) + freeze_entry("b", LATER, 1) + freeze_entry("c", LATER, 1),
        "OG603",
    ),
    Row(
        "article 1: Active freezes exceed max, cap raised in the same patch -> reject",
        BASE_LEDGER + freeze_entry("a", LATER, 1) + freeze_entry("b", LATER, 1) + freeze_entry("c", LATER, 1),
        "OG610",
        max_active=4,
    ),
    Row("article 1: cap lowered (stronger) -> allow", BASE_LEDGER, None, max_active=1),
    Row("article 1: freeze graduated (entry removed) -> allow", "", None),
    Row(
        "article 1 checker: expired entry -> reject",
        freeze_entry("test_report_render_flaky", PAST, 2, extra="    seed: 20260906\n    silent_runs_allowed: 8\n"),
        "OG601",
    ),
    Row(
        "article 1 checker: remaining_reruns zero -> reject",
        freeze_entry("test_report_render_flaky", SOON, 0, extra="    seed: 20260906\n    silent_runs_allowed: 8\n"),
        "OG602",
    ),
    Row(
        "article 1 workflow 6: new freeze expiring beyond one week -> reject",
        BASE_LEDGER + freeze_entry("test_new_flake", TOO_LATE, 1),
        "OG614",
    ),
    Row(
        "article 1 workflow 6: new freeze with 3 reruns -> reject",
        BASE_LEDGER + freeze_entry("test_new_flake", LATER, 3),
        "OG615",
    ),
    Row(
        "article 2: silent-run budget raised -> reject",
        freeze_entry("test_report_render_flaky", SOON, 2, extra="    seed: 20260906\n    silent_runs_allowed: 9\n"),
        "OG612",
    ),
    Row(
        "article 2: silent-run budget lowered -> allow",
        freeze_entry("test_report_render_flaky", SOON, 2, extra="    seed: 20260906\n    silent_runs_allowed: 4\n"),
        None,
    ),
    Row(
        "article 2: stored seed changed -> reject",
        freeze_entry("test_report_render_flaky", SOON, 2, extra="    seed: 1\n    silent_runs_allowed: 8\n"),
        "OG613",
    ),
    Row(
        "article 2: reason reworded (honest) -> allow",
        freeze_entry(
            "test_report_render_flaky",
            SOON,
            2,
            reason="PAY-1: clock skew",
            extra="    seed: 20260906\n    silent_runs_allowed: 8\n",
        ),
        None,
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.table for r in ROWS])
def test_decision_table(repo: Repo, row: Row) -> None:
    repo.write(CONTRACT, contract_text(freezes=BASE_LEDGER, max_active=row.base_max_active))
    repo.commit("base ledger")
    repo.write(CONTRACT, contract_text(freezes=row.ledger, max_active=row.max_active))
    code, out = repo.staged_hook(main, "--now", NOW).said
    if row.code is None:
        assert code == 0, out
    else:
        assert code == 1 and f" {row.code} " in out, out


def test_missing_owner_is_a_configuration_error(repo: Repo) -> None:
    repo.write(
        CONTRACT,
        'version: 1\nfreezes:\n  - id: t\n    reason: "x"\n    expires: "2026-12-05T00:00:00Z"\n    remaining_reruns: 1\n',
    )
    code, out = repo.staged_hook(main, "--now", NOW).said
    assert code == 1 and "OG927" in out and "a freeze is missing 'owner'" in out


def test_expiry_without_time_zone_is_refused(repo: Repo) -> None:
    repo.write(CONTRACT, contract_text(freezes=freeze_entry("t", "2026-12-05T00:00:00")))
    code, out = repo.staged_hook(main, "--now", NOW).said
    assert code == 1 and "OG927" in out and "'expires' must be an ISO-8601 time with a time zone" in out


def test_now_decides_expiry(repo: Repo, capsys) -> None:
    repo.write(CONTRACT, contract_text(freezes=freeze_entry("t", SOON)))
    repo.commit()
    assert repo.staged_hook(main, "--now", NOW).code == 0
    repo.stage()
    assert repo.run(main, "--now", "2026-12-06T00:00:00Z") == 1
    assert "OG601 freeze 't' expired" in capsys.readouterr().out


def test_new_entry_without_signers_is_a_notice(repo: Repo) -> None:
    repo.write(CONTRACT, contract_text())
    repo.commit()
    repo.write(CONTRACT, contract_text(freezes=freeze_entry("test_new_flake", LATER, 1)))
    code, out = repo.staged_hook(main, "--now", NOW).said
    assert code == 0 and "notice: new freeze 'test_new_flake' (owner oncall" in out


def signed(repo: Repo, tmp_path, ledger: str = ""):
    key = make_key(tmp_path)
    repo.write("tests/allowed_signers", signers_line(key))
    repo.write(CONTRACT, contract_text(freezes=ledger, extra="allowed_signers: tests/allowed_signers\n"))
    repo.commit("signers")
    return key


def test_with_signers_a_new_entry_needs_a_signed_approval(repo: Repo, tmp_path) -> None:
    key = signed(repo, tmp_path)
    repo.write(
        CONTRACT,
        contract_text(
            freezes=freeze_entry("test_new_flake", LATER, 1), extra="allowed_signers: tests/allowed_signers\n"
        ),
    )
    code, out = repo.staged_hook(main, "--now", NOW).said
    assert code == 1 and "OG616 new freeze 'test_new_flake' needs a signed approval" in out
    approve(repo, key, f"freeze-add test_new_flake {LATER} 1")
    assert repo.staged_hook(main, "--now", NOW).code == 0


def test_two_commit_bypass_is_seen_by_the_branch_gate(repo: Repo, tmp_path) -> None:
    """Commit 1 adds the exemption, commit 2 uses it: the merge gate compares with the branch base."""
    signed(repo, tmp_path)
    base = repo.git("rev-parse", "HEAD").strip()
    repo.write(
        CONTRACT,
        contract_text(freezes=freeze_entry("test_x", LATER, 1), extra="allowed_signers: tests/allowed_signers\n"),
    )
    repo.commit("commit 1: add the exemption (hook skipped)")
    repo.write("tests/quarantine/test_x.py", "def test_x():\n    assert flaky()\n")
    repo.commit("commit 2: rely on it")
    code, out = repo.staged_hook(main, "--now", NOW, "--base", base).said
    assert code == 1 and "OG616 new freeze 'test_x'" in out


def test_no_skip_marks_under_the_quarantine_layer_old_or_new(repo: Repo) -> None:
    repo.write(CONTRACT, contract_text(freezes=freeze_entry("test_x", SOON, 1)))
    repo.write(
        "tests/quarantine/test_x.py",
        "import pytest\n\n@pytest.mark.skip(reason='flaky')\ndef test_x():\n    assert flaky()\n",
    )
    repo.commit()  # even an old mark counts there
    code, out = repo.staged_hook(main, "--now", NOW).said
    assert code == 1 and "tests/quarantine/test_x.py:3:2: OG620 skip mark on test_x under the quarantine layer" in out
    repo.write("tests/quarantine/test_x.py", "def test_x():\n    assert flaky()\n")
    assert repo.staged_hook(main, "--now", NOW).code == 0


def test_skip_marks_outside_the_layer_are_not_this_hooks_business(repo: Repo) -> None:
    repo.write(CONTRACT, contract_text())
    repo.write("tests/unit/test_y.py", "import pytest\n\n@pytest.mark.skip\ndef test_y():\n    pass\n")
    assert repo.staged_hook(main, "--now", NOW).code == 0


@pytest.mark.parametrize(
    "entry_id, extra",
    [("test_x", ""), ("tests/quarantine/test_x.py::test_x", ""), ("test_x", "    file: tests/quarantine/test_x.py\n")],
)
def test_quarantined_file_may_not_be_deleted_while_its_entry_exists(repo: Repo, entry_id: str, extra: str) -> None:
    repo.write(CONTRACT, contract_text(freezes=freeze_entry(entry_id, SOON, 1, extra=extra)))
    repo.write("tests/quarantine/test_x.py", "def test_x():\n    assert flaky()\n")
    repo.commit()
    repo.remove("tests/quarantine/test_x.py")
    code, out = repo.staged_hook(main, "--now", NOW).said
    assert code == 1 and "OG621 tests/quarantine/test_x.py deleted while its freeze" in out
    repo.write(CONTRACT, contract_text())  # graduate first: then the file may go
    assert repo.staged_hook(main, "--now", NOW).code == 0


def test_deleting_an_unrelated_quarantine_file_passes(repo: Repo) -> None:
    repo.write(CONTRACT, contract_text(freezes=freeze_entry("test_x", SOON, 1)))
    repo.write("tests/quarantine/test_x.py", "def test_x():\n    assert flaky()\n")
    repo.write("tests/quarantine/test_z.py", "def test_z():\n    assert flaky()\n")
    repo.commit()
    repo.remove("tests/quarantine/test_z.py")
    assert repo.staged_hook(main, "--now", NOW).code == 0


def test_seed_ledger_is_flagged_only_for_its_expiry(repo: Repo) -> None:
    from pathlib import Path

    seed = Path(__file__).with_name("data").joinpath("seed_contract.yaml").read_text()
    repo.write(CONTRACT, seed)
    code, out = repo.staged_hook(main, "--now", NOW, "--base", repo.commit()).said
    assert code == 1
    assert [line.split(": ")[1].split()[0] for line in out.splitlines()] == ["OG601"]


def test_moving_the_quarantine_layer_does_not_unguard_the_old_folder(repo: Repo) -> None:
    repo.write(CONTRACT, contract_text())
    repo.write("tests/quarantine/test_x.py", "def test_x():\n    assert flaky()\n")
    repo.commit()
    repo.write(CONTRACT, contract_text(extra="layers:\n  quarantine: [tests/elsewhere/]\n"))
    repo.write("tests/quarantine/test_x.py", "import pytest\n\n@pytest.mark.xfail\ndef test_x():\n    assert flaky()\n")
    code, out = repo.staged_hook(main, "--now", NOW).said
    assert code == 1 and "tests/quarantine/test_x.py:3:2: OG620 xfail mark on test_x" in out


@pytest.mark.slow
def test_cli_subcommand_runs_the_hook_in_a_real_process(repo: Repo) -> None:
    import subprocess
    import sys

    repo.write(CONTRACT, contract_text(freezes=freeze_entry("t", "2026-11-01T00:00:00Z")))
    proc = subprocess.run(
        (sys.executable, "-m", "oracle_guard.commands.cli", "quarantine-untouched", "--now", NOW),
        cwd=repo.path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert (
        proc.stdout
        == f"{CONTRACT}:4:5: OG601 freeze 't' expired at 2026-11-01T00:00:00Z: fix the test or drop the entry\n"
    )


def test_deleting_the_contract_with_its_ledger_is_rejected(repo: Repo) -> None:
    repo.write(CONTRACT, contract_text(freezes=freeze_entry("t", SOON)))
    repo.commit()
    repo.remove(CONTRACT)
    code, out = repo.staged_hook(main, "--now", NOW).said
    assert code == 1 and f"{CONTRACT}:1:1: OG622 the contract was deleted" in out


def test_range_mode_reads_the_target_commit(repo: Repo, monkeypatch) -> None:
    repo.write(CONTRACT, contract_text(freezes=BASE_LEDGER))
    base = repo.commit("base")
    repo.write("tests/quarantine/test_x.py", "import pytest\n\n@pytest.mark.skip\ndef test_x():\n    pass\n")
    repo.write(
        CONTRACT,
        contract_text(
            freezes=freeze_entry(
                "test_report_render_flaky", LATER, 2, extra="    seed: 20260906\n    silent_runs_allowed: 8\n"
            )
        ),
    )
    bad = repo.commit("weaken")
    repo.write("tests/quarantine/test_x.py", "def test_x():\n    pass\n")
    repo.write(CONTRACT, contract_text(freezes=BASE_LEDGER))
    repo.commit("restore in the work tree")
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", base)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", bad)
    code, out = repo.staged_hook(main, "--now", NOW).said
    assert code == 1 and "OG611" in out and "tests/quarantine/test_x.py:3:2: OG620" in out


def test_an_inline_signature_on_the_entry_approves_it_and_a_forged_one_does_not(repo: Repo, tmp_path) -> None:
    from oracle_guard.contract.approvals import sign

    key = signed(repo, tmp_path)
    good = sign(f"freeze-add test_new_flake {LATER} 1", str(key))
    wrong = sign(f"freeze-add test_new_flake {LATER} 2", str(key))
    for signature, expected in ((good, 0), (wrong, 1)):
        block = "    signature: |\n" + "".join(f"      {line}\n" for line in signature.splitlines())
        repo.write(
            CONTRACT,
            contract_text(
                freezes=freeze_entry("test_new_flake", LATER, 1, extra=block),
                extra="allowed_signers: tests/allowed_signers\n",
            ),
        )
        code, out = repo.staged_hook(main, "--now", NOW).said
        assert code == expected, out
