"""oracle-replay: the base's tests run against the new code (real git repos, real pytest)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oracle_guard.commands import check
from oracle_guard.hook_ids import replay
from oracle_guard.pytest_side import scratch
from oracle_guard.repo import changes
from tests.contract_helpers import CONTRACT, approve, contract_text, make_key, signers_line
from tests.helpers import Repo, Result, finding_codes, finding_lines

SHOP = """\
class ShopError(Exception):
    pass


class OutOfStock(ShopError):
    pass


def price(cents):
    return f"${cents / 100:.2f}"


def label(name):
    return name.title()


def buy(stock):
    if stock <= 0:
        raise OutOfStock("none left")
    return stock - 1


def render(items):
    return "\\n".join(f"{k}: {v}" for k, v in items)
"""

HELPERS = """\
import contextlib


@contextlib.contextmanager
def raises(kind):
    try:
        yield
    except kind:
        return
    raise AssertionError(f"did not raise {kind.__name__}")


def matches_golden(text, path):
    with open(path) as f:
        return text == f.read()
"""

TESTS = """\
import helpers
from shop import OutOfStock, buy, label, price, render


def test_price():
    assert price(150) == "$1.50"


def test_label():
    assert label("blue mug") == "Blue Mug"


def test_buy_empty():
    with helpers.raises(OutOfStock):
        buy(0)


def test_render():
    assert helpers.matches_golden(render([("mug", 2), ("cup", 1)]), "tests/golden/v1/render.txt")
"""

BASE = {
    "src/shop/__init__.py": SHOP,
    "tests/helpers.py": HELPERS,
    "tests/test_shop.py": TESTS,
    "tests/golden/v1/render.txt": "mug: 2\ncup: 1",
    "pytest.ini": "[pytest]\npythonpath = src\n",
}


def shop(old: str, new: str) -> str:
    assert old in SHOP
    return SHOP.replace(old, new)


def edit_tests(old: str, new: str) -> str:
    assert old in TESTS
    return TESTS.replace(old, new)


BROKEN_PRICE = shop('return f"${cents / 100:.2f}"', 'return f"${cents / 100:.1f}"')


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The project's interpreter is the one running these tests (it has pytest and Hypothesis)."""
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))  # the replay's Hypothesis cache
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


REPLAY = (
    "-q",
    "--replay",
    "--only",
    "oracle-replay",
    "--base",
)  # then the base revision; -q: a clean run prints nothing


def weaken(repo: Repo, after: dict[str, str | None], before: dict[str, str] | None = None) -> Result:
    """Commit BASE (and BEFORE), stage AFTER, run the replay against that commit."""
    repo.change({**BASE, **(before or {})}, after)
    return repo.hook(check.main, *REPLAY, repo.git("rev-parse", "HEAD").strip())


# -- every weakening class is caught by the replay alone ----------------------------

WEAKENINGS = {
    "expected value through .lower()": {
        "src/shop/__init__.py": shop("return name.title()", "return name.capitalize()"),
        "tests/test_shop.py": edit_tests(
            'assert label("blue mug") == "Blue Mug"', 'assert label("blue mug").lower() == "Blue Mug".lower()'
        ),
    },
    "golden comparison narrowed by a helper": {
        "src/shop/__init__.py": shop("for k, v in items)", "for k, v in items[:1])"),
        "tests/helpers.py": HELPERS.replace(
            "return text == f.read()", "return text.splitlines()[0] == f.read().splitlines()[0]"
        ),
    },
    "the project's own raises() helper broadened": {
        "src/shop/__init__.py": shop('raise OutOfStock("none left")', 'raise ValueError("none left")'),
        "tests/helpers.py": HELPERS.replace("except kind:", "except Exception:"),
    },
    "a conftest hookwrapper that rewrites reports": {
        "src/shop/__init__.py": BROKEN_PRICE,
        "tests/conftest.py": (
            "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
            "    outcome = yield\n    report = outcome.get_result()\n    if report.failed:\n        report.outcome = 'passed'\n"
        ),
    },
    "a test redirected to a freshly written golden directory": {
        "src/shop/__init__.py": shop('f"{k}: {v}"', 'f"{k} x{v}"'),
        "tests/golden/v2/render.txt": "mug x2\ncup x1",
        "tests/test_shop.py": edit_tests("tests/golden/v1/render.txt", "tests/golden/v2/render.txt"),
    },
    "a deleted assert": {
        "src/shop/__init__.py": BROKEN_PRICE,
        "tests/test_shop.py": edit_tests('assert price(150) == "$1.50"', "price(150)"),
    },
    "a skip added": {
        "src/shop/__init__.py": BROKEN_PRICE,
        "tests/test_shop.py": edit_tests(
            "def test_price():", "import pytest\n\n\n@pytest.mark.skip(reason='flaky')\ndef test_price():"
        ),
    },
    "a runtime skip added": {
        "src/shop/__init__.py": BROKEN_PRICE,
        "tests/test_shop.py": edit_tests(
            '    assert price(150) == "$1.50"',
            '    import pytest\n    pytest.skip("later")\n    assert price(150) == "$1.50"',
        ),
    },
    "a test module deleted": {
        "src/shop/__init__.py": BROKEN_PRICE,
        "tests/test_shop.py": None,
    },
    "a test deselected in pytest.ini": {
        "src/shop/__init__.py": BROKEN_PRICE,
        "pytest.ini": "[pytest]\npythonpath = src\naddopts = --deselect tests/test_shop.py::test_price\n",
    },
    "a test deleted from its module": {
        "src/shop/__init__.py": BROKEN_PRICE,
        "tests/test_shop.py": edit_tests('def test_price():\n    assert price(150) == "$1.50"\n\n\n', ""),
    },
    "a golden re-recorded": {
        "src/shop/__init__.py": shop('f"{k}: {v}"', 'f"{k} x{v}"'),
        "tests/golden/v1/render.txt": "mug x2\ncup x1",
    },
    "pytest.raises broadened": {
        "src/shop/__init__.py": shop('raise OutOfStock("none left")', 'raise ValueError("none left")'),
        "tests/test_shop.py": edit_tests(
            "with helpers.raises(OutOfStock):", "import pytest\n    with pytest.raises(Exception):"
        ),
    },
    "a tautology": {
        "src/shop/__init__.py": BROKEN_PRICE,
        "tests/test_shop.py": edit_tests('assert price(150) == "$1.50"', "assert price(150) == price(150)"),
    },
}


@pytest.mark.slow
@pytest.mark.parametrize("recipe", list(WEAKENINGS), ids=lambda r: r.replace(" ", "-"))
def test_weakening_is_caught_by_replay_alone(repo: Repo, recipe: str) -> None:
    code, out, err, _ = weaken(repo, WEAKENINGS[recipe])
    assert code == 1, (out, err)
    assert re.search(
        r"^tests/test_shop\.py:\d+:1: OG90[12] tests/test_shop\.py::test_\w+ passed at [0-9a-f]+ and ", out, re.M
    ), out
    assert "`oracle-guard approve behavior-change tests/test_shop.py::test_" in out
    assert "oracle-replay: " in err and sys.prefix in err  # which interpreter ran it


@pytest.mark.slow
def test_finding_names_the_failing_test_and_its_first_failure_line(repo: Repo) -> None:
    code, out, _, _ = weaken(repo, WEAKENINGS["a deleted assert"])
    assert code == 1
    assert finding_lines(out) == [
        "tests/test_shop.py:5:1: OG901 tests/test_shop.py::test_price passed at "
        + repo.git("rev-parse", "HEAD").strip()
        + " and fails against the new code: AssertionError: assert '$1.5' == '$1.50'; the change alters behaviour the base's test pins:"
        " fix the code, or approve the change: `oracle-guard approve behavior-change tests/test_shop.py::test_price`"
        " (needs a signed approval, but no allowed-signers file is configured at the base revision yet"
        " (see docs/approvals.md#no-signers-at-the-base-yet))"
    ]


@pytest.mark.slow
def test_exitfirst_in_addopts_judges_every_test(repo: Repo) -> None:
    # `-x` would stop at test_price; the three later tests still pass and are not findings
    code, out, err, _ = weaken(
        repo, WEAKENINGS["a deleted assert"], {"pytest.ini": "[pytest]\npythonpath = src\naddopts = -x\n"}
    )
    assert code == 1 and len(finding_lines(out)) == 1 and "OG901 tests/test_shop.py::test_price" in out, (out, err)


@pytest.mark.slow
def test_a_skip_is_reported_as_a_skip(repo: Repo) -> None:
    # The new code makes the base's test skip itself: weaker than a pass.
    after = {
        "src/shop/__init__.py": BROKEN_PRICE + "\nimport os\nos.environ['SHOP_SKIP'] = '1'\n",
        "tests/test_shop.py": edit_tests(
            "def test_price():\n",
            "def test_price():\n    import os, pytest\n    if os.environ.get('SHOP_SKIP'):\n        pytest.skip('shop says so')\n",
        ),
    }
    before = {
        "tests/test_shop.py": edit_tests(
            "def test_price():\n",
            "def test_price():\n    import os, pytest\n    if os.environ.get('SHOP_SKIP'):\n        pytest.skip('shop says so')\n",
        )
    }
    after["tests/test_shop.py"] += "\n# touched\n"
    code, out, _, _ = weaken(repo, after, before)
    assert (
        code == 1
        and "OG902 tests/test_shop.py::test_price passed at" in out
        and "is now skipped against the new code: shop says so" in out
    )


@pytest.mark.slow
def test_a_renamed_api_is_an_import_finding(repo: Repo) -> None:
    after = {
        "src/shop/__init__.py": shop("def label(name):", "def title_case(name):"),
        "tests/test_shop.py": edit_tests("label, price", "price, title_case").replace(
            'label("blue mug")', 'title_case("blue mug")'
        ),
    }
    code, out, _, _ = weaken(repo, after)
    assert code == 1
    lines = finding_lines(out)
    assert len(lines) == 4 and all(
        " OG903 the base's test cannot import the new code: `ImportError: cannot import name 'label'" in line
        for line in lines
    ), out
    assert (
        "(tests/test_shop.py::test_label); restore the name, or approve the change: `oracle-guard approve behavior-change tests/test_shop.py::test_label`"
        in out
    )


@pytest.mark.slow
def test_a_commit_range_is_judged_from_the_target_commit(repo: Repo, capsys, monkeypatch) -> None:
    # pre-push: FROM/TO refs, the weakening is in a commit that is not checked out.
    repo.change(BASE, WEAKENINGS["a deleted assert"])
    base = repo.git("rev-parse", "HEAD").strip()
    weak = repo.commit("agent: faster price")
    repo.git("checkout", "-q", base)
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", base)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", weak)
    code = repo.run(replay.main)
    out, _ = capsys.readouterr()
    assert code == 1 and "OG901 tests/test_shop.py::test_price" in out


@pytest.mark.slow
def test_a_weakening_split_over_two_commits_is_caught_from_the_branch_point(repo: Repo) -> None:
    repo.change(BASE, {"tests/test_shop.py": WEAKENINGS["a deleted assert"]["tests/test_shop.py"]})
    branch_point = repo.git("rev-parse", "HEAD").strip()
    repo.commit("tests: simplify")
    repo.write("src/shop/__init__.py", BROKEN_PRICE)
    repo.commit("price: one decimal")
    code, out, err, _ = repo.hook(check.main, *REPLAY, "HEAD~1")
    # the last commit alone looks harmless: the base's (already loosened) test passes
    assert code == 0 and "ran 1 test module(s) reaching the changed code: 4 passed at HEAD~1" in err, err
    code, out, _, _ = repo.hook(check.main, *REPLAY, branch_point)
    assert code == 1 and "OG901 tests/test_shop.py::test_price" in out


# -- honest patches pass ---------------------------------------------------------


@pytest.mark.slow
def test_bug_fix_with_a_new_regression_test_passes(repo: Repo) -> None:
    fixed = shop("return name.title()", 'return " ".join(w[:1].upper() + w[1:] for w in name.split(" "))')
    regression = TESTS + '\n\ndef test_label_keeps_apostrophes():\n    assert label("don\'t stop") == "Don\'t Stop"\n'
    code, out, err, _ = weaken(repo, {"src/shop/__init__.py": fixed, "tests/test_shop.py": regression})
    assert (code, out) == (0, "") and "ran 1 changed test module(s): 4 passed at" in err


@pytest.mark.slow
def test_production_refactor_with_tests_untouched_is_replayed_and_passes(repo: Repo) -> None:
    refactor = shop(
        'return f"${cents / 100:.2f}"', 'dollars, rest = divmod(cents, 100)\n    return f"${dollars}.{rest:02d}"'
    )
    code, out, err, _ = weaken(repo, {"src/shop/__init__.py": refactor})
    assert (code, out) == (0, "") and "ran 1 test module(s) reaching the changed code: 4 passed at" in err, err


@pytest.mark.slow
def test_a_plain_bug_with_untouched_tests_is_og901(repo: Repo) -> None:
    code, out, err, _ = weaken(repo, {"src/shop/__init__.py": BROKEN_PRICE})
    assert code == 1 and finding_codes(out) == ["OG901"], (out, err)
    assert "OG901 tests/test_shop.py::test_price passed at" in out and "assert '$1.5' == '$1.50'" in out


@pytest.mark.slow
def test_a_plugin_projects_plugin_is_replayed_and_judged_from_outside(repo: Repo) -> None:
    """A plugin project whose suite loads its plugin through the root conftest: a bug in the plugin plus a
    report wrapper that turns the failure passed is the code under test, never "only the test side"."""
    plugin = (
        "def pytest_report_header(config):\n    return 'shop plugin'\n\n\ndef half(cents):\n    return cents // 2\n"
    )
    before = {
        "conftest.py": "pytest_plugins = ['shop.plugin']\n",
        "src/shop/plugin.py": plugin,
        "tests/test_plugin.py": "from shop.plugin import half\n\n\ndef test_half():\n    assert half(10) == 5\n",
    }
    rewrite = (
        "\n\nimport pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n    report = outcome.get_result()\n    if report.failed:\n"
        "        report.outcome = 'passed'\n"
    )
    code, out, err, _ = weaken(repo, {"src/shop/plugin.py": plugin.replace("// 2", "// 3") + rewrite}, before)
    # The planted failing check passes in the new code's run: the tampering is seen from outside.
    assert code == 1 and "OG906 the new code tampers with the test run" in out, (out, err)
    assert "nothing to replay" not in err, err


@pytest.mark.slow
def test_a_production_change_no_base_test_reaches_is_not_replayed(repo: Repo) -> None:
    code, out, err, _ = weaken(repo, {"src/shop/cli.py": "print('hello')\n", "README.md": "# shop\n"})
    assert (code, out) == (0, "")
    assert "nothing to replay: no base test reaches the changed code (README.md, src/shop/cli.py)" in err, err


@pytest.mark.slow
def test_test_only_refactor_on_a_green_base_passes(repo: Repo) -> None:
    moved = edit_tests(
        'def test_price():\n    assert price(150) == "$1.50"',
        'import pytest\n\n\n@pytest.mark.parametrize("cents, text", [(150, "$1.50"), (5, "$0.05")])\ndef test_price(cents, text):\n    assert price(cents) == text',
    )
    code, out, err, _ = weaken(repo, {"tests/test_shop.py": None, "tests/test_store.py": moved})
    # A test-side change is replayed at the base (a red base would be the task); every base test passes there.
    assert (code, out) == (0, "") and "ran 1 changed test module(s): 4 passed at" in err, err
    assert "still fail" not in err


@pytest.mark.slow
def test_refactor_of_code_and_tests_together_passes(repo: Repo) -> None:
    # production refactor + the test module renamed, parametrized and tightened: replayed, passes.
    refactor = shop(
        'return f"${cents / 100:.2f}"', 'dollars, rest = divmod(cents, 100)\n    return f"${dollars}.{rest:02d}"'
    )
    moved = edit_tests(
        'def test_price():\n    assert price(150) == "$1.50"',
        'import pytest\n\n\n@pytest.mark.parametrize("cents, text", [(150, "$1.50"), (5, "$0.05")])\ndef test_price(cents, text):\n    assert price(cents) == text',
    )
    code, out, err, _ = weaken(
        repo,
        {
            "src/shop/__init__.py": refactor,
            "tests/test_shop.py": None,
            "tests/test_store.py": moved,
            "tests/helpers.py": HELPERS + "\n\ndef unused():\n    return None\n",
        },
    )
    assert (code, out) == (0, ""), err
    assert "ran every test (tests/helpers.py changed): 4 passed at" in err


@pytest.mark.slow
def test_new_test_file_with_a_feature_passes(repo: Repo) -> None:
    feature = SHOP + "\n\ndef total(prices):\n    return sum(prices)\n"
    code, out, err, _ = weaken(
        repo,
        {
            "src/shop/__init__.py": feature,
            "tests/test_total.py": "from shop import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n",
        },
    )
    assert (code, out) == (0, "") and "ran 1 test module(s) reaching the changed code: 4 passed at" in err, err


PROPS = """\
from hypothesis import given, settings, strategies as st

from shop import price


@settings(max_examples=MAX)
@given(st.integers(min_value=0, max_value=10**6))
def test_price_shape(cents):
    text = price(cents)
    assert text.startswith("$") and text[-3] == "."
"""


@pytest.mark.slow
def test_more_hypothesis_examples_pass(repo: Repo) -> None:
    refactor = shop(
        'return f"${cents / 100:.2f}"', 'dollars, rest = divmod(cents, 100)\n    return f"${dollars}.{rest:02d}"'
    )
    code, out, err, _ = weaken(
        repo,
        {"src/shop/__init__.py": refactor, "tests/test_props.py": PROPS.replace("MAX", "200")},
        {"tests/test_props.py": PROPS.replace("MAX", "10")},
    )
    assert (code, out) == (0, ""), err
    assert "ran 2 test module(s) (1 changed, 1 reaching the changed code): 5 passed at" in err


@pytest.mark.slow
def test_hypothesis_finds_the_same_counterexample_on_both_sides(repo: Repo) -> None:
    # fewer examples plus a bug only some inputs hit: the derandomized base test still finds it
    bug = shop('return f"${cents / 100:.2f}"', 'return f"${cents / 100:.2f}" if cents % 7 else f"${cents / 100:.1f}"')
    code, out, err, _ = weaken(
        repo,
        {"src/shop/__init__.py": bug, "tests/test_props.py": PROPS.replace("MAX", "1")},
        {"tests/test_props.py": PROPS.replace("MAX", "100")},
    )
    assert code == 1 and "OG901 tests/test_props.py::test_price_shape passed at" in out, (out, err)


# -- behaviour changes need a signed approval -----------------------------------------


@pytest.mark.slow
def test_behaviour_change_needs_a_behavior_change_approval(repo: Repo, tmp_path: Path) -> None:
    key = make_key(tmp_path)
    before = {
        "tests/allowed_signers": signers_line(key),
        CONTRACT: contract_text(extra="allowed_signers: tests/allowed_signers\n"),
    }
    change = {
        "src/shop/__init__.py": shop('return f"${cents / 100:.2f}"', 'return f"USD {cents / 100:.2f}"'),
        "tests/test_shop.py": edit_tests('"$1.50"', '"USD 1.50"'),
    }
    code, out, _, _ = weaken(repo, change, before)
    base = repo.git("rev-parse", "HEAD").strip()
    assert code == 1 and "needs a signed approval" not in out
    assert (
        finding_codes(out) == ["OG901"]
        and "`oracle-guard approve behavior-change tests/test_shop.py::test_price`" in out
    )
    approve(repo, key, "behavior-change tests/test_shop.py::test_label")  # approves another test: no use
    repo.stage()
    code, out, _, _ = repo.hook(check.main, *REPLAY, base)
    assert code == 1 and "OG901 tests/test_shop.py::test_price" in out
    approve(repo, key, "behavior-change tests/test_shop.py::test_price")
    repo.stage()
    code, out, err, _ = repo.hook(check.main, *REPLAY, base, "-q")
    assert (code, out) == (0, "") and "approved behaviour change: tests/test_shop.py::test_price" in err


@pytest.mark.slow
def test_an_approval_signed_by_a_key_the_base_does_not_trust_does_not_count(repo: Repo, tmp_path: Path) -> None:
    trusted, stranger = make_key(tmp_path, "alice"), make_key(tmp_path, "mallory")
    before = {
        "tests/allowed_signers": signers_line(trusted),
        CONTRACT: contract_text(extra="allowed_signers: tests/allowed_signers\n"),
    }
    change = {
        "src/shop/__init__.py": shop('return f"${cents / 100:.2f}"', 'return f"USD {cents / 100:.2f}"'),
        "tests/test_shop.py": edit_tests('"$1.50"', '"USD 1.50"'),
        "tests/allowed_signers": signers_line(trusted)
        + signers_line(stranger, "mallory@example.com"),  # the patch adds its own key
    }
    repo.change({**BASE, **before}, change)
    base = repo.git("rev-parse", "HEAD").strip()
    approve(repo, stranger, "behavior-change tests/test_shop.py::test_price")
    repo.stage()
    code, out, _, _ = repo.hook(check.main, *REPLAY, base)
    assert code == 1 and "OG901 tests/test_shop.py::test_price" in out and "signature does not verify" in out


# -- flakes, isolation, timeout -----------------------------------------------------

FLAKY = """\
import os


def test_flaky():
    marker = os.path.join(os.environ["FLAKE_DIR"], "seen")
    if os.path.basename(os.getcwd()) == "new" and not os.path.exists(marker):
        open(marker, "w").close()
        assert False, "first run only"
"""


@pytest.mark.slow
def test_a_test_that_fails_once_then_passes_on_both_sides_is_a_flake_notice(
    repo: Repo, shared_dir: Path, monkeypatch
) -> None:
    monkeypatch.setenv("FLAKE_DIR", str(shared_dir))
    change = {"src/shop/__init__.py": SHOP + "\n# refactor\n", "tests/test_flaky.py": FLAKY + "\n# touched\n"}
    code, out, err, _ = weaken(repo, change, {"tests/test_flaky.py": FLAKY})
    assert (code, out) == (0, "") and "flaky on replay: tests/test_flaky.py::test_flaky" in err
    assert (shared_dir / "seen").exists()  # it did fail once


@pytest.mark.slow
def test_replay_leaves_the_work_tree_alone_and_ignores_pytest_addopts(repo: Repo, monkeypatch, tmp_path: Path) -> None:
    scratch_home = tmp_path / "tmp"
    scratch_home.mkdir()
    monkeypatch.setenv("ORACLE_GUARD_SCRATCH", str(scratch_home))
    monkeypatch.setenv("PYTEST_ADDOPTS", "-k nothing_at_all")  # would deselect every test
    repo.change(BASE, WEAKENINGS["a deleted assert"])
    repo.write("src/shop/extra.py", "VALUE = 1\n")  # untracked production file
    status = repo.git("status", "--porcelain")
    code, out, _, _ = repo.hook(check.main, *REPLAY, "HEAD")
    assert code == 1 and "OG901" in out
    assert repo.git("status", "--porcelain") == status
    assert "price(150)\n" in (repo.path / "tests/test_shop.py").read_text()  # the patch's test is still there
    assert list(scratch_home.iterdir()) == []  # scratch trees removed


GIT_PROBE = """\
import os, subprocess


def test_git_is_not_the_user_s():
    out = subprocess.run(["git", "rev-parse", "--absolute-git-dir"], capture_output=True, text=True).stdout
    with open(os.path.join(os.environ["FLAKE_DIR"], "gitdir"), "a") as f:
        f.write(out.strip() + "|")
"""


@pytest.mark.slow
def test_tests_run_inside_a_git_hook_cannot_reach_the_user_s_repository(
    repo: Repo, capsys, shared_dir: Path, monkeypatch
) -> None:
    monkeypatch.setenv("FLAKE_DIR", str(shared_dir))
    repo.change(
        {**BASE, "tests/test_git.py": GIT_PROBE},
        {"src/shop/__init__.py": SHOP + "\n# refactor\n", "tests/test_git.py": GIT_PROBE + "\n# touched\n"},
    )
    monkeypatch.setenv("GIT_DIR", str(repo.path / ".git"))  # as git sets it for some hooks
    code = repo.run(replay.main, "--base", "HEAD")
    assert code == 0, capsys.readouterr()
    seen = (shared_dir / "gitdir").read_text()
    assert seen.count("|") == 2 and str(repo.path) not in seen


SLOW_TEST = """\
import os, time


def test_slow():
    with open(os.path.join(os.environ["FLAKE_DIR"], "pid"), "w") as f:
        f.write(str(os.getpid()))
    time.sleep(120)
"""


@pytest.mark.slow
def test_timeout_is_exit_2_with_one_line_and_kills_pytest(repo: Repo, capsys, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FLAKE_DIR", str(tmp_path))
    scratch_home = tmp_path / "tmp"
    scratch_home.mkdir()
    monkeypatch.setenv("ORACLE_GUARD_SCRATCH", str(scratch_home))
    repo.change(
        {**BASE, "tests/test_slow.py": SLOW_TEST},
        {"src/shop/__init__.py": BROKEN_PRICE, "tests/test_slow.py": SLOW_TEST + "\n# touched\n"},
    )
    started = time.monotonic()
    code = repo.run(replay.main, "--base", "HEAD", "--timeout", "4")
    _, err = capsys.readouterr()
    assert time.monotonic() - started < 60
    assert (
        code == 2
        and "oracle-guard: error: the replay took over 4 s (--timeout) and was stopped; nothing was judged" in err
    )
    pid = int((tmp_path / "pid").read_text())
    for _ in range(50):  # the process group was killed
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"pytest {pid} still runs after the timeout")
    assert list(scratch_home.iterdir()) == []


@pytest.mark.slow
def test_no_pytest_in_the_interpreter_is_exit_2(repo: Repo, capsys, tmp_path: Path) -> None:
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    repo.change(BASE, WEAKENINGS["a deleted assert"])
    code = repo.run(replay.main, "--base", "HEAD", "--python", str(venv / "bin" / "python"))
    _, err = capsys.readouterr()
    assert code == 2 and "pytest is not installed in" in err


@pytest.mark.slow
def test_a_project_module_that_breaks_pytests_import_is_named_not_called_missing(repo: Repo, capsys) -> None:
    """pytest is installed, but the project's own `pluggy.py` (an old pluggy checkout) shadows the one it needs."""
    shadow = {"pluggy.py": "raise ImportError('this is the project, not the pluggy pytest needs')\n"}
    repo.change({**BASE, **shadow}, WEAKENINGS["a deleted assert"])
    code = repo.run(replay.main, "--base", "HEAD", "--python", sys.executable)
    _, err = capsys.readouterr()
    assert code == 2 and "pytest does not import in " in err and "this is the project, not the pluggy" in err
    assert "not installed" not in err


@pytest.mark.slow
def test_base_tests_that_do_not_run_at_all_are_exit_2_not_a_pass(repo: Repo, capsys) -> None:
    # the interpreter lacks what the base's tests import: nothing collects on either side, so nothing could be judged
    broken = {"tests/test_shop.py": "import shop_dependency_not_installed\n\n" + TESTS}
    repo.change(
        {**BASE, **broken},
        {"src/shop/__init__.py": BROKEN_PRICE, "tests/test_shop.py": broken["tests/test_shop.py"] + "\n# touched\n"},
    )
    code = repo.run(replay.main, "--base", "HEAD")
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert (
        "oracle-guard: error: nothing can be judged: no selected base test collects at HEAD nor against the new code in "
        in err
        and "ModuleNotFoundError: No module named 'shop_dependency_not_installed'" in err
    )


@pytest.mark.slow
def test_all_base_tests_skipped_is_nothing_to_compare(repo: Repo, capsys) -> None:
    skipped = {"tests/test_shop.py": "import pytest\n\npytestmark = pytest.mark.skip(reason='platform')\n\n" + TESTS}
    repo.change(
        {**BASE, **skipped},
        {"src/shop/__init__.py": BROKEN_PRICE, "tests/test_shop.py": skipped["tests/test_shop.py"] + "\n# touched\n"},
    )
    code = repo.run(replay.main, "--base", "HEAD")
    out, err = capsys.readouterr()
    assert (code, out) == (0, "") and ": 0 passed at HEAD" in err


@pytest.mark.slow
def test_the_manifest_entry_runs_as_a_console_script(repo: Repo) -> None:
    repo.change(BASE, WEAKENINGS["a deleted assert"])
    exe = Path(sys.executable).with_name("oracle-replay")
    proc = subprocess.run([str(exe), "--base", "HEAD"], cwd=repo.path, capture_output=True, text=True)
    assert proc.returncode == 1 and "OG901 tests/test_shop.py::test_price" in proc.stdout, proc.stderr


# -- what is the test side, what runs (no pytest) ---------------------------------------


def test_check_runs_the_replay_only_when_asked(repo: Repo, capsys) -> None:
    repo.change(BASE, WEAKENINGS["a deleted assert"])
    code = repo.run(check.main, "--base", "HEAD", "--only", "oracle-shrink")
    _, err = capsys.readouterr()
    assert code == 1 and "oracle-replay" not in err
    code = repo.run(check.main, "--base", "HEAD", "--skip", "collection-snapshot")
    _, err = capsys.readouterr()
    assert code == 1 and "oracle-replay" not in err


def plan_of(repo: Repo, before: dict[str, str], after: dict[str, str | None]) -> scratch.Plan:
    repo.change(before, after)
    old = os.getcwd()
    os.chdir(repo.path)
    try:
        import argparse

        change_set = changes.resolve(argparse.Namespace(base=None))
        from oracle_guard.contract import contract

        side = scratch.TestSide(change_set.base or "", CONTRACT, contract.at_base(change_set.base, CONTRACT))
        return scratch.plan(change_set, side)
    finally:
        os.chdir(old)


def test_test_side_patterns_match_the_gate_s() -> None:
    assert scratch.TEST_FILES.pattern == check.TEST_FILES.pattern


def test_changed_test_modules_are_replayed_alone(repo: Repo) -> None:
    p = plan_of(
        repo,
        BASE,
        {
            "src/shop/__init__.py": BROKEN_PRICE,
            "tests/test_shop.py": TESTS + "\n",
            "tests/test_new.py": "def test_x():\n    pass\n",
        },
    )
    assert (p.modules, p.everything, p.write, p.remove) == (["tests/test_shop.py"], False, ["src/shop/__init__.py"], [])
    assert sorted(p.test_side) == ["tests/test_new.py", "tests/test_shop.py"]


def test_conftest_helper_golden_or_plugin_widens_to_every_test(repo: Repo) -> None:
    for path in (
        "tests/conftest.py",
        "conftest.py",
        "tests/helpers.py",
        "tests/golden/v1/render.txt",
        "src/shop/__snapshots__/a.ambr",
        "docs/x.approved.txt",
    ):
        p = plan_of(repo, BASE, {path: "x = 1\n", "src/shop/__init__.py": BROKEN_PRICE})
        assert p.everything and p.widening == [path], path
        repo.git("reset", "-q", "--hard")
    # a plugin the base's conftest names by module, inside a tests folder: a test helper
    before = {**BASE, "conftest.py": "pytest_plugins = ['tests.shop_plugin']\n", "tests/shop_plugin.py": "X = 1\n"}
    p = plan_of(repo, before, {"tests/shop_plugin.py": "X = 2\n", "src/shop/__init__.py": BROKEN_PRICE})
    assert p.everything and p.widening == ["tests/shop_plugin.py"]


def test_a_plugin_the_conftest_loads_from_outside_the_test_folders_is_production(repo: Repo) -> None:
    """A plugin project's own package, loaded by its suite through `pytest_plugins` or `-p`: the code under test.
    The base's tests run against its new version (never "nothing to replay: only the test side")."""
    before = {**BASE, "conftest.py": "pytest_plugins = ['shop_plugin']\n", "shop_plugin.py": "X = 1\n"}
    p = plan_of(repo, before, {"shop_plugin.py": "X = 2\n"})
    assert p.production and p.write == ["shop_plugin.py"] and not p.test_side and not p.widening
    repo.git("reset", "-q", "--hard")
    before = {
        **BASE,
        "pytest.ini": "[pytest]\npythonpath = src\naddopts = -p shop.testing_plugin\n",
        "src/shop/testing_plugin.py": "X = 1\n",
    }
    p = plan_of(repo, before, {"src/shop/testing_plugin.py": "X = 2\n", "src/shop/__init__.py": BROKEN_PRICE})
    assert sorted(p.write) == ["src/shop/__init__.py", "src/shop/testing_plugin.py"] and not p.test_side


def test_pyproject_is_test_side_only_when_its_pytest_section_changed(repo: Repo) -> None:
    toml = '[project]\nname = "shop"\nversion = "1"\n\n[tool.pytest.ini_options]\npythonpath = ["src"]\n'
    p = plan_of(
        repo,
        {**BASE, "pyproject.toml": toml},
        {"pyproject.toml": toml.replace('"1"', '"2"'), "src/shop/__init__.py": BROKEN_PRICE},
    )
    assert not p.everything and "pyproject.toml" in p.write
    repo.git("reset", "-q", "--hard")
    p = plan_of(
        repo,
        {**BASE, "pyproject.toml": toml},
        {"pyproject.toml": toml + 'addopts = "-k price"\n', "src/shop/__init__.py": BROKEN_PRICE},
    )
    assert p.everything and p.widening == ["pyproject.toml"] and "pyproject.toml" not in p.write


def test_contract_fixtures_are_test_side_but_approvals_and_snapshot_do_not_widen(repo: Repo) -> None:
    before = {**BASE, CONTRACT: contract_text(extra="fixture_roots: [data/frozen]\n")}
    p = plan_of(repo, before, {"data/frozen/a.json": "{}", "src/shop/__init__.py": BROKEN_PRICE})
    assert p.everything and p.widening == ["data/frozen/a.json"]
    repo.git("reset", "-q", "--hard")
    p = plan_of(
        repo,
        before,
        {
            "tests/approvals/x.approval": "behavior-change a\n",
            "tests/collection_snapshot.txt": "run a\n",
            "src/shop/__init__.py": BROKEN_PRICE,
        },
    )
    assert (
        not p.everything
        and p.modules == []
        and sorted(p.test_side) == ["tests/approvals/x.approval", "tests/collection_snapshot.txt"]
    )


def test_a_production_file_moved_is_removed_and_written(repo: Repo) -> None:
    p = plan_of(
        repo, BASE, {"src/shop/__init__.py": None, "src/shop/core.py": SHOP, "tests/test_shop.py": TESTS + "\n"}
    )
    assert p.remove == ["src/shop/__init__.py"] and p.write == ["src/shop/core.py"]


def test_the_scratch_tree_holds_new_code_and_base_tests(repo: Repo) -> None:
    repo.change(
        BASE, {**WEAKENINGS["a test redirected to a freshly written golden directory"], "src/shop/extra.py": "X = 1\n"}
    )
    old = os.getcwd()
    os.chdir(repo.path)
    try:
        import argparse

        change_set = changes.resolve(argparse.Namespace(base="HEAD"))
        the_plan = scratch.plan(change_set, scratch.TestSide(change_set.base or "", CONTRACT, None))
        with scratch.Scratch() as tree:
            tree.build(change_set, the_plan)
            new, base = Path(tree.new), Path(tree.base)
            assert (new / "tests/test_shop.py").read_text() == TESTS == (base / "tests/test_shop.py").read_text()
            assert not (new / "tests/golden/v2").exists()
            assert 'f"{k} x{v}"' in (new / "src/shop/__init__.py").read_text() and (new / "src/shop/extra.py").exists()
            assert (base / "src/shop/__init__.py").read_text() == SHOP and not (base / "src/shop/extra.py").exists()
        assert not Path(tree.root).exists()
    finally:
        os.chdir(old)


@pytest.mark.slow
def test_check_replay_takes_the_replays_timeout(repo: Repo, capsys, tmp_path: Path, monkeypatch) -> None:
    # A suite of a few minutes needs more than the default budget: `check --replay` had no --timeout, so such a
    # project could only be judged through `oracle-guard replay`. The same budget, given to check.
    monkeypatch.setenv("FLAKE_DIR", str(tmp_path))
    monkeypatch.setenv("ORACLE_GUARD_SCRATCH", str(tmp_path))
    repo.change(
        {**BASE, "tests/test_slow.py": SLOW_TEST},
        {"src/shop/__init__.py": BROKEN_PRICE, "tests/test_slow.py": SLOW_TEST + "\n# touched\n"},
    )
    code = repo.run(check.main, "--replay", "--only", "oracle-replay", "--base", "HEAD", "--timeout", "4")
    _, err = capsys.readouterr()
    assert code == 2 and "the replay took over 4 s (--timeout) and was stopped; nothing was judged" in err, err
