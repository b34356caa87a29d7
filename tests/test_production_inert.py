"""A change to code under test that cannot change what pytest collects: the hook does not run pytest.

The rule (oracle_guard/analysis/inert.py, all_inert with the repository's other
modules as context): only bodies of functions that no module's import-time
code reaches, by name, through any module.  Both directions: the honest
change needs no collection, and a change that moves collection (a
parametrize list built by the changed function, reached directly, through a
helper in another module, or by a computed name) is collected and caught.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

from oracle_guard.analysis import inert
from oracle_guard.commands import one_hook
from tests.helpers import Repo

SHOP = """\
def price(amount):
    return amount * 2


def cases():
    return [1, 2, 3]
"""
FIXED = SHOP.replace("return amount * 2", "return amount + amount")
# The cheat: the failing case leaves the list pytest parametrizes over.
FEWER_CASES = SHOP.replace("return [1, 2, 3]", "return [1, 2]")
BUGGY = SHOP.replace("return amount * 2", "return amount * 2 if amount != 3 else 5")

DIRECT = """\
import pytest

import shop


@pytest.mark.parametrize("amount", shop.cases())
def test_price(amount):
    assert shop.price(amount) == amount * 2
"""
THROUGH_HELPER = DIRECT.replace("shop.cases()", "helpers.amounts()").replace(
    "import shop\n", "import helpers\nimport shop\n"
)
HELPERS = "import shop\n\n\ndef amounts():\n    return list(shop.cases())\n"
BY_COMPUTED_NAME = DIRECT.replace("shop.cases()", 'getattr(shop, "ca" + "ses")()')
UNREACHED = DIRECT.replace("shop.cases()", "[1, 2, 3]")


def _inert(old: str, new: str, *context: str) -> bool:
    return inert.all_inert([(old.encode(), new.encode())], ["test"], [ast.parse(c) for c in context])


def test_a_body_no_import_time_code_reaches_is_inert() -> None:
    assert _inert(SHOP, FIXED, DIRECT)
    assert _inert(SHOP, FEWER_CASES, UNREACHED)


@pytest.mark.parametrize(
    "context",
    [(DIRECT,), (THROUGH_HELPER, HELPERS), (BY_COMPUTED_NAME,)],
    ids=["called at import", "through a helper module", "by a computed name"],
)
def test_a_body_import_time_code_reaches_is_not_inert(context: tuple[str, ...]) -> None:
    assert not _inert(SHOP, FEWER_CASES, *context)


def test_a_lookup_over_literal_names_reaches_only_those_names() -> None:
    looped = "import shop\n\nfor name in ('price',):\n    getattr(shop, name)\n"
    assert _inert(SHOP, FEWER_CASES, looped)  # `cases` is never looked up
    assert not _inert(SHOP, FEWER_CASES, looped.replace("'price'", "'cases'"))
    rebound = looped + "name = input()\ngetattr(shop, name)()\n"
    assert not _inert(SHOP, FEWER_CASES, rebound)


def test_a_mark_alias_is_no_decorator_that_runs_code() -> None:
    aliased = (
        "import pytest\nimport shop\n\nslow = pytest.mark.slow\n\n\n@slow\ndef test_price():\n    assert shop.cases()\n"
    )
    assert _inert(SHOP, FEWER_CASES, aliased)
    wrapping = aliased.replace("slow = pytest.mark.slow", "def slow(f):\n    shop.cases()\n    return f")
    assert not _inert(SHOP, FEWER_CASES, wrapping)


def test_a_docstring_or_a_module_level_change_is_not_inert() -> None:
    documented = SHOP.replace("def price(amount):\n", 'def price(amount):\n    """>>> price(1)\n    2\n    """\n')
    assert not _inert(SHOP, documented, UNREACHED)  # doctest ids
    assert not _inert(SHOP, SHOP + "\nCASES = cases()\n", UNREACHED)


def _base(repo: Repo, monkeypatch, test_module: str, extra: dict[str, str] | None = None, shop: str = SHOP) -> None:
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("PYTEST_PLUGINS", raising=False)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    repo.write("pytest.ini", "[pytest]\npythonpath = . tests\n")
    repo.write("shop.py", shop)
    repo.write("tests/test_shop.py", test_module)
    for path, text in (extra or {}).items():
        repo.write(path, text)
    repo.stage()
    code, out, _, _ = repo.hook(one_hook.main, "--python", sys.executable, "--collect-all")
    assert code == 1 and "updated with what pytest collects now (3 tests)" in out
    repo.commit("base with its snapshot")


def _hook_collects(repo: Repo, monkeypatch) -> tuple[int, str, bool]:
    from oracle_guard.hook_ids import collection_snapshot

    read: list[str] = []
    result = collection_snapshot._Run.result

    def result_spy(run, *args, **kwargs):  # type: ignore[no-untyped-def]
        read.append(run.out_path)  # a pytest run's collection is read
        return result(run, *args, **kwargs)

    monkeypatch.setattr(collection_snapshot._Run, "result", result_spy)
    code, out, _, _ = repo.hook(one_hook.main, "--python", sys.executable)
    return code, out, bool(read)


def _plain_pytest(repo: Repo) -> int:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"],
        cwd=repo.path,
        capture_output=True,
    ).returncode


@pytest.mark.slow
def test_an_honest_production_change_needs_no_collection(repo: Repo, monkeypatch) -> None:
    _base(repo, monkeypatch, DIRECT, shop=BUGGY)
    assert _plain_pytest(repo) == 1  # the task: test_price[3] fails
    repo.write("shop.py", SHOP)  # the fix, in a body nothing runs while collecting
    repo.stage()
    code, out, collected = _hook_collects(repo, monkeypatch)
    assert (code, collected) == (0, False), out
    assert _plain_pytest(repo) == 0


@pytest.mark.slow
@pytest.mark.parametrize(
    "test_module,extra",
    [(DIRECT, {}), (THROUGH_HELPER, {"tests/helpers.py": HELPERS}), (BY_COMPUTED_NAME, {})],
    ids=["called at import", "through a helper module", "by a computed name"],
)
def test_a_production_change_that_drops_a_case_is_collected_and_caught(
    repo: Repo, monkeypatch, test_module: str, extra: dict[str, str]
) -> None:
    _base(repo, monkeypatch, test_module, extra, shop=BUGGY)
    assert _plain_pytest(repo) == 1
    repo.write("shop.py", BUGGY.replace("return [1, 2, 3]", "return [1, 2]"))  # the bug stays, its case goes
    repo.stage()
    assert _plain_pytest(repo) == 0  # plain pytest is green with the bug
    code, out, collected = _hook_collects(repo, monkeypatch)
    assert collected and code == 1, out
    assert "OG801" in out and "test_price[3]" in out
