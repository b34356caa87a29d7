"""properties-monotonic: contract properties may be added or strengthened, never weakened.

Each property in the contract names a Hypothesis test by ``module`` (a dotted
path, resolved to a file as given or under ``src/``) and ``name`` (a function
or ``Class.method``).  Nothing is imported: the file is parsed on both sides
of the change.  Relative to the base contract, a property may not be removed,
repointed, or have ``min_examples`` lowered (unless a signed approval covers
exactly that); and the function it names must exist, keep ``@given``, run at
least ``min_examples`` examples (``@settings``, ``settings(parent)`` and a
loaded profile count; Hypothesis' default is 100), hold a check that can
fail, and draw from no narrower strategy than at the base.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Sequence
from typing import Callable

from oracle_guard.analysis.hypothesis import model as hm
from oracle_guard.analysis.pysource import FunctionNode, Module, SourceError
from oracle_guard.analysis.tautologies import tautology
from oracle_guard.contract import contract, trust
from oracle_guard.contract.approvals import Approvals
from oracle_guard.repo import changes
from oracle_guard.repo.context import HookContext
from oracle_guard.repo.paths import conftests_above
from oracle_guard.reporting.report import Finding, guarded
from oracle_guard.rules import args as hook_args


class _Tree:
    """Parsed Python files of one side of the change, read in batches and cached."""

    def __init__(
        self,
        read: Callable[[list[str]], dict[str, bytes | None]],
        models: dict[tuple[str, bytes], hm.HypothesisModule] | None = None,
        parsed: dict[tuple[str, bytes], Module] | None = None,
    ) -> None:
        self.read = read
        self.modules: dict[str, Module | None] = {}
        self.errors: dict[str, SourceError] = {}
        # Shared by both sides: a module the change leaves alone is parsed and modelled once, not once a side.
        self._models = models if models is not None else {}
        self._parsed = parsed if parsed is not None else {}

    def model(self, module: Module) -> hm.HypothesisModule:
        """The Hypothesis model of a module, built once (every property of a module asks, and both sides)."""
        key = (module.path, module.source)
        if key not in self._models:
            self._models[key] = hm.model(module)
        return self._models[key]

    def load(self, paths: list[str]) -> None:
        missing = [p for p in paths if p not in self.modules]
        if not missing:
            return
        for path, data in self.read(missing).items():
            module = None
            if data is not None:
                module = self._parsed.get((path, data))
                if module is None:
                    try:
                        module = self._parsed[(path, data)] = Module.from_source(path, data)
                    except SourceError as exc:
                        self.errors[path] = exc
            self.modules[path] = module

    def prefetch(self, dotted_names: list[str]) -> None:
        """Every file the properties may read (their modules, the conftests above), in one git process, not one
        per property."""
        wanted = [c for dotted in dotted_names for c in _candidates(dotted)]
        self.load(list(dict.fromkeys(wanted + [conf for c in wanted for conf in conftests_above(c)])))

    def module_file(self, dotted: str) -> str | None:
        candidates = _candidates(dotted)
        self.load(candidates)
        for c in candidates:
            if self.modules.get(c) is not None or c in self.errors:
                return c
        return None

    def profiles_for(self, path: str) -> tuple[dict[str, hm.Profile], str | None]:
        """Profiles registered (and the one loaded) in conftest.py files above PATH."""
        confs = conftests_above(path)[::-1]  # the top one first, as pytest loads them
        self.load(confs)
        profiles: dict[str, hm.Profile] = {}
        loaded = None
        for c in confs:
            module = self.modules.get(c)
            if module is not None:
                found = self.model(module)
                profiles.update(found.profiles)
                loaded = found.loaded or loaded
        return profiles, loaded


def _candidates(dotted: str) -> list[str]:
    stem = dotted.replace(".", "/")
    return [f"{stem}.py", f"{stem}/__init__.py", f"src/{stem}.py", f"src/{stem}/__init__.py"]


def _function(module: Module, name: str) -> FunctionNode | None:
    body: list[ast.stmt] = module.tree.body
    parts = name.split(".")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        function: FunctionNode | None = None
        cls: ast.ClassDef | None = None
        for node in body:
            if last and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == part:
                function = node
            elif not last and isinstance(node, ast.ClassDef) and node.name == part:
                cls = node
        if last:
            return function
        if cls is None:
            return None
        body = cls.body
    return None


def _vacuous(module: Module, fn: FunctionNode) -> bool:
    """Nothing in the body can fail (oracle_guard/analysis/hypothesis/model.py): a crash-only property is no vacuous one."""
    return hm.vacuous(fn, module.names, tautology)


def resolve(
    pid: str, prop: contract.Property, tree: _Tree, contract_path: str
) -> tuple[list[Finding], Module | None, hm.HypothesisTest | None]:
    """OG504-OG507 for one property on one side: (findings, its module, its Hypothesis test)."""

    def at(prop: contract.Property | None) -> tuple[int, int]:
        return (prop.line if prop and prop.line else 1), 1

    path = tree.module_file(prop.module)
    if path is None:
        return (
            [
                Finding(
                    contract_path,
                    *at(prop),
                    "OG504",
                    f"property '{pid}': module {prop.module} not found (tried {prop.module.replace('.', '/')}.py and under src/)",
                )
            ],
            None,
            None,
        )
    if path in tree.errors:
        return [tree.errors[path].finding(path)], None, None
    module = tree.modules[path]
    assert module is not None
    fn = _function(module, prop.name)
    if fn is None:
        return (
            [Finding(contract_path, *at(prop), "OG504", f"property '{pid}': {prop.name} not found in {path}")],
            None,
            None,
        )
    findings = []
    test = tree.model(module).tests.get(prop.name)
    where = module.position(fn)
    if test is None or not test.given:
        findings.append(
            Finding(
                path,
                *where,
                "OG505",
                f"property '{pid}': {prop.name} has no @given, so it runs once, not min_examples={prop.min_examples} times",
            )
        )
    else:
        effective = effective_examples(tree, path, module, test)
        if effective < prop.min_examples:
            line = test.settings_line or where[0]
            findings.append(
                Finding(
                    path,
                    line,
                    1 if test.settings_line else where[1],
                    "OG506",
                    f"property '{pid}': {prop.name} runs max_examples={effective}, below the contract's min_examples={prop.min_examples}",
                )
            )
    if _vacuous(module, fn):
        findings.append(
            Finding(path, *where, "OG507", f"property '{pid}': {prop.name} has no check that can fail (vacuous body)")
        )
    return findings, module, test


def effective_examples(tree: _Tree, path: str, module: Module, test: hm.HypothesisTest) -> int:
    """The max_examples Hypothesis runs TEST with: its settings, else a profile loaded here or in a conftest above."""
    profiles, loaded = tree.profiles_for(path)
    return tree.model(module).effective_max_examples(test, profiles, loaded)


def registrable(
    properties: Sequence[contract.Property], read: Callable[[list[str]], dict[str, bytes | None]]
) -> tuple[list[contract.Property], list[str]]:
    """What `oracle-guard init` may lock: each property with the max_examples this hook
    computes as its min_examples, none that this hook would reject; and why the rest were left out."""
    tree = _Tree(read)
    kept: list[contract.Property] = []
    left_out: list[str] = []
    for prop in properties:
        path = tree.module_file(prop.module)
        module = tree.modules.get(path) if path else None
        test = tree.model(module).tests.get(prop.name) if module is not None else None
        if path is not None and module is not None and test is not None and test.given:
            prop = dataclasses.replace(prop, min_examples=max(1, effective_examples(tree, path, module, test)))
        problems, _, _ = resolve(prop.id, prop, tree, "the contract")
        if problems:
            left_out.append(f"{prop.module}:{prop.name}: {problems[0].code} {problems[0].message}")
        else:
            kept.append(prop)
    return kept, left_out


def property_findings(change_set: changes.ChangeSet | None, contract_path: str) -> list[Finding]:
    reader = change_set or changes.ChangeSet(None, "", None)
    new_contract = contract.at_new(reader.target, contract_path)
    base_contract = contract.at_base(reader.base, contract_path)  # one that does not load stops the check
    if new_contract is None and base_contract is None:
        return []
    approvals = Approvals.load(change_set, base_contract, new_contract)
    findings: list[Finding] = trust.setting_findings(base_contract, new_contract, reader, approvals, contract_path)
    new_props = {p.id: p for p in new_contract.properties} if new_contract else {}
    base_props = {p.id: p for p in base_contract.properties} if base_contract else {}

    def at(prop: contract.Property | None) -> tuple[int, int]:
        return (prop.line if prop and prop.line else 1), 1

    for pid, old in base_props.items():
        new = new_props.get(pid)
        if new is None:
            if not approvals.covers(f"property-retire {pid}"):
                findings.append(
                    Finding(
                        contract_path,
                        1,
                        1,
                        "OG501",
                        f"property '{pid}' ({old.module}:{old.name}) was removed from the contract; retiring it needs a signed approval",
                    )
                )
            continue
        if (new.module, new.name) != (old.module, old.name):
            stmt = f"property-repoint {pid} {old.module}:{old.name} {new.module}:{new.name}"
            if not approvals.covers(stmt):
                findings.append(
                    Finding(
                        contract_path,
                        *at(new),
                        "OG502",
                        f"property '{pid}' repointed from {old.module}:{old.name} to {new.module}:{new.name}",
                    )
                )
        if new.min_examples < old.min_examples and not approvals.covers(
            f"property-lower {pid} {old.min_examples} {new.min_examples}"
        ):
            findings.append(
                Finding(
                    contract_path,
                    *at(new),
                    "OG503",
                    f"property '{pid}' min_examples lowered from {old.min_examples} to {new.min_examples}",
                )
            )

    models: dict[tuple[str, bytes], hm.HypothesisModule] = {}
    parsed: dict[tuple[str, bytes], Module] = {}
    new_tree = _Tree(reader.read_new, models, parsed)
    base_tree = _Tree(reader.read_base, models, parsed) if reader.base else None
    new_tree.prefetch([p.module for p in new_props.values()])
    if base_tree is not None:
        base_tree.prefetch([p.module for p in base_props.values() if p.id in new_props])
    for pid, prop in new_props.items():
        problems, module, test = resolve(pid, prop, new_tree, contract_path)
        findings += problems
        if module is None:
            continue
        base_prop = base_props.get(pid)
        if base_prop is None or base_tree is None or test is None:
            continue
        base_path = base_tree.module_file(base_prop.module)
        base_module = base_tree.modules.get(base_path) if base_path else None
        base_fn = _function(base_module, base_prop.name) if base_module else None
        if base_module is None or base_fn is None:
            continue
        base_test = base_tree.model(base_module).tests.get(base_prop.name)
        if base_test is None or not base_test.given:
            continue
        pairs = (
            list(zip(base_test.given_args, test.given_args))
            if len(base_test.given_args) == len(test.given_args)
            else []
        )
        pairs += [(base_test.given_kwargs[k], v) for k, v in test.given_kwargs.items() if k in base_test.given_kwargs]
        for old_s, new_s in pairs:
            why = hm.narrower(old_s, new_s, base_module.names, module.names)
            if why:
                findings.append(module.finding(new_s, "OG508", f"property '{pid}': strategy narrowed: {why}"))
    return findings


def check(ctx: HookContext) -> list[Finding]:
    return property_findings(ctx.change_set, ctx.contract)


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    parser = hook_args.parser("properties-monotonic", __doc__)
    hook_args.add_filenames(parser, "ignored: the contract and the files it names are read from git")
    hook_args.add_base(parser)
    hook_args.add_contract(parser)
    hook_args.add_format(parser)
    args = parser.parse_args(argv)
    changes.enter_repo([])
    ctx = hook_args.context(args, changes.resolve(args))
    return hook_args.finish(ctx, lambda: check(ctx), "properties-monotonic")


if __name__ == "__main__":
    raise SystemExit(main())
