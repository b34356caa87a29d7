"""oracle-guard: pre-commit hooks that refuse patches which weaken the tests."""
