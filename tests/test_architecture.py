"""The shape of the oracle_guard package: its folders are its layers, and imports only go down.

hooks/ is the source root; it holds one import package, oracle_guard, whose
subpackages are layers, lowest first:

- reporting: findings, codes, hints and output formats;
- repo: git, the change set, paths, interpreters;
- contract: the contract, the trust root, approvals, digests, the snapshot format;
- analysis: reading test code (parsing, check sites, meaning, same-test pairing, models);
- pytest_side: pytest itself (the plugin, its configuration and CI readers, collection, scratch runs);

- rules: the rule engines and arguments the hook ids share;
- probes: the run-time probes, one package each (replay with its canaries and ledger, flips, neighbours,
  mutation): its gate, its pytest-side runner and the plugin it loads into the project's pytest;
- hook_ids: one module per pre-commit hook id (registry.py lists them);
- commands: the `oracle-guard` subcommands.

Inside a layer, a capability of several modules is one folder (pytest_side/plugin, analysis/meaning...).

A module imports modules of its own layer or lower ones only; a hook imports no other hook; no two
modules import each other, directly or through others.  Every module is parsed (no import), so a lazy
import inside a function, or one under TYPE_CHECKING, counts as much as one at the top.
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

from oracle_guard.commands import cli
from oracle_guard.hook_ids import registry
from oracle_guard.repo import paths

PROJECT = Path(__file__).resolve().parent.parent
PACKAGE_DIR = PROJECT / "hooks" / "oracle_guard"
LAYERS = ("reporting", "repo", "contract", "analysis", "pytest_side", "rules", "probes", "hook_ids", "commands")

HOOKS = {
    "hook_ids.collection_snapshot",
    "hook_ids.contract_split",
    "hook_ids.fixture_lock_verify",
    "hook_ids.forbid_runtime_skip",
    "hook_ids.forbid_skip_marks",
    "hook_ids.forbid_test_aware_code",
    "hook_ids.oracle_shrink",
    "hook_ids.properties_monotonic",
    "hook_ids.quarantine_untouched",
    "hook_ids.replay",
}


def modules() -> list[str]:
    """Every module as LAYER.NAME (the package's own __init__ and __main__ as their bare names)."""
    found = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        relative = path.relative_to(PACKAGE_DIR).with_suffix("")
        found.append(".".join(relative.parts))
    return found


def layer_of(name: str) -> str | None:
    head, dot, _ = name.partition(".")
    return head if dot else None


def path_of(name: str) -> Path:
    return PACKAGE_DIR / (name.replace(".", "/") + ".py")


def tree_of(name: str) -> ast.Module:
    return ast.parse(path_of(name).read_text(encoding="utf-8"), str(path_of(name).relative_to(PROJECT)))


def imported(name: str) -> set[str]:
    """The oracle_guard modules NAME imports, anywhere in the file (also inside functions and TYPE_CHECKING)."""
    known = set(modules())
    found: set[str] = set()

    def add(dotted: str) -> None:
        relative = dotted.removeprefix("oracle_guard.").removeprefix("oracle_guard")
        if relative in known:
            found.add(relative)
        elif relative.partition(".")[0] in LAYERS and relative.partition(".")[2] == "":
            found.add(f"<a layer package: {relative}>")

    for node in ast.walk(tree_of(name)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("oracle_guard"):
                    add(alias.name)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "oracle_guard" or node.module.startswith("oracle_guard."):
                package = node.module.removeprefix("oracle_guard").lstrip(".")
                for alias in node.names:
                    submodule = f"{package}.{alias.name}" if package else alias.name
                    if submodule in known:
                        found.add(submodule)
                    elif package:
                        add(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level:  # `from . import x`: spelled out in this project
            found.add(f"<relative import in {name}>")
    return found - {name}


def test_every_module_lives_in_a_layer() -> None:
    loose = [m for m in modules() if layer_of(m) is None and m not in ("__init__", "__main__")]
    assert not loose, f"modules outside the layers: {loose}"
    assert {layer_of(m) for m in modules()} - {None} == set(LAYERS)


def test_every_hook_in_the_registry_is_a_hook_id_module() -> None:
    assert {h.module.removeprefix("oracle_guard.") for h in registry.HOOKS} == HOOKS


def test_every_command_of_the_cli_is_a_command_or_a_hook() -> None:
    targets = {target.partition(":")[0].removeprefix("oracle_guard.") for target, _ in cli.COMMANDS.values()}
    assert {layer_of(t) for t in targets - HOOKS} == {"commands"}


@pytest.mark.parametrize("name", [m for m in modules() if layer_of(m)])
def test_a_module_imports_its_own_layer_or_lower_ones_only(name: str) -> None:
    rank = LAYERS.index(layer_of(name) or "")
    wrong = sorted(m for m in imported(name) if m.startswith("<") or LAYERS.index(layer_of(m) or "") > rank)
    assert not wrong, f"{path_of(name).relative_to(PROJECT)} imports {wrong} from a layer above its own"


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_a_hook_imports_no_other_hook(name: str) -> None:
    wrong = imported(name) & HOOKS
    assert not wrong, f"{name} imports {sorted(wrong)}: move what they share to a lower layer"


def test_no_module_imports_itself_through_others() -> None:
    graph = {m: imported(m) for m in modules()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph.get(node, ()):
            if other not in graph:
                continue
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in graph:
        if module not in index:
            visit(module)
    assert not circles, f"modules that import each other: {circles}"


def test_the_checker_sees_imports_inside_functions_and_under_type_checking() -> None:
    # Not blind: report.py imports output.py only inside functions, switches/compare.py ChangeSet only for types.
    assert "reporting.output" in imported("reporting.report")
    assert "repo.changes" in imported("pytest_side.switches.compare")
    assert "hook_ids.registry" in imported("commands.cli")


# A module a person can hold: over this many lines, its docstring says why it is one module.
# Hook modules are held to less: what they share belongs in the layers below.
LONG_MODULE = 600
LONG_HOOK = 500


@pytest.mark.parametrize("name", modules())
def test_a_long_module_says_why_it_is_long(name: str) -> None:
    limit = LONG_HOOK if name in HOOKS else LONG_MODULE
    lines = path_of(name).read_text(encoding="utf-8").count("\n")
    doc = ast.get_docstring(tree_of(name)) or ""
    where = "move what it shares to core modules" if name in HOOKS else "split it by concern"
    assert lines <= limit or "Why one module:" in doc, (
        f"{name} has {lines} lines (over {limit}): {where}, "
        "or say in its docstring (`Why one module: ...`) why it stays whole"
    )


# -- one spelling per constant -------------------------------------------------------


def constants(name: str) -> Iterator[tuple[int, object]]:
    for node in ast.walk(tree_of(name)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
        elif isinstance(node, ast.Tuple) and all(isinstance(e, ast.Constant) for e in node.elts):
            yield node.lineno, tuple(e.value for e in node.elts)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", [m for m in modules() if m != "repo.paths"])
def test_path_constants_are_spelled_only_in_paths(name: str) -> None:
    spelled = {
        paths.DEFAULT_CONTRACT: "paths.DEFAULT_CONTRACT",
        paths.TEST_FILES_PATTERN: "paths.TEST_FILES (or TEST_FILES_PATTERN)",
        paths.PYTHON_SUFFIXES: "paths.PYTHON_SUFFIXES",
    }
    found = [f"{name}:{line}: use {spelled[value]}" for line, value in constants(name) if value in spelled]
    # Also inside a message: an f-string with the constant says the same and follows a change.
    found += [
        f"{name}:{line}: spell paths.DEFAULT_CONTRACT in an f-string"
        for line, value in constants(name)
        if isinstance(value, str) and paths.DEFAULT_CONTRACT in value and value != paths.DEFAULT_CONTRACT
    ]
    assert not found, found


def test_the_loader_and_the_command_line_share_the_default_contract() -> None:
    from oracle_guard.contract import contract
    from oracle_guard.rules import args

    assert contract.DEFAULT_PATH == args.DEFAULT_CONTRACT == paths.DEFAULT_CONTRACT


def test_the_pytest_entry_point_spells_the_default_contract_alike() -> None:
    from oracle_guard.pytest_side.plugin import entry

    assert entry.DEFAULT_CONTRACT == paths.DEFAULT_CONTRACT


FILE_HOOKS = {h.id for h in registry.HOOKS if h.files}


def test_the_yaml_test_file_patterns_are_the_code_s() -> None:
    hooks = yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    patterns = {h["id"]: h.get("files") for h in hooks if h["id"] in FILE_HOOKS}
    assert patterns == dict.fromkeys(FILE_HOOKS, paths.TEST_FILES_PATTERN)


def test_the_project_guards_itself_with_the_setup_its_readme_recommends() -> None:
    # Our own config runs the one-process hook and replay at pre-push, from this checkout, with the
    # published hooks' settings; none of the single ids (the README recommends `oracle-guard`).
    published = {h["id"]: h for h in yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
    config = yaml.safe_load((PROJECT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    ours = {h["id"]: h for repo in config["repos"] for h in repo["hooks"]}
    assert set(ours) & set(published) == {"oracle-guard", "oracle-replay"}
    assert ours["oracle-guard"]["entry"] == "python -m oracle_guard hook"
    assert ours["oracle-replay"]["entry"] == "python -m oracle_guard replay"
    for hook_id in ("oracle-guard", "oracle-replay"):
        for key in ("pass_filenames", "always_run", "require_serial", "stages"):
            assert ours[hook_id][key] == published[hook_id][key], (hook_id, key)
    assert published["oracle-guard"]["entry"] == "oracle-guard hook"
    assert cli.COMMANDS["replay"][0] == registry.BY_ID["oracle-replay"].main  # `oracle-guard replay` is the hook


# -- packaging and -OO -----------------------------------------------------------------


# What the wheel ships (every file of the package) is tests/test_packaging.py's.


@pytest.mark.slow
@pytest.mark.parametrize("command", ["", *cli.COMMANDS, *cli.HOOKS])
def test_help_works_without_docstrings(command: str, tmp_path: Path) -> None:
    # python -OO drops docstrings: a module's __doc__ is None, and --help must not crash on it.
    argv = [sys.executable, "-OO", "-m", "oracle_guard.commands.cli", *([command] if command else []), "--help"]
    env = {**os.environ, "PYTHONPATH": str(PROJECT), "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "usage:" in proc.stdout and not proc.stderr, proc.stderr
