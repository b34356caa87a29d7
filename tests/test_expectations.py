"""oracle-shrink OG314: a check's expected value rewritten in place, and its honest neighbours."""

from __future__ import annotations

import pytest

from tests.test_oracle_shrink import run_shrink

CASES = [
    # (base body, new body, rejected?)
    ('    assert parse("12.50") == 1250\n', '    assert parse("12.50") == 1249\n', True),
    ("    self.assertEqual(total(items), 30)\n", "    self.assertEqual(total(items), 29)\n", True),
    ('    assert render(x) == "<b>hi</b>"\n', '    assert render(x) == "<b>hi</b >"\n', True),
    ('    assert parse("12.50") == 1250, "cents"\n', '    assert parse("12.50") == 1250, "parses cents"\n', False),
    (
        '    self.assertEqual(total(items), 30, "sum")\n',
        '    self.assertEqual(total(items), 30, msg="the sum")\n',
        False,
    ),
    ('    assert parse("12.50") == 1250\n', '    assert parse("12.50") == 1250\n    assert parse("1") == 100\n', False),
    ('    assert parse("12.50") == 1250\n', '    assert parse_price("12.50") == 1250\n', False),
    ('    assert parse("12.50") == 1250\n', '    expected = 1250\n    assert parse("12.50") == expected\n', False),
    ('    assert parse("12.50") == 1250\n', '    assert parse("12.50") == 1_250\n', False),
]


@pytest.mark.parametrize(("base", "new", "rejected"), CASES)
def test_expected_value_rewritten(repo, capsys, base: str, new: str, rejected: bool) -> None:
    head = (
        "class TestPrice:\n    def test_price(self):\n        items = [10, 20]\n"
        if "self." in base
        else "def test_price():\n    x = 1\n"
    )
    indent = "    " if "self." in base else ""

    def body(text: str) -> str:
        return head + "".join(indent + line + "\n" for line in text.splitlines())

    codes, out = run_shrink(repo, {"tests/test_x.py": body(base)}, {"tests/test_x.py": body(new)}, capsys)
    assert ("OG314" in codes) is rejected, out


def test_input_and_expected_value_changed_together_is_a_new_question(repo, capsys) -> None:
    base = 'def test_expand():\n    assert "setup.cfg" in expand(["*.cfg"])\n'
    new = 'def test_expand():\n    assert "pyproject.toml" in expand(["*.toml"])\n'
    codes, out = run_shrink(repo, {"tests/test_x.py": base}, {"tests/test_x.py": new}, capsys)
    assert "OG314" not in codes, out  # the input changed with the answer: another question
    base = 'def test_prompt(runner):\n    result = runner.invoke(cli, input="wau wau")\n    assert result.output == "foo=wau wau"\n'
    new = 'def test_prompt(runner):\n    result = runner.invoke(cli, input="bar bar")\n    assert result.output == "foo=bar bar"\n'
    codes, out = run_shrink(repo, {"tests/test_y.py": base}, {"tests/test_y.py": new}, capsys)
    assert "OG314" not in codes, out


def test_numbered_format_fields_renumbered_by_pyupgrade_are_the_same_expectation(repo, capsys) -> None:
    base = "def test_unknown():\n    assert 'no such option: {0}'.format(flag) in out\n"
    new = "def test_unknown():\n    assert 'no such option: {}'.format(flag) in out\n"
    codes, out = run_shrink(repo, {"tests/test_x.py": base}, {"tests/test_x.py": new}, capsys)
    assert "OG314" not in codes, out
