"""Machine-readable output: --format json (versioned), sarif (2.1.0, validated), github; --version; hints."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from oracle_guard import __version__
from oracle_guard.commands import check, cli
from oracle_guard.hook_ids import registry
from oracle_guard.hook_ids.forbid_skip_marks import main as skip_main
from oracle_guard.reporting import hints, output
from oracle_guard.reporting.report import Finding, escape_data, escape_property, notice, use_format
from tests.helpers import Repo

PROJECT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((PROJECT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
TEST = "import pytest\n\n\ndef test_price():\n    assert 2 + 2 == 4\n\n\ndef test_other():\n    assert 'a'.upper() == 'A'\n"
WEAKER = TEST.replace("def test_price", "@pytest.mark.skip\ndef test_price").replace(
    "    assert 'a'.upper() == 'A'\n", "    return\n    assert 'a'.upper() == 'A'\n"
)


def weakened(repo: Repo) -> str:
    repo.write("tests/test_price.py", TEST)
    base = repo.commit("base")
    repo.write("tests/test_price.py", WEAKER)
    repo.commit("agent")
    return base


def run_json(repo: Repo, capsys: pytest.CaptureFixture[str], main, *argv: str) -> tuple[int, dict]:  # type: ignore[no-untyped-def, type-arg]
    code = repo.run(main, *argv)
    return code, json.loads(capsys.readouterr().out)


def test_json_lists_each_finding_with_its_hook_fix_and_a_summary(repo: Repo, capsys) -> None:
    base = weakened(repo)
    code, doc = run_json(repo, capsys, check.main, "--base", base, "--format", "json")
    assert code == 1 and doc["schema"] == "oracle-guard/findings" and doc["version"] == output.SCHEMA_VERSION == 1
    assert doc["tool"] == {"name": "oracle-guard", "version": __version__}
    by_code = {f["code"]: f for f in doc["findings"]}
    skip = by_code["OG101"]
    assert (skip["path"], skip["line"], skip["col"], skip["end_line"], skip["hook"]) == (
        "tests/test_price.py",
        4,
        2,
        4,
        "forbid-skip-marks",
    )
    assert (
        skip["fix"]
        == "remove the mark, or add a freeze entry, or `oracle-guard approve skip-add tests/test_price.py::test_price`; "
        + "no signers at the base yet: see `oracle-guard explain OG101`"  # the long answer is on that page
    )
    assert skip["help_uri"] == hints.DOCS + "/forbid-skip-marks.md#og101-new-skip-or-xfail-mark"
    assert by_code["OG202"]["hook"] == "forbid-runtime-skip"
    assert doc["summary"] == {
        "findings": len(doc["findings"]),
        "errors": 0,
        "by_code": {c: 1 for c in sorted(by_code)},
        "exit_code": 1,
    }


def test_json_of_an_honest_change_is_an_empty_document(repo: Repo, capsys) -> None:
    repo.write("tests/test_price.py", TEST)
    base = repo.commit("base")
    repo.write("tests/test_price.py", TEST + "\n\ndef test_third():\n    assert 3 * 3 == 9\n")
    repo.commit("honest")
    code, doc = run_json(repo, capsys, check.main, "--base", base, "--format", "json")
    assert code == 0 and doc["findings"] == [] and doc["summary"]["exit_code"] == 0


def test_json_from_a_single_hook_and_an_error_as_a_document(repo: Repo, capsys) -> None:
    base = weakened(repo)
    code, doc = run_json(repo, capsys, skip_main, "--base", base, "--format", "json", "tests/test_price.py")
    assert code == 1 and [(f["code"], f["hook"]) for f in doc["findings"]] == [("OG101", "forbid-skip-marks")]
    code = repo.run(skip_main, "--base", "nope", "--format", "json", "tests/test_price.py")
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert code == 2 and doc["summary"]["exit_code"] == 2 and "base revision 'nope' does not exist" in doc["errors"][0]
    assert captured.err.count("\n") == 1  # and still one line on stderr


def test_notices_go_into_the_document_not_onto_stderr(repo: Repo, capsys) -> None:
    repo.write("tests/test_price.py", WEAKER)
    repo.stage()  # no commits yet: the hook says so
    code, doc = run_json(repo, capsys, skip_main, "--format", "json", "tests/test_price.py")
    assert code == 1 and any("no commits yet" in n for n in doc["notices"])


@pytest.mark.parametrize("weaken", [True, False], ids=["findings", "clean"])
def test_sarif_validates_against_the_official_schema(repo: Repo, capsys, weaken: bool) -> None:
    base = weakened(repo) if weaken else repo.commit("empty")
    code, doc = run_json(repo, capsys, check.main, "--base", base, "--format", "sarif")
    jsonschema.Draft4Validator(SCHEMA).validate(doc)
    run = doc["runs"][0]
    assert doc["version"] == "2.1.0" and run["tool"]["driver"]["version"] == __version__
    rules = run["tool"]["driver"]["rules"]
    assert code == (1 if weaken else 0) and len(run["results"]) == (3 if weaken else 0)
    for result in run["results"]:
        rule = rules[result["ruleIndex"]]
        assert rule["id"] == result["ruleId"] and rule["helpUri"] == hints.help_uri(rule["id"])
        assert hints.next_step(rule["id"]) in rule["help"]["text"]
        assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "tests/test_price.py"


def test_sarif_of_an_odd_path_still_validates() -> None:
    finding = Finding("tests/dir with space/t%st,1.py", 0, 0, "OG308", "x")
    doc = output.sarif_document([("oracle-shrink", finding)], ["an error"], ["a notice"])
    jsonschema.Draft4Validator(SCHEMA).validate(doc)
    assert (
        doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        == "tests/dir%20with%20space/t%25st%2C1.py"
    )


def test_every_code_the_hooks_can_report_has_a_hint_and_a_docs_section() -> None:
    used = set()
    for source in (PROJECT / "hooks" / "oracle_guard").rglob("*.py"):
        if source.name not in ("hints.py", "explain_examples.py", "explain_examples_pytest.py"):
            used |= set(re.findall(r'"(OG\d{3})"', source.read_text()))
    assert used and used - set(hints.CODES) == set()
    for code in hints.CODES:
        page = PROJECT / "docs" / hints.page(code)
        headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.M)
        assert hints.section(code) in {hints.anchor(h) for h in headings}, (code, page.name)  # help_uri's target
        assert hints.help_uri(code) == f"{hints.DOCS}/{page.name}#{hints.section(code)}"
        if "#" not in hints.CODES[code][0]:  # a hook's page: one `## CODE title` section per code
            assert f"{code} {hints.title(code)}" in headings, code
    for code in used:
        step = hints.next_step(code)
        assert step and len(step) < 120 and not step.endswith(".")


def test_the_anchor_is_github_s() -> None:
    assert hints.anchor("OG864 asserts stripped (python -O)") == "og864-asserts-stripped-python--o"
    assert hints.anchor("OG904 pytest cannot run the base's tests") == "og904-pytest-cannot-run-the-bases-tests"


def test_github_format_escapes_properties_and_data_and_notices_are_annotations(capsys) -> None:
    odd = Finding("tests/a,b:c\r\nd%.py", 1, 2, "OG101", "first\nsecond 100%")
    assert odd.github() == "::error file=tests/a%2Cb%3Ac%0D%0Ad%25.py,line=1,col=2,title=OG101::first%0Asecond 100%25"
    assert escape_property("a:b,c") == "a%3Ab%2Cc" and escape_data("a:b,c") == "a:b,c"
    use_format("github")
    try:
        notice("no commits yet:\neverything is new")
    finally:
        use_format("text")
    assert capsys.readouterr().out == "::notice title=oracle-guard::no commits yet:%0Aeverything is new\n"


def test_text_report_of_check_ends_with_a_count_per_code(repo: Repo, capsys) -> None:
    base = weakened(repo)
    assert repo.run(check.main, "--base", base) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "oracle-guard: 3 findings (OG101 x1, OG202 x1, OG301 x1)"


def test_version_on_oracle_guard_and_every_hook(capsys) -> None:
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out == f"oracle-guard {__version__}\n"
    for hook in registry.HOOKS:
        main = cli.load(hook.main)
        with pytest.raises(SystemExit) as exc:
            main(["--version"])
        assert exc.value.code == 0 and capsys.readouterr().out == f"{hook.id} (oracle-guard) {__version__}\n"


def test_agent_format_says_why_and_what_to_do_and_clean_says_so(repo: Repo, capsys) -> None:
    base = weakened(repo)
    assert repo.run(check.main, "--base", base, "--format", "agent") == 1
    out = capsys.readouterr().out
    assert out.startswith(
        "oracle-guard: this change weakens the tests (3 findings); it is refused.\n1. tests/test_price.py:4:2 OG101 new skip mark on test_price\n"
    )
    assert "   why: new skip or xfail mark (forbid-skip-marks)\n" in out
    assert (
        "   do: remove the mark, or add a freeze entry, or `oracle-guard approve skip-add tests/test_price.py::test_price`; "
        + hints.no_signers_yet("OG101", None)
        + "\n"
        in out
    )
    assert "do not edit the contract, the snapshot or the signers file" in out
    repo.write("tests/test_price.py", TEST)
    repo.commit("restored")
    assert repo.run(check.main, "--base", base, "--format", "agent") == 0
    assert capsys.readouterr().out == "oracle-guard: no weakening found\n"


def test_an_error_after_a_json_run_in_the_same_process_is_plain_text(repo: Repo, capsys) -> None:
    base = weakened(repo)
    run_json(repo, capsys, check.main, "--base", base, "--format", "json")
    code = repo.run(check.main, "--skip", "forbid-everything")
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and captured.err.count("\n") == 1
    code = repo.run(check.main, "--format", "json", "--skip", "forbid-everything")  # asked for: a document
    assert code == 2 and json.loads(capsys.readouterr().out)["summary"]["exit_code"] == 2


def test_sarif_declares_one_rule_per_code() -> None:
    doc = output.sarif_document([], [], [])
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(hints.CODES)
    assert all(r["helpUri"] == hints.help_uri(r["id"]) and r["help"]["text"] for r in rules)
    jsonschema.Draft4Validator(SCHEMA).validate(doc)


def test_a_finding_is_one_line_whatever_its_path_or_message_holds() -> None:
    # A process's arguments (OG926 quotes a `python -c` script), a file name git allows, a test's output: each
    # may hold a newline or a tab, and a second line would break `path:line:col` readers and the `next:` line.
    finding = Finding("odd\nname.py", 3, 1, "OG926", "was started as `python -c 'import os\n\tos.fork()'` \x1b[31m")
    assert finding.text() == "odd\\nname.py:3:1: OG926 was started as `python -c 'import os\\n\\tos.fork()'` \\x1b[31m"
    assert Finding("tests/test_é.py", 1, 1, "OG101", "skip ‘mark’ added").text() == (
        "tests/test_é.py:1:1: OG101 skip ‘mark’ added"
    )
