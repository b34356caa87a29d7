"""properties-monotonic: each rejection next to the honest change closest to it."""

from __future__ import annotations

import pytest

from oracle_guard.hook_ids.properties_monotonic import main as props_main
from tests.helpers import Repo

C = "tests/agent_contract.yaml"
M = "tests/properties/test_codec.py"

CONTRACT = """\
version: 1
properties:
  - id: roundtrip_stable
    module: tests.properties.test_codec
    name: test_decode_encode_identity
    min_examples: 80
"""
MODULE = """\
from hypothesis import given, settings, strategies as st

from codec import decode, encode


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=0))
def test_decode_encode_identity(s):
    assert decode(encode(s)) == s
"""


def apply(files: dict[str, str | None], repo: Repo) -> None:
    for path, text in files.items():
        if text is None:
            repo.remove(path)
        else:
            repo.write(path, text)


def run_props(
    repo: Repo,
    new: dict[str, str | None],
    capsys: pytest.CaptureFixture[str],
    base: dict[str, str | None] | None = None,
    *args: str,
) -> tuple[set[str], str]:
    apply(base or {C: CONTRACT, M: MODULE}, repo)
    repo.commit("base")
    apply(new, repo)
    repo.stage()
    code = repo.run(props_main, *args)
    out = capsys.readouterr().out
    codes = {line.split(": ", 1)[1].split()[0] for line in out.splitlines() if ": OG" in line}
    assert code == (1 if codes else 0), out
    return codes, out


def mod(old: str, new: str) -> str:
    assert old in MODULE
    return MODULE.replace(old, new)


def con(old: str, new: str) -> str:
    assert old in CONTRACT
    return CONTRACT.replace(old, new)


ADDED = (
    CONTRACT
    + """\
  - id: parse_rejects_empty
    module: tests.properties.test_codec
    name: TestParse.test_empty_input_raises
    min_examples: 40
"""
)
ADDED_MODULE = (
    MODULE
    + """\


class TestParse:
    @settings(max_examples=40)
    @given(st.just(""))
    def test_empty_input_raises(self, blob):
        with pytest.raises(ValueError):
            decode(blob)
"""
)

ROWS = [
    (
        "unchanged-body-edit-keeps-check",
        {M: mod("assert decode(encode(s)) == s", "out = decode(encode(s))\n    assert out == s")},
        set(),
    ),
    ("id-removed", {C: "version: 1\nproperties: []\n"}, {"OG501"}),
    ("contract-deleted", {C: None}, {"OG501", "OG512"}),
    ("property-added", {C: ADDED, M: ADDED_MODULE}, set()),
    ("min-examples-lowered", {C: con("min_examples: 80", "min_examples: 20")}, {"OG503"}),
    ("min-examples-raised", {C: con("min_examples: 80", "min_examples: 100")}, set()),
    (
        "name-repointed",
        {
            C: con("name: test_decode_encode_identity", "name: test_other"),
            M: MODULE + "\n\n@given(st.text())\ndef test_other(s):\n    assert decode(encode(s)) == s\n",
        },
        {"OG502"},
    ),
    (
        "module-repointed",
        {C: con("module: tests.properties.test_codec", "module: tests.test_codec2"), "tests/test_codec2.py": MODULE},
        {"OG502"},
    ),
    ("function-gone", {M: mod("def test_decode_encode_identity", "def test_renamed")}, {"OG504"}),
    ("module-gone", {M: None}, {"OG504"}),
    ("given-removed", {M: mod("@given(st.text(min_size=0))\n", "").replace("(s):", "():\n    s = 'x'")}, {"OG505"}),
    ("max-examples-below-min", {M: mod("max_examples=100", "max_examples=20")}, {"OG506"}),
    ("max-examples-raised", {M: mod("max_examples=100", "max_examples=500")}, set()),
    ("settings-removed-default-100", {M: mod("@settings(max_examples=100, deadline=None)\n", "")}, set()),
    (
        "settings-parent-below-min",
        {
            M: mod(
                "@settings(max_examples=100, deadline=None)",
                "FAST = settings(max_examples=10)\n\n\n@settings(FAST, deadline=None)",
            )
        },
        {"OG506"},
    ),
    (
        "profile-below-min",
        {
            M: mod("@settings(max_examples=100, deadline=None)\n", ""),
            "tests/conftest.py": "from hypothesis import settings\nsettings.register_profile('quick', max_examples=5)\nsettings.load_profile('quick')\n",
        },
        {"OG506"},
    ),
    (
        "profile-above-min",
        {
            M: mod("@settings(max_examples=100, deadline=None)\n", ""),
            "tests/conftest.py": "from hypothesis import settings\nsettings.register_profile('ci', max_examples=500)\nsettings.load_profile('ci')\n",
        },
        set(),
    ),
    # Vacuous: nothing in the body can fail.  (A body that still calls the code is a crash-only
    # oracle; the lost roundtrip check is oracle-shrink's OG301: test_crash_only_rows_agree_with_oracle_shrink.)
    ("vacuous-assert-true", {M: mod("assert decode(encode(s)) == s", "assert True")}, {"OG507"}),
    ("vacuous-x-equals-x", {M: mod("assert decode(encode(s)) == s", "out = s\n    assert out == out")}, {"OG507"}),
    ("vacuous-no-check", {M: mod("assert decode(encode(s)) == s", "pass")}, {"OG507"}),
    (
        "vacuous-failures-swallowed",
        {
            M: mod(
                "assert decode(encode(s)) == s", "try:\n        decode(encode(s))\n    except Exception:\n        pass"
            )
        },
        {"OG507"},
    ),
    (
        "vacuous-suppressed",
        {
            M: "import contextlib\n"
            + mod(
                "assert decode(encode(s)) == s",
                "with contextlib.suppress(BaseException):\n        assert decode(encode(s)) == s",
            )
        },
        {"OG507"},
    ),
    ("crash-only-calls-the-code", {M: mod("assert decode(encode(s)) == s", "decode(encode(s))")}, set()),
    (
        "crash-only-one-error-may-escape",
        {M: mod("assert decode(encode(s)) == s", "try:\n        decode(s)\n    except ValueError:\n        pass")},
        set(),
    ),
    (
        "crash-only-after-assume",
        {
            M: mod("assert decode(encode(s)) == s", "assume(s)\n    note(s)\n    decode(s)").replace(
                "import given", "import assume, given, note"
            )
        },
        set(),
    ),
    (
        "assume-and-note-only",
        {
            M: mod("assert decode(encode(s)) == s", "assume(s)\n    note(s)").replace(
                "import given", "import assume, given, note"
            )
        },
        {"OG507"},
    ),
    (
        "check-moved-into-helper",
        {
            M: mod("assert decode(encode(s)) == s", "_same(decode(encode(s)), s)")
            + "\n\ndef _same(a, b):\n    assert a == b\n"
        },
        set(),
    ),
    ("strategy-just", {M: mod("st.text(min_size=0)", "st.just('')")}, {"OG508"}),
    ("strategy-one-element-sampled-from", {M: mod("st.text(min_size=0)", "st.sampled_from(['a'])")}, {"OG508"}),
    ("strategy-widened", {M: mod("st.text(min_size=0)", "st.text() | st.none()")}, set()),
]


@pytest.mark.parametrize("new,expected", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_rows(repo: Repo, capsys: pytest.CaptureFixture[str], new: dict[str, str | None], expected: set[str]) -> None:
    codes, out = run_props(repo, new, capsys)
    assert codes == expected, out


def test_property_under_src_and_class_method_resolve(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    contract_text = CONTRACT.replace("tests.properties.test_codec", "pkg.props").replace(
        "test_decode_encode_identity", "TestCodec.test_roundtrip"
    )
    module = "from hypothesis import given, strategies as st\n\n\nclass TestCodec:\n    @given(st.text())\n    def test_roundtrip(self, s):\n        assert decode(encode(s)) == s\n"
    codes, out = run_props(
        repo, {"src/pkg/props.py": module + "\n"}, capsys, {C: contract_text, "src/pkg/props.py": module}
    )
    assert codes == set(), out


def test_finding_points_at_the_settings_line(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    _, out = run_props(repo, {M: mod("max_examples=100", "max_examples=20")}, capsys)
    assert out == (
        "tests/properties/test_codec.py:6:1: OG506 property 'roundtrip_stable': test_decode_encode_identity runs "
        "max_examples=20, below the contract's min_examples=80\n"
    )


def test_lowering_is_rejected_even_with_an_unlock_looking_note(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    """Approvals are fail closed until a signed one covers `property-lower <id> <old> <new>`."""
    codes, out = run_props(repo, {C: con("min_examples: 80", "min_examples: 20") + "# approved-by: lead\n"}, capsys)
    assert codes == {"OG503"} and "min_examples lowered from 80 to 20" in out


def test_broken_contract_is_a_usage_error(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    apply({C: CONTRACT, M: MODULE}, repo)
    repo.commit()
    repo.write(C, CONTRACT + "surprise: 1\n")
    repo.stage()
    assert repo.run(props_main) == 1  # the change's contract: its finding (OG927), not exit 2
    out = capsys.readouterr().out
    assert "OG927" in out and "unknown key 'surprise'" in out


def test_no_contract_means_nothing_to_check(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write(M, MODULE)
    repo.commit()
    assert repo.run(props_main) == 0
    assert capsys.readouterr().out == ""


CRASH_ONLY = [r for r in ROWS if r[0].startswith("crash-only")]


@pytest.mark.parametrize("new", [r[1] for r in CRASH_ONLY], ids=[r[0] for r in CRASH_ONLY])
def test_crash_only_rows_agree_with_oracle_shrink(
    repo: Repo, capsys: pytest.CaptureFixture[str], new: dict[str, str | None]
) -> None:
    """Turning the roundtrip check into a crash-only body is still a lost check (OG301) for
    oracle-shrink; a crash-only property committed as it is passes both hooks."""
    from oracle_guard.hook_ids.oracle_shrink import main as shrink_main

    apply({C: CONTRACT, M: MODULE}, repo)
    repo.commit("base")
    apply(new, repo)
    repo.stage()
    assert repo.run(shrink_main, M) == 1
    assert "OG301" in capsys.readouterr().out
    repo.commit("crash-only")
    assert repo.run(props_main) == 0 and repo.run(shrink_main, M) == 0
    assert capsys.readouterr().out == ""
