"""What runs before the tests do: entry points, start-up files and modules that shadow others.

Read from packaging files (pyproject.toml, setup.cfg, setup.py) without
importing or running them: ``[project.scripts]``/``console_scripts`` name the
entry points whose ``sys.exit`` is honest; ``pytest11`` names the plugins
pytest loads from an installed distribution.  A new ``sitecustomize.py``,
``usercustomize.py`` or ``.pth`` file runs in every interpreter, and a new
top-level module named like the standard library's (or like a distribution
the tests import) replaces it: all of them change how Python or pytest
start, not what the code under test computes.
"""

from __future__ import annotations

import ast
import re
import sys

# Files the interpreter itself runs at start-up, wherever they sit on sys.path.
STARTUP_NAMES = frozenset({"sitecustomize.py", "usercustomize.py"})
# Folders that are an import root in a checkout: the top, and the src layout's.
IMPORT_ROOTS = ("", "src/")

if sys.version_info >= (3, 10):
    STDLIB = frozenset(sys.stdlib_module_names)
else:  # pragma: no cover - 3.9 has no list: the modules a test run imports, and the common ones
    STDLIB = frozenset(
        "abc argparse ast asyncio atexit base64 bisect builtins calendar codecs collections contextlib copy "
        "csv dataclasses datetime decimal difflib enum errno fnmatch fractions functools gc getpass glob "
        "gzip hashlib heapq hmac html http importlib inspect io itertools json linecache locale logging "
        "math mmap numbers operator os pathlib pickle pkgutil platform pprint queue random re secrets "
        "select shlex shutil signal site socket sqlite3 stat statistics string struct subprocess sys "
        "sysconfig tempfile textwrap threading time timeit tokenize traceback types typing unittest "
        "urllib uuid warnings weakref zipfile zlib".split()
    )


def top_module(path: str) -> str | None:
    """The top-level module name PATH defines at an import root (``src/json.py`` -> ``json``), else None."""
    for root in IMPORT_ROOTS:
        if not path.startswith(root):
            continue
        rest = path[len(root) :]
        if "/" not in rest and rest.endswith(".py"):
            return rest[:-3]
        head, _, tail = rest.partition("/")
        if tail == "__init__.py":
            return head
    return None


def startup_file(path: str) -> str | None:
    """Why PATH changes how Python starts (sitecustomize, .pth, a stdlib shadow), or None."""
    name = path.rpartition("/")[2]
    if name in STARTUP_NAMES:
        return f"{name} runs in every Python process that has its folder on sys.path"
    if name.endswith(".pth") and "/" not in path.strip("/").removeprefix("src/"):
        return "a .pth file runs its import lines when site-packages (or this folder) is set up"
    module = top_module(path)
    if module and module in STDLIB and module not in ("__main__", "__init__"):
        return f"it shadows the standard library's `{module}` for every import from this folder"
    return None


# -- entry points ---------------------------------------------------------------------

_TARGET = re.compile(r"^\s*([\w.-]+)\s*=\s*([\w.]+)(?::([\w.]+))?")


def _pairs(lines: list[str]) -> dict[str, str]:
    """``name = module:attr`` lines -> {name: "module:attr"}."""
    found = {}
    for line in lines:
        match = _TARGET.match(line)
        if match:
            found[match.group(1)] = match.group(2) + (f":{match.group(3)}" if match.group(3) else "")
    return found


def entry_points(name: str, data: bytes | None, group: str) -> dict[str, str]:
    """The GROUP entry points (``console_scripts``, ``pytest11``) a packaging file declares."""
    if data is None:
        return {}
    text = data.decode("utf-8", "replace")
    if name == "pyproject.toml":
        return _from_pyproject(text, group)
    if name == "setup.cfg":
        return _from_setup_cfg(text, group)
    if name == "setup.py":
        return _from_setup_py(text, group)
    return {}


def _from_pyproject(text: str, group: str) -> dict[str, str]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - 3.9/3.10
        import tomli as tomllib
    try:
        doc = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return {}
    project: dict[str, object] = doc["project"] if isinstance(doc.get("project"), dict) else {}
    tables: list[object] = []
    if group == "console_scripts":
        tables += [project.get("scripts"), project.get("gui-scripts")]
        tool = doc.get("tool")
        poetry = tool.get("poetry") if isinstance(tool, dict) else None
        tables.append(poetry.get("scripts") if isinstance(poetry, dict) else None)
    groups = project.get("entry-points")
    if isinstance(groups, dict):
        tables.append(groups.get(group))
    found: dict[str, str] = {}
    for table in tables:
        if isinstance(table, dict):
            found.update(_pairs([f"{k} = {v}" for k, v in table.items() if isinstance(v, str)]))
    return found


def _from_setup_cfg(text: str, group: str) -> dict[str, str]:
    import configparser  # only when a setup.cfg is read

    parser = configparser.RawConfigParser()
    try:
        parser.read_string(text)
        value = parser.get("options.entry_points", group, fallback="")
    except configparser.Error:
        return {}
    return _pairs(value.splitlines())


def _from_setup_py(text: str, group: str) -> dict[str, str]:
    """Strings under a GROUP key of any dict literal in setup.py (``entry_points={"pytest11": [...]}``)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    lines: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == group:
                    lines += [
                        c.value for c in ast.walk(value) if isinstance(c, ast.Constant) and isinstance(c.value, str)
                    ]
    return _pairs(lines)


PACKAGING = ("pyproject.toml", "setup.cfg", "setup.py")


def module_files(target: str) -> tuple[str, ...]:
    """The repository files an entry point's module may live in (``pkg.cli:main`` -> pkg/cli.py, ...)."""
    module = target.partition(":")[0].replace(".", "/")
    return tuple(f"{root}{module}{tail}" for root in IMPORT_ROOTS for tail in (".py", "/__init__.py"))
