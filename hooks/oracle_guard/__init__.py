"""oracle-guard: pre-commit hooks that refuse patches which weaken the tests."""

__version__ = "0.1.0"  # keep equal to pyproject.toml's version (a test checks it)
