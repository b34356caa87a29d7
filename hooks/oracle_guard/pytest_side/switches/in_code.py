"""Switches flipped from Python: a conftest or test module that sets them (OG860-OG862).

``config.option.X = v``, ``setattr(config.option, "X", v)``, an auto-approving
reporter named in test code, and regeneration variables set from test code that
the project's own code reads. Test code is parsed, so strings and comments never count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from oracle_guard.pytest_side.runners import files as ci
from oracle_guard.pytest_side.switches.options import LEDGER, REGEN, REGEN_ENV, _count, _truthy
from oracle_guard.repo import git
from oracle_guard.repo.paths import TEST_FILES
from oracle_guard.reporting.report import Finding

if TYPE_CHECKING:  # types only: the callers pass these in
    import ast

    from oracle_guard.repo.changes import ChangeSet


def mentions(target: str | None, name: str, besides: str = "") -> bool:
    """Whether a tracked Python file of the new side (other than BESIDES) spells NAME: code that reads the variable."""
    args = ["grep", "-l", "-z", "-F", "-e", name]
    if target:
        args.append(target)
    out = git.run(*args, "--", "*.py", check=False).decode("utf-8", "surrogateescape")
    found = [p.split(":", 1)[1] if target else p for p in out.split("\0") if p]
    return any(p != besides for p in found)


OPTION_CODES = {
    "reruns": "OG860",
    "retries": "OG860",
    "force_flaky": "OG860",
    "force_regen": "OG861",
    "regen_all": "OG861",
    "snapshot_update": "OG861",
    "update_goldens": "OG861",
    "inline_snapshot": "OG861",
    "regtest_reset": "OG861",
    "no_cov": "OG862",
}
AUTO_APPROVERS = ("ReporterThatAutomaticallyApproves", "AutoApprover")
CODE_HINTS = (b"option", b"Automatically", b"AutoApprover", b"environ", b"putenv")


def _code_facts(text: str) -> list[tuple[str, str, int]] | None:
    """(what, value, line) of switches set in Python code: `config.option.X = v`,
    `setattr(config.option, "X", v)`, a name of an auto-approving reporter.
    Strings and comments never count (the code is parsed); None if it does not parse."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    facts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Attribute)
                    and target.value.attr == "option"
                ):
                    facts.append((f"option.{target.attr}", ast.unparse(node.value), node.lineno))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and len(node.args) == 3
        ):
            owner, name, value = node.args
            if (
                isinstance(owner, ast.Attribute)
                and owner.attr == "option"
                and isinstance(name, ast.Constant)
                and isinstance(name.value, str)
            ):
                facts.append((f"option.{name.value}", ast.unparse(value), node.lineno))
        elif isinstance(node, (ast.Name, ast.Attribute)):
            spelled = node.id if isinstance(node, ast.Name) else node.attr
            if spelled in AUTO_APPROVERS and isinstance(node.ctx, ast.Load):
                facts.append((spelled, "", node.lineno))
    return facts


# Words every switch this module reads spells (an option, a reporter, the environment however written).
_SWITCH_WORDS = ("option", "Automatically", "AutoApprover", "env", "putenv")


def _no_switch_changed(old: str, new: str, blobs: tuple[tuple[str, bytes], tuple[str, bytes]] | None = None) -> bool:
    """Whether every top-level statement that is not on the other side as it is (byte for byte) is free
    of any switch's words (a helper added to a big test module): then no fact of either side can differ,
    since facts are compared as a multiset and each comes from a statement spelling a switch's word.

    BLOBS: each side's (path, bytes) OLD and NEW were decoded from, whose tree the rules share."""
    from collections import Counter

    try:
        if blobs is None:
            trees = _tree(old), _tree(new)
        else:
            trees = _tree(old, *blobs[0]), _tree(new, *blobs[1])
    except (SyntaxError, ValueError):
        return False
    texts = [_statement_texts(tree, source.splitlines()) for tree, source in zip(trees, (old, new))]
    counts = Counter(texts[0]), Counter(texts[1])
    unmatched = (counts[0] - counts[1]) + (counts[1] - counts[0])
    # Lines outside every statement (comments, blank lines) hold no switch.
    return not any(word in text for text in unmatched for word in _SWITCH_WORDS)


def _tree(text: str, path: str = "", raw: bytes = b"") -> ast.Module:
    """TEXT's tree; the one shared by every hook (parsed from RAW, cached per path and text) when RAW's
    parse is TEXT's: RAW is strict UTF-8 (TEXT decodes it without a replacement), with no BOM, no coding
    line (a str's parse ignores it) and no carriage return."""
    import ast

    from oracle_guard.analysis import pysource

    if path and raw and not raw.startswith(b"\xef\xbb\xbf") and b"\r" not in raw:
        head = b"\n".join(raw.split(b"\n", 2)[:2])
        if b"coding" not in head and _strict(raw) == text:
            return pysource.shared_tree(raw, path)
    return ast.parse(text)


def _strict(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _statement_texts(tree: ast.Module, lines: list[str]) -> list[str]:
    out = []
    for stmt in tree.body:
        first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
        out.append("\n".join(lines[first - 1 : stmt.end_lineno or stmt.lineno]))
    return out


def code_switches(
    change_set: ChangeSet,
    read_new: Callable[[list[str]], dict[str, bytes | None]],
    read_base: Callable[[list[str]], dict[str, bytes | None]],
) -> list[Finding]:
    """Options set on `config.option`, auto-approving reporters and regeneration variables set in test code."""
    paths = [p for p in change_set.changed_paths if p.endswith(".py") and TEST_FILES.search(p)]
    if not paths:
        return []
    new = read_new(paths)
    hot = [p for p in paths if any(h in (new.get(p) or b"") for h in CODE_HINTS)]
    if not hot:
        return []
    old_of = {p: change_set.old_path(p) for p in hot}
    base = read_base([o for o in old_of.values() if o])
    target = getattr(change_set, "target", None)
    findings = []
    for path in hot:
        text = (new[path] or b"").decode("utf-8", "replace")
        old_blob = base.get(old_of[path] or "") or b""
        old = old_blob.decode("utf-8", "replace")
        blobs = ((old_of[path] or "", old_blob), (path, new[path] or b""))
        if old and _no_switch_changed(old, text, blobs):
            continue
        facts = _code_facts(text)
        if facts is None:
            continue  # a file that does not parse is reported by the Python hooks (OG001)
        known = [(what, value) for what, value, _ in (_code_facts(old) or [])]
        for what, value, line in facts:
            if (what, value) in known:
                known.remove((what, value))
                continue
            if what in AUTO_APPROVERS:
                findings.append(
                    Finding(
                        path, line, 1, "OG861", f"`{what}` approves every received output instead of comparing; {REGEN}"
                    )
                )
                continue
            name = what.split(".", 1)[1]
            code = OPTION_CODES.get(name)
            if code is None or not _truthy(value.strip("'\"")) or value in ("False", "None"):
                continue
            if code == "OG860" and any(w == what and _count(value) <= _count(v) for w, v in known):
                continue  # a lower count than the base's
            next_step = {"OG860": LEDGER, "OG861": REGEN, "OG862": "remove it"}[code]
            findings.append(
                Finding(
                    path, line, 1, code, f"`config.option.{name} = {value}` switches the run from code; {next_step}"
                )
            )
        known_env = [(s.name, s.value) for s in ci.read(path, old).env] if old else []
        for setting in ci.read(path, text).env:
            if (
                (setting.name, setting.value) in known_env
                or not _truthy(setting.value)
                or not REGEN_ENV.search(setting.name)
            ):
                continue
            if mentions(target, setting.name, besides=path):
                findings.append(
                    Finding(
                        path,
                        setting.line,
                        1,
                        "OG861",
                        f"`{setting.name}={setting.value}` set from test code is read by the project's code: a switch that regenerates expected output instead of comparing; {REGEN}",
                    )
                )
    return findings
