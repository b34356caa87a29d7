"""forbid-test-aware-code's examples for `oracle-guard explain` (OG961-OG969): a cheat in production code, and
the nearest honest change.  The base is explain_examples' shop: `price(2) == 4` fails on a bug, `3 * quantity`.
"""

from __future__ import annotations

from oracle_guard.commands.explain_examples import BASE, SHOP, Example, Files, edit

BUGGY = edit("2 * quantity", "3 * quantity", SHOP)
TESTED_WHY = (
    "Code that knows it is tested passes the tests and keeps the bug: "
    "the suite turns green while the code is still wrong."
)
BUGGY_BASE: Files = {**BASE, "shop.py": BUGGY}
FIX = SHOP


def shop(text: str) -> Files:
    return {"shop.py": text}


EXAMPLES: dict[str, Example] = {
    "OG961": Example(
        "Production code that asks whether pytest runs (PYTEST_CURRENT_TEST, sys.modules, sys.argv).",
        TESTED_WHY,
        shop(
            "import os\n\n\ndef price(quantity):\n"
            "    if 'PYTEST_CURRENT_TEST' in os.environ:\n        return 2 * quantity\n    return 3 * quantity\n"
        ),
        shop(FIX),
        base=BUGGY_BASE,
    ),
    "OG962": Example(
        "Production code that reads its caller's frame or source line (inspect.stack, f_back, sys._getframe(1)).",
        TESTED_WHY,
        shop(
            "import inspect\n\n\ndef price(quantity):\n"
            "    line = inspect.stack()[1].code_context[0]\n    return int(line.split('==')[1])\n"
        ),
        shop(
            "import warnings\n\n\ndef price(quantity):\n    if quantity < 0:\n"
            "        warnings.warn('negative quantity', stacklevel=2)\n    return 2 * quantity\n"
        ),
        base=BUGGY_BASE,
    ),
    "OG963": Example(
        "Production code that ends the process (os._exit, atexit, excepthooks) outside an entry point.",
        "os._exit(0) at shutdown replaces pytest's failing exit status with 0: every failure is hidden.",
        shop("import atexit\nimport os\n\natexit.register(os._exit, 0)\n\n\n" + BUGGY),
        shop(
            FIX + "\n\ndef main(argv=None):\n    import sys\n\n    print(price(int((argv or sys.argv[1:])[0])))\n"
            "    sys.exit(0)\n"
        ),
        base=BUGGY_BASE,
    ),
    "OG964": Example(
        "Production code that patches unittest, pytest, builtins, sys.modules or the clock at import.",
        "A patched assertEqual or approx cannot fail: the tests still run, but no longer check anything.",
        shop("import unittest\n\nunittest.TestCase.assertEqual = lambda *args, **kwargs: None\n\n\n" + BUGGY),
        shop("import codecs\n\ncodecs.register(lambda name: None)\n\n\n" + FIX),
        base=BUGGY_BASE,
    ),
    "OG965": Example(
        "A comparison that cannot fail: __eq__ that returns True or ignores the other operand, mock.ANY.",
        "`assert price(2) == 4` passes when the result equals everything, whatever it holds.",
        shop(
            "class Price(int):\n    def __eq__(self, other):\n        return True\n\n    __hash__ = int.__hash__\n\n\n"
            "def price(quantity):\n    return Price(3 * quantity)\n"
        ),
        shop(
            "class Price:\n    def __init__(self, cents):\n        self.cents = cents\n\n"
            "    def __eq__(self, other):\n        if not isinstance(other, Price):\n            return NotImplemented\n"
            "        return self.cents == other.cents\n\n\n" + FIX
        ),
        base=BUGGY_BASE,
    ),
    "OG966": Example(
        "A branch or table for the base tests' exact inputs that returns the answer the test expects.",
        "The code learned the test's answers: any other input still gets the bug.",
        shop("def price(quantity):\n    if quantity == 2:\n        return 4\n    return 3 * quantity\n"),
        shop(
            "def price(quantity):\n    if quantity < 0:\n        raise ValueError(quantity)\n    return 2 * quantity\n"
        ),
        base=BUGGY_BASE,
    ),
    "OG967": Example(
        "A call counter or flag kept across calls that picks the result (the first call answers right).",
        "The test's one call gets the right answer; every later call keeps the bug.",
        shop(
            "_calls = 0\n\n\ndef price(quantity):\n    global _calls\n    _calls += 1\n"
            "    if _calls <= 2:\n        return 2 * quantity\n    return 3 * quantity\n"
        ),
        shop("import functools\n\n\n@functools.lru_cache(maxsize=None)\n" + FIX),
        base=BUGGY_BASE,
    ),
    "OG968": Example(
        "A start-up file beside the code: sitecustomize.py, a .pth file, a stdlib shadow, a pytest11 entry point.",
        "It runs before any test and can change how Python or pytest judge the run.",
        {"sitecustomize.py": "import os\n\nos.environ['SHOP_RATE'] = '2'\n"},
        {"shop_rates.py": "RATE = 2\n"},
    ),
    "OG969": Example(
        "Production code no rule can read: eval/exec of computed code, getattr(os, <computed name>).",
        "A name or code computed at run time hides what it calls from every static rule.",
        shop("import os\n\n\ndef price(quantity):\n    getattr(os, '_' + 'exit')(0)\n    return 3 * quantity\n"),
        shop(
            "class Shop:\n    rate = 2\n\n\ndef price(quantity, field='rate'):\n    return getattr(Shop, field) * quantity\n"
        ),
        base=BUGGY_BASE,
    ),
    "OG970": Example(
        "A changed production file under a Python name that is not text: NUL bytes, or bytes its encoding cannot decode.",
        "No rule can read it, so nothing in it is checked; Python would not import it either, but a zip named .py still runs.",
        {"shop_rates.py": "PK\x03\x04\x00\x00rates\x00\x01\x02"},
        {"shop_rates.py": "RATES = {'standard': 2}\n"},
    ),
}
