"""`oracle-guard explain CODE`: every code's page, and every page's two examples judged by the hooks."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from oracle_guard.commands import check, explain
from oracle_guard.commands.explain_examples import Example, Files
from oracle_guard.reporting import hints
from tests.helpers import Repo, hook

NOW = "2099-01-02T00:00:00Z"  # the ledger examples' clock


def apply(repo: Repo, files: Files) -> None:
    for path, text in files.items():
        if text is None:
            (repo.path / path).unlink()
        else:
            repo.write(path, text, dedent=False)


def judged(repo: Repo, base: str, change: Files, *argv: str) -> tuple[int, list[str], str]:
    """Commit CHANGE on BASE (on its own branch) and run the gate on it: exit code, finding codes, output."""
    repo.git("checkout", "-q", "--detach", base)
    apply(repo, change)
    repo.commit("change")
    result = repo.hook(check.main, "--base", base, "--now", NOW, "--format", "json", *argv)
    found, text = [], result.out.strip()
    while text:  # `check --replay` may print one document per stage (issue 21, item 2): read them all
        doc, end = json.JSONDecoder().raw_decode(text)
        found += [f["code"] for f in doc["findings"]]
        text = text[end:].strip()
    return result.code, found, result.out + result.err


@pytest.mark.slow
@pytest.mark.parametrize("code", sorted(explain.EXAMPLES))
def test_the_weakening_is_refused_with_its_code_and_the_honest_change_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str
) -> None:
    ex: Example = explain.EXAMPLES[code]
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)  # pytest runs in this interpreter, which has the plugin
    argv = ("--replay",) if ex.needs == "replay" else ()
    repo = Repo(tmp_path)
    repo.git("init", "-q", "-b", "main")
    repo.git("config", "commit.gpgsign", "false")
    apply(repo, ex.base)
    base = repo.commit("base")
    status, codes, out = judged(repo, base, ex.weakening, *argv)
    assert status == 1 and code in codes, out
    status, codes, out = judged(repo, base, ex.honest, *argv)
    assert (status, codes) == (0, []), out


def test_every_code_has_a_page_with_examples_or_says_why_not() -> None:
    assert set(explain.EXAMPLES) | set(explain.WITHOUT_EXAMPLE) == set(hints.CODES)
    assert not set(explain.EXAMPLES) & set(explain.WITHOUT_EXAMPLE)
    for code, ex in explain.EXAMPLES.items():
        assert ex.what and ex.why and ex.weakening and ex.honest and ex.needs in ("", "collection", "replay"), code
        assert ex.weakening != ex.honest, code


def test_explain_prints_title_what_why_both_examples_and_the_next_step() -> None:
    code, out, err, _ = hook(explain.main, "og101")
    assert code == 0 and not err
    assert out.startswith("OG101 new skip or xfail mark\nmore: " + hints.help_uri("OG101") + "\n")
    parts = ["What it catches", "Why it matters", "A weakening it refuses", "The nearest honest change", "Next step"]
    assert [out.index(p) for p in parts] == sorted(out.index(p) for p in parts)
    assert "+@pytest.mark.skip(reason='flaky')" in out and hints.next_step("OG101") in out


def test_a_code_without_an_example_says_why() -> None:
    code, out, _, _ = hook(explain.main, "OG904")
    assert code == 0 and "none here: pytest cannot run the base's tests at all" in out and "Next step" in out


def test_json_lists_every_code_and_an_unknown_code_is_one_line_and_exit_2() -> None:
    code, out, _, _ = hook(explain.main, "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["schema"] == "oracle-guard/codes" and doc["version"] == 1
    assert [c["code"] for c in doc["codes"]] == sorted(hints.CODES)
    og301 = next(c for c in doc["codes"] if c["code"] == "OG301")
    assert og301["weakening"]["diff"].startswith("--- a/tests/test_price.py") and og301["help_uri"] == hints.help_uri(
        "OG301"
    )
    code, out, err, _ = hook(explain.main, "OG999")
    assert (code, out) == (2, "") and err.count("\n") == 1 and "unknown code 'OG999'" in err
    code, out, err, _ = hook(explain.main)
    assert (code, out) == (2, "") and "a code is required" in err


def test_each_docs_section_says_what_explain_says() -> None:
    # One source: a code's section on its docs page carries explain's text and next step, so they cannot drift.
    docs = Path(__file__).resolve().parents[1] / "docs"
    for code in hints.CODES:
        text = (docs / hints.page(code)).read_text(encoding="utf-8")
        heading = next(h for h in re.findall(r"^## (.+)$", text, re.M) if hints.anchor(h) == hints.section(code))
        section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
        assert f"Next step: {hints.next_step(code)}." in section, code
        if code in explain.EXAMPLES:
            assert explain.EXAMPLES[code].what in section and f"`oracle-guard explain {code}`" in section, code
        else:
            assert f"No example: {explain.WITHOUT_EXAMPLE[code]}" in section, code
