"""Finding the project's interpreter, and the environment its pytest runs in.

Shared by collection-snapshot and oracle-replay: both run the project's own
pytest, never the one in the hook's (pre-commit's) isolated environment.
"""

from __future__ import annotations

import os
import shutil
import sys

from oracle_guard.repo import git
from oracle_guard.reporting.report import UsageError


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


def candidate_interpreters(explicit: str | None, env: dict[str, str]) -> list[tuple[str, str]]:
    """(python, where it came from), in the documented order."""
    if explicit:
        found = shutil.which(explicit) or (explicit if os.path.isfile(explicit) else None)
        if not found:
            raise UsageError(f"--python {explicit}: no such interpreter")
        return [(os.path.abspath(found), "--python")]  # the runs start in scratch trees: not relative to them
    own = _own_bins(env)
    result: list[tuple[str, str]] = []
    active = env.get("VIRTUAL_ENV")
    if active and os.path.normcase(os.path.realpath(os.path.join(active, "bin"))) not in own:
        python = _venv_python(active)
        if python:
            result.append((python, "the active virtualenv"))
    for name in (".venv", "venv"):
        python = _venv_python(name)
        if python:
            result.append((os.path.abspath(python), f"./{name}"))
    main = _main_checkout()
    if main:  # a linked worktree (an agent's) usually has no venv of its own: the main checkout's
        for name in (".venv", "venv"):
            python = _venv_python(os.path.join(main, name))
            if python:
                result.append((python, f"the main checkout's {name}"))
    for folder in env.get("PATH", "").split(os.pathsep):
        if not folder or os.path.normcase(os.path.realpath(folder)) in own:
            continue
        for exe in ("python3", "python"):
            python = shutil.which(exe, path=folder)
            if python:
                result.append((python, "PATH"))
                break
        else:
            continue
        break
    first: dict[str, tuple[str, str]] = {}  # each interpreter once, where it was found first
    for candidate in result:
        first.setdefault(candidate[0], candidate)
    return list(first.values())


def child_env(python: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = "0"  # parametrize ids built from sets/dicts stay put
    env.pop("PYTEST_ADDOPTS", None)  # the snapshot reflects the repository's config, not a shell's
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
