"""The replay runs the base's doctest examples against the new code (probes/replay/doctests.py).

A change that edits a function and the examples in its docstring together would otherwise be
judged by its own examples: the new tree holds the new module, docstrings included.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from oracle_guard.commands import check
from tests.helpers import Repo, finding_codes

ADD = '''def add(a, b):
    """Add two numbers.

    >>> add(2, 2)
    4
    """
    return a + b
'''
BASE = {"calc.py": ADD, "pytest.ini": "[pytest]\naddopts = --doctest-modules\n"}


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


def replay(repo: Repo, after: dict[str, str | None]) -> tuple[int, int, str, list[str]]:
    """(plain pytest's exit, the replay's exit, its output, its codes) for AFTER over BASE."""
    repo.change(BASE, after)
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo.path, capture_output=True
    )
    result = repo.hook(
        check.main, "--replay", "--only", "oracle-replay", "--base", repo.git("rev-parse", "HEAD").strip()
    )
    return plain.returncode, result.code, result.out + result.err, result.codes


@pytest.mark.slow
def test_code_and_its_example_changed_together_is_judged_by_the_base_example(repo: Repo) -> None:
    cheat = ADD.replace("    4\n", "    5\n").replace("return a + b", "return a + b + 1")
    plain, code, said, codes = replay(repo, {"calc.py": cheat})
    assert plain == 0  # its own example agrees with the bug
    assert code == 1 and finding_codes(said) == ["OG901"], said
    assert "calc.py::calc.add" in said and "the base's example at line 3 of its docstring fails" in said
    assert "oracle_guard_base_doctests" not in said and "/dev/shm" not in said


@pytest.mark.slow
@pytest.mark.parametrize(
    "honest",
    [
        ADD.replace("Add two numbers.", "Return the sum of A and B.").replace(
            "return a + b", "total = a + b\n    return total"
        ),
        ADD.replace("    4\n", "    4\n    >>> add(-1, 1)\n    0\n"),
    ],
    ids=["prose and a refactor", "an example added"],
)
def test_an_edited_docstring_whose_base_examples_still_hold_passes(repo: Repo, honest: str) -> None:
    plain, code, said, _ = replay(repo, {"calc.py": honest})
    assert plain == 0 and code == 0, said
    assert "ran the base's examples of 1 edited docstring(s)" in said


# -- a module that becomes a package keeps its doctests' names ------------------------------------------------
# (inflection 5f22a6fd: `inflection.py` moved to `inflection/__init__.py` for its py.typed marker, every doctest
# was OG905 "not collected against the new code": `calc.py::calc.add` is `calc/__init__.py::calc.add` now.)


@pytest.mark.slow
def test_a_module_moved_into_a_package_keeps_its_doctests(repo: Repo) -> None:
    plain, code, said, codes = replay(repo, {"calc.py": None, "calc/__init__.py": ADD})
    assert plain == 0
    assert code == 0, said  # was OG905 for calc.py::calc.add


@pytest.mark.slow
def test_a_moved_module_whose_code_and_example_changed_together_is_judged_by_the_base_example(repo: Repo) -> None:
    cheat = ADD.replace("    4\n", "    5\n").replace("return a + b", "return a + b + 1")
    plain, code, said, codes = replay(repo, {"calc.py": None, "calc/__init__.py": cheat})
    assert plain == 0  # its own example agrees with the bug
    assert code == 1 and "OG901" in codes, said
