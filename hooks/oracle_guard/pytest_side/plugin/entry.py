"""pytest entry point of oracle-guard (``pytest11``: ``oracle_guard``).

Loaded into every pytest session of every environment where oracle-guard is
installed, so it needs only the standard library, registers options, and
stays inert unless the contract file exists or ``--oracle-guard`` is given.

It lives in the ``oracle_guard`` package, whose name no project shares
(under ``python -m pytest`` the current directory comes first on
``sys.path``, so a generic top-level name such as ``hooks`` would be
shadowed by a project's own package).  The gate itself is imported from ``oracle_guard.pytest_side.plugin.gate`` only once switched on, with the
outcome watch of ``oracle_guard.pytest_side.plugin.watch``.

It fails closed (``ERROR: oracle-guard: ...``, exit 4) rather than stay inert
when the contract is there but not usable: not a regular file, not under the
rootdir pytest chose, gate options set from code, its plugins blocked.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from oracle_guard.repo.paths import DEFAULT_CONTRACT

if TYPE_CHECKING:  # for annotations only
    import pytest

RERUNS_KEY = "oracle_guard_reruns"


def _not_rewritten() -> None:
    """Take this package out of pytest's assertion rewriting, which marks every module of a pytest11 plugin.

    Its asserts are internal checks no test reads, and each module the gate imports through pytest's import
    hook costs a second path search and a pyc of pytest's own (on a read-only install, a rewrite on every
    run).  pytest has no public switch for an installed plugin; where its hook looks different, nothing
    changes.
    """
    import sys

    for finder in sys.meta_path:
        if type(finder).__module__ != "_pytest.assertion.rewrite":
            continue
        marks, cache = getattr(finder, "_must_rewrite", None), getattr(finder, "_marked_for_rewrite_cache", None)
        if isinstance(marks, set) and isinstance(cache, dict):
            marks.discard("oracle_guard")
            for name in [n for n in cache if n == "oracle_guard" or n.startswith("oracle_guard.")]:
                del cache[name]


_not_rewritten()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("oracle-guard", "oracle-guard run-time gate")
    group.addoption(
        "--oracle-guard", action="store_true", default=False, help="switch the gate on even without a contract file"
    )
    group.addoption(
        "--oracle-guard-contract",
        metavar="PATH",
        default=None,
        help=f"contract file, relative to the rootdir (default: {DEFAULT_CONTRACT})",
    )
    group.addoption(
        "--oracle-guard-allow-skips",
        action="store_true",
        default=False,
        help="local use only: do not fail the session on new skips/xfails",
    )
    group.addoption(
        "--oracle-guard-report",
        metavar="PATH",
        default=None,
        help="write a JSON report of reruns consumed per freeze id and unexpected skips",
    )
    group.addoption(
        "--oracle-guard-now",
        metavar="TIME",
        default=None,
        help="the current time for freeze expiry (ISO-8601; default: the clock)",
    )


def pytest_configure(config: pytest.Config) -> None:
    explicit = config.getoption("oracle_guard_contract")
    rel = explicit or DEFAULT_CONTRACT
    path = os.path.join(str(config.rootpath), rel)
    problem = _contract_problem(path)
    if problem == "missing":
        _fail_if_contract_elsewhere(config, rel, explicit)
        if not config.getoption("oracle_guard"):
            return  # inert: the common case, costs one stat()
    elif problem:
        _fail(f"{rel}: {problem}; the contract must be a regular file in the repository (restore it)")
    _fail_on_tampered_options(config)
    if config.getoption("noconftest") and any(
        os.path.isfile(os.path.join(str(config.rootpath), d, "conftest.py")) for d in ("", "tests", "test", "testing")
    ):
        _fail(
            "--noconftest drops the project's conftest files, their fixtures and checks, while the contract is in force: remove it"
        )
    if config.getoption("collectonly"):
        return  # nothing runs; collection-snapshot looks at collection itself
    if any(config.getoption(o, False) for o in ("showfixtures", "show_fixtures_per_test", "setuponly", "setupplan")):
        return  # an information mode: no test runs (in CI, pytest_tamper's OG871 reports the option)
    if _pluggy_too_old():
        _fail("the gate needs pluggy 1.1 or newer (its hook wrappers); upgrade pytest and pluggy")
    from oracle_guard.pytest_side.plugin.gate import Guard
    from oracle_guard.pytest_side.plugin.watch import Watch

    guard = Guard(config, path, rel)
    plugins = [(guard, "oracle_guard_gate"), (Watch(config, guard), "oracle_guard_watch")]
    if guard.freeze_reruns is not None:  # only where a freeze can give a test reruns: no hook call per test else
        plugins.append((guard.freeze_reruns, "oracle_guard_freezes"))
    for plugin, name in plugins:
        if config.pluginmanager.register(plugin, name) is None:
            _fail(f"its plugin {name!r} is blocked (`-p no:{name}`): remove that option")


# -- fail closed: the contract, the rootdir and the options are what the project says --


def _fail(message: str) -> None:
    import pytest

    raise pytest.UsageError(f"oracle-guard: {message}")


def _pluggy_too_old() -> bool:
    import pluggy

    try:
        return tuple(int(part) for part in pluggy.__version__.split(".")[:2]) < (1, 1)
    except ValueError:  # a development version: new enough
        return False


def _contract_problem(path: str) -> str | None:
    """None for a regular file, "missing", or what is wrong with it (one lstat)."""
    import stat

    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if stat.S_ISLNK(info.st_mode):
        return "is a symlink"
    if stat.S_ISDIR(info.st_mode):
        return "is a directory"
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    if not os.access(path, os.R_OK):
        return "cannot be read (permission denied)"
    return None


def _fail_if_contract_elsewhere(config: pytest.Config, rel: str, explicit: str | None) -> None:
    """A contract that is not where the gate looks: another rootdir, or a mistyped path."""
    if explicit:
        _fail(f"--oracle-guard-contract {explicit}: no such file under the rootdir {config.rootpath}")
    here = str(config.invocation_params.dir)
    moved = config.getoption("rootdir") or config.getoption("inifilename") or config.inipath is not None
    if here != str(config.rootpath) and moved and _contract_problem(os.path.join(here, rel)) != "missing":
        source = f"the configuration file {config.inipath}" if config.inipath is not None else "--rootdir"
        _fail(
            f"the contract {os.path.join(here, rel)} is not under pytest's rootdir {config.rootpath} (set by {source}); "
            "run pytest with the project's own rootdir (remove --rootdir/-c or the configuration file that moved it), "
            "or pass --oracle-guard-contract with the contract's path relative to that rootdir"
        )


def _fail_on_tampered_options(config: pytest.Config) -> None:
    from oracle_guard.pytest_side.plugin.options import tampered_options

    changed = tampered_options(config)
    if changed:
        _fail(
            f"{', '.join(changed)} was changed by a conftest or plugin, not given on the command line or in addopts: remove that code"
        )


class _Sentinel:
    """A second entry point (``oracle_guard_sentinel``): `-p no:oracle_guard` alone cannot hide the gate."""

    def pytest_configure(self, config: pytest.Config) -> None:
        import sys

        if config.pluginmanager.is_registered(sys.modules[__name__]):
            return
        rel = config.getoption("oracle_guard_contract", None) or DEFAULT_CONTRACT
        if _contract_problem(os.path.join(str(config.rootpath), rel)) != "missing":
            _fail(f"the run-time gate is switched off (`-p no:oracle_guard`) while {rel} exists: remove that option")


sentinel = _Sentinel()
