"""Git access: one process per question, many blobs in one `cat-file --batch`."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable
from typing import NamedTuple

from oracle_guard.reporting.report import UsageError


class GitError(UsageError):
    pass


def run(*args: str, input: bytes | None = None, check: bool = True, env: dict[str, str] | None = None) -> bytes:
    cmd = ("git", "-c", "core.quotepath=false", *args)
    try:
        proc = subprocess.run(cmd, input=input, capture_output=True, env=env)
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH") from None
    if check and proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"`git {' '.join(args[:3])}` failed: {err[-1] if err else proc.returncode}")
    return proc.stdout


def ok(*args: str) -> bool:
    return subprocess.run(("git", *args), capture_output=True).returncode == 0


def toplevel() -> str:
    try:
        out = run("rev-parse", "--show-toplevel")
    except GitError:
        raise GitError("not inside a git repository (run oracle-guard from your repository)") from None
    return os.fsdecode(out.strip())


def commit_of(rev: str) -> str | None:
    """The commit id REV names, or None when it names no commit here."""
    proc = subprocess.run(
        ("git", "rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}"),
        capture_output=True,
    )
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def head() -> str | None:
    return commit_of("HEAD")


def is_shallow() -> bool:
    return run("rev-parse", "--is-shallow-repository", check=False).strip() == b"true"


def empty_tree() -> str:
    return run("hash-object", "-t", "tree", "--stdin", input=b"").decode().strip()


def merge_base(a: str, b: str) -> str | None:
    proc = subprocess.run(("git", "merge-base", a, b), capture_output=True)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


class Change(NamedTuple):
    status: str  # A, M, D, R, C, T (first letter of git's status)
    path: str | None  # path now; None when deleted
    old_path: str | None  # path at the base; None when added
    new_mode: str = ""  # git's mode on the new side (120000 symlink, 160000 submodule); "" unknown


def _parse_raw(out: bytes) -> list[Change]:
    """`git diff --raw -z`: like --name-status, plus the new side's mode."""
    parts = out.split(b"\0")
    changes: list[Change] = []
    i = 0
    while i + 1 < len(parts) and parts[i].startswith(b":"):
        fields = parts[i][1:].split()
        new_mode, status = fields[1].decode(), fields[4].decode()[0]
        if status in "RC":
            old, new = os.fsdecode(parts[i + 1]), os.fsdecode(parts[i + 2])
            i += 3
            # a copy keeps its source; the new file starts fresh
            changes.append(Change("R", new, old, new_mode) if status == "R" else Change("A", new, None, new_mode))
            continue
        path = os.fsdecode(parts[i + 1])
        i += 2
        if status == "A":
            changes.append(Change("A", path, None, new_mode))
        elif status == "D":
            changes.append(Change("D", None, path, new_mode))
        else:
            changes.append(Change(status, path, path, new_mode))
    return changes


def _parse_name_status(out: bytes) -> list[Change]:
    parts = out.split(b"\0")
    changes: list[Change] = []
    i = 0
    while i < len(parts) and parts[i]:
        status = parts[i].decode()[0]
        if status in "RC":
            old, new = os.fsdecode(parts[i + 1]), os.fsdecode(parts[i + 2])
            i += 3
            changes.append(Change(status, new, old if status == "R" else None))
            if status == "C":  # a copy keeps its source; the new file starts fresh
                changes[-1] = Change("A", new, None)
            continue
        path = os.fsdecode(parts[i + 1])
        i += 2
        if status == "A":
            changes.append(Change("A", path, None))
        elif status == "D":
            changes.append(Change("D", None, path))
        else:
            changes.append(Change(status, path, path))
    return changes


def diff(base: str, target: str | None, cached: bool) -> list[Change]:
    """What changed from BASE to TARGET (a commit), the index, or the work tree."""
    args = ["diff", "--no-ext-diff", "--raw", "--no-abbrev", "-z", "-M"]
    if cached:
        args.append("--cached")
    args.append(base)
    if target:
        args.append(target)
    return _parse_raw(run(*args))


def untracked() -> list[str]:
    """Files in the work tree that git does not track and does not ignore."""
    out = run("ls-files", "-z", "--others", "--exclude-standard")
    return [os.fsdecode(p) for p in out.split(b"\0") if p]


# Blobs read at a commit named by its full id never change: a second reader (the contract's
# fail-closed reader after the prefetch, say) costs no git process.  Small files, a bounded few.
_READ: dict[tuple[str, str], bytes | None] = {}
_READ_MAX, _READ_MAX_BYTES = 512, 1 << 20
OBJECT_ID = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?\Z")


def read_blobs(rev: str, paths: Iterable[str]) -> dict[str, bytes | None]:
    """Contents of PATHS at REV in one git process; None where a path is absent."""
    requested = [p for p in dict.fromkeys(paths) if p]
    immutable = bool(OBJECT_ID.match(rev))
    known = {p: _READ[(rev, p)] for p in requested if (rev, p) in _READ} if immutable else {}
    read = _read_blobs(rev, [p for p in requested if p not in known])
    if immutable:
        for path, data in read.items():
            if len(_READ) < _READ_MAX and (data is None or len(data) <= _READ_MAX_BYTES):
                _READ[(rev, path)] = data
    return {p: known[p] if p in known else read[p] for p in requested}


def _read_blobs(rev: str, wanted: list[str]) -> dict[str, bytes | None]:
    result: dict[str, bytes | None] = {p: None for p in wanted}
    if not wanted:
        return result
    # `rev:path` lines cannot carry a newline: such paths are asked by object id.
    ids = _blob_ids(rev, [p for p in wanted if "\n" in p])
    safe = [p for p in wanted if "\n" not in p or p in ids]
    if not safe:
        return result
    request = b"".join(
        (ids[p] + "\n").encode() if p in ids else f"{rev}:{p}\n".encode("utf-8", "surrogateescape") for p in safe
    )
    out = run("cat-file", "--batch", input=request)
    pos = 0
    for path in safe:
        eol = out.index(b"\n", pos)
        header = out[pos:eol].split()
        pos = eol + 1
        if len(header) == 3 and header[1] in (b"blob",):
            size = int(header[2])
            result[path] = out[pos : pos + size]
            pos += size + 1
        elif len(header) == 3:  # a tree or submodule at that path: not a file
            pos += int(header[2]) + 1
    return result


def _blob_ids(rev: str, paths: list[str]) -> dict[str, str]:
    """Object ids of the blobs at PATHS in REV, from `ls-tree -z` (names may hold newlines)."""
    if not paths:
        return {}
    out = run("--literal-pathspecs", "ls-tree", "-z", "--full-tree", rev, "--", *paths)
    found: dict[str, str] = {}
    for record in out.split(b"\0"):
        meta, _, name = record.partition(b"\t")
        fields = meta.split()
        if len(fields) == 3 and fields[1] == b"blob":
            found[os.fsdecode(name)] = fields[2].decode()
    return found
