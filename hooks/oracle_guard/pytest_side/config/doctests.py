"""OG316: doctest examples weakened, in a project whose pytest collects them.

Only the base's pytest configuration decides whether doctests are checks
(``--doctest-modules`` for Python modules, ``--doctest-glob`` for text files,
from the folders ``testpaths`` names and those a CI or task runner's pytest command names):
a project that does not collect them may edit its docstrings freely.  The
comparison itself is oracle_guard.analysis.doctests.  Called from
pytest_config.check with pytest's reader of the configuration files.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Callable, Iterable

from oracle_guard.analysis import doctests
from oracle_guard.pytest_side.config.settings import Settings
from oracle_guard.repo import changes, lastfailed
from oracle_guard.reporting.report import Finding

DEFAULT_GLOB = "test*.txt"  # pytest's own default for --doctest-glob


def collected(settings: Settings) -> tuple[bool, list[str]]:
    """(whether Python modules' doctests are collected, the --doctest-glob patterns) of SETTINGS."""
    modules, globs = False, []
    tokens = settings.addopts
    for i, token in enumerate(tokens):
        name, eq, value = token.partition("=")
        if name == "--doctest-modules":
            modules = True
        elif name == "--doctest-glob":
            if not eq and i + 1 < len(tokens):
                value = tokens[i + 1]
            if value:
                globs.append(value)
    return modules, globs


def _collected_from(path: str, roots: Iterable[str]) -> bool:
    """Whether pytest walks PATH from one of ROOTS (the base's testpaths, the paths a CI command names)."""
    wanted = [t.strip("/") for t in roots]
    if any(t in ("", ".") for t in wanted):
        return True
    return any(path == t or path.startswith(t + "/") or fnmatch.fnmatch(path, t + "/*") for t in wanted)


def _matches(path: str, globs: Iterable[str]) -> bool:
    return any(fnmatch.fnmatch(posixpath.basename(path), g) or fnmatch.fnmatch(path, g) for g in globs)


def check(
    change_set: changes.ChangeSet,
    settings_of: Callable[[dict[str, bytes | None]], Settings],
    config_files: Iterable[str],
    named_paths: Callable[[], list[str]] = lambda: ["."],
) -> list[Finding]:
    """OG316 for each weakened example of a changed file the base's pytest collects doctests from."""
    touched = [p for p in change_set.changed_paths if p not in change_set.deleted]
    if not touched:
        return []
    names = sorted(config_files)
    base_settings = settings_of(change_set.read_base(names))
    modules, globs = collected(base_settings)
    findings: list[Finding] = []
    if (modules or globs) and set(names) & set(touched):
        new_settings = settings_of(change_set.read_new(names))
        added = set(new_settings.ini.get("doctest_optionflags", [])) - set(
            base_settings.ini.get("doctest_optionflags", [])
        )
        loosening = sorted(flag for flag in added if flag.upper() in doctests.LOOSENING)
        if loosening:
            findings.append(
                Finding(
                    new_settings.source or "pytest configuration",
                    new_settings.lines.get("doctest_optionflags", 1),
                    1,
                    "OG316",
                    f"doctest_optionflags gained {', '.join(loosening)}: every doctest example compares less than "
                    "at the base",
                )
            )
    wanted = [p for p in touched if (modules and p.endswith(".py")) or _matches(p, globs)]
    testpaths = base_settings.ini.get("testpaths", [])
    if wanted and testpaths:  # semver's `testpaths = tests docs`: its modules' docstrings are no test
        # A word of addopts that is no option may be a path pytest runs instead of testpaths (`-p` values too:
        # more roots only judge more files).
        positional = [t for t in base_settings.addopts if not t.startswith("-")]
        roots = [*testpaths, *positional, *named_paths()]
        wanted = [p for p in wanted if _collected_from(change_set.old_path(p) or p, roots)]
    if not wanted:
        return findings
    new = change_set.read_new(wanted)
    base = change_set.read_base([change_set.old_path(p) or p for p in wanted])
    for path in wanted:
        data = new.get(path)
        old = base.get(change_set.old_path(path) or path)
        if data is None or not any(b">>>" in d or b"__doc__" in d for d in (data, old or b"")):
            continue  # neither side has an example or touches a docstring
        if path.endswith(".py"):
            after, before = doctests.of_module(data, path), doctests.of_module(old or b"", path)
        else:
            after, before = (
                doctests.of_text(data.decode("utf-8", "replace")),
                doctests.of_text((old or b"").decode("utf-8", "replace")),
            )
        for line, message in doctests.compare(before, after):
            if any(node_id.startswith(path + "::") for node_id in lastfailed.failing()):
                message = lastfailed.FAILING + message  # one of this file's doctests was failing
            findings.append(
                Finding(
                    path,
                    line,
                    1,
                    "OG316",
                    f"{message}; fix the code so the base's example passes, or change it in its own reviewed commit",
                )
            )
    return findings
