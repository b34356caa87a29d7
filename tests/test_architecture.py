"""The shape of hooks/: commands -> hooks -> core, never hook -> hook; each constant spelled once.

Every module of hooks/ is parsed (no import, so a lazy import inside a
function counts as much as one at the top).  A module is one of:

- a hook: what hooks/registry.py lists, one check(ctx) per pre-commit hook id;
- a command: what the `oracle-guard` subcommands run (cli, check, init, ...);
- core: everything else, shared by hooks and commands.

A hook imports core only; core imports core only; commands import anything.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from hooks import cli, paths, registry

PROJECT = Path(__file__).resolve().parent.parent
HOOKS_DIR = PROJECT / "hooks"

HOOKS = {
    "collection_snapshot",
    "contract_split",
    "fixture_lock_verify",
    "forbid_runtime_skip",
    "forbid_skip_marks",
    "oracle_shrink",
    "properties_monotonic",
    "quarantine_untouched",
    "replay",
}
COMMANDS = {
    "__main__",  # python -m hooks
    "cli",  # oracle-guard
    "check",  # oracle-guard check
    "one_hook",  # oracle-guard hook (the one-process pre-commit hook)
    "runner",  # runs the registry's hooks for check and one_hook
    "init_contract",  # oracle-guard init, lock
    "approve",  # oracle-guard approve
    "quarantine_run",  # oracle-guard quarantine run
    "guard",  # oracle-guard guard
    "demo",  # oracle-guard demo
}

# Temporary: modules being split by other work of issue 8; each entry names what is left to move.
NOT_YET: dict[str, set[str]] = {}
# Temporary: files still spelling a constant of hooks/paths.py themselves (being edited elsewhere).
CONSTANTS_NOT_YET: set[str] = set()


def modules() -> list[str]:
    return sorted(p.stem for p in HOOKS_DIR.glob("*.py"))


def tree_of(name: str) -> ast.Module:
    return ast.parse((HOOKS_DIR / f"{name}.py").read_text(encoding="utf-8"), f"hooks/{name}.py")


def imported(name: str) -> set[str]:
    """The hooks modules NAME imports, anywhere in the file (also inside functions and TYPE_CHECKING)."""
    known = set(modules())
    found: set[str] = set()
    for node in ast.walk(tree_of(name)):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("hooks."))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "hooks":
                found.update(a.name for a in node.names if a.name in known)
            elif node.module.startswith("hooks."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.ImportFrom) and node.level:  # `from . import x`: spelled out in this project
            found.add(f"<relative import in {name}>")
    return found - {name}


def test_every_hook_in_the_registry_is_classified_as_a_hook() -> None:
    assert {h.module.removeprefix("hooks.") for h in registry.HOOKS} == HOOKS


def test_every_command_of_the_cli_is_classified_as_a_command() -> None:
    targets = {target.partition(":")[0].removeprefix("hooks.") for target, _ in cli.COMMANDS.values()}
    assert targets - HOOKS <= COMMANDS
    assert HOOKS.isdisjoint(COMMANDS) and (HOOKS | COMMANDS) <= set(modules())


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_a_hook_imports_core_modules_only(name: str) -> None:
    wrong = imported(name) & (HOOKS | COMMANDS)
    assert not wrong, f"hooks/{name}.py imports {sorted(wrong)}: move what they share to a core module"


@pytest.mark.parametrize("name", [m for m in modules() if m not in HOOKS | COMMANDS])
def test_a_core_module_imports_no_hook_and_no_command(name: str) -> None:
    wrong = imported(name) & (HOOKS | COMMANDS) - NOT_YET.get(name, set())
    assert not wrong, f"core module hooks/{name}.py imports {sorted(wrong)}"


def test_the_exemptions_are_still_needed() -> None:
    for name, allowed in NOT_YET.items():
        assert allowed <= imported(name), f"{name}: drop {sorted(allowed - imported(name))} from NOT_YET"


# A hook module a person can hold: over this many lines, its docstring says why it is one module.
LONG_HOOK = 500


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_a_long_hook_module_says_why_it_is_long(name: str) -> None:
    lines = (HOOKS_DIR / f"{name}.py").read_text(encoding="utf-8").count("\n")
    doc = ast.get_docstring(tree_of(name)) or ""
    assert lines <= LONG_HOOK or "Why one module:" in doc, (
        f"hooks/{name}.py has {lines} lines: move what it shares to core modules, "
        "or say in its docstring (`Why one module: ...`) why it stays whole"
    )


# -- one spelling per constant -------------------------------------------------------


def constants(name: str) -> Iterator[tuple[int, object]]:
    for node in ast.walk(tree_of(name)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
        elif isinstance(node, ast.Tuple) and all(isinstance(e, ast.Constant) for e in node.elts):
            yield node.lineno, tuple(e.value for e in node.elts)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", [m for m in modules() if m != "paths" and m not in CONSTANTS_NOT_YET])
def test_path_constants_are_spelled_only_in_paths(name: str) -> None:
    spelled = {
        paths.DEFAULT_CONTRACT: "paths.DEFAULT_CONTRACT",
        paths.TEST_FILES_PATTERN: "paths.TEST_FILES (or TEST_FILES_PATTERN)",
        paths.PYTHON_SUFFIXES: "paths.PYTHON_SUFFIXES",
    }
    found = [f"hooks/{name}.py:{line}: use {spelled[value]}" for line, value in constants(name) if value in spelled]
    # Also inside a message: an f-string with the constant says the same and follows a change.
    found += [
        f"hooks/{name}.py:{line}: spell paths.DEFAULT_CONTRACT in an f-string"
        for line, value in constants(name)
        if isinstance(value, str) and paths.DEFAULT_CONTRACT in value and value != paths.DEFAULT_CONTRACT
    ]
    assert not found, found


def test_the_loader_and_the_command_line_share_the_default_contract() -> None:
    from hooks import args, contract

    assert contract.DEFAULT_PATH == args.DEFAULT_CONTRACT == paths.DEFAULT_CONTRACT


def test_the_pytest_entry_point_spells_the_default_contract_alike() -> None:
    # oracle_guard_pytest.py may not import the hooks package (a project's own hooks/ would shadow it).
    import oracle_guard_pytest

    assert oracle_guard_pytest.DEFAULT_CONTRACT == paths.DEFAULT_CONTRACT


FILE_HOOKS = {h.id for h in registry.HOOKS if h.files}


@pytest.mark.parametrize("manifest", [".pre-commit-hooks.yaml", ".pre-commit-config.yaml"])
def test_the_yaml_test_file_patterns_are_the_code_s(manifest: str) -> None:
    data = yaml.safe_load((PROJECT / manifest).read_text(encoding="utf-8"))
    hooks = data if isinstance(data, list) else [h for repo in data["repos"] for h in repo["hooks"]]
    patterns = {h["id"]: h.get("files") for h in hooks if h["id"] in FILE_HOOKS}
    assert patterns == dict.fromkeys(FILE_HOOKS, paths.TEST_FILES_PATTERN)


# -- packaging and -OO -----------------------------------------------------------------


def test_every_package_data_pattern_matches_a_file() -> None:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib
    config = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))
    for package, patterns in config["tool"]["setuptools"]["package-data"].items():
        for pattern in patterns:
            assert list((PROJECT / package).glob(pattern)), f"package-data {package}: {pattern} matches nothing"


@pytest.mark.slow
@pytest.mark.parametrize("command", ["", *cli.COMMANDS, *cli.HOOKS])
def test_help_works_without_docstrings(command: str, tmp_path: Path) -> None:
    # python -OO drops docstrings: a module's __doc__ is None, and --help must not crash on it.
    argv = [sys.executable, "-OO", "-m", "hooks.cli", *([command] if command else []), "--help"]
    env = {**os.environ, "PYTHONPATH": str(PROJECT), "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "usage:" in proc.stdout and not proc.stderr, proc.stderr
