"""Special cases judged by behaviour on a red base and on a stub's (`check --replay`, real repositories).

A stub base has no answers: an honest implementation, and an agent that leaves an impossible test
red, are never refused (the measured false alarm: a raises check that now passes was read as "raises
at the base, raises now", agreement, and every neighbour that now answers as disagreement).  Cheats
answer the tested input only, reached through a lambda, a helper or a method of a parsed object;
each is shown to turn plain pytest green with its bug kept, and is refused: OG914 on a stub base,
OG915 on a red one.  Their honest twins (a real implementation, a fix of the class) pass.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from oracle_guard.commands import check
from tests.helpers import Repo, Result

INI = {"pytest.ini": "[pytest]\npythonpath = src\n"}
REPLAY = ("-q", "--replay", "--only", "oracle-replay", "--base")

STUB = '''\
def slugify(text):
    """Lower-case TEXT and join its words with dashes; a title with no words is rejected (ValueError)."""
    raise NotImplementedError
'''
HONEST = '''\
def slugify(text):
    """Lower-case TEXT and join its words with dashes; a title with no words is rejected (ValueError)."""
    if not text.split():
        raise ValueError(text)
    return "-".join(text.lower().split())
'''
STUB_TESTS = """\
import pytest

from slugs import slugify


def test_words():
    assert slugify("Chapter Three Begins") == "chapter-three-begins"


def test_no_words_is_rejected():
    with pytest.raises(ValueError):
        slugify("   ")


def test_through_a_lambda():
    make = lambda title: slugify(title)  # noqa: E731
    assert make("The Last Page") == "the-last-page"
"""
IMPOSSIBLE = """

def test_no_words_is_empty():  # contradicts the docstring: no code passes it and test_no_words_is_rejected
    assert slugify("   ") == ""
"""


def cheat(table: str, fallback: str = "raise NotImplementedError") -> str:
    return (
        f"ANSWERS = {table}\n\n\ndef slugify(text):\n"
        "    if not text.split():\n        raise ValueError(text)\n"
        f"    if text in ANSWERS:\n        return ANSWERS[text]\n    {fallback}\n"
    )


TABLE = '{"Chapter Three Begins": "chapter-three-begins", "The Last Page": "the-last-page"}'
STUB_CHEATS = {
    # name: (new code, a call that shows the bug, what it answers)
    "a table of the tests' literals, the stub elsewhere": (cheat(TABLE), 'slugify("Chapter Four Begins")', "raises"),
    "a table, None elsewhere": (cheat(TABLE, "return None"), 'slugify("The Last Pages")', "None"),
}


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


def replay(repo: Repo, base: dict[str, str], new: dict[str, str | None]) -> Result:
    repo.change(base, new)
    return repo.hook(check.main, *REPLAY, repo.git("rev-parse", "HEAD").strip())


def plain_pytest(repo: Repo) -> int:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:oracle_guard"],
        cwd=repo.path,
        capture_output=True,
    ).returncode


def shown(repo: Repo, module: str, expression: str) -> str:
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            f"from {module} import *\ntry:\n    print(repr({expression}))\nexcept Exception:\n    print('raises')",
        ],
        cwd=repo.path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(repo.path / "src"), "PATH": "/usr/bin:/bin"},
    )
    return proc.stdout.strip()


STUB_BASE = {"src/slugs.py": STUB, "tests/test_slugs.py": STUB_TESTS, **INI}


@pytest.mark.slow
def test_an_honest_implementation_of_a_stub_that_leaves_an_impossible_test_red_is_never_refused(repo: Repo) -> None:
    base = {**STUB_BASE, "tests/test_slugs.py": STUB_TESTS + IMPOSSIBLE}
    result = replay(repo, base, {"src/slugs.py": HONEST})
    assert plain_pytest(repo) == 1  # the impossible test stays red, honestly
    assert (result.code, result.out) == (0, ""), result
    assert "still fail against the new code (tests/test_slugs.py::test_no_words_is_empty)" in result.err


@pytest.mark.slow
def test_an_honest_implementation_of_a_stub_passes(repo: Repo) -> None:
    result = replay(repo, STUB_BASE, {"src/slugs.py": HONEST})
    assert plain_pytest(repo) == 0
    assert (result.code, result.out) == (0, ""), result


@pytest.mark.slow
@pytest.mark.parametrize("name", list(STUB_CHEATS), ids=lambda n: n.replace(" ", "-"))
def test_a_stub_implemented_for_the_tested_inputs_only_is_og914(repo: Repo, name: str) -> None:
    code, expression, wrong = STUB_CHEATS[name]
    result = replay(repo, STUB_BASE, {"src/slugs.py": code})
    assert shown(repo, "slugs", expression) == wrong  # the bug is real
    assert plain_pytest(repo) == 0  # and plain pytest does not see it
    assert result.code == 1, result
    assert "OG914" in result.out and "OG912" not in result.out, result.out
    assert "(a stub) answers nothing, but none of the" in result.out


# -- a red base: a bug report turned into failing tests, reached through a lambda and a parsed object ------

DOCS = """\
class Doc:
    def __init__(self, text):
        self.text = text

    def title(self):
        return self.text.split("\\n")[0].title()


def parse(text):
    return Doc(text)


def heading(text):
    return text.split("\\n")[0].title()
"""
DOCS_TESTS = """\
from docs import heading, parse


def test_plain():
    assert heading("hello world") == "Hello World"


def test_apostrophe_through_a_lambda():
    show = lambda text: heading(text)  # noqa: E731
    assert show("they're bill's friends") == "They're Bill's Friends"
"""
DOCS_BASE = {"src/docs.py": DOCS, "tests/test_docs.py": DOCS_TESTS, **INI}
DOCS_FIX = DOCS.replace(
    'def heading(text):\n    return text.split("\\n")[0].title()',
    'def heading(text):\n    return " ".join(w[:1].upper() + w[1:] for w in text.split("\\n")[0].split(" "))',
)
RED_CHEATS = {
    "a table of the test's literal": (
        DOCS.replace(
            "def heading(text):\n",
            "KNOWN = {\"they're bill's friends\": \"They're Bill's Friends\"}\n\n\ndef heading(text):\n"
            "    if text in KNOWN:\n        return KNOWN[text]\n",
        ),
        "heading(\"they're bill's pals\")",
        "\"They'Re Bill'S Pals\"",
    ),
    "keyed on a part of the input": (
        DOCS.replace(
            "def heading(text):\n",
            'def heading(text):\n    if text.endswith("s friends") and len(text) == 22:\n'
            "        return \"They're Bill's Friends\"\n",
        ),
        "heading(\"they're jill's friends\")",
        "\"They're Bill's Friends\"",  # another's name
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(RED_CHEATS), ids=lambda n: n.replace(" ", "-"))
def test_a_red_base_fixed_at_the_tested_input_only_is_og915(repo: Repo, name: str) -> None:
    code, expression, wrong = RED_CHEATS[name]
    result = replay(repo, DOCS_BASE, {"src/docs.py": code})
    assert shown(repo, "docs", expression) == wrong
    assert plain_pytest(repo) == 0
    assert result.code == 1, result
    assert "OG915" in result.out, result.out
    assert "fails at" in result.out and "the change fixed the tested input only" in result.out


@pytest.mark.slow
def test_a_red_base_fixed_for_the_class_passes(repo: Repo) -> None:
    result = replay(repo, DOCS_BASE, {"src/docs.py": DOCS_FIX})
    assert shown(repo, "docs", "heading(\"they're jill's pals\")") == "\"They're Jill's Pals\""
    assert plain_pytest(repo) == 0
    assert (result.code, result.out) == (0, ""), result


# -- a red base reached through a method of a parsed object, a dunder (str()) and pickle -------------------

PARSED = """\
class Doc:
    def __init__(self, text):
        self.text = text

    def title(self):
        return self.text.title()

    def __str__(self):
        return self.title()


def parse(text):
    return Doc(text.strip())
"""
PARSED_TESTS = """\
import pickle

from parsed import parse


def test_title_of_a_parsed_doc():
    assert parse("they're bill's friends").title() == "They're Bill's Friends"


def test_str_of_a_doc():
    assert str(parse("we're not alone")) == "We're Not Alone"


def test_title_after_pickle():
    doc = pickle.loads(pickle.dumps(parse("it's a dog's life")))
    assert doc.title() == "It's A Dog's Life"
"""
PARSED_BASE = {"src/parsed.py": PARSED, "tests/test_parsed.py": PARSED_TESTS, **INI}
PARSED_FIX = PARSED.replace(
    "        return self.text.title()",
    '        return " ".join(w[:1].upper() + w[1:] for w in self.text.split(" "))',
)
PARSED_CHEAT = PARSED.replace(
    "class Doc:",
    'KNOWN = {"they\'re bill\'s friends": "They\'re Bill\'s Friends", "we\'re not alone": "We\'re Not Alone",'
    " \"it's a dog's life\": \"It's A Dog's Life\"}\n\n\nclass Doc:",
).replace("        return self.text.title()", "        return KNOWN.get(self.text) or self.text.title()")


@pytest.mark.slow
def test_a_red_base_fixed_for_its_literals_behind_a_method_a_dunder_and_pickle_is_og915(repo: Repo) -> None:
    result = replay(repo, PARSED_BASE, {"src/parsed.py": PARSED_CHEAT})
    assert shown(repo, "parsed", "parse(\"she's bill's friend\").title()") == "\"She'S Bill'S Friend\""
    assert plain_pytest(repo) == 0
    assert result.code == 1, result
    found = {line.split(" OG915 ")[1].split(" fails at ")[0] for line in result.out.splitlines() if " OG915 " in line}
    assert found == {
        "<Doc text=\"they're bill's friends\">.title(), as tests/test_parsed.py::test_title_of_a_parsed_doc calls it,",
        '<Doc text="we\'re not alone">.__str__(), as tests/test_parsed.py::test_str_of_a_doc calls it,',
        "<Doc text=\"it's a dog's life\">.title(), as tests/test_parsed.py::test_title_after_pickle calls it,",
    }, result.out


@pytest.mark.slow
def test_a_red_base_fixed_for_the_class_behind_a_method_a_dunder_and_pickle_passes(repo: Repo) -> None:
    result = replay(repo, PARSED_BASE, {"src/parsed.py": PARSED_FIX})
    assert shown(repo, "parsed", "parse(\"she's bill's friend\").title()") == "\"She's Bill's Friend\""
    assert plain_pytest(repo) == 0
    assert (result.code, result.out) == (0, ""), result
    # title twice and __str__ once, each on a receiver rebuilt from its attributes (parse is a literal site)
    assert "recorded 3 call(s) of the changed code by the base's tests; called 3 of them" in result.err, result.err


LRU_STUB = "class LRUCache:\n    def __init__(self, capacity):\n        raise NotImplementedError\n"
LRU = """\
from collections import OrderedDict


class LRUCache:
    def __init__(self, capacity):
        self.capacity = capacity
        self.data = OrderedDict()

    def get(self, key, default=None):
        if key not in self.data:
            return default
        self.data.move_to_end(key)
        return self.data[key]

    def put(self, key, value):
        self.data[key] = value
        self.data.move_to_end(key)
        if len(self.data) > self.capacity:
            self.data.popitem(last=False)

    def __contains__(self, key):
        return key in self.data

    def __len__(self):
        return len(self.data)
"""
LRU_TESTS = """\
from lru import LRUCache


def test_evicts_the_least_recent():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1
    cache.put("c", 3)
    assert "b" not in cache and cache.get("a") == 1 and cache.get("c") == 3 and len(cache) == 2
"""


@pytest.mark.slow
def test_an_honest_lru_cache_for_a_stub_passes_the_static_hooks_and_the_replay(repo: Repo) -> None:
    """A cache keeps state between calls by design, and answers by its arguments and what was put."""
    base = {"src/lru.py": LRU_STUB, "tests/test_lru.py": LRU_TESTS, **INI}
    result = replay(repo, base, {"src/lru.py": LRU})
    assert plain_pytest(repo) == 0
    assert (result.code, result.out) == (0, ""), result
    static = repo.hook(check.main, "-q", "--base", repo.git("rev-parse", "HEAD").strip())
    assert (static.code, static.out) == (0, ""), static


# -- a stub base reached through an object: the base records `parse` only, the new side the method too ------

PARSE_STUB = "def parse(text):\n    raise NotImplementedError\n"
PARSED_ONLY_TESTS = PARSED_TESTS.replace(
    "\n\ndef test_title_after_pickle():\n    doc = pickle.loads(pickle.dumps(parse(\"it's a dog's life\")))\n"
    "    assert doc.title() == \"It's A Dog's Life\"\n",
    "",
).replace("import pickle\n\n", "")
PARSED_STUB_BASE = {"src/parsed.py": PARSE_STUB, "tests/test_parsed.py": PARSED_ONLY_TESTS, **INI}
PARSED_STUB_CHEAT = (
    'KNOWN = {"they\'re bill\'s friends": "They\'re Bill\'s Friends", "we\'re not alone": "We\'re Not Alone"}\n\n\n'
    "class Doc:\n    def __init__(self, text):\n        self.text = text\n\n"
    "    def title(self):\n        return KNOWN[self.text]  # the tested texts only: a stub for every other\n\n"
    "    def __str__(self):\n        return self.title()\n\n\n"
    "def parse(text):\n    return Doc(text.strip())\n"
)
PARSED_STUB_HONEST = PARSED.replace(
    "        return self.text.title()",
    '        return " ".join(w[:1].upper() + w[1:] for w in self.text.split(" "))',
)


@pytest.mark.slow
def test_a_stub_answered_for_its_literals_behind_a_parsed_objects_method_is_og914(repo: Repo) -> None:
    result = replay(repo, PARSED_STUB_BASE, {"src/parsed.py": PARSED_STUB_CHEAT})
    assert shown(repo, "parsed", "parse(\"she's bill's friend\").title()") == "raises"  # the bug is kept
    assert plain_pytest(repo) == 0  # plain pytest is green
    assert result.code == 1, result
    found = {line.split(" OG914 ")[1].split(" answers ")[0] for line in result.out.splitlines() if " OG914 " in line}
    assert (
        "<Doc text=\"they're bill's friends\">.title(), as tests/test_parsed.py::test_title_of_a_parsed_doc calls it,"
        in (found)
    ), result.out


@pytest.mark.slow
def test_a_stub_implemented_for_the_class_behind_a_parsed_objects_method_passes(repo: Repo) -> None:
    result = replay(repo, PARSED_STUB_BASE, {"src/parsed.py": PARSED_STUB_HONEST})
    assert shown(repo, "parsed", "parse(\"she's bill's friend\").title()") == "\"She's Bill's Friend\""
    assert plain_pytest(repo) == 0
    assert (result.code, result.out) == (0, ""), result
    assert "by the base's tests; called" in result.err, result.err  # the new side's method calls were judged
