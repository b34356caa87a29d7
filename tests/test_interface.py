"""The one hook interface: HookContext, check(ctx) per hook, shared args, the registry."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from identify import identify

from oracle_guard import __version__
from oracle_guard.commands import check, cli, runner
from oracle_guard.contract import contract
from oracle_guard.hook_ids import registry
from oracle_guard.repo import changes
from oracle_guard.repo.context import HookContext
from oracle_guard.reporting.report import Finding
from oracle_guard.rules import args
from tests.helpers import Repo

PROJECT = Path(__file__).resolve().parents[1]
TEST = "import pytest\n\n\ndef test_price():\n    assert 2 + 2 == 4\n"
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def context(change_set: changes.ChangeSet | None, *files: str) -> HookContext:
    return HookContext(change_set, files, args.DEFAULT_CONTRACT, NOW, "text", [])


@pytest.mark.parametrize("hook", [h for h in registry.HOOKS if not h.opt_in], ids=lambda h: h.id)
def test_every_hook_exposes_check_of_a_context_and_a_main(hook: registry.Hook) -> None:
    module = __import__(hook.module, fromlist=["check"])
    assert list(inspect.signature(module.check).parameters) == ["ctx"]
    assert callable(module.main) and cli.HOOKS[hook.id][0] == hook.main


def test_an_opt_in_hook_has_a_main_and_stays_out_of_the_default_selection() -> None:
    """oracle-replay runs pytest twice: `check` runs it only when asked (--replay, --only)."""
    opt_in = [h for h in registry.HOOKS if h.opt_in]
    assert [h.id for h in opt_in] == ["oracle-replay"]
    wanted, _ = runner.selection("", "")
    assert "oracle-replay" not in wanted and "collection-snapshot" in wanted
    assert runner.selection("oracle-replay", "")[0] == ["oracle-replay"]
    for hook in opt_in:
        assert callable(cli.load(hook.main)) and cli.HOOKS[hook.id][0] == hook.main


def test_registry_is_the_one_list_of_hooks() -> None:
    assert list(cli.HOOKS) == [h.id for h in registry.HOOKS]
    assert check.FILE_HOOKS == ("forbid-skip-marks", "forbid-runtime-skip", "oracle-shrink")
    assert set(check.TAKES_NOW) == {
        "forbid-skip-marks",
        "forbid-runtime-skip",
        "quarantine-untouched",
        "collection-snapshot",
    }


def test_check_py_builds_no_argv_for_the_hooks() -> None:
    source = (PROJECT / "hooks" / "oracle_guard" / "commands" / "check.py").read_text()
    assert '"--contract"' not in source and "hook_argv" not in source


def test_default_contract_is_spelled_once_for_the_light_modules() -> None:
    assert args.DEFAULT_CONTRACT == contract.DEFAULT_PATH


def test_version_matches_the_package_metadata() -> None:
    declared = re.search(r'^version = "([^"]+)"', (PROJECT / "pyproject.toml").read_text(), re.M)
    assert declared and declared.group(1) == __version__


def test_check_of_a_context_rejects_and_accepts(repo: Repo) -> None:
    from oracle_guard.hook_ids import forbid_skip_marks

    repo.write("tests/test_price.py", TEST)
    repo.commit("base")
    repo.write("tests/test_price.py", TEST.replace("def test_price", "@pytest.mark.skip\ndef test_price"))
    repo.stage()
    with repo_cwd(repo):
        found = forbid_skip_marks.check(context(changes.resolve(_no_base()), "tests/test_price.py"))
    assert [f.code for f in found] == ["OG101"]
    repo.write("tests/test_price.py", TEST.replace("2 + 2 == 4", "2 + 2 == 4 and 3 * 3 == 9"))  # tightened
    repo.stage()
    with repo_cwd(repo):
        assert forbid_skip_marks.check(context(changes.resolve(_no_base()), "tests/test_price.py")) == []


def test_a_context_without_a_change_set_reports_every_occurrence(repo: Repo) -> None:
    from oracle_guard.hook_ids import forbid_skip_marks

    repo.write("tests/test_price.py", TEST.replace("def test_price", "@pytest.mark.skip\ndef test_price"))
    repo.commit("base")
    with repo_cwd(repo):
        assert [f.code for f in forbid_skip_marks.check(context(None, "tests/test_price.py"))] == ["OG101"]


def test_an_error_many_hooks_hit_is_printed_once(repo: Repo, capsys) -> None:
    repo.write("tests/test_price.py", TEST)
    repo.write("tests/agent_contract.yaml", "version: 1\nfixtures: [\n")
    base = repo.commit("base")
    repo.write("tests/test_price.py", TEST + "\n\ndef test_more():\n    assert 1 < 2\n")
    repo.commit("more")
    code = repo.run(check.main, "--base", base)
    err = capsys.readouterr().err
    assert code == 2
    errors = [line for line in err.splitlines() if line.startswith("oracle-guard: error:")]
    assert len(errors) == len(set(errors)) >= 1, err


TAUTOLOGY = Finding("tests/test_x.py", 3, 5, "OG308", "a new tautology `assert True` in test_x")


def double(name: str, base: HookContext, **options: object) -> runner.Plan:
    return runner.Plan(
        registry.Hook(name, "tests.hook_doubles", "a test double"), base._replace(options=options, written=[])
    )


def test_a_finding_two_hooks_see_is_printed_once(repo: Repo, capsys) -> None:
    repo.commit("base")
    with repo_cwd(repo):
        base = context(changes.resolve(_no_base()))
        outcome = runner.run([double("one", base, findings=[TAUTOLOGY]), double("two", base, findings=[TAUTOLOGY])], [])
    assert [hook for hook, _ in outcome.results] == ["one"]
    assert runner.emit("text", outcome) == 1
    out = capsys.readouterr().out
    assert out.splitlines() == [
        TAUTOLOGY.text(),
        "    next: assert something that can fail",
        "oracle-guard: 1 finding (OG308 x1)",
    ]


def test_distinct_findings_at_one_place_are_all_kept(repo: Repo, capsys) -> None:
    other = TAUTOLOGY._replace(message="a new tautology `assert 1` in test_x")
    repo.commit("base")
    with repo_cwd(repo):
        base = context(changes.resolve(_no_base()))
        outcome = runner.run([double("one", base, findings=[TAUTOLOGY]), double("two", base, findings=[other])], [])
    assert len(outcome.results) == 2


def test_one_error_from_two_hooks_is_one_line_and_exit_2(repo: Repo, capsys) -> None:
    repo.commit("base")
    with repo_cwd(repo):
        base = context(changes.resolve(_no_base()))
        errors = [
            double("one", base, error="tests/agent_contract.yaml:2:1: bad"),
            double("two", base, error="tests/agent_contract.yaml:2:1: bad"),
        ]
        alone = runner.run(errors, [])
        beside_a_finding = runner.run([*errors, double("three", base, findings=[TAUTOLOGY])], [])
    assert runner.emit("text", alone) == 2
    assert capsys.readouterr().err == "oracle-guard: error: tests/agent_contract.yaml:2:1: bad\n"
    # A finding from any hook makes the exit 1 even where another could not run; the error is still shown once.
    assert runner.emit("text", beside_a_finding) == 1
    captured = capsys.readouterr()
    assert captured.err == "oracle-guard: error: tests/agent_contract.yaml:2:1: bad\n"
    assert TAUTOLOGY.text() in captured.out  # the other hooks still ran: every problem is shown


def test_many_alike_findings_in_one_file_are_grouped_with_a_count(repo: Repo, capsys) -> None:
    lost = [
        Finding("tests/collection_snapshot.txt", n, 1, "OG801", f"test no longer collected: tests/test_a.py::test_{n}")
        for n in range(1, 41)
    ]
    repo.commit("base")
    with repo_cwd(repo):
        base = context(changes.resolve(_no_base()))
        outcome = runner.run([double("grouped", base, findings=lost)], [])
    runner.emit("text", outcome)
    lines = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("    next: ")]
    assert lines[:3] == [f.text() for f in sorted(lost)[:3]]
    assert (
        lines[3]
        == "tests/collection_snapshot.txt: and 37 more OG801 like these (likely one cause; --format json lists each)"
    )
    assert lines[4] == "oracle-guard: 40 findings (OG801 x40)" and len(lines) == 5
    few = lost[: runner.GROUP_AT - 1]
    with repo_cwd(repo):
        runner.emit("text", runner.run([double("grouped", base, findings=few)], []))
    shown = capsys.readouterr().out.splitlines()
    assert len(shown) == 2 * len(few) + 1  # below the threshold: each one shown, with its next step
    assert shown[1] == (
        "    next: restore the test, or `oracle-guard approve test-retire tests/test_a.py::test_1`; "
        + "no signers at the base yet: see `oracle-guard explain OG801`"  # the long answer is on that page
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "entry",
    [
        "oracle_guard.commands.cli",
        *(h.module for h in registry.HOOKS),
        "oracle_guard.commands.check",
        "oracle_guard.commands.one_hook",
    ],
)
def test_help_and_version_survive_python_OO(entry: str) -> None:
    """Under -OO every __doc__ is None: --help must not crash."""
    for flag in ("--help", "--version"):
        proc = subprocess.run([sys.executable, "-OO", "-m", entry, flag], cwd=PROJECT, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
    proc = subprocess.run([sys.executable, "-m", entry, "--version"], cwd=PROJECT, capture_output=True, text=True)
    assert __version__ in proc.stdout


def _no_base():  # type: ignore[no-untyped-def]
    import argparse

    return argparse.Namespace(base=None)


class repo_cwd:
    def __init__(self, repo: Repo) -> None:
        self.path = repo.path

    def __enter__(self) -> None:
        import os

        self.old = os.getcwd()
        os.chdir(self.path)

    def __exit__(self, *exc: object) -> None:
        import os

        os.chdir(self.old)


def test_check_classifies_files_as_pre_commit_does(repo: Repo, capsys) -> None:
    """types_or: [python, pyi] through identify: a python shebang script counts; a data file is never parsed."""
    script = "#!/usr/bin/env python3\nimport pytest\n\n\ndef test_smoke():\n    assert 2 + 2 == 4\n"
    repo.write("tests/run_smoke", script)
    (repo.path / "tests/run_smoke").chmod(0o755)
    repo.write("tests/notes", "not python ( at all\n")
    repo.write("tests/test_price.py", TEST)
    base = repo.commit("base")
    repo.write("tests/run_smoke", script.replace("def test_smoke", "@pytest.mark.skip\ndef test_smoke"))
    repo.write("tests/notes", "still not python (\n")
    repo.commit("weaken the script, edit the notes")
    code = repo.run(check.main, "--base", base, "--skip", "collection-snapshot")
    out = capsys.readouterr().out
    assert code == 1 and "tests/run_smoke:5:2: OG101 new skip mark on test_smoke" in out
    assert "tests/notes" not in out  # not python: not parsed, no OG001
    assert check.is_python("tests/x.pyi", False) and not check.is_python("tests/z.txt", False)
    # .pyw as the installed identify (pre-commit's own classifier) tags it: the releases for
    # Python 3.9 do not know .pyw, later ones say python -- check agrees with either.
    pyw_tags = identify.tags_from_filename("tests/y.pyw")
    assert check.is_python("tests/y.pyw", False) == bool(pyw_tags & {"python", "pyi"})
    if sys.version_info >= (3, 10):
        assert "python" in pyw_tags  # where identify knows .pyw, check passes it


def test_a_group_of_vanished_tests_names_the_configuration_change_found_with_it(repo: Repo, capsys) -> None:
    deselect = Finding("pytest.ini", 2, 1, "OG851", "addopts now deselects tests/test_a.py")
    lost = [
        Finding("tests/collection_snapshot.txt", n, 1, "OG801", f"test no longer collected: tests/test_a.py::test_{n}")
        for n in range(1, 10)
    ]
    repo.commit("base")
    with repo_cwd(repo):
        base = context(changes.resolve(_no_base()))
        runner.emit("text", runner.run([double("grouped", base, findings=[deselect, *lost])], []))
    out = capsys.readouterr().out
    assert (
        "tests/collection_snapshot.txt: and 6 more OG801 like these (likely one cause, OG851 at pytest.ini:2; --format json lists each)"
        in out
    )
    assert [line.split(": ", 1)[1].split()[0] for line in out.splitlines() if ": OG" in line] == [
        "OG851",
        "OG801",
        "OG801",
        "OG801",
    ]
    assert out.splitlines()[-1] == "oracle-guard: 10 findings (OG801 x9, OG851 x1)"
