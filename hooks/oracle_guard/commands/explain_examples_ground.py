"""`oracle-guard explain` for the gate's own ground (docs/ground.md): no diff shows these, a run does.

Each is what the change's code did to the gate's runs or what was done to its environment before it
ran; tests/test_ground.py (and tests/test_barrier.py for OG921) show each attack and its honest twin.
"""

from __future__ import annotations

WITHOUT_EXAMPLE = {
    "OG920": "the interpreter is a file the change commits (a virtualenv, pyvenv.cfg or python shim), not a diff"
    " of a test: shown by tests/test_ground.py, with the untracked ./.venv that is taken.",
    "OG921": "the new code writes into the base's tree, the flip run's tree or beside them while the gate runs it:"
    " shown by tests/test_barrier.py and tests/test_mutation.py's barrier cases.",
    "OG922": "the new code waits only under the gate (it looks at the folder it runs in): shown by"
    " tests/test_ground.py, with a change a little slower that passes.",
    "OG923": "the change's own tests break only in the gate's scratch tree (a conftest that looks at its folder),"
    " or do not collect there: shown by tests/test_ground.py and tests/test_mutation.py.",
    "OG924": "an installed file rewritten after the install, by a run before the gate: shown by tests/test_ground.py.",
    "OG925": "a .pth, sitecustomize or usercustomize planted in site-packages before the gate ran: shown by"
    " tests/test_ground.py, with one a distribution's RECORD lists that passes.",
    "OG926": "a detached process left running in the work tree by an earlier run: shown by tests/test_ground.py,"
    " with a process still attached to its parent that is not one.",
    "OG927": "the change breaks the contract file (YAML that does not parse, a key the strict loader refuses, a"
    " symlink or folder in its place) beside its other changes: shown by tests/test_trust_root.py, with a broken"
    " base contract that stays exit 2.",
    "OG928": "the change commits a Python file nested deeper than Python's recursion limit lets a syntax tree be"
    " walked (800 terms of one sum): shown by tests/test_trust_root.py, with a deep but ordinary expression analysed.",
    "OG929": "the change commits a file over the base contract's max_file_bytes (16 MiB by default), too big to"
    " show as a diff here: shown by tests/test_limits.py, with the base contract's raised limit that reads it.",
    "OG930": "the change's tests end their own mutant run (os._exit) or the mutation server (a signal to their"
    " parent) only from their second run in one server: shown by tests/test_ground_probes.py, with a test that runs"
    " and reaps a process that exits, which passes.",
}
