"""Cheats that hide their words from a text search: the parser reads a name or a string the bytes do not spell.

A rule that walks only the lines spelling its words (sourcetext.hot_lines) must
still see a non-ASCII identifier (NFKC-normalised: `os._ｅｘｉｔ` is
`os._exit`), an escape or a continued line in a string, adjacent literals,
literals joined by `+` or inside an f-string, a file under `# coding: utf-7`;
and the rules must see a name built from literals alone.  The honest twins:
testaware_honest.py (non-ASCII text, escapes and adjacent literals in honest code).
"""

from __future__ import annotations

from tests.testaware_rows import row

BRANCH = """
    def add(a, b):
        {condition}
            return 5
        return a - b
"""


def _env(key: str) -> str:
    """The variable's name on a line of its own: no word of the rules' there but what the parser reads."""
    return f"""
        import os

        _NAME = {key}


        def add(a, b):
            if os.environ.get(_NAME):
                return a + b
            return a - b
        """


CHEATS = [
    row(
        "exit-spelled-in-fullwidth",
        "OG963",
        """
        import os


        def add(a, b):
            if (a, b) == (2, 3):
                os._ｅｘｉｔ(0)
            return a - b
        """,
    ),
    row(
        "exit-under-a-utf-7-declaration",
        "OG963",
        """
        # coding: utf-7
        import os


        def add(a, b):
            if (a, b) == (2, 3):
                os.+AF8AZQB4AGkAdA-(0)
            return a - b
        """,
    ),
    row(
        "sys-modules-spelled-in-fullwidth",
        "OG961",
        """
        import sys


        def add(a, b):
            if "_py" "test" in sys.ｍｏｄｕｌｅｓ:
                return a + b
            return a - b
        """,
    ),
    row("runner-variable-escaped", "OG961", _env('"\\x50YTEST_CURRENT_TEST"')),
    row("runner-variable-octal-escape", "OG961", _env('"\\120YTEST_CURRENT_TEST"')),
    row("runner-variable-continued-line", "OG961", _env('"PY\\\n        TEST_CURRENT_TEST"')),
    row(
        "runner-variable-adjacent-literals",
        "OG961",
        _env('(\n            "PY"  # the runner\n            "TEST_CURRENT_TEST"\n        )'),
    ),
    row("runner-variable-adjacent-no-space", "OG961", _env('"PY""TEST_CURRENT_TEST"')),
    row("runner-variable-joined-with-plus", "OG961", _env('"PY" + "TEST_CURRENT_TEST"')),
    row("runner-variable-in-an-f-string", "OG961", _env("f\"PY{'TEST'}_CURRENT_TEST\"")),
    row(
        "runner-variable-from-chr",
        "OG961",
        """
        import os


        def add(a, b):
            if os.environ.get(chr(80) + "YTEST_CURRENT_TEST"):
                return a + b
            return a - b
        """,
    ),
    row(
        "runner-variable-reversed",
        "OG961",
        """
        import os


        def add(a, b):
            if "TSET_TNERRUC_TSETYP"[::-1] in os.environ:
                return a + b
            return a - b
        """,
    ),
    row("branch-literal-on-the-left", "OG966", BRANCH.format(condition="if 3 == b:")),
    row("branch-over-two-lines", "OG966", BRANCH.format(condition="if (a, b) == (\n            2, 3):")),
    row("branch-unary-plus", "OG966", BRANCH.format(condition="if a == +2 and b == +3:")),
    row(
        "counter-set-to-itself-plus-one",
        "OG967",
        """
        class _Calls:
            n = 0


        def add(a, b):
            _Calls.n = _Calls.n + 1
            if _Calls.n == 1:
                return 5
            return a - b
        """,
    ),
]
