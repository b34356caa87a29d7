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
from typing import TYPE_CHECKING, Callable, NamedTuple

from oracle_guard.pytest_side.runners import files as ci
from oracle_guard.pytest_side.switches.coverage import Coverage, _hides_source, _omits, coverage_of
from oracle_guard.pytest_side.switches.coverage import pragmas as pragmas
from oracle_guard.pytest_side.switches.in_code import code_switches as code_switches
from oracle_guard.pytest_side.switches.in_code import mentions as mentions
from oracle_guard.pytest_side.switches.options import (
    EXITFIRST,
    FLOOR,
    LEDGER,
    REGEN,
    REGEN_ENV,
    REGEN_VALUES,
    RERUN_INI,
    SELECTING,
    Switch,
    _truthy,
    floor,
    parse,
    regenerations,
    reruns,
    strips_asserts,
)
from oracle_guard.repo import git
from oracle_guard.repo.paths import DEFAULT_CONTRACT, TEST_FILES
from oracle_guard.reporting.report import Finding

if TYPE_CHECKING:  # types only: the callers pass these in
    from oracle_guard.contract.contract import Contract
    from oracle_guard.pytest_side.config.settings import Settings
    from oracle_guard.repo.changes import ChangeSet

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
    from oracle_guard.pytest_side.config.settings import load_toml

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


def tracked_python_files(target: str | None) -> list[str]:
    out = (
        git.run("ls-tree", "-r", "-z", "--name-only", target, check=False)
        if target
        else git.run("ls-files", "-z", "--", "*.py", check=False)
    )
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p.endswith(".py")]


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
