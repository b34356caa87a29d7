"""Documents for machines: `--format json` (schema version 1) and `--format sarif` (2.1.0).

JSON, version 1 (docs/output.md, "Machine-readable output")::

    {"schema": "oracle-guard/findings", "version": 1, "tool": {"name", "version"},
     "findings": [{"path", "line", "col", "end_line", "end_col", "code", "hook",
                   "message", "fix", "help_uri"}],
     "errors": ["one line per usage/configuration error"], "notices": [...],
     "summary": {"findings": N, "errors": N, "by_code": {"OG101": N}, "exit_code": 0|1|2}}

Fields are only ever added within a version.  Positions are 1-based; the
hooks know where a finding starts, so end_line is the line and end_col null.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any

from oracle_guard import __version__
from oracle_guard.reporting import hints
from oracle_guard.reporting.findings import Finding

SCHEMA_VERSION = 1
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


def exit_code(findings: Sequence[object], errors: Sequence[str]) -> int:
    return 2 if errors else (1 if findings else 0)


def json_document(
    results: Sequence[tuple[str, Finding]],
    errors: Sequence[str],
    notices: Sequence[str],
    steps: dict[Finding, str] | None = None,
    status: int | None = None,
) -> dict[str, Any]:
    """STATUS: the process's exit status, when more than findings and errors decide it (a rewritten file)."""
    steps = steps or {}
    return {
        "schema": "oracle-guard/findings",
        "version": SCHEMA_VERSION,
        "tool": {"name": "oracle-guard", "version": __version__},
        "findings": [
            {
                "path": f.path,
                "line": f.line,
                "col": f.col,
                "end_line": f.line,
                "end_col": None,
                "code": f.code,
                "hook": hook,
                "message": f.message,
                "fix": steps.get(f) or hints.next_step(f.code),
                "help_uri": hints.help_uri(f.code),
            }
            for hook, f in results
        ],
        "errors": list(errors),
        "notices": list(notices),
        "summary": {
            "findings": len(results),
            "errors": len(errors),
            "by_code": dict(sorted(Counter(f.code for _, f in results).items())),
            "exit_code": exit_code(results, errors) if status is None else status,
        },
    }


def sarif_document(
    results: Sequence[tuple[str, Finding]],
    errors: Sequence[str],
    notices: Sequence[str],
    steps: dict[Finding, str] | None = None,
    status: int | None = None,
) -> dict[str, Any]:
    steps = steps or {}
    codes = sorted(set(hints.CODES) | {f.code for _, f in results})  # every rule, so code scanning knows them all
    index = {code: i for i, code in enumerate(codes)}
    rules = [
        {
            "id": code,
            "name": code,
            "shortDescription": {"text": hints.title(code)},
            "help": {"text": f"Next step: {hints.next_step(code)}. See {hints.help_uri(code)}"},
            "helpUri": hints.help_uri(code),
            "defaultConfiguration": {"level": "error"},
        }
        for code in codes
    ]
    notifications = [{"level": "error", "message": {"text": e}} for e in errors]
    notifications += [{"level": "note", "message": {"text": n}} for n in notices]
    run: dict[str, Any] = {
        "tool": {
            "driver": {"name": "oracle-guard", "version": __version__, "informationUri": hints.README, "rules": rules}
        },
        "results": [
            {
                "ruleId": f.code,
                "ruleIndex": index[f.code],
                "level": "error",
                "message": {"text": f"{f.message} (next step: {steps.get(f) or hints.next_step(f.code)})"},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": _uri(f.path), "uriBaseId": "%SRCROOT%"},
                            "region": {"startLine": max(f.line, 1), "startColumn": max(f.col, 1)},
                        }
                    }
                ],
                "properties": {"hook": hook},
            }
            for hook, f in results
        ],
        "invocations": [
            {
                "executionSuccessful": not errors,
                "exitCode": exit_code(results, errors) if status is None else status,
                "toolExecutionNotifications": notifications,
            }
        ],
        "columnKind": "unicodeCodePoints",
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def _uri(path: str) -> str:
    from urllib.parse import quote

    return quote(path.replace("\\", "/"), safe="/")


def print_document(
    fmt: str,
    results: Sequence[tuple[str, Finding]],
    errors: Sequence[str],
    notices: Sequence[str],
    steps: dict[Finding, str] | None = None,
    status: int | None = None,
    extra: dict[str, Any] | None = None,
) -> None:
    """EXTRA: keys added to the JSON document (a shard's ``shard`` object, docs/output.md)."""
    build = sarif_document if fmt == "sarif" else json_document
    document = build(results, errors, notices, steps, status)
    if extra and fmt == "json":
        document.update(extra)
    json.dump(document, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def print_agent(
    results: Sequence[tuple[str, Finding]],
    errors: Sequence[str],
    steps: dict[Finding, str],
    written: Sequence[str] = (),
) -> None:
    """For a coding agent's commit or stop hook: each finding, why it blocks, and what to do, in plain words."""
    for error in errors:
        print(f"oracle-guard: cannot check this change, so it is refused: {error}")
    if not results:
        if written and not errors:  # exit 1 without a weakening: say what to do, never "no weakening"
            print(
                f"oracle-guard: no weakening found, but it updated {', '.join(written)}: review it and stage it, then commit again"
            )
        elif not errors:
            print("oracle-guard: no weakening found")
        return
    print(
        f"oracle-guard: this change weakens the tests ({len(results)} finding{'s' if len(results) != 1 else ''}); it is refused."
    )
    for n, (hook, f) in enumerate(results, 1):
        print(f"{n}. {f.path}:{f.line}:{f.col} {f.code} {f.message}")
        print(f"   why: {hints.title(f.code)} ({hook or 'oracle-guard'})")
        print(f"   do: {steps.get(f) or hints.next_step(f.code)}")
    print(
        "oracle-guard: restore what the change removed or weakened. A deliberate change needs a human's signed "
        "approval (`oracle-guard approve ...`); do not edit the contract, the snapshot or the signers file to pass."
    )
