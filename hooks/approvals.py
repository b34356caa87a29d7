"""Signed approvals: the only way a weakening passes.

INTERFACE (stable; the implementation fills it in): hooks that find a
weakening describe it as one canonical *statement* and ask
``Approvals.load(...).covers(statement)``.  Statements are single lines::

    fixture-rotate <fixture-id> <old-sha256> <new-sha256>
    fixture-unlock <fixture-id> <old-sha256>          (dropped from the contract)
    property-retire <property-id>
    property-lower <property-id> <old-min> <new-min>
    property-repoint <property-id> <old-module>:<old-name> <new-module>:<new-name>
    freeze-add <freeze-id> <expires> <remaining_reruns>
    test-retire <test-node-id>
    test-skip <test-node-id>

Without an allowed-signers file at the base revision nothing is approved
(fail closed).
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Approvals:
    statements: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def load(cls, change_set: object, base_contract: object, new_contract: object) -> "Approvals":
        return cls()

    def covers(self, statement: str) -> bool:
        return statement in self.statements
