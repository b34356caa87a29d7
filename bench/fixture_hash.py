"""Benchmark: fixture-lock-verify vs `openssl dgst -sha256` over the same 1,000 locked fixtures (200 MB).

Usage: python bench/fixture_hash.py [--files 1000] [--megabytes 200] [--runs 5]

Builds a throwaway git repository in a temp dir with the fixtures and a
contract locking each of them (committed, so the hook runs in its default
staged mode against HEAD), warms the page cache, then times (median of
--runs, alternating) `openssl dgst -sha256` over the same files in one
process and the whole hook as a subprocess, interpreter start and git calls
included, two ways: "installed" (`python -S` with the package and PyYAML on
PYTHONPATH, like a regular non-editable install) and "dev venv" (this
interpreter with its site, e.g. an editable install's import finder).
The bar is the installed hook at >= 80% of openssl's throughput.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def build(folder: Path, files: int, total: int) -> list[str]:
    rng = random.Random(20261202)
    weights = [rng.uniform(0.25, 1.75) for _ in range(files)]
    scale = total / sum(weights)
    sizes = [int(w * scale) for w in weights]
    sizes[-1] += total - sum(sizes)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
    }
    subprocess.run(("git", "init", "-q", str(folder)), check=True, env=env)
    lines = ["version: 1", "fixtures:"]
    paths = []
    block = os.urandom(1 << 20)
    for i, size in enumerate(sizes):
        rel = f"tests/fixtures/d{i % 20:02d}/f{i:04d}.bin"
        data = (block[i % 997 :] + block) * (size // len(block) + 1)
        data = data[:size]
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        lines += [f"  - id: f{i:04d}", f"    path: {rel}", f"    sha256: {hashlib.sha256(data).hexdigest()}"]
        paths.append(rel)
    (folder / "tests/agent_contract.yaml").write_text("\n".join(lines) + "\n")
    subprocess.run(("git", "-C", str(folder), "add", "-A"), check=True, env=env)
    subprocess.run(
        ("git", "-C", str(folder), "-c", "commit.gpgsign=false", "commit", "-q", "-m", "lock"), check=True, env=env
    )
    return paths


def timed(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """Wall-clock seconds and CPU seconds (user + system, children included)."""
    env = dict(os.environ)
    if not cmd[0].endswith(("python", "python3")) and "PYTHONPATH" in env and cmd[0] != "openssl":
        del env["PYTHONPATH"]  # an installed executable imports its own copy
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed: {proc.stderr.decode()[-300:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--megabytes", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--installed",
        metavar="EXE",
        help="also time this installed fixture-lock-verify executable (e.g. a venv's bin/fixture-lock-verify)",
    )
    args = parser.parse_args()
    total = args.megabytes * 1_000_000
    with tempfile.TemporaryDirectory(prefix="og-bench-") as tmp:
        folder = Path(tmp) / "repo"
        paths = build(folder, args.files, total)
        yaml_dir = os.path.dirname(os.path.dirname(yaml.__file__))
        os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), yaml_dir])
        commands = {
            "openssl dgst -sha256": ["openssl", "dgst", "-sha256", *paths],
            "fixture-lock-verify (python -S)": [
                sys.executable,
                "-S",
                "-m",
                "oracle_guard.hook_ids.fixture_lock_verify",
            ],
            "fixture-lock-verify (dev venv)": [sys.executable, "-m", "oracle_guard.hook_ids.fixture_lock_verify"],
        }
        if args.installed:
            commands["fixture-lock-verify (installed exe)"] = [args.installed]
        times: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        for cmd in commands.values():  # warm the page cache and imports
            timed(cmd, folder)
        for _ in range(args.runs):
            for name, cmd in commands.items():
                wall, used = timed(cmd, folder)
                times[name].append(wall)
                cpu[name].append(used)
        medians = {name: statistics.median(values) for name, values in times.items()}
        cpu_medians = {name: statistics.median(values) for name, values in cpu.items()}
    load = os.getloadavg()[0]
    mb = total / 1e6
    version = subprocess.run(("openssl", "version"), capture_output=True, text=True).stdout.strip()
    print(
        f"{args.files} locked fixtures, {mb:.0f} MB, median of {args.runs} ({os.cpu_count()} CPUs, load average {load:.1f}, {version}, Python {sys.version.split()[0]})"
    )
    for name, values in times.items():
        print(
            f"{name:32s} {medians[name]:6.3f} s {mb / medians[name]:7.1f} MB/s  cpu {cpu_medians[name]:.3f} s   runs: {', '.join(f'{t:.3f}' for t in values)}"
        )
    peer, peer_cpu = medians["openssl dgst -sha256"], cpu_medians["openssl dgst -sha256"]
    for name in list(commands)[1:]:
        print(
            f"{name}: {100 * peer / medians[name]:.0f}% of openssl's throughput (bar: 80%); CPU {cpu_medians[name] / peer_cpu:.2f}x openssl's"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
