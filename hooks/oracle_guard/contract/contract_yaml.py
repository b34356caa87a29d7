"""The contract's YAML composer: anchors, aliases and tags refused (part of contract.py's strict loader).

Its own module so that PyYAML is imported only when a contract is read: a commit with no
contract (or a bare one) starts the hook without it.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.events import AliasEvent, CollectionStartEvent, ScalarEvent
from yaml.nodes import Node

from oracle_guard.contract.contract_scalars import _error


class _StrictLoader(yaml.loader.SafeLoader):  # the pure-Python loader honours overrides
    def compose_node(self, parent: Any, index: Any) -> Node | None:
        # types-PyYAML leaves Parser.peek_event unannotated (it returns an Event).
        if self.check_event(AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise _error(event.start_mark, "YAML aliases are not allowed in the contract")
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, (ScalarEvent, CollectionStartEvent)):
            if event.anchor is not None:
                raise _error(event.start_mark, "YAML anchors are not allowed in the contract")
            if event.tag is not None and event.tag != "!":
                raise _error(event.start_mark, f"YAML tags ({event.tag}) are not allowed in the contract")
        return super().compose_node(parent, index)


def _refuse_event(event: Any) -> None:
    if isinstance(event, AliasEvent):
        raise _error(event.start_mark, "YAML aliases are not allowed in the contract")
    if isinstance(event, (ScalarEvent, CollectionStartEvent)):
        if event.anchor is not None:
            raise _error(event.start_mark, "YAML anchors are not allowed in the contract")
        if event.tag is not None and event.tag != "!":
            raise _error(event.start_mark, f"YAML tags ({event.tag}) are not allowed in the contract")


if hasattr(yaml, "CSafeLoader"):

    class _FastComposer(yaml.CSafeLoader):
        # Scalars are typed by hand below, so the resolver's per-node work is skipped.
        def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
            return ""

        def descend_resolver(self, current_node: Any, current_index: Any) -> None:
            return None

        def ascend_resolver(self) -> None:
            return None

    _FastLoader: Any = _FastComposer
else:  # PyYAML built without libyaml
    _FastLoader = None


def _compose(text: str) -> Node | None:
    """The document's node tree, refusing anchors, aliases and tags.

    With libyaml the events are checked in one C pass and composed in another
    (about 10x faster than the pure-Python loader on a 1,000-lock contract);
    without it the pure-Python loader refuses them while composing.
    """
    fast = _FastLoader
    if fast is None:
        return yaml.compose(text, Loader=_StrictLoader)
    if "&" in text or "*" in text or "!" in text:  # otherwise no anchor, alias or tag can be spelled
        for event in yaml.parse(text, Loader=fast):
            _refuse_event(event)
    return yaml.compose(text, Loader=fast)
