"""pytest's own record of the tests that failed in the developer's last run.

``.pytest_cache/v/cache/lastfailed`` (written by pytest's cacheprovider) maps
each node id that failed to ``true``.  A weakening of a test that was failing
is the commonest cheat there is (the test was rewritten instead of the code),
so a finding on such a test says so first.  The file is the developer's, not the
base's: it only changes a finding's wording, never whether there is one.
"""

from __future__ import annotations

import json
import os

CACHE = os.path.join(".pytest_cache", "v", "cache", "lastfailed")
FAILING = "this test was failing: fix the code, not the test; "

_read: dict[str, frozenset[str]] = {}


def failing(top: str = ".") -> frozenset[str]:
    """The node ids (parameters dropped) pytest last saw fail under TOP; empty when there is no readable record."""
    path = os.path.abspath(os.path.join(top, CACHE))
    if path not in _read:
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            data = {}
        ids = data if isinstance(data, dict) else {}
        _read[path] = frozenset(str(node_id).split("[", 1)[0] for node_id, failed in ids.items() if failed)
    return _read[path]


def forget() -> None:
    """Read the record again next time (tests, and a long-lived process)."""
    _read.clear()
