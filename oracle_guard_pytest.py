"""pytest entry point of oracle-guard (``pytest11``: ``oracle_guard``).

Loaded into every pytest session of every environment where oracle-guard is
installed, so it needs only the standard library, registers options, and
stays inert unless the contract file exists or ``--oracle-guard`` is given.

It is a top-level module with a unique name rather than part of the
``hooks`` package on purpose: under ``python -m pytest`` the current
directory comes first on ``sys.path``, and a project's own ``hooks/``
package would shadow ours and break every test run.  The gate itself is
imported from ``hooks.pytest_plugin`` only once switched on.
"""
from __future__ import annotations

import os
from typing import Any

DEFAULT_CONTRACT = "tests/agent_contract.yaml"
RERUNS_KEY = "oracle_guard_reruns"


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("oracle-guard", "oracle-guard run-time gate")
    group.addoption("--oracle-guard", action="store_true", default=False, help="switch the gate on even without a contract file")
    group.addoption("--oracle-guard-contract", metavar="PATH", default=None, help=f"contract file, relative to the rootdir (default: {DEFAULT_CONTRACT})")
    group.addoption("--oracle-guard-allow-skips", action="store_true", default=False, help="local use only: do not fail the session on new skips/xfails")
    group.addoption("--oracle-guard-report", metavar="PATH", default=None, help="write a JSON report of reruns consumed per freeze id and unexpected skips")
    group.addoption("--oracle-guard-now", metavar="TIME", default=None, help="the current time for freeze expiry (ISO-8601; default: the clock)")


def pytest_configure(config: Any) -> None:
    rel = config.getoption("oracle_guard_contract") or DEFAULT_CONTRACT
    path = os.path.join(str(config.rootpath), rel)
    if not (config.getoption("oracle_guard") or os.path.isfile(path)):
        return  # inert: the common case, costs one stat()
    if config.getoption("collectonly"):
        return  # nothing runs; collection-snapshot looks at collection itself
    from hooks.pytest_plugin import Guard

    config.pluginmanager.register(Guard(config, path, rel), "oracle_guard_gate")
