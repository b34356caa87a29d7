"""`oracle-guard init`: write a contract that locks what the repository has now; `oracle-guard lock PATH...`: add locks.

init locks every file under the fixture roots (default ``tests/fixtures``,
``tests/data``), every syrupy ``__snapshots__/`` directory, ``.ambr`` and
approvaltests ``*.approved.*`` files elsewhere, and every pytest-regressions
data directory (``tests/test_x/`` beside ``tests/test_x.py``); it registers
every Hypothesis property in the tests with its effective ``max_examples`` as
``min_examples``; the ledger starts empty with ``max_active_freezes: 3``.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from oracle_guard.analysis.pysource import Module, SourceError
from oracle_guard.analysis.sourcetext import spells
from oracle_guard.commands import signers_setup
from oracle_guard.contract import contract, contract_yaml
from oracle_guard.contract.digests import Escape, digest_of
from oracle_guard.repo import changes, git
from oracle_guard.repo.confine import jail
from oracle_guard.reporting import hints
from oracle_guard.reporting.report import UsageError, guarded
from oracle_guard.rules.args import summary

if TYPE_CHECKING:
    from oracle_guard.hook_ids.collection_snapshot import Collection

REPO_URL = "https://github.com/oracle-guard/oracle-guard"
# The README's config, word for word (tests/test_readme.py compares them): the one-process hook, replay
# at pre-push, and the single ones for those who pick.
ENTRY = f"""\
  - repo: {REPO_URL}
    rev: COMMIT  # no release is tagged yet: pin a commit (`git ls-remote {REPO_URL} HEAD`)
    hooks:
      - id: oracle-guard
      - id: oracle-replay  # stages: [pre-push, manual]; runs pytest twice
      # or pick single hooks instead of oracle-guard:
      # - id: forbid-skip-marks
      # - id: forbid-runtime-skip
      # - id: oracle-shrink
      # - id: fixture-lock-verify
      # - id: properties-monotonic
      # - id: quarantine-untouched
      # - id: contract-split
      # - id: collection-snapshot
"""
SNIPPET = "Write .pre-commit-config.yaml:\n\nrepos:\n" + ENTRY
# oracle-replay runs at pre-push only: pre-commit installs that hook type only when asked.
INSTALL = (
    "Then run `pre-commit install` and `pre-commit install --hook-type pre-push` (oracle-replay runs at pre-push).\n"
)


def config_advice(path: str = ".pre-commit-config.yaml") -> str:
    """What to put into the pre-commit config: all of it, or the entry to add to an existing one."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            existing = f.read()
    except OSError:
        return SNIPPET + "\n" + INSTALL
    if REPO_URL in existing or "id: oracle-guard" in existing:
        advice = f"{path} already names oracle-guard; keep `- id: oracle-guard` under its repo entry\n"
        if "id: oracle-replay" not in existing:
            advice += "  and add `- id: oracle-replay` beside it: the base's tests against the new code, at pre-push\n"
        return advice + INSTALL
    return f"Add under `repos:` in your {path}:\n\n" + ENTRY + "\n" + INSTALL


def record_snapshot(c: contract.Contract, force: bool) -> str | None:
    """The first collection snapshot, so that the first commit after init is green; the interpreter that collected."""
    from oracle_guard.commands import init_red
    from oracle_guard.contract import snapshot
    from oracle_guard.hook_ids import collection_snapshot as cs

    path = c.snapshot_path
    if os.path.lexists(path) and not force:
        print(f"kept {path} (it exists; --force records it anew)")
        return None
    try:
        found = cs._finish_somewhere(cs._start_somewhere(None))
    except UsageError as exc:
        print(f"not recorded: {path} ({exc}); run `collection-snapshot --always --python PATH` to record it")
        return None
    # A red base is where agents start: modules that do not collect are recorded, not fatal. A session-wide
    # error or another exit status (a usage or internal error) leaves nothing to record.
    modules = [where for where, _ in found.errors if where]
    own = init_red.own_module_not_importable([message for _, message in found.errors])
    if own is not None:  # the project itself does not import there: not a red base, nothing to record
        print(f"not recorded: {path} ({init_red.not_installed(*own, found.python)})")
        return found.python
    missing = _missing_dependency(found.errors)  # the interpreter's fault, not a red base: nothing to record
    if missing or len(modules) != len(found.errors) or (found.exit_code not in (0, 5) and not modules):
        what = f"{len(found.errors)} collection error(s)" if found.errors else f"pytest exited {found.exit_code}"
        print(
            f"not recorded: {path} ({what} in {found.python}: {found.tail or (found.errors[0][1] if found.errors else '')}); fix them, then run `collection-snapshot --always`"
        )
        return found.python
    items, unstable = steady_items(found) if not modules else (found.items, [])
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "wb") as f:
        f.write(snapshot.format_snapshot(items, modules))
    print(f"recorded {path}: {len(found.items)} tests collected by {found.python}; commit it with the contract")
    if modules:
        shown = ", ".join(sorted(modules)[:3]) + (f" and {len(modules) - 3} more" if len(modules) > 3 else "")
        print(f"  {len(modules)} module(s) do not collect ({shown}): recorded as the red base they are, not fatal")
    for line in unstable:
        print(f"  counted, not named: {line}")
    return found.python


def _missing_dependency(errors: list[tuple[str, str]]) -> str | None:
    """A module the tests import that no file of this repository provides: a dependency not installed."""
    from oracle_guard.hook_ids import collection_snapshot as cs
    from oracle_guard.repo import git

    for _, message in errors:
        match = cs._NO_MODULE.search(message)
        if match is None:
            continue
        name = match.group(1).split(".")[0]
        specs = [f":(glob)**/{name}.py", f":(glob)**/{name}.pyi", f":(glob)**/{name}/**", f":(glob)**/{name}.so"]
        if not git.run("ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", *specs, check=False).strip(
            b"\0"
        ):
            return name
    return None


def steady_items(found: Collection) -> tuple[dict[str, str], list[str]]:
    """FOUND's items with the tests whose ids change between two collections counted by function, and why.

    A second collection of the same tree at adoption: otherwise a time-based
    id would make the first commit after init fail, and every one after it.
    """
    from oracle_guard.contract import unstable_ids
    from oracle_guard.hook_ids import collection_snapshot as cs

    if not any(unstable_ids.function_of(n) != n for n in found.items):
        return found.items, []  # nothing parametrized: no id can vary
    again = cs.collect(found.python)
    if again is None or again.errors or again.exit_code != found.exit_code:
        return found.items, []
    functions = unstable_ids.differing(found.items, again.items)
    lines = [unstable_ids.describe(f, found.params, again.params) for f in sorted(functions)]
    return unstable_ids.grouped(found.items, functions), lines


_SKIP_PARTS = {"__pycache__", ".pytest_cache", ".hypothesis"}
_TEST_FILE = re.compile(r"(^|/)(test_[^/]*|[^/]*_test|conftest)\.py$")


def _tracked(spec: Sequence[str] = ()) -> list[str]:
    """Files git would commit (tracked, or untracked and not ignored)."""
    out = git.run("ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *spec)
    names = sorted({os.fsdecode(n) for n in out.split(b"\0") if n})
    return [n for n in names if os.path.isfile(n) and not (_SKIP_PARTS & set(n.split("/")))]


def fixture_paths(files: Sequence[str], roots: Sequence[str]) -> list[str]:
    """What init locks: files under the roots, snapshot and regression directories, golden files."""
    present = set(files)
    folders: set[str] = set()
    singles: list[str] = []
    for name in files:
        parts = name.split("/")
        if "__snapshots__" in parts:  # syrupy: lock the whole directory, new snapshots included
            folders.add("/".join(parts[: parts.index("__snapshots__") + 1]))
            continue
        folder = "/".join(parts[:-1])
        if any(name.startswith(r.rstrip("/") + "/") for r in roots):
            singles.append(name)
        elif name.endswith(".ambr") or ".approved." in parts[-1]:
            singles.append(name)
        elif (
            folder and f"{folder}.py" in present and not name.endswith(".py") and f"{folder}/__init__.py" not in present
        ):
            folders.add(folder)  # pytest-regressions datadir beside its test module
    return sorted(folders) + [s for s in singles if not any(s.startswith(f + "/") for f in folders)]


def _fixture_id(path: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_./-]+", "_", path[6:] if path.startswith("tests/") else path) or "fixture"
    ident, n = base, 2
    while ident in taken:
        ident, n = f"{base}-{n}", n + 1
    taken.add(ident)
    return ident


def _properties_in(module: Module) -> list[tuple[str, int, int]] | None:
    """oracle_guard.analysis.hypothesis.model.properties_in, when that module is installed."""
    try:
        model = importlib.import_module("oracle_guard.analysis.hypothesis.model")
    except ImportError:
        return None
    return list(model.properties_in(module))


def find_properties(files: Sequence[str]) -> tuple[list[contract.Property], bool]:
    """Every Hypothesis property in the test files; False when no model is available."""
    found: list[contract.Property] = []
    taken: set[str] = set()
    try:
        importlib.import_module("oracle_guard.analysis.hypothesis.model")
    except ImportError:
        return [], False
    for path in files:
        if not path.endswith(".py") or not (_TEST_FILE.search(path) or path.startswith("tests/")):
            continue
        with open(path, "rb") as f:
            data = f.read()
        if not spells(data, b"given"):
            continue
        try:
            module = Module.from_source(path, data)
        except SourceError:
            continue
        props = _properties_in(module)
        if props is None:
            return [], False
        dotted = path[:-3].replace("/", ".")
        if not contract.dotted_name(dotted):  # `tests/my-suite/test_x.py`: no module name the loader takes
            continue
        for qualname, max_examples, _line in props:
            ident = _fixture_id(f"{dotted.rpartition('.')[2]}.{qualname}", taken)
            found.append(contract.Property(ident, dotted, qualname, max(1, int(max_examples))))
    return found, True


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="oracle-guard init", description=summary(__doc__))
    contract.add_contract_arg(parser)
    parser.add_argument(
        "--root",
        action="append",
        metavar="DIR",
        help="a fixture root (repeatable; default: tests/fixtures and tests/data)",
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing contract (and snapshot)")
    parser.add_argument(
        "--no-snapshot", action="store_true", help="do not run pytest to record the first collection snapshot"
    )
    signers = parser.add_mutually_exclusive_group()
    signers.add_argument(
        "--signers",
        metavar="PATH",
        default=hints.DEFAULT_SIGNERS,
        help="the allowed-signers file to write from git's SSH signing key (default: %(default)s)",
    )
    signers.add_argument(
        "--no-signers", action="store_true", help="write no allowed-signers file: no approval verifies until one lands"
    )
    parser.add_argument(
        "--key", metavar="KEY", help="the SSH key to trust (default: git config user.signingkey, with gpg.format ssh)"
    )
    args = parser.parse_args(argv)
    jail.begin()  # a command starts: no earlier command's --require-confinement (one process runs many in tests)
    changes.enter_repo([])
    if os.path.lexists(args.contract) and not args.force:
        return add_signers(args)  # a plain re-run picks up the key set up since, and nothing else
    old_raw = contract.read_file(args.contract) if os.path.lexists(args.contract) else None
    if os.path.islink(args.contract):
        raise UsageError(f"{args.contract}: is a symlink; init writes a regular file (remove the link first)")
    try:
        existing = contract.loads(old_raw, args.contract) if old_raw is not None else None
    except contract.ContractError as exc:
        raise UsageError(
            f"{args.contract} does not load, so --force cannot keep its ledger, caps and signers; fix it or move it away first ({exc})"
        ) from None
    roots = tuple(r.rstrip("/") for r in (args.root or contract.Contract().fixture_roots))
    files = _tracked()
    taken: set[str] = set()
    fixtures = []
    for path in fixture_paths([f for f in files if f != args.contract], roots):
        try:
            digest = digest_of(path, roots)
        except Escape as exc:
            print(f"not locked: {path} {exc}")
            continue
        if digest is not None:
            fixtures.append(contract.Fixture(_fixture_id(path, taken), path, digest))
    properties, modelled = find_properties(files)
    if properties:
        # Never lock what properties-monotonic would reject on this very tree: the hook's
        # own max_examples (conftest profiles included) and its own vacuity rule decide.
        from oracle_guard.hook_ids.properties_monotonic import registrable

        kept, left_out = registrable(properties, lambda paths: {p: changes.read_worktree_file(p) for p in paths})
        for reason in left_out:
            print(f"not registered: {reason}")
        properties = kept
    c = contract.Contract(
        properties=tuple(properties), fixtures=tuple(fixtures), fixture_roots=roots, path=args.contract
    )
    if existing is not None:
        c = merged(existing, c)
    signer, why_not = (None, "") if args.no_signers or c.allowed_signers else signers_setup.from_git(args.key)
    if signer is not None:
        c = dataclasses.replace(c, allowed_signers=args.signers)
    header = "# oracle-guard contract: it may only stay the same or get stronger.\n"
    if not modelled:
        header += "# TODO: register Hypothesis properties (id, module, name, min_examples); this install has no property model.\n"
    text = header + contract.dumps(c)
    contract.loads(text, args.contract)  # never write what the loader would refuse (a signers path outside, say)
    wrote_signers = signers_setup.write(args.signers, signer) if signer is not None else ""
    changes.write_atomic(args.contract, changes.same_line_endings(text, old_raw).encode("utf-8"))
    print(
        f"wrote {args.contract}: {len(fixtures)} fixture lock(s), {len(properties)} propert{'y' if len(properties) == 1 else 'ies'}, empty freeze ledger"
    )
    if wrote_signers:
        print(wrote_signers)
    elif why_not:
        print(
            f"no allowed-signers file: {why_not}. To approve a deliberate change in the pull request that makes it, "
            f"set up a key (`{signers_setup.setup_command()}`) and run `oracle-guard init` again "
            "before the first commit; `--no-signers` goes without (docs/approvals.md)"
        )
    if not args.no_snapshot:  # pytest runs: the snapshot's collection, then the suite once (its red tests)
        from oracle_guard.commands import init_red

        print(init_red.red_tests(record_snapshot(c, args.force)))
    print(config_advice(), end="")
    return 0


def add_signers(args: argparse.Namespace) -> int:
    """`init` over its own contract: trust the key git signs with now, when the contract names no signers yet.

    The first run without a key told the user to set one up and run `init` again; that run adds the
    signers file and the contract's `allowed_signers:` line, and changes nothing else in the contract.
    """
    exists = f"{args.contract} already exists; pass --force to overwrite it (or use `oracle-guard lock PATH...`)"
    if os.path.islink(args.contract) or args.no_signers:
        raise UsageError(exists)
    old_raw = contract.read_file(args.contract) or b""
    try:
        existing = contract.loads(old_raw, args.contract)
        old_text = old_raw.decode("utf-8").replace("\r\n", "\n")
    except (contract.ContractError, UnicodeDecodeError) as exc:
        raise UsageError(f"{exists}; it does not load ({exc})") from None
    if existing.allowed_signers:
        raise UsageError(f"{exists}; its signers are {existing.allowed_signers}")
    signer, why_not = signers_setup.from_git(args.key)
    if signer is None:
        raise UsageError(
            f"{exists}; it names no allowed-signers file and {why_not}: set up a key "
            f"(`{signers_setup.setup_command()}`) and run `oracle-guard init` again"
        )
    text = old_text + ("" if old_text.endswith("\n") or not old_text else "\n") + f"allowed_signers: {args.signers}\n"
    try:
        written = contract.loads(
            text, args.contract
        )  # a line the loader refuses (a path outside, say) is never written
    except contract.ContractError as exc:
        raise UsageError(f"{args.signers}: cannot be the contract's allowed_signers ({exc})") from None
    if written.allowed_signers != args.signers or dataclasses.replace(written, allowed_signers=None) != existing:
        raise UsageError(
            f"{args.contract}: cannot add `allowed_signers: {args.signers}` to it as a last line; add it by hand"
        )
    print(signers_setup.write(args.signers, signer))
    changes.write_atomic(args.contract, changes.same_line_endings(text, old_raw).encode("utf-8"))
    print(f"added to {args.contract}: allowed_signers: {args.signers} (nothing else changed)")
    if not args.no_snapshot:
        record_snapshot(existing, False)
    return 0


def merged(old: contract.Contract, fresh: contract.Contract) -> contract.Contract:
    """What `init --force` writes over OLD: everything OLD promised, plus what the scan found.

    The ledger, the caps, the signers, the approvals folder, the snapshot and
    the layers are kept as they are; existing locks and properties stay (a
    re-scan never drops or rotates one) and newly found ones are added.
    """
    fixture_paths = {f.path for f in old.fixtures}
    taken = {f.id for f in old.fixtures}
    fixtures = list(old.fixtures)
    for f in fresh.fixtures:
        if f.path not in fixture_paths:
            ident = _fixture_id(f.path, taken) if f.id in taken else f.id
            taken.add(ident)
            fixtures.append(contract.Fixture(ident, f.path, f.sha256))
    props = list(old.properties)
    known = {(p.module, p.name) for p in old.properties} | {p.id for p in old.properties}
    for p in fresh.properties:
        if (p.module, p.name) not in known and p.id not in known:
            props.append(p)
    roots = old.fixture_roots + tuple(r for r in fresh.fixture_roots if r not in old.fixture_roots)
    return contract.Contract(
        properties=tuple(props),
        fixtures=tuple(fixtures),
        freezes=old.freezes,
        max_active_freezes=old.max_active_freezes,
        max_freeze_days=old.max_freeze_days,
        max_reruns=old.max_reruns,
        allowed_signers=old.allowed_signers,
        approvals=old.approvals,
        snapshot=old.snapshot,
        fixture_roots=roots,
        layers=old.layers,
        path=old.path,
    )


# -- oracle-guard lock ---------------------------------------------------------------


def _fixtures_node(text: str) -> tuple[MappingNode, ScalarNode | SequenceNode | None]:
    root = yaml.compose(text, Loader=contract_yaml._StrictLoader)
    assert isinstance(root, MappingNode)
    for key, value in root.value:
        if key.value == "fixtures":
            return root, value
    return root, None


def _entry_text(fixture: contract.Fixture, indent: int) -> str:
    pad = " " * indent
    return (
        f"{pad}- id: {contract.scalar(fixture.id)}\n{pad}  path: {contract.scalar(fixture.path)}\n"
        f"{pad}  sha256: {contract.scalar(fixture.sha256)}\n{pad}  unlock: null\n"
    )


def add_locks(text: str, new: Sequence[contract.Fixture]) -> str:
    """TEXT with NEW fixture entries appended, comments and layout kept."""
    if not new:
        return text
    _, node = _fixtures_node(text)
    if node is None:
        return text.rstrip("\n") + "\nfixtures:\n" + "".join(_entry_text(f, 2) for f in new)
    if isinstance(node, SequenceNode) and node.value and not node.flow_style:
        indent = max(0, node.value[0].start_mark.column - 2)
        cut = len(text[: node.value[-1].end_mark.index].rstrip())
        return text[:cut] + "\n" + "".join(_entry_text(f, indent) for f in new).rstrip("\n") + text[cut:]
    if (isinstance(node, ScalarNode) and node.value in ("", "~", "null")) or (
        isinstance(node, SequenceNode) and not node.value
    ):
        start, end = node.start_mark.index, node.end_mark.index
        body = "".join(_entry_text(f, 2) for f in new).rstrip("\n")
        return text[:start].rstrip(" ") + "\n" + body + text[end:]
    c = contract.loads(text)  # a flow list with entries: rewrite (comments are lost)
    return contract.dumps(contract.Contract(**{**c.__dict__, "fixtures": c.fixtures + tuple(new)}))


@guarded
def lock_main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="oracle-guard lock", description="Add fixture locks (files or directories) to the contract."
    )
    parser.add_argument("paths", nargs="*", metavar="PATH")
    parser.add_argument("--id", help="the lock's id (one PATH only; default: derived from the path)")
    parser.add_argument(
        "--rotate",
        metavar="ID",
        action="append",
        default=[],
        help="set lock ID's sha256 to its fixture's current bytes (a weakening: sign the approval it prints)",
    )
    contract.add_contract_arg(parser)
    args = parser.parse_args(argv)
    if args.rotate:
        if args.paths or args.id:
            raise UsageError("--rotate takes lock ids only, no PATH or --id")
        changes.enter_repo([])
        return rotate_main(args.contract, args.rotate)
    if not args.paths:
        raise UsageError("name a PATH to lock, or --rotate ID")
    if args.id and len(args.paths) != 1:
        raise UsageError("--id names one lock; pass one PATH with it")
    paths = changes.enter_repo(args.paths)
    raw = contract.read_file(args.contract)
    if raw is None:
        _missing(args.contract)
    if os.path.islink(args.contract):
        raise UsageError(f"{args.contract}: is a symlink; lock edits a regular contract file")
    assert raw is not None
    current = contract.loads(raw, args.contract)
    text = raw.decode("utf-8").replace("\r\n", "\n")  # edited with \n, written back in the file's style
    by_path = {f.path: f for f in current.fixtures}
    taken = {f.id for f in current.fixtures}
    added: list[contract.Fixture] = []
    for path in paths:
        path = path.rstrip("/")
        try:
            digest = digest_of(path, current.fixture_roots)
        except Escape as exc:
            raise UsageError(f"{path} {exc}") from None
        if digest is None:
            raise UsageError(f"{path} does not exist")
        old = by_path.get(path)
        if old is not None:
            if old.sha256 == digest:
                print(f"{path}: already locked as '{old.id}'")
            else:
                print(
                    f"{path}: locked as '{old.id}' with another digest; rotating a lock is a weakening: "
                    f"edit its sha256 and commit with `oracle-guard approve fixture-rotate {old.id} {old.sha256} {digest}`"
                )
            continue
        ident = args.id or _fixture_id(path, taken)
        if args.id and ident in taken:
            raise UsageError(f"a lock with id '{ident}' already exists")
        taken.add(ident)
        added.append(contract.Fixture(ident, path, digest))
        by_path[path] = added[-1]
    new_text = add_locks(text, added)
    contract.loads(new_text, args.contract)  # the edit must still load
    if new_text != text:
        changes.write_atomic(args.contract, changes.same_line_endings(new_text, raw).encode("utf-8"))
    for fixture in added:
        print(f"locked {fixture.path} as '{fixture.id}' ({fixture.sha256[:12]}…)")
    return 0


def rotate_lock(contract_path: str, fixture_id: str, old: str, new: str) -> bool:
    """Rewrite lock FIXTURE_ID's sha256 from OLD to NEW in the contract, keeping everything else; False if it is not OLD."""
    with open(contract_path, "rb") as f:
        raw = f.read()
    current = contract.loads(raw, contract_path)
    entry = next((f for f in current.fixtures if f.id == fixture_id), None)
    if entry is None or entry.sha256 != old:
        return False
    text = raw.decode("utf-8")
    lines = text.splitlines(keepends=True)
    start = sum(len(line) for line in lines[: max(entry.line - 1, 0)])
    at = text.find(old, start)  # the entry's own sha256 value: the first one at or after its line
    if at < 0:
        return False
    rotated = text[:at] + new + text[at + len(old) :]
    after = contract.loads(rotated.encode("utf-8"), contract_path)
    if next(f.sha256 for f in after.fixtures if f.id == fixture_id) != new:
        raise UsageError(f"{contract_path}: could not rewrite the sha256 of '{fixture_id}' in place; edit it by hand")
    with open(contract_path, "w", encoding="utf-8", newline="\n") as out:
        out.write(rotated)
    return True


def rotate_main(contract_path: str, ids: list[str]) -> int:
    """`lock --rotate ID`: the contract follows the fixture's bytes; the rotation still needs its approval."""
    if not os.path.exists(contract_path):
        _missing(contract_path)
    current = contract.load(contract_path)
    by_id = {f.id: f for f in current.fixtures} if current else {}
    for fixture_id in ids:
        entry = by_id.get(fixture_id)
        if entry is None:
            raise UsageError(f"no lock with id '{fixture_id}' in {contract_path}")
        try:
            digest = digest_of(entry.path, current.fixture_roots if current else ())
        except Escape as exc:
            raise UsageError(f"{entry.path} {exc}") from None
        if digest is None:
            raise UsageError(
                f"{entry.path} does not exist; restore it, or drop the lock with `oracle-guard approve fixture-unlock {fixture_id} {entry.sha256}`"
            )
        if digest == entry.sha256:
            print(f"{entry.path}: '{fixture_id}' already matches its lock")
            continue
        rotate_lock(contract_path, fixture_id, entry.sha256, digest)
        print(f"rotated '{fixture_id}' in {contract_path}: sha256 {entry.sha256[:12]}… -> {digest[:12]}…")
        print(f"  sign it: oracle-guard approve fixture-rotate {fixture_id} {entry.sha256} {digest}")
    return 0


def _missing(path: str) -> NoReturn:
    raise UsageError(f"{path} does not exist; run `oracle-guard init` first")


if __name__ == "__main__":
    raise SystemExit(main())
