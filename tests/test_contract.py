"""The strict contract loader, its JSON Schema, and monotonicity properties."""

from __future__ import annotations

import dataclasses
import json
import keyword
from datetime import datetime, timedelta, timezone
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from oracle_guard.contract import contract, contract_yaml
from oracle_guard.contract.approvals import Approvals
from oracle_guard.hook_ids import fixture_lock_verify, quarantine_untouched

SEED = Path(__file__).with_name("data").joinpath("seed_contract.yaml").read_text(encoding="utf-8")
SCHEMA = json.loads(Path(contract.__file__).with_name("contract.schema.json").read_text(encoding="utf-8"))
SHA = "8f3a1c0e0b77d2a19c4e6b1f0a9d5c2e7b8a4f1c0d6e9b3a5c7d1e0f2a4b6c8d"


def test_seed_contract_loads_exactly_as_printed(either_loader: None) -> None:
    c = contract.loads(SEED)
    assert [(p.id, p.module, p.name, p.min_examples) for p in c.properties] == [
        ("parse_rejects_empty", "tests.properties.test_parse", "test_empty_input_raises", 40),
        ("roundtrip_stable", "tests.properties.test_codec", "test_decode_encode_identity", 80),
    ]
    assert [(f.id, f.path, f.sha256, f.unlock) for f in c.fixtures] == [
        ("invoice_v3", "tests/fixtures/invoice_v3.json", SHA, None)
    ]
    (freeze,) = c.freezes
    assert (freeze.id, freeze.owner, freeze.reason, freeze.expires, freeze.remaining_reruns) == (
        "test_report_render_flaky",
        "oncall-payments",
        "clock skew in renderer; tracked as PAY-4412",
        "2026-09-22T00:00:00Z",
        2,
    )
    assert freeze.expires_at == datetime(2026, 9, 22, tzinfo=timezone.utc)
    assert c.max_active_freezes == 3


def test_seed_contract_validates_against_the_shipped_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.validate(yaml.safe_load(SEED), SCHEMA)


OK_FIXTURE = f"fixtures:\n  - id: a\n    path: tests/fixtures/a.json\n    sha256: {SHA}\n"

# (what is wrong, contract text, expected "line:col: message" fragment)
REFUSALS = [
    ("unknown top-level key", "version: 1\nunlock_all: true\n", "2:1: unknown key 'unlock_all' in the contract"),
    (
        "unknown entry key",
        OK_FIXTURE.replace("fixtures:\n", "version: 1\nfixtures:\n") + "    note: hi\n",
        "6:5: unknown key 'note' in a fixture",
    ),
    (
        "duplicate top-level key",
        "version: 1\nmax_active_freezes: 3\nmax_active_freezes: 9\n",
        "3:1: duplicate key 'max_active_freezes' in the contract (first at line 2)",
    ),
    (
        "duplicate entry key",
        f"version: 1\nfixtures:\n  - id: a\n    path: x\n    sha256: {SHA}\n    sha256: {SHA}\n",
        "6:5: duplicate key 'sha256' in an entry of 'fixtures'",
    ),
    (
        "duplicate id",
        f"version: 1\nfixtures:\n  - {{id: a, path: x, sha256: {SHA}}}\n  - {{id: a, path: y, sha256: {SHA}}}\n",
        "4:10: duplicate id 'a' in 'fixtures' (first at line 3)",
    ),
    ("anchor", "version: 1\nmax_active_freezes: &n 3\n", "2:21: YAML anchors are not allowed"),
    ("alias", "version: 1\nmax_freeze_days: &n 3\nmax_reruns: *n\n", "anchors are not allowed"),
    ("alias only", "version: 1\nfixtures: *x\n", "2:11: YAML aliases are not allowed"),
    ("tag", "version: 1\nmax_active_freezes: !!int 3\n", "2:21: YAML tags (tag:yaml.org,2002:int) are not allowed"),
    (
        "unquoted timestamp",
        "version: 1\nfreezes:\n  - id: t\n    owner: o\n    reason: r\n    expires: 2026-09-22T00:00:00Z\n    remaining_reruns: 1\n",
        "6:14: 'expires': timestamp 2026-09-22T00:00:00Z must be quoted",
    ),
    (
        "time zone missing",
        'version: 1\nfreezes:\n  - id: t\n    owner: o\n    reason: r\n    expires: "2026-09-22T00:00:00"\n    remaining_reruns: 1\n',
        "6:14: 'expires' must be an ISO-8601 time with a time zone",
    ),
    (
        "wrong type: string count",
        'version: 1\nmax_active_freezes: "3"\n',
        "2:21: 'max_active_freezes' must be a whole number, not '3'",
    ),
    (
        "wrong type: float count",
        "version: 1\nmax_active_freezes: 2.5\n",
        "2:21: 'max_active_freezes' must be a whole number, not '2.5'",
    ),
    (
        "wrong type: list for a string",
        "version: 1\nproperties:\n  - {id: [a], module: m, name: n, min_examples: 1}\n",
        "3:10: 'id' must be a string",
    ),
    ("wrong type: mapping for a list", "version: 1\nfixtures: {a: 1}\n", "2:11: 'fixtures' must be a list"),
    (
        "yes/no boolean",
        "version: 1\nproperties:\n  - {id: on, module: m, name: n, min_examples: 1}\n",
        "3:10: 'id': 'on' is ambiguous in YAML",
    ),
    (
        "negative reruns",
        'version: 1\nfreezes:\n  - id: t\n    owner: o\n    reason: r\n    expires: "2026-09-22T00:00:00Z"\n    remaining_reruns: -1\n',
        "7:23: 'remaining_reruns' must be at least 0, not -1",
    ),
    ("negative cap", "version: 1\nmax_active_freezes: -3\n", "2:21: 'max_active_freezes' must be at least 0, not -3"),
    (
        "zero min_examples",
        "version: 1\nproperties:\n  - {id: p, module: m, name: n, min_examples: 0}\n",
        "3:47: 'min_examples' must be at least 1, not 0",
    ),
    (
        "bad digest",
        "version: 1\nfixtures:\n  - {id: a, path: x, sha256: ABC}\n",
        "3:30: 'sha256' must be 64 lowercase hex digits",
    ),
    ("missing required key", "version: 1\nfixtures:\n  - {id: a, path: x}\n", "3:5: a fixture is missing 'sha256'"),
    ("version 2", "version: 2\n", "1:10: 'version' must be 1, not 2"),
    ("version as string", 'version: "1"\n', "1:10: 'version' must be 1, not '1'"),
    ("version missing", "max_active_freezes: 3\n", "1:1: the contract is missing 'version'"),
    ("empty document", "", "the contract is empty"),
    ("not a mapping", "- version: 1\n", "1:1: the contract must be a mapping"),
    ("broken YAML", "version: 1\nfixtures: [\n", "invalid YAML"),
    ("control character", "version: 1\nmax_reruns: 1\x07\n", "2:14: invalid YAML: character U+0007 is not allowed"),
    (
        "module as dots",
        'version: 1\nproperties:\n  - {id: p, module: "....", name: t, min_examples: 1}\n',
        "3:21: 'module' must be a dotted Python name like tests.test_parse (identifiers joined by dots), not '....'",
    ),
    (
        "module as a path out of the repository",
        "version: 1\nproperties:\n  - id: p\n    module: ../../etc/passwd\n    name: t\n    min_examples: 1\n",
        "4:13: 'module' must be a dotted Python name",
    ),
    (
        "module as an absolute path",
        "version: 1\nproperties:\n  - {id: p, module: /etc/passwd, name: t, min_examples: 1}\n",
        "'module' must be a dotted Python name",
    ),
    (
        "module with an empty part",
        "version: 1\nproperties:\n  - {id: p, module: tests..test_x, name: t, min_examples: 1}\n",
        "'module' must be a dotted Python name",
    ),
    (
        "module part a keyword",
        "version: 1\nproperties:\n  - {id: p, module: tests.class.test_x, name: t, min_examples: 1}\n",
        "'module' must be a dotted Python name",
    ),
    (
        "module over the length bound",
        "version: 1\nproperties:\n  - {id: p, module: " + ".".join(["a" * 60] * 20) + ", name: t, min_examples: 1}\n",
        "'module' must be a dotted Python name",
    ),
    (
        "name with a parameter id",
        "version: 1\nproperties:\n  - {id: p, module: tests.test_x, name: 'test_x[1]', min_examples: 1}\n",
        "3:41: 'name' must be a dotted Python name like TestParse.test_empty",
    ),
    (
        "backslash path",
        "version: 1\nfixtures:\n  - {id: a, path: 'a\\b', sha256: " + SHA + "}\n",
        "'path' must use forward slashes",
    ),
]


@pytest.fixture(params=["libyaml", "pure-python"])
def either_loader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same refusals whether PyYAML was built with libyaml or not."""
    if request.param == "pure-python":
        monkeypatch.setattr(contract_yaml, "_FastLoader", None)


@pytest.mark.parametrize("why, text, expected", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_loader_refusals_name_file_line_col_and_key(why: str, text: str, expected: str, either_loader: None) -> None:
    with pytest.raises(contract.ContractError) as info:
        contract.loads(text, "tests/agent_contract.yaml")
    message = str(info.value)
    assert message.startswith("tests/agent_contract.yaml:") and expected in message, message
    assert "\n" not in message


def test_non_utf8_is_refused() -> None:
    with pytest.raises(contract.ContractError, match="not valid UTF-8"):
        contract.loads(b"version: 1\nowner: \xff\n")


SCHEMA_ALSO_REFUSES = [
    "unknown top-level key",
    "unknown entry key",
    "wrong type: string count",
    "wrong type: mapping for a list",
    "negative reruns",
    "negative cap",
    "zero min_examples",
    "bad digest",
    "missing required key",
    "version 2",
    "version missing",
    "time zone missing",
    "module as dots",
    "module as a path out of the repository",
    "module with an empty part",
    "module over the length bound",
    "name with a parameter id",
]


@pytest.mark.parametrize("why", SCHEMA_ALSO_REFUSES)
def test_schema_refuses_what_the_loader_refuses(why: str) -> None:
    text = next(r[1] for r in REFUSALS if r[0] == why)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(yaml.safe_load(text), SCHEMA)


def test_dotted_names_are_accepted_as_python_spells_them() -> None:
    c = contract.loads(
        "version: 1\nproperties:\n"
        "  - {id: a, module: tests.properties.test_parse, name: TestParse.test_empty, min_examples: 1}\n"
        "  - {id: b, module: src.pkg.tests.test_ünï, name: test_match, min_examples: 2}\n"
        "  - {id: c, module: _private, name: _t, min_examples: 3}\n"
    )
    assert [(p.module, p.name) for p in c.properties] == [
        ("tests.properties.test_parse", "TestParse.test_empty"),
        ("src.pkg.tests.test_ünï", "test_match"),
        ("_private", "_t"),
    ]
    for p in c.properties:
        jsonschema.validate(
            {"version": 1, "properties": [{"id": p.id, "module": "tests.x", "name": p.name, "min_examples": 1}]}, SCHEMA
        )


def test_honest_spellings_are_accepted() -> None:
    c = contract.loads(
        'version: 1\nproperties: ~\nfixtures: []\nfreezes:\n  - id: "yes"\n    owner: o\n    reason: r\n    expires: "2026-09-22T00:00:00+02:00"\n    remaining_reruns: 1\n    seed: 20260906\nallowed_signers: .github/allowed_signers\n'
    )
    assert (
        c.freezes[0].id == "yes" and c.freezes[0].seed == "20260906" and c.allowed_signers == ".github/allowed_signers"
    )


# -- properties ---------------------------------------------------------------------

NOW = datetime(2026, 12, 2, 12, tzinfo=timezone.utc)
TRICKY = [
    "yes",
    "null",
    "~",
    "1",
    "017",
    "12:30",
    "2026-01-02",
    "a: b",
    "#x",
    " lead",
    "trail ",
    "ünï",
    "- x",
    "[x]",
    "'q'",
    '"d"',
    "x\\y",
]
text = st.one_of(
    st.sampled_from(TRICKY),
    st.text(st.characters(blacklist_categories=("Cs", "Cc", "Cn", "Zl", "Zp")), min_size=1, max_size=12),
).filter(lambda s: s.strip() != "")
identifiers = st.one_of(
    st.sampled_from(["ünï", "_", "match", "Test_x", "case"]),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True).filter(lambda s: not keyword.iskeyword(s)),
)
dotted = st.lists(identifiers, min_size=1, max_size=3).map(".".join)
paths = st.from_regex(r"tests/(fixtures|data)/[a-z0-9_]{1,8}(/[a-z0-9_]{1,6})?\.(json|bin|ambr)", fullmatch=True)
digests = st.from_regex(r"[0-9a-f]{64}", fullmatch=True)
instants = st.integers(1, 30 * 24).map(lambda h: (NOW + timedelta(hours=h)).strftime("%Y-%m-%dT%H:%M:%SZ"))


@st.composite
def contracts(draw: st.DrawFn) -> contract.Contract:
    prop_ids = draw(st.lists(text, max_size=3, unique=True))
    fixture_ids = draw(st.lists(text, max_size=3, unique=True))
    freeze_ids = draw(st.lists(text, max_size=3, unique=True))
    fixture_paths = draw(st.lists(paths, min_size=len(fixture_ids), max_size=len(fixture_ids), unique=True))
    return contract.Contract(
        properties=tuple(
            contract.Property(i, draw(dotted), draw(dotted), draw(st.integers(1, 10_000))) for i in prop_ids
        ),
        fixtures=tuple(
            contract.Fixture(i, p, draw(digests), draw(st.none() | text)) for i, p in zip(fixture_ids, fixture_paths)
        ),
        freezes=tuple(
            contract.Freeze(
                i,
                draw(text),
                draw(text),
                draw(instants),
                draw(st.integers(1, 5)),
                seed=draw(st.none() | st.integers(0, 2**32).map(str)),
                repro=draw(st.none() | text),
                silent_runs_allowed=draw(st.none() | st.integers(0, 20)),
            )
            for i in freeze_ids
        ),
        max_active_freezes=draw(st.integers(len(freeze_ids), 10)),
        max_freeze_days=draw(st.integers(1, 30)),
        max_reruns=draw(st.integers(1, 5)),
    )


@settings(max_examples=60, deadline=None)
@given(contracts())
@pytest.mark.slow
def test_any_valid_contract_round_trips_and_matches_the_schema(c: contract.Contract) -> None:
    written = contract.dumps(c)
    assert contract.loads(written) == c
    jsonschema.validate(yaml.safe_load(written), SCHEMA)


def findings(base: contract.Contract, new: contract.Contract) -> list[object]:
    exist = {f.path: True for f in base.fixtures}  # old paths still on disk: a repoint is not a move
    return fixture_lock_verify.diff_findings(base, new, Approvals(), exist) + quarantine_untouched.diff_findings(
        base, new, NOW, Approvals()
    )


def _replace_at(items: tuple, index: int, **changes: object) -> tuple:
    return items[:index] + (dataclasses.replace(items[index], **changes),) + items[index + 1 :]


@st.composite
def weakenings(draw: st.DrawFn) -> tuple[contract.Contract, contract.Contract, str]:
    c = draw(contracts())
    options = ["raise cap", "raise days", "raise reruns knob"]
    if c.fixtures:
        options += ["drop lock", "rotate lock", "repoint lock"]
    if c.freezes:
        options += ["extend expiry", "raise reruns", "raise silent runs", "change seed", "change repro"]
    edit = draw(st.sampled_from(options))
    i = draw(st.integers(0, max(len(c.fixtures), len(c.freezes), 1) - 1))
    fx, fz = i % max(len(c.fixtures), 1), i % max(len(c.freezes), 1)
    if edit == "raise cap":
        new = dataclasses.replace(c, max_active_freezes=c.max_active_freezes + 1)
    elif edit == "raise days":
        new = dataclasses.replace(c, max_freeze_days=c.max_freeze_days + 1)
    elif edit == "raise reruns knob":
        new = dataclasses.replace(c, max_reruns=c.max_reruns + 1)
    elif edit == "drop lock":
        new = dataclasses.replace(c, fixtures=c.fixtures[:fx] + c.fixtures[fx + 1 :])
    elif edit == "rotate lock":
        digest = draw(digests.filter(lambda d: d != c.fixtures[fx].sha256))
        new = dataclasses.replace(c, fixtures=_replace_at(c.fixtures, fx, sha256=digest))
    elif edit == "repoint lock":
        path = draw(paths.filter(lambda p: p not in {f.path for f in c.fixtures}))
        new = dataclasses.replace(c, fixtures=_replace_at(c.fixtures, fx, path=path))
    elif edit == "extend expiry":
        later = (c.freezes[fz].expires_at + timedelta(hours=draw(st.integers(1, 100)))).strftime("%Y-%m-%dT%H:%M:%SZ")
        new = dataclasses.replace(c, freezes=_replace_at(c.freezes, fz, expires=later))
    elif edit == "raise reruns":
        new = dataclasses.replace(
            c, freezes=_replace_at(c.freezes, fz, remaining_reruns=c.freezes[fz].remaining_reruns + 1)
        )
    elif edit == "raise silent runs":
        new = dataclasses.replace(
            c, freezes=_replace_at(c.freezes, fz, silent_runs_allowed=(c.freezes[fz].silent_runs_allowed or 0) + 1)
        )
    elif edit == "change seed":
        new = dataclasses.replace(c, freezes=_replace_at(c.freezes, fz, seed=str(int(c.freezes[fz].seed or 0) + 1)))
    else:
        new = dataclasses.replace(c, freezes=_replace_at(c.freezes, fz, repro=(c.freezes[fz].repro or "") + " -x"))
    return c, contract.loads(contract.dumps(new)), edit


@settings(max_examples=80, deadline=None)
@given(weakenings())
@pytest.mark.slow
def test_any_single_weakening_edit_is_rejected(case: tuple[contract.Contract, contract.Contract, str]) -> None:
    base, new, edit = case
    assert findings(base, new), edit


@st.composite
def strengthenings(draw: st.DrawFn) -> tuple[contract.Contract, contract.Contract, str]:
    c = draw(contracts())
    options = ["add lock", "add property"]
    if c.max_active_freezes > len(c.freezes):
        options.append("lower cap")
    if c.freezes:
        options += ["graduate freeze", "earlier expiry", "lower reruns", "lower silent runs"]
    if c.properties:
        options.append("raise min_examples")
    edit = draw(st.sampled_from(options))
    fz = draw(st.integers(0, max(len(c.freezes), 1) - 1))
    if edit == "add lock":
        fid = draw(text.filter(lambda s: s not in {f.id for f in c.fixtures}))
        path = draw(paths.filter(lambda p: p not in {f.path for f in c.fixtures}))
        new = dataclasses.replace(c, fixtures=c.fixtures + (contract.Fixture(fid, path, draw(digests)),))
    elif edit == "add property":
        pid = draw(text.filter(lambda s: s not in {p.id for p in c.properties}))
        new = dataclasses.replace(c, properties=c.properties + (contract.Property(pid, "tests.test_x", "test_x", 100),))
    elif edit == "raise min_examples":
        new = dataclasses.replace(
            c, properties=_replace_at(c.properties, 0, min_examples=c.properties[0].min_examples + 1)
        )
    elif edit == "lower cap":
        new = dataclasses.replace(c, max_active_freezes=c.max_active_freezes - 1)
    elif edit == "graduate freeze":
        new = dataclasses.replace(c, freezes=c.freezes[:fz] + c.freezes[fz + 1 :])
    elif edit == "earlier expiry":
        sooner = (c.freezes[fz].expires_at - timedelta(minutes=draw(st.integers(1, 30)))).strftime("%Y-%m-%dT%H:%M:%SZ")
        new = dataclasses.replace(c, freezes=_replace_at(c.freezes, fz, expires=sooner))
    elif edit == "lower reruns":
        new = dataclasses.replace(
            c, freezes=_replace_at(c.freezes, fz, remaining_reruns=c.freezes[fz].remaining_reruns - 1)
        )
    else:
        lowered = max(0, (c.freezes[fz].silent_runs_allowed or 0) - 1)
        new = dataclasses.replace(
            c,
            freezes=_replace_at(
                c.freezes, fz, silent_runs_allowed=lowered if c.freezes[fz].silent_runs_allowed is not None else None
            ),
        )
    return c, contract.loads(contract.dumps(new)), edit


@settings(max_examples=80, deadline=None)
@given(strengthenings())
@pytest.mark.slow
def test_any_single_strengthening_edit_is_accepted(case: tuple[contract.Contract, contract.Contract, str]) -> None:
    base, new, edit = case
    assert findings(base, new) == [], edit


def test_a_huge_contract_is_refused_in_one_line() -> None:
    with pytest.raises(contract.ContractError, match="over the 16777216-byte limit"):
        contract.loads(b"version: 1\n" + b"#" * contract.MAX_CONTRACT_BYTES)
