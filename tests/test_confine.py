"""The change's code runs confined (repo/confine): it cannot write where the gate or the base reads, nor signal them.

Each cheat ships a bug plain pytest does not see (shown) and, from the new code, reaches past its own
tree: the base tree, the gate's cache, site-packages, the gate's own process.  Unconfined (the barrier
alone, ``ORACLE_GUARD_CONFINE=0``) each reach is shown to land; confined it does not, and the change is
refused by a finding.  Honest suites that write in tmp_path and their own folder, spawn and reap
subprocesses, serve on localhost and use pytest's cache pass confined.

These hold on Linux with Landlock (this kernel: ABI 7), as CI's runners have; the first test says so.
"""

from __future__ import annotations

import os
import signal
import site
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

from oracle_guard.commands import check
from oracle_guard.hook_ids import replay as replay_hook
from oracle_guard.repo.confine import jail as confine
from oracle_guard.repo.confine import landlock
from oracle_guard.reporting.report import UsageError
from tests.helpers import Repo, project_python
from tests.test_replay_flips import ALWAYS_EQUAL, BASE, HONEST, TOUCHED, plain_pytest

CHECK = ("--replay", "--only", "oracle-replay", "--base", "HEAD")


@pytest.fixture(autouse=True)
def _project_python(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    project_python(monkeypatch, tmp_path / "xdg")
    monkeypatch.delenv(confine.SWITCH, raising=False)


def unconfined(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(confine.SWITCH, "0")


def test_this_system_has_landlock() -> None:
    assert sys.platform.startswith("linux")
    assert landlock.abi() >= 1
    assert str(confine.ground()) == f"confined (Landlock ABI {landlock.abi()})"


# -- the launcher, on folders that stand for the trees ------------------------------------------------


@pytest.fixture
def jail(tmp_path: Path) -> Iterator[tuple[confine.Jail, Path]]:
    tree = tmp_path / "new"
    tree.mkdir()
    result = tmp_path / "work" / "run-new.tsv"
    result.parent.mkdir()
    started = confine.Jail(str(tree), files=[str(result)], quiet=True)
    yield started, tmp_path
    started.close()


def run_in(jail: tuple[confine.Jail, Path], code: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    started, tmp = jail
    cmd, env = started.command([sys.executable, "-c", code], dict(os.environ))
    return subprocess.run(cmd, cwd=cwd or tmp / "new", env=env, capture_output=True, text=True, timeout=60)


def test_a_confined_process_writes_its_tree_its_result_and_its_tmpdir(jail: tuple[confine.Jail, Path]) -> None:
    code = (
        "import os, tempfile\n"
        "open('own.txt', 'w').write('x')\n"
        "os.makedirs('a/b'); os.rename('own.txt', 'a/b/moved.txt')\n"
        "open(os.path.join('..', 'work', 'run-new.tsv'), 'w').write('done')\n"
        "with tempfile.NamedTemporaryFile(dir=None) as f: f.write(b'y')\n"
        "print(tempfile.gettempdir())\n"
        "open('/dev/null', 'w').write('z')\n"
    )
    done = run_in(jail, code)
    assert done.returncode == 0, done.stderr
    started, tmp = jail
    assert (tmp / "new" / "a" / "b" / "moved.txt").read_text() == "x"
    assert (tmp / "work" / "run-new.tsv").read_text() == "done"
    assert done.stdout.strip() == started.tmp  # a private TMPDIR


WHERE_THE_GATE_READS = {
    "the base tree": "base/conftest.py",
    "the gate's cache": "cache/replay/entry.json",
    "site-packages": "site-packages/evil.pth",
    "beside its result file": "work/other.tsv",
}


@pytest.mark.parametrize("where", list(WHERE_THE_GATE_READS))
def test_a_confined_process_cannot_write_where_the_gate_reads(jail: tuple[confine.Jail, Path], where: str) -> None:
    target = jail[1] / WHERE_THE_GATE_READS[where]
    target.parent.mkdir(parents=True, exist_ok=True)
    done = run_in(jail, f"open({str(target)!r}, 'w').write('planted')")
    assert done.returncode == 1 and "PermissionError" in done.stderr, done.stderr
    assert not target.exists()
    # The same process unconfined: the write lands.
    plain = subprocess.run([sys.executable, "-c", f"open({str(target)!r}, 'w').write('planted')"], check=False)
    assert plain.returncode == 0 and target.read_text() == "planted"


def _signalled() -> tuple[list[int], object]:
    got: list[int] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        got.append(signum)

    return got, signal.signal(signal.SIGUSR1, handler)


def test_a_confined_process_cannot_signal_the_gate_but_its_own_children(jail: tuple[confine.Jail, Path]) -> None:
    got, previous = _signalled()
    try:
        code = (
            "import os, signal, subprocess, sys\n"
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])\n"
            "child.send_signal(signal.SIGTERM); assert child.wait() == -signal.SIGTERM\n"
            "try:\n"
            "    os.kill(os.getppid(), signal.SIGUSR1)\n"
            "except PermissionError:\n"
            "    print('refused')\n"
        )
        done = run_in(jail, code)
        assert (done.returncode, done.stdout.strip()) == (0, "refused"), done.stderr
        plain = subprocess.run([sys.executable, "-c", "import os, signal; os.kill(os.getppid(), signal.SIGUSR1)"])
        assert plain.returncode == 0
        assert got == [signal.SIGUSR1]  # only the unconfined one reached the gate
    finally:
        signal.signal(signal.SIGUSR1, previous)  # type: ignore[arg-type]


def test_a_confined_process_cannot_reach_the_gates_abstract_socket(jail: tuple[confine.Jail, Path]) -> None:
    name = f"\0oracle-guard-test-{uuid.uuid4().hex}"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(name)
    server.listen()
    try:
        code = f"import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect({name!r})\n"
        done = run_in(jail, code)
        assert done.returncode == 1 and "PermissionError" in done.stderr, done.stderr
        assert subprocess.run([sys.executable, "-c", code]).returncode == 0
    finally:
        server.close()


def test_a_confined_process_serves_on_localhost_and_on_a_socket_in_its_tree(jail: tuple[confine.Jail, Path]) -> None:
    code = (
        "import socket, threading\n"
        "s = socket.create_server(('127.0.0.1', 0))\n"
        "threading.Thread(target=lambda: s.accept()[0].sendall(b'hi'), daemon=True).start()\n"
        "assert socket.create_connection(s.getsockname()).recv(2) == b'hi'\n"
        "u = socket.socket(socket.AF_UNIX); u.bind('sock'); u.listen()\n"
        "c = socket.socket(socket.AF_UNIX); c.connect('sock')\n"
        "import multiprocessing\n"
        "multiprocessing.Lock()\n"  # a semaphore in /dev/shm
    )
    done = run_in(jail, code)
    assert done.returncode == 0, done.stderr


def test_the_launcher_never_runs_the_command_unconfined(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    cmd = [sys.executable, "-I", "-S", landlock.__file__, "--write", str(tmp_path / "missing"), "--"]
    done = subprocess.run([*cmd, sys.executable, "-c", f"open({str(marker)!r}, 'w')"], capture_output=True, text=True)
    assert done.returncode == landlock.RESTRICT_FAILED, done
    assert "could not be confined" in done.stderr and not marker.exists()


def test_a_confined_process_keeps_no_inherited_descriptor(jail: tuple[confine.Jail, Path]) -> None:
    """Landlock governs what a process opens, not what it holds: a descriptor of the gate's inherited by the
    confined command (a caller's pass_fds) would let it write where no rule grants; the launcher closes it."""
    started, tmp = jail
    gate_file = tmp / "work" / "gate.json"
    write = "import os, sys\nos.write(int(sys.argv[1]), b'planted')\n"
    for confined in (False, True):
        with open(gate_file, "wb") as held:
            cmd = [sys.executable, "-c", write, str(held.fileno())]
            env = dict(os.environ)
            if confined:
                cmd, env = started.command(cmd, env)
            done = subprocess.run(
                cmd, cwd=tmp / "new", env=env, pass_fds=(held.fileno(),), capture_output=True, text=True, timeout=60
            )
        if confined:
            assert done.returncode != 0 and "Bad file descriptor" in done.stderr, done
            assert gate_file.read_bytes() == b""
        else:  # the same process unconfined: the inherited descriptor writes
            assert done.returncode == 0 and gate_file.read_bytes() == b"planted", done


def test_the_launcher_keeps_a_socket_it_is_told_to_and_never_a_file(jail: tuple[confine.Jail, Path]) -> None:
    """A probe's receipt socket (probes/receipts.py) is handed on with --keep; a file named to --keep is still
    closed: the launcher keeps only sockets, so --keep opens no way to write outside the grants."""
    import socket

    started, tmp = jail
    gate_file = tmp / "work" / "kept.json"
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    write = "import os, sys\nos.write(int(sys.argv[1]), b'receipt')\nos.write(int(sys.argv[2]), b'planted')\n"
    with mine, theirs, open(gate_file, "wb") as held:
        fds = (theirs.fileno(), held.fileno())
        cmd, env = started.command([sys.executable, "-c", write, *map(str, fds)], dict(os.environ), keep=fds)
        done = subprocess.run(cmd, cwd=tmp / "new", env=env, pass_fds=fds, capture_output=True, text=True, timeout=60)
        assert mine.recv(100) == b"receipt"  # the socket was kept
    assert done.returncode != 0 and "Bad file descriptor" in done.stderr, done  # the file was not
    assert gate_file.read_bytes() == b""


def test_a_missing_program_is_an_error_at_the_start(jail: tuple[confine.Jail, Path]) -> None:
    with pytest.raises(FileNotFoundError):
        jail[0].command([str(jail[1] / "no-such-python"), "-c", "pass"], dict(os.environ))


def test_unconfined_the_command_is_left_as_it_is_and_says_why(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    unconfined(monkeypatch)
    assert str(confine.ground()) == f"unconfined: barrier only ({confine.SWITCH}=0)"
    started = confine.Jail(str(tmp_path), quiet=True)
    env = {"A": "1"}
    assert started.command(["python3", "-c", "pass"], env) == (["python3", "-c", "pass"], env)
    confine.begin()
    with pytest.raises(UsageError, match="--require-confinement: the change's code cannot be confined here"):
        confine.require()
    confine.begin()


# -- through the gate, on real repositories --------------------------------------------------------

PLANT = """

import os as _os

_target = TARGET
if _os.path.basename(_os.getcwd()) == "new":
    try:
        with open(_target, "w") as _f:
            _f.write("import os\\n")
    except OSError:
        pass  # confined: the bug stays, the write is refused
"""
AGREEING = "import shop\nshop.price = lambda cents: type('T', (str,), {'__eq__': lambda s, o: True})('')\n"


def _plant(target: str) -> str:
    return ALWAYS_EQUAL + PLANT.replace("TARGET", target)


@pytest.mark.slow
def test_new_code_that_writes_the_base_tree_is_refused_confined_and_breaks_the_gate_unconfined(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = '_os.path.join(_os.path.dirname(_os.getcwd()), "base", "conftest.py")'
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": _plant(target)})
    assert plain_pytest(repo) == 0  # the bug: every price compares equal
    confined = repo.hook(check.main, *CHECK)
    assert confined.code == 1 and "OG911" in confined.out, confined  # the flip run convicts
    assert "confined (Landlock ABI" in confined.err
    unconfined(monkeypatch)
    barrier_only = repo.hook(check.main, *CHECK)
    # Written, and noticed only after the fact: never a pass (today exit 2, "nothing was judged").
    assert barrier_only.code != 0 and "base/conftest.py" in barrier_only.out + barrier_only.err, barrier_only
    assert "unconfined: barrier only" in barrier_only.err


@pytest.mark.slow
def test_new_code_that_writes_the_gates_cache_or_site_packages_lands_only_unconfined(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cache = tmp_path / "gate-cache"
    cache.mkdir()
    monkeypatch.setenv("ORACLE_GUARD_CACHE", str(cache))
    planted_cache = cache / "planted.json"
    planted_site = Path(site.getsitepackages()[0]) / f"oracle_guard_confine_{uuid.uuid4().hex}.pth"
    plant = _plant(repr(str(planted_cache))) + PLANT.replace("TARGET", repr(str(planted_site)))
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": plant})
    assert plain_pytest(repo) == 0
    try:
        confined = repo.hook(check.main, *CHECK)
        assert confined.code == 1 and "OG911" in confined.out, confined
        assert not planted_cache.exists() and not planted_site.exists()
        unconfined(monkeypatch)
        barrier_only = repo.hook(check.main, *CHECK)
        assert planted_cache.exists() and planted_site.exists()  # the gate's cache and the interpreter, written
        assert barrier_only.code != 0 and "changed" in barrier_only.out + barrier_only.err, barrier_only
    finally:
        planted_site.unlink(missing_ok=True)


SIGNALS_THE_GATE = """

import os as _os
import signal as _signal

if _os.path.basename(_os.getcwd()) == "new":
    try:
        _os.kill(_os.getppid(), _signal.SIGUSR1)
    except OSError:
        pass
"""


@pytest.mark.slow
def test_new_code_cannot_signal_the_gate_confined(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": HONEST["refactor"] + SIGNALS_THE_GATE})
    got, previous = _signalled()  # SIGUSR1's default action would end the gate
    try:
        confined = repo.hook(replay_hook.main, "--base", "HEAD")
        assert (confined.code, got) == (0, []), confined
        unconfined(monkeypatch)
        repo.hook(replay_hook.main, "--base", "HEAD")
        assert signal.SIGUSR1 in got  # the gate was reached
    finally:
        signal.signal(signal.SIGUSR1, previous)  # type: ignore[arg-type]


HONEST_SUITE = """
import os
import socket
import subprocess
import sys
import threading


def test_writes_its_tree_and_tmp(tmp_path):
    open("out.txt", "w").write("x")
    (tmp_path / "a").write_text("y")
    assert open("out.txt").read() == "x" and (tmp_path / "a").read_text() == "y"


def test_spawns_and_reaps():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    child.kill()
    assert child.wait() != 0
    assert subprocess.run([sys.executable, "-c", "print(2)"], capture_output=True, text=True).stdout == "2\\n"


def test_serves_on_localhost():
    server = socket.create_server(("127.0.0.1", 0))
    threading.Thread(target=lambda: server.accept()[0].sendall(b"ok"), daemon=True).start()
    assert socket.create_connection(server.getsockname()).recv(2) == b"ok"


def test_uses_pytests_cache(cache):
    cache.set("shop/seen", [1])
    assert cache.get("shop/seen", None) == [1]


def test_keeps_a_library_cache():
    # Where platformdirs and most libraries keep theirs: a private, empty folder confined (HOME is read-only).
    folder = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "shop-test")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "seen"), "w") as f:
        f.write("x")
    assert os.listdir(folder) == ["seen"]


def test_takes_a_multiprocessing_lock():
    import multiprocessing

    lock = multiprocessing.Lock()  # a POSIX semaphore in /dev/shm, unlinked at once
    with lock:
        assert not lock.acquire(block=False)
"""


@pytest.mark.slow
@pytest.mark.parametrize("confined", [True, False], ids=["confined", "unconfined"])
def test_an_honest_suite_passes_and_the_output_says_its_ground(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, confined: bool
) -> None:
    if not confined:
        unconfined(monkeypatch)
    repo.change(
        {**BASE, "tests/test_io.py": HONEST_SUITE},
        {**TOUCHED, "src/shop/__init__.py": HONEST["refactor"], "tests/test_io.py": HONEST_SUITE + "\n# touched\n"},
    )
    got = repo.hook(check.main, *CHECK)
    if confined:  # every test ran and passed on both sides, the cache's too (unconfined it is off: red on both)
        assert "passed at HEAD" in got.err and " failed at HEAD" not in got.err, got.err
    ground = (
        f"confined (Landlock ABI {landlock.abi()})" if confined else f"unconfined: barrier only ({confine.SWITCH}=0)"
    )
    not_run = (
        "forbid-skip-marks, forbid-runtime-skip, oracle-shrink, fixture-lock-verify, properties-monotonic,"
        " quarantine-untouched, contract-split, forbid-test-aware-code and collection-snapshot (not in --only)"
    )
    red = "" if confined else "; 0 of 1 test red at HEAD now pass; 1 still red"  # the cache's test, off unconfined
    assert (got.code, got.out.strip()) == (
        0,
        f"oracle-guard: all checks passed (the replay against HEAD; the change's code ran {ground}; not run: {not_run}){red}",
    ), got
    as_json = repo.hook(check.main, *CHECK, "--format", "json")
    assert as_json.code == 0 and f'"ground": "{ground}"' in as_json.out, as_json


@pytest.mark.slow
def test_require_confinement_is_exit_2_only_where_there_is_none(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": HONEST["refactor"]})
    assert repo.hook(check.main, *CHECK, "--require-confinement").code == 0
    unconfined(monkeypatch)
    for main, argv in ((check.main, CHECK), (replay_hook.main, ("--base", "HEAD"))):
        got = repo.hook(main, *argv, "--require-confinement")
        assert got.code == 2 and "--require-confinement: the change's code cannot be confined here" in got.err, got


@pytest.mark.slow
def test_the_hooks_collection_runs_the_changes_conftest_confined(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from oracle_guard.hook_ids import collection_snapshot
    from tests.test_collection_snapshot import BASELINE, PY, SNAP, TEST_A, TEST_B, format_snapshot

    repo.write("tests/test_a.py", TEST_A, dedent=False)
    repo.write("tests/test_b.py", TEST_B, dedent=False)
    repo.write(SNAP, format_snapshot(BASELINE))
    repo.commit("baseline")
    planted = tmp_path / "planted-by-collection"
    plant = f"try:\n    open({str(planted)!r}, 'w').write('x')\nexcept OSError:\n    pass\n"
    repo.write("tests/conftest.py", plant, dedent=False)
    assert repo.staged_hook(collection_snapshot.main, *PY).code == 0
    assert not planted.exists()  # confined: the conftest could not write outside the collection's folder
    unconfined(monkeypatch)
    assert repo.staged_hook(collection_snapshot.main, *PY).code == 0
    assert planted.exists()  # the same collection unconfined: the write lands


def test_one_commands_require_confinement_is_not_the_next_commands(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    # Commands run one after another in one process (tests, a caller's script): --require-confinement given to one
    # held for the next collection hook, which has no such option (CI ran the suite serially and met it).
    from oracle_guard.hook_ids import collection_snapshot
    from tests.test_collection_snapshot import BASELINE, PY, SNAP, TEST_A, TEST_B, format_snapshot

    repo.write("tests/test_a.py", TEST_A, dedent=False)
    repo.write("tests/test_b.py", TEST_B, dedent=False)
    repo.write(SNAP, format_snapshot(BASELINE))
    repo.commit("baseline")
    unconfined(monkeypatch)
    required = repo.hook(check.main, "--base", "HEAD", "--require-confinement")
    assert required.code == 2 and "cannot be confined here" in required.err, required
    repo.write("tests/test_a.py", TEST_A + "\n# touched\n", dedent=False)
    got = repo.staged_hook(collection_snapshot.main, *PY)
    assert got.code == 0, got


# -- a launcher that finds Landlock but cannot restrict (a kernel or seccomp policy that refuses it) ---------


@pytest.fixture
def refusing_kernel(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The launcher as on a system whose kernel answers Landlock's probe but refuses landlock_restrict_self."""
    source = Path(landlock.__file__).read_text(encoding="utf-8")
    assert '"restrict_self": 446' in source
    broken = tmp_path / "launcher" / "landlock.py"
    broken.parent.mkdir()
    broken.write_text(source.replace('"restrict_self": 446', '"restrict_self": 4460'), encoding="utf-8")
    monkeypatch.setattr(landlock, "__file__", str(broken))


EXITS_125 = "import os as _os\nif _os.path.basename(_os.getcwd()) == 'new':\n    _os._exit(125)\n"


@pytest.mark.slow
@pytest.mark.usefixtures("refusing_kernel")
def test_a_launcher_that_cannot_restrict_is_a_clear_exit_2_and_no_verdict(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the launcher's exit 125 read as the new code's run: "pytest cannot run the base's tests against the
    new code (exit 125)", OG904 against an honest change, for what the system did."""
    from oracle_guard.hook_ids import collection_snapshot
    from tests.test_collection_snapshot import BASELINE, PY, SNAP, TEST_A, TEST_B, format_snapshot

    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": HONEST["refactor"]})
    got = repo.hook(check.main, *CHECK)
    assert got.code == 2 and got.codes == [], got
    assert "could not confine the change's code on this system" in got.err and "landlock_restrict_self" in got.err
    assert f"{confine.SWITCH}=0" in got.err
    unconfined(monkeypatch)  # what the line offers: the barrier alone judges it
    assert repo.hook(check.main, *CHECK).code == 0
    monkeypatch.delenv(confine.SWITCH)
    repo.commit("refactor")
    repo.write("tests/test_a.py", TEST_A, dedent=False)
    repo.write("tests/test_b.py", TEST_B, dedent=False)
    repo.write(SNAP, format_snapshot(BASELINE))
    repo.commit("snapshot")
    repo.write("tests/test_a.py", TEST_A + "\n# touched\n", dedent=False)
    collected = repo.staged_hook(collection_snapshot.main, *PY)
    assert collected.code == 2 and "could not confine the change's code" in collected.err, collected


@pytest.mark.slow
def test_new_code_that_exits_as_the_launcher_does_is_judged(repo: Repo) -> None:
    """The launcher's word is a file the confined code cannot write, not its exit status: code that exits 125 itself
    under the gate is judged against the change, never read as a system that could not confine it."""
    repo.change(BASE, {**TOUCHED, "src/shop/__init__.py": ALWAYS_EQUAL + EXITS_125})
    assert plain_pytest(repo) == 0  # every price compares equal, and nothing exits outside the gate
    got = repo.hook(check.main, *CHECK)
    assert got.code == 1 and "OG904" in got.codes, got
    assert "could not confine" not in got.err
