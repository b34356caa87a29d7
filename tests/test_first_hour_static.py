"""Issue 21, items 3, 4 and 6, each weakening next to its nearest honest change, on real git repositories.

- a `match=` that matches any message (OG306), an exit handed to atexit (OG201, OG876), an autouse
  fixture that replaces the code the tests check (OG877);
- checks moved into a shared helper that loops over the names it is passed keep their count (no
  OG301), and every approval hint says what to do when the base has no allowed-signers file;
- a fixture path out of the repository is refused by the contract loader for every reader, and an
  approval whose text differs from what was signed only in whitespace or line ends verifies.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from oracle_guard.commands import one_hook
from oracle_guard.commands.approve import main as approve_main
from oracle_guard.commands.explain import main as explain_main
from oracle_guard.contract.approvals import Approvals
from oracle_guard.hook_ids.fixture_lock_verify import main as lock_main
from oracle_guard.hook_ids.properties_monotonic import main as props_main
from oracle_guard.hook_ids.quarantine_untouched import main as quarantine_main
from oracle_guard.reporting import hints
from tests.contract_helpers import CONTRACT, approve, contract_text, fixture_entry, make_key, sha, signers_line
from tests.helpers import Repo, Result, hook
from tests.test_approvals import STATEMENT, load, signed_repo

STATIC = ("--skip", "collection-snapshot")  # the static hooks and the configuration checks; pytest not run


def judged(repo: Repo, before: dict[str, str], after: dict[str, str | None]) -> Result:
    """Commit BEFORE, stage AFTER, run the one-process hook on the staged Python files."""
    return repo.judge_change(one_hook.main, before, after, *STATIC, suffix=".py")


FINDING = re.compile(r"^\S+:\d+:\d+: (OG\d{3}) ", re.M)


def codes(result: Result) -> list[str]:
    """The code of each finding line, sorted (not the summary's)."""
    return sorted(FINDING.findall(result.out))


# -- item 3: a match= that matches any message ---------------------------------------------------

APP = "def parse(x):\n    if x < 0:\n        raise ValueError('negative value given')\n    return x\n"
RAISES = "import re\n\nimport pytest\n\nfrom src.app import parse\n\nPATTERN = {constant}\n\n\ndef test_negative():\n    with pytest.raises(ValueError, match={pattern}):\n        parse(-1)\n"
WARNS = "import warnings\n\nimport pytest\n\n\ndef test_warns():\n    with pytest.warns(UserWarning, match={pattern}):\n        warnings.warn('deprecated call', UserWarning)\n"
UNITTEST = "import unittest\n\nfrom src.app import parse\n\n\nclass TestParse(unittest.TestCase):\n    def test_negative(self):\n        with self.assertRaisesRegex(ValueError, {pattern}):\n            parse(-1)\n"


@pytest.mark.parametrize(
    "template, base, new, expected",
    [
        (RAISES, '"negative value"', '"negative value|"', ["OG306"]),  # an empty alternative
        (RAISES, '"negative value"', '"(negative value)?"', ["OG306"]),  # a group made optional
        (RAISES, '"negative value"', 'r"negative.*|"', ["OG306"]),  # a raw string
        (RAISES, '"negative value"', 're.compile("negative value|")', ["OG306"]),
        (RAISES, '"negative value"', "PATTERN", ["OG306"]),  # a module constant: `"|negative value"`
        (WARNS, '"deprecated"', '"deprecated|"', ["OG306"]),
        (UNITTEST, '"negative value"', '"(?:negative value)*"', ["OG306"]),
        # honest twins: the pattern made more precise, in any spelling
        (RAISES, '"negative value"', '"^negative value given$"', []),
        (RAISES, '"negative value"', 're.compile(r"negative value given")', []),
        (WARNS, '"deprecated"', '"deprecated call"', []),
        (UNITTEST, '"negative value"', '"negative value (given|passed)"', []),
    ],
)
def test_a_match_pattern_that_matches_any_message(
    repo: Repo, template: str, base: str, new: str, expected: list[str]
) -> None:
    constant = '"|negative value"'
    before = {"src/app.py": APP, "tests/test_app.py": template.format(constant=constant, pattern=base)}
    result = judged(repo, before, {"tests/test_app.py": template.format(constant=constant, pattern=new)})
    assert codes(result) == expected, result.out
    if expected:
        assert "which matches any message" in result.out and result.code == 1


# -- item 3: an exit handed to atexit ---------------------------------------------------------------

CONFTEST = "import pytest\n\n\n@pytest.fixture\ndef number():\n    return 1\n"
PASSING = "def test_ok():\n    assert 1 + 1 == 2\n"


@pytest.mark.parametrize(
    "path, added, expected",
    [
        ("tests/conftest.py", "import atexit\nimport os\n\natexit.register(os._exit, 0)\n", ["OG201", "OG876"]),
        (
            "tests/conftest.py",
            "import atexit\nfrom os import _exit as leave\n\n\ndef pytest_sessionfinish(session):\n    atexit.register(leave, 0)\n",
            ["OG201", "OG876"],
        ),
        (
            "tests/conftest.py",
            "import os\nimport threading\n\nthreading.Timer(60, os._exit, args=(0,)).start()\n",
            ["OG201", "OG876"],
        ),
        ("tests/test_a.py", "import atexit\nimport os\n\natexit.register(os._exit, 0)\n", ["OG201"]),
        # honest twins: cleanup at exit
        (
            "tests/conftest.py",
            "import atexit\nimport shutil\n\n\ndef cleanup():\n    shutil.rmtree('build/tmp', ignore_errors=True)\n\n\natexit.register(cleanup)\n",
            [],
        ),
        ("tests/test_a.py", "import atexit\nimport shutil\n\natexit.register(shutil.rmtree, 'build/tmp', True)\n", []),
    ],
)
def test_an_exit_handed_to_atexit(repo: Repo, path: str, added: str, expected: list[str]) -> None:
    before = {"tests/conftest.py": CONFTEST, "tests/test_a.py": PASSING}
    result = judged(repo, before, {path: before[path] + "\n\n" + added})
    assert codes(result) == expected, result.out


# -- item 3: an autouse fixture that replaces the code under test ---------------------------------

SRC = {
    "src/__init__.py": "",
    "src/app.py": "def parse(x):\n    return int(x)\n",
    "src/net.py": "def fetch(url):\n    raise OSError('no network in tests')\n",
    "tests/test_app.py": "from src.app import parse\n\n\ndef test_parse():\n    assert parse('1') == 1\n",
}
AUTOUSE = "import pytest\n{imports}\n\n@pytest.fixture(autouse=True)\ndef {name}({args}):\n{body}"


def autouse(body: str, imports: str = "", name: str = "stand_in", args: str = "monkeypatch") -> str:
    return AUTOUSE.format(imports=imports, name=name, args=args, body=body)


@pytest.mark.parametrize(
    "conftest, expected",
    [
        (autouse("    monkeypatch.setattr(app, 'parse', lambda x: 1)\n", "from src import app\n"), ["OG877"]),
        (autouse("    monkeypatch.setattr('src.app.parse', lambda x: 1)\n"), ["OG877"]),
        (autouse("    mocker.patch('src.app.parse', return_value=1)\n", args="mocker"), ["OG877"]),
        (
            autouse(
                "    with mock.patch.object(app, 'parse', return_value=1):\n        yield\n",
                "from unittest import mock\n\nimport src.app as app\n",
                args="",
            ),
            ["OG877"],
        ),
        # honest twins: the clock, the environment, the network the code uses; a fixture a test asks for
        (autouse("    monkeypatch.setattr(time, 'time', lambda: 0.0)\n", "import time\n", name="frozen_clock"), []),
        (autouse("    monkeypatch.setenv('TZ', 'UTC')\n    monkeypatch.delenv('HTTP_PROXY', raising=False)\n"), []),
        (
            autouse("    monkeypatch.setattr(net, 'fetch', lambda url: '')\n", "from src import net\n", name="offline"),
            [],
        ),
        (
            "import pytest\n\nfrom src import app\n\n\n@pytest.fixture\ndef fake_parse(monkeypatch):\n    monkeypatch.setattr(app, 'parse', lambda x: 1)\n",
            [],
        ),
    ],
)
def test_an_autouse_fixture_that_replaces_the_code_under_test(repo: Repo, conftest: str, expected: list[str]) -> None:
    result = judged(repo, {**SRC, "tests/conftest.py": "import pytest\n"}, {"tests/conftest.py": conftest})
    assert codes(result) == expected, result.out
    if expected:
        assert "replaces `src.app.parse` (src/app.py), which tests/test_app.py checks" in result.out


def test_an_autouse_patch_already_at_the_base_passes(repo: Repo) -> None:
    conftest = autouse("    monkeypatch.setattr(app, 'parse', lambda x: 1)\n", "from src import app\n")
    result = judged(repo, {**SRC, "tests/conftest.py": conftest}, {"tests/conftest.py": "# kept\n" + conftest})
    assert result.code == 0, result.out


# -- item 4: checks moved into a helper that loops over names ----------------------------------------

MAKE = "from types import SimpleNamespace\n\n\ndef make():\n    return SimpleNamespace(name='a', email='e', id=1, total=2)\n\n\n"
TWO_HELPERS = (
    MAKE
    + "def assert_same_user(a, b):\n    assert a.name == b.name\n    assert a.email == b.email\n\n\n"
    + "def assert_same_order(a, b):\n    assert a.id == b.id\n    assert a.total == b.total\n\n\n"
    + "def test_user():\n    assert_same_user(make(), make())\n\n\n"
    + "def test_order():\n    assert_same_order(make(), make())\n"
)
LOOPING = (
    "def assert_same(a, b, names):\n    for name in names:\n        assert getattr(a, name) == getattr(b, name)\n\n\n"
)
STARRED = (
    "def assert_same(a, b, *names):\n    for name in names:\n        assert getattr(a, name) == getattr(b, name)\n\n\n"
)


def calls(user: str, order: str) -> str:
    return f"def test_user():\n    assert_same(make(), make(), {user})\n\n\ndef test_order():\n    assert_same(make(), make(), {order})\n"


@pytest.mark.parametrize(
    "new, expected",
    [
        (MAKE + LOOPING + calls('["name", "email"]', '("id", "total")'), []),
        (MAKE + LOOPING + calls('names=["name", "email"]', 'names={"id", "total"}'), []),
        (MAKE + "ORDER = ('id', 'total')\n\n\n" + LOOPING + calls('["name", "email"]', "ORDER"), []),
        (MAKE + STARRED + calls('"name", "email"', '"id", "total"'), []),
        # a name dropped, or one passed twice, is a check lost
        (MAKE + LOOPING + calls('["name"]', '("id", "total")'), ["OG301"]),
        (MAKE + LOOPING + calls('["name", "name"]', '("id", "total")'), ["OG301"]),
        (MAKE + STARRED + calls('"name"', '"id", "total"'), ["OG301"]),
        # as many names, but not the ones the base compared: a check lost all the same
        (MAKE + LOOPING + calls('["name", "id"]', '("id", "total")'), ["OG301"]),
        (MAKE + "USER = ['name', 'total']\n\n\n" + LOOPING + calls("USER", '("id", "total")'), ["OG301"]),
    ],
)
def test_checks_moved_into_a_looping_helper_keep_their_count(repo: Repo, new: str, expected: list[str]) -> None:
    result = judged(repo, {"tests/test_models.py": TWO_HELPERS}, {"tests/test_models.py": new})
    assert codes(result) == expected, result.out


def test_a_name_left_out_is_named_once(repo: Repo) -> None:
    result = judged(
        repo,
        {"tests/test_models.py": TWO_HELPERS},
        {"tests/test_models.py": MAKE + LOOPING + calls('["name", "id"]', '["id", "total"]')},
    )
    assert codes(result) == ["OG301"]
    assert (
        "OG301 test_user no longer checks `email`: the base compared it, and the names passed to the shared helper leave it out"
        in result.out
    )


def test_a_method_result_checked_under_another_name_is_no_name_left_out(repo: Repo) -> None:
    make = MAKE.replace("total=2)", "total=2, size=lambda: 4)")
    base = (
        make
        + "def test_user():\n    a, b = make(), make()\n    assert a.name == b.name\n    assert a.email == b.email\n    assert a.size() == 4\n"
    )
    new = (
        make
        + LOOPING
        + "def test_user():\n    a, b = make(), make()\n    size = a.size()\n    assert size == 4\n    assert_same(a, b, ['name', 'email'])\n"
    )
    assert judged(repo, {"tests/test_models.py": base}, {"tests/test_models.py": new}).code == 0
    dropped = new.replace("['name', 'email']", "['name', 'size']")
    assert codes(judged(repo, {"tests/test_models.py": base}, {"tests/test_models.py": dropped})) == ["OG301"]


def test_a_looping_helper_imported_from_another_module_or_a_method_counts_too(repo: Repo) -> None:
    helper = MAKE + LOOPING
    tests = "from tests.compare import assert_same, make\n\n\n" + calls('["name", "email"]', '["id", "total"]')
    assert (
        judged(
            repo, {"tests/test_models.py": TWO_HELPERS}, {"tests/compare.py": helper, "tests/test_models.py": tests}
        ).code
        == 0
    )
    method = (
        "import unittest\n\n"
        + MAKE
        + "class TestModels(unittest.TestCase):\n"
        + "    def assert_same(self, a, b, names):\n        for name in names:\n            self.assertEqual(getattr(a, name), getattr(b, name))\n\n"
        + "    def test_user(self):\n        self.assert_same(make(), make(), ('name', 'email'))\n"
    )
    base = (
        "import unittest\n\n"
        + MAKE
        + "class TestModels(unittest.TestCase):\n"
        + "    def test_user(self):\n        a, b = make(), make()\n        self.assertEqual(a.name, b.name)\n        self.assertEqual(a.email, b.email)\n"
    )
    repo.write("tests/test_cls.py", base)
    assert judged(repo, {"tests/test_cls.py": base}, {"tests/test_cls.py": method}).code == 0
    result = judged(
        repo, {"tests/test_cls.py": base}, {"tests/test_cls.py": method.replace("('name', 'email')", "('name',)")}
    )
    assert codes(result) == ["OG301"], result.out


# -- item 4: every approval hint says what to do without an allowed-signers file -----------------------


def weakened(repo: Repo) -> Result:
    return judged(
        repo,
        {"tests/test_models.py": TWO_HELPERS},
        {"tests/test_models.py": MAKE + LOOPING + calls('["name"]', '["id", "total"]')},
    )


def test_without_signers_at_the_base_the_approval_hint_says_where_the_answer_is(repo: Repo) -> None:
    result = weakened(repo)
    assert codes(result) == ["OG301"]
    step = "`oracle-guard approve check-removed tests/test_models.py::test_user`; no signers at the base yet: see `oracle-guard explain OG301`"
    assert f"    next: restore the removed check, or {step}\n" in result.out
    assert max(len(line) for line in result.out.splitlines()) < 200  # issue 30: the long text was 780-830 characters
    # ...and that page says how to create them (issue 21, item 4: the information is one command away).
    page = hook(explain_main, "OG301").out
    assert hints.create_signers(None)[1:].replace("\n", " ") in " ".join(page.split())
    assert "allowed_signers: tests/allowed_signers" in hints.create_signers(None)
    assert "land it on the base branch" in hints.create_signers(None)


def test_a_signers_file_the_contract_names_but_the_base_lacks_is_named(repo: Repo) -> None:
    repo.write(CONTRACT, contract_text(extra="allowed_signers: keys/allowed_signers\n"))
    result = weakened(repo)
    assert "; keys/allowed_signers is not at the base: see `oracle-guard explain OG301`\n" in result.out
    assert ">> keys/allowed_signers`)" in hints.create_signers("keys/allowed_signers")
    assert "in the contract" not in hints.create_signers("keys/allowed_signers")


def test_with_signers_at_the_base_the_hint_is_only_the_approval(repo: Repo, tmp_path: Path) -> None:
    signed_repo(repo, tmp_path)
    result = weakened(repo)
    assert (
        "    next: restore the removed check, or `oracle-guard approve check-removed tests/test_models.py::test_user`\n"
        in result.out
    )
    assert "allowed-signers" not in result.out


def test_approval_messages_and_the_approve_command_say_how_to_get_signers(repo: Repo, tmp_path: Path, capsys) -> None:
    repo.write(CONTRACT, contract_text())
    repo.commit("no signers")
    explained = Approvals().explain(STATEMENT)
    assert (
        "no allowed-signers file is configured at the base revision yet (see docs/approvals.md#no-signers-at-the-base-yet)"
        in explained
    )
    key = make_key(tmp_path)
    assert repo.run(approve_main, "--key", str(key), *STATEMENT.split()) == 0
    err = capsys.readouterr().err
    assert "HEAD has no allowed-signers file: " + hints.create_signers(None) in err
    repo.write("tests/allowed_signers", signers_line(key))
    repo.write(CONTRACT, contract_text(extra="allowed_signers: tests/allowed_signers\n"))
    repo.commit("signers")
    assert repo.run(approve_main, "--key", str(key), *STATEMENT.split()) == 0
    assert "allowed-signers" not in capsys.readouterr().err


# -- item 6: a fixture path out of the repository is refused by the loader, for every reader ------------


@pytest.mark.parametrize("main", [lock_main, quarantine_main, props_main], ids=["lock", "quarantine", "properties"])
@pytest.mark.parametrize(
    "path, refusal",
    [
        (
            "tests/fixtures/../../etc/passwd",
            "'path' may not leave the repository ('..' in 'tests/fixtures/../../etc/passwd')",
        ),
        ("/etc/passwd", "'path' must be relative to the repository, not '/etc/passwd'"),
        ("tests/fixtures/.git/config", "'path' may not point into .git/"),
    ],
)
def test_a_fixture_path_out_of_the_repository_is_refused_by_every_reader(
    repo: Repo, main, path: str, refusal: str
) -> None:
    repo.write(CONTRACT, contract_text())
    repo.commit("contract")
    repo.write(CONTRACT, contract_text(fixture_entry("passwd", path, sha(b"root\n"))))
    code, out = repo.staged_hook(main).said
    # the change's contract, judged against it (OG927; a single hook's exit 2 read as "not judged" in CI)
    assert code == 1 and out.count("\n") == 1, out
    assert f"{CONTRACT}:4:11: OG927 the change's contract does not load ({refusal}" in out, out


@pytest.mark.parametrize("main", [lock_main, quarantine_main, props_main], ids=["lock", "quarantine", "properties"])
def test_a_fixture_path_inside_the_repository_loads_for_every_reader(repo: Repo, main) -> None:
    repo.write(CONTRACT, contract_text())
    repo.commit("contract")
    repo.write("tests/fixtures/users.json", b"[]\n")
    repo.write(CONTRACT, contract_text(fixture_entry("users", "tests/fixtures/users.json", sha(b"[]\n"))))
    assert repo.staged_hook(main).code == 0


# -- item 6: an approval differing only in whitespace or line ends verifies -----------------------------


def respelled(path: Path, how: str) -> None:
    data = path.read_bytes()
    line, _, rest = data.partition(b"\n")
    spelled = {
        "crlf-everywhere": data.replace(b"\n", b"\r\n"),  # a checkout with core.autocrlf=true
        "crlf-statement": line + b"\r\n" + rest,
        "tabs": line.replace(b" ", b"\t") + b"\n" + rest,
        "doubled-spaces": line.replace(b" ", b"  ") + b"\n" + rest,
        "trailing-spaces": data.replace(b"\n", b"  \n"),
        "byte-order-mark": b"\xef\xbb\xbf" + data,
        "indented-armor": line + b"\n" + rest.replace(b"\n", b"\n    "),
    }
    path.write_bytes(spelled[how])


@pytest.mark.parametrize(
    "how",
    [
        "crlf-everywhere",
        "crlf-statement",
        "tabs",
        "doubled-spaces",
        "trailing-spaces",
        "byte-order-mark",
        "indented-armor",
    ],
)
def test_an_approval_respelled_in_whitespace_still_verifies(repo: Repo, tmp_path: Path, how: str) -> None:
    key = signed_repo(repo, tmp_path)
    path = approve(repo, key, STATEMENT)
    respelled(path, how)
    repo.stage()
    assert load(repo).covers(STATEMENT)


def test_a_real_difference_still_fails_however_it_is_spelled(repo: Repo, tmp_path: Path) -> None:
    key = signed_repo(repo, tmp_path)
    path = approve(repo, key, STATEMENT)
    path.write_bytes(path.read_bytes().replace(b"80 40", b"80  41", 1).replace(b"\n", b"\r\n"))
    repo.stage()
    found = load(repo)
    assert not found.covers("property-lower roundtrip_stable 80 41") and not found.covers(STATEMENT)


def test_a_spent_approval_stays_spent_when_copied_with_crlf(repo: Repo, tmp_path: Path) -> None:
    key = signed_repo(repo, tmp_path)
    path = approve(repo, key, STATEMENT)
    repo.commit("approved once")
    copy = path.with_name("copy.approval")
    copy.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    repo.stage()
    found = load(repo)
    assert not found.covers(STATEMENT) and "already committed at the base" in found.explain(STATEMENT)
