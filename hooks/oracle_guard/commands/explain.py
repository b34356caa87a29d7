"""`oracle-guard explain CODE`: one finding code's page; `--format json` lists every code.

A page is the code's title and next step (reporting/hints.py) with what it catches, why it matters,
a weakening it refuses and the nearest honest change that passes (commands/explain_examples*.py), each
example shown as a diff of its files.  tests/test_explain.py runs every example through the hooks.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

from oracle_guard import __version__
from oracle_guard.commands import (
    explain_examples,
    explain_examples_ground,
    explain_examples_pytest,
    explain_examples_testaware,
)
from oracle_guard.commands.explain_examples import Example, Files
from oracle_guard.reporting import hints
from oracle_guard.reporting.report import EXIT_USAGE, guarded

EXAMPLES: dict[str, Example] = {
    **explain_examples.EXAMPLES,
    **explain_examples_pytest.EXAMPLES,
    **explain_examples_testaware.EXAMPLES,
}
WITHOUT_EXAMPLE: dict[str, str] = {
    **explain_examples.WITHOUT_EXAMPLE,
    **explain_examples_pytest.WITHOUT_EXAMPLE,
    **explain_examples_ground.WITHOUT_EXAMPLE,
}


APPROVALS = textwrap.fill(
    "A signed approval (`oracle-guard approve STATEMENT`, run as the finding prints it) counts only when it verifies "
    "against the allowed-signers file as it stands at the base revision, so a patch cannot approve itself. "
    + hints.create_signers(None)[0].upper()
    + hints.create_signers(None)[1:]
    + ". Then the approval can be committed in the same pull request as the change it approves. "
    "More: docs/approvals.md.",
    width=96,
)


def diff(base: Files, change: Files) -> str:
    """CHANGE against BASE as a unified diff, one file after another."""
    out: list[str] = []
    for path, new in change.items():
        old = base.get(path)
        out.extend(
            difflib.unified_diff(
                (old or "").splitlines(keepends=True),
                (new or "").splitlines(keepends=True),
                "/dev/null" if old is None else f"a/{path}",
                "/dev/null" if new is None else f"b/{path}",
                n=2,
            )
        )
    return "".join(line if line.endswith("\n") else line + "\n" for line in out)


def page(code: str) -> dict[str, Any]:
    """Everything one code's page says, as data (the JSON entry; the text page prints it)."""
    entry: dict[str, Any] = {
        "code": code,
        "title": hints.title(code),
        "page": f"docs/{hints.page(code)}",
        "help_uri": hints.help_uri(code),
        "next_step": hints.next_step(code),
    }
    if hints.needs_approval(hints.next_step(code)):  # where a finding's short "no signers at the base yet" leads
        entry["approvals"] = APPROVALS
    ex = EXAMPLES.get(code)
    if ex is None:
        entry.update(what=hints.title(code), why="", weakening=None, honest=None, needs="")
        entry["no_example"] = WITHOUT_EXAMPLE.get(code, "no example yet")
        return entry
    entry.update(
        what=ex.what,
        why=ex.why,
        needs=ex.needs,
        base=dict(ex.base),
        weakening={"change": dict(ex.weakening), "diff": diff(ex.base, ex.weakening)},
        honest={"change": dict(ex.honest), "diff": diff(ex.base, ex.honest)},
    )
    return entry


def indent(text: str) -> str:
    return "".join(line if line == "\n" else f"    {line}" for line in text.splitlines(keepends=True))


def text_page(code: str) -> str:
    p = page(code)
    lines = [f"{code} {p['title']}", f"more: {p['help_uri']}", ""]
    lines += ["What it catches", indent(p["what"]), ""]
    if p["why"]:
        lines += ["Why it matters", indent(p["why"]), ""]
    if p.get("no_example"):
        lines += ["Example", indent(f"none here: {p['no_example']}"), ""]
    else:
        how = {"collection": " (a pytest run)", "replay": " (`oracle-guard check --replay`)"}.get(p["needs"], "")
        lines += [f"A weakening it refuses{how}", indent(p["weakening"]["diff"]).rstrip("\n"), ""]
        lines += ["The nearest honest change, which passes", indent(p["honest"]["diff"]).rstrip("\n"), ""]
    lines += ["Next step", indent(p["next_step"])]
    if p.get("approvals"):
        lines += ["", "Approvals", indent(p["approvals"])]
    return "\n".join(lines) + "\n"


def parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="oracle-guard explain", description="Print a finding code's page: what, why, two examples, the next step."
    )
    parser.add_argument("code", nargs="?", help="a finding code, e.g. OG101 (with --format json: all codes if omitted)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--version", action="version", version=f"%(prog)s (oracle-guard) {__version__}")
    return parser.parse_args(argv)


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    code = (args.code or "").upper()
    if code and code not in hints.CODES:
        print(
            f"oracle-guard explain: error: unknown code '{args.code}' (`oracle-guard explain --format json` lists them)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.format == "json":
        codes = [code] if code else sorted(hints.CODES)
        doc = {"schema": "oracle-guard/codes", "version": 1, "codes": [page(c) for c in codes]}
        print(json.dumps(doc, indent=2))
        return 0
    if not code:
        print("oracle-guard explain: error: a code is required, e.g. `oracle-guard explain OG101`", file=sys.stderr)
        return EXIT_USAGE
    print(text_page(code), end="")
    return 0
