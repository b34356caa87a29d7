"""The contract's scalars, typed by hand and positioned (part of contract.py's strict loader).

PyYAML's resolver would turn ``yes`` into True and an unquoted date into a
datetime; here every scalar of the composed node tree is typed against the key
it belongs to (strings, counts, seeds, SHA-256 digests, ISO-8601 instants,
repository paths), and a refusal carries the node's line and column.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from yaml.nodes import Node, ScalarNode


def _nodes() -> Any:
    """PyYAML's node classes, imported when a contract is first typed (it is composed by then)."""
    from yaml import nodes

    return nodes


_NULL = {"", "~", "null", "Null", "NULL"}
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
# PyYAML (YAML 1.1) reads these as booleans; YAML 1.2 tools read them as strings.
_YAML11_BOOL = {"yes", "no", "on", "off", "Yes", "No", "On", "Off", "YES", "NO", "ON", "OFF"}
_INT = re.compile(r"[-+]?(0|[1-9][0-9]*)\Z")
_TIMESTAMP = re.compile(r"\d{4}-\d\d?-\d\d?([Tt ]|\Z)")
_SEXAGESIMAL = re.compile(r"[-+]?\d+(:[0-5]?\d)+(\.\d*)?\Z")
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")
_NUMERIC_START = frozenset("0123456789+-")


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
    if not isinstance(node, _nodes().ScalarNode):
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
    if isinstance(node, _nodes().ScalarNode) and _plain_value(node) is None:
        return None
    return _string(node, key)


def _count(node: Node, key: str, minimum: int = 0, maximum: int | None = None) -> int:
    value = _plain_value(node) if isinstance(node, _nodes().ScalarNode) else node
    if isinstance(value, bool) or not isinstance(value, int):
        shown = (
            "a collection"
            if isinstance(value, _nodes().Node)
            else repr(value)
            if isinstance(value, str)
            else _describe(value)
        )
        raise _error(node.start_mark, f"'{key}' must be a whole number, not {shown}")
    if value < minimum:
        raise _error(node.start_mark, f"'{key}' must be at least {minimum}, not {value}")
    if maximum is not None and value > maximum:
        raise _error(node.start_mark, f"'{key}' must be at most {maximum}, not {value}")
    return value


def _seed(node: Node, key: str) -> str:
    if not isinstance(node, _nodes().ScalarNode):
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
    if isinstance(node, _nodes().ScalarNode) and _plain_value(node) is None:
        return None
    return _repo_path(node, key)


def _repo_paths(node: Node, key: str) -> tuple[str, ...]:
    if not isinstance(node, _nodes().SequenceNode):
        raise _error(node.start_mark, f"'{key}' must be a list of paths")
    return tuple(_repo_path(item, key) for item in node.value)


def _paths(node: Node, key: str) -> tuple[str, ...]:
    if not isinstance(node, _nodes().SequenceNode):
        raise _error(node.start_mark, f"'{key}' must be a list of paths")
    return tuple(_path(item, key) for item in node.value)


def _mapping(node: Node, what: str) -> dict[str, tuple[Node, Node]]:
    if not isinstance(node, _nodes().MappingNode):
        raise _error(node.start_mark, f"{what} must be a mapping")
    seen: dict[str, tuple[Node, Node]] = {}
    for key_node, value_node in node.value:
        key = _plain_value(key_node) if isinstance(key_node, _nodes().ScalarNode) else None
        if not isinstance(key, str):
            raise _error(key_node.start_mark, f"keys in {what} must be strings")
        if key in seen:
            raise _error(
                key_node.start_mark,
                f"duplicate key '{key}' in {what} (first at line {seen[key][0].start_mark.line + 1})",
            )
        seen[key] = (key_node, value_node)
    return seen
