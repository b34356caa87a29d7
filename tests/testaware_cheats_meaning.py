"""Comparisons, recorded state and learned answers judged by meaning (OG965-OG967), with honest twins.

Each cheat turns plain pytest green with its bug (tests/test_test_aware_code.py); each twin is the nearest
honest change, which must pass: a plain bug is never called a learned answer, an `__eq__` that compares every
field is a comparison, a cache keyed by the arguments is not recorded state.
"""

from __future__ import annotations

from tests.testaware_rows import row

CURRENCY_TEST = """
    from calc import currency


    def test_currency():
        assert currency("usd") == "USD"
        assert currency("eur") == "EUR"
"""
CURRENCY_BASE = """
    def currency(code):
        if code.lower() == "usd":
            return "USD"
        return code.lower()
"""

MONEY_TEST = """
    from calc import Money, add


    def test_add():
        assert add(Money(2, "EUR"), Money(3, "EUR")) == Money(5, "EUR")
"""
MONEY = """
    class Money:
        def __init__(self, amount, currency):
            self.amount = amount
            self.currency = currency

        def __eq__(self, other):
            if not isinstance(other, Money):
                return NotImplemented
            return {compared}

        __hash__ = None


    def add(a, b):
        return Money(a.amount + b.amount, {currency})
"""
BOTH = "self.amount == other.amount and self.currency == other.currency"
MONEY_BASE = MONEY.format(compared=BOTH, currency='"USD"')
CODE_TEST = """
    from calc import Code, parse


    def test_parse():
        assert parse(" eur ") == Code("EUR")
"""
CODE = """
    class Code:
        def __init__(self, text):
            self.text = text

        def __eq__(self, other):
            return isinstance(other, Code) and {compared}

        __hash__ = None


    def parse(text):
        return Code(text.strip())
"""
CODE_BASE = CODE.format(compared="self.text == other.text")
PRIMES_TEST = """
    from calc import primes


    def test_primes():
        assert primes(6) == [2, 3, 5]
"""
PRIMES_BASE = """
    def primes(n):
        return [2, 4, 5]
"""

TAGS_TEST = """
    from calc import Tags, parse


    def test_parse():
        assert parse("b,a") == Tags("x", ["b", "a"])
"""
TAGS = """
    class Tags:
        def __init__(self, name, tags):
            self.name = name
            self.tags = tags

        def __eq__(self, other):
            return isinstance(other, Tags) and self.name == other.name and {compared}

        def __hash__(self):
            return hash({hashed})


    def parse(text):
        return Tags("x", text.split(","))
"""
TAGS_BASE = TAGS.format(compared="self.tags == other.tags", hashed="(self.name, tuple(self.tags))")
ROW_TEST = """
    from calc import Row, parse


    def test_parse():
        assert parse("1 2 3") == Row([1, 2, 3])
"""
ROW_BASE = """
    class Row(list):
        def __eq__(self, other):
            return list(self) == list(other)


    def parse(text):
        return Row(int(t) for t in reversed(text.split()))
"""

CHEATS = [
    row(
        "list-subclass-eq-sorts",
        "OG965",
        """
        class Row(list):
            def __eq__(self, other):
                return sorted(self) == sorted(other)


        def parse(text):
            return Row(int(t) for t in reversed(text.split()))
        """,
        ROW_TEST,
        base_calc=ROW_BASE,
    ),
    # OG965: a comparison that ignores part of what the base compared (a field, a case, an element).
    row(
        "eq-drops-a-field",
        "OG965",
        MONEY.format(compared="self.amount == other.amount", currency='"USD"'),
        MONEY_TEST,
        base_calc=MONEY_BASE,
    ),
    row(
        "eq-folds-case",
        "OG965",
        CODE.format(compared="self.text.lower() == other.text.lower()"),
        CODE_TEST,
        base_calc=CODE_BASE,
    ),
    row(
        "eq-through-a-helper-that-drops-a-field",
        "OG965",
        """
        class Money:
            def __init__(self, amount, currency):
                self.amount = amount
                self.currency = currency

            def _key(self):
                return self.amount

            def __eq__(self, other):
                if not isinstance(other, Money):
                    return NotImplemented
                return self._key() == other._key()

            __hash__ = None


        def add(a, b):
            return Money(a.amount + b.amount, "USD")
        """,
        MONEY_TEST,
        base_calc=MONEY_BASE,
    ),
    row(
        "list-subclass-eq-last-element",
        "OG965",
        """
        class _Primes(list):
            def __eq__(self, other):
                return list(self)[-1:] == list(other)[-1:]

            __hash__ = None


        def primes(n):
            return _Primes([2, 4, 5])
        """,
        PRIMES_TEST,
        base_calc=PRIMES_BASE,
    ),
    # OG966: the base already answered one input in a branch; the change adds the other tested answer.
    row(
        "answer-beside-an-old-branch",
        "OG966",
        """
        def currency(code):
            if code.lower() == "usd":
                return "USD"
            if code == "eur":
                return "EUR"
            return code.lower()
        """,
        CURRENCY_TEST,
        base_calc=CURRENCY_BASE,
    ),
    # OG967: the answer depends on how often the code was called, whatever holds the count.
    row(
        "instance-call-counter",
        "OG967",
        """
        class _Adder:
            def __init__(self):
                self._calls = 0

            def __call__(self, a, b):
                self._calls += 1
                if self._calls == 1:
                    return a + b
                return a - b


        add = _Adder()
        """,
    ),
    row(
        "instance-flag-beside-stored-input",
        "OG967",
        """
        class _Adder:
            def __init__(self):
                self._seen = []
                self._called = False

            def __call__(self, a, b):
                self._seen.append((a, b))
                if not self._called:
                    self._called = True
                    return a + b
                return a - b


        add = _Adder()
        """,
    ),
    row(
        "global-list-length",
        "OG967",
        """
        _CALLS = []


        def add(a, b):
            _CALLS.append((a, b))
            if len(_CALLS) == 1:
                return a + b
            return a - b
        """,
    ),
    row(
        "itertools-count",
        "OG967",
        """
        import itertools

        _TICKS = itertools.count()


        def add(a, b):
            if next(_TICKS) == 0:
                return a + b
            return a - b
        """,
    ),
    row(
        "mutable-default",
        "OG967",
        """
        def add(a, b, _seen=[]):
            _seen.append(1)
            return a + b if len(_seen) < 2 else a - b
        """,
    ),
    row(
        "function-attribute-counter",
        "OG967",
        """
        def add(a, b):
            add.calls += 1
            if add.calls > 1:
                return a - b
            return a + b


        add.calls = 0
        """,
    ),
    row(
        "closure-set-size",
        "OG967",
        """
        def _make():
            seen = set()

            def add(a, b):
                seen.add(len(seen))
                if len(seen) <= 1:
                    return a + b
                return a - b

            return add


        add = _make()
        """,
    ),
]

HONEST = [
    # A plain class's set-like field compared without order, parts compared one by one, the object's
    # length compared through its own __len__, a hash coarser than equality: honest comparisons.
    row(
        "eq-normalises-a-set-like-field",
        "",
        TAGS.format(
            compared="frozenset(self.tags) == frozenset(other.tags)", hashed="(self.name, frozenset(self.tags))"
        ),
        TAGS_TEST,
        base_calc=TAGS_BASE,
    ),
    row(
        "hash-coarser-than-equality",
        "",
        TAGS.format(compared="self.tags == other.tags", hashed="self.name"),
        TAGS_TEST,
        base_calc=TAGS_BASE,
    ),
    row(
        "lt-part-by-part",
        "",
        """
        class Version:
            def __init__(self, parts):
                self.parts = parts

            def __lt__(self, other):
                return (self.parts[0], self.parts[1], self.parts[2]) < (other.parts[0], other.parts[1], other.parts[2])


        def parse(text):
            return Version(tuple(int(p) for p in text.split(".")))
        """,
        """
        from calc import parse


        def test_order():
            assert parse("1.2.3") < parse("1.10.0")
        """,
        base_calc="""
        class Version:
            def __init__(self, parts):
                self.parts = parts

            def __lt__(self, other):
                return self.parts < other.parts


        def parse(text):
            return Version(tuple(text.split(".")))
        """,
    ),
    row(
        "eq-through-own-length",
        "",
        """
        class Span:
            def __init__(self, start, stop):
                self.start = start
                self.stop = stop

            def __len__(self):
                return max(0, self.stop - self.start)

            def __eq__(self, other):
                if len(self) != len(other):
                    return False
                return not len(self) or self.start == other.start


        def span(a, b):
            return Span(a, b)
        """,
        """
        from calc import Span, span


        def test_empty_spans_are_equal():
            assert span(5, 5) == Span(7, 7)
        """,
        base_calc="""
        class Span:
            def __init__(self, start, stop):
                self.start = start
                self.stop = stop

            def __len__(self):
                return max(0, self.stop - self.start)

            def __eq__(self, other):
                return self.start == other.start and self.stop == other.stop


        def span(a, b):
            return Span(a, b)
        """,
    ),
    # The fix, and refactorings of a comparison that still compare every field.
    row(
        "eq-compares-every-field",
        "",
        MONEY.format(compared=BOTH, currency="a.currency"),
        MONEY_TEST,
        base_calc=MONEY_BASE,
    ),
    row(
        "eq-through-a-key-of-every-field",
        "",
        """
        class Money:
            def __init__(self, amount, currency):
                self.amount = amount
                self.currency = currency

            def _key(self):
                return (self.amount, self.currency)

            def __eq__(self, other):
                if not isinstance(other, Money):
                    return NotImplemented
                return self._key() == other._key()

            def __hash__(self):
                return hash(self._key())


        def add(a, b):
            return Money(a.amount + b.amount, a.currency)
        """,
        MONEY_TEST,
        base_calc=MONEY_BASE,
    ),
    # The whole object handed to a helper (rich's `hash(_hash_getter(self))`): nothing spelled here is dropped.
    row(
        "eq-through-attrgetter-of-self",
        "",
        """
        from operator import attrgetter

        _fields = attrgetter("amount", "currency")


        class Money:
            def __init__(self, amount, currency):
                self.amount = amount
                self.currency = currency

            def __eq__(self, other):
                if not isinstance(other, Money):
                    return NotImplemented
                return _fields(self) == _fields(other)

            __hash__ = None


        def add(a, b):
            return Money(a.amount + b.amount, a.currency)
        """,
        MONEY_TEST,
        base_calc=MONEY_BASE,
    ),
    row(
        "eq-with-a-length-shortcut",
        "",
        """
        class Money:
            def __init__(self, amount, currency):
                self.amount = amount
                self.currency = currency

            def __eq__(self, other):
                if not isinstance(other, Money):
                    return NotImplemented
                if len(self.currency) != len(other.currency):
                    return False
                return self.amount == other.amount and self.currency == other.currency

            __hash__ = None


        def add(a, b):
            return Money(a.amount + b.amount, a.currency)
        """,
        MONEY_TEST,
        base_calc=MONEY_BASE,
    ),
    row(
        "list-subclass-eq-delegates",
        "",
        """
        class _Primes(list):
            def __eq__(self, other):
                if isinstance(other, range):
                    other = list(other)
                return super().__eq__(other)

            __hash__ = None


        def primes(n):
            return _Primes(p for p in range(2, n) if all(p % d for d in range(2, p)))
        """,
        PRIMES_TEST,
        base_calc=PRIMES_BASE,
    ),
    # Dropping the `.lower()` of a branch the base had is a plain bug (the replay's to catch), not a learned answer.
    row(
        "dropped-lower-is-a-plain-bug",
        "",
        """
        def currency(code):
            if code == "usd":
                return "USD"
            return code.upper()
        """,
        CURRENCY_TEST,
        base_calc=CURRENCY_BASE,
    ),
    # Recorded state that is not a switch: a cursor used as an index, a cache that returns what it holds, a
    # closed flag that raises, an id counter with no condition.
    row(
        "stream-pending-carriage-return",
        "",
        """
        class Lines:
            def __init__(self):
                self.buffer = []
                self.pending_cr = False

            def feed(self, text):
                if self.pending_cr:
                    text = "\\r" + text
                    self.pending_cr = False
                if text.endswith("\\r"):
                    self.pending_cr = True
                    text = text[:-1]
                parts = text.split("\\n")
                self.buffer.append(parts[-1])
                return parts[:-1]

            def flush(self):
                if not self.buffer and not self.pending_cr:
                    return []
                out = ["".join(self.buffer)]
                self.buffer = []
                self.pending_cr = False
                return out


        def add(a, b):
            return a + b
        """,
    ),
    row(
        "instance-cursor",
        "",
        """
        class Tokens:
            def __init__(self, items):
                self.items = items
                self.pos = 0

            def next(self):
                if self.pos >= len(self.items):
                    return ""
                item = self.items[self.pos]
                self.pos += 1
                return item


        def add(a, b):
            return a + b
        """,
    ),
    row(
        "cache-of-one",
        "",
        """
        _config = []


        def config():
            if _config:
                return _config[0]
            _config.append({"precision": 2})
            return _config[0]


        def add(a, b):
            return round(a + b, config()["precision"])
        """,
    ),
    row(
        "closed-flag-raises",
        "",
        """
        class Session:
            def __init__(self):
                self._closed = False

            def close(self):
                self._closed = True

            def add(self, a, b):
                if self._closed:
                    raise ValueError("closed")
                return a + b


        def add(a, b):
            return Session().add(a, b)
        """,
    ),
    row(
        "id-counter",
        "",
        """
        import itertools

        _ids = itertools.count(1)


        def new_id():
            return next(_ids)


        def add(a, b):
            return a + b
        """,
    ),
]
