"""A contract with no entries, recognized without YAML: the pytest plugin's cost in every gated test run.

`oracle-guard init` writes a contract of top-level settings and empty lists, and many projects keep it
so.  Reading it through the strict loader costs the gated pytest run PyYAML's import and the contract's
types (about 15 ms, a test run's 3-5%).  `recognize` accepts only documents whose every line is one
this module knows byte for byte; the strict loader reads each of them as a contract without freezes
and with the default snapshot (tests/test_bare_contract.py checks every combination against it).
Anything else, a comment with a tab or a value it does not list included, goes to the strict loader,
which says what is wrong with it.  No YAML and no dataclasses here.
"""

from __future__ import annotations

import re
from datetime import datetime

# Every line of a bare contract: one of these settings (each at most once), a comment, or nothing.
_SETTING = re.compile(
    r"version: 1|(properties|fixtures|freezes): \[\]|(max_active_freezes|max_freeze_days|max_reruns): [1-9][0-9]{0,5}"
)
_COMMENT = re.compile(r"#[ -~]*")  # printable ASCII: the YAML reader refuses control characters


class Bare:
    """What the pytest plugin reads of a contract with no entries: no freezes, the default snapshot."""

    freezes: tuple[()] = ()

    def __init__(self, path: str) -> None:
        self.path = path

    def freeze_for(self, test_id: str, now: datetime | None = None) -> None:
        return None

    @property
    def snapshot_path(self) -> str:  # contract.Contract.snapshot_path with no `snapshot` setting
        folder = self.path.rpartition("/")[0]
        return f"{folder}/collection_snapshot.txt" if folder else "collection_snapshot.txt"


def recognize(data: bytes, path: str) -> Bare | None:
    """The contract DATA as a Bare one, or None: the strict loader must read it (it may be anything)."""
    if len(data) > 4096:
        return None
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return None
    seen: set[str] = set()
    for line in text.split("\n"):
        if not line or _COMMENT.fullmatch(line):
            continue
        if _SETTING.fullmatch(line) is None:
            return None
        key = line.partition(":")[0]
        if key in seen:
            return None  # a duplicate key: the strict loader's refusal to give
        seen.add(key)
    return Bare(path) if "version" in seen else None
