"""The base's bytecode laid into another scratch tree (pytest_side/bytecode.py): used for the same source, never
for a file the change rewrote, whatever its size and time.  Real interpreters, real imports."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from oracle_guard.pytest_side import bytecode

OLD = "VALUE = 1\n"
NEW = "VALUE = 2\n"  # the same size: a timestamp pyc cannot tell the two apart
WHEN = 1_600_000_000


def tree(root: Path, text: str) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "mod.py").write_text(text)
    for path in (root / "pkg" / "__init__.py", root / "pkg" / "mod.py"):
        os.utime(path, (WHEN, WHEN))  # as two exports of the same second would be
    return root


def run(root: Path, write: bool = False) -> subprocess.CompletedProcess[str]:
    """`python -v -c 'import pkg.mod'` from ROOT: stdout its VALUE, stderr which bytecode was read."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    if not write:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONPATH"] = str(root)
    return subprocess.run(
        (sys.executable, "-v", "-c", "import pkg.mod; print(pkg.mod.VALUE)"),
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )


def read_from(proc: subprocess.CompletedProcess[str], root: Path) -> bool:
    return f"code object from '{root / 'pkg' / '__pycache__'}" in proc.stderr and "mod." in proc.stderr


def compiled(tmp_path: Path) -> dict[str, bytes]:
    base = tree(tmp_path / "base", OLD)
    assert run(base, write=True).stdout == "1\n"
    pycs = bytecode.harvest(str(base))
    names = {bytecode.source_of(p) for p in pycs}
    assert names == {"pkg/__init__.py", "pkg/mod.py"}, pycs
    return pycs


def test_the_base_bytecode_is_read_in_another_tree_with_the_same_source(tmp_path: Path) -> None:
    pycs = compiled(tmp_path)
    other = tree(tmp_path / "new", OLD)
    os.utime(other / "pkg" / "mod.py", (WHEN + 999, WHEN + 999))  # another export's time: checked by content
    bytecode.lay(pycs, [str(other)])
    proc = run(other)
    assert proc.stdout == "1\n" and read_from(proc, other), proc.stderr[-2000:]


def test_a_file_the_change_rewrote_runs_its_own_code_though_size_and_time_match(tmp_path: Path) -> None:
    pycs = compiled(tmp_path)
    # The trap: the base's timestamp bytecode, copied as it is, runs the base's code for the new file.
    raw = tree(tmp_path / "raw", NEW)
    shutil.copytree(tmp_path / "base" / "pkg" / "__pycache__", raw / "pkg" / "__pycache__")
    assert run(raw).stdout == "1\n"
    # Laid as checked hash-based files: the new source fails the check and is compiled.
    new = tree(tmp_path / "new", NEW)
    bytecode.lay(pycs, [str(new)])
    assert run(new).stdout == "2\n"
    skipped = tree(tmp_path / "skipped", NEW)
    bytecode.lay(pycs, [str(skipped)], ["pkg/mod.py"])  # the paths the change wrote get none at all
    assert not any(p.name.startswith("mod.") for p in (skipped / "pkg" / "__pycache__").iterdir())
    assert run(skipped).stdout == "2\n"


def test_bytecode_of_another_version_of_the_file_is_not_taken(tmp_path: Path) -> None:
    base = tree(tmp_path / "base", OLD)
    run(base, write=True)
    (base / "pkg" / "mod.py").write_text("VALUE = 333\n")  # edited after it was compiled
    assert set(map(bytecode.source_of, bytecode.harvest(str(base)))) == {"pkg/__init__.py"}
    (base / "pkg" / "__pycache__" / "junk.cpython-311.pyc").write_bytes(b"not bytecode")
    assert set(map(bytecode.source_of, bytecode.harvest(str(base)))) == {"pkg/__init__.py"}


def test_a_file_already_in_a_tree_is_left_alone_and_only_pycache_paths_count(tmp_path: Path) -> None:
    pycs = compiled(tmp_path)
    other = tree(tmp_path / "new", OLD)
    (other / "pkg" / "__pycache__").mkdir()
    mine = next(p for p in pycs if "/mod." in p)
    (other / mine).write_bytes(b"its own")
    bytecode.lay(pycs, [str(other)])
    assert (other / mine).read_bytes() == b"its own"
    assert bytecode.source_of("pkg/mod.cpython-311.pyc") is None
    assert bytecode.source_of("pkg/__pycache__/test_x.cpython-311-pytest-9.2.0.pyc") == "pkg/test_x.py"
    assert bytecode.source_of("__pycache__/top.cpython-311.opt-1.pyc") == "top.py"
