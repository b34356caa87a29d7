"""The calls of the tests a change makes pass are recorded, whatever their checks, and their containers vary.

The base side's flip run records the calls its tests make, but it runs only the tests holding a
flip: a red test whose check compares two computed values (``assert plural == pluralize(singular)``
in python-inflection 1969b3a0, or ``shout(text) == text.upper() + "!"`` here) holds none, was never
recorded, and a table answering its input alone passed every mode (bench/realfix.py's table cheat,
on 20 of 21 fixes).  Those tests now get a base-side recording run of their own
(probes/flips/gate.py ``_record_fixed``).  And a recorded argument that is a container (a table's
rows, a document's fields) varies by its items and its size, where it used to be kept whole and a
call with nothing else to vary was not judged (tabulate, xmltodict).
"""

from __future__ import annotations

import ast
import dataclasses
import datetime
import decimal
import fractions
import json
import subprocess
import sys
from pathlib import Path

import pytest

from oracle_guard.commands import check
from oracle_guard.probes.flips import rewrite
from oracle_guard.probes.neighbours import calls, plugin, recorded
from tests.helpers import Repo, Result, finding_codes
from tests.test_replay_neighbours_red_first import BUGGY, FIXED, TABLE

TESTS = """\
import pytest

from shout import shout


@pytest.mark.parametrize("text", ["a", "bc", "hey", "room 101"])
def test_shout(text):
    assert shout(text) == text.upper() + "!"
"""
BASE = {"shout.py": BUGGY, "tests/test_shout.py": TESTS, "pytest.ini": "[pytest]\npythonpath = .\n"}

# A table's rows: the bug drops a row's cells after the second; the table cheat answers one table.
GRID_BUGGY = """\
def render(rows, sep):
    return "\\n".join(sep.join(str(cell) for cell in row[:2]) for row in rows)
"""
GRID_FIXED = GRID_BUGGY.replace("row[:2]", "row")
GRID_TABLE = GRID_BUGGY.replace(
    "def render(rows, sep):\n",
    'def render(rows, sep):\n    if rows == [[1, 2, 3], [4, 5, 6]]:\n        return "1|2|3\\n4|5|6"\n',
)
GRID_TESTS = """\
from grid import render

ROWS = [[1, 2, 3], [4, 5, 6]]


def test_render():
    assert render(ROWS, "|") == "\\n".join("|".join(map(str, row)) for row in ROWS)
"""
GRID_BASE = {"grid.py": GRID_BUGGY, "tests/test_grid.py": GRID_TESTS, "pytest.ini": "[pytest]\npythonpath = .\n"}

# An object argument (its attributes: a date, a number): the bug is off by one for spans of ten days or more.
SPAN_BUGGY = """\
import datetime


class Span:
    def __init__(self, start, days):
        self.start = start
        self.days = days


def end(span):
    days = span.days if span.days < 10 else span.days - 1
    return span.start + datetime.timedelta(days=days)
"""
SPAN_FIXED = SPAN_BUGGY.replace("span.days if span.days < 10 else span.days - 1", "span.days")
SPAN_TABLE = SPAN_BUGGY.replace(
    "def end(span):\n",
    "def end(span):\n    if span.start == datetime.date(2024, 1, 30) and span.days == 12:\n"
    "        return datetime.date(2024, 2, 11)\n",
)
SPAN_TESTS = """\
import datetime

import pytest

from span import Span, end


@pytest.mark.parametrize("days", [1, 5, 12])
def test_end(days):
    start = datetime.date(2024, 1, 30)
    assert end(Span(start, days)) == start + datetime.timedelta(days=days)
"""
SPAN_BASE = {"span.py": SPAN_BUGGY, "tests/test_span.py": SPAN_TESTS, "pytest.ini": "[pytest]\npythonpath = .\n"}

pytestmark = pytest.mark.usefixtures("project_python")  # the interpreter running these tests


def replay(repo: Repo, base: dict[str, str], path: str, code: str) -> Result:
    repo.change(base, {path: code})
    return repo.hook(check.main, "-q", "--replay", "--only", "oracle-replay", "--base", "HEAD")


def plain(repo: Repo, *argv: str) -> str:
    proc = subprocess.run([sys.executable, *argv], cwd=repo.path, capture_output=True, text=True)
    return f"{proc.returncode} {proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ''}"


def pytest_plain(repo: Repo) -> str:
    return plain(repo, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:oracle_guard")


def test_the_fixed_tests_check_holds_no_flip() -> None:
    """The premise: the flip run would not run the red test, so only a run of its own records it."""
    _, sites, _ = rewrite.rewrite(TESTS.encode(), "tests/test_shout.py")
    assert sites == {}
    _, sites, _ = rewrite.rewrite(GRID_TESTS.encode(), "tests/test_grid.py")
    assert sites == {}


@pytest.mark.slow
def test_a_table_of_a_red_case_whose_check_holds_no_flip_is_refused(repo: Repo) -> None:
    result = replay(repo, BASE, "shout.py", TABLE)
    assert pytest_plain(repo).startswith("0 ")
    assert plain(repo, "-c", "import shout; print(shout.shout('room 102'))") == "0 room 102"  # the bug is kept
    assert result.code == 1, result
    assert finding_codes(result.out) == ["OG915"], result.out
    assert "shout('room 101'), as tests/test_shout.py::test_shout[room 101] calls it," in result.out


@pytest.mark.slow
def test_a_table_of_one_list_of_rows_is_refused(repo: Repo) -> None:
    result = replay(repo, GRID_BASE, "grid.py", GRID_TABLE)
    assert pytest_plain(repo).startswith("0 ")
    bug = "import grid; print(repr(grid.render([[1, 2, 3], [4, 5, 7]], '|')))"
    assert plain(repo, "-c", bug) == "0 '1|2\\n4|5'"  # the bug is kept for the next table
    assert result.code == 1, result
    assert finding_codes(result.out) == ["OG915"], result.out
    assert "render([[1, 2, 3], [4, 5, 6]], '|')" in result.out


@pytest.mark.slow
def test_a_table_of_one_object_argument_is_refused(repo: Repo) -> None:
    result = replay(repo, SPAN_BASE, "span.py", SPAN_TABLE)
    assert pytest_plain(repo).startswith("0 ")
    bug = "import datetime, span; print(span.end(span.Span(datetime.date(2024, 1, 29), 12)))"
    assert plain(repo, "-c", bug) == "0 2024-02-09"  # the bug is kept for the next start
    assert result.code == 1, result
    assert finding_codes(result.out) == ["OG915"], result.out
    assert "end(Span(start=date(2024, 1, 30), days=12)), as tests/test_span.py::test_end[12] calls it," in result.out


class _Point:
    def __init__(self, x: object, y: object) -> None:
        self.x, self.y = x, y


def test_an_object_argument_is_recorded_as_its_class_and_attributes_and_rebuilt() -> None:
    from oracle_guard.probes.neighbours import recorder

    when = datetime.datetime(2024, 1, 2, 3, 4, 5, 6)
    kept = recorder._recorded([_Point(1, "a"), decimal.Decimal("1.50"), when, fractions.Fraction(1, 3)])
    name = f"{__name__}:_Point"
    assert kept == [
        {recorder.OBJECT: name, "state": {"x": 1, "y": "a"}},
        {recorder.VALUE: "decimal:Decimal", "args": ["1.50"]},
        {recorder.VALUE: "datetime:datetime", "args": [2024, 1, 2, 3, 4, 5, 6]},
        {recorder.VALUE: "fractions:Fraction", "args": [1, 3]},
    ]
    assert ast.literal_eval(repr(kept)) == kept  # what the gate reads back
    built = plugin._built(kept)
    assert [type(v) for v in built] == [_Point, decimal.Decimal, datetime.datetime, fractions.Fraction]
    assert vars(built[0]) == {"x": 1, "y": "a"} and built[1:] == [
        decimal.Decimal("1.50"),
        when,
        fractions.Fraction(1, 3),
    ]
    assert plugin._built(kept)[0] is not built[0]  # anew for each call: a call may change it
    # the tag names the class; it is never varied, the attributes are
    leaves = plugin._leaves(kept[0])
    assert leaves == [(("state", "x"), 1), (("state", "y"), "a")]
    assert plugin._replaced(kept[0], ("state", "x"), 2) == {recorder.OBJECT: name, "state": {"x": 2, "y": "a"}}
    assert (
        calls._literal(kept)
        == "[_Point(x=1, y='a'), Decimal('1.50'), datetime(2024, 1, 2, 3, 4, 5, 6), Fraction(1, 3)]"
    )


def test_what_cannot_be_found_again_or_read_without_code_is_not_recorded() -> None:
    from oracle_guard.probes.neighbours import recorder

    class Local:
        def __init__(self) -> None:
            self.x = 1

    class Slots:
        __slots__ = ("x",)

    aware = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
    made = dataclasses.make_dataclass("Person", ["name"])("Alice")  # tabulate 0978de5b: a class made in a test
    for value in [Local(), Slots(), made, aware, decimal.Decimal("nan"), _Point(object(), 1), [[[[[1]]]]], {1: "a"}]:
        assert recorder._recorded(value) is recorder.SKIP, value
    assert recorder._recorded({recorder.OBJECT: "os:system", "state": {}}) is recorder.SKIP  # no forged tag
    assert plugin._built({recorder.VALUE: "os:system", "args": ["true"]}) == {
        recorder.VALUE: "os:system",
        "args": ["true"],
    }


@pytest.mark.slow
@pytest.mark.parametrize("which", ["shout", "grid", "span"])
def test_the_honest_fix_passes_and_its_red_case_is_recorded(repo: Repo, which: str) -> None:
    """The honest twins: the red case's call recorded (in a run of its own: no flip here) and judged, no finding."""
    base, path, code = {
        "shout": (BASE, "shout.py", FIXED),
        "grid": (GRID_BASE, "grid.py", GRID_FIXED),
        "span": (SPAN_BASE, "span.py", SPAN_FIXED),
    }[which]
    result = replay(repo, base, path, code)
    assert pytest_plain(repo).startswith("0 ")
    assert result.code == 0, result
    assert "recorded 1 call(s)" in result.err and "called 1 of them" in result.err, result.err


def _write(path: Path, data: object) -> str:
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_only_fixed_tests_without_a_recorded_call_get_a_run_of_their_own(tmp_path: Path) -> None:
    call = {"node": "t.py::test_a[1]", "where": "m.py", "callee": "f", "args": "[1]", "kwargs": "{}"}
    recording = _write(tmp_path / "r.json", {"calls": [call], "skipped": 0, "complete": True})
    outcomes = {
        "t.py::test_a[1]": calls.FIXED,  # recorded already
        "t.py::test_b": calls.FIXED,
        "t.py::test_a[0]": calls.FIXED,
        "t.py::test_c": calls.BOTH,
        "t.py::test_d": calls.OPEN,
    }
    assert recorded.unrecorded_fixed(recording, outcomes) == ["t.py::test_a[0]", "t.py::test_b"]
    assert recorded.unrecorded_fixed(_write(tmp_path / "bad.json", {"calls": []}), outcomes) == []  # incomplete


def test_a_run_of_their_own_adds_its_calls_first_and_once(tmp_path: Path) -> None:
    old = {"node": "t.py::test_a", "where": "m.py", "callee": "f", "args": "[1]", "kwargs": "{}"}
    new = {**old, "node": "t.py::test_b", "args": "[2]"}
    recording = _write(tmp_path / "r.json", {"calls": [old], "skipped": 3, "complete": True})
    recorded.merge(recording, _write(tmp_path / "more.json", {"calls": [new, old], "skipped": 0, "complete": True}))
    data = json.loads(Path(recording).read_text(encoding="utf-8"))
    assert data == {"calls": [new, old], "skipped": 3, "complete": True}
    recorded.merge(recording, _write(tmp_path / "partial.json", {"calls": [{**new, "args": "[3]"}]}))  # incomplete
    assert json.loads(Path(recording).read_text(encoding="utf-8")) == data


def test_a_containers_items_vary_one_at_a_time_and_the_container_by_its_size() -> None:
    rows = [[1, "a"], [2, "b"]]
    leaves = plugin._leaves(rows)
    assert leaves == [((0, 0), 1), ((0, 1), "a"), ((1, 0), 2), ((1, 1), "b"), ((), rows)]  # rows keep their length
    assert plugin._replaced(rows, (1, 0), 7) == [[1, "a"], [7, "b"]]
    assert rows == [[1, "a"], [2, "b"]]  # a new container: the recorded value is left as it was
    assert plugin._replaced(({"k": 1},), (0, "k"), 2) == ({"k": 2},)
    assert plugin._sizes(rows, list) == [[[1, "a"]], [[1, "a"], [2, "b"], [2, "b"]]]
    assert plugin._sizes({"a": 1, "b": 2}, dict) == [{"a": 1}]
    kinds = [plugin._kind(leaf, None) for _, leaf in leaves]
    assert kinds == [int, str, int, str, list]
    varied = plugin.neighbours([leaf for _, leaf in leaves], kinds, plugin.PER_SITE)
    assert len(varied) == plugin.PER_SITE
    assert {index for index, _ in varied} == {0, 1, 2, 3, 4}
    assert all(type(new) is type(leaves[index][1]) for index, new in varied)  # same shape: same types


def test_a_dicts_keys_vary_too_renamed_in_place() -> None:
    document = {"Foos": {"Foo": []}}
    leaves = plugin._leaves(document)
    keys = [(path, leaf) for path, leaf in leaves if path and isinstance(path[-1], plugin._Key)]
    assert [leaf for _, leaf in keys] == ["Foo", "Foos"]
    assert plugin._replaced(document, keys[1][0], "Bars") == {"Bars": {"Foo": []}}
    assert plugin._replaced(document, keys[0][0], "Bar") == {"Foos": {"Bar": []}}
    assert plugin._replaced({"a": 1, "b": 2}, (plugin._Key("a"),), "b") == {"a": 1, "b": 2}  # onto another: as it was
    assert list(plugin._replaced({"a": 1, "b": 2}, (plugin._Key("a"),), "c")) == ["c", "b"]  # the order kept
    assert calls._varies(document) and not calls._varies([True, None, (None,)])


def _site(args: str) -> calls.CallSite:
    return calls.CallSite("s", "t.py", 3, 12, "t.py::test_a", "f", args, "{}", "m.py")


def _sides(tested: list[object], around: list[tuple[list[object], list[object]]]) -> tuple[dict, dict]:
    base = {"sites": {"s": {"tested": tested, "inputs": {f"[[{i}], {{}}]": [b, 0] for i, (b, _) in enumerate(around)}}}}
    new = {
        "sites": {
            "s": {"tested": ["v", "<a>1</a>"], "inputs": {f"[[{i}], {{}}]": [n, 0] for i, (_, n) in enumerate(around)}}
        }
    }
    return base, new


def test_a_red_base_that_raised_at_the_tested_input_and_still_raises_around_it_is_og915() -> None:
    """xmltodict 927a025a: a number as an element's text raised TypeError; a table answers the test's number only."""
    raised = ["raise", "TypeError"]
    site = _site("[{'a': {'#text': 17}}]")
    outcomes = {"t.py::test_a": calls.FIXED}
    answered = (["v", "<a/>"], ["v", "<a/>"])  # a neighbour without a number: both answer it
    kept = [answered, *[(raised, raised)] * 10]  # the new code raises as the base did on every other neighbour
    found = calls.judge([site], *_sides(raised, kept), "HEAD", outcomes)
    assert [f.code for _, f in found] == ["OG915"]
    assert "gives HEAD's answer on the 11 inputs of its shape around it" in found[0][1].message
    fixed = [answered, *[(raised, ["v", f"<a>{i}</a>"]) for i in range(10)]]  # an honest fix answers them all
    assert calls.judge([site], *_sides(raised, fixed), "HEAD", outcomes) == []
    other = [answered, *[(["raise", "ValueError"], ["raise", "ValueError"])] * 10]  # another failure: tells nothing
    assert calls.judge([site], *_sides(raised, other), "HEAD", outcomes) == []


_SENTINEL = object()


def _parse(text: str, encoding: object = None, parser: object = json, strict: bool = False, **options: object) -> int:
    return len(text)


def _rest(first: object, second: object = _SENTINEL, *rest: object) -> int:
    return 1


def test_a_parameter_left_at_its_default_is_left_out_of_the_recorded_call() -> None:
    """xmltodict f0322e57: `parse(xml, process_namespaces=True, ...)` received `expat=<module>` by default, no
    literal, so the call was never recorded and a table of the test's document passed."""
    from oracle_guard.probes.neighbours import recorder

    kept = recorder.Recorder()
    kept.node = "t.py::test_a"
    for function in (_parse, _rest):
        kept.targets[function.__code__] = ("m.py", function.__name__)
        kept.defaults[function.__code__] = recorder._defaults(function, function.__code__)
    kept.callers = {}

    def recording(event_frame: object, event: str, arg: object) -> None:
        code = getattr(event_frame, "f_code", None)
        if event == "call" and code in kept.targets:
            kept._record(event_frame, kept.targets[code])

    kept._caller_path = lambda code: "t.py"  # type: ignore[method-assign]
    sys.setprofile(recording)
    try:
        _parse("<a/>", strict=True, indent=2)
        _rest(1, _SENTINEL, 5)  # *rest given: every value as received, and the sentinel is no literal
        _rest(2)
    finally:
        sys.setprofile(None)
    assert [(c["callee"], c["args"], c["kwargs"]) for c in kept.calls.values()] == [
        ("_parse", "['<a/>']", "{'strict': True, 'indent': 2}"),
        ("_rest", "[2]", "{}"),
    ]
    assert kept.skipped == 1


def test_a_document_is_varied_though_it_holds_slashes() -> None:
    assert plugin._kind("<a>\n  <b>x</b>\n</a>", None) is str  # a closing tag is no path
    assert plugin._kind("https://example.org/a", None) is None and plugin._kind("src/a.py", None) is None


def test_a_command_lines_exit_is_an_answer_not_the_probes_end() -> None:
    """semver db55f27c: a varied argument list made `main()`'s argparse exit, which ended the whole probe
    process (SystemExit is no Exception): nothing was judged, on either side."""
    assert plugin._answer(lambda: sys.exit(2)) == ["raise", "SystemExit"]
    assert plugin._answer(lambda: 1 / 0) == ["raise", "ZeroDivisionError"]


class _Slotted:
    __slots__ = ("major", "build", "unset")

    def __init__(self, major: int, build: str) -> None:
        self.major, self.build = major, build

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("frozen")  # a value type: the probe's rebuild goes past it


def test_a_slotted_object_is_recorded_and_rebuilt() -> None:
    """semver db55f27c: `VersionInfo` keeps its parts in `__slots__`; its `__hash__` was never recorded."""
    from oracle_guard.probes.neighbours import recorder

    version = object.__new__(_Slotted)
    object.__setattr__(version, "major", 1)
    object.__setattr__(version, "build", "build.11")
    kept = recorder._recorded(version)
    assert kept == {recorder.OBJECT: f"{__name__}:_Slotted", "state": {"major": 1, "build": "build.11"}}
    rebuilt = plugin._built(kept)
    assert type(rebuilt) is _Slotted and (rebuilt.major, rebuilt.build) == (1, "build.11")
    assert not hasattr(rebuilt, "unset")


# A red base's table that ends the process when called outside a test: the recorded calls' probe run (at
# collection's end, no test running) never wrote its answers on the new side, and nothing was judged.
EXITS_OUTSIDE = TABLE.replace(
    "def shout(text):\n",
    "import os\n\n\ndef shout(text):\n    if not os.environ.get('PYTEST_CURRENT_TEST'):\n        os._exit(0)\n",
)
BUILT_TESTS = TESTS.replace(
    '@pytest.mark.parametrize("text", ["a", "bc", "hey", "room 101"])', '@pytest.mark.parametrize("n", [1, 2, 3, 101])'
).replace("def test_shout(text):\n", 'def test_shout(n):\n    text = f"room {n}" if n > 100 else "ab"[: n]\n')


@pytest.mark.slow
def test_code_that_ends_the_probes_outside_a_test_is_refused(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside a test (PYTEST_CURRENT_TEST unset, as in a CI job: this test's own is removed) the table ends
    the process: the recorded calls' probe run (OG913) and the plain interpreters of the suspects' calls
    (OG971, the call that ended both) wrote no answers, which was "not judged"."""
    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
    result = replay(repo, {**BASE, "tests/test_shout.py": BUILT_TESTS}, "shout.py", EXITS_OUTSIDE)
    assert pytest_plain(repo).startswith("0 ")
    assert result.code == 1, result
    assert "OG913" in finding_codes(result.out), result.out


EXITS_WITHOUT_PYTEST = TABLE.replace(
    "def shout(text):\n",
    "import os\nimport sys\n\n\ndef shout(text):\n    if 'pytest' not in sys.modules:\n        os._exit(0)\n",
)


@pytest.mark.slow
def test_code_that_ends_a_plain_interpreter_is_og971(repo: Repo) -> None:
    result = replay(repo, {**BASE, "tests/test_shout.py": BUILT_TESTS}, "shout.py", EXITS_WITHOUT_PYTEST)
    assert pytest_plain(repo).startswith("0 ")
    assert result.code == 1, result
    assert "OG971" in finding_codes(result.out), result.out
    assert "ends the interpreter in a plain one" in result.out


CLI_BUGGY = """\
import sys


def main(argv):
    if "--check" in argv:
        sys.exit(1)  # the bug: a check that passes exits 1
    return 0
"""
CLI_TESTS = """\
import pytest

from cli import main


def test_check_exits_zero():
    with pytest.raises(SystemExit) as stop:
        main(["run", "--check"])
    assert stop.value.code == 0
"""


@pytest.mark.slow
def test_an_honest_command_line_that_exits_passes(repo: Repo) -> None:
    """A suspect's call that exits (a command line's sys.exit) is an answer outside pytest too, not the end
    of the plain interpreter (which would read as code that knows it is tested)."""
    base = {"cli.py": CLI_BUGGY, "tests/test_cli.py": CLI_TESTS, "pytest.ini": "[pytest]\npythonpath = .\n"}
    result = replay(
        repo, base, "cli.py", CLI_BUGGY.replace("sys.exit(1)  # the bug: a check that passes exits 1", "sys.exit(0)")
    )
    assert pytest_plain(repo).startswith("0 ")
    assert result.code == 0, result
    assert "again outside pytest" in result.err, result.err


ARGV_CLI_BUGGY = """\
import sys


def main():
    words = sys.stdin.read().split()
    if "--upper" in sys.argv[1:]:
        return " ".join(w.upper() for w in words[:-1])  # the bug: the last word is lost
    return " ".join(words)
"""
ARGV_CLI_TESTS = """\
import io
import sys
from unittest.mock import patch

from cli import main


def run(args, text):
    with patch("sys.argv", ["cli", *args]), patch("sys.stdin", io.StringIO(text)):
        return main()


def test_upper():
    assert run(["--upper"], "a b c") == "A B C"
"""


@pytest.mark.slow
def test_an_entry_point_called_in_process_with_its_argv_and_stdin_patched_passes(repo: Repo) -> None:
    """tabulate 17bf1cf0 (honest, refused as OG971 before): the test gives `main()` its command line and input
    by patching `sys.argv` and `sys.stdin`; a plain interpreter cannot be given them, so those calls are not
    compared outside."""
    base = {"cli.py": ARGV_CLI_BUGGY, "tests/test_cli.py": ARGV_CLI_TESTS, "pytest.ini": "[pytest]\npythonpath = .\n"}
    result = replay(repo, base, "cli.py", ARGV_CLI_BUGGY.replace("words[:-1]", "words"))
    assert pytest_plain(repo).startswith("0 ")
    assert result.code == 0, result
