"""Oracle flips, loaded into the *project's* interpreter by oracle-replay's probe run.

Like _replay_plugin.py it needs only pytest and the standard library, is
loaded by file path, and runs inside ``pytest.main(args, plugins=[...])``.
An import hook placed in front of pytest's assertion rewriting compiles each
test module from a rewritten AST (its file is never written): in every test
function, each literal expectation gets a flipped copy, and the check that
holds it becomes a *soft* check that records whether it passed instead of
raising.  A flipped check must fail; one that passes on the new code while it
failed on the base code has been made unable to fail.

Flips (the literal's text in the source seen through ``linecache`` is the
flipped one too, so code that reads the test's source sees the flip):

- ``assert S == LIT``: LIT changed (numbers nudged, strings/bytes extended,
  booleans negated, every element of a container changed); ``!=`` becomes ``==``;
  ``<``/``<=``/``>``/``>=`` become their complement; ``LIT in S`` (str/bytes)
  gets LIT extended;
- an ``expected = LIT`` local, or a parameter (parametrize, fixture), used only
  as the operand of such checks: flipped where it is bound, so code reading the
  test's frame reads the flip;
- ``self.assertEqual`` and kin: the flipped call goes through the same method;
- ``pytest.raises(T)`` / ``self.assertRaises(T)``: the raised exception is
  also offered to a context expecting a private type, and ``match=``/the
  regex is offered a pattern that cannot match.

Per test at most MAX_PER_TEST sites, chosen by a stable hash (both sides see
the same source, so the same sites).  Output (JSON, written at session end):
``{"rootdir", "sites": {id: {...}}, "records": [[node, site, runs, passes]], "complete"}``.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import inspect
import linecache
import os
import re
import sys
from typing import TYPE_CHECKING, Any, Callable, Literal

if TYPE_CHECKING:  # for annotations only: the hook imports this module where pytest may be missing
    import pytest

OUTPUT: str | None = None
TEST_FILE = re.compile(r"^(test_.*|.*_test)\.py$")


if "kit" not in globals():  # imported by the gate, for its path; the probes' runner gives its copy (probes/kit.py)
    from oracle_guard.probes import kit
flip = kit.sibling(__file__, "rewrite")
NAME: str = flip.NAME


class OracleGuardFlippedError(Exception):
    """No code raises this: a context expecting it must not accept the test's exception."""


class Recorder:
    """What the rewritten tests call: soft checks that count, never raise."""

    Flipped = OracleGuardFlippedError

    def __init__(self) -> None:
        self.node: str | None = None
        self.sites: dict[str, dict[str, Any]] = {}
        self.records: dict[tuple[str, str], list[int]] = {}
        self.flipped: set[tuple[str, str, int]] = set()  # (file, name, first line) of tests holding a flip

    def record(self, site: str, passed: bool) -> None:
        entry = self.records.setdefault((self.node or "", site), [0, 0])
        entry[0] += 1
        entry[1] += 1 if passed else 0

    def check(self, site: str, thunk: Callable[[], object]) -> None:
        try:
            passed = bool(thunk())
        except Exception:
            passed = False
        self.record(site, passed)

    def check_param(self, site: str, flipped: bool, thunk: Callable[[], object]) -> None:
        """The check of a parameter: soft when its value could be flipped, a plain assert otherwise."""
        if flipped:
            self.check(site, thunk)
        elif not thunk():
            raise AssertionError("assert failed (oracle-guard flip run: a parameter with no flip)")

    def call(self, site: str, method: Callable[..., object], *args: object) -> None:
        try:
            method(*args)
        except BaseException as exc:
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            self.record(site, False)
        else:
            self.record(site, True)

    def flip(self, value: object) -> tuple[object, bool]:
        return flip.flip_value(value, self.node or "")  # type: ignore[no-any-return]

    def raises(self, site: str, factory: Callable[[], Any]) -> _FlippedRaises:
        return _FlippedRaises(self, site, factory)


class _FlippedRaises:
    """Offers the body's exception to a flipped raises() context too, then lets it propagate."""

    def __init__(self, recorder: Recorder, site: str, factory: Callable[[], Any]) -> None:
        self.recorder, self.site, self.factory = recorder, site, factory

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, value: Any, tb: Any) -> Literal[False]:
        # Accepted: the exception swallowed, or no exception and no complaint ("DID NOT RAISE").
        try:
            context = self.factory()
            context.__enter__()
            accepted = bool(context.__exit__(kind, value, tb)) or kind is None
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            accepted = False
        self.recorder.record(self.site, accepted)
        return False


RECORDER = Recorder()


class _Loader(importlib.machinery.SourceFileLoader):
    def get_code(self, fullname: str) -> Any:
        source = self.get_data(self.path)
        rel = os.path.relpath(self.path).replace(os.sep, "/")
        tree, sites, lines = flip.rewrite(source, rel)
        RECORDER.sites.update(sites)
        RECORDER.flipped.update((self.path, name, line) for name, line in flip.flipped_tests(tree))
        if lines is not None:
            linecache.cache[self.path] = (len(source), None, lines, self.path)  # mtime None: checkcache keeps it
        return compile(tree, self.path, "exec", dont_inherit=True)

    def exec_module(self, module: Any) -> None:
        module.__dict__[NAME] = RECORDER
        super().exec_module(module)


class _Finder:
    """Test modules (pytest's default python_files) under the folder pytest runs in."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root) + os.sep

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if not TEST_FILE.match(fullname.rpartition(".")[2] + ".py"):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        origin = getattr(spec, "origin", None)
        if spec is None or not origin or not origin.endswith(".py") or spec.submodule_search_locations is not None:
            return None
        if not os.path.realpath(origin).startswith(self.root):
            return None
        return importlib.util.spec_from_file_location(fullname, origin, loader=_Loader(fullname, origin))


def pytest_configure(config: pytest.Config) -> None:
    kit.one_process(config)
    sys.meta_path.insert(0, _Finder(os.getcwd()))  # in front of pytest's assertion rewriting


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run only the tests holding a flip: the rest would cost a run and tell nothing."""
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        (kept if _holds_a_flip(item) else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _holds_a_flip(item: pytest.Item) -> bool:
    obj = getattr(item, "obj", None)
    func = getattr(obj, "__func__", obj)
    code = getattr(inspect.unwrap(func) if callable(func) else None, "__code__", None)
    return code is not None and (code.co_filename, code.co_name, code.co_firstlineno) in RECORDER.flipped


def pytest_collection_finish(session: pytest.Session) -> None:
    """Derandomize every collected Hypothesis test, as the replay's own run does (_replay_plugin.py).

    Both sides must see the same examples; ``@settings``/``@given`` fixed each
    test's settings at import, so each gets ``derandomize=True`` and no deadline.
    """
    if "hypothesis" not in sys.modules:
        return
    try:
        from hypothesis import settings
    except ImportError:  # pragma: no cover
        return
    for item in session.items:
        func = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
        current = getattr(func, "_hypothesis_internal_use_settings", None)
        if func is not None and isinstance(current, settings):
            try:
                func._hypothesis_internal_use_settings = settings(current, derandomize=True, deadline=None)
            except Exception:  # pragma: no cover - a Hypothesis too old for one of these settings
                pass


def pytest_runtest_setup(item: pytest.Item) -> None:
    RECORDER.node = item.nodeid


def pytest_runtest_teardown(item: pytest.Item) -> None:
    RECORDER.node = item.nodeid


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not OUTPUT:
        return
    root = str(getattr(session.config, "rootpath", None) or session.config.rootdir)  # type: ignore[attr-defined]  # pytest < 6.1
    data = {
        "rootdir": os.path.relpath(root),
        "sites": RECORDER.sites,
        "records": [[node, site, n, p] for (node, site), (n, p) in RECORDER.records.items()],
        "complete": True,
    }
    kit.write_results(OUTPUT, data)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(2)
