"""What the gate's environment check costs (pytest_side/environment.py, docs/ground.md).

Timed from outside with farm-bench, paired:

    farm-bench -n 9 -- python bench/ground.py env .venv/bin/python --vs 'python bench/ground.py env .venv/bin/python --no-hashes'
    farm-bench -n 9 -- python bench/ground.py env .venv/bin/python --vs 'python bench/ground.py nothing'
    python bench/replay.py --make-small /tmp/ground-small      # a one-module project of 40 tests, a change staged
    farm-bench -n 5 --timeout 900 -- python bench/ground.py replay /tmp/ground-small \\
        --vs 'python bench/ground.py replay /tmp/ground-small --no-env'

``env``: the whole check of one interpreter (its writable site folders: every RECORD hash, the start-up
files, the leftover processes); ``--no-hashes`` leaves the RECORD hashes out (start-up files and processes
only), ``nothing`` is the interpreter's own start and this script's imports.  ``replay``: one cold replay
(`ORACLE_GUARD_CACHE=off`) of the staged change, with the check or without it (``ground.CHECK_ENVIRONMENT``).
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> int:
    from oracle_guard.pytest_side import environment, ground

    if argv[:1] == ["nothing"]:
        return 0
    if argv[:1] == ["env"]:
        python = argv[1]
        if "--no-hashes" in argv:
            prefix, folders = environment.site_folders(python)
            for folder in folders:
                _, listed = environment._records(folder)
                [p for p in environment._startup_files(folder) if p not in listed]
            environment.leftovers([os.getcwd(), prefix])
            return 0
        return 1 if environment.check(python, os.getcwd()) else 0
    if argv[:1] == ["replay"]:
        from oracle_guard.hook_ids import replay

        os.chdir(argv[1])
        os.environ["ORACLE_GUARD_CACHE"] = "off"
        ground.CHECK_ENVIRONMENT = "--no-env" not in argv
        return replay.main(["--base", "HEAD"])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
