"""What the probe plugins share inside the project's interpreter: standard library only, loaded by path.

The probes' runner (flips/gate.py ``RUNNER``) loads this file by path before the plugins and gives
each plugin module its copy as ``kit`` before the module runs; a plugin imported by the gate (for
its path) imports ``oracle_guard.probes.kit`` instead.

- ``sibling``: a module beside a plugin, by path (the project's interpreter may hold another
  oracle_guard, or none).
- ``write_results``: a plugin's results file, and its *receipt*: the file's digest sent on the
  datagram socket the gate handed the process (``RECEIPTS``, a descriptor).  The kernel stamps each
  datagram with the sending process's id, so the gate can tell, from outside, whether the file it
  reads is the one the run's own process reported once (probes/receipts.py), and not one a forked
  copy of it wrote.
- ``one_process``: xdist switched off in a probe run (its controller runs no test, so no probe
  would judge one), whatever the project's options ask.
- ``look_plain``: ``sys.argv``, ``sys.orig_argv`` and ``__main__`` as ``python -m pytest ARGS`` has them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import socket
import sys
from types import ModuleType
from typing import Any

NAME = "_oracle_guard_probe_kit"
RECEIPTS: int | None = None  # the descriptor of the gate's receipt socket (set by the runner)


def sibling(anchor: str, name: str) -> ModuleType:
    """The module NAME beside the file ANCHOR, loaded by path as ``_oracle_guard_<folder>_<name>``."""
    folder = os.path.dirname(os.path.abspath(anchor))
    spec = importlib.util.spec_from_file_location(
        f"_oracle_guard_{os.path.basename(folder)}_{name}", os.path.join(folder, f"{name}.py")
    )
    if spec is None or spec.loader is None:
        raise ImportError(name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def write_results(path: str, data: Any) -> None:
    """DATA as JSON at PATH, then its receipt to the gate (when it gave a socket)."""
    text = json.dumps(data)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    if RECEIPTS is None:
        return
    receipt = json.dumps({"path": path, "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()})
    with socket.fromfd(RECEIPTS, socket.AF_UNIX, socket.SOCK_DGRAM) as channel:
        channel.send(receipt.encode("utf-8"))


def one_process(config: Any) -> None:
    """pytest-xdist off for this run (``-n``/``--dist`` from the project's options): the probes judge in-process."""
    option = config.option
    if config.pluginmanager.hasplugin("xdist") and getattr(option, "dist", "no") != "no":
        option.dist, option.numprocesses, option.tx = "no", 0, []


VALUED = ("-p", "-o", "-n", "-k", "-m", "-c", "-W", "-r", "--rootdir", "--dist", "--basetemp")


def typed(args: list[str]) -> list[str]:
    """What a user types of ARGS: the tests, not the gate's options (flags and their values)."""
    shown: list[str] = []
    value = False
    for arg in args:
        if value:
            value = False
        elif arg in VALUED:
            value = True
        elif not arg.startswith("-"):
            shown.append(arg)
    return shown


def look_plain(args: list[str]) -> None:
    """What a process started as ``python -m pytest ARGS`` shows of how it was started."""
    spec = importlib.util.find_spec("pytest.__main__")
    script = spec.origin if spec is not None and spec.origin else "-m"
    sys.argv[:] = [script, *args]
    orig = getattr(sys, "orig_argv", None)  # Python 3.10+
    if isinstance(orig, list):
        orig[:] = [*orig[:1], "-m", "pytest", *args]
    main = sys.modules.get("__main__")
    if main is not None and spec is not None:
        main.__spec__ = spec
        main.__file__ = script
        main.__package__ = "pytest"
