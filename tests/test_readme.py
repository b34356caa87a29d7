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
from tests.contract_helpers import make_key
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
        "git add .gitignore .pre-commit-config.yaml tests/agent_contract.yaml tests/collection_snapshot.txt tests/allowed_signers",
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
    "shop.py": "def price(quantity):\n    return 2 * quantity\n",
    "tests/test_shop.py": (
        "import time\n\nimport pytest\n\nfrom shop import price\n\n"
        "# A test id built from the clock: it differs on every collection, as real suites' often do.\n"
        "STAMP = time.strftime('%H%M%S') + str(time.time_ns() % 100000)\n\n\n"
        "def test_price():\n    assert price(2) == 4\n\n\n"
        "@pytest.mark.parametrize('when', [STAMP])\ndef test_price_at(when):\n    assert price(0) == 0\n"
    ),
}
# What the README's first lines ask of the reader, not yet committed: the virtualenv listed in .gitignore.
GITIGNORE = ".venv/\n__pycache__/\n"
APPROVE = re.compile(r"`(oracle-guard approve [^`]+)`")


@pytest.mark.slow
def test_the_first_steps_run_verbatim_in_a_fresh_project_and_a_change_is_approved_in_its_own_pull_request(
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
    # The project's own virtualenv, where its tests run, listed in .gitignore (what the README assumes exists),
    subprocess.run([sys.executable, "-m", "venv", str(repo.path / ".venv")], check=True)
    venv_python = str(repo.path / ".venv" / "bin" / "python")
    subprocess.run([venv_python, "-m", "pip", "install", "-q", "pytest"], check=True, capture_output=True)
    repo.write(".gitignore", GITIGNORE)
    # ...and git signing with an SSH key (a throwaway one), as `git config gpg.format ssh` users have.
    key = make_key(tmp_path)
    repo.git("config", "user.email", "alice@example.com")
    repo.git("config", "gpg.format", "ssh")
    repo.git("config", "user.signingkey", str(key))

    commands, config = first_steps()
    script = ["set -u"]
    for command in commands:
        # pip's requirement URLs need a host: file://localhost/PATH is the local copy
        command = command.replace(URL, f"file://localhost{copy}").replace("COMMIT", sha)
        if command.startswith("oracle-guard check"):
            continue  # step 6 is CI's, run below on the pull request
        script.append(f"{command} || {{ echo {shlex.quote('first step failed: ' + command)} >&2; exit 1; }}")
        if command.startswith("oracle-guard init"):  # step 3: save the config init printed
            script.append(
                "cat > .pre-commit-config.yaml <<'EOF'\n" + config.replace(URL, copy).replace("COMMIT", sha) + "EOF"
            )
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTEST_ADDOPTS")}
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not p.startswith(sys.prefix))

    def sh(command: str) -> subprocess.CompletedProcess[str]:
        """COMMAND in the project's activated virtualenv, as its developer types it."""
        return subprocess.run(
            ["bash", "-c", f". .venv/bin/activate && {command}"],
            cwd=repo.path,
            env=env,
            capture_output=True,
            text=True,
            timeout=1200,
        )

    proc = subprocess.run(
        ["bash", "-c", "\n".join(script)], cwd=repo.path, env=env, capture_output=True, text=True, timeout=1200
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "wrote tests/allowed_signers: alice@example.com may sign approvals" in proc.stdout
    assert repo.git("status", "--porcelain").strip() == "", "the first commit left something to stage"
    adopted = set(repo.git("show", "--name-only", "--format=", "HEAD").split())
    assert {".gitignore", "tests/allowed_signers", "tests/agent_contract.yaml", ".pre-commit-config.yaml"} <= adopted
    adoption = repo.git("rev-parse", "HEAD").strip()

    # The adopted project is guarded: a weakening is refused at the commit.
    repo.write(
        "tests/test_shop.py",
        PROJECT_FILES["tests/test_shop.py"].replace("def test_price():", "@pytest.mark.skip\ndef test_price():"),
    )
    weak = sh('git commit -qam "skip the price test"')
    assert weak.returncode == 1 and "OG101" in weak.stdout + weak.stderr, weak.stdout + weak.stderr
    repo.git("checkout", "--", "tests/test_shop.py")

    # A pull request: a new test, then a deliberate change of the price rule, approved in the same pull request.
    repo.git("checkout", "-q", "-b", "three-per-item")
    tests = PROJECT_FILES["tests/test_shop.py"] + "\n\ndef test_price_of_three():\n    assert price(3) == 6\n"
    repo.write("tests/test_shop.py", tests)
    new_test = sh(
        'git add tests/test_shop.py && { git commit -qm "a test for three" '
        '|| { git add tests/collection_snapshot.txt && git commit -qm "a test for three"; }; }'
    )  # a commit that adds a test may record it in the snapshot first (docs/collection-snapshot.md)
    assert new_test.returncode == 0, new_test.stdout + new_test.stderr
    repo.write("shop.py", "def price(quantity):\n    return 3 * quantity\n")
    repo.write(
        "tests/test_shop.py", tests.replace("price(3) == 6", "price(3) == 9").replace("price(2) == 4", "price(2) == 6")
    )
    refused = sh('git add shop.py tests/test_shop.py && git commit -qm "price: three per item"')
    said = refused.stdout + refused.stderr
    assert refused.returncode == 1 and "OG314" in said, said
    assert "no signers at the base yet" not in said  # the adoption committed them
    for command in dict.fromkeys(APPROVE.findall(said)):  # each approval as the finding printed it
        assert sh(command).returncode == 0, command
    committed = sh('git commit -qm "price: three per item"')
    assert committed.returncode == 0, committed.stdout + committed.stderr

    # The merge gate on the pull request: the replay finds the behaviour change; approved as printed, it passes.
    gate = sh(f"oracle-guard check --replay --base {adoption}")
    said = gate.stdout + gate.stderr
    assert gate.returncode == 1 and "OG901" in said, said
    printed = list(dict.fromkeys(APPROVE.findall(said)))
    assert printed and all("behavior-change tests/test_shop.py::test_price" in c for c in printed), said
    for command in printed:
        assert sh(command).returncode == 0, command
    assert sh('git commit -qm "approve the new price"').returncode == 0
    gate = sh(f"oracle-guard check --replay --base {adoption}")
    assert gate.returncode == 0 and "oracle-guard: all checks passed" in gate.stdout, gate.stdout + gate.stderr


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
