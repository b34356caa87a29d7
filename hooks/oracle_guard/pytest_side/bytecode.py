"""The base's bytecode, compiled once per gate command and laid into every scratch tree that runs its files.

Most of a pytest process in a fresh scratch tree is pytest rewriting the asserts of every test module
and CPython compiling the package (toolz: 1.01 s of CPU without bytecode, 0.49 s with it).  The
gate's first process of the base (collection-snapshot's collection of the base, base_collection.py)
writes that bytecode into its own export; ``harvest`` reads it back before the export is removed, and
``lay`` writes it into the replay's trees (base, new, flips, target) beside the same sources.

Every file laid is *checked* by the importing process against its source's content: pytest's
rewritten modules carry the source's hash already, and CPython's timestamp files are turned into
checked hash-based ones (PEP 552: flags 3, the source's hash) here, so a file the change rewrote,
whatever its size and time, fails the check and is compiled from its own source.  The bytes come only
from a base-side process of this command, which runs the base's own code, and are kept in this
process's memory, never on disk between commands: nothing the change's code wrote before or during the
gate can be among them.  Only where the change's code runs confined (repo/confine): unconfined the
base side's tree is not kept apart from the new code's writes by anything but the barrier's check
after the fact, so no bytecode is carried over (today's path).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterable

LIMIT = 64 << 20  # bytes kept per command: past this, the rest compiles as before
_HEADER = 16
_CHECKED_HASH = b"\x03\x00\x00\x00"
_TIMESTAMP = b"\x00\x00\x00\x00"

# (work tree, base commit) -> {pyc path relative to the tree: its bytes}, for this command only.
_kept: dict[tuple[str, str], dict[str, bytes]] = {}


def begin() -> None:
    """A command starts (or ends): no bytecode of another command."""
    _kept.clear()


def keep(top: str, rev: str, pycs: dict[str, bytes]) -> None:
    if pycs:
        _kept[(os.path.realpath(top), rev)] = pycs


def kept(top: str, rev: str) -> dict[str, bytes]:
    return _kept.get((os.path.realpath(top), rev), {})


def source_of(pyc: str) -> str | None:
    """The source a ``__pycache__/NAME.TAG[-pytest-V].pyc`` path compiles, relative like PYC; None: not one."""
    folder, _, name = pyc.rpartition("/")
    parent, _, cache = folder.rpartition("/")
    if cache != "__pycache__" or not name.endswith(".pyc") or "." not in name[:-4]:
        return None
    stem = name[:-4].split(".", 1)[0]
    return f"{parent}/{stem}.py" if parent else f"{stem}.py"


def _checked(data: bytes, source: bytes, mtime: int, size: int) -> bytes | None:
    """DATA as a checked hash-based pyc of SOURCE; None when it is not this interpreter's or not of SOURCE."""
    if len(data) < _HEADER or data[:4] != importlib.util.MAGIC_NUMBER:
        return None  # another interpreter's: it cannot be checked here
    digest = importlib.util.source_hash(source)
    flags = data[4:8]
    if flags == _CHECKED_HASH:
        return data if data[8:16] == digest else None
    if flags == _TIMESTAMP:
        stamp = int.from_bytes(data[8:12], "little"), int.from_bytes(data[12:16], "little")
        if stamp != (mtime & 0xFFFFFFFF, size & 0xFFFFFFFF):
            return None  # compiled from another version of the file
        return data[:4] + _CHECKED_HASH + digest + data[_HEADER:]
    return None


def harvest(tree: str) -> dict[str, bytes]:
    """The bytecode under TREE whose source is beside it, as checked hash-based files: relative path -> bytes."""
    found: dict[str, bytes] = {}
    total = 0
    for folder, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
        if os.path.basename(folder) != "__pycache__":
            continue
        for name in files:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, tree).replace(os.sep, "/")
            source = source_of(rel)
            if source is None or os.path.islink(path):
                continue
            try:
                src = os.path.join(tree, source)
                stat = os.stat(src)
                with open(src, "rb") as f:
                    text = f.read()
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                continue
            checked = _checked(data, text, int(stat.st_mtime), stat.st_size)
            if checked is None or total + len(checked) > LIMIT:
                continue
            found[rel] = checked
            total += len(checked)
    return found


def lay(pycs: dict[str, bytes], trees: Iterable[str], skip: Iterable[str] = ()) -> None:
    """Write PYCS into each of TREES beside its source (none for a source in SKIP, the paths the change wrote).

    A file already there is left alone; a source missing from a tree gets nothing.
    """
    left_out = set(skip)
    for tree in trees:
        for rel, data in pycs.items():
            source = source_of(rel)
            if source is None or source in left_out or not os.path.isfile(os.path.join(tree, source)):
                continue
            target = os.path.join(tree, rel)
            try:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "xb") as f:
                    f.write(data)
            except OSError:
                continue  # only a speed-up
