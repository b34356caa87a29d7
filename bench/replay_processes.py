"""Where one `oracle-guard` command's CPU goes: the gate's own process and each process it waits for.

    cd /tmp/bench-toolz      # bench/replay_cache.py's clone, its change in the work tree
    env -u PYTHONDONTWRITEBYTECODE ORACLE_GUARD_CACHE=/tmp/og-cache \\
        python /path/to/bench/replay_processes.py check -q --replay --base HEAD --python PY

Runs the command in this interpreter (oracle-guard installed in it) and reads each child's CPU
from the kernel's accounting when the gate waits for it (`os.wait4`: user + system, the child's own
waited-for descendants included, so a confined run counts its launcher and its pytest). Printed to
stderr at exit, grouped by what the child was: a confined pytest run, another interpreter, or a git
subcommand. The gate's own line is its process time (`time.process_time`). Run it twice and
read the second run for a warm cache. Used for docs/speed.md's "The floor under issue 37's targets".
"""

from __future__ import annotations

import atexit
import collections
import os
import subprocess
import sys
import time
from typing import Any

_SPENT: list[tuple[float, str]] = []


def _label(args: Any) -> str:
    text = args if isinstance(args, str) else " ".join(map(str, args))
    words = text.split()
    if words and os.path.basename(words[0]) == "git":
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w and not w.startswith("/")]
        return f"git {rest[0] if rest else ''}"
    if "landlock.py" in text:
        return "confined run: " + " ".join(words[-4:])[:100]
    if " -c " in text:
        return "interpreter -c " + text.split(" -c ", 1)[1][:60].replace("\n", " ")
    return text[:100]


def _watch_children() -> None:
    """Every subprocess.Popen wait goes through _try_wait: read the rusage there."""
    popen: Any = subprocess.Popen
    init, try_wait = popen.__init__, popen._try_wait

    def __init__(self: Any, args: Any, *rest: Any, **options: Any) -> None:
        init(self, args, *rest, **options)
        self._bench_label = _label(args)

    def _try_wait(self: Any, flags: int) -> tuple[int, int]:
        try:
            pid, status, usage = os.wait4(self.pid, flags)
        except ChildProcessError:
            return try_wait(self, flags)
        if pid:
            _SPENT.append((usage.ru_utime + usage.ru_stime, getattr(self, "_bench_label", "?")))
        return pid, status

    popen.__init__, popen._try_wait = __init__, _try_wait


def _report(started: float) -> None:
    cpu: collections.Counter[str] = collections.Counter()
    count: collections.Counter[str] = collections.Counter()
    for seconds, label in _SPENT:
        key = "git (every subcommand)" if label.startswith("git ") else label
        cpu[key] += seconds
        count[key] += 1
    own = time.process_time() - started
    lines = [f"{own:7.3f} s  the gate's own process"]
    lines += [f"{seconds:7.3f} s  x{count[key]:<3} {key}" for key, seconds in cpu.most_common()]
    lines.append(f"{own + sum(cpu.values()):7.3f} s  in all")
    sys.stderr.write("\n" + "\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        sys.stderr.write("usage: replay_processes.py ORACLE-GUARD-ARGUMENTS...\n")
        return 2
    from oracle_guard.commands.cli import main as gate

    _watch_children()
    atexit.register(_report, time.process_time())
    return gate(args)


if __name__ == "__main__":
    raise SystemExit(main())
