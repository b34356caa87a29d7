"""The contract file: a strict YAML loader and typed, positioned records.

PyYAML's ``safe_load`` silently keeps the last of duplicate keys, turns
``yes`` into True and an unquoted date into a datetime, and expands aliases.
Here the document is composed with the pure-Python loader (anchors, aliases
and explicit tags refused), then every scalar is typed by hand against the
schema below, so each refusal names the file, line, column and key.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

import yaml
from yaml.events import AliasEvent, CollectionStartEvent, ScalarEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from oracle_guard.repo.paths import DEFAULT_CONTRACT
from oracle_guard.reporting.report import UsageError

DEFAULT_PATH = DEFAULT_CONTRACT
MAX_CONTRACT_BYTES = 16 * 1024 * 1024  # ~100,000 locks; more is a mistake or an attack

_NULL = {"", "~", "null", "Null", "NULL"}
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
# PyYAML (YAML 1.1) reads these as booleans; YAML 1.2 tools read them as strings.
_YAML11_BOOL = {"yes", "no", "on", "off", "Yes", "No", "On", "Off", "YES", "NO", "ON", "OFF"}
_INT = re.compile(r"[-+]?(0|[1-9][0-9]*)\Z")
_TIMESTAMP = re.compile(r"\d{4}-\d\d?-\d\d?([Tt ]|\Z)")
_SEXAGESIMAL = re.compile(r"[-+]?\d+(:[0-5]?\d)+(\.\d*)?\Z")
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")
_NUMERIC_START = frozenset("0123456789+-")


class ContractError(UsageError):
    pass


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


class _Positioned(Exception):
    def __init__(self, mark: Any, message: str) -> None:
        super().__init__(message)
        self.line = mark.line + 1 if mark else 1
        self.col = mark.column + 1 if mark else 1
        self.message = message
        self.keyed = False


def _error(mark: Any, message: str) -> _Positioned:
    return _Positioned(mark, message)


# -- typed scalars -------------------------------------------------------------


def _plain_value(node: ScalarNode) -> Any:
    """The value a plain or quoted scalar stands for, YAML 1.2 core style."""
    text = node.value
    if node.style:  # quoted or block scalars are always strings (plain: None, or '' from libyaml)
        return text
    if text in _NULL:
        return None
    if text in _BOOL:
        return _BOOL[text]
    if text in _YAML11_BOOL:
        raise _error(node.start_mark, f"'{text}' is ambiguous in YAML; write true/false, or quote it")
    if text[0] not in _NUMERIC_START:  # cannot be a number, a timestamp or base-60
        return text
    if _INT.match(text):
        if len(text) > 19:  # more than any count could mean, and int() of thousands of digits raises
            raise _error(node.start_mark, f"a number with {len(text.lstrip('+-'))} digits is too large")
        return int(text)
    if _TIMESTAMP.match(text):
        raise _error(node.start_mark, f"timestamp {text} must be quoted (an unquoted one becomes a date object)")
    if _SEXAGESIMAL.match(text):
        raise _error(node.start_mark, f"'{text}' reads as a base-60 number in YAML 1.1; quote it")
    return text


def _describe(value: Any) -> str:
    return "null" if value is None else type(value).__name__.replace("str", "string").replace("int", "integer")


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _string(node: Node, key: str) -> str:
    if not isinstance(node, ScalarNode):
        raise _error(node.start_mark, f"'{key}' must be a string")
    value = _plain_value(node)
    if not isinstance(value, str) or not value.strip():
        raise _error(
            node.start_mark, f"'{key}' must be a non-empty string, not {_describe(value) if value != '' else 'empty'}"
        )
    control = _CONTROL.search(value)
    if control:  # a NUL cuts a path short in every system call
        raise _error(node.start_mark, f"'{key}' holds a control character (U+{ord(control.group()):04X})")
    return value


def _opt_string(node: Node, key: str) -> str | None:
    if isinstance(node, ScalarNode) and _plain_value(node) is None:
        return None
    return _string(node, key)


def _count(node: Node, key: str, minimum: int = 0) -> int:
    value = _plain_value(node) if isinstance(node, ScalarNode) else node
    if isinstance(value, bool) or not isinstance(value, int):
        shown = (
            "a collection" if isinstance(value, Node) else repr(value) if isinstance(value, str) else _describe(value)
        )
        raise _error(node.start_mark, f"'{key}' must be a whole number, not {shown}")
    if value < minimum:
        raise _error(node.start_mark, f"'{key}' must be at least {minimum}, not {value}")
    return value


def _seed(node: Node, key: str) -> str:
    if not isinstance(node, ScalarNode):
        raise _error(node.start_mark, f"'{key}' must be an integer or string")
    value = _plain_value(node)
    if value is None or isinstance(value, bool):
        raise _error(node.start_mark, f"'{key}' must be an integer or string")
    return str(value)


def _sha256(node: Node, key: str) -> str:
    value = _string(node, key)
    if not _SHA256.match(value):
        raise _error(node.start_mark, f"'{key}' must be 64 lowercase hex digits")
    return value


def parse_time(text: str) -> datetime | None:
    """An ISO-8601 instant with a time zone, or None."""
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else None


def _instant(node: Node, key: str) -> str:
    value = _string(node, key)
    if parse_time(value) is None:
        raise _error(
            node.start_mark, f"'{key}' must be an ISO-8601 time with a time zone, e.g. \"2026-09-22T00:00:00Z\""
        )
    return value


def _path(node: Node, key: str) -> str:
    value = _string(node, key)
    if "\\" in value:
        raise _error(node.start_mark, f"'{key}' must use forward slashes")
    if "\n" in value or "\r" in value:
        raise _error(node.start_mark, f"'{key}' must be a path on one line")
    if len(value.encode("utf-8", "surrogateescape")) > 4096 or any(
        len(p.encode("utf-8", "surrogateescape")) > 255 for p in value.split("/")
    ):
        raise _error(
            node.start_mark, f"'{key}' is longer than a file system allows (a name over 255 bytes, or over 4096 in all)"
        )
    return value


def _repo_path(node: Node, key: str) -> str:
    """A path the gate reads or writes itself: inside the repository and outside .git/."""
    value = _path(node, key)
    parts = value.split("/")
    if value.startswith("/") or (len(value) > 1 and value[1] == ":"):
        raise _error(node.start_mark, f"'{key}' must be relative to the repository, not {value!r}")
    if ".." in parts:
        raise _error(node.start_mark, f"'{key}' may not leave the repository ('..' in {value!r})")
    if any(p.lower() == ".git" for p in parts):
        raise _error(node.start_mark, f"'{key}' may not point into .git/ ({value!r})")
    return value


def _opt_repo_path(node: Node, key: str) -> str | None:
    if isinstance(node, ScalarNode) and _plain_value(node) is None:
        return None
    return _repo_path(node, key)


def _repo_paths(node: Node, key: str) -> tuple[str, ...]:
    if not isinstance(node, SequenceNode):
        raise _error(node.start_mark, f"'{key}' must be a list of paths")
    return tuple(_repo_path(item, key) for item in node.value)


def _paths(node: Node, key: str) -> tuple[str, ...]:
    if not isinstance(node, SequenceNode):
        raise _error(node.start_mark, f"'{key}' must be a list of paths")
    return tuple(_path(item, key) for item in node.value)


def _mapping(node: Node, what: str) -> dict[str, tuple[Node, Node]]:
    if not isinstance(node, MappingNode):
        raise _error(node.start_mark, f"{what} must be a mapping")
    seen: dict[str, tuple[Node, Node]] = {}
    for key_node, value_node in node.value:
        key = _plain_value(key_node) if isinstance(key_node, ScalarNode) else None
        if not isinstance(key, str):
            raise _error(key_node.start_mark, f"keys in {what} must be strings")
        if key in seen:
            raise _error(
                key_node.start_mark,
                f"duplicate key '{key}' in {what} (first at line {seen[key][0].start_mark.line + 1})",
            )
        seen[key] = (key_node, value_node)
    return seen


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
    if isinstance(node, ScalarNode) and _plain_value(node) is None:
        return ()
    if not isinstance(node, SequenceNode):
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


def _property(entry: dict[str, tuple[Node, Node]], node: Node) -> Property:
    return Property(
        **_fields(
            entry,
            "a property",
            {"id": _string, "module": _string, "name": _string, "min_examples": lambda n, k: _count(n, k, 1)},
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
    value = _plain_value(node) if isinstance(node, ScalarNode) else None
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
    for name in ("max_freeze_days", "max_reruns", "allowed_signers", "approvals", "snapshot"):
        if getattr(c, name) != getattr(default, name):
            lines.append(f"{name}: {scalar(getattr(c, name))}")
    if c.fixture_roots != default.fixture_roots:
        lines.append("fixture_roots: [" + ", ".join(scalar(p) for p in c.fixture_roots) + "]")
    if c.layers != default.layers:
        lines.append("layers:")
        for name in ("contracts", "relations", "quarantine", "production"):
            lines.append(f"  {name}: [" + ", ".join(scalar(p) for p in getattr(c.layers, name)) + "]")
    return "\n".join(lines) + "\n"


def read_file(path: str, what: str = "contract file") -> bytes | None:
    """Bytes of the regular file at PATH (a symlink to one is followed), None if absent.

    A directory, FIFO, device, symlink loop or over-long name is one clear
    ContractError; the O_NONBLOCK open means a FIFO never blocks the hook.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ContractError(f"{path}: is a directory, not a {what}") from None
    except (OSError, ValueError) as exc:
        raise ContractError(f"{path}: cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise ContractError(
            f"{path}: is a {'directory' if stat.S_ISDIR(mode) else 'FIFO or special file'}, not a {what}"
        )
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_CONTRACT_BYTES + 1)
    return data


# -- the one reader per side -----------------------------------------------------------
#
# Every hook reads the contract through these: None means nothing at all is at
# the path; anything that is there but not a regular file (a symlink, a
# directory, a submodule, a FIFO) or cannot be read is a ContractError (exit 2).
# A contract that quietly stops being one must never read as "no contract".

_KINDS = {"120000": "symlink", "160000": "submodule", "040000": "directory"}
_COMMITTED: dict[tuple[str, str], bytes | None] = {}  # (commit id, path): commits never change
_COMMIT_ID = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?\Z")


def bytes_at(rev: str, path: str) -> bytes | None:
    """The contract's bytes as committed at REV; None if nothing is there (fail closed otherwise)."""
    key = (rev, path)
    if key in _COMMITTED:
        return _COMMITTED[key]
    from oracle_guard.repo import git  # only diff-based callers need git

    data = git.read_blobs(rev, [path]).get(path)
    # cat-file reads a symlink's target as a blob and a tree or submodule as nothing: ask for the mode.
    listed = [
        r for r in git.run("--literal-pathspecs", "ls-tree", "-z", "--full-tree", rev, "--", path).split(b"\0") if r
    ]
    wanted = posixpath.normpath(path)
    for record in listed:
        meta, _, name = record.partition(b"\t")
        mode = meta.split()[0].decode()
        if os.fsdecode(name) == wanted and mode in _KINDS:
            raise ContractError(f"{path}: is a {_KINDS[mode]} at {rev[:12]}, not a contract file")
    if data is None and listed:  # something is there, but not a file git can read as one
        raise ContractError(f"{path}: is not a file at {rev[:12]}, not a contract file")
    if data is None:
        _no_folder_in_the_way(rev, wanted)
    if _COMMIT_ID.match(rev):
        _COMMITTED[key] = data
    return data


def _no_folder_in_the_way(rev: str, path: str) -> None:
    """Nothing at PATH in REV: fail closed if that is because a folder on the way is a symlink or submodule.

    git stores a symlinked folder as one link, so the file behind it is absent from the tree while a
    checkout (and pytest) still finds one there: the contract moved out of reach, not removed.
    """
    from oracle_guard.repo import git

    folders = []
    folder = posixpath.dirname(path)
    while folder:
        folders.append(folder)
        folder = posixpath.dirname(folder)
    if not folders:
        return
    out = git.run("--literal-pathspecs", "ls-tree", "-z", "--full-tree", rev, "--", *folders)
    for record in (r for r in out.split(b"\0") if r):
        meta, _, name = record.partition(b"\t")
        mode = meta.split()[0].decode()
        if os.fsdecode(name) in folders and mode != "040000":  # ls-tree also lists what lies beside them
            kind = _KINDS.get(mode, "file")
            raise ContractError(
                f"{path}: {os.fsdecode(name)}/ is a {kind} at {rev[:12]}, not a folder holding the contract"
            )


def bytes_in_work_tree(path: str) -> bytes | None:
    """The contract's bytes in the work tree; None if absent.  A symlink is refused, not followed.

    So is a symlinked folder on the way: the contract would be read from wherever it points.
    """
    folder = "" if os.path.isabs(path) else os.path.dirname(path)  # contract paths are inside the repository
    while folder:
        try:
            if stat.S_ISLNK(os.lstat(folder).st_mode):
                raise ContractError(f"{path}: {folder}/ is a symlink, not a folder holding the contract")
        except (FileNotFoundError, NotADirectoryError):
            pass
        except (OSError, ValueError):
            break  # read_file names the problem
        folder = os.path.dirname(folder)
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise ContractError(f"{path}: is a symlink, not a contract file (commit the contract itself)")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError):
        pass  # read_file names the problem
    return read_file(path)


def bytes_at_base(rev: str | None, path: str = DEFAULT_PATH) -> bytes | None:
    """The contract's bytes at the base revision (None: no base, or no contract there)."""
    return bytes_at(rev, path) if rev else None


def bytes_at_new(target: str | None, path: str = DEFAULT_PATH) -> bytes | None:
    """The contract's bytes on the new side of a change: the target commit, or the work tree."""
    return bytes_at(target, path) if target else bytes_in_work_tree(path)


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
