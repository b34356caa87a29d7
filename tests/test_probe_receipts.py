"""A probe run's results files are its own process's, told from outside it (probes/receipts.py, probes/kit.py).

Real processes: the run's own reports once and adds up; a forked copy that reports, a copy that
overwrites the file after the report, a second report, and a file no process reported do not.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from oracle_guard.probes import kit, receipts

HOOKS = str(Path(kit.__file__).parents[2])


def run(tmp_path: Path, body: str) -> tuple[str, Path]:
    """BODY run in a process that holds a receipt socket as a probe run does; what the gate says of OUT."""
    out = tmp_path / "out.json"
    channel = receipts.Receipts()
    assert channel.fd is not None
    code = (
        f"import os, sys, time\nsys.path.insert(0, {HOOKS!r})\nfrom oracle_guard.probes import kit\n"
        f"kit.RECEIPTS = {channel.fd}\nOUT = {str(out)!r}\n{body}"
    )
    try:
        proc = subprocess.Popen([sys.executable, "-c", code], pass_fds=[channel.fd])
    finally:
        channel.started()
    assert proc.wait(timeout=60) == 0
    return channel.problem(proc.pid, [str(out)]), out


def test_the_runs_own_single_report_adds_up(tmp_path: Path) -> None:
    problem, out = run(tmp_path, "kit.write_results(OUT, {'records': [1]})\n")
    assert problem == ""
    assert out.read_text() == '{"records": [1]}'


def test_an_honest_run_that_forks_a_worker_which_exits_adds_up(tmp_path: Path) -> None:
    body = (
        "pid = os.fork()\nif pid == 0:\n    os._exit(0)  # a worker (multiprocessing's fork) ends without the session\n"
        "os.waitpid(pid, 0)\nkit.write_results(OUT, {'records': []})\n"
    )
    assert run(tmp_path, body)[0] == ""


def test_a_forked_copy_that_reports_its_own_verdict_does_not_add_up(tmp_path: Path) -> None:
    body = (
        "pid = os.fork()\nif pid == 0:\n    time.sleep(0.2)\n    kit.write_results(OUT, {'copy': 1})\n    os._exit(0)\n"
        "kit.write_results(OUT, {'own': 1})\nos.waitpid(pid, 0)\n"
    )
    problem, out = run(tmp_path, body)
    assert out.read_text() == '{"copy": 1}'  # the copy's verdict is the one in the file
    assert problem.startswith("a process that is not the run's own (pid "), problem


def test_a_copy_that_overwrites_the_file_without_reporting_does_not_add_up(tmp_path: Path) -> None:
    body = (
        "pid = os.fork()\nif pid == 0:\n    time.sleep(0.2)\n    open(OUT, 'w').write('{\"copy\": 1}')\n    os._exit(0)\n"
        "kit.write_results(OUT, {'own': 1})\nos.waitpid(pid, 0)\n"
    )
    assert run(tmp_path, body)[0] == "out.json changed after the run's process reported it"


def test_two_reports_of_one_file_do_not_add_up(tmp_path: Path) -> None:
    body = "kit.write_results(OUT, {'a': 1})\nkit.write_results(OUT, {'a': 1})\n"
    assert run(tmp_path, body)[0] == "out.json was reported 2 times by the run's process"


def test_a_file_no_report_came_for_does_not_add_up(tmp_path: Path) -> None:
    assert (
        run(tmp_path, "open(OUT, 'w').write('{}')\n")[0]
        == "out.json was written, and the run's process never reported it"
    )


def test_no_results_file_is_no_receipt_problem(tmp_path: Path) -> None:
    """A run that wrote nothing is judged as such by its reader (OG913), not here."""
    assert run(tmp_path, "pass\n")[0] == ""


def test_without_a_socket_nothing_is_reported_and_the_file_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kit, "RECEIPTS", None)
    kit.write_results(str(tmp_path / "r.json"), {"x": 1})
    assert (tmp_path / "r.json").read_text() == '{"x": 1}'


def test_a_probe_run_shows_argv_as_python_m_pytest(tmp_path: Path) -> None:
    """kit.look_plain: sys.argv, sys.orig_argv and __main__ as `python -m pytest ARGS` has them."""
    code = (
        f"import sys\nsys.path.insert(0, {HOOKS!r})\nfrom oracle_guard.probes import kit\n"
        "kit.look_plain(['tests/test_a.py'])\nimport __main__\n"
        "print(sys.argv)\nprint(getattr(sys, 'orig_argv', None))\nprint(__main__.__spec__.name, __main__.__file__)\n"
    )
    shown = subprocess.run([sys.executable, "-c", code, "x"], capture_output=True, text=True, check=True).stdout
    plain = subprocess.run(
        [sys.executable, "-c", "import sys; print(sys.argv[0])"], capture_output=True, text=True, check=True
    )
    import pytest as _pytest

    script = os.path.join(os.path.dirname(_pytest.__file__), "__main__.py")
    argv, orig, main = shown.splitlines()
    assert argv == repr([script, "tests/test_a.py"])
    if sys.version_info >= (3, 10):
        assert orig == repr([sys.executable, "-m", "pytest", "tests/test_a.py"])
    assert main == f"pytest.__main__ {script}"
    assert plain.stdout.strip() == "-c"  # what the runner showed before


def test_argv_shows_what_a_user_types_not_the_gates_options() -> None:
    gate = ["-p", "no:cacheprovider", "-q", "--tb=short", "-o", "console_output_style=classic", "-n", "0"]
    assert kit.typed([*gate, "tests/test_a.py::test_b[x-1]", "-p", "no:randomly", "tests/t.py"]) == [
        "tests/test_a.py::test_b[x-1]",
        "tests/t.py",
    ]


def test_an_empty_results_file_is_one_never_written(tmp_path: Path) -> None:
    """The confined run's launcher makes each results file empty beforehand: a run that ends early leaves it so."""
    problem, out = run(tmp_path, "open(OUT, 'w').close()\n")
    assert (problem, out.read_text()) == ("", "")
