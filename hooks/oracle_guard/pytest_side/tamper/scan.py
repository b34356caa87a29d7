"""Gate switches and pytest options in the text of config, CI and task-runner files (OG870, OG871).

Which changed files are scanned (names and suffixes, set membership only), and
what their lines say: an option, variable or setting that switches the gate off
or blinds it, what switches it on, and pytest options that change what pytest
reads or loads, on command lines, in ``PYTEST_ADDOPTS``/``PYTEST_PLUGINS`` and in
addopts, plus what the CI/task-runner reader finds beyond the line scan.
Part of pytest_tamper.py's check, which compares these tokens with the base.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections import Counter
from collections.abc import Iterator
from typing import NamedTuple

# Non-Python files whose text can set pytest options or its environment (and noxfile.py).
SCANNED_NAMES = {
    "pytest.ini",
    ".pytest.ini",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
    "pytest.toml",
    ".pytest.toml",
    "noxfile.py",
    "Makefile",
    "GNUmakefile",
    "makefile",
    "justfile",
    "Justfile",
    "Taskfile.yml",
    "Taskfile.yaml",
    ".envrc",
}
SCANNED_SUFFIXES = (
    ".mk",
    ".sh",
    ".bash",
    ".zsh",
    ".ps1",
    ".bat",
    ".cmd",
    ".yml",
    ".yaml",
    ".toml",
    ".cfg",
    ".ini",
    ".env",
    ".dockerfile",
)


def scanned(path: str) -> bool:
    """Set membership, not a regex: this runs for every changed path of every commit."""
    name = posixpath.basename(path)
    return (
        name in SCANNED_NAMES
        or name.endswith(SCANNED_SUFFIXES)
        or name.startswith(("Dockerfile", ".env"))
        or (path.startswith("scripts/") and path.count("/") == 1)
    )


CONFIG_NAMES = {
    "pytest.toml": None,
    ".pytest.toml": None,
    "pytest.ini": "pytest",
    ".pytest.ini": "pytest",
    "tox.ini": "pytest",
    "setup.cfg": "tool:pytest",
    "pyproject.toml": None,
}

# -- option and token scan ------------------------------------------------------

GATE = r"oracle[-_.]?guard"
# Pattern strings, compiled through re's cache on first use: a commit that touches no scanned
# file compiles none of them.
_GATE_OFF = [
    ((r"--oracle-guard-allow-skips\b"), "`--oracle-guard-allow-skips` (new skips and xfails no longer fail the run)"),
    ((r"--oracle-guard-contract\b"), "`--oracle-guard-contract` (the gate reads another contract, or none)"),
    ((r"--oracle-guard-now\b"), "`--oracle-guard-now` (freeze expiry judged at a chosen time)"),
    ((r"(?i)no:\s*['\"]?[\w.-]*" + GATE), "`-p no:` of oracle-guard's plugin (the gate is not loaded)"),
    (
        (r"PYTEST_DISABLE_PLUGIN_AUTOLOAD['\"]?\s*[:=]"),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD (installed plugins, the gate among them, are not loaded)",
    ),
    (
        (r"--disable-plugin-autoload\b"),
        "`--disable-plugin-autoload` (installed plugins, the gate among them, are not loaded)",
    ),
]
# What switches the gate on where the contract alone would not (autoload off, no contract file).
_GATE_ON = [
    ((r"(?<![\w-])--oracle-guard(?![\w-])"), "`--oracle-guard`"),
    # The entry point module, by its name before and since the package moved (one entry: a rename is no loss).
    ((r"(?<!no:)(?<![\w.])(oracle_guard_pytest|oracle_guard\.pytest_side\.entry)\b"), "loading `oracle_guard_pytest`"),
]
# Information modes: pytest exits 0 and runs nothing (`--co` is pytest_config's OG851/OG859).
# Only in addopts: `pytest --version` is a common honest CI step (`--setup-only`/`--setup-plan` are OG851/OG859).
NO_RUN_FLAGS = {"--fixtures", "--funcargs", "--fixtures-per-test", "--markers", "--help", "-h", "--version", "-V"}
# pytest's own settings that decide what runs, for `-o KEY=VALUE`.
JUDGED_INI = {
    "addopts",
    "testpaths",
    "python_files",
    "python_classes",
    "python_functions",
    "norecursedirs",
    "xfail_strict",
    "strict",
    "filterwarnings",
    "required_plugins",
    "usefixtures",
    "empty_parameter_set_mark",
    "pythonpath",
    "confcutdir",
    "collect_imported_tests",
    "consider_namespace_packages",
    "doctest_optionflags",
    "strict_xfail",
}
_PYTEST_WORD = r"(?<![\w-])(py\.test|pytest)(?![\w-])"
_ADDOPTS_ENV = r"PYTEST_ADDOPTS['\"]?\s*[:=]\s*(.*)$"
_PLUGINS_ENV = r"PYTEST_PLUGINS['\"]?\s*[:=]\s*['\"]?([\w.,]+)"


class Token(NamedTuple):
    key: tuple[str, str]  # (kind, detail): compared as a multiset with the base
    message: str
    path: str
    line: int


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=False)
    except ValueError:
        return text.split()


def pytest_arg_tokens(tokens: list[str], addopts: bool = False) -> Iterator[tuple[str, str, str]]:
    """(kind, detail, message) for pytest options that change what pytest reads or loads."""
    i = 0
    while i < len(tokens):
        token = tokens[i].strip("'\",")
        name, eq, value = token.partition("=")

        def arg(eq: str = eq, value: str = value) -> str:
            nonlocal i
            if eq:
                return value
            if i + 1 < len(tokens):
                i += 1
                return tokens[i].strip("'\",")
            return ""

        if token == "--noconftest":
            yield "noconftest", "", "`--noconftest` (conftest files, their fixtures and checks, are not loaded)"
        elif token in NO_RUN_FLAGS and addopts:
            yield "no-run", token, f"`{token}` (pytest reports and exits 0 without running a test)"
        elif name in ("-c", "--config-file", "--inifile") or (
            token.startswith("-c") and len(token) > 2 and not token.startswith("--")
        ):
            shown = arg() if name in ("-c", "--config-file", "--inifile") else token[2:]
            yield (
                "config-file",
                shown,
                f"`-c {shown}` (pytest reads another configuration file; the one the gate compares is ignored)",
            )
        elif name == "--rootdir":
            shown = arg()
            yield (
                "rootdir",
                shown,
                f"`--rootdir {shown}` (another rootdir: the contract and the configuration are looked up elsewhere)",
            )
        elif name in ("-o", "--override-ini") or (
            token.startswith("-o") and len(token) > 2 and not token.startswith("--")
        ):
            setting = arg() if name in ("-o", "--override-ini") else token[2:]
            key = setting.partition("=")[0].strip()
            if key in JUDGED_INI:
                yield "override", setting, f"`-o {setting}` (overrides the `{key}` setting the gate compares)"
        elif name == "-p" or (token.startswith("-p") and len(token) > 2 and not token.startswith("--")):
            plugin = arg() if name == "-p" else token[2:]
            if plugin and not plugin.startswith("no:"):
                yield "plugin-load", plugin, f"`-p {plugin}`"
        i += 1


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """Lines with shell `\\` continuations joined, numbered by their first line."""
    pending, start = "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        yield start, pending + line
        pending = ""
    if pending:
        yield start, pending


def text_tokens(path: str, text: str, addopts: list[str] | None) -> list[Token]:
    """Gate switches anywhere in TEXT, and pytest options on its pytest command lines."""
    found: list[Token] = []
    for number, line in _logical_lines(text):
        for pattern, message in _GATE_OFF:
            for _ in re.finditer(pattern, line):
                found.append(Token(("gate-off", message), message, path, number))
        for pattern, message in _GATE_ON:
            for _ in re.finditer(pattern, line):
                found.append(Token(("gate-on", message), message, path, number))
        args: list[str] = []
        word = re.search(_PYTEST_WORD, line)
        if word:
            args += _split(line[word.end() :])
        env = re.search(_ADDOPTS_ENV, line)
        if env:
            args += _split(env.group(1))
        plugins = re.search(_PLUGINS_ENV, line)
        if plugins:
            args += [f"-p{p}" for p in plugins.group(1).split(",") if p]
        for kind, detail, message in pytest_arg_tokens(args):
            found.append(Token((kind, detail), message, path, number))
    found += _runner_tokens(path, text, Counter(t.key for t in found))
    for kind, detail, message in pytest_arg_tokens(addopts or [], addopts=True):
        addopts_line = next((n for n, text_line in enumerate(text.splitlines(), 1) if "addopts" in text_line), 1)
        found.append(Token((kind, detail), f"{message} in addopts", path, addopts_line))
    return found


def _runner_tokens(path: str, text: str, seen: Counter[tuple[str, str]]) -> list[Token]:
    """What the CI/task-runner reader (oracle_guard/pytest_side/runners/files.py) finds beyond the line scan: folded YAML
    strings, GitLab script lists, `env:` blocks, nox `session.run(...)` arguments."""
    name = posixpath.basename(path)
    if name in CONFIG_NAMES and name != "tox.ini":
        return []  # pytest's own configuration: its addopts are read as such
    from oracle_guard.pytest_side.runners import files as runners

    try:
        arguments = runners.read(path, text).pytest_arguments()
    except Exception:  # the line scan above already read the file; this pass only adds to it
        return []
    extra: list[Token] = []
    counts: Counter[tuple[str, str]] = Counter()
    for number, tokens in arguments:
        for kind, detail, message in pytest_arg_tokens(list(tokens)):
            counts[(kind, detail)] += 1
            if counts[(kind, detail)] > seen[(kind, detail)]:
                extra.append(Token((kind, detail), message, path, number))
    return extra
