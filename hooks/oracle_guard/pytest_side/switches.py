"""Switches that hide failures, compared with the base (OG860-OG864).

Part of the static layer of collection-snapshot (``pytest_config.check``):
one flag in ``addopts``, an ini key, a CI command or a CI ``env:`` entry can
make a red suite green without touching a test.

- OG860 reruns outside the freeze ledger: ``--reruns``/``--retries``/
  ``--force-flaky``, ``reruns``/``retries`` ini keys, ``-o reruns=N``, new or
  raised anywhere (a command that runs only tests a valid freeze covers, within
  its ``remaining_reruns``, is the ledger at work and passes);
- OG861 regeneration as a run mode: syrupy/pytest-snapshot
  ``--snapshot-update``, pytest-regressions ``--force-regen``/``--regen-all``,
  ``--inline-snapshot=fix|create|update|review`` (and its ``default-flags``),
  approvaltests auto-approving reporters, pytest-golden, pytest-regtest,
  VCR ``--record-mode=rewrite|all|new_episodes``, and environment switches
  (``UPDATE_GOLDENS=1``, ``REGENERATE=1``) that the project's code reads;
- OG862 coverage floors: ``--cov-fail-under``/``fail_under`` lowered or
  removed, ``--no-cov`` where a floor exists, new ``omit`` patterns that
  exclude source files;
- OG863 ``# pragma: no cover`` added to an existing line of production code
  in a change that also changes tests;
- OG864 asserts stripped: ``python -O`` running pytest, ``PYTHONOPTIMIZE``;
- OG865 a pytest run's failure thrown away: ``|| true``, ``; exit 0``,
  ``continue-on-error: true``, GitLab ``allow_failure: true``, tox's ``- pytest``
  and ``ignore_outcome``, make's ``-pytest`` (``|| pytest ...`` is a rerun, OG860);
- partial runs (``-x`` together with deselection) are OG851/OG859, with the
  other narrowing options of pytest_config.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Callable, NamedTuple

from oracle_guard.pytest_side import runners as ci
from oracle_guard.repo import git
from oracle_guard.repo.paths import DEFAULT_CONTRACT, TEST_FILES
from oracle_guard.reporting.report import Finding

if TYPE_CHECKING:  # types only: the callers pass these in
    from oracle_guard.contract.contract import Contract
    from oracle_guard.pytest_side.settings import Settings
    from oracle_guard.repo.changes import ChangeSet

LEDGER = f"reruns belong to the freeze ledger: remove it, or add a freeze entry (owner, expiry, remaining_reruns) for the flaky test in {DEFAULT_CONTRACT}"
REGEN = "regenerate goldens in a change of their own (run the update locally, review and commit the new files alone), never as a run mode; remove it"
FLOOR = "coverage floors only rise: restore it"

# Options whose value is the next token when not written `--opt=value`.
VALUE_OPTIONS = {
    "--reruns",
    "--retries",
    "--max-runs",
    "--min-passes",
    "--reruns-delay",
    "--retry-delay",
    "--only-rerun",
    "--rerun-except",
    "--cov-fail-under",
    "--fail-under",
    "--cov",
    "--cov-report",
    "--cov-config",
    "--omit",
    "--include",
    "--rcfile",
    "--inline-snapshot",
    "--record-mode",
    "--insta",
    "--approvaltests-use-reporter",
    "--approvaltests-add-reporter",
    "--maxfail",
    "--deselect",
    "--ignore",
    "--ignore-glob",
    "--confcutdir",
    "--rootdir",
    "--basetemp",
    "--tb",
    "--junitxml",
    "--junit-xml",
    "--hypothesis-profile",
    "--hypothesis-seed",
    "--durations",
    "--log-level",
    "--timeout",
    "--dist",
    "--lfnf",
    "--last-failed-no-failures",
    "--count",
    "--override-ini",
    "--deselect-from-file",
    "--select-from-file",
    "--numprocesses",
    "--tx",
    ci.RETRY_ACTION,
    "--color",
    "--capture",
    "--import-mode",
    "--pyargs",
    "--splits",
    "--group",
}
SHORT_VALUE = set("kmpcoWrnP")  # `-k EXPR`, `-kEXPR`; any other short letter is a flag (`-xq`)
RERUN_INI = {"reruns": "pytest-rerunfailures", "retries": "pytest-retry"}
REGEN_FLAGS = {
    "--snapshot-update": "rewrites syrupy/pytest-snapshot snapshots",
    "--force-regen": "rewrites pytest-regressions data",
    "--regen-all": "rewrites all pytest-regressions data",
    "--update-goldens": "rewrites pytest-golden goldens",
    "--regtest-reset": "rewrites pytest-regtest outputs",
    "--approvaltests-auto-approve": "approves every received output",
    "--accept": "rewrites doctest outputs (pytest-accept)",
}
REGEN_VALUES = {
    "--inline-snapshot": ({"fix", "create", "update", "review"}, "rewrites inline snapshots in the tests"),
    "--record-mode": ({"rewrite", "all", "new_episodes"}, "re-records VCR cassettes"),
    "--insta": ({"update", "update-new", "record", "update-none"}, "rewrites pytest-insta snapshots"),
}
AUTO_APPROVE = re.compile(r"approv|auto", re.I)  # approvaltests' ReporterThatAutomaticallyApproves and kin
REGEN_ENV = re.compile(r"(UPDATE|REGEN|RECORD|BLESS|ACCEPT|APPROVE|OVERWRITE|REWRITE)", re.I)
FALSY = {"", "0", "false", "no", "off", "n", "f"}
SELECTING = {
    "-k",
    "-m",
    "--deselect",
    "--ignore",
    "--ignore-glob",
    "--lf",
    "--last-failed",
    "--sw",
    "--stepwise",
    "--deselect-from-file",
    "--select-from-file",
}
EXITFIRST = {"-x", "--exitfirst", "--maxfail"}
NOT_PRODUCTION = re.compile(r"(^|/)(docs?|examples?|benchmarks?|bench|scripts?)/|(^|/)(setup|noxfile|conftest)\.py$")
PRAGMA = re.compile(rb"#\s*(pragma|PRAGMA)[:\s]?\s*(no|NO)\s*(cover|COVER)")
COVERAGE_FILES = (".coveragerc", "setup.cfg", "tox.ini", "pyproject.toml")


class Switch(NamedTuple):
    option: str
    value: str


def parse(tokens: Iterable[str]) -> list[Switch]:
    """pytest-style options in a token list: `--opt=v`, `--opt v`, `-kEXPR`, clusters `-xq`."""
    found: list[Switch] = []
    items = list(tokens)
    i = 0
    while i < len(items):
        token = items[i]
        if token.startswith("--"):
            name, eq, value = token.partition("=")
            if (
                not eq
                and name in VALUE_OPTIONS
                and i + 1 < len(items)
                and not (items[i + 1].startswith("-") and items[i + 1] != "-")
            ):
                value = items[i + 1]
                i += 1
            found.append(Switch(name if name != "--override-ini" else "-o", value))
        elif token.startswith("-") and len(token) > 1 and not token[1].isdigit():
            for at, letter in enumerate(token[1:], 1):
                if letter in SHORT_VALUE:
                    value = token[at + 1 :]
                    if not value and i + 1 < len(items):
                        value = items[i + 1]
                        i += 1
                    found.append(Switch(f"-{letter}", value))
                    break
                found.append(Switch(f"-{letter}", ""))
        i += 1
    return found


def _count(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        return float("inf")  # `--reruns $N`: cannot be proven small


def reruns(switches: list[Switch], ini: dict[str, list[str]] | None = None) -> tuple[float, str]:
    """The largest rerun count these options and ini keys give every test, and how it is spelled."""
    best, shown = 0.0, ""
    names = {s.option for s in switches}
    candidates: list[tuple[float, str]] = []
    for s in switches:
        if s.option in ("--reruns", "--retries"):
            candidates.append((_count(s.value), f"{s.option} {s.value}"))
        if s.option == "-o" and s.value.partition("=")[0].strip() in RERUN_INI:
            candidates.append((_count(s.value.partition("=")[2].strip()), f"-o {s.value}"))
    for s in switches:
        if s.option == ci.RETRY_ACTION:  # a CI retry action: attempts, not reruns
            attempts, _, uses = s.value.partition(" ")
            candidates.append((_count(attempts) - 1, f"{uses.strip('()')} with {attempts} attempts"))
    if "--force-flaky" in names:
        runs = next((_count(s.value) for s in switches if s.option == "--max-runs"), 2.0)
        candidates.append((runs - 1, "--force-flaky"))
    for key in RERUN_INI:
        for value in (ini or {}).get(key, [])[:1]:
            candidates.append((_count(value), f"{key} = {value}"))
    for count, spelled in candidates:
        if count > best:
            best, shown = count, spelled
    return best, shown


def regenerations(switches: list[Switch]) -> list[tuple[str, str]]:
    """(spelling, what it does) of every option that rewrites goldens instead of comparing."""
    found = []
    for s in switches:
        if s.option in REGEN_FLAGS:
            found.append((s.option, REGEN_FLAGS[s.option]))
        elif s.option in REGEN_VALUES:
            modes, what = REGEN_VALUES[s.option]
            if {m.strip() for m in s.value.split(",")} & modes:
                found.append((f"{s.option}={s.value}", what))
        elif s.option.startswith("--approvaltests-") and s.option.endswith("reporter") and AUTO_APPROVE.search(s.value):
            found.append((f"{s.option}={s.value}", "approves every received output"))
    return found


def floor(switches: list[Switch], coverage: bool = False) -> float | None:
    name = "--fail-under" if coverage else "--cov-fail-under"
    values = [_count(s.value) for s in switches if s.option == name]
    return values[-1] if values else None


def _truthy(value: str) -> bool:
    return value.strip().strip("'\"").lower() not in FALSY


def strips_asserts(flags: Iterable[str]) -> bool:
    return any(f.startswith("-") and not f.startswith("--") and "O" in f for f in flags)


# -- coverage configuration -------------------------------------------------------------


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
        from oracle_guard.pytest_side.settings import load_toml

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


# -- the comparison ----------------------------------------------------------------------


class Context(NamedTuple):
    """What the rules need beyond the two sides' files, asked lazily."""

    python_files: Callable[[], list[str]]  # tracked .py files of the new side
    reads_env: Callable[[str], bool]  # whether the project's Python code mentions the variable
    frozen: Callable[[str, float], bool]  # whether a valid freeze covers the node id with that many reruns
    excludes: Callable[[str], str | None] = lambda pattern: None  # a source line a new exclusion hides


def compare_config(
    base_settings: Settings,
    new_settings: Settings,
    base_cov: Coverage,
    new_cov: Coverage,
    ci_floors: list[float],
    context: Context,
) -> list[Finding]:
    """addopts, ini keys and coverage configuration of both sides."""
    findings: list[Finding] = []
    base_sw, new_sw = parse(base_settings.addopts), parse(new_settings.addopts)
    where = new_settings.source or "pytest configuration"

    def at(key: str) -> int:
        return new_settings.lines.get(key, 1)

    old_count, _ = reruns(base_sw, base_settings.ini)
    new_count, spelled = reruns(new_sw, new_settings.ini)
    if new_count > old_count:
        key = spelled.split(" ", 1)[0] if spelled.split(" ", 1)[0] in RERUN_INI else "addopts"
        was = f" (base: {old_count:g})" if old_count else ""
        findings.append(
            Finding(
                where, at(key), 1, "OG860", f"configuration now reruns every failing test: `{spelled}`{was}; {LEDGER}"
            )
        )
    known = [r[0] for r in regenerations(base_sw)]
    for spelled, what in regenerations(new_sw):
        if spelled not in known:
            findings.append(
                Finding(where, at("addopts"), 1, "OG861", f"addopts `{spelled}` {what} instead of comparing; {REGEN}")
            )
    findings += _partial(base_sw, new_sw, where, at("addopts"), "OG851", "addopts")
    measured = _effective_floor(base_sw, base_cov) or any(s.option == "--cov" for s in base_sw)
    if "--no-cov" in {s.option for s in new_sw} - {s.option for s in base_sw} and measured:
        findings.append(
            Finding(
                where,
                at("addopts"),
                1,
                "OG862",
                "addopts `--no-cov` switches coverage, and every floor on it, off; remove it",
            )
        )

    old_floor, new_floor = _effective_floor(base_sw, base_cov), _effective_floor(new_sw, new_cov)
    if new_floor < old_floor and not any(f >= old_floor for f in ci_floors):
        by_option = (
            floor(new_sw) is not None
            or floor(base_sw) is not None
            and floor(new_sw) is None
            and new_cov.fail_under is None
        )
        path, line = (
            (where, at("addopts"))
            if by_option
            else (new_cov.source or base_cov.source or where, new_cov.lines.get("fail_under", 1))
        )
        now = f"{new_floor:g}" if new_floor else "0 (none)"
        findings.append(
            Finding(path, line, 1, "OG862", f"coverage floor lowered: fail-under {old_floor:g} -> {now}; {FLOOR}")
        )
    added = [p for p in new_cov.omit if p not in base_cov.omit]
    if added:
        sources = [p for p in context.python_files() if not TEST_FILES.search(p)]
        for pattern in added:
            hit = next((p for p in sources if _omits(pattern, p)), None)
            if hit:
                findings.append(
                    Finding(
                        new_cov.source,
                        new_cov.lines.get("omit", 1),
                        1,
                        "OG862",
                        f"coverage `omit` now excludes source files ({pattern!r} matches {hit}), so the floor no longer measures them; remove the pattern",
                    )
                )
    for pattern in [p for p in new_cov.exclude if p not in base_cov.exclude]:
        hit = context.excludes(pattern)
        if hit:
            line = new_cov.lines.get("exclude_also", new_cov.lines.get("exclude_lines", 1))
            findings.append(
                Finding(
                    new_cov.source,
                    line,
                    1,
                    "OG862",
                    f"coverage now excludes lines matching {pattern!r} ({hit}), so the floor no longer measures them; remove the pattern",
                )
            )
    return findings


def inline_snapshot_flags(pyproject: bytes | None) -> set[str]:
    """Regenerating modes in `[tool.inline-snapshot] default-flags`."""
    if pyproject is None or b"inline-snapshot" not in pyproject:
        return set()
    from oracle_guard.pytest_side.settings import load_toml

    try:
        table = load_toml(pyproject.decode("utf-8", "replace")).get("tool", {}).get("inline-snapshot", {})
    except Exception:
        return set()
    flags = table.get("default-flags", []) if isinstance(table, dict) else []
    return {str(f) for f in flags} & REGEN_VALUES["--inline-snapshot"][0] if isinstance(flags, list) else set()


def _effective_floor(switches: list[Switch], cov: Coverage) -> float:
    """pytest-cov's `--cov-fail-under` wins over coverage's `fail_under`."""
    option = floor(switches)
    value = option if option is not None else cov.fail_under
    return value or 0.0


def _partial(base: list[Switch], new: list[Switch], path: str, line: int, code: str, where: str) -> list[Finding]:
    """-x/--maxfail together with deselection: the run stops early and what it skipped is never seen."""
    stops = [s for s in new if s.option in EXITFIRST]
    selects = [s for s in new if s.option in SELECTING]
    if not (stops and selects):
        return []
    if any(s.option in EXITFIRST for s in base) and any(s.option in SELECTING for s in base):
        return []
    shown = " ".join(f"{s.option}{' ' + s.value if s.value else ''}" for s in stops + selects)
    return [
        Finding(
            path,
            line,
            1,
            code,
            f"{where} now stops at the first failure of a deselected run (`{shown}`): a partial run; remove one of them (`-x` alone is fine)",
        )
    ]


def compare_runner(path: str, base: ci.Runner, new: ci.Runner, context: Context, config_floor: float) -> list[Finding]:
    """One CI or task-runner file at both sides."""
    findings: list[Finding] = []
    old_lists = [parse(tokens) for _, tokens in base.pytest_arguments()]
    old_reruns = max([reruns(s)[0] for s in old_lists] or [0.0])
    old_regen = [r[0] for s in old_lists for r in regenerations(s)]
    old_floors = [f for s in old_lists for f in [floor(s)] if f is not None]
    old_floors += [
        f for c in base.commands if c.tool == "coverage" for f in [floor(parse(c.args), coverage=True)] if f is not None
    ]
    old_no_cov = sum(1 for s in old_lists if any(x.option == "--no-cov" for x in s))
    new_floors: list[tuple[float, int]] = []
    no_cov_lines = []
    for line, tokens in new.pytest_arguments():
        switches = parse(tokens)
        count, spelled = reruns(switches)
        if count > old_reruns and not _only_frozen(tokens, count, context):
            was = f" (base: {old_reruns:g})" if old_reruns else ""
            findings.append(
                Finding(path, line, 1, "OG860", f"pytest command now reruns failing tests: `{spelled}`{was}; {LEDGER}")
            )
        for spelled, what in regenerations(switches):
            if spelled in old_regen:
                old_regen.remove(spelled)
                continue
            findings.append(
                Finding(path, line, 1, "OG861", f"pytest command `{spelled}` {what} instead of comparing; {REGEN}")
            )
        found = floor(switches)
        if found is not None:
            new_floors.append((found, line))
        if any(s.option == "--no-cov" for s in switches):
            no_cov_lines.append(line)
        old_pairs = [
            p for p in old_lists if any(s.option in EXITFIRST for s in p) and any(s.option in SELECTING for s in p)
        ]
        if not old_pairs:
            findings += _partial([], switches, path, line, "OG859", "pytest command")
    for command in new.commands:
        if command.tool == "coverage":
            found = floor(parse(command.args), coverage=True)
            if found is not None:
                new_floors.append((found, command.line))
        if command.tool == "pytest" and strips_asserts(command.interpreter):
            if sum(1 for c in base.commands if c.tool == "pytest" and strips_asserts(c.interpreter)) == 0:
                findings.append(
                    Finding(
                        path,
                        command.line,
                        1,
                        "OG864",
                        f"pytest now runs under `python {' '.join(command.interpreter)}`: assert statements are stripped and cannot fail; remove the flag",
                    )
                )
    if old_floors:
        best_old = max(old_floors)
        best_new = max([f for f, _ in new_floors] or [0.0])
        if best_new < best_old and config_floor < best_old:
            line = next((at for f, at in new_floors if f == best_new), 1)
            now = f"{best_new:g}" if new_floors else "0 (none)"
            findings.append(
                Finding(path, line, 1, "OG862", f"coverage floor lowered: fail-under {best_old:g} -> {now}; {FLOOR}")
            )
    if len(no_cov_lines) > old_no_cov and (old_floors or config_floor):
        findings.append(
            Finding(
                path,
                no_cov_lines[-1],
                1,
                "OG862",
                "pytest command `--no-cov` switches coverage, and every floor on it, off; remove it",
            )
        )
    findings += _ignored(path, base, new)
    findings += _compare_env(path, base, new, context)
    return findings


def _ignored_kind(how: str) -> str:
    if how.startswith("|| "):
        return "|| rerun" if re.search(r"\b(py\.?test|tox|nox)\b", how) else "||"
    return how.split()[0] if how.startswith("; ") else how


def _ignored(path: str, base: ci.Runner, new: ci.Runner) -> list[Finding]:
    """OG865: a pytest run whose failure no longer fails the job (`|| true`, `continue-on-error: true`, ...)."""
    known = [_ignored_kind(c.ignored) for c in base.commands if c.tool == "pytest" and c.ignored]
    findings = []
    for command in new.commands:
        if command.tool != "pytest" or not command.ignored:
            continue
        kind = _ignored_kind(command.ignored)
        if kind in known:  # the same kind of fallback, however the commands are spelled
            known.remove(kind)
            continue
        if kind == "|| rerun":
            findings.append(
                Finding(
                    path,
                    command.line,
                    1,
                    "OG860",
                    f"pytest command now runs again when it fails (`{command.ignored}`); {LEDGER}",
                )
            )
        else:
            findings.append(
                Finding(
                    path,
                    command.line,
                    1,
                    "OG865",
                    f"pytest command's failure is now ignored ({command.ignored}): a red run passes; remove it",
                )
            )
    return findings


def _only_frozen(tokens: list[str], count: float, context: Context) -> bool:
    """A command that runs only named tests, each covered by a valid freeze with that budget."""
    targets = [t for t in tokens if not t.startswith("-") and "::" in t]
    plain = [t for t in tokens if not t.startswith("-") and "::" not in t and not t.replace(".", "").isdigit()]
    return bool(targets) and not plain and all(context.frozen(t, count) for t in targets)


def _compare_env(path: str, base: ci.Runner, new: ci.Runner, context: Context) -> list[Finding]:
    findings = []
    known = [(s.name, s.value) for s in base.environment()]
    for setting in new.environment():
        if (setting.name, setting.value) in known:
            known.remove((setting.name, setting.value))
            continue
        if not _truthy(setting.value):
            continue
        if setting.name == "PYTHONOPTIMIZE":
            findings.append(
                Finding(
                    path,
                    setting.line,
                    1,
                    "OG864",
                    f"`PYTHONOPTIMIZE={setting.value}` strips assert statements, so tests cannot fail; remove it",
                )
            )
        elif (
            setting.name == "INLINE_SNAPSHOT_DEFAULT_FLAGS"
            and {v.strip() for v in setting.value.split(",")} & REGEN_VALUES["--inline-snapshot"][0]
        ):
            findings.append(
                Finding(
                    path,
                    setting.line,
                    1,
                    "OG861",
                    f"`INLINE_SNAPSHOT_DEFAULT_FLAGS={setting.value}` rewrites inline snapshots instead of comparing; {REGEN}",
                )
            )
        elif setting.name not in ci.ADDOPTS_VARS and REGEN_ENV.search(setting.name) and context.reads_env(setting.name):
            findings.append(
                Finding(
                    path,
                    setting.line,
                    1,
                    "OG861",
                    f"`{setting.name}={setting.value}` is read by the project's code: a switch that regenerates expected output instead of comparing; {REGEN}",
                )
            )
    return findings


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


def tracked_python_files(target: str | None) -> list[str]:
    out = (
        git.run("ls-tree", "-r", "-z", "--name-only", target, check=False)
        if target
        else git.run("ls-files", "-z", "--", "*.py", check=False)
    )
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p.endswith(".py")]


def mentions(target: str | None, name: str, besides: str = "") -> bool:
    """Whether a tracked Python file of the new side (other than BESIDES) spells NAME: code that reads the variable."""
    args = ["grep", "-l", "-z", "-F", "-e", name]
    if target:
        args.append(target)
    out = git.run(*args, "--", "*.py", check=False).decode("utf-8", "surrogateescape")
    found = [p.split(":", 1)[1] if target else p for p in out.split("\0") if p]
    return any(p != besides for p in found)


# -- switches flipped from Python: a conftest or test module --------------------------------

OPTION_CODES = {
    "reruns": "OG860",
    "retries": "OG860",
    "force_flaky": "OG860",
    "force_regen": "OG861",
    "regen_all": "OG861",
    "snapshot_update": "OG861",
    "update_goldens": "OG861",
    "inline_snapshot": "OG861",
    "regtest_reset": "OG861",
    "no_cov": "OG862",
}
AUTO_APPROVERS = ("ReporterThatAutomaticallyApproves", "AutoApprover")
CODE_HINTS = (b"option", b"Automatically", b"AutoApprover", b"environ", b"putenv")


def _code_facts(text: str) -> list[tuple[str, str, int]] | None:
    """(what, value, line) of switches set in Python code: `config.option.X = v`,
    `setattr(config.option, "X", v)`, a name of an auto-approving reporter.
    Strings and comments never count (the code is parsed); None if it does not parse."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    facts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Attribute)
                    and target.value.attr == "option"
                ):
                    facts.append((f"option.{target.attr}", ast.unparse(node.value), node.lineno))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and len(node.args) == 3
        ):
            owner, name, value = node.args
            if (
                isinstance(owner, ast.Attribute)
                and owner.attr == "option"
                and isinstance(name, ast.Constant)
                and isinstance(name.value, str)
            ):
                facts.append((f"option.{name.value}", ast.unparse(value), node.lineno))
        elif isinstance(node, (ast.Name, ast.Attribute)):
            spelled = node.id if isinstance(node, ast.Name) else node.attr
            if spelled in AUTO_APPROVERS and isinstance(node.ctx, ast.Load):
                facts.append((spelled, "", node.lineno))
    return facts


def code_switches(
    change_set: ChangeSet,
    read_new: Callable[[list[str]], dict[str, bytes | None]],
    read_base: Callable[[list[str]], dict[str, bytes | None]],
) -> list[Finding]:
    """Options set on `config.option`, auto-approving reporters and regeneration variables set in test code."""
    paths = [p for p in change_set.changed_paths if p.endswith(".py") and TEST_FILES.search(p)]
    if not paths:
        return []
    new = read_new(paths)
    hot = [p for p in paths if any(h in (new.get(p) or b"") for h in CODE_HINTS)]
    if not hot:
        return []
    old_of = {p: change_set.old_path(p) for p in hot}
    base = read_base([o for o in old_of.values() if o])
    target = getattr(change_set, "target", None)
    findings = []
    for path in hot:
        text = (new[path] or b"").decode("utf-8", "replace")
        old = (base.get(old_of[path] or "") or b"").decode("utf-8", "replace")
        facts = _code_facts(text)
        if facts is None:
            continue  # a file that does not parse is reported by the Python hooks (OG001)
        known = [(what, value) for what, value, _ in (_code_facts(old) or [])]
        for what, value, line in facts:
            if (what, value) in known:
                known.remove((what, value))
                continue
            if what in AUTO_APPROVERS:
                findings.append(
                    Finding(
                        path, line, 1, "OG861", f"`{what}` approves every received output instead of comparing; {REGEN}"
                    )
                )
                continue
            name = what.split(".", 1)[1]
            code = OPTION_CODES.get(name)
            if code is None or not _truthy(value.strip("'\"")) or value in ("False", "None"):
                continue
            if code == "OG860" and any(w == what and _count(value) <= _count(v) for w, v in known):
                continue  # a lower count than the base's
            next_step = {"OG860": LEDGER, "OG861": REGEN, "OG862": "remove it"}[code]
            findings.append(
                Finding(
                    path, line, 1, code, f"`config.option.{name} = {value}` switches the run from code; {next_step}"
                )
            )
        known_env = [(s.name, s.value) for s in ci.read(path, old).env] if old else []
        for setting in ci.read(path, text).env:
            if (
                (setting.name, setting.value) in known_env
                or not _truthy(setting.value)
                or not REGEN_ENV.search(setting.name)
            ):
                continue
            if mentions(target, setting.name, besides=path):
                findings.append(
                    Finding(
                        path,
                        setting.line,
                        1,
                        "OG861",
                        f"`{setting.name}={setting.value}` set from test code is read by the project's code: a switch that regenerates expected output instead of comparing; {REGEN}",
                    )
                )
    return findings


def check(
    change_set: ChangeSet,
    base: dict[str, bytes | None],
    new: dict[str, bytes | None],
    base_settings: Settings,
    new_settings: Settings,
    runner_paths: list[str],
    contract_path: str = DEFAULT_CONTRACT,
) -> list[Finding]:
    """Every switch rule on the change; BASE and NEW hold the config, coverage and runner files."""
    target = getattr(change_set, "target", None)
    ledger: list[Contract | None] = []

    def frozen(node_id: str, count: float) -> bool:
        if not ledger:
            from oracle_guard.contract import contract

            ledger.append(contract.at_new(target, contract_path))
        entry = ledger[0].freeze_for(node_id) if ledger[0] is not None else None
        return entry is not None and count <= entry.remaining_reruns

    files: list[list[str]] = []

    def python_files() -> list[str]:
        if not files:
            files.append(tracked_python_files(target))
        return files[0]

    context = Context(
        python_files, lambda name: mentions(target, name), frozen, lambda pattern: _hides_source(pattern, target)
    )
    old_of = change_set.old_path
    base_runners = {p: _runner(p, base.get(old_of(p) or "")) for p in runner_paths}
    new_runners = {p: _runner(p, new.get(p)) for p in runner_paths}
    ci_floors = [
        f
        for r in new_runners.values()
        for _, tokens in r.pytest_arguments()
        for f in [floor(parse(tokens))]
        if f is not None
    ]
    ci_floors += [
        f
        for r in new_runners.values()
        for c in r.commands
        if c.tool == "coverage"
        for f in [floor(parse(c.args), coverage=True)]
        if f is not None
    ]
    base_cov, new_cov = coverage_of(base), coverage_of(new)
    findings = compare_config(base_settings, new_settings, base_cov, new_cov, ci_floors, context)
    added = inline_snapshot_flags(new.get("pyproject.toml")) - inline_snapshot_flags(base.get("pyproject.toml"))
    if added:
        findings.append(
            Finding(
                "pyproject.toml",
                1,
                1,
                "OG861",
                f"[tool.inline-snapshot] default-flags now {', '.join(sorted(added))}: every run rewrites inline snapshots; {REGEN}",
            )
        )
    config_floor = _effective_floor(parse(new_settings.addopts), new_cov)
    for path in runner_paths:
        if new.get(path) is not None:
            findings += compare_runner(path, base_runners[path], new_runners[path], context, config_floor)
    return findings


def _runner(path: str, data: bytes | None) -> ci.Runner:
    return ci.read(path, data.decode("utf-8", "replace")) if data is not None else ci.Runner([], [])
