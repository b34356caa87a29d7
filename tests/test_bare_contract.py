"""A contract with no entries is read without YAML (contract/bare.py): only where the strict loader agrees.

Every document `recognize` accepts must be one the strict loader reads as a contract without freezes and
with the default snapshot; everything else (whatever the strict loader refuses or reads differently) must
go to the strict loader.  The pytest plugin reads every gated run's contract through it.
"""

from __future__ import annotations

import itertools

import pytest

from oracle_guard.contract import bare, contract

PATH = "tests/agent_contract.yaml"
SETTINGS = [
    "properties: []",
    "fixtures: []",
    "freezes: []",
    "max_active_freezes: 3",
    "max_freeze_days: 7",
    "max_reruns: 120",
]


def documents() -> list[str]:
    """Every subset of the settings beside `version: 1`, in two orders, with and without comments and gaps."""
    found = []
    for size in range(len(SETTINGS) + 1):
        for chosen in itertools.combinations(SETTINGS, size):
            for lines in (["version: 1", *chosen], [*reversed(chosen), "version: 1"]):
                found.append("\n".join(lines) + "\n")
                found.append(
                    "# oracle-guard contract: it may only stay the same or get stronger.\n\n" + "\n".join(lines)
                )
    return found


def test_every_bare_document_reads_the_same_through_the_strict_loader() -> None:
    for text in documents():
        fast = bare.recognize(text.encode(), PATH)
        strict = contract.loads(text, PATH)
        assert fast is not None, text
        assert (fast.freezes, fast.snapshot_path, fast.path) == (strict.freezes, strict.snapshot_path, strict.path)
        assert strict.properties == () and strict.fixtures == ()


def test_what_init_writes_is_bare() -> None:
    text = contract.dumps(contract.Contract())
    assert bare.recognize(text.encode(), PATH) is not None, text


@pytest.mark.parametrize(
    "text",
    [
        "version: 1\nversion: 1\n",  # a duplicate key: the strict loader refuses it
        "version: 2\n",
        "properties: []\n",  # no version
        "",
        "version: 1\nmax_reruns: 0\n",  # below its minimum
        "version: 1\nmax_active_freezes: 0\n",  # valid, but not a line this reader knows: the strict loader reads it
        "version: 1\nfreezes: [] \n",  # a trailing space
        "version: 1\r\nfreezes: []\r\n",
        "\ufeffversion: 1\n",
        "version: 1\n# a tab\there\n",
        "version: 1\n# a bell \x07\n",
        "version: 1\nsnapshot: tests/other.txt\n",  # another snapshot
        "version: 1\nfreezes:\n  - id: t\n",
        "---\nversion: 1\n",
        " version: 1\n",
        "version: 1\nmax_reruns: 1234567\n",  # longer than this reader's numbers
    ],
    ids=repr,
)
def test_anything_else_goes_to_the_strict_loader(text: str) -> None:
    assert bare.recognize(text.encode("utf-8"), PATH) is None


def test_pyyaml_is_imported_only_when_a_contract_is_read() -> None:
    """The hook's modules load without PyYAML (10 ms of a commit's start); reading a contract loads it."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import oracle_guard.commands.one_hook, oracle_guard.hook_ids.collection_snapshot\n"
        "from oracle_guard.contract import contract\n"
        "assert 'yaml' not in sys.modules, sorted(m for m in sys.modules if 'yaml' in m)\n"
        "assert contract.loads('version: 1\\n').version == 1\n"
        "assert 'yaml' in sys.modules\n"
        "try:\n"
        "    contract.loads('version: &a 1\\n')\n"
        "except contract.ContractError as exc:\n"
        "    assert 'anchors are not allowed' in str(exc), exc\n"
        "else:\n"
        "    raise AssertionError('an anchor was accepted')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
