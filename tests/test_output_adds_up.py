"""Output that adds up (issue 38, items 2 and 3 of the brief: every finding counted, and a red base named).

Every finding of every layer (static hooks, the replay, the mutation differential) is in the one count of
its run, with its `next:` line, in every mode and format: the text's count and the JSON summary of the same
run agree.  Under `--replay` OG907 used to come after the count line, uncounted, and alone it had neither a
count nor a `next:` line.  The success line names what did not run and why, and a replay ends with what
became of the tests red at the base.  Real git repositories; the replay paths run real pytest (slow).
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from typing import Callable

import pytest

from oracle_guard.commands import check, one_hook
from oracle_guard.hook_ids import replay
from tests.helpers import Repo, Result
from tests.test_red_base import IMPLEMENTED, SLUG, STATS, edited_tests, plain_pytest

FINDING = re.compile(r"^(?P<path>[^\s:]+):\d+:\d+: (?P<code>OG\d{3}) ", re.M)
COUNT = re.compile(r"^oracle-guard: (\d+) findings? \(([^)]*)\)(?:; (.*))?$")
REWRITTEN = {"slug.py": IMPLEMENTED, "tests/test_slug.py": edited_tests('== "room"', '== "room-101"')}


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The project's interpreter is the one running these tests (it has pytest)."""
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


def text_counts(out: str) -> tuple[Counter[str], str]:
    """The codes of the finding lines of a text run, each checked to have its `next:` line; and what the count adds."""
    lines = out.splitlines()
    found: Counter[str] = Counter()
    for n, line in enumerate(lines):
        matched = FINDING.match(line)
        if matched:
            found[matched.group("code")] += 1
            assert lines[n + 1].startswith("    next: "), f"no next: line under {line!r}\n{out}"
    last = COUNT.match(lines[-1])
    assert last, f"the last line is not the count:\n{out}"
    counted = Counter({code: int(n) for code, n in re.findall(r"(OG\d{3}) x(\d+)", last.group(2))})
    assert int(last.group(1)) == sum(counted.values()) == sum(found.values()) and counted == found, out
    return found, last.group(3) or ""


def json_counts(out: str) -> tuple[Counter[str], dict[str, object]]:
    doc = json.loads(out)
    codes = Counter(f["code"] for f in doc["findings"])
    assert doc["summary"]["findings"] == sum(codes.values()) and doc["summary"]["by_code"] == dict(codes)
    assert all(f["fix"] for f in doc["findings"])
    return codes, doc


def same_run_in_every_format(run: Callable[[str], Result]) -> Counter[str]:
    """The findings of one run, read in text, json, github, sarif and agent: every format counts the same."""
    text = run("text")
    assert text.code == 1, text.said
    codes, _ = text_counts(text.out)
    assert json_counts(run("json").out)[0] == codes
    github = run("github")
    annotations = [line for line in github.out.splitlines() if line.startswith("::error ")]
    assert len(annotations) == sum(codes.values()) and all("(next: " in a for a in annotations), github.out
    assert COUNT.match(github.out.splitlines()[-1]), github.out
    sarif = json.loads(run("sarif").out)["runs"][0]["results"]
    assert Counter(r["ruleId"] for r in sarif) == codes
    agent = run("agent").out
    total = sum(codes.values())
    assert f"({total} finding{'s' if total != 1 else ''})" in agent and agent.count("\n   do: ") == total, agent
    return codes


# -- the replay's findings are counted with the hooks' -----------------------------------------


@pytest.mark.slow
def test_check_replay_counts_og907_with_the_static_findings_in_every_format(repo: Repo) -> None:
    repo.change(SLUG, REWRITTEN)
    assert plain_pytest(repo.path) == 0  # the cheat: plain pytest is green with the contradicting test rewritten
    base = repo.git("rev-parse", "HEAD").strip()
    codes = same_run_in_every_format(lambda fmt: repo.hook(check.main, "--replay", "--base", base, "--format", fmt))
    assert codes["OG907"] == 1 and len(codes) > 1, codes  # the static hooks see the rewritten expectation too


@pytest.mark.slow
def test_og907_alone_has_its_count_and_next_line(repo: Repo) -> None:
    repo.change(SLUG, REWRITTEN)
    base = repo.git("rev-parse", "HEAD").strip()
    result = repo.hook(check.main, "--replay", "--only", "oracle-replay", "--base", base)
    codes, tail = text_counts(result.out)
    assert result.code == 1 and codes == Counter({"OG907": 1}), result.said
    assert (
        "next: " in result.out and "oracle-guard approve behavior-change tests/test_slug.py::test_digits" in result.out
    )
    # The red base's fate follows the count: the three were red; two base versions pass now, one still fails.
    assert tail == f"2 of 3 tests red at {base} now pass; 1 still red", result.out


@pytest.mark.slow
def test_oracle_guard_replay_counts_too_and_its_json_agrees(repo: Repo) -> None:
    repo.change(SLUG, REWRITTEN)
    base = repo.git("rev-parse", "HEAD").strip()
    codes = same_run_in_every_format(lambda fmt: repo.hook(replay.main, "--base", base, "--format", fmt))
    assert codes == Counter({"OG907": 1})
    _, doc = json_counts(repo.hook(replay.main, "--base", base, "--format", "json").out)
    assert doc["red_base"] == {
        "base": base,
        "red": 3,
        "now_pass": 2,
        "still_red": 1,
        "modules": 0,
        "modules_still": 0,
        "text": f"2 of 3 tests red at {base} now pass; 1 still red",
    }


@pytest.mark.slow
def test_check_mutate_counts_the_mutation_findings(repo: Repo) -> None:
    from tests.test_mutation import BASE, STATIC, UNKNOWN_TO_STATIC, T, module

    before, after = UNKNOWN_TO_STATIC["a hand-rolled tolerance"]
    repo.change({**BASE, T: module(before)}, {T: module(after)})
    codes = same_run_in_every_format(
        lambda fmt: repo.hook(check.main, "--mutate", "--skip", STATIC, "--base", "HEAD", "--format", fmt)
    )
    assert set(codes) == {"OG910"}


# -- a red base named at the end of the replay -------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "task, after, fate",
    [
        ("slug", {"slug.py": IMPLEMENTED}, "2 of 3 tests red at {base} now pass; 1 still red"),
        (
            "stats",
            {"stats.py": "def mean(xs):\n    return sum(xs) / len(xs) if xs else 0\n"},
            "1 of 1 test red at {base} now pass; 0 still red",
        ),
    ],
    ids=["stub implemented, the contradicting test left red", "bug report fixed"],
)
def test_an_honest_fix_ends_with_what_became_of_the_red_tests(
    repo: Repo, task: str, after: dict[str, str | None], fate: str
) -> None:
    repo.change({"slug": SLUG, "stats": STATS}[task], after)
    base = repo.git("rev-parse", "HEAD").strip()
    result = repo.hook(check.main, "--replay", "--base", base)
    told = fate.format(base=base)
    assert result.code == 0, result.said
    assert result.out.startswith("oracle-guard: all checks passed (") and result.out.endswith(f"; {told}\n")
    assert "and the replay against" in result.out and result.out.count("\n") == 1
    doc = json.loads(repo.hook(check.main, "--replay", "--base", base, "--format", "json").out)
    assert doc["summary"]["exit_code"] == 0 and doc["red_base"]["text"] == told


@pytest.mark.slow
def test_a_green_base_says_nothing_of_red_tests(repo: Repo) -> None:
    repo.change(STATS, {})
    repo.write("tests/test_stats.py", "from stats import mean\n\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n")
    base = repo.commit("a green base")
    repo.write("stats.py", "def mean(xs):\n    return sum(xs) / max(len(xs), 1)\n")
    repo.commit("honest")
    result = repo.hook(check.main, "--replay", "--base", base)
    assert result.code == 0 and "red at" not in result.out, result.said
    assert "red_base" not in json.loads(repo.hook(check.main, "--replay", "--base", base, "--format", "json").out)


# -- the static paths (quick): the one-process hook counts alike; the success line says why a hook did not run --


def test_the_one_process_hook_counts_the_same_in_text_and_json(repo: Repo) -> None:
    test = "def test_price():\n    assert 2 * 2 == 4\n\n\ndef test_other():\n    assert 1 + 1 == 2\n"
    repo.write("tests/test_price.py", test)
    repo.commit("base")
    repo.write(
        "tests/test_price.py",
        "import pytest\n\n\n@pytest.mark.skip\n" + test.replace("    assert 1 + 1 == 2\n", "    return\n"),
    )
    repo.stage()
    text = repo.hook(one_hook.main, "--skip", "collection-snapshot")
    codes, _ = text_counts(text.out)
    assert text.code == 1 and codes == Counter({"OG101": 1, "OG202": 1, "OG301": 1}), text.said
    assert json_counts(repo.hook(one_hook.main, "--skip", "collection-snapshot", "--format", "json").out)[0] == codes


def test_the_success_line_says_which_hooks_did_not_run_and_why(repo: Repo) -> None:
    repo.write("tests/test_price.py", "from price import VALUE\n\n\ndef test_price():\n    assert VALUE == 4\n")
    repo.write("price.py", "VALUE = 4\n")
    base = repo.commit("base")
    repo.write("price.py", "VALUE = 2 + 2\n")
    repo.commit("production code only")
    code, out, err, _ = repo.hook(check.main, "--base", base, "--skip", "collection-snapshot")
    assert (code, err) == (0, "")
    assert out == (
        f"oracle-guard: all checks passed (6 hooks against {base}; not run: forbid-skip-marks, forbid-runtime-skip"
        " and oracle-shrink (no test file changed), oracle-replay (opt-in: --replay),"
        " collection-snapshot's pytest run (--skip))\n"
    )
    # A test file changed too: the three file hooks run; a hook skipped by hand is named with its reason.
    repo.write("tests/test_price.py", "from price import VALUE\n\n\ndef test_price():\n    assert VALUE == 2 * 2\n")
    repo.commit("and a test")
    code, out, _, _ = repo.hook(check.main, "--base", base, "--skip", "collection-snapshot,contract-split")
    assert (code, out) == (
        0,
        f"oracle-guard: all checks passed (8 hooks against {base}; not run: contract-split and"
        " collection-snapshot's pytest run (--skip), oracle-replay (opt-in: --replay))\n",
    )


def test_the_red_base_sentence_accounts_for_every_red_test() -> None:
    from oracle_guard.probes.replay.red import Fate

    assert Fate("main", 3, 3, 0).text() == "3 of 3 tests red at main now pass; 0 still red"
    assert Fate("main", 1, 0, 1).text() == "0 of 1 test red at main now pass; 1 still red"
    # Neither passing nor still red: silenced (OG902 says which); a module that did not collect is told apart.
    assert Fate("main", 4, 1, 1, 2, 1).text() == (
        "1 of 4 tests red at main now pass; 1 still red; 2 now skip or xfail;"
        " 2 test modules that did not collect at main: 1 still does not"
    )
