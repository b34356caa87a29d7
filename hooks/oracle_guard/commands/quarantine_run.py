"""`oracle-guard quarantine run`: reproduce every seeded quarantine entry and classify it.

For each freeze entry with a ``repro`` command (the second seed article's
quarantine ledger) the command runs with its ``seed``, is classified pass or
fail, and a failure's signature (exception type and innermost frame in the
test file, e.g. ``AssertionError in tests/test_parse.py:test_stream``) is
compared with the entry's recorded ``signature``.  The result goes to a JSON
report; the contract is never edited.  Exit 1 when an entry graduated (passed
``silent_runs_allowed`` times in a row: move it back into the suite), failed
with another signature (a new regression, not the known flake), could not
run, or has no recorded signature to compare with.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from typing import Any

from oracle_guard.contract import contract
from oracle_guard.repo import changes, git
from oracle_guard.reporting.report import Finding, UsageError, add_format_arg, emit, guarded, notice
from oracle_guard.rules.args import summary

DEFAULT_REPORT = "quarantine-report.json"

# Loaded into the repro's pytest through PYTEST_PLUGINS; needs only pytest.
SIGNATURE_PLUGIN = """\
import json, os

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.excinfo is not None:
        frames = [e for e in call.excinfo.traceback if str(e.path) == str(item.path)]
        func = frames[-1].name if frames else item.name
        path = item.nodeid.split("::")[0]
        with open(os.environ["ORACLE_GUARD_SIGNATURES"], "a", encoding="utf-8") as f:
            f.write(json.dumps({"nodeid": item.nodeid, "signature": f"{call.excinfo.typename} in {path}:{func}"}) + "\\n")
"""
PLUGIN_MODULE = "_oracle_guard_signature"


def _run_once(entry: contract.Freeze, timeout: float, workdir: str) -> dict[str, Any]:
    seed = entry.seed or ""
    command = (entry.repro or "").replace("{seed}", seed)
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise UsageError(f"freeze {entry.id}: repro is not a valid command line ({exc})") from None
    sig_file = os.path.join(workdir, "signatures.jsonl")
    if os.path.exists(sig_file):
        os.unlink(sig_file)
    env = dict(os.environ)
    env["ORACLE_GUARD_SEED"] = seed
    if seed.isdigit() and int(seed) <= 4294967295:
        env["PYTHONHASHSEED"] = seed
    env["ORACLE_GUARD_SIGNATURES"] = sig_file
    env["PYTHONPATH"] = os.pathsep.join(p for p in (workdir, env.get("PYTHONPATH")) if p)
    env["PYTEST_PLUGINS"] = ",".join(p for p in (env.get("PYTEST_PLUGINS"), PLUGIN_MODULE) if p)
    try:
        proc = subprocess.run(argv, capture_output=True, env=env, timeout=timeout)
    except FileNotFoundError:
        return {
            "status": "error",
            "exit_code": None,
            "signatures": [],
            "detail": f"command not found: {argv[0] if argv else '(empty)'}",
        }
    except subprocess.TimeoutExpired:
        return {"status": "error", "exit_code": None, "signatures": [], "detail": f"timed out after {timeout:g} s"}
    signatures: list[str] = []
    if os.path.exists(sig_file):
        with open(sig_file, encoding="utf-8") as f:
            signatures = sorted({json.loads(line)["signature"] for line in f if line.strip()})
    status = {0: "pass", 1: "fail"}.get(proc.returncode, "error")
    detail = ""
    if status == "error":
        tail = [
            line
            for line in proc.stdout.decode("utf-8", "replace").splitlines()
            + proc.stderr.decode("utf-8", "replace").splitlines()
            if line.strip()
        ]
        detail = f"exit code {proc.returncode}" + (f": {tail[-1].strip()}" if tail else "")
        if proc.returncode == 5:
            detail = "the repro ran no test (exit code 5): the record does not reproduce anything"
    return {"status": status, "exit_code": proc.returncode, "signatures": signatures, "detail": detail}


def classify(entry: contract.Freeze, runs: list[dict[str, Any]], previous_passes: int) -> tuple[str, int, str]:
    """(verdict, consecutive passes, message) for one entry's runs."""
    passes = previous_passes
    for run in runs:
        passes = passes + 1 if run["status"] == "pass" else 0
    errors = [r for r in runs if r["status"] == "error"]
    if errors:
        return "error", passes, f"could not run: {errors[0]['detail']}"
    failures = [r for r in runs if r["status"] == "fail"]
    seen = sorted({s for r in failures for s in r["signatures"]})
    if failures and not entry.signature:
        shown = "; ".join(seen) or "none found"
        return (
            "unverified",
            passes,
            f"failed, but the entry records no signature to compare with (seen: {shown}); record it as `signature:`",
        )
    if failures and (not seen or any(s != entry.signature for s in seen)):
        shown = "; ".join(seen) or "no pytest failure found"
        return (
            "new-failure",
            passes,
            f"failed with a different signature: {shown} (recorded: {entry.signature}): a new regression, not the known flake",
        )
    if entry.silent_runs_allowed is not None and passes >= entry.silent_runs_allowed:
        return (
            "graduated",
            passes,
            f"passed {passes} times in a row (silent_runs_allowed {entry.silent_runs_allowed}): move it back into the suite and drop the entry",
        )
    if failures:
        return "known-flake", passes, f"failed with the recorded signature ({entry.signature})"
    return "quiet", passes, f"passed ({passes} in a row)"


FAILING = {"error": "OG693", "unverified": "OG694", "new-failure": "OG692", "graduated": "OG691"}
MAIN_BRANCHES = ("main", "master")


def trusted_revision(base: str | None) -> tuple[str, str]:
    """(commit, label) whose contract's repro commands may run: never a patched or uncommitted one.

    Repro lines are commands; a patch that could edit them would run its own
    code in the quarantine job.  So they come from --base (the reviewed main
    branch), or from HEAD when HEAD is the main branch itself.
    """
    if base is not None:
        if not base.strip():
            raise UsageError("--base is empty: name the reviewed revision, e.g. --base origin/main")
        commit = git.commit_of(base)
        if commit is None:
            raise UsageError(f"base revision '{base}' does not exist (fetch it, or check the name)")
        return commit, base
    head = git.head()
    if head is None:
        raise UsageError(
            "no contract here: nothing is committed yet, and quarantine run executes only repro commands committed on the main branch"
        )
    branch = git.run("symbolic-ref", "--short", "-q", "HEAD", check=False).decode().strip()
    default = git.run("symbolic-ref", "--short", "-q", "refs/remotes/origin/HEAD", check=False).decode().strip()
    if branch and (branch in MAIN_BRANCHES or (default and default.split("/", 1)[-1] == branch)):
        return head, branch
    where = f"on branch {branch}" if branch else "on a detached HEAD"
    raise UsageError(
        f"quarantine run executes the contract's repro commands, so it runs only what the main branch committed; "
        f"{where}, pass --base origin/main"
    )


def _previous(path: str | None) -> dict[str, int]:
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        return {e["id"]: int(e["consecutive_passes"]) for e in data["entries"]}
    except FileNotFoundError:
        return {}
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"--previous {path}: not a quarantine report ({exc.__class__.__name__})") from None


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="oracle-guard quarantine", description=summary(__doc__))
    parser.add_argument("action", choices=["run"], help="run: reproduce every entry with a repro command")
    contract.add_contract_arg(parser)
    parser.add_argument(
        "--report",
        metavar="PATH",
        help=f"where to write the JSON report (default: {DEFAULT_REPORT}, and only when the ledger has an entry)",
    )
    parser.add_argument("--previous", metavar="PATH", help="an earlier report: consecutive passes carry over from it")
    parser.add_argument("--runs", type=int, default=1, metavar="N", help="run each repro N times now (default: 1)")
    parser.add_argument("--only", action="append", metavar="ID", help="only this freeze id (repeatable)")
    parser.add_argument("--timeout", type=float, default=600.0, metavar="SECONDS", help="per repro run (default: 600)")
    parser.add_argument("--now", metavar="TIME", help="the current time (ISO-8601; default: the clock)")
    add_format_arg(parser)
    parser.add_argument(
        "--base",
        metavar="REV",
        help="run the repro commands committed at REV, e.g. origin/main (required off the main branch)",
    )
    args = parser.parse_args(argv)
    if args.runs < 1:
        raise UsageError("--runs must be at least 1")
    now = contract.parse_now(args.now)
    asked = args.report is not None
    args.report = os.path.abspath(args.report or DEFAULT_REPORT)  # as the user meant it, before moving to the top
    args.previous = os.path.abspath(args.previous) if args.previous else None
    changes.enter_repo([])
    rev, label = trusted_revision(args.base)
    ledger = contract.at_base(rev, args.contract)
    if ledger is None:
        raise UsageError(f"{args.contract}: no contract committed at {label} (pass --contract PATH)")
    if contract.bytes_in_work_tree(args.contract) != contract.bytes_at(rev, args.contract):
        notice(
            f"{args.contract} differs from {label}: the repro commands committed at {label} run, not the work tree's"
        )
    previous = _previous(args.previous)
    entries = [e for e in ledger.freezes if not args.only or e.id in args.only]
    if args.only and len(entries) < len(set(args.only)):
        missing = sorted(set(args.only) - {e.id for e in entries})
        raise UsageError(f"no freeze entry with id {', '.join(missing)}")

    results: list[dict[str, Any]] = []
    findings: list[Finding] = []
    with tempfile.TemporaryDirectory(prefix="oracle-guard-quarantine-") as workdir:
        with open(os.path.join(workdir, f"{PLUGIN_MODULE}.py"), "w", encoding="utf-8") as f:
            f.write(SIGNATURE_PLUGIN)
        for entry in entries:
            record: dict[str, Any] = {
                "id": entry.id,
                "repro": entry.repro,
                "seed": entry.seed,
                "signature": entry.signature,
                "silent_runs_allowed": entry.silent_runs_allowed,
                "expired": not entry.active(now),
            }
            if not entry.repro:
                record.update(
                    verdict="no-repro", runs=[], consecutive_passes=0, message="no repro command: a ledger-only freeze"
                )
                results.append(record)
                continue
            runs = [_run_once(entry, args.timeout, workdir) for _ in range(args.runs)]
            verdict, passes, message = classify(entry, runs, previous.get(entry.id, 0))
            record.update(verdict=verdict, runs=runs, consecutive_passes=passes, message=message)
            results.append(record)
            # Progress on stdout in text; a json/sarif/agent run prints one document there, so it goes to stderr.
            progress = sys.stdout if args.format in ("text", "github") else sys.stderr
            print(f"quarantine {entry.id}: {verdict}: {message}", file=progress)
            if verdict in FAILING:
                findings.append(
                    Finding(args.contract, entry.line, 1, FAILING[verdict], f"freeze {entry.id}: {message}")
                )
    if not asked and not entries:
        # An empty ledger: no file appears in the repository unless --report asks for one.
        notice(f"quarantine: no freeze entry in {args.contract}; nothing ran, no report written")
        return emit(findings, args.format)
    report = {"version": 1, "contract": args.contract, "now": now.isoformat(), "entries": results}
    try:
        os.makedirs(os.path.dirname(args.report), exist_ok=True)
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2, sort_keys=True)
            f.write("\n")
    except OSError as exc:
        raise UsageError(f"cannot write the report to {args.report}: {exc.strerror or exc}") from None
    notice(f"quarantine: report written to {os.path.relpath(args.report)}")
    return emit(findings, args.format)


if __name__ == "__main__":
    raise SystemExit(main())
