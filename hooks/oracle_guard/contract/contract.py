"""The contract file: a strict YAML loader and typed, positioned records.

PyYAML's ``safe_load`` silently keeps the last of duplicate keys, turns
``yes`` into True and an unquoted date into a datetime, and expands aliases.
Here the document is composed with the pure-Python loader (anchors, aliases
and explicit tags refused), then every scalar is typed by hand against the
schema below, so each refusal names the file, line, column and key.

This module composes the document and holds the schema, ``loads``/``dumps`` and
the per-side loaders; typing one scalar is contract_scalars.py, reading the
file's bytes from the work tree or a commit is contract_files.py (re-exported here).
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Callable

from oracle_guard.contract.contract_files import DEFAULT_PATH as DEFAULT_PATH
from oracle_guard.contract.contract_files import MAX_CONTRACT_BYTES as MAX_CONTRACT_BYTES
from oracle_guard.contract.contract_files import ContractError as ContractError
from oracle_guard.contract.contract_files import bytes_at as bytes_at
from oracle_guard.contract.contract_files import bytes_at_base as bytes_at_base
from oracle_guard.contract.contract_files import bytes_at_new as bytes_at_new
from oracle_guard.contract.contract_files import bytes_in_work_tree as bytes_in_work_tree
from oracle_guard.contract.contract_files import read_file as read_file
from oracle_guard.contract.contract_scalars import (
    _BOOL,
    _NULL,
    _YAML11_BOOL,
    _count,
    _error,
    _instant,
    _mapping,
    _nodes,
    _opt_repo_path,
    _opt_string,
    _path,
    _paths,
    _plain_value,
    _Positioned,
    _repo_path,
    _repo_paths,
    _seed,
    _sha256,
    _string,
)
from oracle_guard.contract.contract_scalars import parse_time as parse_time
from oracle_guard.repo.paths import MAX_FILE_BYTES, MAX_FILE_BYTES_SETTING
from oracle_guard.reporting.report import UsageError

if TYPE_CHECKING:
    from yaml.nodes import Node


# -- records -------------------------------------------------------------------


@dataclass(frozen=True)
class Property:
    id: str
    module: str
    name: str
    min_examples: int
    line: int = field(default=0, compare=False)
    col: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Fixture:
    id: str
    path: str
    sha256: str
    unlock: str | None = None
    line: int = field(default=0, compare=False)
    col: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Freeze:
    id: str
    owner: str
    reason: str
    expires: str
    remaining_reruns: int
    seed: str | None = None
    repro: str | None = None
    silent_runs_allowed: int | None = None
    file: str | None = None
    signature: str | None = None
    line: int = field(default=0, compare=False)
    col: int = field(default=0, compare=False)

    @property
    def expires_at(self) -> datetime:
        when = parse_time(self.expires)
        assert when is not None  # validated at load
        return when

    def active(self, now: datetime) -> bool:
        return self.expires_at > now and self.remaining_reruns >= 1

    def covers(self, test_id: str) -> bool:
        """Whether this entry names TEST_ID.

        A ledger id may be a full node id (``tests/a.py::TestX::test_y[p]``),
        the test's name with or without its parameters (``test_y``,
        ``test_y[p]``), or ``Class::name``; ``file`` narrows it to one file.
        Node ids may use ``.`` or ``::`` between class and method.
        """
        if "::" in test_id:
            path, rest = test_id.split("::", 1)
        else:  # a qualname from static analysis: Class.test_name
            path, rest = "", test_id.replace(".", "::")
        if self.file and path and self.file != path:
            return False
        if self.id in (test_id, rest):
            return True
        bare = rest.split("[", 1)[0]
        return self.id in (bare, bare.split("::")[-1], rest.split("::")[-1])


@dataclass(frozen=True)
class Layers:
    contracts: tuple[str, ...] = ("tests/contracts/",)
    relations: tuple[str, ...] = ("tests/relations/",)
    quarantine: tuple[str, ...] = ("tests/quarantine/",)
    production: tuple[str, ...] = ("src/",)


@dataclass(frozen=True)
class Contract:
    version: int = 1
    properties: tuple[Property, ...] = ()
    fixtures: tuple[Fixture, ...] = ()
    freezes: tuple[Freeze, ...] = ()
    max_active_freezes: int = 3
    max_freeze_days: int = 7
    max_reruns: int = 2
    allowed_signers: str | None = None
    max_file_bytes: int = MAX_FILE_BYTES  # a checked file's largest size; read from the base (repo/changes.py)
    approvals: str = "tests/approvals"
    snapshot: str | None = None
    fixture_roots: tuple[str, ...] = ("tests/fixtures", "tests/data")
    layers: Layers = Layers()
    path: str = DEFAULT_PATH

    def freeze_for(self, test_id: str, now: datetime | None = None) -> Freeze | None:
        """The active ledger entry that covers TEST_ID, if any."""
        now = now or datetime.now(timezone.utc)
        for entry in self.freezes:
            if entry.active(now) and entry.covers(test_id):
                return entry
        return None

    @property
    def snapshot_path(self) -> str:
        if self.snapshot:
            return self.snapshot
        folder = self.path.rpartition("/")[0]
        return f"{folder}/collection_snapshot.txt" if folder else "collection_snapshot.txt"


def _records(node: Node, key: str, build: Callable[[dict[str, tuple[Node, Node]], Node], Any]) -> tuple[Any, ...]:
    if isinstance(node, _nodes().ScalarNode) and _plain_value(node) is None:
        return ()
    if not isinstance(node, _nodes().SequenceNode):
        raise _error(node.start_mark, f"'{key}' must be a list")
    items = []
    seen: dict[str, int] = {}
    for item_node in node.value:
        entry = _mapping(item_node, f"an entry of '{key}'")
        item = build(entry, item_node)
        if item.id in seen:  # a second entry must never silently override the first
            raise _error(
                entry["id"][1].start_mark, f"duplicate id '{item.id}' in '{key}' (first at line {seen[item.id]})"
            )
        seen[item.id] = item.line
        items.append(item)
    return tuple(items)


def _fields(
    entry: dict[str, tuple[Node, Node]],
    where: str,
    required: dict[str, Callable[..., Any]],
    optional: dict[str, Callable[..., Any]],
    node: Node,
) -> dict[str, Any]:
    for key, (key_node, _) in entry.items():
        if key not in required and key not in optional:
            allowed = ", ".join(list(required) + list(optional))
            exc = _error(key_node.start_mark, f"unknown key '{key}' in {where} (allowed: {allowed})")
            exc.keyed = True
            raise exc
    values: dict[str, Any] = {"line": node.start_mark.line + 1, "col": node.start_mark.column + 1}
    for key in required:
        if key not in entry:
            exc = _error(node.start_mark, f"{where} is missing '{key}'")
            exc.keyed = True
            raise exc
    for key, convert in {**required, **optional}.items():
        if key in entry:
            try:
                values[key] = convert(entry[key][1], key)
            except _Positioned as exc:  # every refusal names the innermost key it is about
                if not exc.keyed and f"'{key}'" not in exc.message:
                    exc.message = f"'{key}': {exc.message}"
                exc.keyed = True
                raise
    return values


def dotted_name(text: str) -> bool:
    """Whether TEXT is a dotted Python name (``tests.test_parse``, ``TestX.test_y``), no longer than a path may be."""
    parts = text.split(".")
    return len(text) <= 1024 and all(p.isidentifier() and not keyword.iskeyword(p) for p in parts)


def _dotted(node: Node, key: str) -> str:
    """A property's module or function: a dotted Python name, so resolving it to a file stays in the repository."""
    value = _string(node, key)
    if not dotted_name(value):
        raise _error(
            node.start_mark,
            f"'{key}' must be a dotted Python name like {'tests.test_parse' if key == 'module' else 'TestParse.test_empty'}"
            f" (identifiers joined by dots), not {value[:80]!r}",
        )
    return value


def _property(entry: dict[str, tuple[Node, Node]], node: Node) -> Property:
    return Property(
        **_fields(
            entry,
            "a property",
            {"id": _string, "module": _dotted, "name": _dotted, "min_examples": lambda n, k: _count(n, k, 1)},
            {},
            node,
        )
    )


def _fixture(entry: dict[str, tuple[Node, Node]], node: Node) -> Fixture:
    return Fixture(
        # The loader refuses a path out of the repository for every reader (quarantine-untouched and
        # properties-monotonic too), not only fixture-lock-verify, which also refuses symlinks out of a root.
        **_fields(
            entry, "a fixture", {"id": _string, "path": _repo_path, "sha256": _sha256}, {"unlock": _opt_string}, node
        )
    )


def _freeze(entry: dict[str, tuple[Node, Node]], node: Node) -> Freeze:
    required: dict[str, Callable[..., Any]] = {
        "id": _string,
        "owner": _string,
        "reason": _string,
        "expires": _instant,
        "remaining_reruns": _count,
    }
    optional: dict[str, Callable[..., Any]] = {
        "seed": _seed,
        "repro": _string,
        "silent_runs_allowed": _count,
        "file": _path,
        "signature": _opt_string,
    }
    return Freeze(**_fields(entry, "a freeze", required, optional, node))


def _layers(node: Node, key: str) -> Layers:
    entry = _mapping(node, "'layers'")
    values = _fields(
        entry, "'layers'", {}, {name: _paths for name in ("contracts", "relations", "quarantine", "production")}, node
    )
    values.pop("line"), values.pop("col")
    return Layers(**values)


def _version(node: Node, key: str) -> int:
    value = _plain_value(node) if isinstance(node, _nodes().ScalarNode) else None
    if value != 1 or isinstance(value, bool):
        raise _error(
            node.start_mark, f"'version' must be 1, not {value!r} (the only contract format this oracle-guard reads)"
        )
    return 1


_TOP_REQUIRED: dict[str, Callable[..., Any]] = {"version": _version}
_TOP_OPTIONAL: dict[str, Callable[..., Any]] = {
    "properties": lambda n, k: _records(n, k, _property),
    "fixtures": lambda n, k: _records(n, k, _fixture),
    "freezes": lambda n, k: _records(n, k, _freeze),
    "max_active_freezes": _count,
    "max_freeze_days": lambda n, k: _count(n, k, 1),
    "max_reruns": lambda n, k: _count(n, k, 1),
    "allowed_signers": _opt_repo_path,
    "max_file_bytes": lambda n, k: _count(n, k, MAX_FILE_BYTES, MAX_FILE_BYTES_SETTING),
    "approvals": _repo_path,
    "snapshot": _repo_path,
    "fixture_roots": _repo_paths,
    "layers": _layers,
}


def loads(text: str | bytes, path: str = DEFAULT_PATH) -> Contract:
    """Parse and validate a contract; ContractError names path:line:col."""
    if len(text) > MAX_CONTRACT_BYTES:
        raise ContractError(f"{path}: {len(text)} bytes is over the {MAX_CONTRACT_BYTES}-byte limit for a contract")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ContractError(f"{path}: not valid UTF-8 (byte {exc.start})") from None
    import yaml  # here, not at the top: a commit without a contract never reads one

    from oracle_guard.contract.contract_yaml import _compose

    try:
        root = _compose(text)
        if root is None:
            raise _Positioned(None, "the contract is empty; it needs at least `version: 1`")
        values = _fields(_mapping(root, "the contract"), "the contract", _TOP_REQUIRED, _TOP_OPTIONAL, root)
    except _Positioned as exc:
        raise ContractError(f"{path}:{exc.line}:{exc.col}: {exc.message}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{mark.line + 1}:{mark.column + 1}" if mark else "1:1"
        raise ContractError(f"{path}:{where}: invalid YAML: {exc.problem or exc.context}") from None
    except yaml.reader.ReaderError as exc:  # a character YAML forbids: say where, like the others
        pos = min(exc.position, len(text))
        line, col = text.count("\n", 0, pos) + 1, pos - text.rfind("\n", 0, pos)
        raise ContractError(
            f"{path}:{line}:{col}: invalid YAML: character U+{exc.character if isinstance(exc.character, int) else ord(exc.character):04X} is not allowed"
        ) from None
    except yaml.YAMLError as exc:
        raise ContractError(f"{path}: invalid YAML: {' '.join(str(exc).split())}") from None
    values.pop("line"), values.pop("col")
    return Contract(path=path, **values)


_PLAIN_SAFE = re.compile(r"[A-Za-z_][A-Za-z0-9_./@+-]*\Z")


def scalar(value: Any) -> str:
    """VALUE as a YAML scalar that this loader reads back unchanged."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    if _PLAIN_SAFE.match(text) and text not in _NULL and text not in _BOOL and text not in _YAML11_BOOL:
        return text
    import json  # only writers need it; hooks that only read stay quick to start

    return json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar


def _entries(key: str, items: tuple[Any, ...], fields: tuple[str, ...]) -> list[str]:
    if not items:
        return [f"{key}: []"]
    lines = [f"{key}:"]
    for item in items:
        first = True
        for name in fields:
            value = getattr(item, name)
            if value is None and name != "unlock":
                continue
            lines.append(f"{'  - ' if first else '    '}{name}: {scalar(value)}")
            first = False
    return lines


def dumps(c: Contract) -> str:
    """The contract as YAML that ``loads`` reads back equal (comments are not kept)."""
    lines = ["version: 1"]
    lines += _entries("properties", c.properties, ("id", "module", "name", "min_examples"))
    lines += _entries("fixtures", c.fixtures, ("id", "path", "sha256", "unlock"))
    freeze_fields = (
        "id",
        "owner",
        "reason",
        "expires",
        "remaining_reruns",
        "seed",
        "repro",
        "silent_runs_allowed",
        "file",
        "signature",
    )
    lines += _entries("freezes", c.freezes, freeze_fields)
    lines.append(f"max_active_freezes: {c.max_active_freezes}")
    default = Contract()
    for name in ("max_freeze_days", "max_reruns", "allowed_signers", "max_file_bytes", "approvals", "snapshot"):
        if getattr(c, name) != getattr(default, name):
            lines.append(f"{name}: {scalar(getattr(c, name))}")
    if c.fixture_roots != default.fixture_roots:
        lines.append("fixture_roots: [" + ", ".join(scalar(p) for p in c.fixture_roots) + "]")
    if c.layers != default.layers:
        lines.append("layers:")
        for name in ("contracts", "relations", "quarantine", "production"):
            lines.append(f"  {name}: [" + ", ".join(scalar(p) for p in getattr(c.layers, name)) + "]")
    return "\n".join(lines) + "\n"


def base_from(data: bytes | None, path: str = DEFAULT_PATH) -> Contract | None:
    """The base contract parsed from its bytes; a contract that does not load stops the comparison."""
    if data is None:
        return None
    try:
        return loads(data, path)
    except ContractError as exc:
        raise ContractError(
            f"the contract at the base revision does not load, so nothing can be compared (fail closed): {exc}"
        ) from None


def at_base(rev: str | None, path: str = DEFAULT_PATH) -> Contract | None:
    """The contract as committed at the base REV (None: no revision, or no contract there)."""
    return base_from(bytes_at_base(rev, path), path)


def at_new(target: str | None, path: str = DEFAULT_PATH) -> Contract | None:
    """The contract on the new side of a change: the TARGET commit, or the work tree (None: no contract)."""
    data = bytes_at_new(target, path)
    return None if data is None else loads(data, path)


def load(path: str = DEFAULT_PATH) -> Contract | None:
    """The contract in the work tree, or None when there is none (at_new without a target)."""
    return at_new(None, path)


def add_contract_arg(parser: Any) -> None:
    parser.add_argument(
        "--contract", default=DEFAULT_PATH, metavar="PATH", help=f"the contract file (default: {DEFAULT_PATH})"
    )


def parse_now(text: str | None) -> datetime:
    """`--now` for tests and reproducible runs; the real clock otherwise."""
    if not text:
        return datetime.now(timezone.utc)
    when = parse_time(text)
    if when is None:
        raise UsageError(f"--now {text!r} is not an ISO-8601 time with a time zone")
    return when


__all__ = [
    "Contract",
    "ContractError",
    "Fixture",
    "Freeze",
    "Layers",
    "Property",
    "add_contract_arg",
    "at_base",
    "at_new",
    "base_from",
    "bytes_at",
    "bytes_at_base",
    "bytes_at_new",
    "bytes_in_work_tree",
    "dumps",
    "load",
    "loads",
    "scalar",
    "parse_now",
    "parse_time",
    "timedelta",
]
