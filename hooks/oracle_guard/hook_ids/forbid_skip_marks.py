"""forbid-skip-marks: reject skip, skipif and xfail marks that are new since the base.

Every spelling counts, wherever the mark expression stands: decorators on
functions, methods and classes, ``pytestmark`` (module or class, single,
list, tuple, ``+=``), ``pytest.param(..., marks=...)``, marks added at run
time (``item.add_marker(...)``), unittest's ``skip``/``skipIf``/
``skipUnless``/``expectedFailure``, ``__unittest_skip__ = True``,
``__test__ = False``, through any import alias or a name bound to a mark.
Dynamic access that cannot be resolved (``getattr(pytest.mark, name)``) is
reported as an unverifiable mark.
"""

from __future__ import annotations

from collections.abc import Sequence

from oracle_guard.repo.context import HookContext
from oracle_guard.reporting.report import Finding, guarded
from oracle_guard.rules.pydiff import check_context, run
from oracle_guard.rules.skipmarks import RULE


def check(ctx: HookContext) -> list[Finding]:
    return check_context(RULE, ctx)


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    return run(argv, "forbid-skip-marks", __doc__, RULE)


if __name__ == "__main__":
    raise SystemExit(main())
