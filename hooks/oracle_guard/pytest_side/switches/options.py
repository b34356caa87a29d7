"""pytest-style options in addopts and on command lines, and what they switch (OG860-OG864's vocabulary).

Parsing (``--opt=v``, ``--opt v``, ``-kEXPR``, clusters ``-xq``) and the readings the
switch rules share: the rerun count, the regenerating modes, the coverage floor,
an assert-stripping interpreter; plus the next-step texts their findings end with.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from oracle_guard.pytest_side.runners import files as ci
from oracle_guard.repo.paths import DEFAULT_CONTRACT

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
