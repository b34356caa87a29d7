"""coverage.py's configuration at one side, and the lines it stops counting (OG862, OG863).

Which file coverage.py reads (``.coveragerc`` first, then setup.cfg, tox.ini,
pyproject.toml), its ``fail_under``, ``omit`` and exclusion patterns; whether a new
exclusion hides a tracked source line; and ``# pragma: no cover`` added to existing
production lines in a change that also changes tests.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, NamedTuple

from oracle_guard.pytest_side.switches.options import _count
from oracle_guard.repo import git
from oracle_guard.repo.paths import TEST_FILES
from oracle_guard.reporting.report import Finding

if TYPE_CHECKING:  # types only: the callers pass these in
    from oracle_guard.repo.changes import ChangeSet

NOT_PRODUCTION = re.compile(r"(^|/)(docs?|examples?|benchmarks?|bench|scripts?)/|(^|/)(setup|noxfile|conftest)\.py$")
PRAGMA = re.compile(rb"#\s*(pragma|PRAGMA)[:\s]?\s*(no|NO)\s*(cover|COVER)")
COVERAGE_FILES = (".coveragerc", "setup.cfg", "tox.ini", "pyproject.toml")


class Coverage(NamedTuple):
    source: str
    fail_under: float | None
    omit: tuple[str, ...]
    lines: dict[str, int]
    exclude: tuple[str, ...] = ()  # [report] exclude_lines + exclude_also


def coverage_of(blobs: dict[str, bytes | None]) -> Coverage:
    """coverage.py's pick: .coveragerc if it exists, else the first of setup.cfg, tox.ini, pyproject.toml with coverage settings."""
    for name in COVERAGE_FILES:
        data = blobs.get(name)
        if data is None:
            continue
        found = _coverage_file(name, data.decode("utf-8", "replace"))
        if found is not None or name == ".coveragerc":
            return found or Coverage(name, None, (), {})
    return Coverage("", None, (), {})


def _coverage_file(name: str, text: str) -> Coverage | None:
    sections: dict[str, dict[str, object]] = {}
    if name == "pyproject.toml":
        from oracle_guard.pytest_side.config.settings import load_toml

        try:
            table = load_toml(text).get("tool", {}).get("coverage", {})
        except Exception:
            return None  # invalid TOML is pytest_config's finding (exit 2)
        sections = {k: v for k, v in table.items() if isinstance(v, dict)}
    else:
        import configparser  # only when coverage configuration changed

        parser = configparser.ConfigParser(interpolation=None, strict=False)  # coverage.py reads with configparser
        try:
            parser.read_string(text, source=name)
        except configparser.Error:
            return None
        prefix = "" if name == ".coveragerc" else "coverage:"
        for section in parser.sections():
            short = section[len("coverage:") :] if section.startswith("coverage:") else section
            if section.startswith("coverage:") or (not prefix and section in ("run", "report", "html", "xml", "paths")):
                sections[short] = dict(parser.items(section))
    if not sections:
        return None
    lines = {}
    for key in ("fail_under", "omit", "exclude_lines", "exclude_also"):
        for number, line in enumerate(text.splitlines(), 1):
            if re.match(rf"\s*{key}\s*=", line):
                lines[key] = number
                break
    report = sections.get("report", {})
    value = report.get("fail_under")
    fail_under = _count(str(value)) if value is not None else None
    omit: list[str] = []
    for part in ("run", "report"):
        raw = sections.get(part, {}).get("omit")
        if isinstance(raw, list):
            omit += [str(v) for v in raw]
        elif isinstance(raw, str):
            omit += [v.strip() for v in re.split(r"[,\n]", raw) if v.strip()]
    exclude: list[str] = []
    for key in ("exclude_lines", "exclude_also"):
        raw = report.get(key)
        if isinstance(raw, list):
            exclude += [str(v) for v in raw]
        elif isinstance(raw, str):
            exclude += [v.strip() for v in raw.splitlines() if v.strip()]
    return Coverage(name, fail_under, tuple(omit), lines, tuple(exclude))


# The exclusions coverage.py's documentation gives as typical (code that never runs
# under test by design); adding one hides nothing a reviewer would count.
IDIOMS = (
    "type_checking",
    "overload",
    "abstractmethod",
    "notimplementederror",
    "__main__",
    "no cover",
    "protocol",
    r"\.\.\.",
    "...",
    "__repr__",
    "if 0",
    "raise assertionerror",
    "self\\.debug",
)


def _hides_source(pattern: str, target: str | None) -> str | None:
    """A tracked source line the new exclusion regex matches (git grep -E), or why it cannot tell."""
    lowered = pattern.lower()
    if any(idiom in lowered for idiom in IDIOMS):
        return None
    args = ["grep", "-n", "-I", "-E", "-e", pattern]
    if target:
        args.append(target)
    try:
        out = git.run(*args, "--", "*.py", check=False).decode("utf-8", "replace")
    except Exception:  # a regex git cannot read: unverifiable, so reported
        return "a pattern git grep cannot check"
    for line in out.splitlines():
        path = line.split(":", 2)[1] if target else line.split(":", 1)[0]
        if not TEST_FILES.search(path):
            return ":".join(line.split(":", 3)[1:3] if target else line.split(":", 2)[:2])
    return None


def _omits(pattern: str, path: str) -> bool:
    import fnmatch

    if pattern.startswith(("*", "/")):
        return fnmatch.fnmatch("/" + path, pattern)
    return fnmatch.fnmatch(path, pattern.removeprefix("./"))


def pragmas(
    change_set: ChangeSet,
    read_new: Callable[[list[str]], dict[str, bytes | None]],
    read_base: Callable[[list[str]], dict[str, bytes | None]],
) -> list[Finding]:
    """`# pragma: no cover` added to existing production lines in a change that also changes tests."""
    changed = list(change_set.changed_paths)
    touched = changed + list(change_set.deleted)
    if not any(TEST_FILES.search(p) for p in touched):
        return []
    production = [p for p in changed if p.endswith(".py") and not TEST_FILES.search(p) and not NOT_PRODUCTION.search(p)]
    if not production:
        return []
    new = read_new(production)
    candidates = [p for p in production if new.get(p) and PRAGMA.search(new[p] or b"")]
    if not candidates:
        return []
    old_of = {p: change_set.old_path(p) for p in candidates}
    base = read_base([o for o in old_of.values() if o])
    findings = []
    for path in candidates:
        old = base.get(old_of[path] or "")
        if old is None:
            continue  # a new module: nothing existed to stop counting
        old_lines = old.splitlines()
        plain = {line.strip() for line in old_lines if not PRAGMA.search(line)}
        pragma_before = {
            PRAGMA.split(line)[0].rstrip().rstrip(b"#").strip() for line in old_lines if PRAGMA.search(line)
        }
        for number, line in enumerate((new[path] or b"").splitlines(), 1):
            match = PRAGMA.search(line)
            if not match:
                continue
            code = line[: match.start()].rstrip()
            if code.strip() and code.strip() in plain and code.strip() not in pragma_before:
                shown = code.strip().decode("utf-8", "replace")
                findings.append(
                    Finding(
                        path,
                        number,
                        match.start() + 1,
                        "OG863",
                        f"`# pragma: no cover` added to existing production code `{shown}` in a change that also changes tests: coverage stops counting it; remove the pragma, or add it in a change of its own",
                    )
                )
    return findings
