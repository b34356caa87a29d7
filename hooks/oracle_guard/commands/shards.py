"""A gate spread over CI jobs: `check --replay --shard K/N --format json` per job, `oracle-guard merge` last.

    oracle-guard merge shard-1.json shard-2.json ...

Each shard's document is `check`'s JSON document with a ``shard`` object: the base and new
revisions, K and N, the options that decide the verdict, a digest of every selected base test id
(the selection before the shard was kept) and the ids this shard judged.  The tests are split by
a stable hash of each test's id (probes/replay/plugin.py ``shard_of``), never by order; everything
that is not one test's (the static hooks, the collection snapshot, each run's ledger and canaries,
collection errors) is judged by every shard, and the merged verdict is the union; the flip and
neighbour probe runs each shard's own tests.  The mutation differential runs in shard 1 only.

`merge` refuses (one line, exit 2) unless every shard 1..N is there once, all judged the same
change with the same options and selection, each listed only its own tests, and together they
list the whole selection: a shard that is missing, stale or from another change cannot pass.
Its verdict and exit code are `check`'s: 1 for any finding, else 2 for any shard's error, else 0.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from oracle_guard.commands import runner
from oracle_guard.probes.replay.plugin import shard_of
from oracle_guard.repo import changes, git
from oracle_guard.reporting import report
from oracle_guard.reporting.report import Finding, UsageError, guarded
from oracle_guard.rules import args as hook_args

if TYPE_CHECKING:
    from oracle_guard.probes.replay import ledger

SCHEMA = "oracle-guard/findings"
IDENTITY = ("count", "base", "new", "options", "selection")  # what every shard of one gate shares


def _digest(ids: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(sorted(set(ids))).encode("utf-8")).hexdigest()


def record(args: argparse.Namespace, change_set: changes.ChangeSet, seen: Sequence[ledger.Result]) -> dict[str, Any]:
    """The ``shard`` object of this shard's document."""
    index, _, count = str(args.shard).partition("/")
    pool = sorted({n for r in seen for n in r.pool})
    tests = sorted({n for r in seen for n in r.collected})
    new = change_set.target or git.run("rev-parse", "HEAD").decode("ascii", "replace").strip()
    return {
        "index": int(index),
        "count": int(count),
        "base": change_set.base or "",
        "new": new,
        "options": {"contract": args.contract, "only": args.only, "skip": args.skip, "mutate": args.shard_mutate},
        "selection": _digest(pool),
        "selected": len(pool),
        "tests": tests,
    }


def _read(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read shard document {path}: {getattr(exc, 'strerror', None) or exc}") from None
    shard = data.get("shard") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(shard, dict):
        raise UsageError(
            f"{path} is not a shard's document (each CI job writes one: "
            "`oracle-guard check --replay --shard K/N --format json > shard-K.json`)"
        )
    kinds = {"index": int, "count": int, "base": str, "new": str, "options": dict, "selection": str, "tests": list}
    wrong = [key for key, kind in kinds.items() if not isinstance(shard.get(key), kind)]
    wrong += [key for key in ("findings", "errors", "notices") if not isinstance(data.get(key), list)]
    if wrong or not all(isinstance(t, str) for t in shard["tests"]) or not 1 <= shard["index"] <= shard["count"]:
        raise UsageError(f"{path} is a damaged shard document ({', '.join(wrong) or 'index'}); make it again")
    return data


def _check_set(paths: Sequence[str], docs: Sequence[dict[str, Any]]) -> None:
    """Every shard once, of one change, one selection, each with its own tests and all of them together."""
    first = docs[0]["shard"]
    for path, doc in zip(paths, docs):
        shard = doc["shard"]
        for key in IDENTITY:
            if shard.get(key) != first.get(key):
                raise UsageError(
                    f"{path} and {paths[0]} differ in {key} ({shard.get(key)!r} vs {first.get(key)!r}):"
                    " every shard must judge the same change with the same options"
                )
    count = first["count"]
    where: dict[int, str] = {}
    for path, doc in zip(paths, docs):
        index = doc["shard"]["index"]
        if index in where:
            raise UsageError(f"shard {index}/{count} given twice ({where[index]}, {path})")
        where[index] = path
    missing = [f"{k}/{count}" for k in range(1, count + 1) if k not in where]
    if missing:
        raise UsageError(f"shard {', '.join(missing)} missing: the verdict needs every shard's document")
    tests: list[str] = []
    for path, doc in zip(paths, docs):
        index = doc["shard"]["index"]
        for test in doc["shard"]["tests"]:
            if shard_of(test, count) != index:
                raise UsageError(f"{path} lists {test}, which belongs to shard {shard_of(test, count)}/{count}")
        tests += doc["shard"]["tests"]
    if len(tests) != len(set(tests)) or _digest(tests) != first["selection"]:
        raise UsageError(
            f"the shards' tests ({len(set(tests))}) are not the selection ({first.get('selected', '?')} tests):"
            " a shard did not judge all of its tests"
        )


def _finding(item: Any, path: str) -> tuple[str, Finding, str]:
    try:
        found = Finding(str(item["path"]), int(item["line"]), int(item["col"]), str(item["code"]), str(item["message"]))
        return str(item.get("hook", "")), found, str(item.get("fix") or "")
    except (KeyError, TypeError, ValueError):
        raise UsageError(f"{path} is a damaged shard document (a finding); make it again") from None


@guarded
def main(argv: Sequence[str] | None = None) -> int:
    parser = hook_args.parser("oracle-guard merge", __doc__)
    parser.add_argument("documents", nargs="+", metavar="DOC", help="every shard's document (`check --shard K/N`)")
    hook_args.add_format(parser)
    hook_args.add_quiet(parser)
    args = parser.parse_args(argv)
    docs = [_read(path) for path in args.documents]
    _check_set(args.documents, docs)
    results: list[tuple[str, Finding]] = []
    steps: dict[Finding, str] = {}
    errors: list[str] = []
    said: set[str] = set()
    kept: set[Finding] = set()
    for path, doc in zip(args.documents, docs):
        for item in doc["findings"]:
            hook, found, fix = _finding(item, path)
            if found not in kept:
                kept.add(found)
                results.append((hook, found))
                if fix:
                    steps[found] = fix
        errors += [str(e) for e in doc["errors"] if str(e) not in errors]
        for text in map(str, doc["notices"]):
            if text not in said:
                said.add(text)
                report.notice(text)
    count = docs[0]["shard"]["count"]
    code = runner.emit(args.format, runner.Outcome(results, errors, [], steps))
    if code == report.EXIT_CLEAN:
        runner.success(args.format, args.quiet, 0, [f"{count} shard{'s' if count != 1 else ''} of the gate"])
    return code


if __name__ == "__main__":
    raise SystemExit(main())
