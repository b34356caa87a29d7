"""Differential neighbours, loaded into the *project's* interpreter by oracle-replay's probe run.

Like _flips_plugin.py it needs only pytest and the standard library (Hypothesis
when the project has it), is loaded by file path, and writes one JSON file.
Once the selected test modules are imported (collection finished, no test run
yet), each function a test calls with literal arguments (the call sites come
from the hook, in the file ORACLE_GUARD_NEIGHBOURS names) is called again at
the tested input and on neighbouring inputs: one argument varied at a time,
drawn from a strategy fitted to the literal's type (and the parameter's
annotation), derandomized with a fixed seed, within a budget.  Only functions
defined in the files the change touched are called.  Each input is called
twice; an answer that differs between the two calls is ``["?", "unstable"]``
(at the tested input, where the base answered the same twice: recorded state,
OG916).  Besides the drawn inputs, each varied argument gets inputs of other
sizes (doubled, halved, negated; a string doubled and split).  An object
without a stable repr answers as its class and attributes.

A site may also be a call recorded at the base (its "where" names the production module that
defines the function).  While it calls, the lines the change added ("added" in the configuration)
are traced: those run at the tested input and at no neighbour are reported ("only_tested").

Output: ``{"sites": {id: {"tested": answer, "inputs": {key: [answer, varied argument]}, "only_tested":
[path:line]}}, "complete": true}``; an answer is a tagged JSON value, ``["raise", type]``, or
``["?", why]`` when it cannot be compared.

With "record" in the configuration (the base side only), the recorder (recorder.py, ``Recorder``) then keeps
the calls the tests make into the changed modules while they run, and writes them to that file at
session end: ``{"calls": [{node, path, line, col, where, callee, args, kwargs}], "skipped", "complete"}``.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import json
import os
import random
import re
import signal
import sys
import time
import types
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # for annotations only: the hook imports this module where pytest may be missing
    import pytest

if "kit" not in globals():  # imported by the gate, for its path; the probes' runner gives its copy (probes/kit.py)
    from oracle_guard.probes import kit

RECORDING: Any = kit.sibling(__file__, "recorder")  # recorder.py: how a recorded value is written
OUTPUT: str | None = None
PER_SITE = 24  # neighbouring inputs per call site
MAX_SITES = 40
CALL_SECONDS = 1.0
TOTAL_SECONDS = 20.0
MAX_ITEMS = 100  # items of an iterator answer read
SPAN = 50  # integers within this distance of the literal
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
CONTAINERS = (list, tuple, dict)  # an argument's container: its items vary, and its size


class _Slow(Exception):
    pass


def encode(value: Any, depth: int = 0) -> Any:
    """A comparable JSON form of a return value, or ["?", why]."""
    if depth > 6:
        return ["?", "too deep"]
    if value is None or isinstance(value, (bool, str)):
        return ["v", value]
    if isinstance(value, int):
        return ["v", value] if abs(value) < 2**53 else ["i", str(value)]
    if isinstance(value, float):
        return ["f", value if value == value and abs(value) != float("inf") else repr(value)]
    if isinstance(value, (bytes, bytearray)):
        return ["b", bytes(value).hex()]
    if isinstance(value, (list, tuple)):
        return ["l" if isinstance(value, list) else "t", [encode(v, depth + 1) for v in value]]
    if isinstance(value, dict):
        return ["d", sorted(([encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()), key=repr)]
    if isinstance(value, (set, frozenset)):
        return ["s", sorted((encode(v, depth + 1) for v in value), key=repr)]
    try:
        text = repr(value)
    except Exception:
        return ["?", "repr fails"]
    if not ADDRESS.search(text):
        return ["r", text]
    if inspect.isgenerator(value) or (type(value).__module__ == "builtins" and hasattr(type(value), "__next__")):
        return ["l", [encode(v, depth + 1) for v in itertools.islice(value, MAX_ITEMS)]]  # what iterating gives
    state = _state(value)  # an object the code built (a parsed document): its class and its attributes
    return ["?", "no stable repr"] if state is None else ["o", type(value).__qualname__, encode(state, depth + 1)]


def _state(value: Any) -> dict[str, Any] | None:
    """The attributes of a plain instance (its __dict__, its slots); None for routines, classes, modules."""
    if inspect.isroutine(value) or inspect.isclass(value) or inspect.ismodule(value):
        return None
    try:
        state = dict(object.__getattribute__(value, "__dict__"))
    except (AttributeError, TypeError):
        state = {}
    for klass in type(value).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for name in [slots] if isinstance(slots, str) else slots if isinstance(slots, (tuple, list)) else ():
            try:
                state.setdefault(name, object.__getattribute__(value, name))
            except AttributeError:
                continue
    return state or None


def _answer(call: Callable[[], Any]) -> Any:
    timed = hasattr(signal, "setitimer")
    if timed:
        signal.setitimer(signal.ITIMER_REAL, CALL_SECONDS)
    try:
        return encode(call())
    except _Slow:
        return ["?", "slow"]
    except (
        Exception,
        SystemExit,
    ) as exc:  # a command-line entry point's argparse exits: an answer, not the probe's end
        return ["raise", type(exc).__name__]
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Slow()


# -- neighbouring inputs --------------------------------------------------------------------------


def _edit(text: Any, position: int, how: int, char: Any) -> Any:
    """TEXT (str or bytes) with one character inserted, deleted or replaced."""
    position = position % (len(text) + 1)
    if how == 0 or not text:
        return text[:position] + char + text[position:]
    position = min(position, len(text) - 1)
    if how == 1:
        return text[:position] + text[position + 1 :]
    return text[:position] + char + text[position + 1 :]


def _alphabet(value: Any) -> list[Any]:
    if isinstance(value, bytes):
        return [bytes([b]) for b in sorted(set(value) | set(b"az09 -_."))]
    return sorted(set(value) | set("azAZ09 -_.'"))


def _random_value(value: Any, kind: type, rng: random.Random) -> Any:
    if kind is int:
        return int(value) + rng.randint(-SPAN, SPAN)
    if kind is float:
        width = max(1.0, abs(float(value)))
        return float(value) + rng.uniform(-width, width)
    return _edit(value, rng.randint(0, len(value)), rng.randint(0, 2), rng.choice(_alphabet(value)))


def _kind(value: Any, annotation: Any) -> type | None:
    """How to vary VALUE; None keeps it fixed (booleans, None, and what looks like a path or URL)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (str, bytes)) and _path_like(value if isinstance(value, str) else value.decode("latin-1")):
        return None  # its neighbours could name files of the machine's
    if annotation is float and isinstance(value, int):
        return float
    for kind in (int, float, str, bytes):
        if isinstance(value, kind):
            return kind
    return type(value) if type(value) in CONTAINERS else None


def _path_like(text: str) -> bool:
    if "\n" in text or "<" in text:  # a document (markup, several lines), not a path or URL
        return False
    return "/" in text or "\\" in text or text.startswith(("~", ".")) or "://" in text


def _strategy(value: Any, kind: type) -> Any:
    from hypothesis import strategies as st

    if kind is int:
        return st.integers(int(value) - SPAN, int(value) + SPAN)
    if kind is float:
        width = max(1.0, abs(float(value)))
        return st.floats(float(value) - width, float(value) + width, allow_nan=False)
    return st.builds(
        _edit, st.just(value), st.integers(0, len(value)), st.integers(0, 2), st.sampled_from(_alphabet(value))
    )


def _sizes(value: Any, kind: type) -> list[Any]:
    """Inputs of the same shape and another size: a class an honest fix changes reaches them too."""
    if kind is dict:
        return [dict(list(value.items())[:-1])] if len(value) > 1 else []
    if kind in CONTAINERS:  # a row fewer, the last row twice
        return [value[:-1], value + value[-1:]] if len(value) > 1 else [value + value]
    if kind is int:
        return [int(value) * 2, int(value) * 10, int(value) // 2, -int(value)]
    if kind is float:
        return [float(value) * 2, float(value) / 2, -float(value)]
    half = len(value) // 2
    return [value + value, value[:half], value[half:]] if half else [value + value]


def _leaves(value: Any, depth: int = 0) -> list[tuple[tuple[Any, ...], Any]]:
    """(path, value) of what varies in VALUE: itself, or the items of a list, tuple or dict (nested too) and a
    dict's str keys (a path ending in ``_Key``), then the container itself too (its other sizes, ``_sizes``).
    A recorded object varies by its attributes, a recorded value type by its constructor's arguments
    (recorder.py), never by their names or size."""
    if isinstance(value, dict) and (RECORDING.OBJECT in value or RECORDING.VALUE in value):
        inner = "state" if RECORDING.OBJECT in value else "args"
        found = _leaves(value.get(inner) or [], depth + 1)
        if inner == "state":  # an attribute's name is not the input's
            found = [(path, leaf) for path, leaf in found if not (path and isinstance(path[-1], _Key))]
        return [((inner, *path), leaf) for path, leaf in found if path]
    if depth > 6 or not isinstance(value, (list, tuple, dict)) or not value:
        return [((), value)]
    items = value.items() if isinstance(value, dict) else enumerate(value)
    found = [((key, *path), leaf) for key, item in items for path, leaf in _leaves(item, depth + 1)]
    if isinstance(value, dict):
        found += [((_Key(key),), key) for key in value if isinstance(key, str)]
    return [*found, ((), value)] if depth == 0 else found  # a row keeps its length: the table keeps its shape


class _Key(str):
    """A path's last step that renames the dict key it names (``_replaced``) instead of replacing its value."""


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """VALUE with the item at PATH (a list/tuple index or dict key each step) replaced by NEW, or the key
    a ``_Key`` names renamed to NEW (in its place); a new container."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(head, _Key):  # renamed onto another key: VALUE as it was (the probe leaves it out)
        return value if new in value else {(new if k == head else k): v for k, v in value.items()}
    if isinstance(value, dict):
        return {**value, head: _replaced(value[head], rest, new)}
    items = list(value)
    items[head] = _replaced(items[head], rest, new)
    return tuple(items) if isinstance(value, tuple) else items


def neighbours(values: list[Any], kinds: list[type | None], budget: int) -> list[tuple[int, Any]]:
    """(value index, new value) pairs: Hypothesis, derandomized, when installed; a seeded draw otherwise.

    A scalar is drawn around its value and given other sizes; a container (CONTAINERS) only other
    sizes, its items being values of their own."""
    varied = [i for i, kind in enumerate(kinds) if kind is not None]
    drawn = [i for i in varied if kinds[i] not in CONTAINERS]
    found: list[tuple[int, Any]] = []
    try:
        from hypothesis import HealthCheck, Phase, given, seed, settings
        from hypothesis import strategies as st
    except ImportError:
        rng = random.Random(0)
        for _ in range(budget * 2 if drawn else 0):
            index = drawn[rng.randrange(len(drawn))]
            found.append((index, _random_value(values[index], kinds[index], rng)))  # type: ignore[arg-type]
    else:
        strategy = st.one_of([st.tuples(st.just(i), _strategy(values[i], kinds[i])) for i in drawn])  # type: ignore[arg-type]

        @seed(0)
        @settings(
            max_examples=budget * 2,
            derandomize=True,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(strategy)
        def draw(pair: tuple[int, Any]) -> None:
            found.append(pair)

        if drawn:
            draw()
    sized = [(i, other) for i in varied for other in _sizes(values[i], kinds[i])]  # type: ignore[arg-type]
    unique: dict[str, tuple[int, Any]] = {}
    for index, new in [*sized, *found]:
        if new != values[index] or type(new) is not type(values[index]):
            unique.setdefault(repr((index, new)), (index, new))
    return list(unique.values())[:budget]


# -- the probe ---------------------------------------------------------------------------------------


def _module_at(path: str, real: dict[Any, Any]) -> Any:
    """The module loaded from PATH; REAL: realpath() of each file seen so far in this probe (one per
    site and module was most of a flip run on a small suite)."""

    def resolved(file: Any) -> Any:
        if not os.path.isabs(file):
            return os.path.realpath(file)  # against the current folder, which a probed call may change
        found = real.get(file)
        if found is None:
            found = real[file] = os.path.realpath(file)
        return found

    target = resolved(path)
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if file and resolved(file) == target:
            return module
    return None


def _resolve(module: Any, dotted: str) -> Any:
    head, *rest = dotted.split(".")
    obj = module.__dict__.get(head)
    for name in rest:
        obj = getattr(obj, name, None)
    return obj


def _defined_in(func: Any, changed: set[str]) -> bool:
    try:
        code = inspect.unwrap(func).__code__
    except (AttributeError, ValueError):
        return False
    return os.path.relpath(os.path.realpath(code.co_filename)).replace(os.sep, "/") in changed


def _annotations(func: Any) -> dict[str, Any]:
    try:
        return dict(inspect.signature(inspect.unwrap(func)).parameters)
    except (TypeError, ValueError):
        return {}


def probe(config: dict[str, Any]) -> dict[str, Any]:
    changed = {os.path.relpath(os.path.realpath(p)).replace(os.sep, "/") for p in config["changed"]}
    started = time.monotonic()
    results: dict[str, Any] = {}
    real: dict[Any, Any] = {}
    for site in config["sites"][:MAX_SITES]:
        if time.monotonic() - started > TOTAL_SECONDS:
            break
        # A recorded call names the production module it was defined in ("where"); a literal site is
        # resolved through the test module's own names.
        where = site.get("where")
        module = _module_at(where or site["path"], real)
        receiver = site.get("receiver") or ""
        if receiver:  # a method: its receiver rebuilt from its attributes (ARGS[0]) on each call
            klass = _resolve(module, receiver) if module is not None else None
            func = _Rebuilt(klass, site["callee"].rsplit(".", 1)[-1]) if inspect.isclass(klass) else None
        else:
            func = _resolve(module, site["callee"]) if module is not None else None
        if func is None or not callable(func) or not (where or _defined_in(func, changed)):
            continue
        args, kwargs = ast.literal_eval(site["args"]), ast.literal_eval(site["kwargs"])
        names = list(_annotations(func)) if not receiver else []
        params = _annotations(func) if not receiver else {}
        values = [*args, *kwargs.values()]
        keys: list[Any] = [*range(len(args)), *kwargs]
        if receiver:  # its attributes vary like arguments
            values = [*args[0].values(), *values[1:]]
            keys = [*((0, name) for name in args[0]), *keys[1:]]
        slots: list[tuple[Any, tuple[Any, ...]]] = []  # (argument key, path into it) of each varied value
        kinds: list[Any] = []
        flat: list[Any] = []
        for position, value in zip(keys, values):
            name = names[position] if isinstance(position, int) and position < len(names) else position
            annotation = getattr(params.get(name), "annotation", None) if isinstance(name, str) else None
            for path, leaf in _leaves(value):
                slots.append((position, path))
                flat.append(leaf)
                kinds.append(_kind(leaf, annotation if not path else None))
        lines = _Lines(config.get("added") or {})
        tested = lines.run(True, _stable_answer, func, args, kwargs)
        inputs: dict[str, Any] = {}
        for index, new in neighbours(flat, kinds, PER_SITE):
            call_args, call_kwargs = list(args), dict(kwargs)
            key, path = slots[index]
            if isinstance(key, tuple):
                call_args[0] = {**call_args[0], key[1]: _replaced(call_args[0][key[1]], path, new)}
            elif isinstance(key, int):
                call_args[key] = _replaced(call_args[key], path, new)
            else:
                call_kwargs[key] = _replaced(call_kwargs[key], path, new)
            if call_args == args and call_kwargs == kwargs:
                continue
            if time.monotonic() - started > TOTAL_SECONDS:  # slow calls (CALL_SECONDS each) end the probe too
                break
            answer = lines.run(False, _stable_answer, func, call_args, call_kwargs)
            inputs[repr((call_args, call_kwargs))] = [answer, index]
        results[site["id"]] = {"tested": tested, "inputs": inputs, "only_tested": lines.only_tested() if inputs else []}
    return results


def _built(value: Any) -> Any:
    """A recorded value as the function receives it: objects and value types rebuilt (recorder.py), all anew."""
    if isinstance(value, list):
        return [_built(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_built(v) for v in value)
    if not isinstance(value, dict):
        return value
    if RECORDING.OBJECT in value:
        return _restored(_class_of(value[RECORDING.OBJECT]), _built(value["state"]))
    if RECORDING.VALUE in value and value[RECORDING.VALUE] in RECORDING.VALUE_TYPES:
        return _class_of(value[RECORDING.VALUE])(*value["args"])
    return {k: _built(v) for k, v in value.items()}


def _class_of(name: str) -> Any:
    """The class "module:qualname" names (its module imported when not yet)."""
    module, _, qualname = name.partition(":")
    found: Any = sys.modules.get(module) or importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    if not inspect.isclass(found):
        raise TypeError(f"{name} is not a class")
    return found


class _Rebuilt:
    """Call METHOD on an instance of KLASS rebuilt from its attributes (``object.__new__``, no ``__init__``)."""

    def __init__(self, klass: type, method: str) -> None:
        self.klass, self.method = klass, method

    def __call__(self, state: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        obj = _restored(self.klass, state)  # built anew for each call (_stable_answer)
        return getattr(obj, self.method)(*args, **kwargs)


def _restored(klass: type, state: dict[str, Any]) -> Any:
    """An instance of KLASS with STATE as its attributes, no ``__init__`` or ``__setattr__`` of its own run."""
    obj: Any = object.__new__(klass)
    try:
        own = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        own = None
    for name, value in state.items():
        if own is not None and not isinstance(inspect.getattr_static(klass, name, None), types.MemberDescriptorType):
            own[name] = value  # past any property or descriptor of the class's
        else:
            object.__setattr__(obj, name, value)  # a slot, through its own descriptor
    return obj


class _Lines:
    """Which of the lines the change added run at the tested input, and which around it (sys.settrace)."""

    def __init__(self, added: dict[str, list[int]]) -> None:
        self.added = {os.path.realpath(path): (path, set(numbers)) for path, numbers in added.items()}
        self.files: dict[str, tuple[str, set[int]] | None] = {}  # a code object's file name -> its added lines
        self.tested: set[str] = set()
        self.around: set[str] = set()
        self.hits: set[str] = set()

    def run(self, tested: bool, call: Callable[..., Any], *args: Any) -> Any:
        if not self.added or sys.gettrace() is not None:  # a tracer of the project's (coverage): leave it alone
            return call(*args)
        self.hits = set()
        sys.settrace(self._call)
        try:
            return call(*args)
        finally:
            sys.settrace(None)
            (self.tested if tested else self.around).update(self.hits)

    def only_tested(self) -> list[str]:
        return sorted(self.tested - self.around)

    def _call(self, frame: Any, event: str, arg: Any) -> Any:
        name = frame.f_code.co_filename
        if name not in self.files:
            self.files[name] = self.added.get(os.path.realpath(name))
        return self._line if self.files[name] is not None else None

    def _line(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            wanted = self.files.get(frame.f_code.co_filename)
            if wanted is not None and frame.f_lineno in wanted[1]:
                self.hits.add(f"{wanted[0]}:{frame.f_lineno}")
        return self._line


def _stable_answer(func: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> Any:
    # built anew for each call (a call may change its arguments); an object that cannot be built is the call's error
    first = _answer(lambda: func(*_built(args), **_built(kwargs)))
    second = _answer(lambda: func(*_built(args), **_built(kwargs)))
    return first if first == second else ["?", "unstable"]


def pytest_collection_finish(session: pytest.Session) -> None:
    path = os.environ.get("ORACLE_GUARD_NEIGHBOURS")
    if not OUTPUT or not path:
        return
    with open(path, encoding="utf-8") as f:
        config = json.load(f)
    previous = signal.signal(signal.SIGALRM, _on_alarm) if hasattr(signal, "SIGALRM") else None
    try:
        results = probe(config)
    finally:
        if hasattr(signal, "SIGALRM"):
            signal.signal(signal.SIGALRM, previous)
    kit.write_results(OUTPUT, {"sites": results, "complete": True})
    if config.get("record"):  # the base side only: the calls its tests make, recorded while they run
        RECORDER.nodes = {item.nodeid for item in session.items if not _drawn(item)}
        RECORDER.start(str(config["record"]), config["changed"])


# -- the recorder (the base side's run): recorder.py, loaded by path beside this file ------------------

RECORDER: Any = RECORDING.Recorder()


def _drawn(item: pytest.Item) -> bool:
    """A Hypothesis test draws its inputs: those are not answers the test's author chose."""
    obj = getattr(item, "obj", None)
    return bool(getattr(getattr(obj, "__func__", obj), "is_hypothesis_test", False))


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    """Before the test's setup (its fixtures run there) and after the previous test's teardown."""
    RECORDER.enter(nodeid)


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    RECORDER.leave()


def pytest_sessionfinish(session: pytest.Session) -> None:
    RECORDER.leave()
    root = str(getattr(session.config, "rootpath", None) or session.config.rootdir)  # type: ignore[attr-defined]  # pytest < 6.1
    top = os.path.relpath(root)
    for call in RECORDER.calls.values():  # node ids from the tree's root, as the replay's are
        if top not in ("", "."):
            call["node"] = os.path.normpath(os.path.join(top, call["node"])).replace(os.sep, "/")
    RECORDER.write(kit.write_results)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(2)
