"""oracle-shrink: every weakening rejected next to the honest change closest to it."""

from __future__ import annotations

import ast
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oracle_guard.hook_ids.oracle_shrink import main as shrink_main
from tests.helpers import Repo

T = "tests/test_x.py"
HEAD = "import pytest\nfrom hypothesis import example, given, settings, assume, strategies as st\n\n"


def _files(spec: object) -> dict[str, str | None]:
    if isinstance(spec, str):
        return {T: HEAD + textwrap.dedent(spec)}
    return {p: (None if s is None else textwrap.dedent(s)) for p, s in spec.items()}  # type: ignore[union-attr]


def run_shrink(repo: Repo, base: object, new: object, capsys: pytest.CaptureFixture[str]) -> tuple[set[str], str]:
    for path, text in _files(base).items():
        if text is not None:
            repo.write(path, text, dedent=False)
    repo.commit("base")
    for path, text in _files(new).items():
        if text is None:
            repo.remove(path)
        else:
            repo.write(path, text, dedent=False)
    repo.stage()
    changed = [p for p, t in _files(new).items() if t is not None]
    code = repo.run(shrink_main, *changed)
    out = capsys.readouterr().out
    codes = {line.split(": ", 1)[1].split()[0] for line in out.splitlines() if ": OG" in line}
    assert code == (1 if codes else 0), out
    return codes, out


# (row id, base, new, expected codes): each weakening next to its honest neighbour.
ROWS = [
    # -- fewer checks ------------------------------------------------------------
    (
        "assert-deleted",
        "def test_a():\n    assert f(1) == 2\n    assert f(2) == 3\n",
        "def test_a():\n    assert f(1) == 2\n",
        {"OG301"},
    ),
    (
        "assert-added",
        "def test_a():\n    assert f(1) == 2\n",
        "def test_a():\n    assert f(1) == 2\n    assert f(2) == 3\n",
        set(),
    ),
    (
        "raises-deleted",
        "def test_a():\n    assert f(1)\n    with pytest.raises(ValueError):\n        f(None)\n",
        "def test_a():\n    assert f(1)\n    f(2)\n",
        {"OG301"},
    ),
    (
        "mock-assert-deleted",
        "def test_a(m):\n    run(m)\n    m.assert_called_once_with(1)\n",
        "def test_a(m):\n    run(m)\n",
        {"OG301"},
    ),
    (
        "mock-assert-kept-reformatted",
        "def test_a(m):\n    run(m)\n    m.assert_called_once_with(1)\n",
        "def test_a(m):\n    run( m )\n    m.assert_called_once_with(\n        1,\n    )\n",
        set(),
    ),
    (
        "numpy-assert-deleted",
        "import numpy as np\ndef test_a():\n    np.testing.assert_array_equal(f(), [1])\n    assert g()\n",
        "import numpy as np\ndef test_a():\n    assert g()\n",
        {"OG301"},
    ),
    (
        "raise-assertionerror-deleted",
        "def test_a():\n    if f():\n        raise AssertionError('bad')\n    assert g()\n",
        "def test_a():\n    f()\n    assert g()\n",
        {"OG301"},
    ),
    (
        "unresolved-check-helper-deleted",
        "from lib import check_output\ndef test_a():\n    check_output(f())\n",
        "from lib import check_output\ndef test_a():\n    f()\n",
        {"OG301"},
    ),
    (
        "early-return-before-asserts",
        "def test_a():\n    r = f()\n    assert r == 1\n    assert g(r) == 2\n",
        "def test_a():\n    r = f()\n    assert r == 1\n    return\n    assert g(r) == 2\n",
        {"OG301"},
    ),
    (
        "if-false-around-assert",
        "def test_a():\n    r = f()\n    assert r == 1\n    assert g(r) == 2\n",
        "def test_a():\n    r = f()\n    assert r == 1\n    if False:\n        assert g(r) == 2\n",
        {"OG301"},
    ),
    (
        "return-in-a-branch-is-fine",
        "def test_a():\n    for r in rows():\n        assert r == 1\n    assert g() == 2\n",
        "def test_a():\n    for r in rows():\n        if r is None:\n            continue\n        assert r == 1\n    assert g() == 2\n",
        set(),
    ),
    (
        "message-assert-folded-into-match",
        "def test_a():\n    with pytest.raises(ValueError) as e:\n        f()\n    assert 'empty' in str(e.value)\n",
        "def test_a():\n    with pytest.raises(ValueError, match='empty'):\n        f()\n",
        set(),
    ),
    (
        "message-assert-dropped",
        "def test_a():\n    with pytest.raises(ValueError) as e:\n        f()\n    assert 'empty' in str(e.value)\n",
        "def test_a():\n    with pytest.raises(ValueError):\n        f()\n",
        {"OG301"},
    ),
    (
        "asserts-joined-with-and",
        "def test_a():\n    r = f()\n    assert r.x == 1\n    assert r.y == 2\n",
        "def test_a():\n    r = f()\n    assert r.x == 1 and r.y == 2\n",
        set(),
    ),
    (
        "asserts-joined-as-tuple",
        "def test_a():\n    r = f()\n    assert r.x == 1\n    assert r.y == 2\n",
        "def test_a():\n    r = f()\n    assert (r.x, r.y) == (1, 2)\n",
        set(),
    ),
    (
        "asserts-joined-with-or",
        "def test_a():\n    r = f()\n    assert r.x == 1\n    assert r.y == 2\n",
        "def test_a():\n    r = f()\n    assert r.x == 1 or r.y == 2\n",
        {"OG301", "OG303"},
    ),
    (
        "asserts-folded-into-loop",
        "def test_a():\n    assert f(1) == 2\n    assert f(2) == 3\n    assert f(3) == 4\n",
        "def test_a():\n    for x, y in [(1, 2), (2, 3), (3, 4)]:\n        assert f(x) == y\n",
        set(),
    ),
    (
        "asserts-folded-into-shorter-loop",
        "def test_a():\n    assert f(1) == 2\n    assert f(2) == 3\n    assert f(3) == 4\n",
        "def test_a():\n    for x, y in [(1, 2), (2, 3)]:\n        assert f(x) == y\n",
        {"OG301"},
    ),
    (
        "asserts-moved-into-module-helper",
        "def test_a():\n    r = f()\n    assert r.x == 1\n    assert r.y == 2\n",
        "def _check(r):\n    assert r.x == 1\n    assert r.y == 2\n\ndef test_a():\n    _check(f())\n",
        set(),
    ),
    (
        "helper-without-checks",
        "def test_a():\n    r = f()\n    assert r.x == 1\n    assert r.y == 2\n",
        "def _prepare(r):\n    return r\n\ndef test_a():\n    _prepare(f())\n",
        {"OG301"},
    ),
    (
        "asserts-moved-into-method-helper",
        "class TestA:\n    def test_a(self):\n        assert f() == 1\n        assert g() == 2\n",
        "class TestA:\n    def _both(self):\n        assert f() == 1\n        assert g() == 2\n\n    def test_a(self):\n        self._both()\n",
        set(),
    ),
    (
        "helper-lost-its-checks",
        "def _check(r):\n    assert r.x == 1\n    assert r.y == 2\n\ndef test_a():\n    _check(f())\n",
        "def _check(r):\n    assert r.x == 1\n\ndef test_a():\n    _check(f())\n",
        {"OG301"},
    ),
    (
        "unittest-to-plain-asserts",
        "class TestA(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(f(), 1)\n        self.assertIn(2, g())\n",
        "class TestA(unittest.TestCase):\n    def test_a(self):\n        assert f() == 1\n        assert 2 in g()\n",
        set(),
    ),
    (
        "parametrized-in-place",
        "def test_a():\n    assert f(1) == 1\n    assert f(2) == 2\n    assert f(3) == 3\n",
        "@pytest.mark.parametrize('x', [1, 2, 3])\ndef test_a(x):\n    assert f(x) == x\n",
        set(),
    ),
    (
        "parametrized-in-place-losing-a-case",
        "def test_a():\n    assert f(1) == 1\n    assert f(2) == 2\n    assert f(3) == 3\n",
        "@pytest.mark.parametrize('x', [1, 2])\ndef test_a(x):\n    assert f(x) == x\n",
        {"OG301"},
    ),
    # found on click (redteam): checks folded into a predicate the test asserts
    (
        "asserts-into-bool-predicate",
        "def test_a():\n    r = f()\n    assert not r.exc\n    assert 'x' in r.out\n    assert r.code == 0\n",
        "def _ran(r, text):\n    return not r.exc and text in r.out and r.code == 0\n\ndef test_a():\n    r = f()\n    assert _ran(r, 'x')\n",
        set(),
    ),
    (
        "asserts-into-one-clause-predicate",
        "def test_a():\n    r = f()\n    assert not r.exc\n    assert 'x' in r.out\n    assert r.code == 0\n",
        "def _ran(r, text):\n    return text in r.out\n\ndef test_a():\n    r = f()\n    assert _ran(r, 'x')\n",
        {"OG301"},
    ),
    (
        "test-deleted-by-del-statement",
        "def test_a():\n    assert f() == 1\n\ndef test_b():\n    assert g() == 2\n",
        "def test_a():\n    assert f() == 1\n\ndef test_b():\n    assert g() == 2\n\ndel test_b\n",
        {"OG302"},
    ),
    (
        "helper-deleted-by-del-statement",
        "def test_a():\n    assert f() == 1\n",
        "def _make():\n    return 1\n\nx = _make()\ndel _make\n\ndef test_a():\n    assert f() == 1\n",
        set(),
    ),
    # found on click (redteam): an assert that always ran, now behind a new condition
    (
        "assert-now-conditional",
        "def test_a():\n    r = f()\n    assert r == 42\n",
        "def test_a():\n    r = f()\n    if os.environ.get('STRICT'):\n        assert r == 42\n",
        {"OG301"},
    ),
    (
        "assert-in-with-now-conditional",
        "def test_a():\n    with ctx() as c:\n        r = c.run()\n        assert r == 42\n",
        "def test_a():\n    with ctx() as c:\n        r = c.run()\n        if os.environ.get('STRICT'):\n            assert r == 42\n",
        {"OG301"},
    ),
    (
        "assert-split-by-platform",
        "def test_a():\n    r = f()\n    assert r == 42\n",
        "def test_a():\n    r = f()\n    if WIN:\n        assert r == 42\n    else:\n        assert r == 42\n        assert g()\n",
        set(),
    ),
    (
        "assert-under-existing-condition",
        "def test_a(x):\n    r = f()\n    if x:\n        assert g()\n    assert r == 42\n",
        "def test_a(x):\n    r = f()\n    if x:\n        assert g()\n        assert r == 42\n    assert r == 42\n",
        set(),
    ),
    (
        "repeated-assert-dropped",
        "def test_a():\n    assert f() == 1\n    assert g()\n    assert f() == 1\n",
        "def test_a():\n    assert f() == 1\n    assert g()\n",
        set(),
    ),
    # found on attrs (redteam): the same assert after the code under test ran again checks a new state
    (
        "repeated-assert-after-action-dropped",
        "def test_a():\n    assert s.on is True\n    with off():\n        raise_()\n    assert s.on is True\n",
        "def test_a():\n    assert s.on is True\n    with off():\n        raise_()\n",
        {"OG301"},
    ),
    (
        "repeated-assert-after-assignment-dropped",
        "def test_a():\n    r = f()\n    assert r.ok\n    r = g()\n    assert r.ok\n",
        "def test_a():\n    r = f()\n    assert r.ok\n    r = g()\n",
        {"OG301"},
    ),
    (
        "duplicate-test-in-unchanged-file-removed",
        {
            T: "def test_a():\n    assert f() == 1\n\ndef test_b():\n    assert g(1, 2) == 2\n",
            "tests/test_y.py": "def test_b_again():\n    assert g(1, 2) == 2\n",
        },
        {T: "def test_a():\n    assert f() == 1\n"},
        set(),
    ),
    (
        "near-duplicate-test-removed",
        {
            T: "def test_a():\n    assert f() == 1\n\ndef test_b():\n    assert g(1, 2) == 2\n",
            "tests/test_y.py": "def test_b_again():\n    assert g(1, 2) >= 2\n",
        },
        {T: "def test_a():\n    assert f() == 1\n"},
        {"OG302"},
    ),
    # -- tautologies ---------------------------------------------------------------
    (
        "assert-true",
        "def test_a():\n    assert f() == 1\n",
        "def test_a():\n    assert f() == 1\n    assert True\n",
        {"OG308"},
    ),
    (
        "assert-one",
        "def test_a():\n    assert f() == 1\n",
        "def test_a():\n    assert f() == 1\n    assert 1\n",
        {"OG308"},
    ),
    (
        "assert-tuple-with-message",
        "def test_a():\n    assert f() == 1\n",
        "def test_a():\n    assert (f() == 1, 'f is one')\n",
        {"OG308"},
    ),
    (
        "assert-nonempty-string",
        "def test_a():\n    assert f() == 1\n",
        "def test_a():\n    assert f() == 1\n    assert 'todo'\n",
        {"OG308"},
    ),
    (
        "assert-x-equals-x",
        "def test_a():\n    x = str(f())\n    assert x == '1'\n",
        "def test_a():\n    x = str(f())\n    assert x == '1'\n    assert x == x\n",
        {"OG308"},
    ),
    # an object compared with itself tests its own __eq__ (reflexivity): it can fail
    (
        "object-equals-itself-is-a-reflexivity-check",
        "def test_a():\n    x = f()\n    assert x == 1\n",
        "def test_a():\n    x = f()\n    assert x == 1\n    assert x == x\n",
        set(),
    ),
    # one cause, one finding: the check cannot fail (OG308), not also "weaker" (OG303)
    (
        "assert-or-true",
        "def test_a():\n    assert f() == 1\n",
        "def test_a():\n    assert f() == 1 or True\n",
        {"OG308"},
    ),
    (
        "isinstance-object",
        "def test_a():\n    assert f() == 1\n",
        "def test_a():\n    assert f() == 1\n    assert isinstance(f(), object)\n",
        {"OG308"},
    ),
    (
        "unittest-asserttrue-true",
        "class T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(f(), 1)\n",
        "class T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(f(), 1)\n        self.assertTrue(True)\n",
        {"OG308"},
    ),
    (
        "real-assert-with-message",
        "def test_a():\n    assert f() == 1\n",
        "def test_a():\n    assert f() == 1, 'f is one'\n",
        set(),
    ),
    (
        "tautology-already-at-base",
        "def test_a():\n    assert True\n    assert f()\n",
        "def test_a():\n    assert True\n    assert f()\n    assert g()\n",
        set(),
    ),
    # -- strong asserts weakened -----------------------------------------------------------
    ("eq-to-truthiness", "def test_a():\n    assert f() == 3\n", "def test_a():\n    assert f()\n", {"OG303"}),
    (
        "eq-to-is-not-none",
        "def test_a():\n    r = f()\n    assert r == 3\n",
        "def test_a():\n    r = f()\n    assert r is not None\n",
        {"OG303"},
    ),
    (
        "eq-to-isinstance",
        "def test_a():\n    r = f()\n    assert r == 3\n",
        "def test_a():\n    r = f()\n    assert isinstance(r, int)\n",
        {"OG303"},
    ),
    (
        "eq-to-len-positive",
        "def test_a():\n    r = f()\n    assert r == [1, 2]\n",
        "def test_a():\n    r = f()\n    assert len(r) > 0\n",
        {"OG303"},
    ),
    ("eq-to-ge", "def test_a():\n    assert len(f()) == 3\n", "def test_a():\n    assert len(f()) >= 3\n", {"OG303"}),
    (
        "assertequal-to-asserttrue",
        "class T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(f(), 3)\n",
        "class T(unittest.TestCase):\n    def test_a(self):\n        self.assertTrue(f())\n",
        {"OG303"},
    ),
    ("eq-swapped-sides", "def test_a():\n    assert f() == 3\n", "def test_a():\n    assert 3 == f()\n", set()),
    (
        "eq-to-chained-eq",
        "def test_a():\n    e = f()\n    assert e.msg == 'x'\n",
        "def test_a():\n    e = f()\n    assert e.msg == e.args[0] == 'x'\n",
        set(),
    ),
    (
        "eq-to-chained-range",
        "def test_a():\n    e = f()\n    assert e.n == 3\n",
        "def test_a():\n    e = f()\n    assert 0 < e.n <= 9\n",
        {"OG303"},
    ),
    # found on click (redteam): a value checked twice, one copy loosened while the other stays exact
    (
        "eq-to-membership-beside-a-kept-eq",
        "def test_a():\n    r = f()\n    assert r.code == 0\n    r = g()\n    assert r.code == 0\n",
        "def test_a():\n    r = f()\n    assert r.code == 0\n    r = g()\n    assert r.code in (0, 1)\n",
        {"OG303"},
    ),
    (
        "or-alternative-added-beside-a-kept-check",
        "def test_a():\n    r = f()\n    assert 'x' in r.out\n    assert 'y' in r.out\n",
        "def test_a():\n    r = f()\n    assert 'x' in r.out or r.err\n    assert 'y' in r.out\n",
        {"OG303"},
    ),
    (
        "same-value-checks-reordered",
        "def test_a():\n    r = f()\n    assert r.code == 0\n    assert r.code > -1\n",
        "def test_a():\n    r = f()\n    assert r.code > -1\n    assert r.code == 0\n",
        set(),
    ),
    (
        "eq-kept-truthiness-added",
        "def test_a():\n    assert f() == 3\n",
        "def test_a():\n    assert f()\n    assert f() == 3\n",
        set(),
    ),
    # -- tolerances -----------------------------------------------------------------
    (
        "approx-rel-loosened",
        "def test_a():\n    assert f() == pytest.approx(0.3, rel=1e-6)\n",
        "def test_a():\n    assert f() == pytest.approx(0.3, rel=1e-2)\n",
        {"OG304"},
    ),
    (
        "approx-rel-tightened",
        "def test_a():\n    assert f() == pytest.approx(0.3, rel=1e-6)\n",
        "def test_a():\n    assert f() == pytest.approx(0.3, rel=1e-9)\n",
        set(),
    ),
    (
        "approx-abs-added",
        "def test_a():\n    assert f() == pytest.approx(0.3)\n",
        "def test_a():\n    assert f() == pytest.approx(0.3, abs=0.1)\n",
        {"OG304"},
    ),
    (
        "exact-to-approx",
        "def test_a():\n    assert f() == 3\n",
        "def test_a():\n    assert f() == pytest.approx(3, abs=1)\n",
        {"OG304"},
    ),
    (
        "exact-to-isclose",
        "import math\ndef test_a():\n    r = f()\n    assert r == 0.5\n",
        "import math\ndef test_a():\n    r = f()\n    assert math.isclose(r, 0.5, rel_tol=0.1)\n",
        {"OG304"},
    ),
    (
        "approx-kept-reformatted",
        "def test_a():\n    assert f() == pytest.approx(3)\n",
        "from pytest import approx\ndef test_a():\n    assert approx(3) == f()\n",
        set(),
    ),
    (
        "isclose-loosened",
        "import math\ndef test_a():\n    assert math.isclose(f(), 1.0)\n",
        "import math\ndef test_a():\n    assert math.isclose(f(), 1.0, rel_tol=1e-3)\n",
        {"OG304"},
    ),
    (
        "allclose-loosened",
        "import numpy as np\ndef test_a():\n    np.testing.assert_allclose(f(), g(), rtol=1e-7)\n",
        "from numpy.testing import assert_allclose\ndef test_a():\n    assert_allclose(f(), g(), rtol=10**-3)\n",
        {"OG304"},
    ),
    (
        "allclose-tightened",
        "import numpy as np\ndef test_a():\n    np.testing.assert_allclose(f(), g(), atol=1e-3)\n",
        "import numpy as np\ndef test_a():\n    np.testing.assert_allclose(f(), g(), atol=1e-6)\n",
        set(),
    ),
    (
        "almostequal-places-loosened",
        "class T(unittest.TestCase):\n    def test_a(self):\n        self.assertAlmostEqual(f(), 0.5)\n",
        "class T(unittest.TestCase):\n    def test_a(self):\n        self.assertAlmostEqual(f(), 0.5, places=2)\n",
        {"OG304"},
    ),
    (
        "almostequal-places-tightened",
        "class T(unittest.TestCase):\n    def test_a(self):\n        self.assertAlmostEqual(f(), 0.5, 5)\n",
        "class T(unittest.TestCase):\n    def test_a(self):\n        self.assertAlmostEqual(f(), 0.5, places=9)\n",
        set(),
    ),
    (
        "almostequal-delta-loosened",
        "class T(unittest.TestCase):\n    def test_a(self):\n        self.assertAlmostEqual(f(), 0.5, delta=0.01)\n",
        "class T(unittest.TestCase):\n    def test_a(self):\n        self.assertAlmostEqual(f(), 0.5, delta=0.5)\n",
        {"OG304"},
    ),
    (
        "abs-diff-eps-loosened",
        "def test_a():\n    assert abs(f() - 1.0) < 1e-9\n",
        "def test_a():\n    assert abs(f() - 1.0) < 1e-3\n",
        {"OG304"},
    ),
    (
        "abs-diff-eps-tightened",
        "def test_a():\n    assert abs(f() - 1.0) < 1e-6\n",
        "def test_a():\n    assert 1e-9 > abs(f() - 1.0)\n",
        set(),
    ),
    (
        "abs-diff-eps-tightened-in-place",
        "def test_a():\n    assert abs(f() - 1.0) < 1e-9\n",
        "def test_a():\n    assert abs(f() - 1.0) < 1e-12\n",
        set(),
    ),
    (
        "module-tolerance-constant-loosened",
        "TOL = 1e-9\ndef test_a():\n    assert f() == pytest.approx(1.0, abs=TOL)\n",
        "TOL = 0.5\ndef test_a():\n    assert f() == pytest.approx(1.0, abs=TOL)\n",
        {"OG304"},
    ),
    # found on click (redteam): BadParameter -> ClickException, the project's own base class
    (
        "raises-project-base-class",
        {
            "pkg/errors.py": "class Error(Exception):\n    pass\n\n\nclass UsageError(Error):\n    pass\n\n\nclass BadParameter(UsageError):\n    pass\n",
            T: "def test_a():\n    with pytest.raises(pkg.errors.BadParameter):\n        f()\n",
        },
        {T: "def test_a():\n    with pytest.raises(pkg.errors.Error):\n        f()\n"},
        {"OG306"},
    ),
    (
        "raises-project-subclass",
        {
            "pkg/errors.py": "class Error(Exception):\n    pass\n\n\nclass UsageError(Error):\n    pass\n\n\nclass BadParameter(UsageError):\n    pass\n",
            T: "def test_a():\n    with pytest.raises(pkg.errors.UsageError):\n        f()\n",
        },
        {T: "def test_a():\n    with pytest.raises(pkg.errors.BadParameter):\n        f()\n"},
        set(),
    ),
    # -- swallowed failures -------------------------------------------------------------
    (
        "except-exception-pass",
        "def test_a():\n    assert f() == 1\n",
        "def test_a():\n    try:\n        assert f() == 1\n    except Exception:\n        pass\n",
        {"OG305"},
    ),
    (
        "bare-except",
        "def test_a():\n    assert f() == 1\n",
        "def test_a():\n    try:\n        assert f() == 1\n    except:\n        pass\n",
        {"OG305"},
    ),
    (
        "except-assertionerror",
        "def test_a():\n    assert f() == 1\n",
        "def test_a():\n    try:\n        assert f() == 1\n    except (KeyError, AssertionError):\n        print('flaky')\n",
        {"OG305"},
    ),
    (
        "suppress-assertionerror",
        "import contextlib\ndef test_a():\n    assert f() == 1\n",
        "import contextlib\ndef test_a():\n    with contextlib.suppress(AssertionError):\n        assert f() == 1\n",
        {"OG305"},
    ),
    (
        "except-that-reraises",
        "def test_a():\n    assert f() == 1\n",
        "def test_a():\n    try:\n        assert f() == 1\n    except Exception:\n        log()\n        raise\n",
        set(),
    ),
    (
        "except-around-setup-only",
        "def test_a():\n    assert f() == 1\n",
        "def test_a():\n    try:\n        cleanup()\n    except Exception:\n        pass\n    assert f() == 1\n",
        set(),
    ),
    (
        "suppress-narrow-error",
        "import contextlib\ndef test_a():\n    assert f() == 1\n",
        "import contextlib\ndef test_a():\n    with contextlib.suppress(FileNotFoundError):\n        cleanup()\n    assert f() == 1\n",
        set(),
    ),
    # -- broadened raises -----------------------------------------------------------------
    (
        "raises-to-exception",
        "def test_a():\n    with pytest.raises(ValueError):\n        f()\n",
        "def test_a():\n    with pytest.raises(Exception):\n        f()\n",
        {"OG306"},
    ),
    (
        "raises-to-builtin-ancestor",
        "def test_a():\n    with pytest.raises(KeyError):\n        f()\n",
        "def test_a():\n    with pytest.raises(LookupError):\n        f()\n",
        {"OG306"},
    ),
    (
        "raises-narrowed-to-subclass",
        "def test_a():\n    with pytest.raises(ValueError):\n        f()\n",
        "def test_a():\n    with pytest.raises(UnicodeDecodeError):\n        f()\n",
        set(),
    ),
    (
        "raises-tuple-grown",
        "def test_a():\n    with pytest.raises((ValueError,)):\n        f()\n",
        "def test_a():\n    with pytest.raises((ValueError, TypeError)):\n        f()\n",
        {"OG306"},
    ),
    (
        "raises-tuple-shrunk",
        "def test_a():\n    with pytest.raises((ValueError, TypeError)):\n        f()\n",
        "def test_a():\n    with pytest.raises(ValueError):\n        f()\n",
        set(),
    ),
    (
        "raises-match-removed",
        "def test_a():\n    with pytest.raises(ValueError, match='empty input'):\n        f()\n",
        "def test_a():\n    with pytest.raises(ValueError):\n        f()\n",
        {"OG306"},
    ),
    (
        "raises-match-prefix",
        "def test_a():\n    with pytest.raises(ValueError, match='empty input'):\n        f()\n",
        "def test_a():\n    with pytest.raises(ValueError, match='empty'):\n        f()\n",
        {"OG306"},
    ),
    (
        "raises-match-dotstar",
        "def test_a():\n    with pytest.raises(ValueError, match='empty input'):\n        f()\n",
        "def test_a():\n    with pytest.raises(ValueError, match='.*'):\n        f()\n",
        {"OG306"},
    ),
    (
        "raises-match-punctuation-dropped",
        "def test_a():\n    with pytest.raises(ValueError, match='empty input.'):\n        f()\n",
        "def test_a():\n    with pytest.raises(ValueError, match='empty input'):\n        f()\n",
        set(),
    ),
    (
        "raises-match-tightened",
        "def test_a():\n    with pytest.raises(ValueError, match='empty'):\n        f()\n",
        "def test_a():\n    with pytest.raises(ValueError, match='empty input at line 1'):\n        f()\n",
        set(),
    ),
    (
        "raises-project-error-to-builtin",
        "def test_a():\n    with pytest.raises(ParseError):\n        f()\n",
        "def test_a():\n    with pytest.raises(ValueError):\n        f()\n",
        {"OG306"},
    ),
    (
        "raises-builtin-to-project-error",
        "def test_a():\n    with pytest.raises(ValueError):\n        f()\n",
        "def test_a():\n    with pytest.raises(ParseError):\n        f()\n",
        set(),
    ),
    (
        "assertraises-to-exception",
        "class T(unittest.TestCase):\n    def test_a(self):\n        with self.assertRaises(ValueError):\n            f()\n",
        "class T(unittest.TestCase):\n    def test_a(self):\n        with self.assertRaises(Exception):\n            f()\n",
        {"OG306"},
    ),
    (
        "warns-to-warning",
        "def test_a():\n    with pytest.warns(DeprecationWarning):\n        f()\n",
        "def test_a():\n    with pytest.warns(Warning):\n        f()\n",
        {"OG306"},
    ),
    (
        "raises-call-form-broadened",
        "def test_a():\n    pytest.raises(TypeError, f, 1)\n",
        "def test_a():\n    pytest.raises(BaseException, f, 1)\n",
        {"OG306"},
    ),
    # -- parametrize ---------------------------------------------------------------------
    (
        "parametrize-lost-case",
        "@pytest.mark.parametrize('a,b', [(1, 2), (2, 3), (3, 4)])\ndef test_a(a, b):\n    assert f(a) == b\n",
        "@pytest.mark.parametrize('a,b', [(1, 2), (2, 3)])\ndef test_a(a, b):\n    assert f(a) == b\n",
        {"OG307"},
    ),
    (
        "parametrize-lost-case-with-ids",
        "@pytest.mark.parametrize('a', [1, 2], ids=['one', 'two'])\ndef test_a(a):\n    assert f(a)\n",
        "@pytest.mark.parametrize('a', [1], ids=['one'])\ndef test_a(a):\n    assert f(a)\n",
        {"OG307"},
    ),
    (
        "parametrize-gained-case",
        "@pytest.mark.parametrize('a,b', [(1, 2)])\ndef test_a(a, b):\n    assert f(a) == b\n",
        "@pytest.mark.parametrize(('a', 'b'), [(1, 2), (2, 3)])\ndef test_a(a, b):\n    assert f(a) == b\n",
        set(),
    ),
    (
        "tests-merged-into-parametrize",
        "def test_one():\n    assert add(1, 2) == 3\n\ndef test_two():\n    assert add(2, 2) == 4\n",
        "@pytest.mark.parametrize('a,b,c', [(1, 2, 3), (2, 2, 4)])\ndef test_add(a, b, c):\n    assert add(a, b) == c\n",
        set(),
    ),
    (
        "tests-merged-losing-a-case",
        "def test_one():\n    assert add(1, 2) == 3\n\ndef test_two():\n    assert add(2, 2) == 4\n",
        "@pytest.mark.parametrize('a,b,c', [(1, 2, 3)])\ndef test_add(a, b, c):\n    assert add(a, b) == c\n",
        {"OG302"},
    ),
    # -- removed, renamed, split -----------------------------------------------------------------
    (
        "test-removed",
        "def test_a():\n    assert f() == 1\n\ndef test_b():\n    assert g() == 2\n",
        "def test_a():\n    assert f() == 1\n",
        {"OG302"},
    ),
    (
        "test-without-checks-removed",
        "def test_a():\n    assert f() == 1\n\ndef test_smoke():\n    g()\n",
        "def test_a():\n    assert f() == 1\n",
        {"OG302"},
    ),
    (
        "test-renamed",
        "def test_a():\n    assert f() == 1\n\ndef test_b():\n    assert g() == 2\n",
        "def test_a():\n    assert f() == 1\n\ndef test_g_is_two():\n    assert g() == 2\n",
        set(),
    ),
    (
        "test-split-in-two",
        "def test_a():\n    assert f() == 1\n    assert g() == 2\n",
        "def test_f():\n    assert f() == 1\n\ndef test_g():\n    assert g() == 2\n",
        set(),
    ),
    (
        "test-split-keeping-name",
        "def test_a():\n    assert f() == 1\n    assert g() == 2\n",
        "def test_a():\n    assert f() == 1\n\ndef test_g():\n    assert g() == 2\n",
        set(),
    ),
    (
        "test-split-losing-a-check",
        "def test_a():\n    assert f() == 1\n    assert g() == 2\n",
        "def test_f():\n    assert f() == 1\n\ndef test_g():\n    g()\n",
        {"OG302"},
    ),
    (
        "reformatted-module",
        "def test_a():\n    assert f(1, 2) == {'a': 1}\n",
        'def test_a():\n    assert f(\n        1,\n        2,\n    ) == {"a": 1}  # same\n',
        set(),
    ),
    # -- Hypothesis --------------------------------------------------------------------------
    (
        "max-examples-lowered",
        "@settings(max_examples=500)\n@given(st.integers())\ndef test_p(n):\n    assert f(n) >= 0\n",
        "@settings(max_examples=50)\n@given(st.integers())\ndef test_p(n):\n    assert f(n) >= 0\n",
        {"OG309"},
    ),
    (
        "max-examples-raised",
        "@settings(max_examples=50)\n@given(st.integers())\ndef test_p(n):\n    assert f(n) >= 0\n",
        "@settings(max_examples=500, deadline=None)\n@given(st.integers())\ndef test_p(n):\n    assert f(n) >= 0\n",
        set(),
    ),
    (
        "settings-added-below-default",
        "@given(st.integers())\ndef test_p(n):\n    assert f(n) >= 0\n",
        "@settings(max_examples=5)\n@given(st.integers())\ndef test_p(n):\n    assert f(n) >= 0\n",
        {"OG309"},
    ),
    (
        "settings-added-deadline-only",
        "@given(st.integers())\ndef test_p(n):\n    assert f(n) >= 0\n",
        "@settings(deadline=None)\n@given(st.integers())\ndef test_p(n):\n    assert f(n) >= 0\n",
        set(),
    ),
    (
        "settings-parent-lowered",
        "BASE = settings(max_examples=300)\n@settings(BASE)\n@given(st.integers())\ndef test_p(n):\n    assert f(n) >= 0\n",
        "BASE = settings(max_examples=30)\n@settings(BASE)\n@given(st.integers())\ndef test_p(n):\n    assert f(n) >= 0\n",
        {"OG309"},
    ),
    (
        "phases-without-generate",
        "@given(st.integers())\ndef test_p(n):\n    assert f(n) >= 0\n",
        "from hypothesis import Phase\n@settings(phases=[Phase.explicit])\n@given(st.integers())\ndef test_p(n):\n    assert f(n) >= 0\n",
        {"OG309"},
    ),
    (
        "given-removed",
        "@given(st.integers())\ndef test_p(n):\n    assert f(n) >= 0\n",
        "def test_p():\n    n = 3\n    assert f(n) >= 0\n",
        {"OG310"},
    ),
    (
        "example-removed",
        "@given(st.integers())\n@example(0)\n@example(-1)\ndef test_p(n):\n    assert f(n) >= 0\n",
        "@given(st.integers())\n@example(0)\ndef test_p(n):\n    assert f(n) >= 0\n",
        {"OG311"},
    ),
    (
        "example-added",
        "@given(st.integers())\ndef test_p(n):\n    assert f(n) >= 0\n",
        "@given(st.integers())\n@example(-1)\ndef test_p(n):\n    assert f(n) >= 0\n",
        set(),
    ),
    (
        "strategy-bounds-added",
        "@given(st.integers())\ndef test_p(n):\n    assert f(n) >= 0\n",
        "@given(st.integers(min_value=0))\ndef test_p(n):\n    assert f(n) >= 0\n",
        {"OG312"},
    ),
    (
        "strategy-bounds-removed",
        "@given(st.integers(0, 10))\ndef test_p(n):\n    assert f(n) >= 0\n",
        "@given(st.integers())\ndef test_p(n):\n    assert f(n) >= 0\n",
        set(),
    ),
    (
        "strategy-positional-bound-tightened",
        "@given(x=st.lists(st.integers(), max_size=50))\ndef test_p(x):\n    assert f(x) >= 0\n",
        "@given(x=st.lists(st.integers(), max_size=2))\ndef test_p(x):\n    assert f(x) >= 0\n",
        {"OG312"},
    ),
    (
        "strategy-just",
        "@given(st.text())\ndef test_p(s):\n    assert f(s) >= 0\n",
        "@given(st.just(''))\ndef test_p(s):\n    assert f(s) >= 0\n",
        {"OG312"},
    ),
    (
        "strategy-sampled-from-lost",
        "@given(st.sampled_from(['a', 'b', 'c']))\ndef test_p(s):\n    assert f(s)\n",
        "@given(st.sampled_from(['a', 'b']))\ndef test_p(s):\n    assert f(s)\n",
        {"OG312"},
    ),
    (
        "strategy-sampled-from-gained",
        "@given(st.sampled_from(['a', 'b']))\ndef test_p(s):\n    assert f(s)\n",
        "@given(st.sampled_from(['a', 'b', 'c']))\ndef test_p(s):\n    assert f(s)\n",
        set(),
    ),
    (
        "strategy-one-of-lost",
        "@given(st.integers() | st.none())\ndef test_p(s):\n    assert f(s)\n",
        "@given(st.integers())\ndef test_p(s):\n    assert f(s)\n",
        {"OG312"},
    ),
    (
        "strategy-alphabet",
        "@given(st.text())\ndef test_p(s):\n    assert f(s)\n",
        "@given(st.text(alphabet='abc'))\ndef test_p(s):\n    assert f(s)\n",
        {"OG312"},
    ),
    (
        "strategy-filter",
        "@given(st.integers())\ndef test_p(s):\n    assert f(s)\n",
        "@given(st.integers().filter(lambda n: n != 0))\ndef test_p(s):\n    assert f(s)\n",
        {"OG312"},
    ),
    (
        "strategy-other-aliases",
        "@given(st.integers())\ndef test_p(s):\n    assert f(s)\n",
        "import hypothesis.strategies as hs\nfrom hypothesis.strategies import integers\nSMALL = integers(0, 3)\n@given(SMALL)\ndef test_p(s):\n    assert f(s)\n",
        {"OG312"},
    ),
    (
        "strategy-same-through-other-alias",
        "@given(st.integers(0, 3))\ndef test_p(s):\n    assert f(s)\n",
        "from hypothesis.strategies import integers\n@given(integers(min_value=0, max_value=3))\ndef test_p(s):\n    assert f(s)\n",
        set(),
    ),
    (
        "drawn-strategy-narrowed",
        "@given(st.data())\ndef test_p(data):\n    n = data.draw(st.integers())\n    k = data.draw(st.text())\n    assert f(n, k)\n",
        "@given(st.data())\ndef test_p(data):\n    n = data.draw(st.integers())\n    k = data.draw(st.just('a'))\n    assert f(n, k)\n",
        {"OG312"},
    ),
    (
        "drawn-strategy-widened",
        "@given(st.data())\ndef test_p(data):\n    n = data.draw(st.integers(0, 9))\n    assert f(n)\n",
        "@given(st.data())\ndef test_p(data):\n    n = data.draw(st.integers(), label='n')\n    assert f(n)\n",
        set(),
    ),
    (
        "assume-added",
        "@given(st.integers())\ndef test_p(n):\n    assert f(n) >= 0\n",
        "@given(st.integers())\ndef test_p(n):\n    assume(n > 100)\n    assert f(n) >= 0\n",
        {"OG313"},
    ),
    # -- files ----------------------------------------------------------------------------------
    (
        "assert-deleted-while-test-added-elsewhere",
        {
            T: "def test_a():\n    assert f(1) == 2\n    assert f(2) == 3\n",
            "tests/test_y.py": "def test_b():\n    assert g() == 1\n",
        },
        {
            T: "def test_a():\n    assert f(1) == 2\n",
            "tests/test_y.py": "def test_b():\n    assert g() == 1\n\ndef test_c():\n    assert f(3) == 4\n    assert f(4) == 5\n",
        },
        {"OG301"},
    ),
    (
        "assert-moved-to-test-in-other-file",
        {
            T: "def test_a():\n    assert f(1) == 2\n    assert f(2) == 3\n",
            "tests/test_y.py": "def test_b():\n    assert g() == 1\n",
        },
        {
            T: "def test_a():\n    assert f(1) == 2\n",
            "tests/test_y.py": "def test_b():\n    assert g() == 1\n\ndef test_f2():\n    assert f(2) == 3\n",
        },
        set(),
    ),
    (
        "test-moved-to-other-file",
        {T: "def test_a():\n    assert f() == 1\n\ndef test_b():\n    assert g() == 2\n"},
        {T: "def test_a():\n    assert f() == 1\n", "tests/test_y.py": "def test_b():\n    assert g() == 2\n"},
        set(),
    ),
    (
        "test-file-deleted",
        {T: "def test_a():\n    assert f() == 1\n", "tests/test_y.py": "def test_b():\n    assert g() == 2\n"},
        {T: "def test_a():\n    assert f() == 1\n", "tests/test_y.py": None},
        {"OG302"},
    ),
    (
        "file-replaced-by-rewritten-file",
        {
            T: "def test_a():\n    assert f() == 1\n",
            "tests/test_y.py": "def test_b():\n    r = run(g)\n    assert r.code == 0\n    assert r.out == 'x'\n",
        },
        {
            T: "def test_a():\n    assert f() == 1\n",
            "tests/test_y.py": None,
            "tests/test_z.py": "@pytest.mark.parametrize('arg', ['x', 'y'])\ndef test_run(arg):\n    r = run(g, arg)\n    assert r.code == 0\n    assert r.out == arg\n",
        },
        set(),
    ),
    (
        "file-deleted-new-file-unrelated",
        {
            T: "def test_a():\n    assert f() == 1\n",
            "tests/test_y.py": "def test_b():\n    r = run(g)\n    assert r.code == 0\n    assert r.out == 'x'\n",
        },
        {
            T: "def test_a():\n    assert f() == 1\n",
            "tests/test_y.py": None,
            "tests/test_z.py": "def test_other():\n    assert h() == 1\n    assert k() == 2\n",
        },
        {"OG302"},
    ),
    (
        "asserts-moved-into-imported-helper",
        {T: "def test_a():\n    r = f()\n    assert r.x == 1\n    assert r.y == 2\n", "tests/helpers.py": "X = 1\n"},
        {
            T: "from .helpers import same_point\ndef test_a():\n    same_point(f())\n",
            "tests/helpers.py": "X = 1\n\ndef same_point(r):\n    assert r.x == 1\n    assert r.y == 2\n",
        },
        set(),
    ),
    (
        "imported-helper-without-checks",
        {T: "def test_a():\n    r = f()\n    assert r.x == 1\n    assert r.y == 2\n", "tests/helpers.py": "X = 1\n"},
        {
            T: "from tests.helpers import same_point\ndef test_a():\n    same_point(f())\n",
            "tests/helpers.py": "X = 1\n\ndef same_point(r):\n    return r\n",
        },
        {"OG301"},
    ),
    (
        "asserts-moved-into-conftest-fixture",
        {
            T: "def test_a():\n    r = f()\n    assert r.x == 1\n    assert r.y == 2\n",
            "tests/conftest.py": "import pytest\n",
        },
        {
            T: "def test_a(same_point):\n    same_point(f())\n",
            "tests/conftest.py": "import pytest\n\n@pytest.fixture\ndef same_point():\n    def check(r):\n        assert r.x == 1\n        assert r.y == 2\n    return check\n",
        },
        set(),
    ),
    (
        "conftest-fixture-without-checks",
        {
            T: "def test_a():\n    r = f()\n    assert r.x == 1\n    assert r.y == 2\n",
            "tests/conftest.py": "import pytest\n",
        },
        {
            T: "def test_a(same_point):\n    same_point(f())\n",
            "tests/conftest.py": "import pytest\n\n@pytest.fixture\ndef same_point():\n    return print\n",
        },
        {"OG301"},
    ),
    (
        "profile-lowered",
        {"tests/conftest.py": "from hypothesis import settings\nsettings.register_profile('ci', max_examples=1000)\n"},
        {"tests/conftest.py": "from hypothesis import settings\nsettings.register_profile('ci', max_examples=10)\n"},
        {"OG309"},
    ),
    (
        "profile-raised",
        {"tests/conftest.py": "from hypothesis import settings\nsettings.register_profile('ci', max_examples=100)\n"},
        {
            "tests/conftest.py": "from hypothesis import settings\nsettings.register_profile('ci', max_examples=1000, deadline=None)\n"
        },
        set(),
    ),
    # found on attrs (redteam): a conftest profile that only replays explicit examples
    (
        "profile-phases-explicit-only",
        {"tests/conftest.py": "from hypothesis import settings\nsettings.register_profile('ci', deadline=None)\n"},
        {
            "tests/conftest.py": "from hypothesis import Phase, settings\nsettings.register_profile('ci', deadline=None, phases=[Phase.explicit])\n"
        },
        {"OG309"},
    ),
    (
        "profile-phases-reordered",
        {
            "tests/conftest.py": "from hypothesis import Phase, settings\nsettings.register_profile('ci', phases=[Phase.explicit, Phase.generate])\n"
        },
        {
            "tests/conftest.py": "from hypothesis import Phase, settings\nsettings.register_profile('ci', phases=(Phase.generate, Phase.explicit, Phase.shrink))\n"
        },
        set(),
    ),
    # found on attrs (redteam): strategies narrowed where a module defines them, not in @given
    (
        "shared-strategy-bounded",
        {"tests/strategies.py": "from hypothesis import strategies as st\nints = st.integers().map(str)\n"},
        {
            "tests/strategies.py": "from hypothesis import strategies as st\nints = st.integers(min_value=0, max_value=0).map(str)\n"
        },
        {"OG312"},
    ),
    (
        "shared-strategy-widened",
        {"tests/strategies.py": "from hypothesis import strategies as st\nints = st.integers(min_value=0).map(str)\n"},
        {
            "tests/strategies.py": "from hypothesis import strategies as st\nints = st.integers().map(str)\nnames = st.text()\n"
        },
        set(),
    ),
    (
        "sampled-constant-shrunk",
        "TYPES = (dict, list)\n@given(st.sampled_from(TYPES))\ndef test_a(t):\n    assert f(t)\n",
        "TYPES = (dict,)\n@given(st.sampled_from(TYPES))\ndef test_a(t):\n    assert f(t)\n",
        {"OG312"},
    ),
    (
        "sampled-constant-grown",
        "TYPES = (dict, list)\n@given(st.sampled_from(TYPES))\ndef test_a(t):\n    assert f(t)\n",
        "TYPES = (dict, list, tuple)\n@given(st.sampled_from(TYPES))\ndef test_a(t):\n    assert f(t)\n",
        set(),
    ),
    (
        "constant-tuple-shrunk-not-sampled",
        "TYPES = (dict, list)\ndef test_a():\n    assert f(TYPES)\n",
        "TYPES = (dict,)\ndef test_a():\n    assert f(TYPES)\n",
        set(),
    ),
    (
        "profile-load-switched-lower",
        {
            "tests/conftest.py": "from hypothesis import settings\nsettings.register_profile('ci', max_examples=1000)\nsettings.register_profile('dev', max_examples=10)\nsettings.load_profile('ci')\n"
        },
        {
            "tests/conftest.py": "from hypothesis import settings\nsettings.register_profile('ci', max_examples=1000)\nsettings.register_profile('dev', max_examples=10)\nsettings.load_profile('dev')\n"
        },
        {"OG309"},
    ),
]


@pytest.mark.parametrize("base,new,expected", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_rows(repo: Repo, capsys: pytest.CaptureFixture[str], base: object, new: object, expected: set[str]) -> None:
    codes, out = run_shrink(repo, base, new, capsys)
    assert codes == expected, out


def test_rows_cover_both_directions() -> None:
    weakenings = [r for r in ROWS if r[3]]
    honest = [r for r in ROWS if not r[3]]
    assert len(ROWS) >= 60 and len(honest) >= 25 and len(weakenings) >= 35


def test_finding_names_the_test_and_points_at_it(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    base = "class TestParse:\n    def test_parse(self):\n        assert f(1) == 1\n        assert f(2) == 2\n        assert f(3) == 3\n"
    new = "class TestParse:\n    def test_parse(self):\n        assert f(1) == 1\n        assert f(2) == 2\n"
    _, out = run_shrink(repo, base, new, capsys)
    assert out.splitlines() == [
        "tests/test_x.py:7:9: OG301 TestParse.test_parse has 2 checks, base had 3; lost `assert f(3) == 3`"
    ]


def test_lost_check_is_reported_where_it_stood(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    base = "def test_parse():\n    r = f()\n    assert r.a == 1\n    assert r.b == 2\n    g(r)\n    assert r.c == 3\n"
    new = "def test_parse():\n    r = f()\n    assert r.a == 1\n    g(r)\n    assert r.c == 3\n"
    _, out = run_shrink(repo, base, new, capsys)
    assert out.startswith("tests/test_x.py:7:5: OG301 test_parse has 2 checks, base had 3; lost `assert r.b == 2`")


def test_unparsable_new_file_is_og001(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    codes, out = run_shrink(repo, "def test_a():\n    assert f()\n", "def test_a(:\n", capsys)
    assert codes == {"OG001"}


def test_all_mode_reports_tautologies_without_a_base(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write(T, "def test_a():\n    assert True\n\ndef test_b():\n    assert f() == 1\n")
    assert repo.run(shrink_main, "--all", T) == 1
    assert (
        capsys.readouterr().out
        == "tests/test_x.py:2:5: OG308 test_a: `assert True` can never fail; check a result of the code under test instead\n"
    )


def test_unchanged_and_non_python_files_are_not_parsed(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write(T, "def test_a():\n    assert f() == 1\n")
    repo.write("tests/data.txt", "def test(:\n")
    repo.commit()
    repo.write("tests/data.txt", "assert True\n")
    repo.stage()
    assert repo.run(shrink_main, T, "tests/data.txt") == 0, capsys.readouterr().out


MODULE = """\
import pytest
from hypothesis import given, settings, strategies as st


@settings(max_examples=200)
@given(st.integers(0, 10), st.text(alphabet="ab"))
def test_p(n, s):
    assert len(s * n) == n * len(s)


class TestA:
    @pytest.mark.parametrize("a", [1, 2, 3])
    def test_a(self, a):
        with pytest.raises(ValueError, match="bad"):
            f(a)
        assert f(a) == pytest.approx(1.0, rel=1e-6)
        try:
            cleanup()
        except Exception:
            pass
"""


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["unparse", "strip-blank-lines", "comments"]))
def test_reformatting_never_yields_a_finding(repo: Repo, capsys: pytest.CaptureFixture[str], how: str) -> None:
    """An ast round trip (or blank lines and comments) changes no check."""
    if how == "unparse":
        new = ast.unparse(ast.parse(MODULE)) + "\n"
    elif how == "strip-blank-lines":
        new = "\n".join(line for line in MODULE.splitlines() if line.strip()) + "\n"
    else:
        new = (
            "\n".join(
                line + "  # note" if line.strip() and not line.rstrip().endswith(":") else line
                for line in MODULE.splitlines()
            )
            + "\n"
        )
    sub = repo.path / f"r{abs(hash((how, id(capsys)))) % 10**8}"
    sub.mkdir()
    r = Repo(sub)
    r.git("init", "-q", "-b", "main")
    r.git("config", "commit.gpgsign", "false")
    codes, out = run_shrink(r, {T: MODULE}, {T: new}, capsys)
    assert codes == set(), out


def test_deleted_test_file_is_seen_without_filenames(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    """pre-commit passes no deleted paths (always_run makes it call the hook anyway)."""
    repo.write("tests/test_y.py", "def test_b():\n    assert g() == 2\n")
    repo.write("src/app.py", "X = 1\n")
    repo.commit()
    repo.remove("tests/test_y.py")
    repo.stage()
    assert repo.run(shrink_main) == 1
    assert (
        capsys.readouterr().out
        == "tests/test_y.py:1:1: OG302 test test_b was removed with its file (1 checks at line 1)\n"
    )
    repo.git("reset", "-q", "--hard")
    repo.write("src/app.py", "X = 2\n")
    repo.stage()
    assert repo.run(shrink_main) == 0
