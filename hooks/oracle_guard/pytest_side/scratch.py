"""The test side of a change, and scratch trees that pair new code with the base's tests.

*Test side* is everything pytest reads that is not production code: test
modules and every file under a tests folder (the Python hooks' pattern),
``conftest.py`` files, pytest configuration, the contract, the fixture roots
and locked fixtures the base contract names, snapshot/approval-test files,
and plugins named by ``pytest_plugins`` or ``-p``.  Everything here is
decided from the **base** revision: the patch never says what its own
tests are.

A scratch tree is an export of the base commit (a private index,
``git read-tree`` + ``git checkout-index --prefix``: the user's work tree,
index and object store are never written) with the change's production
files laid over it: new code, base tests.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable

from oracle_guard.pytest_side import bytecode, generated
from oracle_guard.pytest_side.config import compare as pytest_config
from oracle_guard.repo import changes, git
from oracle_guard.repo.confine import jail
from oracle_guard.repo.paths import TEST_FILES
from oracle_guard.reporting.report import UsageError

# What pytest collects by default (python_files = test_*.py *_test.py).
TEST_MODULE = re.compile(r"(^|/)(test_[^/]*|[^/]*_test)\.py$")
SNAPSHOT_FILES = re.compile(r"(^|/)(__snapshots__|snapshots|goldens?)/|\.approved(\.[^/]*)?$")
CONFIG_NAMES = frozenset(pytest_config.INI_FILES) | {pytest_config.PYPROJECT}
_PLUGIN_OPT = re.compile(r"(?:^|[\s\"'\[,])-p\s*=?\s*([A-Za-z_][\w.]*)(?![\w.:])")


def _name(path: str) -> str:
    return path.rpartition("/")[2]


def _pytest_settings(path: str, data: bytes | None) -> object:
    """A comparable view of PATH's pytest section; 'unreadable' when it does not parse."""
    if data is None:
        return None
    text = data.decode("utf-8", "replace")
    try:
        if _name(path) == pytest_config.PYPROJECT:
            found = pytest_config._from_pyproject(path, text)
        else:
            found = pytest_config._from_ini(path, text)
    except UsageError:
        return "unreadable"
    if found is None:
        return None if _name(path) not in ("pytest.ini", ".pytest.ini") else ({}, [])
    return (found.ini, found.addopts)


class TestSide:
    """Which paths are the test side, by the base revision's contract and conftests."""

    __test__ = False  # not a pytest class

    def __init__(self, base: str, contract_path: str, base_contract: object | None) -> None:
        self.base = base
        roots = list(getattr(base_contract, "fixture_roots", ("tests/fixtures", "tests/data")))
        self.roots = tuple(r.rstrip("/") + "/" for r in roots if r)
        self.exact = {contract_path}
        self.exact.update(f.path for f in getattr(base_contract, "fixtures", ()))
        snapshot = getattr(base_contract, "snapshot_path", None)
        # pytest reads neither the snapshot nor the approvals: they never widen the selection.
        self.inert = {snapshot} if snapshot else set()
        self.approvals = (getattr(base_contract, "approvals", None) or "tests/approvals").rstrip("/") + "/"
        self._plugins: set[str] | None = None

    def plugins(self) -> set[str]:
        """Files of the plugins the base's conftests and pytest configuration load by name."""
        if self._plugins is None:
            listed = git.run("ls-tree", "-r", "-z", "--name-only", self.base)
            names = [os.fsdecode(n) for n in listed.split(b"\0") if n]
            wanted = [n for n in names if _name(n) == "conftest.py" or _name(n) in CONFIG_NAMES]
            modules: set[str] = set()
            for path, data in git.read_blobs(self.base, wanted).items():
                if data is None:
                    continue
                text = data.decode("utf-8", "replace")
                modules.update(_PLUGIN_OPT.findall(text))
                if _name(path) == "conftest.py":
                    modules.update(_pytest_plugins(text))
            files = set(names)
            self._plugins = set()
            for module in modules:
                stem = module.replace(".", "/")
                for prefix in ("", "src/"):
                    for candidate in (f"{prefix}{stem}.py", f"{prefix}{stem}/__init__.py"):
                        if candidate in files:
                            self._plugins.add(candidate)
        return self._plugins

    def __call__(self, path: str) -> bool:
        if TEST_FILES.search(path) or SNAPSHOT_FILES.search(path) or path in self.exact or path in self.inert:
            return True
        if starts_python(path):
            return True
        # A plugin the base's conftests or configuration load (plugins(), for reach) is the test side only
        # where it lives in the test folders (TEST_FILES, above): elsewhere it is the project's own code (a
        # pytest plugin project's package), and the base's tests judge the new version from outside.
        return path.startswith((*self.roots, self.approvals))

    def widens(self, path: str) -> bool:
        """Whether a change to this test-side file can change any test's outcome."""
        return path not in self.inert and not (path.startswith(self.approvals) and path.endswith(".approval"))


def starts_python(path: str) -> bool:
    """A start-up file (sitecustomize.py, usercustomize.py, a .pth file, a module shadowing the standard
    library): it changes how Python starts, not what the code computes, so the base's version is used."""
    from oracle_guard.analysis.testaware import startup

    return startup.startup_file(path) is not None


def _pytest_plugins(text: str) -> set[str]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any(isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in targets) and node.value is not None:
            for const in ast.walk(node.value):
                if isinstance(const, ast.Constant) and isinstance(const.value, str):
                    found.add(const.value)
    return found


class Plan:
    """What a change means for the replay: production edits to lay over the base, tests to run."""

    def __init__(self) -> None:
        self.write: list[str] = []  # production paths whose new bytes go into the scratch tree
        self.remove: list[str] = []  # production paths the change deleted or moved away
        self.test_side: list[str] = []  # test-side paths the change touched (base or new name)
        self.modules: list[str] = []  # base test modules changed or deleted: their base versions run
        self.everything = False  # a test-side file other than a test module changed: run the lot
        self.widening: list[str] = []  # why everything runs

    @property
    def production(self) -> bool:
        return bool(self.write or self.remove)


def plan(change_set: changes.ChangeSet, side: TestSide) -> Plan:
    result = Plan()
    configs: list[tuple[str | None, str | None]] = []
    for change in change_set.changes:
        new, old = change.path, change.old_path
        if (new and _name(new) in CONFIG_NAMES) or (old and _name(old) in CONFIG_NAMES):
            configs.append((old, new))
            continue
        _place(result, side, old, new)
    if configs:
        base_blobs = change_set.read_base([o for o, _ in configs if o])
        new_blobs = change_set.read_new([n for _, n in configs if n])
        for old, new in configs:
            # A pytest configuration file is test side only when its pytest section changed;
            # then the base's whole file is used (it holds build settings too).
            before = _pytest_settings(old, base_blobs.get(old)) if old else None
            after = _pytest_settings(new, new_blobs.get(new)) if new else None
            if before != after or (old != new and (before is not None or after is not None)):
                for path in (old, new):
                    if path and path not in result.test_side:
                        result.test_side.append(path)
                result.everything = True
                result.widening.append(new or old or "")
            else:
                _place(result, side, old, new)
    result.modules = sorted(set(result.modules))
    return result


def _place(result: Plan, side: TestSide, old: str | None, new: str | None) -> None:
    if old is not None:
        if side(old):
            result.test_side.append(old)
            if TEST_MODULE.search(old):
                result.modules.append(old)  # changed, moved or deleted: its base version runs
            elif side.widens(old):
                result.everything = True
                result.widening.append(old)
        elif old != new:
            result.remove.append(old)
    if new is not None:
        if side(new):
            if new != old:
                result.test_side.append(new)
                # A new test module has no base version to replay; a new conftest,
                # helper or golden can change every test's outcome.
                if not TEST_MODULE.search(new) and side.widens(new):
                    result.everything = True
                    result.widening.append(new)
        else:
            result.write.append(new)


# -- scratch trees ---------------------------------------------------------------


def export(rev: str, *dests: str) -> None:
    """Write REV's tree into each of DESTS through private indexes (nothing of the user's is touched).

    One ``read-tree``, then one ``checkout-index`` per destination, all at once.
    """
    work = tempfile.mkdtemp(prefix="oracle-guard-index-", dir=scratch_home())
    try:
        index = os.path.join(work, "index")
        _git_ok(("read-tree", rev), dict(os.environ, GIT_INDEX_FILE=index), rev)
        procs = []
        for number, dest in enumerate(dests):
            own = f"{index}{number}"
            shutil.copyfile(index, own)  # checkout-index may refresh its index: one each
            env = dict(os.environ, GIT_INDEX_FILE=own)
            procs.append(
                subprocess.Popen(
                    ("git", "checkout-index", "-a", "-f", f"--prefix={dest}/"),
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                )
            )
        errors = [(p.communicate()[1], p.returncode) for p in procs]
        for err, code in errors:
            if code != 0:
                lines = err.decode("utf-8", "replace").strip().splitlines()
                raise git.GitError(f"cannot export {rev[:12]} into a scratch tree: {lines[-1] if lines else code}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _git_ok(args: tuple[str, ...], env: dict[str, str], rev: str) -> None:
    proc = subprocess.run(("git", *args), env=env, capture_output=True)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise git.GitError(f"cannot export {rev[:12]} into a scratch tree: {err[-1] if err else proc.returncode}")


def overlay(change_set: changes.ChangeSet, the_plan: Plan, dest: str) -> None:
    """Lay the change's production files over the base export in DEST."""
    _lay(change_set, the_plan.write, the_plan.remove, dest)


def overlay_all(change_set: changes.ChangeSet, dest: str) -> None:
    """Lay the whole change, test side included, over the base export in DEST: the change as committed."""
    write = [c.path for c in change_set.changes if c.path]
    remove = [c.old_path for c in change_set.changes if c.old_path and c.old_path not in write]
    _lay(change_set, write, remove, dest)


def _lay(change_set: changes.ChangeSet, write: list[str], remove: list[str], dest: str) -> None:
    for path in remove:
        target = os.path.join(dest, path)
        if os.path.lexists(target) and not os.path.isdir(target):
            os.unlink(target)
    blobs = change_set.read_new(write) if change_set.target else {}
    for path in write:
        target = os.path.join(dest, path)
        if os.path.lexists(target) and not os.path.isdir(target):
            os.unlink(target)  # never write through a link into the user's files
        os.makedirs(os.path.dirname(target) or dest, exist_ok=True)
        if change_set.target:
            data = blobs.get(path)
            if data is not None:
                with open(target, "wb") as f:
                    f.write(data)
            continue
        if os.path.islink(path):
            os.symlink(os.readlink(path), target)
        elif os.path.isfile(path):
            shutil.copy2(path, target)


def scratch_home(environ: dict[str, str] | None = None) -> str:
    """Where scratch trees go: ORACLE_GUARD_SCRATCH, else /dev/shm, else the temp folder.

    Writing thousands of files is what building a tree costs; on a busy disk
    that is ten times slower than memory, so a Linux tmpfs with room to spare
    (and that allows executing files, as a test may) is preferred.  Not when the
    change's code runs confined: it may write /dev/shm (multiprocessing's semaphores
    live there), so the base's tree must not (repo/confine).
    """
    env = os.environ if environ is None else environ
    chosen = env.get("ORACLE_GUARD_SCRATCH")
    if chosen:
        return chosen
    shm = "/dev/shm"
    if jail.ground().abi:
        return tempfile.gettempdir()
    try:
        if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) and not _noexec(shm):
            stat = os.statvfs(shm)
            if stat.f_bavail * stat.f_frsize >= 1 << 30:
                return shm
    except OSError:
        pass
    return tempfile.gettempdir()


def _noexec(mount_point: str) -> bool:
    try:
        with open("/proc/mounts", encoding="utf-8") as f:
            for line in f:
                fields = line.split()
                if len(fields) > 3 and fields[1] == mount_point:
                    return "noexec" in fields[3].split(",")
    except OSError:
        return True
    return True  # not a mount point of its own: do not guess


class Scratch:
    """A temporary folder holding the base tree and the new-code-with-base-tests tree.

    A third tree, ``target``, holds the change as committed (its own tests too): built only when
    a test that fails at the base must be run in the version the change left behind.
    """

    def __init__(self) -> None:
        self.root = tempfile.mkdtemp(prefix="oracle-guard-replay-", dir=scratch_home())
        self.base = os.path.join(self.root, "base")
        self.new = os.path.join(self.root, "new")
        self.target = os.path.join(self.root, "target")
        self.tests_at_base = os.path.join(self.root, "tests-at-base")
        self.generated: dict[str, bytes] | None = None
        self.generated_new: dict[str, bytes] | None = None
        self.found: dict[str, bytes] = {}  # the ignored data-only modules: one `git ls-files` for both sets
        self.pycs: dict[str, bytes] = {}  # the base's bytecode, laid into each tree built (bytecode.py)

    def generated_modules(self, base: str) -> dict[str, bytes]:
        """The install-time modules the base imports and git does not hold (generated.py), asked once:
        for the trees where the base's code runs."""
        if self.generated is None:
            try:
                top = git.toplevel()
            except git.GitError:
                top = ""
            self.found = generated.candidates(top) if top else {}
            self.generated = generated.needed(top, base, self.found) if top else {}
        return self.generated

    def generated_for_change(self, change_set: changes.ChangeSet) -> dict[str, bytes]:
        """The base's install-time modules and those the change's code newly imports (generated.py), asked
        once: for the trees where the change's code runs, never the base's."""
        for_base = self.generated_modules(change_set.base or "")
        if self.generated_new is None:
            self.generated_new = {**for_base, **generated.needed_by_change(self.found, for_base, change_set)}
        return self.generated_new

    def build_target(self, change_set: changes.ChangeSet) -> str:
        assert change_set.base is not None
        export(change_set.base, self.target)
        overlay_all(change_set, self.target)
        generated.lay(self.generated_for_change(change_set), [self.target])
        changed = [p for c in change_set.changes for p in (c.path, c.old_path) if p]
        bytecode.lay(self.pycs, [self.target], changed)
        return self.target

    def build_tests_at_base(self, change_set: changes.ChangeSet, the_plan: Plan) -> str:
        """The change as committed but for its production edits: its own tests over the base's code.

        Whether a test the change brings is repeatable on its own is asked here (probes/suspects):
        what it does when run again over code the change did not write is the test's, not the code's.
        """
        assert change_set.base is not None
        export(change_set.base, self.tests_at_base)
        production = {*the_plan.write, *the_plan.remove}
        write = [c.path for c in change_set.changes if c.path and c.path not in production]
        remove = [c.old_path for c in change_set.changes if c.old_path and c.old_path not in {*write, *production}]
        _lay(change_set, write, remove, self.tests_at_base)
        generated.lay(self.generated_modules(change_set.base), [self.tests_at_base])
        bytecode.lay(self.pycs, [self.tests_at_base], [*write, *remove])
        return self.tests_at_base

    def build_flips(self, change_set: changes.ChangeSet, the_plan: Plan) -> dict[str, str]:
        """Trees of their own for the flip runs that run beside the main runs (a test writing a fixed
        file in its folder must not meet its twin of the other run): side -> tree."""
        assert change_set.base is not None
        trees = {"base": os.path.join(self.root, "base-flips"), "new": os.path.join(self.root, "new-flips")}
        export(change_set.base, *trees.values())
        overlay(change_set, the_plan, trees["new"])
        generated.lay(self.generated_modules(change_set.base), [trees["base"]])
        generated.lay(self.generated_for_change(change_set), [trees["new"]])
        bytecode.lay(self.pycs, [trees["base"]])
        bytecode.lay(self.pycs, [trees["new"]], [*the_plan.write, *the_plan.remove])
        return trees

    def build(self, change_set: changes.ChangeSet, the_plan: Plan, sides: Iterable[str] = ("base", "new")) -> None:
        assert change_set.base is not None
        dests = [getattr(self, which) for which in sides]
        export(change_set.base, *dests)
        if "new" in sides:
            overlay(change_set, the_plan, self.new)
        generated.lay(self.generated_modules(change_set.base), [self.base] if "base" in sides else [])
        generated.lay(self.generated_for_change(change_set), [self.new] if "new" in sides else [])
        bytecode.lay(self.pycs, [self.base] if "base" in sides else [])
        bytecode.lay(self.pycs, [self.new] if "new" in sides else [], [*the_plan.write, *the_plan.remove])

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Scratch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()
