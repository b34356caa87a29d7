"""forbid-skip-marks OG110: rerun and retry marks on existing tests belong to the freeze ledger.

The marks under test live in strings only.
"""

from __future__ import annotations

import pytest

from oracle_guard.hook_ids.forbid_skip_marks import check, main
from oracle_guard.rules.skipmarks import rerun_count
from tests.helpers import Repo, memory_check

T = "tests/test_mod.py"
BASE = """\
import pytest


def test_a():
    assert 2 + 2 == 4


class TestB:
    def test_c(self):
        assert [1] == [1]
"""
FREEZE = """\
version: 1
freezes:
  - id: test_a
    owner: oncall
    reason: clock skew, PAY-4412
    expires: "2999-01-01T00:00:00Z"
    remaining_reruns: 2
"""


def on_a(decorator: str, imports: str = "import pytest") -> str:
    return f"{imports}\n\n\n{decorator}\ndef test_a():\n    assert 2 + 2 == 4\n\n\nclass TestB:\n    def test_c(self):\n        assert [1] == [1]\n"


LEDGER = {"tests/agent_contract.yaml": FREEZE}


REJECTED = [
    (
        "rerunfailures",
        on_a("@pytest.mark.flaky(reruns=5)"),
        "OG110 new flaky mark (reruns=5) on test_a: reruns belong to the freeze ledger",
    ),
    ("bare-flaky-mark", on_a("@pytest.mark.flaky"), "OG110 new flaky mark on test_a"),
    (
        "pytest-retry",
        on_a("@pytest.mark.flaky(retries=3, delay=1)"),
        "OG110 new flaky mark (retries=3, delay=1) on test_a",
    ),
    (
        "flaky-package",
        on_a("@flaky(max_runs=5)", "from flaky import flaky"),
        "OG110 new flaky decorator (max_runs=5) on test_a",
    ),
    ("flaky-package-bare", on_a("@flaky", "from flaky import flaky"), "OG110 new flaky decorator (`flaky`) on test_a"),
    ("flaky-module", on_a("@flaky.flaky(3, 1)", "import flaky"), "OG110 new flaky decorator (3, 1) on test_a"),
    ("alias", on_a("@m.flaky(reruns=2)", "from pytest import mark as m"), "OG110 new flaky mark (reruns=2) on test_a"),
    (
        "project-retry",
        on_a("@retry(times=3)", "from tests.helpers import retry"),
        "OG110 new retry decorator `tests.helpers.retry(times=3)` on test_a",
    ),
    (
        "project-retry-attr",
        on_a("@helpers.retry_on_failure", "from tests import helpers"),
        "OG110 new retry decorator `tests.helpers.retry_on_failure` on test_a",
    ),
    (
        "tenacity",
        on_a("@tenacity.retry(stop=tenacity.stop_after_attempt(3))", "import tenacity"),
        "OG110 new tenacity retry decorator",
    ),
    (
        "pytestmark",
        "import pytest\n\npytestmark = pytest.mark.flaky(reruns=2)\n" + BASE.split("\n", 1)[1],
        "OG110 new flaky mark (reruns=2) on this module",
    ),
    (
        "class-pytestmark",
        BASE.replace("class TestB:\n", "class TestB:\n    pytestmark = [pytest.mark.flaky(reruns=1)]\n\n"),
        "OG110 new flaky mark (reruns=1) on TestB",
    ),
    (
        "param-marks",
        "import pytest\n\n\n@pytest.mark.parametrize('x', [1, pytest.param(2, marks=pytest.mark.flaky(reruns=3))])\ndef test_a(x):\n    assert 2 + 2 == 4\n"
        + BASE.split("\n\n\n", 2)[2],
        "OG110 new flaky mark (reruns=3) on test_a",
    ),
]
# (id, base, new, expected): a budget raised on a mark that was already there
RAISED = [
    (
        "raised",
        on_a("@pytest.mark.flaky(reruns=1)"),
        on_a("@pytest.mark.flaky(reruns=5)"),
        "OG110 new flaky mark (reruns=5) on test_a",
    ),
    (
        "raised-flaky",
        on_a("@flaky(max_runs=2)", "from flaky import flaky"),
        on_a("@flaky(max_runs=9)", "from flaky import flaky"),
        "OG110 new flaky decorator (max_runs=9) on test_a",
    ),
    (
        "respelled-and-raised",
        on_a("@flaky(max_runs=3)", "from flaky import flaky"),
        on_a("@pytest.mark.flaky(reruns=4)"),
        "OG110 new flaky mark (reruns=4) on test_a",
    ),
    (
        "count-made-dynamic",
        on_a("@pytest.mark.flaky(reruns=1)"),
        on_a("@pytest.mark.flaky(reruns=N)"),
        "OG110 new flaky mark (reruns=N) on test_a",
    ),
]


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [pytest.param(BASE, a, e, id=i) for i, a, e in REJECTED] + [pytest.param(*r[1:], id=r[0]) for r in RAISED],
)
def test_a_new_rerun_mark_on_an_existing_test_is_rejected(before: str, after: str, expected: str) -> None:
    code, out, _, _ = memory_check(check, {T: before}, {T: after})
    assert code == 1 and expected in out, out


ACCEPTED = [
    ("lowered", on_a("@pytest.mark.flaky(reruns=5)"), on_a("@pytest.mark.flaky(reruns=2)")),
    (
        "unchanged",
        on_a("@pytest.mark.flaky(reruns=2)"),
        on_a("@pytest.mark.flaky(reruns=2)").replace("2 + 2 == 4", "4 == 2 + 2"),
    ),
    ("removed", on_a("@flaky(max_runs=3)", "from flaky import flaky"), BASE),
    (
        "flaky-package-lowered",
        on_a("@flaky(max_runs=5)", "from flaky import flaky"),
        on_a("@flaky(max_runs=3)", "from flaky import flaky"),
    ),
    # found on ipykernel (#1411): the flaky package's decorator respelled as the mark its plugin reads
    (
        "respelled",
        on_a("@flaky(max_runs=3)", "import pytest\nfrom flaky import flaky"),
        on_a("@pytest.mark.flaky(max_runs=3)"),
    ),
    ("respelled-bare", on_a("@flaky", "import pytest\nfrom flaky import flaky"), on_a("@pytest.mark.flaky")),
    (
        "project-retry-unchanged",
        on_a("@retry", "from tests.helpers import retry"),
        on_a("@retry", "from tests.helpers import retry").replace("2 + 2 == 4", "4 == 2 + 2"),
    ),
    ("new-test", BASE, BASE + "\n\n@pytest.mark.flaky(reruns=1)\ndef test_new():\n    assert 1 + 1 == 2\n"),
    ("other-marks", BASE, on_a("@pytest.mark.slow")),
    ("retry-in-body", BASE, BASE.replace("assert 2 + 2 == 4", "client.retry(3)\n    assert 2 + 2 == 4")),
    ("retry-test-name", BASE, BASE + "\n\ndef test_retry_policy():\n    assert 1 + 1 == 2\n"),
]


@pytest.mark.parametrize(("before", "after"), [pytest.param(b, a, id=i) for i, b, a in ACCEPTED])
def test_the_honest_twin_passes(before: str, after: str) -> None:
    code, out, _, _ = memory_check(check, {T: before}, {T: after})
    assert (code, out) == (0, "")


@pytest.mark.parametrize(
    ("decorator", "expected"),
    [
        ("@pytest.mark.flaky(reruns=2)", 0),  # within remaining_reruns: the ledger at work
        ("@pytest.mark.flaky(reruns=3)", 1),  # more than the entry's budget
    ],
)
def test_a_freeze_entry_covers_a_mark_within_its_budget(repo: Repo, decorator: str, expected: int) -> None:
    code, out, _, _ = repo.judge_change(main, {T: BASE, **LEDGER}, {T: on_a(decorator)}, suffix=".py")
    assert code == expected, out


def test_a_freeze_never_covers_a_module_wide_rerun(repo: Repo) -> None:
    after = "import pytest\n\npytestmark = pytest.mark.flaky(reruns=1)\n" + BASE.split("\n", 1)[1]
    code, out, _, _ = repo.judge_change(main, {T: BASE, **LEDGER}, {T: after}, suffix=".py")
    assert code == 1 and "OG110" in out


@pytest.mark.parametrize(
    ("detail", "kind", "count"),
    [
        ("", "pytest.mark.flaky", 1),
        ("reruns=3", "pytest.mark.flaky", 3),
        ("retries=2, delay=1", "pytest.mark.flaky", 2),
        ("max_runs=4", "flaky.flaky", 3),
        ("3, 1", "flaky.flaky", 3),
        ("reruns=N", "pytest.mark.flaky", float("inf")),
        ("condition=True", "pytest.mark.flaky", 1),
        ("stop=tenacity.stop_after_attempt(3)", "tenacity.retry", 2),
        ("max_tries=4", "backoff.on_exception", 3),
        ("", "retry:tests.helpers.retry", float("inf")),
        ("policy", "retry:tests.helpers.retry", float("inf")),
    ],
)
def test_rerun_count(detail: str, kind: str, count: float) -> None:
    assert rerun_count(detail, kind) == count


@pytest.mark.parametrize(("decorator", "expected"), [("@retry(times=2)", 0), ("@retry", 1)])
def test_a_freeze_covers_a_project_retry_only_when_its_count_is_known(
    repo: Repo, decorator: str, expected: int
) -> None:
    code, out, _, _ = repo.judge_change(
        main, {T: BASE, **LEDGER}, {T: on_a(decorator, "from tests.helpers import retry")}, suffix=".py"
    )
    assert code == expected, out
