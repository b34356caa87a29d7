"""Static half of the run-time gate's defence: nothing in the patch may switch it off.

The pytest plugin judges what really ran, so a patch that wants a red suite
green has two more doors: switch the plugin off or blind it (``-p
no:oracle_guard``, ``--oracle-guard-allow-skips``, ``PYTEST_DISABLE_PLUGIN_AUTOLOAD``,
another rootdir or ini file, a contract that stops being a file), or keep it
on and change the outcomes it sees (a conftest hook that rewrites
``report.outcome``, swallows the call, resets ``session.exitstatus`` or exits
the process).  This module finds both in the change, compared with the base:

- OG870 an option, environment variable or setting that switches the gate off
  or points it elsewhere (config files, CI, task runners, env files);
- OG871 a pytest option that changes what pytest reads (``--noconftest``,
  ``-c``/``--config-file``, ``--rootdir``, ``-o`` of a setting that decides
  what runs);
- OG872 a new pytest configuration file below the root, or a root file that
  now shadows the one the base used and drops its settings;
- OG873 the contract file turned into a directory, symlink or other non-file;
- OG874 conftest/plugin code that reaches the gate or pytest's options
  (``unregister``, ``set_blocked``, ``config.option.x = ...``, the gate's
  names, ``PYTEST_ADDOPTS``);
- OG875 conftest/plugin code that changes outcomes (``report.outcome = ...``,
  ``force_result``, a wrapper that swallows the exception, a plain
  ``pytest_pyfunc_call``/``pytest_runtest_protocol``/``pytest_runtestloop``
  that returns, ``pytest_report_teststatus`` that calls a result passed,
  ``pytest_pycollect_makeitem`` that returns nothing, ``session.exitstatus``/
  ``testsfailed`` written, ``item.runtest``/``item.obj`` replaced);
- OG876 a process exit in a conftest/plugin (``os._exit``, ``sys.exit``,
  ``pytest.exit``, ``raise SystemExit``, ``os.kill``), also one handed on to
  run later (``atexit.register(os._exit, 0)``, analysis/deferred.py).

Code already at the base (the same statement in the same function) passes:
an unrelated conftest edit, a new fixture, a hook that only adds markers or
reports.  Modules newly loaded through ``pytest_plugins`` or ``-p`` are judged
as wholly new.  Called from pytest_config.check; reads nothing unless a
scanned file, a conftest or the contract changed.

This module is the check (and the contract file, OG873, and configuration
files, OG872); the text scan is tamper_scan.py, conftest and plugin code
tamper_code.py.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
from collections import Counter
from collections.abc import Iterable
from typing import Callable, TypeVar

from oracle_guard.analysis.pysource import Module, SourceError
from oracle_guard.pytest_side.tamper.code import _MIGHT_MATTER, Fact, _module_candidates, code_facts, plugin_names
from oracle_guard.pytest_side.tamper.scan import CONFIG_NAMES, Token, scanned, text_tokens
from oracle_guard.pytest_side.tamper.scan import GATE as GATE
from oracle_guard.repo import changes, git
from oracle_guard.repo.paths import DEFAULT_CONTRACT
from oracle_guard.reporting.report import Finding, UsageError

_T = TypeVar("_T")

# Settings pytest_config compares with the base whichever file holds them (OG852-OG856).
COMPARED_ELSEWHERE = {
    "testpaths",
    "python_files",
    "python_classes",
    "python_functions",
    "norecursedirs",
    "xfail_strict",
    "strict",
    "filterwarnings",
}
# What a shadowing file must carry over: where the gate is loaded and required, and what every test uses
# (found on pytest's history: an obsolete `rsyncdirs` left behind is not a finding).
SHADOW_KEYS = {"addopts", "required_plugins", "usefixtures", "empty_parameter_set_mark"}
NEXT = "remove it (only what the base already has is trusted; a maintainer lands such a change on the base branch)"


# -- the contract file ------------------------------------------------------------


def _new_kind(change_set: changes.ChangeSet, path: str) -> str | None:
    """What PATH is on the new side: None (a regular file or absent) or what it is instead."""
    if change_set.target:
        out = git.run("ls-tree", "-z", change_set.target, "--", path, check=False)
        mode = out.split(b" ", 1)[0] if out else b""
        return {b"120000": "a symlink", b"040000": "a directory", b"160000": "a submodule"}.get(mode)
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    if stat.S_ISLNK(info.st_mode):
        return "a symlink"
    if stat.S_ISDIR(info.st_mode):
        return "a directory"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    return None


def _contract_findings(change_set: changes.ChangeSet, contracts: Iterable[str], blobs: _Blobs) -> list[Finding]:
    findings = []
    touched = set(change_set.changed_paths) | set(change_set.deleted)
    for path in dict.fromkeys(contracts):
        if not any(p == path or p.startswith(path + "/") for p in touched):
            continue
        kind = _new_kind(change_set, path)
        if kind is None and path in change_set.changed_paths:
            data = blobs.new([path])[path]
            kind = "empty" if data is not None and not data.strip() else None
        if kind:
            findings.append(
                Finding(
                    path,
                    1,
                    1,
                    "OG873",
                    f"the contract is now {kind}: the run-time gate cannot read it; restore the regular file as the base has it",
                )
            )
    return findings


# -- the whole check ----------------------------------------------------------------


_Keyed = TypeVar("_Keyed", Token, Fact)


def _multiset_new(base: Iterable[tuple[str, ...]], new: Iterable[_Keyed]) -> list[_Keyed]:
    """Items of NEW whose key is not (as often) in BASE."""
    known = Counter(base)
    out: list[_Keyed] = []
    for item in new:
        if known[item.key]:
            known[item.key] -= 1
        else:
            out.append(item)
    return out


def _lenient(read: Callable[[str, bytes], _T], path: str, data: bytes) -> _T | None:
    """A config file below the root that is not valid INI/TOML is test data, not pytest's configuration
    (pytest reads only the rootdir's chain); at the root pytest_config refuses it."""
    try:
        return read(path, data)
    except UsageError:
        if "/" in path:
            return None
        raise


class _Blobs:
    """Both sides' bytes, each path read once: one `git cat-file` per side, not one per question."""

    def __init__(
        self, change_set: changes.ChangeSet, new: dict[str, bytes | None] | None, base: dict[str, bytes | None] | None
    ) -> None:
        self.change_set = change_set
        self._new: dict[str, bytes | None] = dict(new or {})
        self._base: dict[str, bytes | None] = dict(base or {})

    def new(self, paths: list[str]) -> dict[str, bytes | None]:
        missing = [p for p in paths if p and p not in self._new]
        if missing:
            self._new.update(self.change_set.read_new(missing))
        return {p: self._new.get(p) for p in paths if p}

    def base(self, paths: list[str]) -> dict[str, bytes | None]:
        missing = [p for p in paths if p and p not in self._base]
        if missing:
            self._base.update(self.change_set.read_base(missing))
        return {p: self._base.get(p) for p in paths if p}


def check(
    change_set: changes.ChangeSet,
    addopts_of: Callable[[str, bytes], list[str] | None],
    config_settings: Callable[[str, bytes], dict[str, list[str]] | None],
    new_read: dict[str, bytes | None] | None = None,
    base_read: dict[str, bytes | None] | None = None,
) -> list[Finding]:
    """Gate switches, tampering code and broken contracts in the change, compared with the base.

    ADDOPTS_OF(path, data) gives a config file's addopts (None: no pytest
    section); CONFIG_SETTINGS(path, data) all its pytest settings.  NEW_READ
    and BASE_READ are blobs the caller has read already (base ones by base path).
    """
    touched = list(change_set.changed_paths)
    gone = list(change_set.deleted)
    scanned_new = [p for p in touched if scanned(p)]
    scanned_old = [change_set.old_path(p) or "" for p in scanned_new] + [p for p in gone if scanned(p)]
    conftests = [p for p in touched if posixpath.basename(p) == "conftest.py"]
    old_conftests = [change_set.old_path(p) or "" for p in conftests] + [
        p for p in gone if posixpath.basename(p) == "conftest.py"
    ]
    blobs = _Blobs(change_set, new_read, base_read)
    findings = _contract_findings(change_set, [DEFAULT_CONTRACT], blobs)
    if not (scanned_new or scanned_old or conftests or old_conftests):
        return findings
    root_configs = list(CONFIG_NAMES) if any(p in CONFIG_NAMES for p in scanned_new + scanned_old) else []
    new = blobs.new(scanned_new + conftests + root_configs)
    base = blobs.base([p for p in scanned_old + old_conftests + root_configs if p])

    def tokens_of(blobs: dict[str, bytes | None], paths: list[str]) -> list[Token]:
        out: list[Token] = []
        for path in paths:
            data = blobs.get(path)
            if data is None:
                continue
            addopts = _lenient(addopts_of, path, data) if posixpath.basename(path) in CONFIG_NAMES else None
            out += text_tokens(path, data.decode("utf-8", "replace"), addopts)
        return out

    new_tokens, base_tokens = tokens_of(new, scanned_new), tokens_of(base, [p for p in scanned_old if p])
    for token in _multiset_new([t.key for t in base_tokens], new_tokens):
        kind = token.key[0]
        if kind == "gate-off":
            findings.append(
                Finding(
                    token.path,
                    token.line,
                    1,
                    "OG870",
                    f"new {token.message}: the run-time gate is switched off or blinded; {NEXT}",
                )
            )
        elif kind in ("noconftest", "no-run", "config-file", "rootdir", "override"):
            findings.append(Finding(token.path, token.line, 1, "OG871", f"new {token.message}; {NEXT}"))
    for token in _multiset_new([t.key for t in new_tokens], base_tokens):
        if token.key[0] == "gate-on":
            where = next(
                (f"{change_set.old_path(p) or p}" for p in scanned_new if (change_set.old_path(p) or "") == token.path),
                token.path,
            )
            findings.append(
                Finding(
                    where,
                    1,
                    1,
                    "OG870",
                    f"lost {token.message} (was {token.path}:{token.line}): the run-time gate may no longer be switched on; restore it",
                )
            )
    findings += _config_files(change_set, blobs, scanned_new, config_settings)

    # Conftests, and plugin modules they or the command lines load.
    base_loads = {t.key[1] for t in base_tokens if t.key[0] == "plugin-load"}
    new_loads = {t.key[1]: t.path for t in new_tokens if t.key[0] == "plugin-load"}
    modules: dict[str, Module] = {}
    base_modules: dict[str, Module] = {}
    for path in conftests:
        data = new.get(path)
        if data is None or not re.search(_MIGHT_MATTER, data):
            continue  # a conftest of fixtures only: nothing to parse
        try:
            modules[path] = Module.from_source(path, data)
        except SourceError:
            continue  # pytest_config reports it (OG001)
        for name, _ in plugin_names(modules[path]):
            new_loads.setdefault(name, path)
    new_facts = [(m, f) for m in modules.values() for f in code_facts(m)]
    judged = set(modules)
    if not (new_facts or new_loads):
        return findings  # the base is read only when the new side has something to compare
    for path in old_conftests:
        data = base.get(path) if path else None
        if data is None or not re.search(_MIGHT_MATTER, data):
            continue
        try:
            base_modules[path] = Module.from_source(path, data)
        except SourceError:
            continue
        base_loads.update(name for name, _ in plugin_names(base_modules[path]))
    findings += _loaded_modules(change_set, blobs, new_loads, base_loads, modules, base_modules)
    new_facts += [(m, f) for path, m in modules.items() if path not in judged for f in code_facts(m)]
    base_facts = [f.key for m in base_modules.values() for f in code_facts(m)]
    known = Counter(base_facts)
    for module, fact in new_facts:
        if known[fact.key]:
            known[fact.key] -= 1
            continue
        where = f" in `{fact.key[1]}`" if fact.key[1] else ""
        findings.append(module.finding(fact.node, fact.code, f"new code{where} {fact.message}; {NEXT}"))
    return findings


def _loaded_modules(
    change_set: changes.ChangeSet,
    reader: _Blobs,
    new_loads: dict[str, str],
    base_loads: set[str],
    modules: dict[str, Module],
    base_modules: dict[str, Module],
) -> list[Finding]:
    """Plugin modules of the repository that the change loads: new ones are judged as wholly new,
    edited ones that the base loaded too against their base version."""
    findings: list[Finding] = []
    candidates = {name: _module_candidates(name, near) for name, near in new_loads.items()}
    if not candidates:
        return findings
    blobs = reader.new([p for paths in candidates.values() for p in paths])
    for name, paths in candidates.items():
        path = next((p for p in paths if blobs.get(p) is not None), None)
        if path is None or path in modules:
            continue  # an installed plugin, or a conftest judged anyway
        if name in base_loads and not change_set.is_changed(path):
            continue  # loaded at the base as it is
        try:
            modules[path] = Module.from_source(path, blobs[path])  # type: ignore[arg-type]  # PATH has bytes (above)
        except SourceError as exc:
            findings.append(exc.finding(path))
            continue
        old = change_set.old_path(path)
        if name in base_loads and old:
            data = reader.base([old])[old]
            try:
                if data is not None:
                    base_modules[old] = Module.from_source(old, data)
            except SourceError:
                pass
    return findings


def _config_files(
    change_set: changes.ChangeSet,
    blobs: _Blobs,
    paths: list[str],
    settings_of: Callable[[str, bytes], dict[str, list[str]] | None],
) -> list[Finding]:
    """New pytest configuration below the root, or a root file that shadows the base's choice."""
    findings = []
    contract_at_base = blobs.base([DEFAULT_CONTRACT])[DEFAULT_CONTRACT] is not None
    for path in paths:
        name = posixpath.basename(path)
        if name not in CONFIG_NAMES or "/" not in path or not contract_at_base:
            continue  # without a contract there is no gate for a subfolder's rootdir to hide (pytest's testing/plugins_integration)
        data = blobs.new([path])[path]
        old_path = change_set.old_path(path)
        old = blobs.base([old_path])[old_path] if old_path else None
        if data is None or _lenient(settings_of, path, data) is None:
            continue
        if old is None or _lenient(settings_of, path, old) is None:
            findings.append(
                Finding(
                    path,
                    1,
                    1,
                    "OG872",
                    f"new pytest configuration in {posixpath.dirname(path)}/: pytest run on tests there makes it the rootdir, ignores the root configuration and does not find the contract; move its settings to the root configuration, or {NEXT}",
                )
            )
    root_new = [
        "pytest.toml",
        ".pytest.toml",
        "pytest.ini",
        ".pytest.ini",
        "pyproject.toml",
        "tox.ini",
        "setup.cfg",
    ]  # pytest's order
    if not any(p in paths or p in change_set.deleted for p in root_new):
        return findings
    new_all = blobs.new(root_new)
    base_all = blobs.base(root_new)

    def picked(blobs: dict[str, bytes | None]) -> tuple[str, dict[str, list[str]]] | None:
        for p in root_new:
            data = blobs.get(p)
            if data is None:
                continue
            found = settings_of(p, data)
            if found is not None or p in ("pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml"):
                return p, found or {}
        return None

    was, now = picked(base_all), picked(new_all)
    if was and now and was[0] != now[0]:
        # Lost: a value of the old file that the new one does not hold (more addopts is fine).
        lost = sorted(k for k, v in was[1].items() if not set(v) <= set(now[1].get(k, [])) and k in SHADOW_KEYS)
        if lost:
            findings.append(
                Finding(
                    now[0],
                    1,
                    1,
                    "OG872",
                    f"pytest now reads {now[0]} instead of {was[0]}, and {', '.join(lost)} from {was[0]} no longer apply; move every setting over, or {NEXT}",
                )
            )
    return findings
