"""The change's contract does not load: a finding against the change (OG927), never exit 2.

A contract that is not YAML, fails the strict loader, or stopped being a regular file stops every
hook that reads it.  When the base's contract loads, that stop is the change's doing: ending the
gate in "nothing was judged" (exit 2) let a cheat committed beside a broken contract through a CI
that reads exit 2 as neutral.  A contract broken at the base too stays exit 2: the base's problem.
"""

from __future__ import annotations

import re

from oracle_guard.contract import contract
from oracle_guard.repo.changes import ChangeSet
from oracle_guard.reporting.report import Finding

# "PATH:LINE:COL: what" or "PATH:LINE: what", as the loader and the file readers say it.
_WHERE = re.compile(r"^(?P<path>[^\n:]+):(?P<line>\d+)(?::(?P<col>\d+))?: ")


def finding(change_set: ChangeSet | None, path: str, stop: Exception) -> Finding | None:
    """OG927 when STOP is a contract error and the contract at PATH does not load on the change's side while it
    loads (or is absent) at the base; None: STOP stands (exit 2)."""
    if change_set is None or not isinstance(stop, contract.ContractError):
        return None
    try:
        contract.at_new(change_set.target, path)
    except contract.ContractError as exc:
        problem = str(exc)
    else:
        return None  # the change's contract loads: whatever stopped the hook is not this
    try:
        contract.at_base(change_set.base, path)
    except contract.ContractError:
        return None  # broken at the base too: the base's problem (exit 2)
    where = _WHERE.match(problem)
    line, col = (int(where["line"]), int(where["col"] or 1)) if where else (1, 1)
    if where and where["path"] == path:
        problem = problem[where.end() :]
    elif problem.startswith(f"{path}: "):
        problem = problem[len(path) + 2 :]
    text = (
        f"the change's contract does not load ({problem}), so nothing it says can be compared with the base's"
        " and the change is refused"
    )
    return Finding(path, line, col, "OG927", text)
