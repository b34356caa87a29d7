"""The markdown report of bench/realfix.py: per project and overall, honest accepted and cheats refused per mode."""

from __future__ import annotations

from typing import Any

import realfix_cheats
import realfix_imported
from realfix_cheats import CLASSES

MODES = ("static", "replay", "mutate")


def present(results: list[dict[str, Any]]) -> list[str]:
    """The cheat classes RESULTS ran: the five first, then any other (--classes); the five when none ran."""
    seen = {name for r in results for name in r["cheats"]}
    return [c for c in CLASSES if c in seen or not seen] + sorted(seen - set(CLASSES))


def refused(verdict: dict[str, Any]) -> bool:
    return bool(verdict["exit"] != 0)


def own(cheat: dict[str, Any], honest: dict[str, Any]) -> bool:
    """Refused for a reason of its own: a code the honest fix's run in that mode lacks, or the honest passed."""
    if not refused(cheat):
        return False
    return not refused(honest) or bool(set(cheat["codes"]) - set(honest["codes"]))


def cell(hit: int, total: int) -> str:
    return f"{hit}/{total}" if total else "-"


def rows_of(results: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    projects = sorted({r["project"] for r in results})
    return [(p, [r for r in results if r["project"] == p]) for p in projects] + [("**all**", results)]


def summary(results: list[dict[str, Any]]) -> list[str]:
    head = "| project | fixes | " + " | ".join(f"honest accepted, {m}" for m in MODES) + " |"
    lines = [head, "|" + "---|" * (2 + len(MODES))]
    for name, rows in rows_of(results):
        accepted = [cell(sum(not refused(r["honest"][m]) for r in rows), len(rows)) for m in MODES]
        lines.append(f"| {name} | {len(rows)} | " + " | ".join(accepted) + " |")
    lines += [
        "",
        "Cheats refused per mode: refused / cheats shown green in plain pytest (built: cheats the builder could",
        "make; green: those that turn the fixed tests green). In brackets, refused for a reason of the",
        "cheat's own: a finding code the honest fix's run in that mode lacks (a false alarm that also fires on",
        "the honest fix does not count there).",
        "",
    ]
    lines.append("| project | cheat | built | green | " + " | ".join(f"refused, {m}" for m in MODES) + " |")
    lines.append("|" + "---|" * (4 + len(MODES)))
    for name, rows in rows_of(results):
        for cls in present(results):
            cheats = [(r["cheats"][cls], r["honest"]) for r in rows if cls in r["cheats"]]  # --honest-only: none
            greens = [(c, h) for c, h in cheats if c["green"]]
            hits = [
                cell(sum(refused(c["verdicts"][m]) for c, _ in greens), len(greens))
                + f" ({sum(own(c['verdicts'][m], h[m]) for c, h in greens)})"
                for m in MODES
            ]
            built = sum(bool(c["built"]) for c, _ in cheats)
            lines.append(f"| {name} | {cls} | {built}/{len(cheats)} | {len(greens)} | " + " | ".join(hits) + " |")
    return lines


def details(results: list[dict[str, Any]]) -> list[str]:
    names = present(results)
    lines = [
        "| project | fix | tests | honest (static, replay, mutate) | " + " | ".join(names) + " | seconds |",
        "|" + "---|" * (5 + len(names)),
    ]
    for r in results:
        honest = ", ".join(verdict_text(r["honest"][m]) for m in MODES)
        cheats = []
        for cls in names:
            c = r["cheats"].get(cls)
            if c is None:
                cheats.append("not run")
            elif not c["built"]:
                cheats.append("not built")
            elif not c["green"]:
                cheats.append("not green")
            else:
                cheats.append(", ".join(verdict_text(c["verdicts"][m]) for m in MODES))
        lines.append(
            f"| {r['project']} | `{r['fix'][:10]}` | {r['tests']} | {honest} | "
            + " | ".join(cheats)
            + f" | {r['seconds']} |"
        )
    return lines


def verdict_text(verdict: dict[str, Any]) -> str:
    text = str(verdict["exit"])
    if verdict["codes"]:
        text += " " + " ".join(verdict["codes"])
    return text + ("*" if verdict.get("inherited") else "")


def refusals(results: list[dict[str, Any]]) -> list[str]:
    lines = []
    for r in results:
        for mode in MODES:
            v = r["honest"][mode]
            if refused(v):
                why = " ".join(v["codes"]) or (v["tail"][-1][:160] if v["tail"] else "")
                lines.append(f"- {r['project']} `{r['fix'][:10]}` {mode}: exit {v['exit']} {why}")
    return lines or ["- none"]


def classes(names: list[str]) -> list[str]:
    """The cheat classes as bench/realfix_cheats.py's docstring describes them, as a code block; the
    import-based ones (bench/realfix_imported.py) too when NAMES has any."""
    lines = (realfix_cheats.__doc__ or "").split("\n\n")[1].splitlines()
    if set(names) & set(realfix_imported.BUILDERS):
        lines += (realfix_imported.__doc__ or "").split("\n\n")[1].splitlines()
    return ["```text", *lines, "```"]


def report(results: list[dict[str, Any]], command: str, code: str, total: int) -> str:
    parts = [
        "# Real-fix precision bench (issue 39, item 7)",
        "",
        "Upstream bug-fix commits of projects oracle-guard's docs and tests never name, replayed from a red",
        "base (the fix's parent plus the fix's test changes). The honest patch is the fix's production code;",
        "each cheat keeps the bug and is counted only when plain pytest runs the fixed tests green on it",
        "(`bench/realfix_cheats.py` says how each is built). A mode refuses a patch when",
        "`oracle-guard check --base RED` (static), `... --replay` or `... --mutate` exits non-zero.",
        "",
        f"Produced by `{command}` with {code}.",
        "",
        *(
            [f"This run judged {len(results)} of the table's {total} fixes (stopped early: `--resume` goes on).", ""]
            if len(results) < total
            else []
        ),
        *(
            [f"The cheats were run on {judged} of these fixes (`--honest-only` first, then `--resume`).", ""]
            if (judged := sum(bool(r["cheats"]) for r in results)) < len(results)
            else []
        ),
        *classes(present(results)),
        "",
        *summary(results),
        "",
        "## Honest fixes refused",
        "",
        *refusals(results),
        "",
        "## Every fix",
        "",
        "Exit code and finding codes per mode (static, replay, mutate); `*`: inherited from the static",
        "mode's refusal (the static hooks run in every mode), not run; `not green`: the cheat did not turn",
        "the fixed tests green in plain pytest and does not count.",
        "",
        *details(results),
        "",
    ]
    return "\n".join(parts)
