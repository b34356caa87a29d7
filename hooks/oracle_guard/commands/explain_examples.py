"""Per finding code: what it catches, why it matters, and two small changes of files (`oracle-guard explain`).

Each example is a base tree and two changes of it: the weakening the code refuses, and the nearest
honest change, which passes.  tests/test_explain.py commits each one in a real repository and runs
`oracle-guard check --base` on it, so a page never shows an example the hooks do not judge so.
A code whose example needs a pytest run (a committed collection snapshot) or replay says so in
`needs`; the test runs it the same way.  hints.py holds each code's title and next step.
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple, Optional

from oracle_guard.repo.paths import DEFAULT_CONTRACT

Files = dict[str, Optional[str]]  # path -> new text; None deletes the file

SHOP = "def price(quantity):\n    return 2 * quantity\n"
TEST = (
    "import pytest\n\nfrom shop import price\n\n\n"
    "def test_price():\n    assert price(2) == 4\n    assert price(0) == 0\n\n\n"
    "def test_free():\n    assert price(0) == 0\n"
)
T = "tests/test_price.py"
C = DEFAULT_CONTRACT
BASE: Files = {"shop.py": SHOP, T: TEST}
SKIP_WHY = "A skipped test passes whatever the code does: the suite gets greener while checking less."
SHRINK_WHY = "A smaller oracle accepts more programs: the broken code the old check caught now passes."
CONTRACT_WHY = "The contract is the trust root: a patch that loosens it decides how it is judged itself."
LEDGER_WHY = "A freeze hides a failing test; its budget and expiry are what keep the hiding short and visible."
SPLIT_WHY = "A change that edits the code and the tests that judge it in one commit can move both goal posts at once."
CONFIG_WHY = "pytest's configuration decides what runs and what counts as failure, so loosening it weakens every test."
REPLAY_WHY = "The base's tests are the behaviour the project promised; new code that breaks them is a regression."


class Example(NamedTuple):
    what: str  # what the code catches
    why: str  # why it matters
    weakening: Files  # applied to base; refused with the code
    honest: Files  # applied to base; passes
    base: Files = BASE
    needs: str = ""  # "collection" (a pytest run) or "replay"; empty: static


def edit(old: str, new: str, text: str = TEST) -> str:
    """TEXT with OLD (which must be in it) replaced by NEW."""
    if old not in text:
        raise ValueError(f"{old!r} not in the example")
    return text.replace(old, new, 1)


def skip_on(test: str, mark: str) -> str:
    return edit(f"def {test}(", f"{mark}\ndef {test}(")


NEW_TEST = TEST + "\n\n@pytest.mark.skip(reason='needs the new tax table')\ndef test_tax():\n    assert price(1) == 2\n"
PLATFORM_SKIP = edit(
    "def test_price():\n", "def test_price():\n    if sys.platform == 'win32':\n        pytest.skip('no fork')\n"
).replace("import pytest\n", "import sys\n\nimport pytest\n")
RAISES = (
    "import pytest\n\nfrom shop import parse\n\n\n"
    "def test_parse_rejects_text():\n    with pytest.raises(ValueError, match='not a number'):\n        parse('x')\n"
)
SHOP_PARSE = (
    SHOP
    + "\n\ndef parse(text):\n    if not text.isdigit():\n        raise ValueError('not a number')\n    return int(text)\n"
)
APPROX = "from shop import price\n\n\ndef test_half():\n    assert price(0.5) == pytest.approx(1.0, rel=1e-9)\n"
APPROX = "import pytest\n\n" + APPROX
PARAM = (
    "import pytest\n\nfrom shop import price\n\n\n"
    "@pytest.mark.parametrize('n, total', [(0, 0), (1, 2), (5, 10)])\n"
    "def test_price(n, total):\n    assert price(n) == total\n"
)
PROPERTY = (
    "from hypothesis import example, given, settings, strategies as st\n\nfrom shop import price\n\n\n"
    "@settings(max_examples=200)\n@given(st.integers(min_value=0))\n@example(7)\n"
    "def test_price_is_even(n):\n    assert price(n) % 2 == 0\n"
)
P = "tests/test_props.py"
PROPERTY_CONTRACT = (
    "version: 1\nproperties:\n  - id: price_even\n    module: tests.test_props\n"
    "    name: test_price_is_even\n    min_examples: 150\n"
)
INVOICE = '{"total": 12}\n'


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def locks(*entries: tuple[str, str, str]) -> str:
    body = "".join(f"  - id: {i}\n    path: {p}\n    sha256: {s}\n    unlock: null\n" for i, p, s in entries)
    return "version: 1\nfixtures:\n" + (body or "  []\n").replace("fixtures:\n  []", "fixtures: []")


INVOICE_LOCK = ("invoice", "tests/fixtures/invoice.json", _sha(INVOICE))
LOCKED: Files = {**BASE, "tests/fixtures/invoice.json": INVOICE, C: locks(INVOICE_LOCK)}


def freeze(test: str, expires: str, reruns: int, extra: str = "") -> str:
    return (
        f'  - id: {test}\n    owner: "oncall"\n    reason: "PAY-1"\n    expires: "{expires}"\n'
        f"    remaining_reruns: {reruns}\n{extra}"
    )


def ledger(freezes: str, max_active: int = 3, max_days: str = "") -> str:
    return f"version: 1\nfreezes:\n{freezes or '  []'}\nmax_active_freezes: {max_active}\n{max_days}".replace(
        "freezes:\n  []", "freezes: []"
    )


FROZEN = freeze("tests/test_price.py::test_free", "2099-01-08T00:00:00Z", 2, "    seed: 7\n")
LEDGER: Files = {**BASE, C: ledger(FROZEN)}
SPLIT: Files = {  # contract-split's default layers: production code under src/
    "src/shop.py": SHOP,
    T: TEST,
    "tests/contracts/test_api.py": "from shop import price\n\n\ndef test_api():\n    assert price(1) == 2\n",
    "tests/relations/test_double.py": "from shop import price\n\n\ndef test_double():\n    assert price(4) == 2 * price(2)\n",
    "tests/fixtures/expected.json": '{"total": 4}\n',
}

SIGNERS = "tests/allowed_signers"
SIGNER = (  # a public key only: the examples sign nothing
    "alice@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBacpkf1hTIb8rkxtgTN3XUK11DweYLFK1psP/OOyQii alice\n"
)
TRUSTED: Files = {**BASE, SIGNERS: SIGNER, C: f"version: 1\nallowed_signers: {SIGNERS}\nmax_active_freezes: 3\n"}
QUARANTINED = "from shop import price\n\n\ndef test_slow_total():\n    assert price(100) == 200\n"
Q = "tests/quarantine/test_slow.py"
QUARANTINE: Files = {
    **BASE,
    Q: QUARANTINED,
    C: ledger(freeze("tests/quarantine/test_slow.py::test_slow_total", "2099-01-08T00:00:00Z", 2)),
}


EXAMPLES: dict[str, Example] = {
    "OG001": Example(
        "A changed test file that does not parse: no rule can read it, so none could see a weakening in it.",
        "An unreadable file is refused rather than trusted (fail closed).",
        {T: edit("def test_free():", "def test_free(:")},
        {T: edit("def test_free():", "def test_free() -> None:")},
    ),
    "OG101": Example(
        "A skip, skipif or xfail mark that is new since the base on a test that ran there, in any spelling.",
        SKIP_WHY,
        {T: skip_on("test_price", "@pytest.mark.skip(reason='flaky')")},
        {T: NEW_TEST},  # a brand-new test may carry its own skip: it weakens nothing that ran
    ),
    "OG102": Example(
        "A mark whose name is computed at run time, so no one can tell statically whether it skips.",
        SKIP_WHY,
        {T: skip_on("test_price", "@getattr(pytest.mark, 'sk' + 'ip')")},
        {T: skip_on("test_price", "@pytest.mark.slow")},
    ),
    "OG110": Example(
        "A new or raised rerun mark (flaky, retry helpers) on an existing test, outside the freeze ledger.",
        "A retried failure is a hidden failure: the test passes once in N tries and nobody sees the other runs.",
        {T: skip_on("test_price", "@pytest.mark.flaky(reruns=5)")},
        {T: skip_on("test_price", "@pytest.mark.slow")},
    ),
    "OG201": Example(
        "A new pytest.skip/xfail/importorskip/exit, skipTest or raised SkipTest in a test, fixture or helper.",
        SKIP_WHY,
        {T: edit("sys.platform == 'win32'", "True", PLATFORM_SKIP)},
        {T: edit("'no fork'", "'fork is POSIX only'", PLATFORM_SKIP)},  # only the reason text changed
        base={**BASE, T: PLATFORM_SKIP},
    ),
    "OG202": Example(
        "A test that now returns before its first check.",
        SKIP_WHY,
        {T: edit("    assert price(2) == 4\n", "    return\n    assert price(2) == 4\n")},
        {
            T: edit(
                "    assert price(0) == 0\n\n\ndef test_free", "    assert price(0) == 0\n    return\n\n\ndef test_free"
            )
        },
    ),
    "OG301": Example(
        "A test (or a helper that holds checks) with fewer checks than at the base.",
        SHRINK_WHY,
        {T: edit("    assert price(0) == 0\n\n\n", "\n\n")},
        {
            T: edit(
                "    assert price(2) == 4\n    assert price(0) == 0\n", "    assert (price(2), price(0)) == (4, 0)\n"
            )
        },
    ),
    "OG302": Example(
        "A test removed, unless it lives on as the same test (renamed, moved, merged, split).",
        SHRINK_WHY,
        {T: edit("\n\ndef test_free():\n    assert price(0) == 0\n", "")},
        {T: edit("def test_free():", "def test_free_of_charge():")},
    ),
    "OG303": Example(
        "A strong check of a value replaced by a weaker one of the same value (== by truthiness, is not None ...).",
        SHRINK_WHY,
        {T: edit("assert price(2) == 4", "assert price(2)")},
        {T: edit("assert price(2) == 4", "assert price(2) == 4 and price(3) == 6")},
    ),
    "OG304": Example(
        "A tolerance loosened: pytest.approx, math.isclose, assert_allclose, assertAlmostEqual, abs(a - b) < eps.",
        SHRINK_WHY,
        {P: edit("rel=1e-9", "rel=0.5", APPROX)},
        {P: edit("rel=1e-9", "rel=1e-12", APPROX)},
        base={**BASE, P: APPROX},
    ),
    "OG305": Example(
        "A new try/except (or contextlib.suppress) around checks that swallows their failure.",
        SHRINK_WHY,
        {
            T: edit(
                "    assert price(2) == 4\n",
                "    try:\n        assert price(2) == 4\n    except AssertionError:\n        pass\n",
            )
        },
        {
            T: edit(
                "    assert price(2) == 4\n",
                "    try:\n        assert price(2) == 4\n    finally:\n        print('done')\n",
            )
        },
    ),
    "OG306": Example(
        "pytest.raises/warns/assertRaises broadened: an ancestor exception, a grown tuple, match= removed or cut.",
        SHRINK_WHY,
        {P: edit("pytest.raises(ValueError, match='not a number')", "pytest.raises(Exception)", RAISES)},
        {P: edit("match='not a number'", "match='^not a number$'", RAISES)},
        base={"shop.py": SHOP_PARSE, P: RAISES},
    ),
    "OG307": Example(
        "@pytest.mark.parametrize that lost cases.",
        SHRINK_WHY,
        {P: edit("(0, 0), (1, 2), (5, 10)", "(0, 0), (1, 2)", PARAM)},
        {P: edit("(0, 0), (1, 2), (5, 10)", "(0, 0), (1, 2), (5, 10), (7, 14)", PARAM)},
        base={**BASE, P: PARAM},
    ),
    "OG308": Example(
        "A new check that can never fail: assert True, assert x == x on a literal, assert (x, 'msg') ...",
        SHRINK_WHY,
        {T: edit("assert price(2) == 4", "assert price(2) == 4\n    assert (price(3) == 7, 'three')")},
        {T: edit("assert price(2) == 4", "assert price(2) == 4\n    assert price(3) == 6, 'three'")},
    ),
    "OG309": Example(
        "Weaker Hypothesis settings: max_examples lowered, the generate phase dropped, a lower profile.",
        SHRINK_WHY,
        {P: edit("max_examples=200", "max_examples=10", PROPERTY)},
        {P: edit("max_examples=200", "max_examples=500", PROPERTY)},
        base={**BASE, P: PROPERTY},
    ),
    "OG310": Example(
        "@given removed from a test that had it.",
        SHRINK_WHY,
        {
            P: edit(
                "@given(st.integers(min_value=0))\n@example(7)\ndef test_price_is_even(n):",
                "def test_price_is_even(n=7):",
                PROPERTY,
            )
        },
        {P: edit("@given(st.integers(min_value=0))", "@given(st.integers())", PROPERTY)},
        base={**BASE, P: PROPERTY},
    ),
    "OG311": Example(
        "An @example(...) removed from a property.",
        SHRINK_WHY,
        {P: edit("@example(7)\n", "", PROPERTY)},
        {P: edit("@example(7)\n", "@example(7)\n@example(0)\n", PROPERTY)},
        base={**BASE, P: PROPERTY},
    ),
    "OG312": Example(
        "A Hypothesis strategy narrowed: st.just in place of a strategy, bounds tightened, values dropped, filters.",
        SHRINK_WHY,
        {P: edit("st.integers(min_value=0)", "st.just(2)", PROPERTY)},
        {P: edit("st.integers(min_value=0)", "st.integers()", PROPERTY)},
        base={**BASE, P: PROPERTY},
    ),
    "OG313": Example(
        "A new assume() (or a filter on drawn data) in a property: the inputs that fail are thrown away.",
        SHRINK_WHY,
        {
            P: edit("    assert price(n)", "    assume(n < 3)\n    assert price(n)", PROPERTY).replace(
                "example, given", "assume, example, given"
            )
        },
        {
            P: edit(
                "    assert price(n) % 2 == 0\n", "    assert price(n) % 2 == 0\n    assert price(n) >= 0\n", PROPERTY
            )
        },
        base={**BASE, P: PROPERTY},
    ),
    "OG314": Example(
        "An expected value rewritten in place (== 4 became == 5) while the test and the check's inputs are unchanged.",
        "Rewriting the expectation to what the code now returns makes any behaviour change pass unnoticed.",
        {T: edit("assert price(2) == 4", "assert price(2) == 5")},
        {T: edit("assert price(2) == 4", "assert price(3) == 6")},  # a new input with its own answer
    ),
    "OG315": Example(
        "A test (or a fixture it requests, autouse or not, in its module or a conftest) that replaces the very "
        "function or method whose result it checks (mock.patch, patch.object, monkeypatch.setattr, an assignment).",
        "The check then compares the stand-in with the answer the test wrote: it passes whatever the code does.",
        {
            T: edit(
                "import pytest\n",
                "import pytest\n\nimport shop\n",
                edit(
                    "def test_price():\n    assert price(2) == 4",
                    "def test_price(monkeypatch):\n    monkeypatch.setattr(shop, 'price', lambda quantity: 4)\n    assert shop.price(2) == 4",
                ),
            )
        },
        {
            T: edit(
                "import pytest\n",
                "import pytest\n\nimport time\n",
                edit(
                    "def test_price():\n    assert price(2) == 4",
                    "def test_price(monkeypatch):\n    monkeypatch.setattr(time, 'time', lambda: 0.0)\n    assert price(2) == 4",
                ),
            )
        },
    ),
    "OG401": Example(
        "A locked fixture whose bytes no longer match the sha256 in the contract.",
        "Re-recording the data the tests compare with makes wrong output the new expectation.",
        {"tests/fixtures/invoice.json": '{"total": 13}\n'},
        {"tests/fixtures/other.json": '{"total": 13}\n'},  # a new, unlocked fixture
        base=LOCKED,
    ),
    "OG402": Example(
        "A locked fixture file deleted.",
        "A missing fixture lets its tests be dropped or rewritten without review.",
        {"tests/fixtures/invoice.json": None},
        {"tests/fixtures/invoice.json": INVOICE},  # unchanged bytes, passes
        base=LOCKED,
    ),
    "OG404": Example(
        "A lock's digest changed in the contract relative to the base, together with its file.",
        CONTRACT_WHY,
        {C: locks(INVOICE_LOCK[:2] + (_sha('{"total": 13}\n'),)), "tests/fixtures/invoice.json": '{"total": 13}\n'},
        {C: locks(INVOICE_LOCK, ("other", "tests/fixtures/other.json", _sha("x"))), "tests/fixtures/other.json": "x"},
        base=LOCKED,
    ),
    "OG405": Example(
        "A lock repointed at another file.",
        CONTRACT_WHY,
        {C: locks(("invoice", "tests/fixtures/other.json", _sha("x"))), "tests/fixtures/other.json": "x"},
        {C: locks(INVOICE_LOCK, ("other", "tests/fixtures/other.json", _sha("x"))), "tests/fixtures/other.json": "x"},
        base=LOCKED,
    ),
    "OG406": Example(
        "A lock dropped from the contract.",
        CONTRACT_WHY,
        {C: locks()},
        {C: locks(INVOICE_LOCK, ("other", "tests/fixtures/other.json", _sha("x"))), "tests/fixtures/other.json": "x"},
        base=LOCKED,
    ),
    "OG501": Example(
        "A contract property removed.",
        CONTRACT_WHY,
        {C: "version: 1\nproperties: []\n"},
        {C: edit("min_examples: 150", "min_examples: 180", PROPERTY_CONTRACT)},
        base={**BASE, P: PROPERTY, C: PROPERTY_CONTRACT},
    ),
    "OG502": Example(
        "A contract property repointed at another module or function.",
        CONTRACT_WHY,
        {
            C: edit("name: test_price_is_even", "name: test_other", PROPERTY_CONTRACT),
            P: PROPERTY + "\n\ndef test_other():\n    assert True\n",
        },
        {P: PROPERTY + "\n\ndef test_other():\n    assert price(1) == 2\n"},
        base={**BASE, P: PROPERTY, C: PROPERTY_CONTRACT},
    ),
    "OG503": Example(
        "A property's min_examples lowered.",
        CONTRACT_WHY,
        {C: edit("min_examples: 150", "min_examples: 20", PROPERTY_CONTRACT)},
        {C: edit("min_examples: 150", "min_examples: 180", PROPERTY_CONTRACT)},
        base={**BASE, P: PROPERTY, C: PROPERTY_CONTRACT},
    ),
    "OG504": Example(
        "A contract property whose function is gone.",
        CONTRACT_WHY,
        {P: edit("def test_price_is_even", "def test_price_is_even_renamed", PROPERTY)},
        {P: edit("assert price(n) % 2 == 0", "assert price(n) % 2 == 0 and price(n) >= n", PROPERTY)},
        base={**BASE, P: PROPERTY, C: PROPERTY_CONTRACT},
    ),
    "OG505": Example(
        "A contract property that lost @given.",
        CONTRACT_WHY,
        {
            P: edit(
                "@given(st.integers(min_value=0))\n@example(7)\ndef test_price_is_even(n):",
                "def test_price_is_even(n=7):",
                PROPERTY,
            )
        },
        {P: edit("st.integers(min_value=0)", "st.integers()", PROPERTY)},
        base={**BASE, P: PROPERTY, C: PROPERTY_CONTRACT},
    ),
    "OG506": Example(
        "A contract property that runs fewer examples (max_examples) than its min_examples.",
        CONTRACT_WHY,
        {P: edit("max_examples=200", "max_examples=100", PROPERTY)},
        {P: edit("max_examples=200", "max_examples=300", PROPERTY)},
        base={**BASE, P: PROPERTY, C: PROPERTY_CONTRACT},
    ),
    "OG507": Example(
        "A contract property whose body can no longer fail.",
        CONTRACT_WHY,
        {P: edit("assert price(n) % 2 == 0", "assert True", PROPERTY)},
        {P: edit("assert price(n) % 2 == 0", "assert price(n) == 2 * n", PROPERTY)},
        base={**BASE, P: PROPERTY, C: PROPERTY_CONTRACT},
    ),
    "OG508": Example(
        "A contract property's strategy narrowed.",
        CONTRACT_WHY,
        {P: edit("st.integers(min_value=0)", "st.just(2)", PROPERTY)},
        {P: edit("st.integers(min_value=0)", "st.integers()", PROPERTY)},
        base={**BASE, P: PROPERTY, C: PROPERTY_CONTRACT},
    ),
    "OG601": Example(
        "A freeze in the ledger past its expiry.",
        LEDGER_WHY,
        {C: ledger(freeze("tests/test_price.py::test_free", "2020-01-01T00:00:00Z", 2, "    seed: 7\n"))},
        {C: ledger("")},  # fixed and graduated
        base=LEDGER,
    ),
    "OG602": Example(
        "A freeze without reruns left.",
        LEDGER_WHY,
        {C: ledger(freeze("tests/test_price.py::test_free", "2099-01-08T00:00:00Z", 0, "    seed: 7\n"))},
        {C: ledger(freeze("tests/test_price.py::test_free", "2099-01-08T00:00:00Z", 1, "    seed: 7\n"))},
        base=LEDGER,
    ),
    "OG610": Example(
        "A ledger budget (max_active_freezes, max_freeze_days, max_reruns) raised.",
        LEDGER_WHY,
        {C: ledger(FROZEN, max_active=5)},
        {C: ledger(FROZEN, max_active=2)},
        base=LEDGER,
    ),
    "OG611": Example(
        "A freeze's expiry moved later.",
        LEDGER_WHY,
        {C: ledger(freeze("tests/test_price.py::test_free", "2099-02-08T00:00:00Z", 2, "    seed: 7\n"))},
        {C: ledger(freeze("tests/test_price.py::test_free", "2099-01-05T00:00:00Z", 2, "    seed: 7\n"))},
        base=LEDGER,
    ),
    "OG612": Example(
        "A freeze's rerun budget raised.",
        LEDGER_WHY,
        {C: ledger(freeze("tests/test_price.py::test_free", "2099-01-08T00:00:00Z", 3, "    seed: 7\n"))},
        {C: ledger(freeze("tests/test_price.py::test_free", "2099-01-08T00:00:00Z", 1, "    seed: 7\n"))},
        base=LEDGER,
    ),
    "OG613": Example(
        "A freeze entry's seed, repro command or file changed.",
        LEDGER_WHY,
        {C: ledger(freeze("tests/test_price.py::test_free", "2099-01-08T00:00:00Z", 2, "    seed: 8\n"))},
        {C: ledger(FROZEN.replace('"PAY-1"', '"PAY-1: a race in the tax cache"'))},
        base=LEDGER,
    ),
    "OG510": Example(
        "A trust setting of the contract changed: allowed_signers, approvals, layers, fixture roots, budgets.",
        CONTRACT_WHY,
        {C: str(TRUSTED[C]).replace(f"allowed_signers: {SIGNERS}", "allowed_signers: null")},
        {C: str(TRUSTED[C]).replace("max_active_freezes: 3", "max_active_freezes: 2")},
        base=TRUSTED,
    ),
    "OG511": Example(
        "The allowed-signers file changed: a key added, removed or replaced.",
        "A patch that adds its own key can sign its own approvals.",
        {SIGNERS: SIGNER + SIGNER.replace("alice@", "mallory@")},
        {T: TEST + "\n\ndef test_three():\n    assert price(3) == 6\n"},
        base=TRUSTED,
    ),
    "OG512": Example(
        "The contract deleted.",
        CONTRACT_WHY,
        {C: None},
        {C: str(TRUSTED[C]).replace("max_active_freezes: 3", "max_active_freezes: 2")},
        base=TRUSTED,
    ),
    "OG603": Example(
        "More active freezes than max_active_freezes allows.",
        LEDGER_WHY,
        {C: ledger(FROZEN + freeze("tests/test_price.py::test_price", "2099-01-05T00:00:00Z", 1), max_active=1)},
        {C: ledger(freeze("tests/test_price.py::test_price", "2099-01-05T00:00:00Z", 1), max_active=1)},
        base={**BASE, C: ledger(FROZEN, max_active=1)},
    ),
    "OG614": Example(
        "A new freeze that expires later than max_freeze_days (default 7) from now.",
        LEDGER_WHY,
        {C: ledger(FROZEN + freeze("tests/test_price.py::test_price", "2099-03-01T00:00:00Z", 1))},
        {C: ledger(FROZEN + freeze("tests/test_price.py::test_price", "2099-01-05T00:00:00Z", 1))},
        base=LEDGER,
    ),
    "OG615": Example(
        "A new freeze that starts with more reruns than max_reruns (default 2).",
        LEDGER_WHY,
        {C: ledger(FROZEN + freeze("tests/test_price.py::test_price", "2099-01-05T00:00:00Z", 5))},
        {C: ledger(FROZEN + freeze("tests/test_price.py::test_price", "2099-01-05T00:00:00Z", 1))},
        base=LEDGER,
    ),
    "OG616": Example(
        "A new freeze without a signed `freeze-add` approval, where the contract names allowed signers.",
        LEDGER_WHY,
        {C: str(TRUSTED[C]).replace("version: 1\n", "version: 1\nfreezes:\n" + FROZEN)},
        {C: str(TRUSTED[C]).replace("max_active_freezes: 3", "max_active_freezes: 2")},
        base=TRUSTED,
    ),
    "OG620": Example(
        "A skip or xfail mark on a test under the quarantine layer (tests/quarantine/).",
        "A frozen test must keep running (with reruns) so the ledger sees when it is fixed; a skip hides it.",
        {Q: "import pytest\n\n" + QUARANTINED.replace("def test_slow", "@pytest.mark.skip\ndef test_slow")},
        {
            Q: QUARANTINED.replace(
                "    assert price(100) == 200\n", "    assert price(100) == 200\n    assert price(50) == 100\n"
            )
        },
        base=QUARANTINE,
    ),
    "OG621": Example(
        "A quarantined test's file deleted while its freeze entry is still in the ledger.",
        LEDGER_WHY,
        {Q: None},
        {C: ledger("")},  # fixed and graduated: the test stays, its freeze entry goes
        base=QUARANTINE,
    ),
    "OG622": Example(
        "The contract deleted while its ledger held freezes.",
        LEDGER_WHY,
        {C: None},
        {C: ledger("")},
        base=QUARANTINE,
    ),
    "OG701": Example(
        "Production code and contract-layer files (tests/contracts, locked fixtures) changed in one commit.",
        SPLIT_WHY,
        {
            "src/shop.py": edit("2 * quantity", "2 * quantity + 0", SHOP),
            "tests/contracts/test_api.py": "def test_api():\n    assert True\n",
        },
        {
            "src/shop.py": edit("2 * quantity", "2 * quantity + 0", SHOP),
            T: TEST + "\n\ndef test_two():\n    assert price(1) == 2\n",
        },
        base=SPLIT,
    ),
    "OG702": Example(
        "Production code and a relation test (tests/relations) changed in one commit.",
        SPLIT_WHY,
        {"src/shop.py": edit("2 * quantity", "2 * quantity + 0", SHOP), "tests/relations/test_double.py": None},
        {"src/shop.py": edit("2 * quantity", "2 * quantity + 0", SHOP)},
        base=SPLIT,
    ),
    "OG703": Example(
        "Golden files re-recorded in the commit that changes production code.",
        SPLIT_WHY,
        {"src/shop.py": edit("2 * quantity", "3 * quantity", SHOP), "tests/fixtures/expected.json": '{"total": 6}\n'},
        {"tests/fixtures/expected.json": '{"total": 4, "currency": "EUR"}\n'},  # in its own commit
        base=SPLIT,
    ),
}

# Codes without an example yet, each with the reason; `explain` says so on the page.
WITHOUT_EXAMPLE: dict[str, str] = {
    "OG403": "a lock path that climbs out (`..`, absolute) is refused by the contract loader itself (exit 2, one"
    " line); OG403 is what only the file system shows, a symlink or special file on the way, which an example of"
    " text files cannot hold: shown by tests/test_fixture_lock_verify.py.",
    "OG003": "a test file replaced by a symlink or a submodule, which a text example cannot hold;"
    " shown by tests/test_oracle_shrink.py.",
    **dict.fromkeys(
        ("OG691", "OG692", "OG693", "OG694"),
        "reported by `oracle-guard quarantine run` when a frozen test fails its seeded reruns, not by a change;"
        " shown by tests/test_quarantine_run.py.",
    ),
}


def example(code: str) -> Example | None:
    return EXAMPLES.get(code)
