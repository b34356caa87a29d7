"""contract-split: production code and contract-layer files may not change in one commit.

The second article's bucket rule.  A commit that touches production code
(``layers.production``, default ``src/``) and the contract layer
(``layers.contracts``, default ``tests/contracts/``; plus every locked
fixture and the contract file itself) at once is rejected: a contract change
ships in its own, human-reviewed commit.  Files under the relations layer
(default ``tests/relations/``) may be added, never deleted or moved out.

In range mode (``--base``, or pre-commit's from/to refs) every commit of the
range is checked on its own, so a branch that splits the two is accepted.
Without a contract the default layer paths apply; a repository that has none
of the layer folders is not checked.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from oracle_guard.analysis import goldens
from oracle_guard.contract import contract
from oracle_guard.repo import changes, git
from oracle_guard.repo.context import HookContext
from oracle_guard.repo.paths import PYTHON_SUFFIXES, TEST_FILES
from oracle_guard.reporting.report import Finding, UsageError, guarded
from oracle_guard.rules import args as hook_args


def _under(path: str, prefixes: Sequence[str]) -> bool:
    return any(path == p.rstrip("/") or path.startswith(p.rstrip("/") + "/") for p in prefixes)


def _units(change_set: changes.ChangeSet) -> list[tuple[str, list[git.Change], tuple[str | None, str | None]]]:
    """The commits to judge one by one: (label, changes, (parent, commit or None for the work tree))."""
    if change_set.base is None or (change_set.base_label == "HEAD" and change_set.target is None):
        return [("this commit", change_set.changes, (change_set.base, change_set.target))]
    tip = change_set.target or "HEAD"
    # --parents: each line is the commit and its parents, so no `rev-parse` per commit.
    out = git.run("rev-list", "--no-merges", "--reverse", "--parents", f"{change_set.base}..{tip}").decode()
    units: list[tuple[str, list[git.Change], tuple[str | None, str | None]]] = []
    for line in out.splitlines():
        commit, *parents = line.split()
        parent = parents[0] if parents else git.empty_tree()
        units.append((f"commit {commit[:12]}", git.diff(parent, commit, cached=False), (parent, commit)))
    if change_set.target is None:
        head = change_set.head()
        pending = git.diff(head or git.empty_tree(), None, cached=False)
        if pending:
            units.append(("the uncommitted change", pending, (head, None)))
    return units


# Expected outputs recorded by a tool or by hand: re-recording one together with
# the code it judges is the cheapest way to turn a test green.  Adding one is fine.
GOLDEN = re.compile(
    r"(^|/)__snapshots__/|\.(ambr|snap)$|\.approved\.[^/]+$|(^|/)[^/]*golden[^/]*(/|$)"
    r"|(^|/)(tests?|testing)/(.*/)?(fixtures|data|testdata|test_data|expected|baselines?|snapshots?)/"
    r"|(^|/)(tests?|testing)/(.*/)?test_[^/]+/[^/]+\.(ya?ml|json|csv|txt|npz|npy|png|html|xml)$"
)
NOT_PRODUCTION = re.compile(
    r"(^|/)(docs?|examples?|bench(marks?)?|scripts|tools|\.github)/|^(setup|noxfile|conftest)\.py$"
)
SOURCE = re.compile(r"\.(py|pyx|pxd|pyi|c|cc|cpp|h|rs|go|js|ts)$")


def _production(path: str, layers: contract.Layers, configured: bool) -> bool:
    """Production code: the configured layer, or (no contract) source outside tests and docs."""
    if _under(path, layers.production):
        return True
    return (
        not configured and bool(SOURCE.search(path)) and not TEST_FILES.search(path) and not NOT_PRODUCTION.search(path)
    )


def golden_findings(
    units: list[tuple[str, list[git.Change], tuple[str | None, str | None]]], layers: contract.Layers, configured: bool
) -> list[Finding]:
    findings = []
    for label, unit, (parent, target) in units:
        touched = [p for c in unit for p in (c.path, c.old_path) if p]
        production = sorted({p for p in touched if _production(p, layers, configured)})
        if not production:
            continue
        more = f" and {len(production) - 1} more" if len(production) > 1 else ""
        for c in unit:
            # Modified in place only: a golden added for a new test, or moved as it is, re-records nothing.
            if c.status == "M" and c.path and GOLDEN.search(c.path) and not c.path.endswith(PYTHON_SUFFIXES):
                findings.append(
                    Finding(
                        c.path,
                        1,
                        1,
                        "OG703",
                        f"expected output re-recorded in {label} together with production code ({production[0]}{more}); update goldens in their own, reviewed commit",
                    )
                )
        # Added beside the code and read by a test that already existed: recorded from the changed code.
        added = [
            c.path
            for c in unit
            if c.status in ("A", "C") and c.path and GOLDEN.search(c.path) and not c.path.endswith(PYTHON_SUFFIXES)
        ]
        if added and parent:
            for path, why in goldens.re_recorded(added, parent, goldens.Side(target)):
                findings.append(
                    Finding(
                        path,
                        1,
                        1,
                        "OG703",
                        f"expected output recorded in {label} together with production code ({production[0]}{more}): {why}; "
                        "record it in its own, reviewed commit, or restore the test's base golden",
                    )
                )
    return findings


def split_findings(change_set: changes.ChangeSet, rules: contract.Contract | None, contract_path: str) -> list[Finding]:
    layers = rules.layers if rules else contract.Layers()
    layer_dirs = list(layers.contracts) + list(layers.relations) + list(layers.quarantine)
    units = _units(change_set)
    goldens = golden_findings(units, layers, rules is not None)
    if rules is None:
        present = any(os.path.isdir(d.rstrip("/")) for d in layer_dirs)
        touched_layers = any(
            _under(p, layer_dirs) for _, unit, _ in units for c in unit for p in (c.path, c.old_path) if p
        )
        if not (present or touched_layers):
            return goldens  # this repository does not use the layers
    contract_files = list(layers.contracts) + [f.path for f in (rules.fixtures if rules else ())] + [contract_path]
    findings: list[Finding] = []
    for label, unit, _ in units:
        touched = [p for c in unit for p in (c.path, c.old_path) if p]
        production = sorted({p for p in touched if _under(p, layers.production)})
        contracts = sorted({p for p in touched if _under(p, contract_files)})
        if production and contracts:
            more = f" and {len(production) - 1} more" if len(production) > 1 else ""
            for path in contracts:
                findings.append(
                    Finding(
                        path,
                        1,
                        1,
                        "OG701",
                        f"contract-layer file changed in {label} together with production code ({production[0]}{more}); ship the contract change in its own commit",
                    )
                )
        for c in unit:
            if (
                c.old_path
                and _under(c.old_path, layers.relations)
                and not (c.path and _under(c.path, layers.relations))
            ):
                verb = "deleted" if c.path is None else f"moved out to {c.path}"
                findings.append(
                    Finding(
                        c.old_path,
                        1,
                        1,
                        "OG702",
                        f"relations-layer file {verb} in {label}; relations may be added, not removed",
                    )
                )
    return findings + goldens  # OG703 never overlaps OG701/OG702


def check(ctx: HookContext) -> list[Finding]:
    if ctx.change_set is None:
        raise UsageError("contract-split compares with a base: it needs a change set")
    return split_findings(ctx.change_set, contract.load(ctx.contract), ctx.contract)


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    parser = hook_args.parser("contract-split", __doc__)
    hook_args.add_filenames(parser, "ignored: the change is read from git")
    hook_args.add_base(parser)
    hook_args.add_contract(parser)
    hook_args.add_format(parser)
    args = parser.parse_args(argv)
    changes.enter_repo([])
    rules = contract.load(args.contract)  # before git: a broken contract is the first thing said
    change_set = changes.resolve(args)
    ctx = hook_args.context(args, change_set)
    return hook_args.finish(ctx, lambda: split_findings(change_set, rules, ctx.contract), "contract-split")


if __name__ == "__main__":
    raise SystemExit(main())
