"""Production code that knows it is being tested: the static rules of forbid-test-aware-code.

One module per class of cheat (docs/forbid-test-aware-code.md): ``finder`` walks one parsed
production module for the runner probes, caller reading, exits and machinery patches;
``compare`` the comparisons that cannot fail; ``state`` the call counters and flags;
``cases`` the base tests' answers learned by the code (its evidence from the base's tests in
``evidence``, its data flow in ``keyflow``), ``environ`` the environment filled in for the tests;
``startup`` the start-up files beside it.
``facts`` and ``exprs`` are what they share.
"""
