"""Production code that knows it is being tested: the static rules of forbid-test-aware-code.

One module per class of cheat (docs/forbid-test-aware-code.md): ``finder`` walks one parsed
production module once (``walker`` is the walk's shared state) and hands each node to ``runner``
(asking whether a test runs), ``caller`` (reading the caller), ``exits`` (ending the run),
``patches`` (patching the test machinery), ``compare`` (comparisons that cannot fail) and
``dynamic`` (code no rule can see through); ``state`` finds the call counters and flags,
``cases`` the base tests' answers learned by the code (its evidence from the base's tests in
``evidence``, its data flow in ``keyflow``, the places it looks in ``places``), ``environ`` the
environment filled in for the tests, ``marks`` what the test side sets for a whole run,
``startup`` the start-up files beside it.
``facts`` and ``exprs`` are what they share.
"""
