"""What a hook is given: the one interface between the commands and the hooks.

Every hook module exposes ``check(ctx: HookContext) -> list[Finding]``.  Its
``main(argv)`` only parses the command line into a context (oracle_guard.rules.args);
``oracle-guard check`` and the one-process hook resolve the change once and
build one context per hook (oracle_guard.hook_ids.registry).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from oracle_guard.repo.changes import ChangeSet

NO_OPTIONS: Mapping[str, Any] = MappingProxyType({})


class HookContext(NamedTuple):
    change_set: ChangeSet | None  # None: no base comparison (--all, --no-diff)
    filenames: tuple[str, ...]  # repository-relative; only the file hooks read them
    contract: str  # the contract's path in the repository
    now: datetime  # for freeze expiry; pinned with --now
    format: str  # text, github, json, sarif
    # Files the hook rewrote (the snapshot): the run fails so that they get reviewed.
    written: list[str]
    options: Mapping[str, Any] = NO_OPTIONS  # a hook's own switches (--all, --python, ...)

    def option(self, name: str, default: Any = None) -> Any:
        return self.options.get(name, default)
