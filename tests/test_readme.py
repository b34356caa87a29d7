"""The README's first steps, read from the README and run verbatim in a fresh project (issue 21, item 5).

The project is generated: a package, its tests (one with a test id built from the clock, as real
suites have), its own virtualenv with pytest, a remote `origin` holding its main branch.  The only
substitutions are the two the README itself asks the reader to make: the repository URL points at a
committed copy of this checkout (no network here; pip spells it file://localhost/PATH) and `COMMIT` is
that copy's commit.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from oracle_guard.commands import cli, init_contract
from oracle_guard.reporting import hints
from tests.helpers import Repo
from tests.test_e2e_precommit import hook_repo  # noqa: F401  (a committed copy of this checkout)

PROJECT = Path(__file__).resolve().parents[1]
URL = "https://github.com/oracle-guard/oracle-guard"
MAX_LINES = 250


def first_steps() -> tuple[list[str], str]:
    """The `$ ` commands of the README's first steps, in order, and the config it says to save."""
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## First steps\n", 1)[1].split("\n## ", 1)[0]
    commands, configs = [], []
    for lang, body in re.findall(r"^ *```(\w+)\n(.*?)^ *```$", section, re.M | re.S):
        lines = [line.strip() for line in body.splitlines()]
        if lang == "console":
            commands += [line[2:] for line in lines if line.startswith("$ ")]
        elif lang == "yaml":
            indent = min(len(line) - len(line.lstrip()) for line in body.splitlines() if line.strip())
            configs.append("".join(line[indent:] + "\n" for line in body.splitlines()))
    assert len(configs) == 1, "the first steps show one config to save"
    return commands, configs[0]


def test_the_readme_is_short_and_its_first_steps_are_numbered_commands() -> None:
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= MAX_LINES
    commands, config = first_steps()
    assert (
        commands[0] == ". .venv/bin/activate" and "pre-commit" in commands[1] and "oracle-guard @ git+" in commands[1]
    )
    assert commands[2:] == [
        "oracle-guard init",
        "pre-commit install && pre-commit install --hook-type pre-push",
        "git add .pre-commit-config.yaml tests/agent_contract.yaml tests/collection_snapshot.txt",
        'git commit -m "Adopt oracle-guard"',
        "oracle-guard check --replay --base origin/main",
    ]
    assert re.findall(r"^(\d+)\. ", readme.split("\n## First steps\n", 1)[1].split("\n## ", 1)[0], re.M) == list(
        "123456"
    )
    # the config the README says to save is the one `init` prints, oracle-replay included
    assert init_contract.SNIPPET == "Write .pre-commit-config.yaml:\n\n" + config
    assert "- id: oracle-replay" in config


def test_every_docs_link_of_the_readme_and_the_docs_resolves() -> None:
    for page in [PROJECT / "README.md", *sorted((PROJECT / "docs").glob("*.md"))]:
        for target, fragment in re.findall(r"\]\(([^)#:]*?(?:\.md)?)(?:#([^)]*))?\)", page.read_text(encoding="utf-8")):
            linked = page.parent / target if target else page
            if target and not target.endswith(".md"):
                assert linked.exists(), f"{page.name} links to {target}, which does not exist"
                continue
            assert linked.is_file(), f"{page.name} links to {target}, which does not exist"
            if fragment:
                headings = re.findall(r"^#+ (.+)$", linked.read_text(encoding="utf-8"), re.M)
                assert fragment in {hints.anchor(h) for h in headings}, f"{page.name}: no #{fragment} in {linked.name}"


PROJECT_FILES = {
    ".gitignore": ".venv/\n__pycache__/\n",
    "shop.py": "def price(quantity):\n    return 2 * quantity\n",
    "tests/test_shop.py": (
        "import time\n\nimport pytest\n\nfrom shop import price\n\n"
        "# A test id built from the clock: it differs on every collection, as real suites' often do.\n"
        "STAMP = time.strftime('%H%M%S') + str(time.time_ns() % 100000)\n\n\n"
        "def test_price():\n    assert price(2) == 4\n\n\n"
        "@pytest.mark.parametrize('when', [STAMP])\ndef test_price_at(when):\n    assert price(0) == 0\n"
    ),
}


@pytest.mark.slow
def test_the_first_steps_run_verbatim_in_a_fresh_project(
    repo: Repo,
    tmp_path: Path,
    hook_repo: tuple[str, str],
) -> None:
    copy, sha = hook_repo
    for path, text in PROJECT_FILES.items():
        repo.write(path, text)
    repo.commit("a project with tests")
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    repo.git("remote", "add", "origin", str(origin))
    repo.git("push", "-q", "origin", "main")
    repo.git("fetch", "-q", "origin")
    # The project's own virtualenv, where its tests run (what the README assumes exists).
    subprocess.run([sys.executable, "-m", "venv", str(repo.path / ".venv")], check=True)
    venv_python = str(repo.path / ".venv" / "bin" / "python")
    subprocess.run([venv_python, "-m", "pip", "install", "-q", "pytest"], check=True, capture_output=True)

    commands, config = first_steps()
    script = ["set -u"]
    for command in commands:
        # pip's requirement URLs need a host: file://localhost/PATH is the local copy
        command = command.replace(URL, f"file://localhost{copy}").replace("COMMIT", sha)
        script.append(f"{command} || {{ echo {shlex.quote('first step failed: ' + command)} >&2; exit 1; }}")
        if command.startswith("oracle-guard init"):  # step 3: save the config init printed
            script.append(
                "cat > .pre-commit-config.yaml <<'EOF'\n" + config.replace(URL, copy).replace("COMMIT", sha) + "EOF"
            )
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTEST_ADDOPTS")}
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not p.startswith(sys.prefix))
    proc = subprocess.run(
        ["bash", "-c", "\n".join(script)], cwd=repo.path, env=env, capture_output=True, text=True, timeout=1200
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert repo.git("status", "--porcelain").strip() == "", "the first commit left something to stage"

    # The adopted project is guarded: a weakening is refused at the commit.
    repo.write(
        "tests/test_shop.py",
        PROJECT_FILES["tests/test_shop.py"].replace("def test_price():", "@pytest.mark.skip\ndef test_price():"),
    )
    weak = subprocess.run(
        ["bash", "-c", '. .venv/bin/activate && git commit -qam "skip the price test"'],
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert weak.returncode == 1 and "OG101" in weak.stdout + weak.stderr, weak.stdout + weak.stderr


def console_commands() -> list[tuple[str, str]]:
    """(page, command) for every `$ ` line of a console block in the README and docs/."""
    found = []
    for page in [PROJECT / "README.md", *sorted((PROJECT / "docs").glob("*.md"))]:
        for body in re.findall(r"^ *```console\n(.*?)^ *```$", page.read_text(encoding="utf-8"), re.M | re.S):
            found += [(page.name, line.strip()[2:]) for line in body.splitlines() if line.strip().startswith("$ ")]
    return found


def test_every_oracle_guard_command_in_the_docs_names_a_command_and_options_it_has(capsys) -> None:
    checked = 0
    for page, line in console_commands():
        for command in re.split(r"&&|;|\|", line.split("  #", 1)[0]):
            words = command.split()
            if words[:1] != ["oracle-guard"]:
                continue
            assert words[1] in {**cli.COMMANDS, **cli.HOOKS}, f"{page}: `{command.strip()}`: no such command"
            sub = (
                words[1:3]
                if words[2:3] and not words[2].startswith("-") and words[1] in ("guard", "quarantine")
                else words[1:2]
            )
            with pytest.raises(SystemExit) as exc:
                cli.main([*sub, "--help"])
            usage = capsys.readouterr().out
            assert exc.value.code == 0, f"{page}: `{command.strip()}`"
            for option in (w.split("=")[0] for w in words if w.startswith("--")):
                assert option in usage, f"{page}: `{command.strip()}`: {option} is not an option of {' '.join(sub)}"
            checked += 1
    assert checked >= 10
