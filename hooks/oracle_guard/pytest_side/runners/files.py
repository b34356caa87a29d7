"""How CI files and task runners run pytest: commands and environment, per file.

One reader for every place a project spells a test run, so each rule (tests
deselected, reruns, regeneration, coverage floors, ``python -O``, plugins
switched off) asks the same question of the same facts:

- GitHub/GitLab/CircleCI/Azure YAML: every shell string (``run: |`` blocks
  with ``\\`` continuations, folded ``>`` strings, GitLab ``script:`` lists),
  ``env:``/``environment:``/``variables:`` at any level, pre-commit
  ``entry:`` + ``args:``;
- tox.ini ``commands*`` and ``setenv``/``set_env`` of every ``testenv``;
- noxfiles and Python scripts: ``session.run("pytest", ...)`` (string, list,
  module-level constant and ``*CONSTANT`` arguments), ``env={...}``,
  ``session.env[...] =``, ``os.environ[...] =``;
- Makefiles: recipes with ``$(VAR)`` expanded, continuations joined, every
  variable assignment (``export``, ``?=``, ``:=``, target-specific);
- shell scripts: ``export X=...``, ``X=... pytest ...``.

A file that does not parse in its own syntax is read line by line instead:
an unreadable runner never hides a command.

Use: ``read(path, text)`` gives a ``Runner``; ``.pytest_arguments()`` is every
(line, tokens) that reaches pytest (commands and ``PYTEST_ADDOPTS``),
``.environment()`` every variable set, ``.commands`` each ``Command`` with its
interpreter flags and how its failure is ignored.  ``ini_sections`` reads INI
the way pytest does (iniconfig).

The facts (``Command``, ``EnvSetting``, ``Runner``) and the shell reader every
format comes down to live in runner_shell.py; runners.py reads each format.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from oracle_guard.pytest_side.runners.shell import _ASSIGN, _RUNNER_HINT, _logical_lines, command_words, shell_commands
from oracle_guard.pytest_side.runners.shell import ADDOPTS_VARS as ADDOPTS_VARS
from oracle_guard.pytest_side.runners.shell import Command as Command
from oracle_guard.pytest_side.runners.shell import EnvSetting as EnvSetting
from oracle_guard.pytest_side.runners.shell import Runner as Runner
from oracle_guard.pytest_side.runners.shell import split as split

if TYPE_CHECKING:  # imported where used at run time: most hooks never read YAML
    import yaml


# -- YAML (CI services, pre-commit) --------------------------------------------------

ENV_KEYS = {"env", "environment", "variables"}
NOT_SHELL = {"name", "if", "uses", "description", "image", "stage", "when", "needs", "runs-on", "id", "language"}


def _yaml_runner(path: str, text: str) -> Runner | None:
    try:
        import yaml

        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        root = yaml.compose(text, Loader=loader)
    except Exception:  # not YAML (or several documents): read it line by line
        return None
    runner = Runner([], [])
    if root is not None:
        _walk_yaml(path, root, runner)
    return runner


def _scalar_line(node: yaml.Node, offset: int = 0) -> int:
    mark = node.start_mark
    block = getattr(node, "style", None) in ("|", ">")
    return mark.line + 1 + (1 if block else 0) + offset


def _walk_yaml(path: str, node: object, runner: Runner) -> None:
    import yaml

    if isinstance(node, yaml.MappingNode):
        pairs = [(k.value if isinstance(k, yaml.ScalarNode) else None, v) for k, v in node.value]
        keys = dict(pairs)
        uses = keys.get("uses")
        if (
            isinstance(uses, yaml.ScalarNode)
            and "retry" in str(uses.value).lower()
            and isinstance(keys.get("with"), yaml.MappingNode)
        ):
            _retry_action(path, str(uses.value), keys["with"], runner)
        entry = keys.get("entry")
        if isinstance(entry, yaml.ScalarNode) and ("pytest" in entry.value or "py.test" in entry.value):
            args = keys.get("args")
            extra = (
                [a.value for a in args.value if isinstance(a, yaml.ScalarNode)]
                if isinstance(args, yaml.SequenceNode)
                else []
            )
            shell = shell_commands(path, entry.value, _scalar_line(entry))
            runner.env.extend(shell.env)
            runner.commands.extend(c._replace(args=c.args + tuple(extra)) for c in shell.commands)
        before = len(runner.commands)
        for key, value in pairs:
            if key == "entry" and isinstance(value, yaml.ScalarNode):
                continue
            if key in ENV_KEYS:
                _yaml_env(path, value, runner)
            elif key in NOT_SHELL and isinstance(value, yaml.ScalarNode):
                continue
            else:
                _walk_yaml(path, value, runner)
        for key in ("continue-on-error", "allow_failure", "continueOnError"):  # GitHub, GitLab, Azure
            flag = keys.get(key)
            if isinstance(flag, yaml.ScalarNode) and str(flag.value).strip().lower() == "true":
                runner.commands[before:] = [
                    c._replace(ignored=c.ignored or f"`{key}: true`") for c in runner.commands[before:]
                ]
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _walk_yaml(path, item, runner)
    elif isinstance(node, yaml.ScalarNode) and isinstance(node.value, str) and _RUNNER_HINT.search(node.value):
        folded = node.style == ">"
        shell = shell_commands(path, node.value.replace("\n", " ") if folded else node.value, _scalar_line(node))
        runner.commands.extend(shell.commands)
        runner.env.extend(shell.env)


RETRY_ACTION_KEYS = ("max_attempts", "attempt_limit", "attempts", "retries", "max-attempts", "retry_times")


def _retry_action(path: str, uses: str, inputs: yaml.MappingNode, runner: Runner) -> None:
    """`uses: nick-fields/retry@v3` with `command: pytest` and `max_attempts: 3`: the job reruns the tests."""
    import yaml

    fields = {k.value: v for k, v in inputs.value if isinstance(k, yaml.ScalarNode) and isinstance(v, yaml.ScalarNode)}
    attempts = next((fields[k] for k in RETRY_ACTION_KEYS if k in fields), None)
    for key in ("command", "run", "script"):
        if key in fields:
            shell = shell_commands(path, str(fields[key].value), _scalar_line(fields[key]))
            for command in shell.commands:
                if command.tool == "pytest":
                    count = str(attempts.value) if attempts is not None else "?"
                    runner.commands.append(command._replace(args=(*command.args, RETRY_ACTION, f"{count} ({uses})")))


RETRY_ACTION = "--oracle-guard-ci-retry"  # stands for a retrying action around the command


def _yaml_env(path: str, node: object, runner: Runner) -> None:
    import yaml

    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                continue
            if isinstance(value, yaml.MappingNode):  # GitLab: NAME: {value: ..., description: ...}
                value = next((v for k, v in value.value if isinstance(k, yaml.ScalarNode) and k.value == "value"), None)
            if isinstance(value, yaml.ScalarNode):
                runner.env.append(EnvSetting(path, key.start_mark.line + 1, str(key.value), str(value.value)))
            elif value is not None:
                _walk_yaml(path, value, runner)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            if isinstance(item, yaml.ScalarNode):  # CircleCI/compose: - NAME=value
                match = _ASSIGN.match(str(item.value))
                if match:
                    runner.env.append(EnvSetting(path, item.start_mark.line + 1, match.group(1), match.group(2)))
            elif isinstance(item, yaml.MappingNode):  # Azure: - name: X / value: Y
                fields = {k.value: v for k, v in item.value if isinstance(k, yaml.ScalarNode)}
                name, value = fields.get("name"), fields.get("value")
                if isinstance(name, yaml.ScalarNode) and isinstance(value, yaml.ScalarNode):
                    runner.env.append(EnvSetting(path, name.start_mark.line + 1, str(name.value), str(value.value)))
                else:
                    _walk_yaml(path, item, runner)
    elif isinstance(node, yaml.ScalarNode):
        _walk_yaml(path, node, runner)


# -- tox.ini -------------------------------------------------------------------------


_POSARGS = re.compile(r"\{posargs:([^{}]*)\}")


def _tox_runner(path: str, text: str) -> Runner:
    runner = Runner([], [])
    raw = text.splitlines()
    items = ini_items(path, text)
    ignore_outcome = {
        section
        for section, key, _, value in items
        if key == "ignore_outcome" and value.strip().lower() in ("true", "1", "yes")
    }
    for section, key, line, value in items:
        if not section.startswith("testenv"):
            continue
        if line <= len(raw) and not raw[line - 1].partition("=")[2].strip():
            line += 1  # the value starts on the next line
        if key.startswith("commands"):
            for number, command in _logical_lines(value, line):
                command = _POSARGS.sub(r"\1", command)  # `{posargs:--reruns 2}`: the default is what runs
                shell = shell_commands(path, command.lstrip("-! "), number)
                dash = command.lstrip().startswith("-")  # tox ignores the exit code of `- cmd`
                runner.commands.extend(
                    c._replace(ignored=c.ignored or "tox `- ` prefix") if dash else c for c in shell.commands
                )
                runner.env.extend(shell.env)
        elif key in ("setenv", "set_env"):
            for offset, entry in enumerate(value.splitlines()):
                name, eq, val = entry.partition("=")
                if eq and name.strip():
                    runner.env.append(EnvSetting(path, line + offset, name.strip(), val.strip()))
    if ignore_outcome:
        runner.commands[:] = [
            c._replace(ignored=c.ignored or "tox `ignore_outcome = true`")
            if _section_of(items, c.line) in ignore_outcome
            else c
            for c in runner.commands
        ]
    return runner


def _section_of(items: list[tuple[str, str, int, str]], line: int) -> str:
    """The section whose settings start last before LINE."""
    best, at = "", 0
    for section, _, start, _ in items:
        if at <= start <= line:
            best, at = section, start
    return best


def ini_sections(path: str, text: str) -> dict[str, list[tuple[str, int, str]]]:
    """{section: [(key, line, value)]} of an INI file, read by iniconfig exactly as pytest reads it.

    Keys keep their case, duplicates and inline ``#`` are what pytest sees;
    what iniconfig refuses is a UsageError (pytest would refuse it too).
    """
    import iniconfig

    from oracle_guard.reporting.report import UsageError

    try:
        config = iniconfig.IniConfig(path, data=text)
    except iniconfig.ParseError as exc:
        raise UsageError(f"{exc} (pytest's INI reader, iniconfig, refuses it, so pytest would too)") from None
    sections: dict[str, list[tuple[str, int, str]]] = {}
    for section in config:
        sections[section.name] = [
            (key, section.lineof(key) or config.lineof(section.name) or 1, value) for key, value in section.items()
        ]
    return sections


def ini_items(path: str, text: str) -> list[tuple[str, str, int, str]]:
    """(section, key, line, value) of every setting, see ini_sections."""
    return [(name, key, line, value) for name, items in ini_sections(path, text).items() for key, line, value in items]


# -- Python (noxfile, scripts) ---------------------------------------------------------


def _python_runner(path: str, text: str) -> Runner | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    constants = _module_constants(tree)
    runner = Runner([], [])
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            words = _string_words(node.args, constants)
            if words is not None and len(node.args) == 1 and len(words) == 1 and " " in words[0]:
                shell = shell_commands(path, words[0], node.lineno)  # run("pytest -x", shell=True)
                runner.commands.extend(shell.commands)
                runner.env.extend(shell.env)
            elif words:
                command_words(path, node.lineno, words, runner)
            for keyword in node.keywords:
                if keyword.arg == "env" and isinstance(keyword.value, ast.Dict):
                    _dict_env(path, keyword.value, constants, runner)
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in ("update", "setdefault", "putenv")
                and _env_owner(func.value if func.attr != "putenv" else None)
            ):
                if func.attr == "update":
                    for arg in node.args:
                        if isinstance(arg, ast.Dict):
                            _dict_env(path, arg, constants, runner)
                    for keyword in node.keywords:
                        if keyword.arg:
                            runner.env.append(
                                EnvSetting(path, node.lineno, keyword.arg, _string(keyword.value, constants) or "?")
                            )
                elif len(node.args) >= 2:
                    name = _string(node.args[0], constants)
                    if name:
                        runner.env.append(EnvSetting(path, node.lineno, name, _string(node.args[1], constants) or "?"))
            elif isinstance(func, ast.Attribute) and func.attr == "putenv" and len(node.args) >= 2:
                name = _string(node.args[0], constants)
                if name:
                    runner.env.append(EnvSetting(path, node.lineno, name, _string(node.args[1], constants) or "?"))
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Subscript) and _env_owner(target.value):
                    name = _string(target.slice, constants)
                    if name:
                        runner.env.append(EnvSetting(path, node.lineno, name, _string(node.value, constants) or "?"))
    return runner


def _env_owner(node: ast.AST | None) -> bool:
    """`os.environ`, `environ`, `session.env`, `self.env`: a mapping that becomes the environment."""
    if node is None:
        return False
    text = ast.unparse(node)
    return text.endswith(("environ", ".env")) or text == "env"


def _module_constants(tree: ast.Module) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = _string_words([node.value], found)
            if value is not None:
                found[node.targets[0].id] = value
    return found


def _string(node: ast.AST, constants: dict[str, list[str]]) -> str | None:
    words = _string_words([node], constants)
    return " ".join(words) if words is not None else None


def _string_words(nodes: Iterable[ast.AST], constants: dict[str, list[str]]) -> list[str] | None:
    """The words of string-ish arguments, or None when one of them is not a string."""
    words: list[str] = []
    for node in nodes:
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, (str, int, float))
            and not isinstance(node.value, bool)
        ):
            words.append(str(node.value))
        elif isinstance(node, (ast.List, ast.Tuple)):
            inner = _string_words(node.elts, constants)
            if inner is None:
                return None
            words += inner
        elif isinstance(node, ast.Starred):
            inner = _string_words([node.value], constants)
            if inner is None:
                continue  # *session.posargs
            words += inner
        elif isinstance(node, ast.Name) and node.id in constants:
            words += constants[node.id]
        elif isinstance(node, ast.JoinedStr):
            words.append("".join(str(v.value) if isinstance(v, ast.Constant) else "{}" for v in node.values))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            inner = _string_words([node.left, node.right], constants)
            if inner is None:
                return None
            words += inner
        else:
            return None
    return words


def _dict_env(path: str, node: ast.Dict, constants: dict[str, list[str]], runner: Runner) -> None:
    for key, value in zip(node.keys, node.values):
        name = _string(key, constants) if key is not None else None
        if name:
            runner.env.append(
                EnvSetting(path, key.lineno if key is not None else node.lineno, name, _string(value, constants) or "?")
            )


# -- Makefile ------------------------------------------------------------------------

_MAKE_ASSIGN = re.compile(
    r"^(?:[^\s:=#]+\s*:\s*)?(?:export\s+|override\s+)*([A-Za-z_][A-Za-z0-9_.]*)\s*(::=|:=|\?=|\+=|!=|=)\s*(.*)$"
)
_MAKE_REF = re.compile(r"\$[({]([A-Za-z_][A-Za-z0-9_.]*)[)}]")


def _make_runner(path: str, text: str) -> Runner:
    variables: dict[str, str] = {}
    recipes: list[tuple[int, str]] = []
    runner = Runner([], [])
    for number, line in _logical_lines(text, 1):
        if line.startswith("\t"):
            recipes.append((number, line.lstrip("\t")))
            continue
        match = _MAKE_ASSIGN.match(line.strip())
        if match and not line.lstrip().startswith("#"):
            name, value = match.group(1), match.group(3).split(" #", 1)[0].strip()
            joined = f"{variables.get(name, '')} {value}".strip() if match.group(2) == "+=" else value
            variables[name] = joined
            runner.env.append(EnvSetting(path, number, name, joined))

    def expand(value: str, depth: int = 0) -> str:
        if depth > 8:
            return value
        return _MAKE_REF.sub(lambda m: expand(variables.get(m.group(1), ""), depth + 1), value)

    for number, recipe in recipes:
        prefix = recipe[: len(recipe) - len(recipe.lstrip("@-+ "))]
        shell = shell_commands(path, expand(recipe[len(prefix) :].replace("$$", "$")), number)
        ignored = "make `-` prefix" if "-" in prefix else ""  # make ignores the recipe line's exit status
        runner.commands.extend(c._replace(ignored=c.ignored or ignored) for c in shell.commands)
        runner.env.extend(shell.env)
    return runner


# -- dispatch -------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)  # several rules read the same file; callers never mutate a Runner
def read(path: str, text: str) -> Runner:
    """Every pytest/coverage command and environment setting in one runner file."""
    name = path.rsplit("/", 1)[-1]
    found: Runner | None = None
    if name.endswith((".yml", ".yaml")):
        found = _yaml_runner(path, text)
    elif name == "tox.ini":
        found = _tox_runner(path, text)
    elif name.endswith(".py"):
        found = _python_runner(path, text)
    elif name in ("Makefile", "makefile", "GNUmakefile") or name.endswith(".mk"):
        found = _make_runner(path, text)
    return found if found is not None else shell_commands(path, text)
