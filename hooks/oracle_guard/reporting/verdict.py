"""One run's verdict, printed once in its format: every finding of every layer, each with its next step, all counted.

`check` (its hooks, the replay and the mutation differential), the one-process hook and `oracle-guard
replay` print through here, so the text's count line, the JSON summary, the SARIF results and the agent's
list always hold the same findings.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any

from oracle_guard.reporting import report
from oracle_guard.reporting.findings import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, Finding

GROUP_AT = 6  # this many findings with one code in one file are shown as a group
GROUP_SHOWN = 3


def emit(
    fmt: str,
    results: Sequence[tuple[str, Finding]],
    errors: Sequence[str] = (),
    steps: dict[Finding, str] | None = None,
    written: Sequence[str] = (),
    extra: dict[str, Any] | None = None,
    tail: str = "",
) -> int:
    """Print RESULTS (hook id, finding) in FMT; the exit code (1 for any finding or rewritten file, else 2 for any error).

    EXTRA: more keys of the JSON document. TAIL: what the run also found out (a red base's fate), said after
    the count in text and github (the success line says it on a clean run).
    """
    steps = steps or {}
    for error in errors:
        print(f"oracle-guard: error: {error}", file=sys.stderr)
    # A finding (or a rewritten file) is 1 even beside a part that could not run: its error is printed all the same.
    code = EXIT_FINDINGS if results or written else EXIT_USAGE if errors else EXIT_CLEAN
    if fmt in report.DOCUMENT_FORMATS:
        from oracle_guard.reporting import output

        output.print_document(fmt, results, errors, report.taken_notices(), steps, code, extra)
    elif fmt == "agent":
        from oracle_guard.reporting import output

        output.print_agent(results, errors, steps, written)
        if tail:
            print(f"oracle-guard: {tail}")
    elif fmt == "github":
        for _, finding in results:
            step = steps.get(finding)
            print(finding._replace(message=f"{finding.message} (next: {step})").github() if step else finding.github())
        print_count(results, tail)
    else:
        print_text(results, steps, tail)
    return code


def print_text(results: Sequence[tuple[str, Finding]], steps: dict[Finding, str] | None = None, tail: str = "") -> None:
    """Each finding and its next step, many alike in one file as a group, then a count per code."""
    groups = Counter((f.path, f.code) for _, f in results)
    # Tests that vanish or skip together usually share a configuration change (OG85x) found in the same run.
    causes = [f for _, f in results if f.code.startswith("OG85")]
    shown: Counter[tuple[str, str]] = Counter()
    for _, finding in results:
        key = (finding.path, finding.code)
        shown[key] += 1
        if groups[key] < GROUP_AT or shown[key] <= GROUP_SHOWN:
            print(finding.text())
            if steps and finding in steps:
                print(f"    next: {steps[finding]}")
        elif shown[key] == GROUP_SHOWN + 1:
            cause = (
                f"likely one cause, {causes[0].code} at {causes[0].path}:{causes[0].line}"
                if causes and finding.code in ("OG801", "OG802")
                else "likely one cause"
            )
            # Worded so that no line but a finding's reads `path:...: OGnnn` (tools count those).
            print(
                f"{finding.path}: and {groups[key] - GROUP_SHOWN} more {finding.code} like these ({cause}; --format json lists each)"
            )
    print_count(results, tail)


def print_count(results: Sequence[tuple[str, Finding]], tail: str = "") -> None:
    """The one count line of a run with findings: every finding, whichever layer found it."""
    if results:
        counts = Counter(f.code for _, f in results)
        print(
            f"oracle-guard: {len(results)} finding{'s' if len(results) != 1 else ''} ("
            + ", ".join(f"{code} x{n}" for code, n in sorted(counts.items()))
            + ")"
            + (f"; {tail}" if tail else "")
        )
