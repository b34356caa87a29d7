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

from oracle_guard.analysis import inert, reach_text
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


# Modules that reach `cases` only in ways a plain text search for the name misses, or that the
# tree walk once missed.  Each is a helper module spelling no other name the proof knows (not
# `price`), so the prefilter (oracle_guard/analysis/reach_text.py) alone decides whether it is
# walked; the test module imports AMOUNTS from it.  Each runs: the slow table below shows the cheat.
VIA_SOURCE = DIRECT.replace("shop.cases()", "amounts_source.AMOUNTS").replace(
    "import shop\n", "import amounts_source\nimport shop\n"
)
HIDERS = {
    "by adjacent literals": 'import shop\n\nAMOUNTS = getattr(shop, "ca" "ses")()\n',
    "by adjacent literals over lines": 'import shop\n\nAMOUNTS = getattr(shop, ("ca"  # c\n  "" "ses"))()\n',
    "by an escaped name": 'import shop\n\nAMOUNTS = getattr(shop, "\\x63ases")()\n',
    "by a unicode escape": 'import shop\n\nAMOUNTS = getattr(shop, "\\u0063ases")()\n',
    "by a named escape": 'import shop\n\nAMOUNTS = getattr(shop, "\\N{LATIN SMALL LETTER C}ases")()\n',
    "by an octal escape": 'import shop\n\nAMOUNTS = getattr(shop, "\\143ases")()\n',
    "by a line continuation in a string": 'import shop\n\nAMOUNTS = getattr(shop, "ca\\\nses")()\n',
    "by a normalised identifier": "import shop\n\nAMOUNTS = shop.\uff43ases()\n",
    "by a pickle after a newline escape": 'import pickle\n\nAMOUNTS = pickle.loads(b"cshop\\ncases\\n)R.")\n',
    "by an import alias": "from shop import cases as amounts\n\nAMOUNTS = amounts()\n",
    "by getattr renamed": 'import shop\n\nfetch = getattr\nAMOUNTS = fetch(shop, "ca" + "ses")()\n',
    "by getattr imported renamed": (
        'from builtins import getattr as fetch\n\nimport shop\n\nAMOUNTS = fetch(shop, "ca" + "ses")()\n'
    ),
    "by getattr passed on": 'import shop\n\nAMOUNTS = list(map(getattr, [shop], ["ca" + "ses"]))[0]()\n',
    "by __getattribute__": 'import shop\n\nAMOUNTS = shop.__getattribute__("ca" + "ses")()\n',
    "by __builtins__": 'import shop\n\nAMOUNTS = __builtins__["get" + "attr"](shop, "ca" + "ses")()\n',
    "by a module __getattr__": (
        "import shop\n\n\ndef __getattr__(name):\n    return getattr(shop, name.lower().replace('amount', 'case'))()\n"
    ),
    "by globals()": 'import shop\n\nAMOUNTS = globals()["shop"].cases()\n',
    "by vars()": 'import shop\n\nAMOUNTS = vars(shop)["ca" + "ses"]()\n',
    "by __dict__": 'import shop\n\nAMOUNTS = shop.__dict__["ca" + "ses"]()\n',
    "by a star import": "from shop import *\n\nAMOUNTS = cases()\n",
}
# Spelled in the tree only after an escape that makes no letter: the tree walk references `cases`.
TAB_BEFORE_NAME = 'NAMES = ["\\tcases"]\n'


def _context_answers(*contexts: str) -> tuple[bool, bool]:
    """all_inert on the FEWER_CASES change with CONTEXTS given as trees (walked) and as sources (prefiltered)."""
    pair = [(SHOP.encode(), FEWER_CASES.encode())]
    trees = inert.all_inert(pair, ["test"], [ast.parse(c) for c in contexts])
    return trees, inert.all_inert(pair, ["test"], [c.encode() for c in contexts])


def test_a_module_that_cannot_spell_a_changed_name_is_not_walked_and_the_answer_is_the_same() -> None:
    unrelated = "import os\n\n\ndef helper(path):\n    return os.path.join(path, 'x\\tz')\n\nHERE = helper('.')\n"
    names = frozenset({"price", "cases"}) | inert.DYNAMIC_WORDS
    assert not reach_text.may_reach(unrelated.encode(), names)  # skipped: parsed, not walked
    assert reach_text.may_reach(DIRECT.encode(), names)
    assert reach_text.may_reach(TAB_BEFORE_NAME.encode(), names)
    assert reach_text.may_reach(b"NAMES = ['1cases']\n", names)  # the tree reads `cases` there too
    for context in ([UNREACHED], [unrelated], [unrelated, UNREACHED]):
        assert _inert(SHOP, FEWER_CASES, *context)
        assert _context_answers(*context) == (True, True)
    assert _context_answers(TAB_BEFORE_NAME) == (False, False)


# Escapes that make no ASCII word character, and comments holding quotes: the text stays readable.
READABLE = {
    "bytes escapes": 'DATA = b"l\\xc3\\xb6k"\n',
    "a space escape": 'SEP = "\\x20"\n',
    "a quote in a comment after a literal": "NAME = \"ada\"\n\n# see 'ada' below\nOTHER = 1\n",
}
# The same, next to a name: the tree reads `cases` there.
READABLE_BUT_REACHING = {
    "after a hex escape": 'NAMES = ["\\x20cases"]\n',
    "after a unicode escape": 'NAMES = ["\\u0020cases"]\n',
    "after a bytes escape": 'DATA = b"\\xc3cases"\n',
}


@pytest.mark.parametrize("context", list(READABLE.values()), ids=list(READABLE))
def test_escapes_that_make_no_letter_do_not_make_a_module_walked(context: str) -> None:
    names = frozenset({"price", "cases"}) | inert.DYNAMIC_WORDS
    assert reach_text.spelled(context.encode()) is not None
    assert not reach_text.may_reach(context.encode(), names)
    assert _context_answers(context) == (True, True)


@pytest.mark.parametrize("context", list(READABLE_BUT_REACHING.values()), ids=list(READABLE_BUT_REACHING))
def test_a_name_after_an_escape_is_read(context: str) -> None:
    assert reach_text.may_reach(context.encode(), frozenset({"cases"}))
    assert _context_answers(context) == (False, False)


def test_an_escape_that_may_make_a_non_ascii_letter_reaches_a_non_ascii_name() -> None:
    """`"caf\\xe9"` holds `café` in the tree: walked when a changed function is named so."""
    old = "def caf\u00e9():\n    return [1, 2, 3]\n"
    new = old.replace("[1, 2, 3]", "[1, 2]")
    context = 'NAMES = ["caf\\xe9"]\n'
    assert reach_text.spelled(context.encode()) == frozenset({"NAMES", "caf", "xe9", reach_text.NON_ASCII})
    pair = [(old.encode(), new.encode())]
    assert not inert.all_inert(pair, ["test"], [ast.parse(context)])
    assert not inert.all_inert(pair, ["test"], [context.encode()])
    assert inert.all_inert(pair, ["test"], [b'NAMES = ["cafe"]\n'])  # the nearest: another name


@pytest.mark.parametrize("hider", list(HIDERS.values()), ids=list(HIDERS))
def test_a_module_that_reaches_a_changed_name_unspelled_is_walked(hider: str) -> None:
    """Given as source (the prefilter decides) the answer is the tree's: not inert."""
    assert "price" not in hider
    assert reach_text.may_reach(hider.encode(), frozenset({"price", "cases", "test_price"}) | inert.DYNAMIC_WORDS)
    assert _context_answers(hider) == (False, False)
    assert _context_answers(VIA_SOURCE, UNREACHED, hider) == (False, False)


def test_the_nearest_honest_helper_module_is_not_walked_and_stays_inert() -> None:
    """A helper module with constant data and the test module importing it: an honest fix is inert."""
    honest = "AMOUNTS = [1, 2, 3]\n"
    assert not reach_text.may_reach(honest.encode(), frozenset({"price", "cases", "test_price"}) | inert.DYNAMIC_WORDS)
    pair = [(SHOP.encode(), FIXED.encode())]
    assert inert.all_inert(pair, ["test"], [VIA_SOURCE.encode(), honest.encode()])
    assert inert.all_inert(pair, ["test"], [ast.parse(VIA_SOURCE), ast.parse(honest)])


def test_a_chain_through_modules_that_do_not_spell_the_name_is_followed() -> None:
    """The test module names only `amounts`; the helper module names `cases`: both are walked."""
    sources = [THROUGH_HELPER.encode(), HELPERS.encode()]
    assert not inert.all_inert([(SHOP.encode(), FEWER_CASES.encode())], ["test"], sources)
    deeper = HELPERS.replace("def amounts", "def inner") + "\n\ndef amounts():\n    return inner()\n"
    assert not inert.all_inert(
        [(SHOP.encode(), FEWER_CASES.encode())], ["test"], [THROUGH_HELPER.encode(), deeper.encode()]
    )


def test_an_unparsable_module_is_not_inert_even_when_it_cannot_reach() -> None:
    assert not inert.all_inert([(SHOP.encode(), FEWER_CASES.encode())], ["test"], [b"def broken(:\n"])


# The hiders run for real (plain pytest green with the bug kept, the hook collects): one per way the
# prefilter or the tree walk was fooled, the rest share their mechanism with one of these.
_SLOW_HIDERS = [
    "by adjacent literals",
    "by an escaped name",
    "by a pickle after a newline escape",
    "by an import alias",
    "by getattr renamed",
    "by __getattribute__",
    "by __builtins__",
]


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
    [
        (DIRECT, {}),
        (THROUGH_HELPER, {"tests/helpers.py": HELPERS}),
        (BY_COMPUTED_NAME, {}),
        *((VIA_SOURCE, {"tests/amounts_source.py": HIDERS[k]}) for k in _SLOW_HIDERS),
    ],
    ids=["called at import", "through a helper module", "by a computed name", *_SLOW_HIDERS],
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
