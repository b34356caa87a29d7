"""What a file with syntax newer than the running Python costs: the libcst path.

    python bench/newer_syntax.py [--files 50] [--runs 5]

Generates test modules that use PEP 695 type parameters, ``type`` aliases,
PEP 701 f-strings, ``except*`` and PEP 758 ``except A, B:`` (those this
interpreter cannot parse), and times ``oracle_guard.analysis.pysource.parse`` on them (ast
fails, libcst parses in a child process, the constructs are lowered, ast parses the result)
beside ``ast.parse`` of the same modules written in syntax every Python
reads (the common path, which is unchanged: ast succeeds and nothing else
runs).  Medians of RUNS, in-process, per file; the first libcst import is
timed on its own, as a hook pays it once per process.
"""

from __future__ import annotations

import argparse
import ast
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

NEW = """\
import pytest


def first{i}[T](items: list[T]) -> T:
    return items[0]


type Pair{i}[K] = tuple[K, K]


class Box{i}[T]:
    def __init__(self, x: T) -> None:
        self.x = x


def test_first_{i}():
    d = {{"k": {i}}}
    assert first{i}([1, 2]) == 1
    assert f"{{d["k"]}}" == "{i}"
    try:
        raise ExceptionGroup("g", [ValueError()])
    except* ValueError as group:
        assert group.exceptions
    try:
        int("x")
    except ValueError, TypeError:
        pass


@pytest.mark.parametrize("n", [1, 2, 3])
def test_box_{i}(n):
    assert Box{i}(n).x == n
"""


def old_syntax(text: str) -> str:
    """The same module in syntax every supported Python reads."""
    return (
        text.replace("[T](items", "(items")
        .replace("class Box", "class Box")
        .replace("[T]:", ":")
        .replace("type Pair", "Pair")
        .replace("[K] = tuple", " = tuple")
        .replace('f"{d["k"]}"', "f\"{d['k']}\"")
        .replace("except* ValueError", "except ValueError")
        .replace("except ValueError, TypeError:", "except (ValueError, TypeError):")
    )


def median_ms(func, items, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for item in items:
            func(item)
        times.append((time.perf_counter() - start) / len(items) * 1000)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    new = [NEW.format(i=i).encode() for i in range(args.files)]
    old = [old_syntax(NEW.format(i=i)).encode() for i in range(args.files)]
    for source in old:
        ast.parse(source)  # the old spelling must parse everywhere
    refused = sum(1 for s in new if _refused(s))
    start = time.perf_counter()
    import libcst  # noqa: F401  - paid once per hook process, only when a file needs it

    from oracle_guard.analysis import newsyntax  # noqa: F401

    first_import = (time.perf_counter() - start) * 1000
    from oracle_guard.analysis import newsyntax as ns
    from oracle_guard.analysis import pysource

    def lowered(source: bytes) -> None:
        ns._CACHE.clear()  # time libcst's verdict (in its child process) and the lowering, not the caches
        pysource.forget()
        pysource.parse(source, "t.py")

    def again(source: bytes) -> None:
        pysource.forget()  # the verdict is kept: a second hook of the same process asks again
        pysource.parse(source, "t.py")

    def plain(source: bytes) -> None:
        pysource.forget()  # the parse itself, not the kept tree
        pysource._parse(source, "t.py")

    common = median_ms(plain, old, args.runs)
    path = median_ms(lowered, new, args.runs)
    cached = median_ms(again, new, args.runs)
    print(
        f"Python {sys.version.split()[0]}; {args.files} modules of {len(new[0])} bytes; ast refuses {refused} of them"
    )
    print(f"common path (ast.parse succeeds):  {common:8.2f} ms per file")
    print(f"libcst path (parse + lower + ast): {path:8.2f} ms per file ({path / common:.0f}x)")
    print(f"libcst path, same file again in the process (verdict kept): {cached:8.2f} ms per file")
    print(f"first import of libcst and the lowering module: {first_import:.0f} ms once per process")
    return 0


def _refused(source: bytes) -> bool:
    try:
        ast.parse(source)
    except SyntaxError:
        return True
    return False


if __name__ == "__main__":
    raise SystemExit(main())
