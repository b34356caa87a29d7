"""Speed of forbid-skip-marks and forbid-runtime-skip beside ruff and flake8-pytest-style.

Usage (from the repository root, in the environment where oracle-guard is installed):

    python -m pip install ruff flake8 flake8-pytest-style   # the peers; not dependencies
    python bench/skip_hooks.py [--files 2000] [--runs 5] [--keep DIR]

It generates a git repository of FILES test modules (about 10 kB each, 7% of
them with a skip/skipif/xfail mark or a runtime skip), commits it, and reports
the median wall time of RUNS runs of each hook's console script, each beside
`ruff check --select PT --no-cache` and `flake8 --select PT` on the same files
in the same run, for:

  (a) a commit staging 5 files with no skip-like token (target < 120 ms, libcst not imported)
  (b) a commit staging 5 files with marks (target < 400 ms)
  (c) `--all` over the whole tree (target: within 5x of ruff, 10x faster than flake8-pytest-style)

A peer that is not installed is reported as missing and left out.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HOOKS = ("forbid-skip-marks", "forbid-runtime-skip")
MARKED_SHARE = 0.07

HEADER = '''"""Tests for the {name} component (generated for the oracle-guard benchmark)."""
import json
import math
import os
import sys

import pytest

from collections import OrderedDict


def _make_record(index, scale=1.0):
    """A record the checks below compare against."""
    record = OrderedDict(id=index, value=index * scale, label="item-%d" % index)
    if index % 2:
        return record
    record["even"] = True
    return record


@pytest.fixture
def records():
    return [_make_record(i) for i in range(20)]

'''

TEST = """
def test_{name}_{i}_roundtrip(records):
    payload = json.dumps([dict(r) for r in records])
    loaded = json.loads(payload)
    assert len(loaded) == len(records)
    for before, after in zip(records, loaded):
        assert before["id"] == after["id"]
        assert math.isclose(before["value"], after["value"])


@pytest.mark.parametrize("index", [0, 1, 2, 3, 5, 8, 13])
def test_{name}_{i}_labels(index):
    record = _make_record(index, scale={scale})
    assert record["label"].startswith("item-")
    assert record["value"] == pytest.approx(index * {scale})
    assert os.path.sep in ("/", "\\\\")

"""

CLASS = """
class Test{cname}{i}:
    def _expected(self, n):
        total = 0
        for k in range(n):
            total += k
        return total

    def test_sum(self):
        assert self._expected(10) == sum(range(10))

    def test_platform(self):
        assert isinstance(sys.platform, str)

"""

MARKS = [
    '@pytest.mark.skip(reason="flaky on CI, see #{n}")\n',
    '@pytest.mark.skipif(sys.platform == "win32", reason="no fork on Windows")\n',
    '@pytest.mark.xfail(strict=True, reason="bug #{n}")\n',
]


def module_text(name: str, rng: random.Random, marked: bool) -> str:
    parts = [HEADER.format(name=name)]
    for i in range(13):
        parts.append(TEST.format(name=name, i=i, scale=rng.choice([1.0, 2.5, 0.5])))
        if i % 3 == 0:
            parts.append(CLASS.format(cname=name.title().replace("_", ""), i=i))
    text = "".join(parts)
    if marked:
        kind = rng.randrange(4)
        if kind < 3:
            target = f"\ndef test_{name}_4_roundtrip"
            text = text.replace(target, "\n" + MARKS[kind].format(n=rng.randrange(999)) + target[1:], 1)
        else:
            target = f"def test_{name}_2_labels(index):\n"
            text = text.replace(target, target + '    if sys.platform == "win32":\n        pytest.skip("no fork")\n', 1)
    return text


def git(repo: Path, *args: str) -> None:
    subprocess.run(("git", *args), cwd=repo, check=True, capture_output=True)


def build(repo: Path, count: int, seed: int = 2) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    clean, marked = [], []
    for i in range(count):
        package = f"tests/pkg{i // 100:02d}"
        path = f"{package}/test_component_{i:04d}.py"
        has_mark = rng.random() < MARKED_SHARE
        (repo / package).mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(module_text(f"component_{i:04d}", rng, has_mark))
        (marked if has_mark else clean).append(path)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(
        repo,
        "-c",
        "user.name=bench",
        "-c",
        "user.email=bench@example.com",
        "-c",
        "commit.gpgsign=false",
        "commit",
        "-q",
        "-m",
        "tree",
    )
    return clean, marked


def tool(name: str) -> str | None:
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else shutil.which(name)


def median_ms(cmd: list[str], cwd: Path, runs: int) -> tuple[float, float, int]:
    """Median wall and CPU (user+system, children included) milliseconds, and the exit code.

    CPU time is reported beside wall time because a shared machine's load
    inflates wall time; a parallel peer (flake8 uses every CPU) shows less wall than CPU.
    """
    walls, cpus, code = [], [], 0
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        walls.append((time.perf_counter() - start) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
        code = proc.returncode
        if code not in (0, 1):
            raise SystemExit(f"{cmd[0]} failed ({code}): {proc.stderr.decode()[-500:]}")
    return statistics.median(walls), statistics.median(cpus), code


def libcst_imported(hook: str, files: list[str], cwd: Path) -> bool:
    module = "hooks." + hook.replace("-", "_")
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", module, *files], cwd=cwd, capture_output=True, text=True
    )
    return any(
        line.rstrip().endswith(("libcst", "| libcst")) or " libcst." in line for line in proc.stderr.splitlines()
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", metavar="DIR", help="build the tree in DIR and keep it")
    parser.add_argument(
        "--no-flake8-all", action="store_true", help="leave flake8 out of (c): minutes per run on 20 MB"
    )
    args = parser.parse_args()

    peers = {"ruff": tool("ruff"), "flake8": tool("flake8")}
    peer_cmds = {
        "ruff": [peers["ruff"], "check", "--select", "PT", "--no-cache", "--quiet", "--exit-zero"]
        if peers["ruff"]
        else None,
        "flake8": [peers["flake8"], "--select", "PT", "--exit-zero"] if peers["flake8"] else None,
    }
    for name, path in peers.items():
        if path is None:
            print(f"peer {name} not installed: `python -m pip install ruff flake8 flake8-pytest-style`; left out")

    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="og-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        clean, marked = build(root, args.files)
        size = sum((root / p).stat().st_size for p in clean + marked)
        print(
            f"tree: {len(clean) + len(marked)} files, {size / 1e6:.1f} MB, {len(marked)} with marks ({len(marked) / (len(clean) + len(marked)):.0%}); "
            f"medians of {args.runs} runs; python {sys.version.split()[0]}; {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}"
        )

        def stage(paths: list[str], extra: str) -> None:
            """Append EXTRA to each file; a leading '@' puts it on the file's first existing test."""
            git(root, "reset", "-q", "--hard")
            for p in paths:
                text = (root / p).read_text()
                if extra.startswith("@"):
                    text = text.replace("\ndef test_", "\n" + extra + "def test_", 1)
                else:
                    text += extra
                (root / p).write_text(text)
            git(root, "add", "--", *paths)

        scenarios = [
            (
                "(a) 5 staged files, no skip-like token",
                clean[:5],
                "\n\ndef test_added_later():\n    assert json.loads('[]') == []\n",
                120.0,
            ),
            (
                "(b) 5 staged files with marks, a new mark on an existing test in each",
                marked[:5],
                "@pytest.mark.xfail(reason='new')\n",
                400.0,
            ),
            ("(c) --all over the tree", clean + marked, "", None),
        ]
        results = []
        for title, files, extra, target in scenarios:
            stage(files, extra) if extra else git(root, "reset", "-q", "--hard")
            all_flag = ["--all"] if not extra else []
            row = {"title": title}
            for peer, cmd in peer_cmds.items():
                if cmd and not (peer == "flake8" and all_flag and args.no_flake8_all):
                    row[peer], row[peer + ":cpu"], _ = median_ms(cmd + files, root, args.runs)
            for hook in HOOKS:
                ms, cpu, code = median_ms([tool(hook) or hook, *all_flag, *files], root, args.runs)
                row[hook], row[hook + ":cpu"] = ms, cpu
                row[hook + ":exit"] = code
            if not all_flag:
                row["libcst"] = {hook: libcst_imported(hook, files, root) for hook in HOOKS}
            row["target"] = target
            results.append(row)

        for row in results:
            print(f"\n{row['title']}")
            for peer in ("ruff", "flake8"):
                if peer in row:
                    print(f"  {peer + ' --select PT':32} {row[peer]:8.0f} ms wall {row[peer + ':cpu']:8.0f} ms cpu")
            for hook in HOOKS:
                ms = row[hook]
                notes = [f"exit {row[hook + ':exit']}"]
                if row["target"]:
                    notes.append(f"target < {row['target']:.0f} ms: {'met' if ms < row['target'] else 'MISSED'}")
                else:
                    cpu = row[hook + ":cpu"]
                    if "ruff" in row:
                        notes.append(
                            f"{ms / row['ruff']:.1f}x ruff wall, {cpu / row['ruff:cpu']:.1f}x cpu (target <= 5x: {'met' if ms <= 5 * row['ruff'] else 'MISSED'})"
                        )
                    if "flake8" in row:
                        notes.append(
                            f"flake8 {row['flake8'] / ms:.1f}x slower wall, {row['flake8:cpu'] / cpu:.1f}x cpu "
                            f"(target >= 10x: {'met' if row['flake8'] >= 10 * ms else 'MISSED'})"
                        )
                if "libcst" in row:
                    notes.append("libcst imported" if row["libcst"][hook] else "libcst not imported")
                print(f"  {hook:32} {ms:8.0f} ms wall {row[hook + ':cpu']:8.0f} ms cpu   " + "; ".join(notes))
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
