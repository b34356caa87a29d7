"""Finding the project's interpreter, and the environment its pytest runs in.

Shared by collection-snapshot and oracle-replay: both run the project's own
pytest, never the one in the hook's (pre-commit's) isolated environment.
"""

from __future__ import annotations

import os
import shutil
import sys

from oracle_guard.repo import git
from oracle_guard.reporting.report import UsageError, notice


def _in_pre_commit_store(env: dict[str, str]) -> bool:
    """Whether this interpreter is an environment pre-commit built (language: python)."""
    cache = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    stores = [env.get("PRE_COMMIT_HOME") or os.path.join(cache, "pre-commit")]
    prefix = os.path.normcase(os.path.realpath(sys.prefix))
    if any(prefix.startswith(os.path.normcase(os.path.realpath(store)) + os.sep) for store in stores):
        return True
    # `pre-commit try-repo` builds its env in a temporary store: <store>/repo<random>/py_env-<python>.
    return os.path.basename(prefix).startswith("py_env-") and os.path.basename(os.path.dirname(prefix)).startswith(
        "repo"
    )


def _own_bins(env: dict[str, str]) -> set[str]:
    """Folders of this hook's own interpreter when it is pre-commit's isolated env.

    Outside pre-commit (``PRE_COMMIT`` unset: `oracle-guard` run by hand or in
    CI) the hook's interpreter may well be the project's, so nothing is excluded.
    """
    if not env.get("PRE_COMMIT") or not _in_pre_commit_store(env):
        return set()  # `language: system`/`unsupported`: the hook runs in the project's own interpreter
    bins = {os.path.join(sys.prefix, "bin"), os.path.join(sys.prefix, "Scripts"), os.path.dirname(sys.executable)}
    return {os.path.normcase(os.path.realpath(b)) for b in bins}


def _main_checkout() -> str | None:
    """The main worktree's folder when this is a linked worktree, else None."""
    if not os.path.isfile(".git"):  # a linked worktree's .git is a file (and we are at its top)
        return None
    try:
        out = (
            git.run("rev-parse", "--path-format=absolute", "--git-common-dir", "--git-dir", check=False)
            .decode()
            .split("\n")
        )
    except UsageError:
        return None
    if len(out) < 2 or not out[0] or out[0] == out[1]:
        return None
    common = out[0].rstrip("/")
    return os.path.dirname(common) if os.path.basename(common) == ".git" else None


def _venv_python(root: str) -> str | None:
    for rel in ("bin/python", "Scripts/python.exe"):
        candidate = os.path.join(root, rel)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


class ChosenByChange(UsageError):
    """The interpreter named by --python or VIRTUAL_ENV is a file the repository tracks: the change's choice.

    The gates turn it into a finding (OG920) against the change; elsewhere it is one line and exit 2.
    """

    def __init__(self, python: str, tracked: str, origin: str) -> None:
        super().__init__(f"the interpreter {python} ({origin}) is in {tracked}, which git tracks: a commit chose it")
        self.python, self.tracked, self.origin = python, tracked, origin


def _tracked(path: str) -> bool:
    """Whether git tracks PATH, or a file below it, in the repository that holds it (its index: HEAD and staged)."""
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    if not os.path.isdir(folder) or not _in_work_tree(folder):
        return False
    try:
        # Not the repository of a git hook's GIT_DIR: with it set, git takes FOLDER as that repository's work
        # tree, and a virtualenv's own folder would list the whole index.
        own_repo = {k: v for k, v in os.environ.items() if k not in GIT_REPO_VARS}
        out = git.run("-C", folder, "ls-files", "-z", "--", os.path.abspath(path), check=False, env=own_repo)
    except UsageError:
        return False
    return bool(out.strip(b"\0"))


def _in_work_tree(folder: str) -> bool:
    """Whether FOLDER or a folder above it holds a ``.git`` (no git process for /usr/bin and the like)."""
    folder = os.path.abspath(folder)
    while True:
        if os.path.lexists(os.path.join(folder, ".git")):
            return True
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent


def committed(python: str) -> str | None:
    """The tracked path that makes PYTHON a commit's choice (its virtualenv, or the file or link itself), or None.

    The rule (docs/ground.md): an interpreter is the user's when nothing of it is tracked: an untracked
    ``./.venv`` is made by the user (or CI) and taken; a virtualenv, ``pyvenv.cfg`` or ``python`` shim that git
    tracks came with a commit (the change's, or one the base shares) and is never taken on its own.
    """
    for path in dict.fromkeys((os.path.abspath(python), os.path.realpath(python))):
        root = os.path.dirname(os.path.dirname(path))
        if os.path.isfile(os.path.join(root, "pyvenv.cfg")) and _tracked(root):
            return root
        if _tracked(path):
            return path
    return None


_said: set[str] = set()


def _skip_committed(python: str, origin: str) -> bool:
    """Whether to leave PYTHON out (a commit chose it); says so once per interpreter."""
    tracked = committed(python)
    if tracked is None:
        return False
    if python not in _said:
        _said.add(python)
        notice(
            f"not running {python} ({origin}): {tracked} is tracked by git, so a commit chose it"
            " (docs/ground.md); pass --python PATH or activate an interpreter outside the change"
        )
    return True


def candidate_interpreters(explicit: str | None, env: dict[str, str]) -> list[tuple[str, str]]:
    """(python, where it came from), in the documented order; never one a commit chose (``committed``)."""
    if explicit:
        found = shutil.which(explicit) or (explicit if os.path.isfile(explicit) else None)
        if not found:
            raise UsageError(f"--python {explicit}: no such interpreter")
        chosen = os.path.abspath(found)  # the runs start in scratch trees: not relative to them
        tracked = committed(chosen)
        if tracked is not None:
            raise ChosenByChange(chosen, tracked, "--python")
        return [(chosen, "--python")]
    own = _own_bins(env)
    result: list[tuple[str, str]] = []
    active = env.get("VIRTUAL_ENV")
    if active and os.path.normcase(os.path.realpath(os.path.join(active, "bin"))) not in own:
        python = _venv_python(active)
        if python:
            tracked = committed(python)
            if tracked is not None:
                raise ChosenByChange(python, tracked, "the active virtualenv")
            result.append((python, "the active virtualenv"))
    for name in (".venv", "venv"):
        python = _venv_python(name)
        if python and not _skip_committed(os.path.abspath(python), f"./{name}"):
            result.append((os.path.abspath(python), f"./{name}"))
    main = _main_checkout()
    if main:  # a linked worktree (an agent's) usually has no venv of its own: the main checkout's
        for name in (".venv", "venv"):
            python = _venv_python(os.path.join(main, name))
            if python and not _skip_committed(python, f"the main checkout's {name}"):
                result.append((python, f"the main checkout's {name}"))
    for folder in env.get("PATH", "").split(os.pathsep):
        if not folder or os.path.normcase(os.path.realpath(folder)) in own:
            continue
        for exe in ("python3", "python"):
            python = shutil.which(exe, path=folder)
            if python and not _skip_committed(python, "PATH"):
                result.append((python, "PATH"))
                break
        else:
            continue
        break
    first: dict[str, tuple[str, str]] = {}  # each interpreter once, where it was found first
    for candidate in result:
        first.setdefault(candidate[0], candidate)
    return list(first.values())


def drop_run_vars(env: dict[str, str]) -> None:
    """Take out of ENV what a pytest run the gate itself is in sets (a test harness, an xdist worker): a plain run
    of the user's has none of it; the user's own PYTEST_* settings stay."""
    env.pop("PYTEST_CURRENT_TEST", None)
    env.pop("PYTEST_VERSION", None)
    for key in [k for k in env if k.startswith("PYTEST_XDIST_")]:
        env.pop(key)


def child_env(python: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = "0"  # parametrize ids built from sets/dicts stay put
    env.pop("PYTEST_ADDOPTS", None)  # the snapshot reflects the repository's config, not a shell's
    drop_run_vars(env)
    own = _own_bins(env)
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if os.path.normcase(os.path.realpath(p or ".")) not in own
    )
    folder = os.path.dirname(os.path.dirname(python))
    if os.path.isfile(os.path.join(folder, "pyvenv.cfg")):
        env["VIRTUAL_ENV"] = folder
    elif env.get("VIRTUAL_ENV") and os.path.normcase(os.path.realpath(os.path.join(env["VIRTUAL_ENV"], "bin"))) in own:
        env.pop("VIRTUAL_ENV")  # pre-commit's env is not the project's
    return env


# Set inside a git hook: a test running git in a scratch tree must not reach the user's repository.
GIT_REPO_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
)


def tree_env(python: str, tree: str) -> dict[str, str]:
    """The environment of a pytest run in a scratch TREE: the project's interpreter, fixed hash seed, no options
    or plugins from the shell, no git repository of the user's, and the tree's code (and its ``src/``) before any
    installed copy (an editable install points at the user's work tree)."""
    env = child_env(python)
    env["PYTHONHASHSEED"] = "0"
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_PLUGINS", None)  # plugins come from the tree's own configuration only
    for key in GIT_REPO_VARS:
        env.pop(key, None)
    front = [os.path.join(tree, "src")] if os.path.isdir(os.path.join(tree, "src")) else []
    env["PYTHONPATH"] = os.pathsep.join([tree, *front, *filter(None, [env.get("PYTHONPATH")])])
    return env


def no_pytest(tried: list[tuple[str, str]]) -> str:
    """The error when no candidate's pytest imports: TRIED is (interpreter, why import pytest failed) pairs.

    "Not installed" only when it is so: an old checkout of pytest's own dependency (pluggy) or a module
    named like one shadows it in the project's tree, and that is a different fix.
    """
    broken = [(python, why) for python, why in tried if why and "No module named 'pytest'" not in why]
    if not broken:
        where = ", ".join(python for python, _ in tried)
        return (
            f"pytest is not installed in {where}; install it there or pass --python PATH to the project's interpreter"
        )
    python, why = broken[0]
    return (
        f"pytest does not import in {python} from the project's tree ({why}): a module of the project shadows one "
        "pytest needs, or the installed versions do not fit; pass --python PATH to an interpreter where it imports"
    )
