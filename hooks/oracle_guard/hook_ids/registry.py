"""Every hook, what it takes, and where its check(ctx) lives.

The ids are a public promise: never renamed.  `files`: the hook reads the
changed test files (pre-commit passes them; `check` hands it the changed
ones).  `now`: it reads the clock (freeze expiry), so `--now` pins it.
`deleted`: it also judges a change that only deletes test files.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Callable, NamedTuple

if TYPE_CHECKING:
    from oracle_guard.repo.context import HookContext
    from oracle_guard.reporting.report import Finding


class Hook(NamedTuple):
    id: str
    module: str
    help: str
    files: bool = False
    now: bool = False
    deleted: bool = False
    opt_in: bool = False  # not in the default selection; `check` runs it itself (oracle-replay)

    @property
    def main(self) -> str:
        return f"{self.module}:main"

    def check(self) -> Callable[[HookContext], list[Finding]]:
        check: Callable[[HookContext], list[Finding]] = importlib.import_module(self.module).check
        return check


HOOKS = (
    Hook(
        "forbid-skip-marks",
        "oracle_guard.hook_ids.forbid_skip_marks",
        "new skip/skipif/xfail marks, in any spelling",
        files=True,
        now=True,
    ),
    Hook(
        "forbid-runtime-skip",
        "oracle_guard.hook_ids.forbid_runtime_skip",
        "new pytest.skip()/xfail()/importorskip()/exit(), skipTest, early returns",
        files=True,
        now=True,
    ),
    Hook(
        "oracle-shrink",
        "oracle_guard.hook_ids.oracle_shrink",
        "deleted or loosened checks, tautologies, swallowed failures, broadened raises",
        files=True,
        deleted=True,
    ),
    Hook(
        "fixture-lock-verify",
        "oracle_guard.hook_ids.fixture_lock_verify",
        "locked fixtures whose bytes, path or lock changed",
    ),
    Hook(
        "properties-monotonic",
        "oracle_guard.hook_ids.properties_monotonic",
        "contract properties removed, repointed or weakened",
    ),
    Hook(
        "quarantine-untouched",
        "oracle_guard.hook_ids.quarantine_untouched",
        "freeze ledger budgets grown, expiries extended",
        now=True,
    ),
    Hook(
        "contract-split", "oracle_guard.hook_ids.contract_split", "production code and contract tests changed together"
    ),
    Hook(
        "forbid-test-aware-code",
        "oracle_guard.hook_ids.forbid_test_aware_code",
        "production code that detects tests, reads its caller, exits, patches the test machinery or learns answers",
    ),
    Hook(
        "collection-snapshot",
        "oracle_guard.hook_ids.collection_snapshot",
        "tests pytest no longer collects, or now skips",
        now=True,
    ),
    Hook(
        "oracle-replay",
        "oracle_guard.hook_ids.replay",
        "the base's tests run against the new code (slow: pre-push, CI; `check --replay`)",
        opt_in=True,
    ),
)
BY_ID = {hook.id: hook for hook in HOOKS}
