"""contract-split: the bucket rule, per commit, in both directions."""

from __future__ import annotations

import pytest

from oracle_guard.hook_ids.contract_split import main as split_main
from tests.helpers import Repo


def seeded(repo: Repo) -> None:
    repo.write("src/pkg/core.py", "X = 1\n")
    repo.write("tests/contracts/test_api.py", "def test_api():\n    assert 1 + 1 == 2\n")
    repo.write("tests/relations/test_shuffle.py", "def test_shuffle():\n    assert sorted([2, 1]) == [1, 2]\n")
    repo.write("tests/unit/test_core.py", "def test_core():\n    assert 2 > 1\n")
    repo.commit("base")


def test_src_and_contract_in_one_commit_rejected(repo: Repo) -> None:
    seeded(repo)
    repo.write("src/pkg/core.py", "X = 2\n")
    repo.write("tests/contracts/test_api.py", "def test_api():\n    assert 1 + 1 >= 2\n")
    code, out, _, _ = repo.staged_hook(split_main)
    assert code == 1
    assert out.startswith(
        "tests/contracts/test_api.py:1:1: OG701 contract-layer file changed in this commit together with production code (src/pkg/core.py)"
    )


def test_src_with_unit_tests_accepted(repo: Repo) -> None:
    seeded(repo)
    repo.write("src/pkg/core.py", "X = 2\n")
    repo.write("tests/unit/test_core.py", "def test_core():\n    assert 3 > 1\n")
    assert repo.staged_hook(split_main)[:2] == (0, "")


def test_contract_alone_accepted(repo: Repo) -> None:
    seeded(repo)
    repo.write("tests/contracts/test_api.py", "def test_api():\n    assert 1 + 2 == 3\n")
    assert repo.staged_hook(split_main)[:2] == (0, "")


def test_relation_deleted_rejected_and_added_accepted(repo: Repo) -> None:
    seeded(repo)
    repo.remove("tests/relations/test_shuffle.py")
    code, out, _, _ = repo.staged_hook(split_main)
    assert code == 1 and "tests/relations/test_shuffle.py:1:1: OG702 relations-layer file deleted" in out
    repo.git("reset", "-q", "--hard")
    repo.write("tests/relations/test_more.py", "def test_more():\n    assert sum([1, 2]) == sum([2, 1])\n")
    assert repo.staged_hook(split_main)[:2] == (0, "")


def test_relation_moved_out_rejected_moved_within_accepted(repo: Repo) -> None:
    seeded(repo)
    repo.git("mv", "tests/relations/test_shuffle.py", "tests/unit/test_shuffle.py")
    code, out, _, _ = repo.staged_hook(split_main)
    assert code == 1 and "moved out to tests/unit/test_shuffle.py" in out
    repo.git("reset", "-q", "--hard")
    repo.git("mv", "tests/relations/test_shuffle.py", "tests/relations/test_order.py")
    assert repo.staged_hook(split_main)[:2] == (0, "")


def test_range_mode_judges_each_commit(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    seeded(repo)
    base = repo.git("rev-parse", "HEAD").strip()
    repo.write("src/pkg/core.py", "X = 2\n")
    repo.commit("code")
    repo.write("tests/contracts/test_api.py", "def test_api():\n    assert 2 + 2 == 4\n")
    repo.commit("contract, separately")
    assert repo.run(split_main, "--base", base) == 0, capsys.readouterr().out
    repo.write("src/pkg/core.py", "X = 3\n")
    repo.write("tests/contracts/test_api.py", "def test_api():\n    assert 2 + 3 == 5\n")
    bad = repo.commit("both at once")
    assert repo.run(split_main, "--base", base) == 1
    assert f"commit {bad[:12]}" in capsys.readouterr().out


def test_contract_file_and_locked_fixture_count_as_contract_layer(repo: Repo) -> None:
    digest = "0" * 64
    repo.write(
        "tests/agent_contract.yaml",
        f"version: 1\nfixtures:\n  - id: inv\n    path: tests/fixtures/inv.json\n    sha256: {digest}\n",
    )
    repo.write("tests/fixtures/inv.json", "{}\n")
    repo.write("src/app.py", "X = 1\n")
    repo.commit("base")
    repo.write("src/app.py", "X = 2\n")
    repo.write("tests/fixtures/inv.json", '{"a": 1}\n')
    code, out, _, _ = repo.staged_hook(split_main)
    assert code == 1 and out.startswith("tests/fixtures/inv.json:1:1: OG701")
    repo.git("reset", "-q", "--hard")
    repo.write("src/app.py", "X = 2\n")
    repo.write("tests/fixtures/other.json", "{}\n")  # not locked: an ordinary test file
    assert repo.staged_hook(split_main)[:2] == (0, "")


def test_repository_without_layers_is_not_checked(repo: Repo) -> None:
    repo.write("src/app.py", "X = 1\n")
    repo.write("tests/test_app.py", "def test_app():\n    assert 1\n")
    repo.commit("base")
    repo.write("src/app.py", "X = 2\n")
    repo.write("tests/test_app.py", "def test_app():\n    assert 2\n")
    assert repo.staged_hook(split_main)[:2] == (0, "")


def test_custom_layers_from_the_contract(repo: Repo) -> None:
    repo.write("tests/agent_contract.yaml", "version: 1\nlayers:\n  contracts: [spec/]\n  production: [lib/]\n")
    repo.write("lib/m.py", "X = 1\n")
    repo.write("spec/test_m.py", "def test_m():\n    assert 1 == 1\n")
    repo.write("src/ignored.py", "X = 1\n")
    repo.commit("base")
    repo.write("lib/m.py", "X = 2\n")
    repo.write("spec/test_m.py", "def test_m():\n    assert 2 == 2\n")
    code, out, _, _ = repo.staged_hook(split_main)
    assert code == 1 and out.startswith("spec/test_m.py:1:1: OG701")
    repo.git("reset", "-q", "--hard")
    repo.write("src/ignored.py", "X = 2\n")
    repo.write("spec/test_m.py", "def test_m():\n    assert 3 == 3\n")
    assert repo.staged_hook(split_main)[:2] == (0, "")


GOLDEN_CASES = [
    # (base files, changed files in one commit, expected finding paths)
    (
        {"src/pkg/render.py": "A = 1\n", "tests/__snapshots__/test_render.ambr": "old\n"},
        {"src/pkg/render.py": "A = 2\n", "tests/__snapshots__/test_render.ambr": "new\n"},
        ["tests/__snapshots__/test_render.ambr"],
    ),
    (
        {"pkg/core.py": "A = 1\n", "tests/data/expected.json": "{}\n"},
        {"pkg/core.py": "A = 2\n", "tests/data/expected.json": '{"a": 1}\n'},
        ["tests/data/expected.json"],
    ),
    (
        {"pkg/core.py": "A = 1\n", "tests/test_core/test_total.yml": "total: 3\n"},
        {"pkg/core.py": "A = 2\n", "tests/test_core/test_total.yml": "total: 4\n"},
        ["tests/test_core/test_total.yml"],
    ),
    (
        {"pkg/core.py": "A = 1\n", "tests/test_report.approved.txt": "x\n"},
        {"pkg/core.py": "A = 2\n", "tests/test_report.approved.txt": "y\n"},
        ["tests/test_report.approved.txt"],
    ),
    # honest: a new golden for a new test; a golden alone; code alone; docs beside a golden; a test module beside code
    ({"pkg/core.py": "A = 1\n"}, {"pkg/core.py": "A = 2\n", "tests/__snapshots__/test_new.ambr": "new\n"}, []),
    ({"pkg/core.py": "A = 1\n", "tests/data/expected.json": "{}\n"}, {"tests/data/expected.json": "[]\n"}, []),
    (
        {"pkg/core.py": "A = 1\n", "tests/data/expected.json": "{}\n"},
        {"pkg/core.py": "A = 2\n", "tests/test_core.py": "def test_a():\n    assert 1\n"},
        [],
    ),
    (
        {"docs/index.md": "a\n", "tests/data/expected.json": "{}\n"},
        {"docs/conf.py": "x = 1\n", "tests/data/expected.json": "[]\n"},
        [],
    ),
]


@pytest.mark.parametrize(("base", "change", "expected"), GOLDEN_CASES)
def test_goldens_re_recorded_with_production_code(repo, capsys, base, change, expected) -> None:
    for path, text in base.items():
        repo.write(path, text)
    repo.commit("base")
    for path, text in change.items():
        repo.write(path, text)
    repo.stage()
    code = repo.run(split_main)
    out = capsys.readouterr().out
    assert sorted(line.split(":", 1)[0] for line in out.splitlines()) == expected, out
    assert code == (1 if expected else 0)
    assert all(" OG703 " in line for line in out.splitlines())


def test_golden_in_its_own_commit_then_code_passes_in_range_mode(repo, capsys) -> None:
    repo.write("pkg/core.py", "A = 1\n")
    repo.write("tests/data/expected.json", "{}\n")
    base = repo.commit("base")
    repo.write("tests/data/expected.json", "[]\n")
    repo.commit("reviewed: new expected output")
    repo.write("pkg/core.py", "A = 2\n")
    repo.commit("the code")
    assert repo.run(split_main, "--base", base) == 0, capsys.readouterr().out
