"""The recorder of the neighbours probe: calls test code makes into the changed code, arguments as received.

Loaded by path by plugin.py (into the project's interpreter, standard library only) on the base
side's probe run.  A call of a module-level function of a changed module, or of a method (a dunder
included: ``str()``, ``==``, ``repr()``, ``len()`` reach them) of a class it defines, made directly by test code
(a test module, a conftest, a lambda or helper written there), is kept when its arguments are plain
values; a method's receiver is kept as its class and attributes when those are plain values too (an
object the test built, parsed or unpickled: the probe rebuilds it with ``object.__new__`` and varies
its attributes like arguments).
"""

from __future__ import annotations

import inspect
import math
import os
import re
import sys
import time
from collections.abc import Mapping
from typing import Any

# What the run keeps; the gate chooses what it judges, the calls of tests red at the base first (recorded.py):
# a parametrized test's passing cases, run first, must not spend a function's budget before its red ones.
MAX_RECORDED = 160  # distinct calls kept
PER_FUNCTION = 32  # distinct argument tuples kept per function
MAX_TEXT = 1000  # longest str/bytes argument kept (a small document)
MAX_ITEMS = 16  # longest list/tuple/dict argument kept (each level)
NESTING = 4  # containers within containers: a table's rows, a small document's elements
MAX_CALL_TEXT = 2000  # the longest call kept, its arguments written out
RECORD_SECONDS = 20.0  # test time run under the profile function, in all (it slows calls several-fold)
TEST_FILE = re.compile(r"^(test_.*|.*_test|conftest)\.py$")
TEST_FOLDERS = frozenset({"tests", "test", "testing"})
PLAIN = (int, float, str, bytes, bool, type(None))
IMPLICIT = frozenset(
    {"__init__", "__new__", "__del__", "__getattribute__", "__getattr__", "__setattr__", "__delattr__"}
)
RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE


def _recorded(value: Any, depth: int = 0) -> Any:
    """VALUE as the recording keeps it (a literal ``ast.literal_eval`` reads back), or SKIP.

    Scalars, str and bytes of exact types (no subclass runs code when read); lists, tuples and
    str-keyed dicts of recorded values, nested NESTING deep at most (a table's rows, a document's
    fields); an instance of a class as ``{OBJECT: "module:qualname", "state": {attribute: value}}``
    (its ``__dict__``, read through ``object.__getattribute__``: no code of the project's runs; the
    probe rebuilds it with ``object.__new__``); a standard value type (VALUE_TYPES) as
    ``{VALUE: "module:qualname", "args": [...]}``, what its constructor takes.
    """
    kind = type(value)
    if kind in (str, bytes):
        return value if len(value) <= MAX_TEXT else SKIP
    if kind is float:
        return value if math.isfinite(value) else SKIP  # its repr must read back
    if kind in PLAIN:
        return value
    name = f"{kind.__module__}:{kind.__qualname__}"
    read = VALUE_TYPES.get(name)
    if read is not None:
        args = read(value)
        return SKIP if args is None else {VALUE: name, "args": args}
    if depth >= NESTING:
        return SKIP
    if kind in (list, tuple, dict):
        if len(value) > MAX_ITEMS:
            return SKIP
        if kind is dict:
            return _fields(value, depth)
        items = [_recorded(v, depth + 1) for v in value]
        return SKIP if any(v is SKIP for v in items) else kind(items)
    state = _state(value)
    if state is None or not _findable(kind):  # the probe must find its class again, by name
        return SKIP
    fields = _fields(state, depth)
    return SKIP if fields is SKIP else {OBJECT: name, "state": fields}


def _findable(kind: type) -> bool:
    """KIND is what its module's namespace holds under its qualified name (not a class made in a function
    or by ``make_dataclass`` in a test): read through the namespaces' dicts, no ``__getattr__`` runs."""
    found: Any = sys.modules.get(kind.__module__)
    for part in kind.__qualname__.split("."):
        space = getattr(found, "__dict__", None)
        found = space.get(part) if isinstance(space, Mapping) else None
    return found is kind


def _fields(mapping: dict[Any, Any], depth: int) -> Any:
    """A str-keyed dict's values recorded (SKIP when one cannot be, or a key is not a str or is a tag)."""
    if len(mapping) > MAX_ITEMS or OBJECT in mapping or VALUE in mapping:
        return SKIP
    found = {}
    for key, item in mapping.items():
        if type(key) is not str:
            return SKIP
        found[key] = _recorded(item, depth + 1)
        if found[key] is SKIP:
            return SKIP
    return found


def _state(obj: Any) -> dict[str, Any] | None:
    """OBJ's attributes, its ``__dict__`` (a plain dict) and its ``__slots__``' values, when it has any (read
    with ``object.__getattribute__``: no code of the project's runs)."""
    try:
        state = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        state = {}
    if type(state) is not dict:
        return None
    found = dict(state)
    for klass in type(obj).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for name in [slots] if isinstance(slots, str) else slots if isinstance(slots, (tuple, list)) else ():
            if type(name) is not str or name in ("__dict__", "__weakref__") or name in found:
                continue
            try:
                found[name] = object.__getattribute__(obj, name)
            except AttributeError:
                continue  # a slot never set: the rebuilt object leaves it unset too
    return found or None


def _naive(read: Any) -> Any:
    return lambda v: None if v.tzinfo is not None else read(v)


SKIP = object()  # what cannot be recorded
OBJECT = "__oracle_guard_object__"
VALUE = "__oracle_guard_value__"
VALUE_TYPES: dict[str, Any] = {  # "module:qualname" of an exact type -> its constructor's arguments (None: not kept)
    "datetime:timedelta": lambda v: [v.days, v.seconds, v.microseconds],
    "datetime:date": lambda v: [v.year, v.month, v.day],
    "datetime:datetime": _naive(lambda v: [v.year, v.month, v.day, v.hour, v.minute, v.second, v.microsecond]),
    "datetime:time": _naive(lambda v: [v.hour, v.minute, v.second, v.microsecond]),
    "decimal:Decimal": lambda v: [str(v)] if v.is_finite() else None,
    "fractions:Fraction": lambda v: [v.numerator, v.denominator],
}


class Recorder:
    """Calls into the changed modules' functions made directly by test code, arguments as received.

    A ``sys.setprofile`` function that looks only at "call" events of the
    functions' own code objects: it reads the arguments (exact plain types
    only, so no code of the project's runs) and changes nothing the test sees.
    It is installed for each test whose calls are recorded and removed after
    it, and no more once the calls or the time are spent.
    """

    def __init__(self) -> None:
        self.output: str | None = None
        self.node: str | None = None
        self.nodes: set[str] = set()
        self.targets: dict[Any, tuple[str, str]] = {}  # code object -> (module path, function name)
        self.methods: set[Any] = set()  # of the targets' code objects, those of methods (ARGS[0] is the receiver)
        self.defaults: dict[Any, dict[str, Any]] = {}  # code object -> its parameters' defaults, by name
        self.calls: dict[str, dict[str, Any]] = {}
        self.per_function: dict[tuple[str, str], int] = {}
        self.spent = 0.0
        self.since: float | None = None
        self.skipped = 0
        self.root = ""
        # caller's code object -> its file relative to the tree when test code, else None: a target called
        # inside the project's own loops (sqlparse: imt(), ~1e5 calls) paid a realpath() per call
        self.callers: dict[Any, str | None] = {}

    def start(self, output: str, changed: list[str]) -> None:
        self.output = output
        self.root = os.path.realpath(os.getcwd())
        wanted = {os.path.realpath(p) for p in changed}
        codes: dict[Any, list[tuple[str, str]]] = {}
        for module in list(sys.modules.values()):
            file = getattr(module, "__file__", None)
            if not file or os.path.realpath(file) not in wanted:
                continue
            where = os.path.relpath(os.path.realpath(file), self.root).replace(os.sep, "/")
            for name, obj in list(vars(module).items()):
                for code in _codes(obj, os.path.realpath(file), self.defaults):
                    codes.setdefault(code, []).append((where, name))
                if inspect.isclass(obj) and getattr(obj, "__module__", None) == module.__name__:
                    for method, function in list(vars(obj).items()):
                        if method in IMPLICIT or not inspect.isfunction(function):
                            continue  # a static or class method has no receiver; set-up and attribute access run everywhere
                        for code in _codes(function, os.path.realpath(file), self.defaults):
                            codes.setdefault(code, []).append((where, f"{obj.__qualname__}.{method}"))
                            self.methods.add(code)
        # A code object two names share (one decorator's wrapper) cannot say which was called.
        self.targets = {code: names[0] for code, names in codes.items() if len(set(names)) == 1}

    def enter(self, nodeid: str) -> None:
        """Before NODEID's setup (its fixtures run there): profile its calls when it is recorded."""
        self.node = nodeid if nodeid in self.nodes else None
        done = self.spent > RECORD_SECONDS or len(self.calls) >= MAX_RECORDED or not self.targets
        if self.node is not None and not done and sys.getprofile() is None:  # another profiler: leave it alone
            self.since = time.monotonic()
            sys.setprofile(self._event)

    def leave(self) -> None:
        self.node = None
        if self.since is not None:
            self.spent += time.monotonic() - self.since
            self.since = None
        if sys.getprofile() == self._event:
            sys.setprofile(None)

    def _event(self, frame: Any, event: str, arg: Any) -> None:
        if event != "call" or self.node is None:
            return
        target = self.targets.get(frame.f_code)
        if target is None:
            return
        try:
            self._record(frame, target)
        except Exception:  # a recorder that cannot read a call records nothing, and never disturbs the test
            self.skipped += 1
        if self.per_function.get(target, 0) >= PER_FUNCTION:
            self.targets = {c: t for c, t in self.targets.items() if t != target}
        if len(self.calls) >= MAX_RECORDED or not self.targets:
            sys.setprofile(None)

    def _record(self, frame: Any, target: tuple[str, str]) -> None:
        caller = frame.f_back
        path = self._caller_path(caller.f_code) if caller is not None else None
        if path is None or path == target[0] or self.per_function.get(target, 0) >= PER_FUNCTION:
            return
        code = frame.f_code
        local = frame.f_locals
        names = code.co_varnames
        count = code.co_argcount
        # A parameter left at its default (the very object) is left out: the probe's call gets the default too.
        # The positional ones after the first left out are passed by name (none of them positional-only).
        defaults = self.defaults.get(code, {})
        kept = [n for n in names[:count] if not (n in defaults and local[n] is defaults[n])]
        first = next((i for i, n in enumerate(names[:count]) if n not in kept), count)
        star = code.co_flags & inspect.CO_VARARGS and local[names[count + code.co_kwonlyargcount]]
        if star or any(names.index(n) < code.co_posonlyargcount for n in kept[first:]):
            first = count  # *args given, or a positional-only parameter after a default one: every value
        args = [local[n] for n in names[:first]]
        kwargs = {n: local[n] for n in kept if names.index(n) >= first}
        kwargs.update(
            (n, local[n])
            for n in names[count : count + code.co_kwonlyargcount]
            if not (n in defaults and local[n] is defaults[n])
        )
        extra = count + code.co_kwonlyargcount
        if code.co_flags & inspect.CO_VARARGS:
            args += list(local[names[extra]])
            extra += 1
        if code.co_flags & inspect.CO_VARKEYWORDS:
            kwargs.update(local[names[extra]])
        receiver = ""
        if code in self.methods:
            state = _state(args[0]) if args else None
            fields = _fields(state, 0) if state is not None else SKIP
            if fields is SKIP:
                self.skipped += 1
                return
            receiver, args[0] = type(args[0]).__qualname__, fields
        start = 1 if receiver else 0
        rest = [_recorded(v) for v in args[start:]]
        named = {k: _recorded(v) for k, v in kwargs.items()}
        if any(v is SKIP for v in [*rest, *named.values()]) or not all(type(k) is str for k in kwargs):
            self.skipped += 1
            return
        args, kwargs = [*args[:start], *rest], named
        key = repr((target, receiver, args, sorted(kwargs.items())))
        if key in self.calls:
            return
        if len(key) > MAX_CALL_TEXT:
            self.skipped += 1
            return
        self.per_function[target] = self.per_function.get(target, 0) + 1
        line, col = _position(caller)
        self.calls[key] = {
            "node": self.node,
            "path": path,
            "line": line,
            "col": col,
            "where": target[0],
            "callee": target[1],
            "args": repr(args),
            "kwargs": repr(kwargs),
            "receiver": receiver,
        }

    def _caller_path(self, code: Any) -> str | None:
        try:
            return self.callers[code]
        except KeyError:
            found = self.callers[code] = _test_path(code.co_filename, self.root)
            return found

    def write(self, save: Any) -> None:
        """The recording, through SAVE(path, data): the plugin's results writer (probes/kit.py, with its receipt)."""
        if self.output is None:
            return
        save(self.output, {"calls": list(self.calls.values()), "skipped": self.skipped, "complete": True})


def _codes(obj: Any, file: str, defaults: dict[Any, Any] | None = None) -> list[Any]:
    """The code objects a module-level function of FILE runs when called: its own, and the one it wraps.

    DEFAULTS: filled with each code object's parameter defaults, by name (a call that leaves one as it is
    is recorded without it, ``_record``: a default that is a module or a sentinel is no literal)."""
    found = []
    for candidate in (obj, getattr(obj, "__wrapped__", None)):
        code = getattr(candidate, "__code__", None) if inspect.isfunction(candidate) else None
        if code is None or code.co_flags & RESUMABLE:  # a generator's "call" event fires on every resume
            continue
        if os.path.realpath(code.co_filename) == file and code not in found:
            found.append(code)
            if defaults is not None:
                defaults[code] = _defaults(candidate, code)
    return found


def _defaults(function: Any, code: Any) -> dict[str, Any]:
    """FUNCTION's parameters that have a default, by name (read from the function object: no code runs)."""
    positional = code.co_varnames[: code.co_argcount]
    values = function.__defaults__ or ()
    found = dict(zip(positional[len(positional) - len(values) :], values))
    found.update(function.__kwdefaults__ or {})
    return found


def _test_path(filename: str, root: str) -> str | None:
    """FILENAME relative to the tree when it is test code (a test module, a conftest, a tests folder)."""
    real = os.path.realpath(filename) if filename and not filename.startswith("<") else ""
    if not real.startswith(root + os.sep):
        return None
    rel = os.path.relpath(real, root).replace(os.sep, "/")
    parts = rel.split("/")
    return rel if TEST_FILE.match(parts[-1]) or TEST_FOLDERS & set(parts[:-1]) else None


def _position(frame: Any) -> tuple[int, int]:
    """The line and column of the call the frame is making (the column where the interpreter knows it)."""
    line = int(frame.f_lineno or 1)
    positions = getattr(frame.f_code, "co_positions", None)
    if positions is not None and frame.f_lasti >= 0:
        try:
            start, _, col, _ = list(positions())[frame.f_lasti // 2]
        except (IndexError, ValueError):
            return line, 1
        if start == line and col is not None:
            return line, col + 1
    return line, 1
