"""Static half of collection-snapshot: pytest configuration that hides tests.

Tests vanish without a suspicious line in any test file when configuration
changes: ``addopts = --deselect ...``, a narrowed ``testpaths``, a new
``norecursedirs`` entry, ``collect_ignore`` in a conftest, a CI workflow that
now runs ``pytest -k "not slow"``.  This module compares those settings with
the base revision, needing neither pytest nor a snapshot, so it runs
everywhere (pre-commit.ci included).  The dynamic half (what pytest really
collects) lives in collection_snapshot.py.
"""

from __future__ import annotations

import ast
import re
import shlex
from typing import Any, Callable

from oracle_guard.analysis.pysource import Module, SourceError
from oracle_guard.pytest_side.config.settings import Settings as Settings
from oracle_guard.pytest_side.config.settings import load_toml as _load_toml
from oracle_guard.pytest_side.runners import files as ci
from oracle_guard.pytest_side.tamper import compare as pytest_tamper
from oracle_guard.repo import changes
from oracle_guard.repo.paths import DEFAULT_CONTRACT
from oracle_guard.reporting.report import Finding, UsageError, notice

INI_FILES = {"pytest.ini": "pytest", ".pytest.ini": "pytest", "tox.ini": "pytest", "setup.cfg": "tool:pytest"}
PYPROJECT = "pyproject.toml"
# Files whose pytest command lines count (CI and task runners).
RUNNER_FILES = re.compile(
    r"^(\.github/workflows/[^/]+\.ya?ml|\.gitlab-ci\.yml|\.circleci/config\.yml|azure-pipelines\.yml|noxfile\.py|Makefile|tox\.ini|\.pre-commit-config\.yaml|[^/]*\.sh|scripts/[^/]+)$"
)
DEFAULTS = {
    "python_files": ["test_*.py", "*_test.py"],
    "python_classes": ["Test"],
    "python_functions": ["test"],
    "norecursedirs": ["*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}"],
}
# addopts / command-line options that take a value and remove tests from the run.
NARROWING_OPTIONS = {
    "--deselect": "deselects",
    "--ignore": "ignores",
    "--ignore-glob": "ignores",
    "-k": "selects only tests matching",
    "-m": "selects only tests marked",
    "--confcutdir": "limits conftest loading to",
    "-p": "changes plugins:",
    "--hypothesis-profile": "loads the Hypothesis profile",  # fewer examples, in one line
    "--deselect-from-file": "deselects the tests listed in",
    "--select-from-file": "selects only the tests listed in",
    "--quarantine": "xfails the tests listed in",
}
NARROWING_FLAGS = {
    "--continue-on-collection-errors": "lets collection errors pass",
    "--lf": "runs only the last failures",
    "--last-failed": "runs only the last failures",
    "--sw": "runs stepwise",
    "--stepwise": "runs stepwise",
    "--stepwise-skip": "runs stepwise",
    "--co": "only collects",
    "--collect-only": "only collects",
    "--no-summary": None,
    "--sw-skip": "runs stepwise",
    "--sw-reset": "runs stepwise",
    "--stepwise-reset": "runs stepwise",
    "--setup-only": "runs no test bodies",
    "--setup-plan": "runs no tests",
    "--picked": "runs only tests of changed files",
    "--testmon": "runs only tests affected by changes",
    "--testmon-forceselect": "runs only tests affected by changes",
}
PYTEST_TOML = ("pytest.toml", ".pytest.toml")  # pytest 9: first in its search order, a `[pytest]` table
CONFIG_FILES = set(INI_FILES) | {PYPROJECT} | set(PYTEST_TOML)
# `-p no:NAME` for these changes output or speed, never which tests count.
HARMLESS_PLUGINS = {
    "cacheprovider",
    "randomly",
    "random_order",
    "xdist",
    "cov",
    "sugar",
    "html",
    "metadata",
    "instafail",
    "pretty",
    "rich",
}


def _split(value: str) -> list[str]:
    try:
        return shlex.split(value, comments=False)
    except ValueError:
        return value.split()


def _from_ini(path: str, text: str) -> Settings | None:
    # iniconfig is pytest's own reader: key case, duplicates and `#` in values as pytest sees them.
    section = INI_FILES[path.rsplit("/", 1)[-1]]
    sections = ci.ini_sections(path, text)
    if section not in sections:
        return None
    settings = Settings(path)
    for key, _, value in sections[section]:
        if key == "addopts":
            values = _split(value)
        elif key == "filterwarnings":  # one filter a line; filters hold spaces
            values = [v.strip() for v in value.strip().splitlines() if v.strip()]
        else:
            values = value.split()
        settings.set(key, values, text)
    return settings


def _strict_xfail(settings: Settings) -> bool:
    """xfail_strict, or pytest 9's `strict` that includes it unless xfail_strict says otherwise."""
    explicit = _effective(settings, "xfail_strict")
    return explicit == ["true"] if explicit else _effective(settings, "strict") == ["true"]


def _from_pyproject(
    path: str, text: str, table_of: Callable[[dict[str, Any]], dict[str, Any]] | None = None
) -> Settings | None:
    try:
        data = _load_toml(text)
    except Exception as exc:  # tomllib.TOMLDecodeError and friends
        raise UsageError(f"{path}: invalid TOML: {exc}") from None
    tool = table_of(data) if table_of else data.get("tool", {}).get("pytest", {})
    table = tool.get("ini_options", tool if tool and "ini_options" not in tool else {})
    if not isinstance(table, dict) or not table:
        return None
    settings = Settings(path)
    for key, value in table.items():
        if isinstance(value, str):
            values = _split(value) if key == "addopts" else ([value] if key == "filterwarnings" else value.split())
        elif isinstance(value, list):
            values = [str(v) for v in value]
            if key == "addopts":
                values = [t for v in values for t in _split(v)]
        else:
            values = [str(value).lower() if isinstance(value, bool) else str(value)]
        settings.set(key, values, text)
    return settings


def settings_of(blobs: dict[str, bytes | None]) -> Settings:
    """pytest's pick: the first of pytest.toml, pytest.ini, pyproject.toml, tox.ini, setup.cfg that configures it."""
    for name in (*PYTEST_TOML, "pytest.ini", ".pytest.ini", PYPROJECT, "tox.ini", "setup.cfg"):
        data = blobs.get(name)
        if data is None:
            continue
        text = data.decode("utf-8", "replace")
        if name in PYTEST_TOML:
            found = _from_pyproject(name, text, table_of=lambda doc: doc.get("pytest", {}))
        else:
            found = _from_pyproject(name, text) if name == PYPROJECT else _from_ini(name, text)
        if found is not None or name in ("pytest.ini", ".pytest.ini", *PYTEST_TOML):
            return found or Settings(name)
    return Settings()


def _unclustered(tokens: list[str]) -> list[str]:
    """`-qk EXPR` -> `-q -k EXPR`, `-xmslow` -> `-x -mslow`: short flags written together."""
    out: list[str] = []
    for token in tokens:
        if (
            token.startswith("-")
            and not token.startswith("--")
            and len(token) > 2
            and token[1] not in "kmp"
            and token[1:2].isalpha()
        ):
            for at, letter in enumerate(token[1:], 1):
                if letter in "kmpcoWrnP":  # the rest of the token is this option's value
                    out.append(f"-{letter}{token[at + 1 :]}")
                    break
                out.append(f"-{letter}")
        else:
            out.append(token)
    return out


def _options(tokens: list[str]) -> list[tuple[str, str]]:
    """(option, value) pairs of narrowing options and flags in a token list."""
    found: list[tuple[str, str]] = []
    tokens = _unclustered(tokens)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        name, eq, value = token.partition("=")
        if name in NARROWING_OPTIONS:
            if not eq and i + 1 < len(tokens):
                value = tokens[i + 1]
                i += 1
            found.append((name, value))
        elif token.startswith("-k") and len(token) > 2 and not token.startswith("--"):
            found.append(("-k", token[2:]))
        elif token.startswith("-m") and len(token) > 2 and not token.startswith("--"):
            found.append(("-m", token[2:]))
        elif token.startswith("-p") and len(token) > 2 and not token.startswith("--"):
            found.append(("-p", token[2:]))
        elif name in NARROWING_FLAGS and NARROWING_FLAGS[name]:
            found.append((name, ""))
        i += 1
    # `-p no:` of the gate itself is pytest_tamper's OG870, not a second finding here.
    return [
        (o, v)
        for o, v in found
        if not (
            o == "-p"
            and (not v.startswith("no:") or v[3:] in HARMLESS_PLUGINS or re.search(pytest_tamper.GATE, v, re.I))
        )
    ]


def _effective(settings: Settings, key: str) -> list[str]:
    return settings.ini.get(key, DEFAULTS.get(key, []))


def _finding(settings: Settings, key: str, code: str, message: str) -> Finding:
    path = settings.source or "pytest configuration"
    line = settings.lines.get(key, 1)
    return Finding(path, line, 1, code, message)


def compare_settings(base: Settings, new: Settings) -> list[Finding]:
    findings: list[Finding] = []
    base_opts = set(_options(base.addopts))
    for option, value in _options(new.addopts):
        if (option, value) in base_opts:
            continue
        if option in ("-k", "-m") and not value.strip():
            continue
        what = NARROWING_OPTIONS.get(option) or NARROWING_FLAGS.get(option) or "narrows the run"
        shown = f" {value}" if value else ""
        findings.append(
            _finding(new, "addopts", "OG851", f"addopts now {what}{shown} (`{option}{shown}`): tests leave the run")
        )
    for flag in ("--doctest-modules",):
        if flag in base.addopts and flag not in new.addopts:
            findings.append(_finding(new, "addopts", "OG851", f"addopts lost `{flag}`: doctests leave the run"))

    base_paths, new_paths = base.ini.get("testpaths"), new.ini.get("testpaths")
    if new_paths is not None:
        lost = [p for p in (base_paths or []) if p not in new_paths]
        if base_paths is None:
            findings.append(
                _finding(new, "testpaths", "OG852", f"testpaths now limits collection to {' '.join(new_paths)}")
            )
        elif lost:
            findings.append(_finding(new, "testpaths", "OG852", f"testpaths lost {' '.join(lost)}"))
    for key in ("python_files", "python_classes", "python_functions"):
        lost = [p for p in _effective(base, key) if p not in _effective(new, key)]
        if lost:
            findings.append(
                _finding(
                    new, key, "OG853", f"{key} no longer matches {' '.join(lost)}: tests named so stop being collected"
                )
            )
    added = [p for p in _effective(new, "norecursedirs") if p not in _effective(base, "norecursedirs")]
    if added:
        findings.append(_finding(new, "norecursedirs", "OG854", f"norecursedirs now skips {' '.join(added)}"))
    if _strict_xfail(base) and not _strict_xfail(new):
        key = "xfail_strict" if new.ini.get("xfail_strict") or not new.ini.get("strict") else "strict"
        findings.append(
            _finding(new, key, "OG855", f"{key} was turned off: unexpectedly passing xfail tests no longer fail")
        )
    base_filters, new_filters = _effective(base, "filterwarnings"), _effective(new, "filterwarnings")
    lost_errors = [f for f in base_filters if f.startswith("error") and f not in new_filters]
    if lost_errors:
        findings.append(
            _finding(
                new,
                "filterwarnings",
                "OG856",
                f"filterwarnings lost {', '.join(lost_errors)}: those warnings no longer fail tests",
            )
        )
    if any(f.startswith("error") for f in base_filters):
        new_ignores = [f for f in new_filters if f.startswith("ignore") and f not in base_filters]
        if new_ignores:
            findings.append(
                _finding(
                    new,
                    "filterwarnings",
                    "OG856",
                    f"filterwarnings now ignores {', '.join(new_ignores)} where warnings were errors",
                )
            )
    return findings


# -- conftest.py ---------------------------------------------------------------

# Hooks whose only job is to drop tests.  A new pytest_collection_modifyitems is
# not one (it often just orders or labels items): what it removes is reported
# below, and a skip marker it adds is forbid-skip-marks' business.
COLLECT_HOOKS = {"pytest_ignore_collect": "decides to ignore paths", "pytest_deselected": "deselects items"}


def _conftest_facts(module: Module) -> dict[str, list[tuple[str, ast.AST]]]:
    """collect_ignore entries and collection hooks (with their item-removing statements)."""
    facts: dict[str, list[tuple[str, ast.AST]]] = {"ignore": [], "hooks": [], "removals": []}
    for node in ast.walk(module.tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if (
                    isinstance(target, ast.Name)
                    and target.id in ("collect_ignore", "collect_ignore_glob")
                    and node.value is not None
                ):
                    items = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple, ast.Set)) else [node.value]
                    facts["ignore"] += [(f"{target.id} {ast.unparse(i)}", i) for i in items]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if (
                isinstance(owner, ast.Name)
                and owner.id in ("collect_ignore", "collect_ignore_glob")
                and node.func.attr in ("append", "extend", "insert")
            ):
                facts["ignore"] += [(f"{owner.id} {ast.unparse(a)}", a) for a in node.args]
            if node.func.attr in ("remove", "pop", "clear") and isinstance(owner, ast.Name) and owner.id == "items":
                facts["removals"].append(
                    (f"items.{node.func.attr}({', '.join(ast.unparse(a) for a in node.args)})", node)
                )
            if node.func.attr == "pytest_deselected":
                facts["removals"].append((f"deselect {ast.unparse(node)}", node))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in COLLECT_HOOKS:
            facts["hooks"].append((node.name, node))
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if (
                    isinstance(target, ast.Subscript)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "items"
                ):
                    facts["removals"].append(("del items[...]", node))
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if (
                    isinstance(target, ast.Subscript)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "items"
                ):
                    facts["removals"].append((f"items[...] = {ast.unparse(node.value)}", node))
    return facts


def compare_conftest(
    path: str,
    base: bytes | None,
    new: bytes,
    change_set: changes.ChangeSet | None = None,
    contract: str = DEFAULT_CONTRACT,
) -> list[Finding]:
    try:
        new_module = Module.from_source(path, new)
    except SourceError as exc:
        return [exc.finding(path)]
    if change_set is not None:
        new_module.reader = lambda p: change_set.read_new([p])[p]
    try:
        base_facts = _conftest_facts(Module.from_source(path, base)) if base is not None else None
    except SourceError:
        base_facts = None
    new_facts = _conftest_facts(new_module)
    findings = []
    for kind, code, what in (
        ("ignore", "OG857", "new collection ignore"),
        ("hooks", "OG858", "new collection hook"),
        ("removals", "OG858", "new removal of collected items"),
    ):
        known = [text for text, _ in (base_facts or {}).get(kind, [])]
        for text, node in new_facts[kind]:
            if text in known:
                known.remove(text)
                continue
            detail = COLLECT_HOOKS.get(text, "")
            message = f"{what} `{text}`{' (' + detail + ')' if detail else ''}: tests may leave the run"
            env = _environment_only(new_module, node) if kind == "ignore" else None
            if env:
                from oracle_guard.analysis import envcondition

                if change_set is not None and envcondition.snapshot_committed(change_set, contract):
                    finding = new_module.finding(node, code, message)
                    notice(
                        f"{finding.path}:{finding.line}:{finding.col}: {what} `{text}` under a condition that depends only on {envcondition.describe(env)}: "
                        "left to collection-snapshot (OG801 where it ignores tests of the snapshot)"
                    )
                    continue
                message += f" (its condition depends only on {envcondition.describe(env)}: commit a collection snapshot and collection-snapshot judges it where the tests run)"
            findings.append(new_module.finding(node, code, message))
    return findings


def _environment_only(module: Module, node: ast.AST) -> set[str] | None:
    """What of the environment the `if`s around a collect_ignore entry depend on (None: not only that)."""
    from oracle_guard.analysis import envcondition  # only for a new collect_ignore entry

    tests = envcondition.enclosing_conditions(module.tree, node)
    if not tests:
        return None
    found: set[str] = set()
    for test in tests:
        kinds = envcondition.classify(test, module)
        if kinds is None:
            return None
        found |= kinds
    return found


# -- CI and task-runner command lines --------------------------------------------


def named_paths(change_set: changes.ChangeSet) -> list[str]:
    """The paths the base's CI and task-runner pytest commands name (a word that is a base file or folder, before
    any `::`); "." for one that names something the gate cannot read (a variable): it may be anything."""
    from oracle_guard.repo import git

    if not change_set.base:
        return ["."]
    listed = git.run("ls-tree", "-r", "-z", "--name-only", change_set.base).split(b"\0")
    names = [n.decode("utf-8", "replace") for n in listed if n]
    folders = {n.rsplit("/", i)[0] for n in names for i in range(1, n.count("/") + 1)}
    found: list[str] = []
    runners = [n for n in names if RUNNER_FILES.match(n)]
    for name, data in change_set.read_base(runners).items():
        for _, tokens in ci.read(name, (data or b"").decode("utf-8", "replace")).pytest_arguments():
            for token in tokens:
                word = token.split("::", 1)[0].rstrip("/")
                if word.startswith("-") or "=" in word:
                    continue
                if word in folders or word in names:
                    found.append(word)
                elif "$" in word or "{" in word and "posargs" not in word:
                    found.append(".")
    return found


def _command_options(text: str, python: bool, path: str = "") -> list[tuple[str, str, int]]:
    """Narrowing options of every pytest run in a runner file (commands and PYTEST_ADDOPTS)."""
    found = []
    name = path or ("noxfile.py" if python else "script.sh")
    for number, tokens in ci.read(name, text).pytest_arguments():
        for option, value in _options(tokens):
            found.append((option, value, number))
    return found


def compare_runner(path: str, base: bytes | None, new: bytes) -> list[Finding]:
    python = path.endswith(".py")
    known = [(o, v) for o, v, _ in _command_options((base or b"").decode("utf-8", "replace"), python, path)]
    findings = []
    for option, value, line in _command_options(new.decode("utf-8", "replace"), python, path):
        if (option, value) in known:
            known.remove((option, value))
            continue
        what = NARROWING_OPTIONS.get(option) or NARROWING_FLAGS.get(option) or "narrows the run"
        shown = f" {value}" if value else ""
        findings.append(
            Finding(
                path, line, 1, "OG859", f"pytest command now {what}{shown} (`{option}{shown}`): tests leave the run"
            )
        )
    return findings


def check(change_set: changes.ChangeSet, contract_path: str = DEFAULT_CONTRACT) -> list[Finding]:
    """Configuration weakenings in the change, compared with the base (CONTRACT_PATH: its freeze ledger)."""
    from oracle_guard.pytest_side.switches import compare as switches

    touched = set(change_set.changed_paths)
    config_changed = bool(touched & CONFIG_FILES) or any(p in CONFIG_FILES for p in change_set.deleted)
    coverage_changed = ".coveragerc" in touched or ".coveragerc" in change_set.deleted
    conftests = [p for p in touched if p.rsplit("/", 1)[-1] == "conftest.py"]
    runners = [p for p in touched if RUNNER_FILES.match(p)]
    from oracle_guard.pytest_side.config import doctests as doctest_changes

    findings: list[Finding] = switches.pragmas(change_set, change_set.read_new, change_set.read_base)
    findings += doctest_changes.check(change_set, settings_of, CONFIG_FILES, lambda: named_paths(change_set))  # OG316
    findings += switches.code_switches(change_set, change_set.read_new, change_set.read_base)
    if not (config_changed or conftests or runners or coverage_changed):
        return findings + pytest_tamper.check(change_set, _file_addopts, _file_settings)  # OG870-OG876
    wanted = sorted(CONFIG_FILES) + [".coveragerc"] + conftests + runners
    new = change_set.read_new(wanted)
    base = change_set.read_base([change_set.old_path(p) or p for p in wanted])
    # Switches of the run-time gate and outcome tampering (OG870-OG876), from the same reads.
    findings += pytest_tamper.check(change_set, _file_addopts, _file_settings, new, base)
    base_settings, new_settings = settings_of(base), settings_of(new)
    if config_changed:
        findings += compare_settings(base_settings, new_settings)
    for path in conftests:
        data = new.get(path)
        if data is not None:
            findings += compare_conftest(
                path, base.get(change_set.old_path(path) or ""), data, change_set, contract_path
            )
            from oracle_guard.pytest_side import fixture_patches  # here: it brings the check models along

            findings += fixture_patches.compare(path, base.get(change_set.old_path(path) or ""), data, change_set)
    for path in runners:
        data = new.get(path)
        if data is not None and path not in CONFIG_FILES:
            findings += compare_runner(path, base.get(change_set.old_path(path) or ""), data)
    tox = new.get("tox.ini")
    if "tox.ini" in runners and tox is not None:
        findings += compare_runner("tox.ini", base.get("tox.ini"), tox)
    # Reruns, regeneration, coverage floors, partial runs, stripped asserts (oracle_guard/pytest_side/switches/compare.py).
    findings += switches.check(change_set, base, new, base_settings, new_settings, runners, contract_path)
    return findings


def _file_settings(path: str, data: bytes) -> dict[str, list[str]] | None:
    """All pytest settings of one configuration file (any folder); None: it does not configure pytest."""
    text, name = data.decode("utf-8", "replace"), path.rsplit("/", 1)[-1]
    if name in PYTEST_TOML:
        found = _from_pyproject(path, text, table_of=lambda doc: doc.get("pytest", {}))
    else:
        found = _from_pyproject(path, text) if name == PYPROJECT else _from_ini(path, text)
    if found is None:
        return None
    return {**found.ini, **({"addopts": found.addopts} if found.addopts else {})}


def _file_addopts(path: str, data: bytes) -> list[str] | None:
    found = _file_settings(path, data)
    return None if found is None else found.get("addopts", [])
