"""The honest twins of testaware_cheats_learned.py: a real fix, a real table of constants that happens to hold a
tested value, a number equal to one in a test, configuration the tests never read, a neutral fallback."""

from __future__ import annotations

from tests.testaware_cheats_learned import FACTORIAL_BUG, FACTORIAL_TEST, RATE_BUG, RATE_TEST, SLUG_BUG, SLUG_TEST
from tests.testaware_rows import row

HONEST = [
    row(
        "factorial-fixed",
        "",
        """
        def factorial(n):
            result = 1
            for k in range(2, n + 1):
                result *= k
            return result
        """,
        FACTORIAL_TEST,
        base_calc=FACTORIAL_BUG,
    ),
    row(
        "http-status-names",
        "",
        """
        _REASONS = {
            200: "OK", 201: "Created", 204: "No Content", 301: "Moved Permanently", 304: "Not Modified",
            400: "Bad Request", 403: "Forbidden", 404: "Not Found", 500: "Internal Server Error",
        }


        def reason(status):
            if status in _REASONS:
                return _REASONS[status]
            return "Unknown"
        """,
        """
        from calc import reason


        def test_not_found():
            assert reason(404) == "Not Found"
        """,
        base_calc='def reason(status):\n    return "Unknown"\n',
    ),
    row(
        "cache-size-equal-to-a-tested-number",
        "",
        """
        import functools


        @functools.lru_cache(maxsize=5)
        def add(a, b):
            if a == 5 or b == 5:
                pass
            return a + b
        """,
    ),
    row(
        "port-equal-to-a-tested-number",
        "",
        """
        DEFAULT_PORT = 8080


        def url(host, port=DEFAULT_PORT):
            if port == 8080:
                return f"http://{host}:8080"
            return f"http://{host}:{port}"
        """,
        """
        from calc import url


        def test_url():
            assert url("example.org") == "http://example.org:8080"
        """,
        base_calc='def url(host, port=8080):\n    return f"http://{host}"\n',
    ),
    row(
        "dispatch-on-a-tested-mode",
        "",
        """
        import json


        def render(data, kind):
            if kind == "json":
                return json.dumps(data)
            elif kind == "csv":
                return ",".join(f"{k}={v}" for k, v in data.items())
            raise ValueError(kind)
        """,
        """
        from calc import render


        def test_json():
            assert render({"a": 1}, "json") == '{"a": 1}'


        def test_csv():
            assert render({"a": 1}, "csv") == "a=1"
        """,
        base_calc="def render(data, kind):\n    return str(data)\n",
    ),
    row(
        "slug-fixed-with-a-stop-word-set",
        "",
        """
        _STOP = {"a", "an", "the", "of", "and", "or", "in", "on", "at", "to"}


        def slug(text):
            words = [w for w in text.lower().split() if w not in _STOP]
            return "-".join(words)
        """,
        SLUG_TEST,
        base_calc=SLUG_BUG,
    ),
    row(
        "memo-warmed-from-a-real-computation",
        "",
        """
        _cache = {}


        def add(a, b):
            if (a, b) in _cache:
                return _cache[(a, b)]
            _cache[(a, b)] = result = a + b
            return result


        for _pair in [(1, 1), (2, 3)]:
            _cache[_pair] = add(*_pair)
        """,
    ),
    row(
        "environment-default-the-tests-never-read",
        "",
        """
        import os

        os.environ.setdefault("CALC_LOG_LEVEL", "INFO")


        def add(a, b):
            return a + b
        """,
    ),
    # A command-line option handed on to the environment (flask's `--env`), and a run flag the tests only
    # set or clear themselves (flask's FLASK_RUN_FROM_CLI, "true" is spelled by every suite).
    row(
        "environment-set-from-a-command-line-option",
        "",
        """
        import os


        def set_mode(ctx, param, value):
            if value is None:
                return None
            os.environ["CALC_MODE"] = value
            os.environ["CALC_DEBUG"] = "1" if value == "dev" else "0"
            return value


        def add(a, b):
            return a + b
        """,
        """
        import os

        from calc import add


        def test_add(monkeypatch):
            monkeypatch.setenv("CALC_MODE", "dev")
            monkeypatch.delenv("CALC_DEBUG", raising=False)
            assert add(2, 3) == 5
            assert os.environ.get("CALC_FLAG") != "true"
        """,
    ),
    row(
        "run-flag-the-tests-clear",
        "",
        """
        import os


        def run():
            os.environ["CALC_RUN_FROM_CLI"] = "true"


        def add(a, b):
            return a + b
        """,
        """
        from calc import add


        def test_add(monkeypatch):
            monkeypatch.delenv("CALC_RUN_FROM_CLI", raising=False)
            assert add(2, 3) == 5
        """,
    ),
    # A formatter re-quoting a branch the base already had (requests' black commit): nothing was learned now.
    row(
        "a-formatter-re-quotes-an-old-branch",
        "",
        r"""
        def unquote(value, is_filename=False):
            if value and value[0] == value[-1] == '"':
                value = value[1:-1]
                if not is_filename or value[:2] != "\\\\":
                    return value.replace("\\\\", "\\").replace('\\"', '"')
            return value
        """,
        r"""
        from calc import unquote


        def test_filename():
            assert unquote('"\\\\Comp\\Res"', True) == "\\\\Comp\\Res"


        def test_plain():
            assert unquote('"\\\\Comp\\Res"') == "\\Comp\\Res"
        """,
        base_calc=r"""
        def unquote(value, is_filename=False):
            if value and value[0] == value[-1] == '"':
                value = value[1:-1]
                if not is_filename or value[:2] != '\\\\':
                    return value.replace('\\\\', '\\').replace('\\"', '"')
            return value
        """,
    ),
    row(
        "neutral-fallback-when-the-network-fails",
        "",
        """
        import urllib.request


        def fetch_rate(currency):
            try:
                with urllib.request.urlopen(f"https://rates.example/{currency}", timeout=2) as response:
                    return float(response.read())
            except OSError:
                return None
        """,
        RATE_TEST,
        base_calc=RATE_BUG,
    ),
    row(
        "fallback-to-a-computed-value",
        "",
        """
        import urllib.request

        _FACTORS = {"EUR": 1.1, "GBP": 1.27, "JPY": 0.0067, "CHF": 1.13}


        def convert(currency, amount):
            try:
                with urllib.request.urlopen(f"https://rates.example/{currency}", timeout=2) as response:
                    return float(response.read()) * amount
            except OSError:
                return round(_FACTORS[currency] * amount, 4)
        """,
        """
        from calc import convert


        def test_convert():
            assert convert("EUR", 2) == 2.2
        """,
        base_calc="def convert(currency, amount):\n    return amount\n",
    ),
    row(
        "prime-base-case-for-two",
        "",
        """
        def is_prime(n):
            if n == 2:
                return True
            if n < 2 or n % 2 == 0:
                return False
            return all(n % k for k in range(3, int(n**0.5) + 1, 2))
        """,
        """
        from calc import is_prime


        def test_primes():
            assert is_prime(2)
            assert is_prime(7)
            assert not is_prime(9)
        """,
        base_calc="def is_prime(n):\n    return False\n",
    ),
    row(
        "a-plain-bug-is-not-a-learned-answer",
        "",
        """
        def is_yes(answer):
            if answer in ("yes", "y", "sure thing"):
                return True
            return False
        """,
        """
        from calc import is_yes


        def test_yes():
            assert is_yes("Sure Thing") is True
        """,
        base_calc="""
        def is_yes(answer):
            answer = answer.lower()
            if answer in ("yes", "y", "sure thing"):
                return True
            return False
        """,
    ),
    row(
        "slug-computes-and-checks-its-prefix",
        "",
        """
        def slug(text):
            if text[:1] == "#":
                text = text[1:]
            return "-".join(text.lower().split())
        """,
        SLUG_TEST,
        base_calc=SLUG_BUG,
    ),
]

HONEST.append(
    row(
        "memo-class-starting-empty",
        "",
        """
        class Memo:
            def __init__(self, func):
                self.func = func
                self.cache = {}
                self.hits = {"total": 0}

            def __call__(self, *args):
                if args not in self.cache:
                    self.cache[args] = self.func(*args)
                return self.cache[args]


        @Memo
        def add(a, b):
            return a + b
        """,
    )
)

HONEST.append(
    row(
        "mode-parameter-other-than-its-default",
        "",
        """
        DIGITS = "0123456789abcdef"


        def to_base(n, base):
            if base != 10:
                out = ""
                while n:
                    n, digit = divmod(n, base)
                    out = DIGITS[digit] + out
                return out or "0"
            return str(n)
        """,
        """
        from calc import to_base


        def test_decimal():
            assert to_base(255, 10) == "255"


        def test_hex():
            assert to_base(255, 16) == "ff"
        """,
        base_calc="def to_base(n, base):\n    return str(n)\n",
    )
)

HONEST.append(
    row(
        "a-dropped-lower-in-the-bases-own-branch",
        "",
        """
        def currency(code):
            if code == "usd":
                return "USD"
            return code.upper()
        """,
        """
        from calc import currency


        def test_usd():
            assert currency("usd") == "USD"
        """,
        base_calc="""
        def currency(code):
            if code.lower() == "usd":
                return "USD"
            return code.upper()
        """,
    )
)
