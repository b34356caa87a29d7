"""How a probe's pytest process starts: ``python -c RUNNER CONFIG ARGS...`` (flips, neighbours, suspects).

RUNNER loads probes/kit.py by path, gives it the receipt socket's descriptor (probes/receipts.py),
makes ``sys.argv``/``sys.orig_argv``/``__main__`` look like ``python -m pytest`` (the tests as a user
names them), loads each plugin by path with the kit as its ``kit`` and its results file as
``OUTPUT``, and runs ``pytest.main``.  Nothing it defines stays in ``__main__``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

from oracle_guard.probes import receipts


def log_tail(path: str) -> str:
    """The last line of a pytest process's log that says something (not a rule of = _ -), cut to 300 characters."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = [line.strip() for line in f if line.strip() and not set(line.strip()) <= set("=_-")]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


RUNNER = """\
def _oracle_guard_run():
    import importlib.util, json, sys
    report = globals().pop("_oracle_guard_imports", lambda: None)  # pytest_side/barrier.py REPORT_IMPORTS
    globals().pop("_oracle_guard_run")  # __main__ holds what `python -m pytest` leaves there, no more
    try:
        import pytest
    except ImportError as exc:  # not installed, or shadowed by a module of the project
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(97)
    config = json.loads(sys.argv[1])
    args = sys.argv[2:]
    spec = importlib.util.spec_from_file_location(config["kit"][0], config["kit"][1])
    kit = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = kit
    spec.loader.exec_module(kit)
    kit.RECEIPTS = config.get("receipts")
    kit.look_plain(kit.typed(args))
    plugins = []
    for path, output in config["plugins"]:
        spec = importlib.util.spec_from_file_location("_oracle_guard_" + str(len(plugins)), path)
        mod = importlib.util.module_from_spec(spec)
        mod.kit = kit
        spec.loader.exec_module(mod)
        mod.OUTPUT = output
        plugins.append(mod)
    code = int(pytest.main(args, plugins=plugins))
    report()
    sys.exit(code)


_oracle_guard_run()
"""


def runner_config(plugins: Sequence[Sequence[str]], channel: int | None) -> str:
    """RUNNER's first argument: the kit (probes/kit.py), the receipts' descriptor, the plugins and their outputs."""
    from oracle_guard.probes import kit

    return json.dumps({"kit": [kit.NAME, os.path.abspath(kit.__file__)], "receipts": channel, "plugins": plugins})


def own_fds(channel: receipts.Receipts) -> list[int]:
    """The descriptors a probe process inherits: its receipt socket, when the system has one."""
    return [channel.fd] if channel.fd is not None else []
