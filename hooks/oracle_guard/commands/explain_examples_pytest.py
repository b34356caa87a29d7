"""The examples of the codes that concern pytest itself: its configuration, what it collects, replay.

Configuration codes (OG851-OG877) are judged statically, from the files pytest and CI read; the
collection codes (OG801-OG804) need a committed snapshot and a pytest run, replay's (OG901-OG905) the
base's tests run against the new code.  Same shape and same test as explain_examples.py.
"""

from __future__ import annotations

from oracle_guard.commands.explain_examples import BASE, CONFIG_WHY, REPLAY_WHY, SHOP, TEST, Example, Files, T, edit

INI = "pytest.ini"
WF = ".github/workflows/ci.yml"
CONFTEST = "conftest.py"
CONFIGURED: Files = {**BASE, INI: "[pytest]\naddopts = -ra\ntestpaths = tests\nxfail_strict = true\n"}
CI: Files = {**BASE, WF: "jobs:\n  t:\n    steps:\n      - run: python -m pytest -q\n"}
SNAPSHOT = (
    "# oracle-guard collection snapshot: <status> <pytest node id>, sorted by id. Written by collection-snapshot; stage it.\n"
    "run   tests/test_price.py::test_free\nrun   tests/test_price.py::test_price\n"
)
CONFIGURED_FILES: Files = {INI: CONFIGURED[INI]}
COLLECTED: Files = {**BASE, "tests/__init__.py": "", "tests/collection_snapshot.txt": SNAPSHOT}
PYPROJECT_NAME = '[project]\nname = "shop"\n'
PYPROJECT_PYTEST = '[tool.pytest.ini_options]\naddopts = "-ra"\nxfail_strict = true\n'
RATED = "tests/test_rates.py"
RATED_TEST = (
    "import pytest\n\nfrom shop import RATES, price\n\n\n"
    "@pytest.mark.parametrize('rate', RATES)\ndef test_rate(rate):\n    assert price(rate) == 2 * rate\n"
)
DOCTESTED = (
    'def price(quantity):\n    """Twice the quantity.\n\n    >>> price(2)\n    4\n    """\n    return 2 * quantity\n'
)
TAMPER_WHY = "Code the patch controls must not decide how its own tests are judged."


def ini(old: str, new: str) -> Files:
    return {INI: edit(old, new, str(CONFIGURED[INI]))}


def workflow(old: str, new: str) -> Files:
    return {WF: edit(old, new, str(CI[WF]))}


def conftest(body: str) -> Files:
    return {CONFTEST: "import pytest\n\n\n" + body}


EXAMPLES: dict[str, Example] = {
    "OG851": Example(
        "addopts that narrows the run: -k, -m, --ignore, --deselect, -p no:..., --lf, -x ...",
        CONFIG_WHY,
        ini("addopts = -ra", 'addopts = -ra -k "not test_price"'),
        ini("addopts = -ra", "addopts = -ra -q"),
        base=CONFIGURED,
    ),
    "OG852": Example(
        "testpaths narrowed, so whole folders of tests are no longer collected.",
        CONFIG_WHY,
        ini("testpaths = tests", "testpaths = tests/unit"),
        ini("testpaths = tests", "testpaths = tests docs"),
        base=CONFIGURED,
    ),
    "OG853": Example(
        "python_files, python_classes or python_functions narrowed.",
        CONFIG_WHY,
        ini("xfail_strict = true", "xfail_strict = true\npython_functions = test_free"),
        ini("xfail_strict = true", "xfail_strict = true\npython_functions = test check"),
        base=CONFIGURED,
    ),
    "OG854": Example(
        "norecursedirs grew to cover test folders.",
        CONFIG_WHY,
        ini("xfail_strict = true", "xfail_strict = true\nnorecursedirs = .* build tests"),
        ini("xfail_strict = true", "xfail_strict = true\nnorecursedirs = .* build"),
        base=CONFIGURED,
    ),
    "OG855": Example(
        "xfail_strict (or pytest 9's strict) turned off: an xfail test that starts passing is no longer an error.",
        CONFIG_WHY,
        ini("xfail_strict = true", "xfail_strict = false"),
        ini("xfail_strict = true", "xfail_strict = true\nconsole_output_style = classic"),
        base=CONFIGURED,
    ),
    "OG856": Example(
        "Warnings that were errors (filterwarnings = error, -W error) no longer are.",
        CONFIG_WHY,
        {INI: "[pytest]\nfilterwarnings =\n    ignore\n"},
        {INI: "[pytest]\nxfail_strict = true\nfilterwarnings =\n    error\n"},
        base={**BASE, INI: "[pytest]\nfilterwarnings =\n    error\n"},
    ),
    "OG857": Example(
        "collect_ignore or collect_ignore_glob in a conftest.py grew.",
        CONFIG_WHY,
        {CONFTEST: "collect_ignore = ['setup.py', 'tests/test_price.py']\n"},
        {CONFTEST: "collect_ignore = ['setup.py']\n\nTIMEOUT = 5\n"},
        base={**BASE, CONFTEST: "collect_ignore = ['setup.py']\n"},
    ),
    "OG858": Example(
        "A conftest hook that removes collected items (pytest_ignore_collect, items filtered or deleted).",
        CONFIG_WHY,
        conftest(
            "def pytest_collection_modifyitems(items):\n    items[:] = [i for i in items if 'price' not in i.name]\n"
        ),
        conftest("def pytest_collection_modifyitems(items):\n    items.sort(key=lambda item: item.nodeid)\n"),
        base={**BASE, CONFTEST: "import pytest\n"},
    ),
    "OG859": Example(
        "A CI pytest command (workflow, tox, nox, Makefile, scripts) that narrows the run.",
        CONFIG_WHY,
        workflow("python -m pytest -q", "python -m pytest -q -m 'not slow'"),
        workflow("python -m pytest -q", "python -m pytest -q -n auto"),
        base=CI,
    ),
    "OG860": Example(
        "A rerun setting (--reruns, retries, a retrying CI step) new or raised.",
        "A retried failure is a hidden failure; flaky tests belong in the freeze ledger, where they expire.",
        ini("addopts = -ra", "addopts = -ra --reruns 3"),
        ini("addopts = -ra", "addopts = -ra --durations=5"),
        base=CONFIGURED,
    ),
    "OG861": Example(
        "A switch that regenerates snapshots or goldens during the run (--snapshot-update, --force-regen ...).",
        "A run that rewrites its expectations compares the output with itself.",
        ini("addopts = -ra", "addopts = -ra --snapshot-update"),
        ini("addopts = -ra", "addopts = -ra --snapshot-warn-unused"),
        base=CONFIGURED,
    ),
    "OG862": Example(
        "A coverage floor lowered or removed (--cov-fail-under, fail_under).",
        "A lower floor lets new code arrive untested.",
        {".coveragerc": "[report]\nfail_under = 10\n"},
        {".coveragerc": "[report]\nfail_under = 95\n"},
        base={**BASE, ".coveragerc": "[report]\nfail_under = 90\n"},
    ),
    "OG863": Example(
        "`# pragma: no cover` added to an existing line of production code in a commit that changes tests.",
        "Excluding the line from coverage hides that no test runs it any more.",
        {
            "shop.py": edit("    return 2 * quantity", "    return 2 * quantity  # pragma: no cover", SHOP),
            "tests/test_price.py": TEST + "\n\ndef test_three():\n    assert price(3) == 6\n",
        },
        {"shop.py": SHOP + "\n\ndef debug_dump():  # pragma: no cover\n    print(price(1))\n"},
        base={**BASE, ".coveragerc": "[report]\nfail_under = 90\n"},
    ),
    "OG864": Example(
        "Asserts stripped: python -O/-OO or PYTHONOPTIMIZE for the test run.",
        "Under -O every `assert` is removed, so every test passes.",
        workflow("python -m pytest -q", "python -O -m pytest -q"),
        workflow("python -m pytest -q", "python -X dev -m pytest -q"),
        base=CI,
    ),
    "OG865": Example(
        "A CI pytest command whose failure no longer fails the job (`|| true`, continue-on-error ...).",
        "A red run that reports green is worse than no run.",
        workflow("python -m pytest -q", "python -m pytest -q || true"),
        workflow("python -m pytest -q", "python -m pytest -q || (cat report.txt; exit 1)"),
        base=CI,
    ),
    "OG870": Example(
        "An option that switches off or blinds the oracle-guard plugin (-p no:oracle_guard, --oracle-guard-allow-skips).",
        TAMPER_WHY,
        ini("addopts = -ra", "addopts = -ra -p no:oracle_guard"),
        ini("addopts = -ra", "addopts = -ra -p no:randomly"),
        base=CONFIGURED,
    ),
    "OG871": Example(
        "An option that changes what pytest reads (--noconftest, -c, --rootdir, -o ...).",
        TAMPER_WHY,
        workflow("python -m pytest -q", "python -m pytest -q --noconftest"),
        workflow("python -m pytest -q", "python -m pytest -q --tb=short"),
        base=CI,
    ),
    "OG872": Example(
        "A new pytest configuration file that shadows the base's (pytest reads only the first it finds).",
        TAMPER_WHY,
        {"pytest.ini": "[pytest]\naddopts = -q\n"},
        {
            "pyproject.toml": PYPROJECT_NAME,
            "pytest.ini": "[pytest]\naddopts = -ra --strict-markers\nxfail_strict = true\n",
        },
        base={**BASE, "pyproject.toml": PYPROJECT_NAME + PYPROJECT_PYTEST},
    ),
    "OG874": Example(
        "conftest code that reaches the gate or pytest's start-up (unregisters a plugin, sets options).",
        TAMPER_WHY,
        conftest("def pytest_configure(config):\n    config.pluginmanager.set_blocked('oracle_guard')\n"),
        conftest("def pytest_configure(config):\n    config.addinivalue_line('markers', 'slow: long tests')\n"),
        base={**BASE, CONFTEST: "import pytest\n"},
    ),
    "OG875": Example(
        "conftest code that changes test outcomes (rewrites reports, swallows the call, zeroes exitstatus).",
        TAMPER_WHY,
        conftest("def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n"),
        conftest("def pytest_sessionfinish(session, exitstatus):\n    print('tests done:', exitstatus)\n"),
        base={**BASE, CONFTEST: "import pytest\n"},
    ),
    "OG876": Example(
        "A new process exit in a conftest (os._exit, SystemExit, pytest.exit with status 0).",
        TAMPER_WHY,
        conftest("import os\n\n\ndef pytest_sessionfinish(session):\n    os._exit(0)\n"),
        conftest(
            "def pytest_sessionfinish(session):\n    session.config.cache = None if False else session.config.cache\n"
        ),
        base={**BASE, CONFTEST: "import pytest\n"},
    ),
    "OG316": Example(
        "In a project whose pytest collects doctests (--doctest-modules, --doctest-glob): an example's expected "
        "output changed, a new +SKIP/+ELLIPSIS/+NORMALIZE_WHITESPACE, a removed example, a docstring rewritten at run time.",
        "A collected doctest is a check: rewriting it to what the code prints makes any behaviour change pass.",
        {"shop.py": DOCTESTED.replace("    4\n", "    5\n")},
        {"shop.py": DOCTESTED.replace("Twice the quantity.", "Two per item.")},  # prose, same examples
        base={**BASE, INI: "[pytest]\naddopts = --doctest-modules\n", "shop.py": DOCTESTED},
    ),
    "OG877": Example(
        "An autouse fixture in a conftest that replaces a function the tests below it check "
        "(monkeypatch.setattr, mock.patch, mocker.patch).",
        "Every test below that conftest then checks the stand-in, not the code: the suite goes green and proves nothing.",
        conftest(
            "import shop\n\n\n@pytest.fixture(autouse=True)\ndef fixed_price(monkeypatch):\n"
            "    monkeypatch.setattr(shop, 'price', lambda quantity: 2 * quantity)\n"
        ),
        conftest(
            "import time\n\n\n@pytest.fixture(autouse=True)\ndef frozen_clock(monkeypatch):\n"
            "    monkeypatch.setattr(time, 'time', lambda: 0.0)\n"
        ),
        base={**BASE, CONFTEST: "import pytest\n"},
    ),
    "OG801": Example(
        "A test id in the committed collection snapshot that pytest no longer collects.",
        "A test nobody runs passes forever; renames and moves are fine once the snapshot says so.",
        {"tests/test_price.py": edit("def test_free():", "def _test_free():")},
        {
            "tests/test_price.py": TEST + "\n\ndef test_three():\n    assert price(3) == 6\n",
            "tests/collection_snapshot.txt": SNAPSHOT + "run   tests/test_price.py::test_three\n",
        },
        base=COLLECTED,
        needs="collection",
    ),
    "OG802": Example(
        "A test that ran at the base and is now skipped at collection (a new skip, whatever made it).",
        "A skipped test passes whatever the code does.",
        {"tests/test_price.py": edit("def test_free():", "@pytest.mark.skip\ndef test_free():")},
        {"tests/test_price.py": edit("assert price(0) == 0\n", "assert price(0) == 0\n    assert price(1) == 2\n")},
        base=COLLECTED,
        needs="collection",
    ),
    "OG803": Example(
        "A test module that no longer imports, so pytest collects none of its tests.",
        "An import error hides every test of the module.",
        {"tests/test_price.py": edit("from shop import price", "from shop import price, discount")},
        {"tests/test_price.py": edit("from shop import price", "from shop import price as price")},
        base=COLLECTED,
        needs="collection",
    ),
    "OG804": Example(
        "pytest --collect-only itself fails: a usage error (an unknown option), an internal error.",
        "Without a collection nothing says which tests still run; the gate refuses rather than guess.",
        ini("addopts = -ra", "addopts = -ra --no-such-option"),
        ini("addopts = -ra", "addopts = -ra --strict-markers"),
        base={**COLLECTED, **CONFIGURED_FILES},
        needs="collection",
    ),
    "OG902": Example(
        "A changed test whose base version now skips or xfails against the new code (the code calls pytest.skip).",
        REPLAY_WHY,
        {
            "shop.py": "import pytest\n\n\ndef price(quantity):\n    if quantity:\n        pytest.skip('not ready')\n    return 0\n",
            "tests/test_price.py": edit("assert price(2) == 4", "assert price(2) == 4\n    assert price(3) == 6"),
        },
        {
            "shop.py": "def price(quantity):\n    if quantity < 0:\n        raise ValueError(quantity)\n    return 2 * quantity\n"
        },
        needs="replay",
    ),
    "OG901": Example(
        "A base test that fails against the new code (replay runs the base's tests on the patched code).",
        REPLAY_WHY,
        {
            "shop.py": edit("2 * quantity", "2 * quantity + 1", SHOP),
            "tests/test_price.py": edit("price(2) == 4", "price(2) == 5"),
        },
        {"shop.py": edit("return 2 * quantity", "total = 2 * quantity\n    return total", SHOP)},
        needs="replay",
    ),
    "OG907": Example(
        "A test that fails at the base whose base version still fails against the new code, while the change's"
        " own version of it passes, skips, xfails, lost the failing case or is gone.",
        "On a red base the failing tests are the task: a change that edits them until they pass has not done it.",
        {"shop.py": "def price(quantity):\n    return 3 * quantity\n", T: edit("price(2) == 4", "price(2) == 6")},
        {"shop.py": SHOP},
        base={**BASE, "shop.py": "def price(quantity):\n    raise NotImplementedError\n"},
        needs="replay",
    ),
    "OG903": Example(
        "A base test that can no longer import the new code.",
        REPLAY_WHY,
        {"shop.py": edit("def price(", "def cost(", SHOP), "tests/test_price.py": TEST.replace("price", "cost")},
        {"shop.py": SHOP + "\n\ncost = price\n"},
        needs="replay",
    ),
    "OG905": Example(
        "A changed test whose base version is no longer collected against the new code (its ids come from the code).",
        REPLAY_WHY,
        {
            "shop.py": SHOP + "\nRATES = [1, 2]\n",
            RATED: edit("    assert price(rate)", "    assert price(rate) >= 0\n    assert price(rate)", RATED_TEST),
        },
        {
            "shop.py": SHOP + "\nRATES = [1, 2, 3, 4]\n",
            RATED: edit("    assert price(rate)", "    assert price(rate) >= 0\n    assert price(rate)", RATED_TEST),
        },
        base={**BASE, "shop.py": SHOP + "\nRATES = [1, 2, 3]\n", RATED: RATED_TEST},
        needs="replay",
    ),
}

# Codes with no example here, and why; `explain` prints the reason on the page.
WITHOUT_EXAMPLE = {
    "OG873": "the contract emptied, made a symlink or a directory: `check` reports it beside OG927 (the change's"
    " contract does not load), and the collection-snapshot hook alone reports it; shown by tests/test_tamper.py.",
    "OG806": "the snapshot replaced in the work tree by a symlink, a folder or a FIFO, or put behind a symlinked"
    " folder: a file's kind, not a diff; shown by tests/test_trust_root.py, with --snapshot naming one (exit 2).",
    "OG904": "pytest cannot run the base's tests at all: an environment failure, shown by tests/test_replay.py.",
    "OG807": "the environment lacks a module the base's tests import because the change removed it from"
    " pyproject.toml, requirements or another file that installs it: an installed environment, not a diff of a"
    " test; shown by tests/test_collection_stopped.py, with a change that edits pyproject.toml for another"
    " reason (exit 2: install it) and one that adds a dependency with its import (passes).",
    "OG808": "a module that waits at import stops the collection only after the limit (900 s): shown by"
    " tests/test_collection_stopped.py with the limit lowered in-process, with a wait within it (passes) and"
    " the base's own wait under a change that runs nothing at collection (exit 2).",
    "OG809": "a flood needs over 256 MiB of output: shown by tests/test_collection_stopped.py with the cap lowered"
    " in-process, with output under the cap (an ordinary OG803, and passing without the error).",
    "OG805": "not a weakening, and no longer a finding: `check` judges a change against what the base lists"
    " and collects, and says in one notice what the change's snapshot does not record yet; shown by"
    " tests/test_ci_only.py.",
    "OG906": "the cheats act on a real pytest process (an early exit, a patched assertEqual, a rebound"
    " AssertionError); tests/test_replay_canaries.py shows each one turning plain pytest green and refused.",
    "OG911": "the cheat is in what the new code returns or patches at run time, not in a diff of a test:"
    " shown by tests/test_replay_flips.py (an always-equal str, the caller's `expected` read, assertEqual and"
    " pytest.raises patched).",
    "OG912": "a lookup table of the tests' answers over a wrong rule, judged by calling the code:"
    " shown by tests/test_replay_flips.py, and for inputs built by helpers, f-strings and fixtures by"
    " tests/test_replay_neighbours_recorded.py.",
    "OG913": "the new code ends the probe process it runs in: shown by tests/test_replay_flips.py.",
    "OG914": "a stub's replacement that answers the tested inputs only, judged by calling the code:"
    " shown by tests/test_replay_special_cases.py and tests/test_neighbours_bases.py.",
    "OG915": "a red base's bug fixed for the tested input only (a table, a key on part of the input), judged by"
    " calling the code: shown by tests/test_replay_special_cases.py and tests/test_neighbours_bases.py.",
    "OG916": "code that keeps state between calls, judged by calling it twice: shown by"
    " tests/test_neighbours_bases.py.",
    "OG971": "the cheat is in how the new code answers when a test runs, not in a diff of a test: shown by"
    " tests/test_replay_suspects.py (pytest detected through sys.modules, its objects, the environment and the"
    " caller's frame; a special case for the change's own new test).",
    "OG972": "the cheat is state the new code keeps between calls: shown by tests/test_replay_suspects.py (a"
    " call-count toggle that passes a test contradicting another).",
    "OG973": "the cheat is in what the new code returns or patches at run time: shown by"
    " tests/test_replay_suspects.py (an always-true `==` inherited from a base class, on a red base and in the"
    " change's own test; the doctest output checker patched).",
    "OG976": "the cheat forks the probe run it is in, so a copy of it writes the verdicts the gate reads; the"
    " kernel tells the gate which process reported: shown by tests/test_probe_runs.py (a fork at import whose"
    " copy answers honestly) and tests/test_probe_receipts.py.",
    "OG977": "a project whose options (pytest-xdist's -n) or conftest keep the suspects from running in one"
    " process: shown by tests/test_probe_runs.py.",
    "OG978": "the cheat tells the gate's runs from a plain one and keeps the bug only under the gate; the finding"
    " needs a plain run of the work tree and of a checkout of the base: shown by tests/test_replay_plain.py.",
    "OG910": "the verdict runs mutants against both sides' tests (seconds to minutes); 31 weakenings and their"
    " honest twins are in tests/test_mutation.py.",
}
