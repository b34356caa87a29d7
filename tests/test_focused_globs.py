"""The glob scan of oracle-shrink walks only the statements that spell a glob, and finds every glob doing so.

analysis/meaning/globs.py `glob_sites(tree, names, source)`: a top-level statement whose lines
spell neither `glob` nor a name bound to one of glob's functions (nor an opaque line) holds no
glob call, so it is not walked.  The sites must be exactly those of the whole walk.
"""

from __future__ import annotations

import ast

import pytest

from oracle_guard.analysis.meaning.globs import glob_sites
from oracle_guard.analysis.pysource import Module
from tests.helpers import Repo
from tests.test_meaning import GLOB_BASE, GLOB_TEST, shrink

FILLER = "".join(f"\n\ndef test_{n}():\n    value = {n} + 1\n    assert value == {n + 1}\n" for n in range(30))

SOURCES = {
    "a parametrize over goldens": "import pytest\n" + GLOB_TEST.format(pattern="*.txt") + FILLER,
    "glob.glob in a body": FILLER + "\nimport glob\n\n\ndef test_files():\n    assert glob.glob('data/*.csv')\n",
    "an alias of glob.glob": "from glob import glob as find\n"
    + FILLER
    + "\n\ndef test_f():\n    assert find('d/*.txt')\n",
    "an alias of glob.iglob through a name": "import glob as G\nwalk = G.iglob\n"
    + FILLER
    + "\n\ndef test_w():\n    assert list(walk('d/**/*.txt', recursive=True))\n",
    "spelled in fullwidth letters": FILLER
    + "\nfrom pathlib import Path\n\n\ndef test_p():\n    assert list(Path('d').ｇｌｏｂ('*.txt'))\n",
    "a decorator line far from its def's body": "import pytest\nfrom pathlib import Path\n\n\n@pytest.mark.parametrize(\n    'p',\n    sorted(Path('g').rglob('*.json')),\n)\ndef test_g(p):\n    assert p\n"
    + FILLER,
    "no glob at all": FILLER,
}


def _sites(source: str, pruned: bool) -> list[tuple[int, int, str, tuple[str, ...], bool]]:
    module = Module.from_source("tests/test_x.py", source.encode())
    found = glob_sites(module.tree, module.names, module.source if pruned else None)
    return [(call.lineno, call.col_offset, pattern, words, rec) for call, pattern, words, rec in found]


@pytest.mark.parametrize("source", list(SOURCES.values()), ids=list(SOURCES))
def test_pruned_scan_finds_the_same_sites_as_the_whole_walk(source: str) -> None:
    whole = _sites(source, pruned=False)
    assert _sites(source, pruned=True) == whole


def test_every_row_but_the_last_has_a_site() -> None:
    """The rows above are not vacuous: each spells a glob the whole walk finds (and the last none)."""
    counts = {name: len(_sites(source, pruned=False)) for name, source in SOURCES.items()}
    assert counts.pop("no glob at all") == 0
    assert all(count == 1 for count in counts.values()), counts


def test_pruning_skips_statements_without_a_glob() -> None:
    module = Module.from_source("tests/test_x.py", SOURCES["glob.glob in a body"].encode())
    walked: list[ast.AST] = []
    original = ast.walk

    def spy(node: ast.AST):  # type: ignore[no-untyped-def]
        if isinstance(node, ast.stmt):
            walked.append(node)
        return original(node)

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(ast, "walk", spy)
        glob_sites(module.tree, module.names, module.source)
    assert [getattr(n, "name", type(n).__name__) for n in walked] == ["Import", "test_files"]


BIG = "import pytest\n" + FILLER + GLOB_TEST.format(pattern="{pattern}") + FILLER.replace("test_", "test_more_")


@pytest.mark.parametrize(("new", "expected"), [("a*.txt", ["OG307"]), ("*", [])], ids=["narrowed", "widened"])
def test_a_narrowed_glob_in_a_big_module_is_found(
    repo: Repo, capsys: pytest.CaptureFixture[str], new: str, expected: list[str]
) -> None:
    base = {**GLOB_BASE, "tests/test_golden.py": BIG.replace("{pattern}", "*.txt")}
    changed = BIG.replace("{pattern}", new) + "\n\ndef _helper(value):\n    return value\n"
    codes, out = shrink(repo, base, {"tests/test_golden.py": changed}, capsys)
    assert codes == expected, out
