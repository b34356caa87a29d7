"""What a runner file says about test runs, and the shell reader every format ends in.

``Command`` (one pytest or coverage invocation, with its inline environment,
interpreter flags and how its failure is thrown away), ``EnvSetting`` and
``Runner`` are the facts the switch rules read; ``shell_commands`` and
``command_words`` find them in shell text, which every format (a CI ``run:``
block, a tox command, a Make recipe, a ``session.run`` call) comes down to.
The per-format readers are in runners.py.
"""

from __future__ import annotations

import re
import shlex
from typing import NamedTuple

# Environment variables that change what a pytest run checks.
ADDOPTS_VARS = ("PYTEST_ADDOPTS",)
SEPARATORS = {"&&", "||", ";", "|", "&", "(", ")", ";;", "|&"}
_PYTHON = re.compile(r"^(python[\d.]*|pypy[\d.]*|py)(\.exe)?$")
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)
_INSTALLERS = {"install", "add", "download", "wheel", "sync", "lock", "remove", "uninstall"}
_RUNNER_HINT = re.compile(r"pytest|py\.test|coverage|tox|nox|PYTEST|PYTHON|=|python")


class Command(NamedTuple):
    """One invocation of a tool that runs or judges tests."""

    path: str
    line: int
    tool: str  # "pytest" or "coverage"
    args: tuple[str, ...]  # what follows the tool (for coverage: subcommand and options)
    env: tuple[tuple[str, str], ...] = ()  # `NAME=value pytest ...`
    interpreter: tuple[str, ...] = ()  # flags of `python FLAGS -m pytest`
    ignored: str = ""  # how its failure is thrown away: `|| true`, `continue-on-error: true`, tox's `- pytest`


class EnvSetting(NamedTuple):
    path: str
    line: int
    name: str
    value: str


class Runner(NamedTuple):
    commands: list[Command]
    env: list[EnvSetting]

    def pytest_arguments(self) -> list[tuple[int, list[str]]]:
        """(line, tokens) of every pytest argument list: commands and PYTEST_ADDOPTS, wherever set."""
        found = [(c.line, list(c.args)) for c in self.commands if c.tool == "pytest"]
        found += [(s.line, split(s.value)) for s in self.env if s.name in ADDOPTS_VARS]
        for command in self.commands:
            found += [(command.line, split(value)) for name, value in command.env if name in ADDOPTS_VARS]
        return found

    def environment(self) -> list[EnvSetting]:
        """Every variable set, in the file's env blocks or inline before a command."""
        inline = [EnvSetting(c.path, c.line, n, v) for c in self.commands for n, v in c.env]
        return self.env + inline


def split(value: str) -> list[str]:
    """Split like pytest splits addopts (shlex, no comments); never raises."""
    try:
        return shlex.split(value, comments=False)
    except ValueError:
        return value.split()


# -- shell -----------------------------------------------------------------------


def _logical_lines(text: str, first: int) -> list[tuple[int, str]]:
    """Lines with backslash continuations joined, each with its first line number."""
    lines: list[tuple[int, str]] = []
    pending: list[str] = []
    start = first
    for number, raw in enumerate(text.splitlines(), first):
        if not pending:
            start = number
        if raw.rstrip().endswith("\\"):
            pending.append(raw.rstrip()[:-1])
            continue
        pending.append(raw)
        lines.append((start, " ".join(pending)))
        pending = []
    if pending:
        lines.append((start, " ".join(pending)))
    return lines


def _words(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:  # an unbalanced quote: whitespace is the best guess
        return line.split("#", 1)[0].split()


def shell_commands(path: str, text: str, first: int = 1) -> Runner:
    """Commands and `export`s in shell text (a script, a CI `run:` block, a recipe)."""
    runner = Runner([], [])
    variables: dict[str, str] = {}  # `cmd="python -m pytest -vv"` then `$cmd || $cmd --lf`
    for number, line in _logical_lines(text, first):
        if variables and "$" in line:
            line = _SHELL_REF.sub(lambda m: variables.get(m.group(1) or m.group(2), m.group(0)), line)
        if not _RUNNER_HINT.search(line):
            continue
        known = len(runner.env)
        segments: list[tuple[list[str], str]] = [([], "")]
        for word in _words(line):
            if word in SEPARATORS:
                segments.append(([], word))  # the separator before the segment
            else:
                segments[-1][0].append(word)
        for index, (segment, _) in enumerate(segments):
            before = len(runner.commands)
            _segment(path, number, segment, runner)
            after = segments[index + 1] if index + 1 < len(segments) else None
            how = _fallback(after, segments[index + 2 :]) if after else ""
            if how:
                runner.commands[before:] = [c._replace(ignored=how) for c in runner.commands[before:]]
        variables.update((e.name, e.value) for e in runner.env[known:])
    return runner


_SHELL_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def _fallback(after: tuple[list[str], str], rest: list[tuple[list[str], str]]) -> str:
    """How what follows a command throws its exit status away: `|| true`, `|| echo`, `; exit 0`."""
    words, separator = after
    head = " ".join(words[:2])
    propagates = words[:1] == ["false"] or (words[:1] == ["exit"] and head != "exit 0")  # `|| exit 1`, `|| exit`
    if separator == "||" and words and not propagates:
        return f"|| {' '.join(words)}".strip()
    if separator == ";" and not rest and head in ("exit 0", "true", ":"):
        return f"; {head}"
    return ""


def _segment(path: str, line: int, words: list[str], runner: Runner) -> None:
    if not words:
        return
    if words[0] in ("export", "declare", "set", "env", "setenv", "local", "readonly"):
        for word in words[1:]:
            match = _ASSIGN.match(word)
            if match:
                runner.env.append(EnvSetting(path, line, match.group(1), match.group(2)))
        if words[0] != "env":
            return
        words = words[1:]
    inline: list[tuple[str, str]] = []
    while words and _ASSIGN.match(words[0]):
        match = _ASSIGN.match(words[0])
        assert match is not None
        inline.append((match.group(1), match.group(2)))
        words = words[1:]
    if not words and inline:  # `PYTEST_ADDOPTS=--lf` on its own line sets a shell variable
        runner.env.extend(EnvSetting(path, line, n, v) for n, v in inline)
        return
    command_words(path, line, words, runner, tuple(inline))


def command_words(
    path: str, line: int, words: list[str], runner: Runner, inline: tuple[tuple[str, str], ...] = ()
) -> None:
    """Find pytest/coverage in one simple command (a list of words) and record it."""
    interpreter: tuple[str, ...] = ()
    for i, word in enumerate(words):
        base = word.replace("\\", "/").rsplit("/", 1)[-1]
        if base in _INSTALLERS and i > 0:
            return  # `pip install pytest-rerunfailures` names packages, not options
        if base in ("pytest", "py.test"):
            runner.commands.append(Command(path, line, "pytest", tuple(words[i + 1 :]), inline, interpreter))
            return
        if base in ("-mpytest", "-mpy.test"):
            runner.commands.append(Command(path, line, "pytest", tuple(words[i + 1 :]), inline, interpreter))
            return
        if base in ("coverage", "-mcoverage"):
            rest = words[i + 1 :]
            runner.commands.append(Command(path, line, "coverage", tuple(rest), inline, interpreter))
            if rest and rest[0] == "run":  # coverage run [options] -m pytest ARGS
                command_words(
                    path, line, [w for w in rest[1:] if w != "-m"] if "-m" in rest else rest[1:], runner, inline
                )
            return
        if base in ("tox", "nox") and "--" in words[i:]:  # posargs reach the pytest commands
            cut = words.index("--", i)
            runner.commands.append(Command(path, line, "pytest", tuple(words[cut + 1 :]), inline, interpreter))
            return
        if _PYTHON.match(base):
            flags = []
            for flag in words[i + 1 :]:
                if not flag.startswith("-") or flag in ("-m", "-c") or flag.startswith("-m"):
                    break
                flags.append(flag)
            interpreter = tuple(flags)
