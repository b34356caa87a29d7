"""check --mutate: the base's tests and the new tests against the same mutants (real git repos, real pytest).

Every weakening below is judged by the mutation differential alone (every static hook skipped):
the ones the static rules know and the ones they do not.  Each has an honest twin that passes.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from oracle_guard.commands import check
from oracle_guard.hook_ids import registry
from tests.contract_helpers import CONTRACT, approve, contract_text, make_key, signers_line
from tests.helpers import Repo, Result, finding_codes

STATIC = ",".join(h.id for h in registry.HOOKS if not h.opt_in)

CORE = """\
def price(quantity, unit):
    if quantity < 0:
        raise ValueError("negative quantity")
    total = quantity * unit
    if quantity >= 10:
        total = total * 0.9
    return round(total, 2)


def slug(text):
    return "-".join(word.lower() for word in text.split() if word)


def clamp(value, low, high):
    if value < low:
        return low
    if value > high:
        return high
    return value


def parse_pairs(text):
    result = {}
    for part in text.split(";"):
        if not part:
            continue
        key, _, value = part.partition("=")
        result[key.strip()] = int(value)
    return result


def is_valid_code(code):
    return len(code) == 6 and code.isdigit() and not code.startswith("0")


def squares(n):
    return [i ** 2 for i in range(n)]


def ratio(a, b):
    if b == 0:
        raise ValueError("b is zero")
    return a / b


def mean(values):
    return sum(values) / len(values)
"""

BASE = {"pytest.ini": "[pytest]\npythonpath = src\n", "src/shop/__init__.py": "", "src/shop/core.py": CORE}
HEAD = (
    "import pytest\n\nfrom shop.core import clamp, is_valid_code, mean, parse_pairs, price, ratio, slug, squares\n\n\n"
)
T = "tests/test_core.py"


def module(body: str) -> str:
    return HEAD + body


# name -> (the base's test module body, the weakened body): no static hook reports these (`check --skip
# collection-snapshot` is clean on each, measured), only the mutation differential does.
UNKNOWN_TO_STATIC = {
    "a loop that checks one element": (
        "def test_squares():\n    for n, square in enumerate(squares(5)):\n        assert square == n * n\n",
        "def test_squares():\n    for n, square in enumerate(squares(5)[:1]):\n        assert square == n * n\n",
    ),
    "a parametrize list thinned while staying long": (
        "@pytest.mark.parametrize('value, expected', [(-5, 0), (15, 10), (5, 5), (0, 0), (10, 10)])\ndef test_clamp(value, expected):\n    assert clamp(value, 0, 10) == expected\n",
        "@pytest.mark.parametrize('value, expected', [(3, 3), (4, 4), (5, 5), (6, 6), (7, 7)])\ndef test_clamp(value, expected):\n    assert clamp(value, 0, 10) == expected\n",
    ),
    "an input swapped for one that fails earlier": (
        "def test_leading_zero():\n    assert not is_valid_code('012345')\n",
        "def test_leading_zero():\n    assert not is_valid_code('')\n",
    ),
    "a hand-rolled tolerance": (
        "def test_mean():\n    assert mean([1, 2, 3]) == 2\n",
        "def test_mean():\n    assert abs(mean([1, 2, 3]) - 2) < 1000\n",
    ),
    "a check under a condition that never holds": (
        "def test_clamp_high():\n    assert clamp(15, 0, 10) == 10\n",
        "import sys\n\n\ndef test_clamp_high():\n    result = clamp(15, 0, 10)\n    if sys.maxsize < 0:\n        assert result == 10\n",
    ),
    "a boundary case moved off the boundary": (
        "def test_bulk_discount():\n    assert price(10, 1.0) == 9.0\n",
        "def test_bulk_discount():\n    assert price(20, 1.0) == 18.0\n",
    ),
    "an expected value a fixture computes with the code under test": (
        "def test_slug():\n    assert slug('Hello World') == 'hello-world'\n",
        "@pytest.fixture\ndef expected():\n    return slug('Hello World')\n\n\ndef test_slug(expected):\n    assert slug('Hello World') == expected\n",
    ),
    "an earlier statement raises first inside pytest.raises": (
        "def test_ratio_by_zero():\n    with pytest.raises(ValueError):\n        ratio(1, 0)\n",
        "def test_ratio_by_zero():\n    with pytest.raises(ValueError):\n        int('not a number')\n        ratio(1, 0)\n",
    ),
    "a check in a nested function nobody calls": (
        "def test_clamp_low():\n    assert clamp(-5, 0, 10) == 0\n",
        "def test_clamp_low():\n    def check():\n        assert clamp(-5, 0, 10) == 0\n",
    ),
    "the expected value compared with the test's own copy": (
        "def test_squares():\n    assert squares(4) == [0, 1, 4, 9]\n",
        "def test_squares():\n    squares(4)\n    assert [n ** 2 for n in range(4)] == [0, 1, 4, 9]\n",
    ),
}

# name -> ((the base's body, the weakened body), the static hooks' code for it): refused here without them too.
KNOWN_TO_STATIC = {
    # Static since OG315 (issue 28): a check of the very function the test replaced; the mutation
    # differential still refuses it alone (test_a_weakening_is_refused_by_the_mutation_differential_alone).
    "the code under test stubbed by the test": (
        (
            "from shop import core\n\n\ndef test_mean():\n    assert core.mean([1, 2, 3]) == 2\n",
            "from shop import core\n\n\ndef test_mean(monkeypatch):\n    monkeypatch.setattr(core, 'mean', lambda values: 2)\n    assert core.mean([1, 2, 3]) == 2\n",
        ),
        "OG315",
    ),
    "a deleted assert": (
        (
            "def test_price():\n    assert price(2, 3.0) == 6.0\n    assert price(10, 1.0) == 9.0\n",
            "def test_price():\n    assert price(2, 3.0) == 6.0\n",
        ),
        "OG301",
    ),
    "a skip mark": (
        (
            "def test_mean():\n    assert mean([1, 2, 3]) == 2\n",
            "@pytest.mark.skip(reason='later')\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n",
        ),
        "OG101",
    ),
    "a runtime skip": (
        (
            "def test_mean():\n    assert mean([1, 2, 3]) == 2\n",
            "def test_mean():\n    pytest.skip('later')\n    assert mean([1, 2, 3]) == 2\n",
        ),
        "OG201",
    ),
    "a tautology": (
        (
            "def test_slug():\n    assert slug('Hello World') == 'hello-world'\n",
            "def test_slug():\n    assert slug('Hello World') == slug('Hello World')\n",
        ),
        "OG314",
    ),
    "a broadened raises": (
        (
            "def test_ratio_by_zero():\n    with pytest.raises(ValueError):\n        ratio(1, 0)\n",
            "def test_ratio_by_zero():\n    with pytest.raises(Exception):\n        ratio(1, 0)\n",
        ),
        "OG306",
    ),
    "a swallowed failure": (
        (
            "def test_squares():\n    assert squares(3) == [0, 1, 4]\n",
            "def test_squares():\n    try:\n        assert squares(3) == [0, 1, 4]\n    except AssertionError:\n        pass\n",
        ),
        "OG305",
    ),
    "a loosened approx": (
        (
            "def test_bulk_discount():\n    assert price(10, 1.0) == pytest.approx(9.0)\n",
            "def test_bulk_discount():\n    assert price(10, 1.0) == pytest.approx(9.0, abs=2)\n",
        ),
        "OG304",
    ),
    "a deleted test": (
        (
            "def test_mean():\n    assert mean([1, 2, 3]) == 2\n\n\ndef test_pairs():\n    assert parse_pairs('a=1') == {'a': 1}\n",
            "def test_mean():\n    assert mean([1, 2, 3]) == 2\n",
        ),
        "OG302",
    ),
    "a check narrowed to a length": (
        (
            "def test_squares():\n    assert squares(4) == [0, 1, 4, 9]\n",
            "def test_squares():\n    assert len(squares(4)) == 4\n",
        ),
        "OG303",
    ),
    "a comparison against a value the code under test computed": (
        (
            "def test_price():\n    assert price(2, 3.0) == 6.0\n",
            "def test_price():\n    expected = price(2, 3.0)\n    assert price(2, 3.0) == expected\n",
        ),
        "OG314",
    ),
    "a helper that compares less": (
        (
            "def check_slug(text, expected):\n    assert slug(text) == expected\n\n\ndef test_slug():\n    check_slug('Hello Big World', 'hello-big-world')\n",
            "def check_slug(text, expected):\n    assert slug(text)[:1] == expected[:1]\n\n\ndef test_slug():\n    check_slug('Hello Big World', 'hello-big-world')\n",
        ),
        "OG303",
    ),
    "an exception type widened through a tuple": (
        (
            "def test_ratio_by_zero():\n    with pytest.raises(ValueError):\n        ratio(1, 0)\n",
            "def test_ratio_by_zero():\n    with pytest.raises((ValueError, ArithmeticError)):\n        ratio(1, 0)\n",
        ),
        "OG306",
    ),
    "an equality relaxed to an upper bound": (
        (
            "def test_bulk_discount():\n    assert price(10, 1.0) == 9.0\n",
            "def test_bulk_discount():\n    assert price(10, 1.0) <= 10.0\n",
        ),
        "OG303",
    ),
    "a key checked instead of the mapping": (
        (
            "def test_pairs():\n    assert parse_pairs('a=1;b=2') == {'a': 1, 'b': 2}\n",
            "def test_pairs():\n    assert 'a' in parse_pairs('a=1;b=2')\n",
        ),
        "OG303",
    ),
    "a type check for a value": (
        (
            "def test_slug():\n    assert slug('Hello World') == 'hello-world'\n",
            "def test_slug():\n    assert isinstance(slug('Hello World'), str)\n",
        ),
        "OG303",
    ),
    "the check moved into the assert message": (
        (
            "def test_bulk_discount():\n    assert price(10, 1.0) == 9.0\n",
            "def test_bulk_discount():\n    assert price(10, 1.0), price(10, 1.0) == 9.0\n",
        ),
        "OG303",
    ),
    "an assert on a generator": (
        (
            "def test_clamp():\n    for value, expected in [(-5, 0), (15, 10), (5, 5)]:\n        assert clamp(value, 0, 10) == expected\n",
            "def test_clamp():\n    assert (clamp(v, 0, 10) == e for v, e in [(-5, 0), (15, 10), (5, 5)])\n",
        ),
        "OG301",
    ),
    "a wide math.isclose": (
        (
            "def test_mean():\n    assert mean([1, 2, 3]) == 2\n",
            "import math\n\n\ndef test_mean():\n    assert math.isclose(mean([1, 2, 3]), 2, rel_tol=100)\n",
        ),
        "OG304",
    ),
    "the test's data cut after it is defined": (
        (
            "CASES = [('a=1', {'a': 1}), ('a=1;;b=2', {'a': 1, 'b': 2}), (' k =3', {'k': 3})]\n\n\ndef test_pairs():\n    for text, expected in CASES:\n        assert parse_pairs(text) == expected\n",
            "CASES = [('a=1', {'a': 1}), ('a=1;;b=2', {'a': 1, 'b': 2}), (' k =3', {'k': 3})]\nCASES = CASES[:1]\n\n\ndef test_pairs():\n    for text, expected in CASES:\n        assert parse_pairs(text) == expected\n",
        ),
        "OG301",
    ),
    "a boolean result compared with a truthy value": (
        (
            "def test_code():\n    assert is_valid_code('123456') is True\n    assert is_valid_code('012345') is False\n",
            "def test_code():\n    assert is_valid_code('123456') is True\n    assert is_valid_code('012345') is not None\n",
        ),
        "OG303",
    ),
}

# name -> (the base's test module body, {path: new text or None})
HONEST = {
    "a renamed test": (
        "def test_squares():\n    assert squares(4) == [0, 1, 4, 9]\n",
        {T: module("def test_squares_of_the_first_four():\n    assert squares(4) == [0, 1, 4, 9]\n")},
    ),
    "a test moved to a new module": (
        "def test_pairs():\n    assert parse_pairs('a=1;b=2') == {'a': 1, 'b': 2}\n",
        {
            T: None,
            "tests/test_pairs.py": module("def test_pairs():\n    assert parse_pairs('a=1;b=2') == {'a': 1, 'b': 2}\n"),
        },
    ),
    "tests merged into a parametrized test": (
        "def test_low():\n    assert clamp(-5, 0, 10) == 0\n\n\ndef test_high():\n    assert clamp(15, 0, 10) == 10\n\n\n"
        "def test_inside():\n    assert clamp(5, 0, 10) == 5\n",
        {
            T: module(
                "@pytest.mark.parametrize('value, expected', [(-5, 0), (15, 10), (5, 5)])\n"
                "def test_clamp(value, expected):\n    assert clamp(value, 0, 10) == expected\n"
            )
        },
    ),
    "a test split in two": (
        "def test_price():\n    assert price(2, 3.0) == 6.0\n    assert price(10, 1.0) == 9.0\n",
        {
            T: module(
                "def test_price():\n    assert price(2, 3.0) == 6.0\n\n\n"
                "def test_bulk_discount():\n    assert price(10, 1.0) == 9.0\n"
            )
        },
    ),
    "checks refactored through a helper": (
        "def test_slug():\n    assert slug('Hello World') == 'hello-world'\n    assert slug('A  B') == 'a-b'\n",
        {
            T: module(
                "def slugs_to(pairs):\n    for text, expected in pairs:\n        assert slug(text) == expected\n\n\n"
                "def test_slug():\n    slugs_to([('Hello World', 'hello-world'), ('A  B', 'a-b')])\n"
            )
        },
    ),
    "a test made stricter": (
        "def test_ratio_by_zero():\n    with pytest.raises(ValueError):\n        ratio(1, 0)\n",
        {
            T: module(
                "def test_ratio_by_zero():\n    with pytest.raises(ValueError, match='zero'):\n        ratio(1, 0)\n\n\n"
                "def test_ratio():\n    assert ratio(1, 4) == 0.25\n"
            )
        },
    ),
    "an equality spelled as a loop over the items": (
        "def test_squares():\n    assert squares(4) == [0, 1, 4, 9]\n",
        {
            T: module(
                "def test_squares():\n    found = squares(4)\n    assert len(found) == 4\n"
                "    for n, square in enumerate(found):\n        assert square == n * n\n"
            )
        },
    ),
}


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """The project's interpreter is the one running these tests (it has pytest)."""
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


def mutate(repo: Repo, base_body: str, after: dict[str, str | None], *extra: str) -> Result:
    repo.change({**BASE, T: module(base_body)}, after)
    return repo.hook(check.main, "--mutate", "--skip", STATIC, "--base", "HEAD", *extra)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(UNKNOWN_TO_STATIC) + sorted(KNOWN_TO_STATIC))
def test_a_weakening_is_refused_by_the_mutation_differential_alone(repo: Repo, name: str) -> None:
    before, after = UNKNOWN_TO_STATIC[name] if name in UNKNOWN_TO_STATIC else KNOWN_TO_STATIC[name][0]
    result = mutate(repo, before, {T: module(after)})
    assert result.code == 1, result.said
    assert set(result.codes) == {"OG910"}, result.said
    assert "the new tests do not" in result.out and "mutants-released tests/test_core.py::" in result.out


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HONEST))
def test_an_honest_change_passes(repo: Repo, name: str) -> None:
    before, after = HONEST[name]
    result = mutate(repo, before, after)
    assert result.code == 0, result.said
    assert result.codes == [], result.said
    assert "the new tests let 0 of those live" in result.err


@pytest.mark.slow
def test_a_deleted_test_module_is_refused(repo: Repo) -> None:
    result = mutate(repo, "def test_mean():\n    assert mean([1, 2, 3]) == 2\n", {T: None})
    assert result.code == 1 and "OG910" in result.codes, result.said
    assert "the base's test_mean caught" in result.out


@pytest.mark.slow
def test_a_test_elsewhere_in_the_suite_that_still_catches_the_mutant_is_enough(repo: Repo) -> None:
    """The change dropped a check another module (untouched) still makes: nothing the suite caught is lost."""
    other = "tests/test_other.py"
    repo.change(
        {
            **BASE,
            T: module("def test_mean():\n    assert mean([1, 2, 3]) == 2\n"),
            other: module("def test_mean_too():\n    assert mean([2, 4]) == 3\n"),
        },
        {T: module("def test_mean():\n    assert isinstance(mean([1, 2, 3]), float)\n")},
    )
    result = repo.hook(check.main, "--mutate", "--skip", STATIC, "--base", "HEAD")
    assert result.code == 0 and result.codes == [], result.said


@pytest.mark.slow
def test_a_change_without_test_code_is_not_judged(repo: Repo) -> None:
    repo.change(BASE, {"README.txt": "docs\n"})
    result = repo.hook(check.main, "--mutate", "--skip", STATIC, "--base", "HEAD", "-q")  # -q: no success line
    assert result.said == (
        0,
        "oracle-guard: notice: mutation: nothing to compare: the change edits and deletes no test code the base had\n",
    )


@pytest.mark.slow
def test_the_budget_is_a_notice_and_the_sample_is_the_same_each_time(repo: Repo) -> None:
    before, after = UNKNOWN_TO_STATIC["a loop that checks one element"]
    first = mutate(repo, before, {T: module(after)}, "--mutate-max", "1")
    second = repo.hook(check.main, "--mutate", "--skip", STATIC, "--base", "HEAD", "--mutate-max", "1")
    assert "mutants were not run (--mutate-max 1): they are not judged" in first.err
    assert re.sub(r" in [0-9.]+ s:", "", first.err) == re.sub(r" in [0-9.]+ s:", "", second.err)
    assert (first.code, first.out) == (second.code, second.out)


@pytest.mark.slow
def test_a_base_that_fails_is_left_out_with_a_notice(repo: Repo) -> None:
    # A red base: a test that fails there catches no mutant, so it is nothing to compare (issue 28), never exit 2.
    result = mutate(
        repo,
        "def test_mean():\n    assert mean([1, 2, 3]) == 3\n",
        {T: module("def test_mean():\n    assert mean([1, 2]) == 1.5\n")},
    )
    assert result.code == 0 and "no selected test passes at HEAD: the 1 red there are left out" in result.err, (
        result.said
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(UNKNOWN_TO_STATIC) + sorted(KNOWN_TO_STATIC))
def test_the_tables_say_what_the_static_hooks_see(repo: Repo, name: str) -> None:
    """The static hooks alone: silent on UNKNOWN_TO_STATIC, the listed code on KNOWN_TO_STATIC."""
    known = name in KNOWN_TO_STATIC
    before, after = KNOWN_TO_STATIC[name][0] if known else UNKNOWN_TO_STATIC[name]
    repo.change({**BASE, T: module(before)}, {T: module(after)})
    result = repo.hook(check.main, "--skip", "collection-snapshot", "--base", "HEAD")
    assert sorted(set(result.codes)) == ([KNOWN_TO_STATIC[name][1]] if known else []), result.said


@pytest.mark.slow
def test_a_deliberate_removal_passes_with_a_signed_mutants_released_approval(repo: Repo, tmp_path: Path) -> None:
    key = make_key(tmp_path)
    trust = {
        "tests/allowed_signers": signers_line(key),
        CONTRACT: contract_text(extra="allowed_signers: tests/allowed_signers\n"),
    }
    before, after = UNKNOWN_TO_STATIC["a loop that checks one element"]
    repo.change({**BASE, **trust, T: module(before)}, {T: module(after)})
    argv = ("--mutate", "--skip", STATIC, "--base", "HEAD")
    result = repo.hook(check.main, *argv)
    statement = "mutants-released tests/test_core.py::test_squares"
    assert result.code == 1 and f"`oracle-guard approve {statement}`" in result.out, result.said
    assert "needs a signed approval" not in result.out
    approve(repo, key, "mutants-released tests/test_core.py::test_other")  # another test's: no use
    again = repo.hook(check.main, *argv)
    assert again.code == 1 and set(again.codes) == {"OG910"}, again.said
    approve(repo, key, statement)
    result = repo.hook(check.main, *argv, "-q")  # a clean run: -q, so no success line
    assert (result.code, result.out) == (0, ""), result.said
    assert "mutation: approved: test_squares's catch of `**` -> `*` at src/shop/core.py:" in result.err


@pytest.mark.slow
def test_a_verdict_that_changes_between_two_runs_is_a_notice(repo: Repo, tmp_path: Path) -> None:
    """The base's test catches the mutant once, then lets it pass (it remembers in a file): not reported."""
    marker = tmp_path / "seen"
    flaky = (
        "def test_bulk_discount():\n    ok = price(10, 1.0) == 9.0\n"
        f"    if not ok and not os.path.exists({str(marker)!r}):\n"
        f"        open({str(marker)!r}, 'w').close()\n        assert ok\n"
    )
    result = mutate(
        repo, "import os\n\n\n" + flaky, {T: module("import os\n\n\ndef test_bulk_discount():\n    price(10, 1.0)\n")}
    )
    assert result.code == 0 and result.codes == [], result.said
    assert (
        "mutation: flaky verdict: " in result.err
        and "was judged differently on a second run; not reported" in result.err
    )


@pytest.mark.slow
def test_the_replay_hook_takes_mutate_too(repo: Repo) -> None:
    from oracle_guard.hook_ids import replay

    before, after = UNKNOWN_TO_STATIC["a hand-rolled tolerance"]
    repo.change({**BASE, T: module(before)}, {T: module(after)})
    result = repo.hook(replay.main, "--mutate", "--base", "HEAD")
    assert result.code == 1 and set(result.codes) == {"OG910"}, result.said
    assert "oracle-replay: " in result.err and "passed at HEAD" in result.err and "still fail" not in result.err


IMPORT_TIME = """\
def _doubles(n):
    return {i: i * 2 for i in range(n)}


DOUBLES = _doubles(5)


def double(i):
    return DOUBLES[i]
"""


@pytest.mark.slow
@pytest.mark.parametrize("weakened", [True, False], ids=["weakened", "honest"])
def test_code_that_runs_at_import_is_judged_in_a_fresh_process(repo: Repo, weakened: bool) -> None:
    """A table built at import: a code swap after import cannot reach it, a fresh import does."""
    head = "from shop.table import double\n\n\n"
    after = (
        "def test_double():\n    assert double(3) > 0\n"
        if weakened
        else "def test_double():\n    assert double(3) == 6\n    assert double(0) == 0\n"
    )
    repo.change(
        {**BASE, "src/shop/table.py": IMPORT_TIME, T: head + "def test_double():\n    assert double(3) == 6\n"},
        {T: head + after},
    )
    result = repo.hook(check.main, "--mutate", "--skip", STATIC, "--base", "HEAD")
    assert "sit in code that also runs at import" in result.err, result.said
    if weakened:
        assert result.code == 1 and set(result.codes) == {"OG910"}, result.said
        assert "the base's test_double caught `*` -> `/` at src/shop/table.py:2 (in _doubles)" in result.out
    else:
        assert result.code == 0 and result.codes == [], result.said


SHARED_HELPER = "from shop.core import slug\n\n\ndef check_slug(text, expected):\n    assert slug(text) == expected\n"


@pytest.mark.slow
@pytest.mark.parametrize("weakened", [True, False], ids=["weakened", "stricter"])
def test_a_shared_helper_that_compares_less_is_judged_over_the_whole_suite(repo: Repo, weakened: bool) -> None:
    """tests/helpers.py is not a test module: every test may use it, so both sides run every test."""
    line = (
        "assert slug(text)[:1] == expected[:1]"
        if weakened
        else "assert slug(text) == expected and '--' not in expected"
    )
    repo.change(
        {
            **BASE,
            "tests/__init__.py": "",
            "tests/helpers.py": SHARED_HELPER,
            T: "from tests.helpers import check_slug\n\n\ndef test_slug():\n    check_slug('Hello Big World', 'hello-big-world')\n",
        },
        {"tests/helpers.py": SHARED_HELPER.replace("assert slug(text) == expected", line)},
    )
    result = repo.hook(check.main, "--mutate", "--skip", STATIC, "--base", "HEAD")
    if weakened:
        assert result.code == 1 and set(result.codes) == {"OG910"}, result.said
        assert "the base's test_slug caught" in result.out
    else:
        assert result.code == 0 and result.codes == [], result.said


@pytest.mark.slow
def test_a_deleted_module_whose_checks_another_module_makes_passes(repo: Repo) -> None:
    other = "tests/test_other.py"
    body = "def test_mean():\n    assert mean([1, 2, 3]) == 2\n"
    repo.change({**BASE, T: module(body), other: module(body.replace("test_mean", "test_mean_again"))}, {T: None})
    result = repo.hook(check.main, "--mutate", "--skip", STATIC, "--base", "HEAD")
    assert result.code == 0 and result.codes == [], result.said


@pytest.mark.slow
def test_new_tests_that_do_not_collect_are_a_finding_against_the_change(repo: Repo) -> None:
    """The base's tests ran in the same kind of tree: the change's that do not run are its doing (OG923), not exit 2."""
    result = mutate(
        repo, "def test_mean():\n    assert mean([1, 2, 3]) == 2\n", {T: module("def test_mean(:\n    pass\n")}
    )
    assert result.code == 1 and finding_codes(result.out) == ["OG923"], result.said
    assert "the new tests cannot run in the gate's scratch tree" in result.out


OVERLOADED = """\
from typing import overload


class Marker:
    @overload
    def __call__(self, name: str) -> str: ...

    @overload
    def __call__(self, name: None) -> None: ...

    def __call__(self, name):
        return None if name is None else name.upper()
"""


@pytest.mark.slow
def test_an_overloaded_function_below_an_edit_is_the_same_function_on_both_sides(repo: Repo) -> None:
    """pluggy's HookimplMarker.__call__: the mutant must reach the implementation, not an @overload stub."""
    test = "from shop.marker import Marker\n\n\ndef test_marker():\n    assert Marker()('a') == 'A'\n"
    repo.change(
        {**BASE, "src/shop/marker.py": OVERLOADED, T: test},
        {"src/shop/marker.py": "# a comment above moves every line\n" + OVERLOADED, T: test + "\n\n# touched\n"},
    )
    result = repo.hook(check.main, "--mutate", "--skip", STATIC, "--base", "HEAD")
    assert result.code == 0 and result.codes == [], result.said
    assert "the base's tests caught 0," not in result.err


@pytest.mark.slow
def test_a_project_module_that_breaks_pytests_import_is_named_not_called_missing(repo: Repo) -> None:
    """An old pluggy checkout: its own `pluggy` shadows the one pytest needs. pytest is installed; say why it fails."""
    repo.change(
        {
            **BASE,
            "pluggy.py": "raise ImportError('this is the project, not the pluggy pytest needs')\n",
            T: module("def test_mean():\n    assert mean([1, 2, 3]) == 2\n"),
        },
        {T: module("def test_mean():\n    assert mean([1, 2]) == 1.5\n")},
    )
    result = repo.hook(check.main, "--mutate", "--skip", STATIC, "--base", "HEAD")
    assert result.code == 2 and result.codes == [], result.said
    assert "pytest does not import in " in result.err and "this is the project, not the pluggy" in result.err
    assert "not installed" not in result.err


@pytest.mark.slow
def test_an_interpreter_without_pytest_is_called_so(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import venv

    venv.create(tmp_path / "bare", with_pip=False)
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "bare"))
    result = mutate(
        repo,
        "def test_mean():\n    assert mean([1, 2, 3]) == 2\n",
        {T: module("def test_mean():\n    assert mean([1, 2]) == 1.5\n")},
    )
    assert result.code == 2 and "pytest is not installed in " in result.err, result.said


WINDOW = """\


def window(values, back):
    start = len(values) - back
    return tail(values, start)


def tail(values, start):
    if start > len(values):
        raise IndexError("start past the end")
    return values[start:]
"""
ROBUST_TAIL = WINDOW.replace('    if start > len(values):\n        raise IndexError("start past the end")\n', "")
WINDOW_TEST = "from shop.core import tail, window\n\n\ndef test_window_runs():\n    window([1, 2, 3], 1)\n"


@pytest.mark.slow
def test_a_mutant_the_production_edit_hides_from_the_base_tests_too_is_not_the_tests_loss(repo: Repo) -> None:
    """boltons f1034b07: a fix made the code robust, so a mutant the base's tests caught only by a crash no
    longer crashes; the base's tests on the new code miss it as well: the tests lost nothing."""
    repo.change(
        {**BASE, "src/shop/core.py": CORE + WINDOW, T: module(WINDOW_TEST)},
        {
            "src/shop/core.py": CORE + ROBUST_TAIL,
            T: module(WINDOW_TEST + "\n\ndef test_tail_past_the_end():\n    assert tail([1, 2], 5) == []\n"),
        },
    )
    result = repo.hook(check.main, "--mutate", "--skip", STATIC, "--base", "HEAD")
    assert result.code == 0 and result.codes == [], result.said
    assert "missed by the base's tests too once the change's production edits are in" in result.err


@pytest.mark.slow
def test_a_weakened_test_beside_a_production_edit_is_still_refused(repo: Repo) -> None:
    before, after = UNKNOWN_TO_STATIC["a hand-rolled tolerance"]
    repo.change(
        {**BASE, "src/shop/core.py": CORE + WINDOW, T: module(WINDOW_TEST + "\n\n" + before)},
        {"src/shop/core.py": CORE + ROBUST_TAIL, T: module(WINDOW_TEST + "\n\n" + after)},
    )
    result = repo.hook(check.main, "--mutate", "--skip", STATIC, "--base", "HEAD")
    assert result.code == 1 and set(result.codes) == {"OG910"}, result.said
    assert "in mean" in result.out


@pytest.mark.slow
def test_check_takes_the_project_interpreter_as_the_error_messages_say(repo: Repo, tmp_path: Path) -> None:
    """`pass --python PATH` is the advice when pytest is missing: check must take it (for --mutate and --replay)."""
    import venv

    venv.create(tmp_path / "bare", with_pip=False)
    bare = str(tmp_path / "bare" / "bin" / "python")
    before = "def test_mean():\n    assert mean([1, 2, 3]) == 2\n"
    missing = mutate(repo, before, {T: module("def test_mean():\n    assert mean([1, 2]) == 1.5\n")}, "--python", bare)
    assert missing.code == 2 and f"pytest is not installed in {bare}" in missing.err, missing.said
    repo.write("src/shop/core.py", CORE.replace("round(total, 2)", "round(total, 3)"))  # production: replay runs
    replayed = repo.hook(check.main, "--replay", "--skip", STATIC, "--base", "HEAD", "--python", bare)
    assert replayed.code == 2 and f"pytest is not installed in {bare}" in replayed.err, replayed.said
    found = repo.hook(check.main, "--mutate", "--skip", STATIC, "--base", "HEAD", "--python", sys.executable)
    assert found.code == 0 and f"{sys.executable} ran " in found.err, found.said


RENAMED_HEAD = HEAD.replace("from shop.core import", "from shop._core import")


@pytest.mark.slow
@pytest.mark.parametrize("weakened", [False, True])
def test_a_production_module_renamed_with_its_tests_following_is_judged_in_its_new_file(
    repo: Repo, weakened: bool
) -> None:
    """pluggy 60f0fd6f (`hooks.py` -> `_hooks.py`): the new tree's files are traced too, or every twin mutant
    finds no test that ran it there and passes for one the new tests let live."""
    before = "def test_mean():\n    assert mean([1, 2, 3]) == 2\n"
    after = "def test_mean():\n    assert abs(mean([1, 2, 3]) - 2) < 1000\n" if weakened else before
    repo.change(
        {**BASE, T: module(before)},
        {"src/shop/core.py": None, "src/shop/_core.py": CORE, T: RENAMED_HEAD + after},
    )
    result = repo.hook(check.main, "--mutate", "--skip", STATIC, "--base", "HEAD")
    if weakened:
        assert result.code == 1 and set(result.codes) == {"OG910"}, result.said
        assert "in mean" in result.out
    else:
        assert result.code == 0 and result.codes == [], result.said
        assert "the new tests let 0 of those live" in result.err


# Three functions and a unittest module (issue 31): the three weakenings below let through mutmut's operators alone
# (4 mutants at 447f7ae, each still caught by another test: bench/mutation_values.py); each loses a bug only a value mutant expresses.
PEOPLE = """\
def display_name(name):
    return name.strip().title()


def tags_of(raw):
    return sorted({tag.strip().lower() for tag in raw.split(",") if tag.strip()})


def badge(name, raw_tags):
    return f"{display_name(name)} [{', '.join(tags_of(raw_tags))}]"
"""
PEOPLE_TESTS = """\
import unittest

from people.core import badge, display_name, tags_of

BADGES = [
    ("ada", "math", "Ada [math]"),
    ("grace hopper", "navy,code", "Grace Hopper [code, navy]"),
]


def assert_tags(case, raw, expected):
    case.assertEqual(tags_of(raw), expected)


class TestPeople(unittest.TestCase):
    def test_display_name(self):
        self.assertEqual(display_name("  ada LOVELACE "), "Ada Lovelace")

    def test_tags(self):
        assert_tags(self, "b, a,A, ,c", ["a", "b", "c"])

    def test_badges(self):
        for name, raw, expected in BADGES:
            self.assertEqual(badge(name, raw), expected)
"""
PEOPLE_BASE = {"pytest.ini": "[pytest]\npythonpath = src\n", "src/people/__init__.py": "", "src/people/core.py": PEOPLE}
PT = "tests/test_people.py"


class ValueWeakening(NamedTuple):
    old: str  # the base test's text the change edits
    weakened: str  # ... and what the weakening makes of it
    honest: str  # ... and what an honest refactor that keeps the checks makes of it
    bug: tuple[str, str]  # a production bug the base test catches and the weakened one does not (old, new)
    mutant: str  # the mutant the base test caught that the weakened module lets live, as OG910 names it


VALUE_WEAKENINGS = {
    "a unittest check replaced by a self-comparison": ValueWeakening(
        'self.assertEqual(display_name("  ada LOVELACE "), "Ada Lovelace")',
        'self.assertEqual(display_name("  ada LOVELACE "), display_name("  ada LOVELACE "))',
        'name = display_name("  ada LOVELACE ")\n        self.assertEqual(name, "Ada Lovelace")',
        ("name.strip().title()", "name.title()"),
        "`.strip(...)` removed",
    ),
    "a helper that compares only the first element": ValueWeakening(
        "case.assertEqual(tags_of(raw), expected)",
        "case.assertEqual(tags_of(raw)[0], expected[0])",
        "found = tags_of(raw)\n    case.assertEqual(len(found), len(expected))\n"
        "    for got, want in zip(found, expected):\n        case.assertEqual(got, want)",
        (
            'sorted({tag.strip().lower() for tag in raw.split(",") if tag.strip()})',
            'sorted([tag.strip().lower() for tag in raw.split(",") if tag.strip()])',
        ),
        "set comprehension -> list comprehension",
    ),
    "a loop that checks only the first item": ValueWeakening(
        "for name, raw, expected in BADGES:",
        "for name, raw, expected in BADGES[:1]:",
        "for name, raw, expected in list(BADGES):",
        ("', '.join", "'; '.join"),
        "', ' -> 'XX, XX'",
    ),
}


def people_tests(name: str, which: str) -> str:
    row = VALUE_WEAKENINGS[name]
    assert PEOPLE_TESTS.count(row.old) == 1
    return PEOPLE_TESTS.replace(row.old, row.weakened if which == "weakened" else row.honest)


def plain_pytest(root: Path, files: dict[str, str]) -> int:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:oracle_guard"],
        cwd=root,
        capture_output=True,
    ).returncode


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(VALUE_WEAKENINGS))
def test_a_value_weakening_turns_plain_pytest_green_with_its_bug(tmp_path: Path, name: str) -> None:
    row = VALUE_WEAKENINGS[name]
    assert PEOPLE.count(row.bug[0]) == 1
    buggy = {**PEOPLE_BASE, "src/people/core.py": PEOPLE.replace(*row.bug)}
    assert plain_pytest(tmp_path / "base", {**PEOPLE_BASE, PT: PEOPLE_TESTS}) == 0  # the base is green
    assert plain_pytest(tmp_path / "caught", {**buggy, PT: PEOPLE_TESTS}) == 1  # the base's tests catch the bug
    assert plain_pytest(tmp_path / "cheat", {**buggy, PT: people_tests(name, "weakened")}) == 0  # the weakened do not
    assert plain_pytest(tmp_path / "honest", {**buggy, PT: people_tests(name, "honest")}) == 1  # the honest twin does


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(VALUE_WEAKENINGS))
@pytest.mark.parametrize("which", ["weakened", "honest"])
def test_a_value_weakening_is_refused_by_mutate_alone_and_its_honest_twin_passes(
    repo: Repo, name: str, which: str
) -> None:
    repo.change({**PEOPLE_BASE, PT: PEOPLE_TESTS}, {PT: people_tests(name, which)})
    result = repo.hook(check.main, "--mutate", "--skip", STATIC, "--base", "HEAD")
    if which == "weakened":
        assert result.code == 1 and set(result.codes) == {"OG910"}, result.said
        assert VALUE_WEAKENINGS[name].mutant in result.out, result.said
    else:
        assert result.code == 0 and result.codes == [], result.said
        assert "the new tests let 0 of those live" in result.err


@pytest.mark.slow
def test_sys_monitoring_records_the_lines_settrace_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """3.12+ measures coverage with sys.monitoring (each line once a test); the lines must be settrace's.

    On 3.9-3.11 both runs use settrace. Tests that run different lines, a generator, a nested function,
    a method, code run at import, and a test that fails."""
    import time

    from oracle_guard.probes.mutation.run import Server

    files = {
        **PEOPLE_BASE,
        "src/people/more.py": "TABLE = {i: i * 2 for i in range(3)}\n\n\ndef evens(n):\n    for i in range(n):\n"
        "        if i % 2 == 0:\n            yield i\n\n\nclass Box:\n    def __init__(self, v):\n        self.v = v\n\n"
        "    def twice(self):\n        def inner():\n            return self.v * 2\n        return inner()\n",
        PT: PEOPLE_TESTS
        + "\n\ndef test_more():\n    from people.more import Box, evens\n    assert list(evens(5)) == [0, 2, 4]\n"
        "    assert Box(2).twice() == 4\n\n\ndef test_red():\n    assert display_name('x') == 'y'\n",
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    production = ["src/people/__init__.py", "src/people/core.py", "src/people/more.py"]
    covers = []
    for settrace in ("1", ""):
        monkeypatch.setenv("ORACLE_GUARD_MUTATION_SETTRACE", settrace)
        work = tmp_path / f"work{settrace}"
        work.mkdir()
        server = Server(sys.executable, str(tmp_path), production, [PT], str(work), "side")
        try:
            covers.append(server.cover(time.monotonic() + 120))
        finally:
            server.close()
    traced, monitored = ({t.node: (t.ok, t.lines) for t in c.tests} for c in covers)
    assert len(traced) == 5 and traced["tests/test_people.py::test_red"][0] is False
    more = {1, 4, 5, 6, 7, 10, 11, 12, 14, 15, 16, 17}  # imported by the test: its def and class lines too
    assert traced["tests/test_people.py::test_more"][1]["src/people/more.py"] - {0} == more
    assert monitored == traced
    assert (
        covers[1].import_lines == covers[0].import_lines and {1, 5, 9} <= covers[0].import_lines["src/people/core.py"]
    )
