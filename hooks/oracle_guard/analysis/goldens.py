"""Goldens added beside production code that an existing test reads: a re-recording.

Modifying a golden together with the code it judges is the plain re-recording
(contract-split's OG703).  The same happens when the change *adds* the golden
and a test that already existed reads it: the test is pointed at a new
sibling directory of expected output (``"golden"`` -> ``"golden_v2"``), a
module constant naming the golden is repointed, or a snapshot tool's file for
an existing test (pytest-regressions ``test_mod/test_name.yml``, syrupy
``__snapshots__/test_mod.ambr``) appears only now.  A golden added for a new
test, or for a new parametrize case, is not a re-recording.

Only runs where a commit both changes production code and adds a golden, so
the common path reads nothing.
"""

from __future__ import annotations

import ast
import os
import posixpath
from collections.abc import Iterable
from typing import Callable

from oracle_guard.analysis.pysource import Module, SourceError
from oracle_guard.repo import git
from oracle_guard.repo.changes import read_worktree_file

MAX_GOLDENS = 200  # a bulk import of data is not a per-test re-recording; look at the first ones


class Side:
    """One revision of the repository: a commit, or the work tree (rev None)."""

    def __init__(self, rev: str | None) -> None:
        self.rev = rev

    def read(self, paths: list[str]) -> dict[str, bytes | None]:
        if self.rev is not None:
            return git.read_blobs(self.rev, paths)
        return {p: read_worktree_file(p) for p in paths}

    def grep(self, tokens: list[str]) -> list[str]:
        """Python files holding any of TOKENS."""
        if not tokens:
            return []
        args = ["grep", "-l", "-z", "-F"]
        for t in tokens:
            args += ["-e", t]
        if self.rev is not None:
            args.append(self.rev)
        out = git.run(*args, "--", "*.py", check=False)
        hits = [os.fsdecode(h) for h in out.split(b"\0") if h]
        return [h.split(":", 1)[1] if self.rev is not None else h for h in hits]

    def has_dir(self, path: str) -> bool:
        if self.rev is None:
            return os.path.isdir(path)
        return bool(git.run("ls-tree", "--name-only", self.rev, "--", path.rstrip("/") + "/", check=False).strip())


def _strings(node: ast.AST) -> Iterable[str]:
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and 2 < len(n.value) < 300 and "\n" not in n.value:
            yield n.value


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[prefix + node.name] = node

    visit(tree.body, "")
    return found


def _module_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level NAME = <expression>: name -> its source, to see a repointed constant."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = ast.dump(node.value)
    return out


def _parse(path: str, data: bytes | None) -> Module | None:
    if data is None:
        return None
    try:
        return Module.from_source(path, data)
    except SourceError:
        return None


def re_recorded(added: list[str], parent: str, new: Side) -> list[tuple[str, str]]:
    """(golden, why) for each golden in ADDED that a test existing at PARENT reads on the NEW side."""
    added = added[:MAX_GOLDENS]
    old = Side(parent)
    out: dict[str, str] = {}
    new_dirs: dict[str, bool] = {}

    def dir_is_new(d: str) -> bool:
        if d not in new_dirs:
            new_dirs[d] = not old.has_dir(d)
        return new_dirs[d]

    # Snapshot tools name the golden after the test: no string in the test names it.
    layout: dict[str, list[tuple[str, str]]] = {}  # test module -> [(golden, test name or "" for any snapshot test)]
    for g in added:
        d, base = posixpath.split(g)
        stem = base.split(".", 1)[0]
        if posixpath.basename(d) == "__snapshots__":
            layout.setdefault(posixpath.join(posixpath.dirname(d), stem + ".py"), []).append((g, ""))
        elif posixpath.basename(posixpath.dirname(d)) == "__snapshots__":
            layout.setdefault(
                posixpath.join(posixpath.dirname(posixpath.dirname(d)), posixpath.basename(d) + ".py"), []
            ).append((g, stem))
        elif posixpath.basename(d).startswith("test_"):
            layout.setdefault(d + ".py", []).append((g, stem))
    # Strings that could name a golden: its basename, its path tail, a directory this change creates.
    tokens = sorted(
        {posixpath.basename(g) for g in added}
        | {c for g in added for c in posixpath.dirname(g).split("/") if len(c) > 2}
    )
    candidates = sorted(set(new.grep(tokens)) | set(layout))
    if not candidates:
        return []
    new_blobs, old_blobs = new.read(candidates), old.read(candidates)
    for path in candidates:
        new_mod, old_mod = _parse(path, new_blobs.get(path)), _parse(path, old_blobs.get(path))
        if new_mod is None or old_mod is None:
            continue  # a test module new in this change holds only new tests
        old_funcs, new_funcs = _functions(old_mod.tree), _functions(new_mod.tree)
        existing = {q for q in new_funcs if q in old_funcs and q.rsplit(".", 1)[-1].startswith("test")}
        for g, name in layout.get(path, []):
            hits = [
                q
                for q in existing
                if (name and (q.rsplit(".", 1)[-1] == name or name.startswith(q.rsplit(".", 1)[-1] + "_")))
                or (
                    not name
                    and "snapshot" in {a.arg for a in new_funcs[q].args.args}
                    and "snapshot" in {a.arg for a in old_funcs[q].args.args}
                )
            ]
            if hits:
                out.setdefault(g, f"the existing test {path}::{sorted(hits)[0]} reads it")
        old_consts, new_consts = _module_constants(old_mod.tree), _module_constants(new_mod.tree)

        def reads(node: ast.AST, g: str, before: set[str]) -> bool:
            return any(s not in before and _names(s, g, dir_is_new) for s in _strings(node))

        # Strings new in an existing test's body (decorators are cases: a new case is a new test).
        fresh = {}
        for q in existing:
            before = {s for stmt in old_funcs[q].body for s in _strings(stmt)}
            fresh[q] = (before, new_funcs[q].body)
        for g in added:
            if g in out:
                continue
            for q in sorted(existing):
                before, body = fresh[q]
                if any(reads(stmt, g, before) for stmt in body):
                    out[g] = f"the existing test {path}::{q} now reads it"
                    break
            else:
                for node in new_mod.tree.body:
                    if (
                        isinstance(node, ast.Assign)
                        and len(node.targets) == 1
                        and isinstance(node.targets[0], ast.Name)
                    ):
                        name = node.targets[0].id
                        if (
                            name in old_consts
                            and old_consts[name] != new_consts.get(name)
                            and reads(node.value, g, set())
                        ):
                            out[g] = f"{path}'s constant {name}, read by existing tests, now points at it"
                            break
    return sorted(out.items())


def _names(text: str, golden: str, dir_is_new: Callable[[str], bool]) -> bool:
    """Whether the string TEXT names GOLDEN: its path or tail, or a directory this change created for it."""
    s = text.strip().lstrip("./")
    if not s:
        return False
    if s == golden or golden.endswith("/" + s):
        return True
    if "/" not in s and "." in s and posixpath.basename(golden) == s:
        return True
    parts = posixpath.dirname(golden).split("/")
    for i, part in enumerate(parts):
        if part == s or (("/" in s) and "/".join(parts[: i + 1]).endswith(s)):
            return dir_is_new("/".join(parts[: i + 1]))
    return False
