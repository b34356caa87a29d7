"""Differential neighbours: the tested inputs, and the verdict on how the new code behaves around them.

The replay's probe run (probes/neighbours/plugin.py) calls each function
the selected base tests call with literal scalar, str or bytes arguments, on
both trees: at the tested input and on neighbouring inputs (one argument
varied).  This module finds those call sites in the base's test source, and
judges the answers.

A lookup table of the tests' answers has one signature per base: on a green base the new code
agrees with the base code at exactly the tested input, and disagrees with it on (nearly) every
input around it (OG912); on a red base it differs from the base at the tested input and nowhere
around it (OG915); on a stub base (no answers) it answers the tested input and nothing of that kind
around it (OG914).  An honest change either keeps the answers (a refactor, a performance rewrite,
memoization) or changes a whole class of inputs, which the tested input then usually belongs to
(a bug fix, a new format, an implementation), or leaves most neighbours alone.  Answers compare
by type and value, an exception by its type; a stub's NotImplementedError is no answer.  A test
that fails on the new code is never judged here.  Two calls with the same arguments that answer
differently on the new code, where the base answered the same, are recorded state (OG916).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from typing import Any, NamedTuple

from oracle_guard.probes.neighbours import recorder
from oracle_guard.reporting.findings import Finding

MIN_INFORMATIVE = 8  # neighbours where at least one side returned a comparable answer
DISAGREEMENT = 0.8  # the share of those on which the two sides must differ
SHARPENED = 0.5  # ... when a line the change adds runs at the tested input and at none of the others
MAX_SITES = 40
RED_SHARE = 0.25  # on a red base, the most neighbours a special case's key may reach (all then get its answer)
BOTH, FIXED, OPEN = "both", "fixed", "open"  # a test passed on both sides; was red at the base and passes now; neither
SKIP_HEADS = frozenset({"self", "cls", "pytest", "unittest", "mock", "os", "sys", "re", "json", "math", "time"})
SCALARS = (int, float, str, bytes)
STUB = ["raise", "NotImplementedError"]  # a stub's answer: none (never agreement, never a difference)
UNSTABLE = ["?", "unstable"]  # the probe's answer when two calls with the same arguments differ


class CallSite(NamedTuple):
    id: str
    path: str
    line: int
    col: int
    node: str  # the test's node id (its function; a parametrized test's ids all share it)
    callee: str  # the dotted name as the test module spells it
    args: str  # repr of the positional literals
    kwargs: str  # repr of the keyword literals
    where: str = ""  # a recorded call: the production module defining CALLEE (a literal site: "")
    receiver: str = ""  # a recorded method call: the receiver's class; ARGS[0] is its attributes
    seen: str = ""  # "new": recorded on the new side only, at a line where the base recorded a call too

    def text(self, args: str | None = None) -> str:
        if self.receiver and args is None:
            return self.shown(ast.literal_eval(self.args), ast.literal_eval(self.kwargs))
        return f"{self.callee}({(args if args is not None else _call_text(self.args, self.kwargs))})"

    def shown(self, args: list[Any], kwargs: dict[str, Any]) -> str:
        """The call at ARGS: a method's receiver as its class and attributes (`<Doc text='x'>.title()`)."""
        if not self.receiver or not args or not isinstance(args[0], dict):
            return self.text(_call_text(repr(args), repr(kwargs)))
        state = " ".join(f"{k}={_literal(v)}" for k, v in args[0].items())
        method = self.callee.rsplit(".", 1)[-1]
        return f"<{self.receiver}{' ' + state if state else ''}>.{method}({_call_text(repr(args[1:]), repr(kwargs))})"


def _call_text(args: str, kwargs: str) -> str:
    positional = ast.literal_eval(args)
    named = ast.literal_eval(kwargs)
    return ", ".join([*(_literal(a) for a in positional), *(f"{k}={_literal(v)}" for k, v in named.items())])


def _literal(value: Any) -> str:
    """VALUE as the call's text shows it: a recorded object as ``Class(attribute=value, ...)``, a recorded
    value type as ``type(arguments)`` (recorder.py), anything else as its repr."""
    if isinstance(value, dict) and recorder.OBJECT in value:
        name = str(value[recorder.OBJECT]).rpartition(":")[2]
        state = value.get("state")
        shown = state.items() if isinstance(state, dict) else ()
        return f"{name}({', '.join(f'{k}={_literal(v)}' for k, v in shown)})"
    if isinstance(value, dict) and recorder.VALUE in value:
        name = str(value[recorder.VALUE]).rpartition(":")[2]
        return f"{name}({', '.join(_literal(v) for v in value.get('args') or [])})"
    if isinstance(value, list):
        return f"[{', '.join(_literal(v) for v in value)}]"
    if isinstance(value, tuple):
        return f"({', '.join(_literal(v) for v in value)}{',' if len(value) == 1 else ''})"
    if isinstance(value, dict):
        return f"{{{', '.join(f'{k!r}: {_literal(v)}' for k, v in value.items())}}}"
    return repr(value)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def _scalar(node: ast.expr) -> tuple[Any, bool]:
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None, False
    return value, value is None or isinstance(value, (*SCALARS, bool))


def _imported_names(tree: ast.Module) -> set[str]:
    """Names the module binds by importing from a module that is not a test module (absolute imports)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if not _test_module(node.module):
                names.update(a.asname or a.name for a in node.names if a.name != "*")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if not _test_module(alias.name):
                    names.add(alias.asname or alias.name.split(".")[0])
    return names


def _test_module(dotted: str) -> bool:
    return any(
        part == "tests" or part.startswith(("test_", "conftest")) or part == "testing" for part in dotted.split(".")
    )


def call_sites(source: str, path: str) -> list[CallSite]:
    """Calls inside test functions of PATH whose arguments are all literal scalars, str or bytes."""
    try:
        tree = ast.parse(source, path)
    except SyntaxError:
        return []
    imported = _imported_names(tree) - SKIP_HEADS
    found: list[CallSite] = []
    for owner, func in _test_functions(tree):
        node_id = "::".join([path, *owner, func.name])
        for call in ast.walk(func):
            if not isinstance(call, ast.Call) or not (call.args or call.keywords):
                continue
            callee = _dotted(call.func)
            if callee is None or callee.split(".")[0] not in imported:
                continue
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                continue
            args = [_scalar(a) for a in call.args]
            kwargs = {k.arg: _scalar(k.value) for k in call.keywords if k.arg}
            values = [*args, *kwargs.values()]
            if not all(ok for _, ok in values):
                continue
            if not any(isinstance(v, SCALARS) and not isinstance(v, bool) for v, _ in values):
                continue
            site_id = f"{path}:{call.lineno}:{call.col_offset}"
            found.append(
                CallSite(
                    site_id,
                    path,
                    call.lineno,
                    call.col_offset + 1,
                    node_id,
                    callee,
                    repr([v for v, _ in args]),
                    repr({k: v for k, (v, _) in kwargs.items()}),
                )
            )
    return found


def _test_functions(tree: ast.Module) -> list[tuple[list[str], ast.FunctionDef]]:
    found: list[tuple[list[str], ast.FunctionDef]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            found.append(([], node))
        elif isinstance(node, ast.ClassDef):
            found += [
                ([node.name], f) for f in node.body if isinstance(f, ast.FunctionDef) and f.name.startswith("test")
            ]
    return found


# -- the verdict ---------------------------------------------------------------------------------------


def same(a: Any, b: Any) -> bool:
    """Two answers are the same: equal, floats within a relative 1e-9, exceptions of the same type."""
    if not (isinstance(a, list) and isinstance(b, list)) or not a or not b:
        return bool(a == b)
    if a[0] != b[0]:
        return False
    if a[0] == "f" and isinstance(a[1], float) and isinstance(b[1], float):
        return math.isclose(a[1], b[1], rel_tol=1e-9, abs_tol=1e-12)
    if a[0] in ("l", "t", "s") and len(a[1]) == len(b[1]):
        return all(same(x, y) for x, y in zip(a[1], b[1]))
    if a[0] == "d" and len(a[1]) == len(b[1]):
        return all(same(x[0], y[0]) and same(x[1], y[1]) for x, y in zip(a[1], b[1]))
    if a[0] == "o" and len(a) == len(b) == 3:
        return a[1] == b[1] and same(a[2], b[2])
    if a[0] == "v" and len(a) == len(b) == 2:
        return type(a[1]) is type(b[1]) and bool(a[1] == b[1])  # True is not 1
    return bool(a == b)


def _comparable(answer: Any) -> bool:
    return isinstance(answer, list) and bool(answer) and answer[0] != "?"


def _answers(answer: Any) -> bool:
    """ANSWER is one: comparable, and not a stub's NotImplementedError (a stub has no answers)."""
    return _comparable(answer) and answer != STUB


def _value(answer: Any) -> bool:
    return _comparable(answer) and answer[0] != "raise"


def kind(answer: Any) -> str:
    """What sort of answer: raised (any exception), a number, a bool, None, a str, a list, an object's class..."""
    if answer[0] == "raise":
        return "raise"
    if answer[0] in ("v", "f", "i"):
        value = answer[1]
        if value is None or isinstance(value, bool):
            return repr(value) if value is None else "bool"
        return "str" if isinstance(value, str) and answer[0] == "v" else "number"
    if answer[0] == "o":
        return f"o:{answer[1]}"
    return str(answer[0])


def stub(before: dict[str, Any]) -> bool:
    """The base has no answers at this site: NotImplementedError at the tested input, or raised on every input."""
    tested = before.get("tested")
    if tested == STUB:
        return True
    answers = [tested, *(pair[0] for pair in before.get("inputs", {}).values() if isinstance(pair, list) and pair)]
    return all(_comparable(a) and a[0] == "raise" for a in answers)


def _shown(answer: Any) -> str:
    if not _comparable(answer):
        return "?"
    if answer[0] == "raise":
        return f"raises {answer[1]}"
    if answer[0] == "o":
        return f"a {answer[1]}"
    if answer[0] in ("v", "f", "i", "r"):
        return str(answer[1]) if answer[0] == "r" else repr(answer[1])
    if answer[0] == "b":
        return repr(bytes.fromhex(answer[1]))
    return str(answer[1])[:80]


def _function(site: CallSite) -> str:
    """What identifies the called function: its module and name when recorded, the test's spelling otherwise."""
    return f"{site.where}:{site.callee}" if site.where else site.callee


def recorded_sites(
    data: Any,
    passed: set[str],
    literal: list[CallSite],
    new_data: Any = None,
    outcomes: Mapping[str, str] | None = None,
) -> list[CallSite]:
    """The recorded calls (the base side's probe run) worth judging, as call sites.

    Only calls made by tests that pass on the new code (PASSED: on both sides, or red at the base and
    fixed), not already a literal site at the same place, with at least one argument to vary.
    NEW_DATA: the new side's recording; of it, only calls the base did not make, by a test red at the
    base and fixed (OUTCOMES), at a line where the base recorded a call too (``parse(x).title()`` on a
    stub ``parse``: the base never reached ``title``), so the new code adds no line to what is judged.
    """
    calls = _complete_calls(data)
    if calls is None:
        return []
    known = {(str(c.get("node")), str(c.get("path")), c.get("line")) for c in calls if isinstance(c, dict)}
    keys = {call_key(c) for c in calls if isinstance(c, dict)}
    more = [
        {**c, "seen": "new"}
        for c in _complete_calls(new_data) or []
        if isinstance(c, dict)
        and (str(c.get("node")), str(c.get("path")), c.get("line")) in known
        and call_key(c) not in keys
        and status(str(c.get("node")), outcomes or {}) == FIXED
    ]
    taken = {(s.path, s.line, s.callee.rsplit(".", 1)[-1]) for s in literal}  # another callee on the line is not it
    found: list[CallSite] = []
    for call in [*calls, *more]:
        try:
            node, path, line, col = str(call["node"]), str(call["path"]), int(call["line"]), int(call["col"])
            where, callee, receiver = str(call["where"]), str(call["callee"]), str(call.get("receiver") or "")
            args, kwargs = ast.literal_eval(call["args"]), ast.literal_eval(call["kwargs"])
        except (KeyError, TypeError, ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if (
            node not in passed
            or (path, line, callee.rsplit(".", 1)[-1]) in taken
            or not isinstance(args, list)
            or not isinstance(kwargs, dict)
        ):
            continue
        if receiver and not (args and isinstance(args[0], dict)):
            continue
        values = [*(args[0].values() if receiver else ()), *args[1 if receiver else 0 :], *kwargs.values()]
        if not any(_varies(v) for v in values):
            continue
        site_id = f"{path}:{line}:{col}:{where}:{callee}:{len(found)}"
        seen = str(call.get("seen") or "")
        found.append(CallSite(site_id, path, line, col, node, callee, repr(args), repr(kwargs), where, receiver, seen))
    return found  # recorded.chosen keeps MAX_SITES of them, the calls of tests red at the base first


def _varies(value: Any) -> bool:
    """VALUE is, or holds in a list, tuple or dict, a scalar the probe can vary (not a bool)."""
    return bool(_scalars(value))


def _scalars(value: Any) -> list[Any]:
    """The scalars the probe varies in VALUE: itself, or those in the items of a list, tuple or dict, the
    attributes of a recorded object, the arguments of a recorded value type (recorder.py)."""
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _scalars(v)]
    if isinstance(value, dict) and recorder.OBJECT in value:  # its attributes vary, never their names
        state = value.get("state")
        return [s for v in (state.values() if isinstance(state, dict) else ()) for s in _scalars(v)]
    if isinstance(value, dict) and recorder.VALUE in value:
        return _scalars(value.get("args") or [])
    if isinstance(value, dict):  # a key names a part of the input (an element, a field): it varies too
        return [s for k, v in value.items() for s in [*_scalars(k), *_scalars(v)]]
    return [value] if isinstance(value, SCALARS) and not isinstance(value, bool) else []


def _complete_calls(data: Any) -> list[Any] | None:
    calls = data.get("calls") if isinstance(data, dict) and data.get("complete") is True else None
    return calls if isinstance(calls, list) else None


def call_key(call: dict[str, Any]) -> tuple[str, ...]:
    return tuple(str(call.get(k)) for k in ("node", "where", "callee", "receiver", "args", "kwargs"))


def status(node: str, outcomes: Mapping[str, str] | None) -> str | None:
    """BOTH (passed on both sides), FIXED (red at the base, passes now) or None: a test of NODE fails,
    errors or skips on the new code (never a special-case finding), or nothing says how it ran."""
    if outcomes is None:
        return BOTH
    found = {o for n, o in outcomes.items() if n == node or n.startswith(node + "[")}
    if not found or not found <= {BOTH, FIXED}:
        return None
    return FIXED if FIXED in found else BOTH


def judge(
    sites: list[CallSite],
    base: Any,
    new: Any,
    base_label: str,
    outcomes: Mapping[str, str] | None = None,
) -> list[tuple[str, Finding]]:
    """(node id, finding) for each call site whose tested input the new code special-cases.

    OUTCOMES: base node id -> BOTH, FIXED or OPEN (None: every site's test passed on both sides).
    A green base (OG912), a red one (OG915), a stub's (OG914), and recorded state (OG916).
    """
    if not isinstance(base, dict) or not isinstance(new, dict):
        return []
    before_all, after_all = base.get("sites", {}), new.get("sites", {})
    tested_keys: dict[str, set[str]] = {}
    for site in sites:
        tested_keys.setdefault(_function(site), set()).add(
            repr((ast.literal_eval(site.args), ast.literal_eval(site.kwargs)))
        )
    found: list[tuple[str, Finding]] = []
    for site in sites:
        how = status(site.node, outcomes)
        before, after = before_all.get(site.id), after_all.get(site.id)
        if before is None and site.seen == "new" and how == FIXED and isinstance(after, dict):
            before = _absent(after)
        if how is None or not isinstance(before, dict) or not isinstance(after, dict):
            continue
        others = tested_keys.get(_function(site), set())
        pairs = _pairs(before, after, others)
        if after.get("tested") == UNSTABLE and _answers(before.get("tested")):
            code, text = "OG916", _unstable_text(site, before["tested"], base_label)
        elif stub(before):
            code, text = "OG914", _stub_text(site, after, pairs, base_label)
        elif how == FIXED:
            code, text = "OG915", _red_text(site, before, after, pairs, base_label)
        else:
            code, text = "OG912", _green_text(site, before, after, pairs, base_label)
        if text:
            found.append((site.node, Finding(site.path, site.line, site.col, code, text)))
    return found


def _absent(after: dict[str, Any]) -> dict[str, Any]:
    """What a red base answers at a site it cannot reach (its class or function is not there): nothing, a stub's."""
    inputs = after.get("inputs", {})
    return {"tested": STUB, "inputs": {k: [STUB, *v[1:]] for k, v in inputs.items() if isinstance(v, list)}}


def _pairs(before: dict[str, Any], after: dict[str, Any], tested: set[str]) -> list[tuple[str, Any, Any]]:
    """(input, base answer, new answer) for each neighbour both sides called, other tested inputs left out."""
    found = []
    for key, pair in before.get("inputs", {}).items():
        other = after.get("inputs", {}).get(key)
        if other is None or key in tested or not isinstance(pair, list) or not isinstance(other, list):
            continue
        if pair and other:
            found.append((key, pair[0], other[0]))
    return found


def _called(site: CallSite) -> str:
    return f"{site.text()}, as {site.node} calls it," if site.where else site.text()


def _example(site: CallSite, key: str) -> str:
    args, kwargs = ast.literal_eval(key)
    return site.shown(args, kwargs)


def _approve(site: CallSite) -> str:
    return f"`oracle-guard approve behavior-change {site.node}`"


def _green_text(
    site: CallSite, before: dict[str, Any], after: dict[str, Any], pairs: list[tuple[str, Any, Any]], base_label: str
) -> str:
    """OG912: the new code agrees with the base at the tested input and disagrees around it."""
    tested_b, tested_n = before.get("tested"), after.get("tested")
    if not (_answers(tested_b) and _answers(tested_n) and same(tested_b, tested_n)):
        return ""
    informative = [(k, b, n) for k, b, n in pairs if _answers(b) and _comparable(n) and not (b[0] == n[0] == "raise")]
    differ = [(k, b, n) for k, b, n in informative if not same(b, n)]
    only = after.get("only_tested")
    lines = [str(line) for line in only] if isinstance(only, list) else []
    share = SHARPENED if lines else DISAGREEMENT
    if len(informative) < MIN_INFORMATIVE or len(differ) < share * len(informative):
        return ""
    key, answer_b, answer_n = differ[0]
    return (
        f"{_called(site)} gives {base_label}'s answer on the new code, but the new code disagrees with "
        f"{base_label} on {len(differ)} of {len(informative)} inputs around it (e.g. {_example(site, key)}: "
        f"{_shown(answer_b)} at {base_label}, {_shown(answer_n)} now)"
        f"{f', and {lines[0]}, a line the change adds, runs for the tested input only' if lines else ''}"
        ": the tested input looks special-cased; "
        f"make the code right for the whole class of inputs, or approve the change: {_approve(site)}"
    )


def _red_text(
    site: CallSite, before: dict[str, Any], after: dict[str, Any], pairs: list[tuple[str, Any, Any]], base_label: str
) -> str:
    """OG915: a red base's test now passes, and the new code changed its answer at the tested input only."""
    tested_b, tested_n = before.get("tested"), after.get("tested")
    if not (_answers(tested_b) and _value(tested_n)) or same(tested_b, tested_n) or _degenerate(site):
        return ""
    # Both sides raising tells nothing, unless the base raised that at the tested input too: then the
    # new code kept the failure the test was red with (xmltodict 927a025a: a number as an element's text).
    informative = [
        (k, b, n)
        for k, b, n in pairs
        if _answers(b) and _comparable(n) and not (b[0] == n[0] == "raise" and not same(b, tested_b))
    ]
    differ = [(k, b, n) for k, b, n in informative if not same(b, n)]
    if len(informative) < MIN_INFORMATIVE or not (not differ or _one_answer(tested_n, differ, len(informative))):
        return ""
    key, answer_b, _ = next((p for p in informative if same(p[1], p[2])), informative[0])
    changed = (
        f" except {len(differ)} that now get the tested answer too (e.g. {_example(site, differ[0][0])})"
        if differ
        else ""
    )
    return (
        f"{_called(site)} fails at {base_label} and passes now: the new code answers {_shown(tested_n)} there "
        f"({base_label}: {_shown(tested_b)}), but gives {base_label}'s answer on the {len(informative)} inputs "
        f"of its shape around it{changed} (e.g. {_example(site, key)}: {_shown(answer_b)} on both): the change "
        "fixed the tested input only, which looks special-cased; make the code right for the whole class of "
        f"inputs, or approve the change: {_approve(site)}"
    )


def _one_answer(tested: Any, differ: list[tuple[str, Any, Any]], informative: int) -> bool:
    """The few neighbours the change moved all get the tested answer itself: a special case keyed on a part
    of the input.  Only for answers that name much (a str, bytes, a container, an object): a bool, a
    number or None is also what an honest fix of a narrow class answers (a leap year, a month's length)."""
    if kind(tested) in ("bool", "number", "None", "raise") or len(differ) > RED_SHARE * informative:
        return False
    return all(same(n, tested) for _, _, n in differ)


def _stub_text(site: CallSite, after: dict[str, Any], pairs: list[tuple[str, Any, Any]], base_label: str) -> str:
    """OG914: the base is a stub (no answers); the new code answers the tested input and none of its kind around it."""
    tested_n = after.get("tested")
    if not _value(tested_n):
        return ""
    answered = [(k, n) for k, _, n in pairs if _comparable(n)]
    wanted = kind(tested_n)
    if len(answered) < MIN_INFORMATIVE or any(kind(n) == wanted for _, n in answered):
        return ""
    key, answer_n = answered[0]
    return (
        f"{_called(site)} answers {_shown(tested_n)} on the new code, where {base_label} (a stub) answers "
        f"nothing, but none of the {len(answered)} inputs of its shape around it gets an answer of that kind "
        f"(e.g. {_example(site, key)}: {_shown(answer_n)}): the tested input looks special-cased; implement "
        f"the whole class of inputs, or approve the change: {_approve(site)}"
    )


def _unstable_text(site: CallSite, tested_b: Any, base_label: str) -> str:
    """OG916: two calls with the same arguments answer differently on the new code, and the same at the base."""
    return (
        f"{_called(site)} gives two different answers to two calls with the same arguments on the new code "
        f"({base_label}: {_shown(tested_b)} both times): the new code keeps state between calls (a call counter, "
        f"a first-call answer); make the answer depend on the arguments only, or approve the change: "
        f"{_approve(site)}"
    )


def _degenerate(site: CallSite) -> bool:
    """Every argument is empty, 0 or +-1: an edge case an honest fix may change alone (its neighbours are not its class)."""
    args = ast.literal_eval(site.args)
    if site.receiver and args and isinstance(args[0], dict):
        args = [*args[0].values(), *args[1:]]  # a method's receiver varies by its attributes
    varied = _scalars([*args, *ast.literal_eval(site.kwargs).values()])
    return all((len(v) <= 1) if isinstance(v, (str, bytes)) else abs(v) <= 1 for v in varied)
