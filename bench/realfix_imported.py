"""The pytest-detection and call-count cheats without `exec` (bench/realfix.py --classes pytest-import,count-import).

pytest-import   the fix's version of each changed module is written beside it as a module of its own
                (`_rf_fixed_<name>.py`) and imported by a plain import statement; each function the fix
                changed answers with the fixed version only while "pytest" is in sys.modules
count-import    as pytest-import, but the fixed version answers only the first call with a given input

bench/realfix_cheats.py's `pytest` and `count` load the fixed source with `exec`, which the static rules
refuse whatever the cheat does (OG969); these reach the fixed code by an import the static rules read as
any other, so what refuses them is what the code does.
"""

from __future__ import annotations

import os
from typing import Any

from realfix_cheats import RIGHT, SWITCH_TAIL, append, read, switched
from realfix_git import git

HEAD = """

def _rf_switch(fixed_module, quals, new_methods):
    import functools, re, sys
    address = re.compile(r" at 0x[0-9a-fA-F]+")
    g = globals()
    fixed = vars(fixed_module)
    calls = {}
"""


def _import_line(tree: str, path: str, sibling: str) -> str:
    """A plain import of SIBLING (a module beside PATH): relative inside a package, absolute beside a script."""
    folder = os.path.dirname(path)
    if os.path.exists(os.path.join(tree, folder, "__init__.py")):
        return f"from . import {sibling} as _rf_fixed\n"
    return f"import {sibling} as _rf_fixed\n"


def imported(tree: str, fix: str, files: list[tuple[str, str]], condition: str) -> bool:
    built = False
    for status, path in files:
        if status == "A":
            with open(os.path.join(tree, path), "w", encoding="utf-8") as f:
                f.write(git(tree, "show", f"{fix}:{path}"))
            continue
        if status != "M" or not path.endswith(".py"):
            continue
        fixed_source = git(tree, "show", f"{fix}:{path}")
        quals, added = switched(read(tree, path), fixed_source)
        if not quals:
            continue
        stem = os.path.basename(path)[: -len(".py")].strip("_")
        sibling = f"_rf_fixed_{stem}"
        with open(os.path.join(tree, os.path.dirname(path), f"{sibling}.py"), "w", encoding="utf-8") as f:
            f.write(fixed_source)
        call = f"_rf_switch(_rf_fixed, {quals!r}, {added!r})\ndel _rf_switch, _rf_fixed\n"
        append(tree, path, "\n" + _import_line(tree, path, sibling) + HEAD + RIGHT[condition] + SWITCH_TAIL + call)
        built = True
    return built


def pytest_import(tree: str, fix: str, files: list[tuple[str, str]], **_: Any) -> bool:
    return imported(tree, fix, files, "pytest")


def count_import(tree: str, fix: str, files: list[tuple[str, str]], **_: Any) -> bool:
    return imported(tree, fix, files, "count")


BUILDERS = {"pytest-import": pytest_import, "count-import": count_import}
