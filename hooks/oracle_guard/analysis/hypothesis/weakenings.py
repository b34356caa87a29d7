"""Hypothesis tests and settings made weaker than at the base (oracle-shrink's OG309..OG313).

@given removed, fewer examples or steps in a test's settings or a profile,
an explicit @example removed, a strategy narrowed (in the test, or in a
module constant it draws from), new assume()/filter() calls that discard
generated examples.  The models come from oracle_guard.analysis.hypothesis.model.
"""

from __future__ import annotations

import ast

from oracle_guard.analysis.checkfacts import Facts, Side, finding_at
from oracle_guard.analysis.hypothesis import model as hm
from oracle_guard.reporting.report import Finding


def compare_hypothesis_test(base: Facts, new: Facts, base_side: Side, new_side: Side, who: str) -> list[Finding]:
    """One Hypothesis test against its base version: @given, settings, examples, strategies, discards."""
    out: list[Finding] = []
    old_t = base_side.hyp.tests.get(base.qualname)
    new_t = new_side.hyp.tests.get(new.qualname)
    if old_t is None or not old_t.given:
        return out
    if new_t is None or not new_t.given:
        out.append(
            finding_at(
                new_side,
                new.node,
                "OG310",
                f"{who}: @given removed; the property now runs once instead of on generated examples",
            )
        )
        return out
    base_max = base_side.hyp.effective_max_examples(old_t)
    new_max = new_side.hyp.effective_max_examples(new_t)
    why = hm.weaker_settings(
        old_t.settings, new_t.settings, base_side.module.names, new_side.module.names, base_max, new_max
    )
    if why:
        line = new_t.settings_line or new_t.line
        out.append(
            Finding(
                new_side.path,
                line,
                1 if new_t.settings_line else new_t.col,
                "OG309",
                f"{who}: weaker Hypothesis settings: {why}",
            )
        )
    lost = [e for e in old_t.examples if e not in new_t.examples]
    if lost:
        out.append(finding_at(new_side, new.node, "OG311", f"{who}: explicit example `{lost[0]}` removed"))
    pairs = list(zip(old_t.given_args, new_t.given_args)) if len(old_t.given_args) == len(new_t.given_args) else []
    pairs += [(old_t.given_kwargs[k], v) for k, v in new_t.given_kwargs.items() if k in old_t.given_kwargs]
    if len(old_t.draws) == len(new_t.draws):  # data.draw(...) in the body, in order
        pairs += list(zip(old_t.draws, new_t.draws))
    for old_s, new_s in pairs:
        why = hm.narrower(old_s, new_s, base_side.module.names, new_side.module.names)
        if why:
            out.append(finding_at(new_side, new_s, "OG312", f"{who}: strategy narrowed: {why}"))
    if new_t.assumes > old_t.assumes:
        out.append(
            finding_at(
                new_side,
                new.node,
                "OG313",
                f"{who}: new assume() discards generated examples ({new_t.assumes}, base had {old_t.assumes})",
            )
        )
    elif new_t.filters > old_t.filters:
        out.append(finding_at(new_side, new.node, "OG313", f"{who}: new .filter() discards generated examples"))
    return out


def compare_profiles(base: Side, new: Side) -> list[Finding]:
    out = []
    for name, profile in new.hyp.profiles.items():
        old = base.hyp.profiles.get(name)
        old_max = (
            old.max_examples if old and old.max_examples is not None else (hm.DEFAULT_MAX_EXAMPLES if old else None)
        )
        new_max = profile.max_examples if profile.max_examples is not None else hm.DEFAULT_MAX_EXAMPLES
        if old_max is not None and new_max < old_max:
            out.append(
                Finding(
                    new.path,
                    profile.line,
                    profile.col,
                    "OG309",
                    f"Hypothesis profile '{name}' lowered to max_examples={new_max} (base {old_max})",
                )
            )
        elif old is not None and old_max is not None:  # fewer steps, or phases that no longer generate
            why = hm.weaker_settings(
                old.settings, profile.settings, base.module.names, new.module.names, old_max, new_max
            )
            if why:
                out.append(
                    Finding(
                        new.path, profile.line, profile.col, "OG309", f"Hypothesis profile '{name}' weakened: {why}"
                    )
                )
    b_loaded, n_loaded = base.hyp.loaded, new.hyp.loaded
    if b_loaded and n_loaded and b_loaded != n_loaded:

        def level(side: Side, name: str) -> int | None:
            p = side.hyp.profiles.get(name)
            return None if p is None else (p.max_examples if p.max_examples is not None else hm.DEFAULT_MAX_EXAMPLES)

        old_level, new_level = level(base, b_loaded), level(new, n_loaded)
        if old_level is not None and new_level is not None and new_level < old_level:
            out.append(
                Finding(
                    new.path,
                    new.hyp.loaded_line,
                    1,
                    "OG309",
                    f"loads Hypothesis profile '{n_loaded}' (max_examples={new_level}) instead of '{b_loaded}' ({old_level})",
                )
            )
    return out


def compare_module_strategies(base: Side, new: Side) -> list[Finding]:
    """Strategies kept in module constants (a shared strategies.py, ``TYPES = (a, b)``
    drawn by ``sampled_from(TYPES)``) narrowed where they are defined."""
    out = []
    old_consts, new_consts = base.analyzer.constants, new.analyzer.constants
    for name, value in new_consts.items():
        old = old_consts.get(name)
        if old is None or ast.dump(old) == ast.dump(value):
            continue
        why = None
        if hm.drawn_strategy(base.module.names, old):
            why = hm.narrower(old, value, base.module.names, new.module.names)
        elif (
            isinstance(old, (ast.Tuple, ast.List, ast.Set))
            and isinstance(value, (ast.Tuple, ast.List, ast.Set))
            and _sampled_from_name(new, name)
        ):
            was, now = {ast.dump(e) for e in old.elts}, {ast.dump(e) for e in value.elts}
            if was - now and not now - was:
                why = (
                    f"`{ast.unparse(value)}` lost {len(was - now)} of the {len(was)} values `sampled_from({name})` drew"
                )
        if why:
            out.append(finding_at(new, value, "OG312", f"strategy `{name}` narrowed: {why}"))
    return out


def _sampled_from_name(side: Side, name: str) -> bool:
    for node in ast.walk(side.module.tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == name:
            if (side.module.names.qualify(node.func) or "") == hm.ST + "sampled_from":
                return True
    return False
