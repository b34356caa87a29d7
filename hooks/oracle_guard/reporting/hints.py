"""Per finding code: a title, the next step, and the docs page that explains it.

One table, so every output format (text, json, sarif, agent) says the same
next step without each hook spelling it in every message.  A code missing
here is a test failure (tests/test_output.py reads every code in the hooks).

Why one module: it is one table of every code the gate can report (about 140 rows of three strings) and
the few lines that read it; split by family, a code's row would have to be looked for in several places.
"""

from __future__ import annotations

import re

README = "https://github.com/oracle-guard/oracle-guard/blob/main/README.md"
DOCS = "https://github.com/oracle-guard/oracle-guard/blob/main/docs"

# code -> (docs page: the hook id of docs/HOOK.md, or `docs/PAGE.md#anchor`; short title; next step as one
# clause).  A hook's page has a `## CODE title` heading per code (tests/test_output.py): help_uri's anchor.
CODES: dict[str, tuple[str, str, str]] = {
    "OG001": (
        "forbid-skip-marks",
        "changed test file does not parse",
        "fix the syntax error (or run the hook on an interpreter that knows it)",
    ),
    "OG003": ("oracle-shrink", "a test file is no longer a regular file", "commit it as a regular file"),
    "OG101": (
        "forbid-skip-marks",
        "new skip or xfail mark",
        "remove the mark, or add a freeze entry, or approve `skip-add NODEID`",
    ),
    "OG102": ("forbid-skip-marks", "unverifiable mark", "spell the mark statically so it can be checked, or remove it"),
    "OG110": (
        "forbid-skip-marks",
        "reruns outside the freeze ledger",
        "remove the rerun mark or helper, or add a freeze entry for the test",
    ),
    "OG201": (
        "forbid-runtime-skip",
        "new runtime skip",
        "remove the skip call, or add a freeze entry, or approve `skip-add NODEID`",
    ),
    "OG202": (
        "forbid-runtime-skip",
        "new early return before the first check",
        "remove the early return, or approve `skip-add NODEID`",
    ),
    "OG301": (
        "oracle-shrink",
        "fewer checks than at the base",
        "restore the removed check, or approve `check-removed NODEID`",
    ),
    "OG302": ("oracle-shrink", "a test removed", "restore the test, or approve `test-retire NODEID`"),
    "OG303": (
        "oracle-shrink",
        "a strong check replaced by a weaker one",
        "restore the stronger check, or approve `expected-change NODEID`",
    ),
    "OG304": ("oracle-shrink", "a tolerance loosened", "restore the tolerance, or approve `expected-change NODEID`"),
    "OG305": (
        "oracle-shrink",
        "a new swallowed failure",
        "let the failure propagate (re-raise, or drop the try/except)",
    ),
    "OG306": (
        "oracle-shrink",
        "an expected exception or warning broadened",
        "restore the expected exception and match=, or approve `expected-change NODEID`",
    ),
    "OG307": ("oracle-shrink", "parametrize lost cases", "restore the cases, or approve `check-removed NODEID`"),
    "OG308": ("oracle-shrink", "a new tautology", "assert something that can fail"),
    "OG309": (
        "oracle-shrink",
        "weaker Hypothesis settings",
        "restore max_examples/phases, or approve `expected-change NODEID`",
    ),
    "OG310": ("oracle-shrink", "@given removed", "restore @given, or approve `check-removed NODEID`"),
    "OG311": ("oracle-shrink", "an @example removed", "restore the example, or approve `check-removed NODEID`"),
    "OG312": (
        "oracle-shrink",
        "a Hypothesis strategy narrowed",
        "restore the strategy, or approve `expected-change NODEID`",
    ),
    "OG313": (
        "oracle-shrink",
        "new assume() in a property",
        "remove the assume(), or approve `expected-change NODEID`",
    ),
    "OG314": (
        "oracle-shrink",
        "an expected value rewritten in place",
        "restore the expected value, or approve `expected-change NODEID` for a deliberate behaviour change",
    ),
    "OG315": (
        "oracle-shrink",
        "a check compares what the test replaced",
        "check the real function: drop its stand-in, or patch only what it uses (clock, network, environment)",
    ),
    "OG316": (
        "collection-snapshot",
        "a doctest example weakened",
        "restore the base's example, or approve `expected-change NODEID` for a deliberate behaviour change",
    ),
    "OG401": (
        "fixture-lock-verify",
        "bytes do not match the lock",
        "restore the file, or run `oracle-guard lock --rotate ID` and sign the printed approval",
    ),
    "OG402": (
        "fixture-lock-verify",
        "a locked fixture is missing",
        "restore the file, or approve `fixture-unlock ID OLD_SHA`",
    ),
    "OG403": ("fixture-lock-verify", "a lock path escapes its root", "lock a relative path inside a fixtures root"),
    "OG404": (
        "fixture-lock-verify",
        "a digest changed relative to the base",
        "restore the digest, or approve the printed `fixture-rotate` statement",
    ),
    "OG405": (
        "fixture-lock-verify",
        "a lock repointed",
        "restore the path, or approve the printed `fixture-repoint` statement",
    ),
    "OG406": (
        "fixture-lock-verify",
        "a lock dropped",
        "restore the lock, or approve the printed `fixture-unlock` statement",
    ),
    "OG501": ("properties-monotonic", "a property removed", "restore the property, or approve `property-retire ID`"),
    "OG502": (
        "properties-monotonic",
        "a property repointed",
        "restore module/name, or approve the printed `property-repoint` statement",
    ),
    "OG503": (
        "properties-monotonic",
        "min_examples lowered",
        "restore min_examples, or approve the printed `property-lower` statement",
    ),
    "OG504": (
        "properties-monotonic",
        "a property's function is gone",
        "restore the function, or repoint the property with an approval",
    ),
    "OG505": ("properties-monotonic", "a property without @given", "restore @given on the function"),
    "OG506": (
        "properties-monotonic",
        "max_examples below min_examples",
        "raise max_examples to the contract's min_examples",
    ),
    "OG507": ("properties-monotonic", "a vacuous property body", "assert something that can fail"),
    "OG508": ("properties-monotonic", "a property strategy narrowed", "restore the strategy"),
    "OG510": (
        "properties-monotonic",
        "a trust setting of the contract changed",
        "restore the setting, or approve the printed `contract-setting` statement",
    ),
    "OG511": (
        "properties-monotonic",
        "the allowed-signers file changed",
        "restore the file, or approve the printed `signers-change` statement",
    ),
    "OG512": (
        "properties-monotonic",
        "the contract deleted",
        "restore the contract, or approve the printed `contract-setting contract` statement",
    ),
    "OG601": ("quarantine-untouched", "a freeze expired", "fix the test and remove the entry"),
    "OG602": ("quarantine-untouched", "a freeze without reruns", "fix the test and remove the entry"),
    "OG603": ("quarantine-untouched", "too many freezes", "fix and remove a frozen test first"),
    "OG610": ("quarantine-untouched", "a ledger budget raised", "restore the budget"),
    "OG611": ("quarantine-untouched", "an expiry extended", "restore the expiry; let it expire, then fix"),
    "OG612": ("quarantine-untouched", "reruns raised", "restore the rerun counts"),
    "OG613": ("quarantine-untouched", "a freeze entry's seed, repro or file changed", "restore the entry"),
    "OG614": ("quarantine-untouched", "a new freeze for too long", "expire it within max_freeze_days"),
    "OG615": ("quarantine-untouched", "a new freeze with too many reruns", "start it with at most max_reruns"),
    "OG616": (
        "quarantine-untouched",
        "a new freeze without a signed approval",
        "approve the printed `freeze-add` statement",
    ),
    "OG620": (
        "quarantine-untouched",
        "a skip in the quarantine layer",
        "remove the mark: a frozen test reruns, it is never skipped",
    ),
    "OG621": ("quarantine-untouched", "a quarantined test's file deleted", "graduate the entry first"),
    "OG622": ("quarantine-untouched", "the contract deleted with its ledger", "restore the contract"),
    "OG691": ("quarantine-untouched", "quarantine run failed", "fix the frozen test"),
    "OG692": ("quarantine-untouched", "quarantine run failed", "fix the frozen test"),
    "OG693": ("quarantine-untouched", "quarantine run failed", "fix the frozen test"),
    "OG694": ("quarantine-untouched", "quarantine run failed", "fix the frozen test"),
    "OG701": (
        "contract-split",
        "contract layer changed with production code",
        "ship the contract change in its own commit",
    ),
    "OG702": (
        "contract-split",
        "a relation test changed with production code",
        "ship the relation change in its own commit",
    ),
    "OG703": (
        "contract-split",
        "goldens re-recorded with production code",
        "re-record the goldens in their own commit",
    ),
    "OG801": ("collection-snapshot", "a test no longer collected", "restore the test, or approve `test-retire NODEID`"),
    "OG802": (
        "collection-snapshot",
        "a test now skipped at collection",
        "restore it, or add a freeze entry, or approve `test-skip NODEID`",
    ),
    "OG803": ("collection-snapshot", "a collection error", "fix the import or collection error"),
    "OG804": (
        "collection-snapshot",
        "pytest --collect-only failed",
        "run `pytest --collect-only` and fix its usage or internal error",
    ),
    "OG805": (
        "collection-snapshot",
        "the snapshot is out of date",
        "record it when you like: `oracle-guard collection-snapshot --base BASE`, then commit the snapshot",
    ),
    "OG806": (
        "collection-snapshot",
        "the snapshot is not a regular file",
        "restore the snapshot as the regular file the base commits (no symlink, folder or FIFO in its place)",
    ),
    "OG807": (
        "collection-snapshot",
        "the change removed a dependency its tests import",
        "restore the dependency in the file that declares it, or remove the import from the tests",
    ),
    "OG808": (
        "collection-snapshot",
        "the collection did not finish in time",
        "make the module named stop waiting at import (move the wait into a test or a fixture with a timeout)",
    ),
    "OG809": (
        "collection-snapshot",
        "the collection flooded its output",
        "stop the change's modules printing at import (pytest shows what a test prints when it fails)",
    ),
    **{
        f"OG85{n}": ("collection-snapshot", title, "restore the pytest configuration")
        for n, title in enumerate(
            [
                "",
                "addopts narrows the run",
                "testpaths narrowed",
                "python_files/classes/functions narrowed",
                "norecursedirs grew",
                "xfail_strict turned off",
                "warnings no longer errors",
                "collect_ignore grew",
                "a conftest removes collected items",
                "a CI pytest command narrows the run",
            ]
        )
        if n
    },
    "OG860": (
        "collection-snapshot",
        "a rerun setting new or raised",
        "remove the rerun setting; a flaky test belongs in the freeze ledger",
    ),
    "OG861": (
        "collection-snapshot",
        "a snapshot regeneration switch",
        "remove the regeneration switch; re-record goldens in their own, reviewed commit",
    ),
    "OG862": ("collection-snapshot", "a coverage floor lowered or removed", "restore the coverage floor"),
    "OG863": (
        "collection-snapshot",
        "pragma: no cover added to production code",
        "remove the pragma, or add it in a commit without test changes",
    ),
    "OG864": ("collection-snapshot", "asserts stripped (python -O)", "run pytest without -O/-OO or PYTHONOPTIMIZE"),
    "OG865": (
        "collection-snapshot",
        "a pytest failure no longer fails the job",
        "let the pytest command fail the job again",
    ),
    "OG870": (
        "collection-snapshot",
        "the run-time gate switched off from the patch",
        "remove the option that disables or blinds the oracle-guard plugin",
    ),
    "OG871": (
        "collection-snapshot",
        "an option that changes what pytest reads",
        "remove the option (--noconftest, -c, --rootdir, -o ...) or keep the base's",
    ),
    "OG872": (
        "collection-snapshot",
        "a pytest configuration file shadows the base's",
        "remove the new configuration file, or carry every base setting into it",
    ),
    "OG873": (
        "collection-snapshot",
        "the contract is no longer a regular file",
        "restore the contract as a regular, non-empty file",
    ),
    "OG874": (
        "collection-snapshot",
        "conftest code reaches the gate or pytest's start-up",
        "remove the plugin or option manipulation from the conftest",
    ),
    "OG875": (
        "collection-snapshot",
        "conftest code changes test outcomes",
        "remove the hook code that rewrites results or swallows the call",
    ),
    "OG876": (
        "collection-snapshot",
        "a new process exit in a conftest",
        "remove the exit, or exit only with a failure status",
    ),
    "OG877": (
        "collection-snapshot",
        "an autouse fixture replaces the code under test",
        "patch the function only in a test that needs a stand-in, or patch what it uses (clock, network, environment)",
    ),
    "OG901": (
        "oracle-replay",
        "a base test fails against the new code",
        "fix the code, or approve `behavior-change NODEID` for a deliberate change",
    ),
    "OG902": (
        "oracle-replay",
        "a base test now skips or xfails against the new code",
        "fix the code, or approve `behavior-change NODEID`",
    ),
    "OG903": (
        "oracle-replay",
        "a base test cannot import the new code",
        "keep the old API importable, or approve `behavior-change NODEID`",
    ),
    "OG904": (
        "oracle-replay",
        "pytest cannot run the base's tests on the new code",
        "fix the change so the base's tests can run",
    ),
    "OG905": (
        "oracle-replay",
        "a base test is no longer collected against the new code",
        "restore what the test collects, or approve `behavior-change NODEID`",
    ),
    "OG907": (
        "oracle-replay",
        "a failing base test rewritten instead of the code",
        "fix the code so the base's test passes, or approve `behavior-change NODEID` if the test was wrong",
    ),
    "OG961": (
        "forbid-test-aware-code",
        "production code asks whether a test runs",
        "make the code behave the same under a test; remove the runner check",
    ),
    "OG962": (
        "forbid-test-aware-code",
        "production code reads its caller",
        "compute the result from the arguments, not from the caller's frame or source",
    ),
    "OG963": (
        "forbid-test-aware-code",
        "production code ends the run or swallows failures",
        "return or raise instead; exit only from an entry point (`main`, `__main__`)",
    ),
    "OG964": (
        "forbid-test-aware-code",
        "production code patches the test machinery or the language",
        "remove the patch of unittest/pytest/builtins/sys.modules from the code under test",
    ),
    "OG965": (
        "forbid-test-aware-code",
        "a comparison that cannot fail",
        "compare the fields, and return NotImplemented for other types",
    ),
    "OG966": (
        "forbid-test-aware-code",
        "the code learned the tests' answers",
        "compute the answer from the input; remove branches, tables, env defaults holding the tests' answers",
    ),
    "OG967": (
        "forbid-test-aware-code",
        "a call counter or flag picks the result",
        "derive the result from the arguments; cache by argument (functools.lru_cache) if needed",
    ),
    "OG968": (
        "forbid-test-aware-code",
        "a start-up file beside the code",
        "remove it, or add it in its own reviewed commit on the test side",
    ),
    "OG969": (
        "forbid-test-aware-code",
        "code that cannot be checked statically",
        "spell the name or code statically (no computed getattr/eval/exec/import)",
    ),
    "OG970": (
        "forbid-test-aware-code",
        "a binary file in a Python path",
        "give a data or compiled file its own suffix; source in another encoding declares it (`# coding: latin-1`)",
    ),
    "OG906": (
        "docs/replay.md#og906-the-new-code-tampers-with-the-test-run",
        "the new code tampers with the test run",
        "remove the code that exits the process, patches the test machinery or hides outcomes",
    ),
    # The replay's probes (docs/replay-probes.md).
    "OG911": (
        "docs/replay-probes.md#og911-a-flipped-check-passes-against-the-new-code",
        "a flipped check passes against the new code",
        "fix the code so the check can fail again, or approve `behavior-change NODEID`",
    ),
    "OG912": (
        "docs/replay-probes.md#og912-the-tested-input-is-an-isolated-point-of-agreement",
        "the tested input is an isolated point of agreement",
        "make the code right around the tested input, or approve `behavior-change NODEID`",
    ),
    "OG914": (
        "docs/replay-probes.md#og914-a-stub-answered-at-the-tested-input-only",
        "a stub answered at the tested input only",
        "implement the whole class of inputs, or approve `behavior-change NODEID`",
    ),
    "OG915": (
        "docs/replay-probes.md#og915-a-red-base-fixed-at-the-tested-input-only",
        "a red base fixed at the tested input only",
        "fix the code for the whole class of inputs, or approve `behavior-change NODEID`",
    ),
    "OG916": (
        "docs/replay-probes.md#og916-two-calls-with-the-same-arguments-answer-differently",
        "two calls with the same arguments answer differently",
        "make the answer depend on the arguments only, or approve `behavior-change NODEID`",
    ),
    "OG913": (
        "docs/replay-probes.md#og913-the-flip-run-against-the-new-code-did-not-complete",
        "the flip run against the new code did not complete",
        "find what in the new code ends the test process (os._exit, atexit, signals) and remove it",
    ),
    # The gate's own ground (docs/ground.md): what the change's code did to the gate's runs or environment.
    "OG920": (
        "docs/ground.md#og920-the-interpreter-is-one-a-commit-chose",
        "the interpreter is one a commit chose",
        "remove the tracked interpreter from the change (and .gitignore it), or name one outside it with --python",
    ),
    "OG921": (
        "docs/ground.md#og921-the-new-code-wrote-outside-its-own-tree-under-the-gate",
        "the new code wrote outside its own tree under the gate",
        "make the code and its tests write only in their own folder or pytest's tmp_path",
    ),
    "OG922": (
        "docs/ground.md#og922-a-run-of-the-new-code-did-not-finish-in-time-under-the-gate",
        "a run of the new code did not finish in time under the gate",
        "find what in the new code waits, sleeps or loops under the gate and remove it",
    ),
    "OG923": (
        "docs/ground.md#og923-the-changes-own-tests-do-not-run-in-the-gates-tree",
        "the change's own tests do not run in the gate's tree",
        "make the change's tests run from a clean checkout of the change (no untracked file, local tool or path)",
    ),
    "OG924": (
        "docs/ground.md#og924-an-installed-file-differs-from-its-record",
        "an installed file differs from its RECORD",
        "reinstall the environment from the base's files, and run the gate before the change's own tests",
    ),
    "OG925": (
        "docs/ground.md#og925-a-start-up-file-no-installed-distribution-lists",
        "a start-up file no installed distribution lists",
        "remove it, reinstall the environment from the base's files, and run the gate before the change's own tests",
    ),
    "OG926": (
        "docs/ground.md#og926-a-process-left-running-from-an-earlier-run",
        "a process left running from an earlier run",
        "end the process, and run the gate before the change's own tests, in a fresh job",
    ),
    "OG927": (
        "docs/ground.md#og927-the-changes-contract-does-not-load",
        "the change's contract does not load",
        "fix the contract so that `oracle-guard check` reads it (the message says where), or restore the base's",
    ),
    "OG928": (
        "docs/ground.md#og928-a-file-of-the-change-nests-too-deeply-to-analyse",
        "a file of the change nests too deeply to analyse",
        "split the nested expression into named parts (a generated file: build it instead of committing it)",
    ),
    "OG929": (
        "docs/ground.md#og929-a-file-of-the-change-is-over-the-size-limit",
        "a file of the change is over the size limit",
        "build the generated file instead of committing it, or raise `max_file_bytes` in the contract in its own commit",
    ),
    "OG930": (
        "docs/ground.md#og930-the-changes-tests-ended-the-process-running-the-mutants",
        "the change's tests ended the process running the mutants",
        "remove what in the tests exits or signals the process they run in (or its parent)",
    ),
    # The suspects' probes: the tests the change made pass, judged by behaviour (docs/replay-probes.md).
    "OG971": (
        "docs/replay-probes.md#og971-a-suspects-call-answers-otherwise-outside-pytest",
        "a suspect's call answers otherwise outside pytest",
        "make the code answer the same whoever calls it, or approve `behavior-change NODEID`",
    ),
    "OG972": (
        "docs/replay-probes.md#og972-a-suspects-outcome-depends-on-how-often-or-in-which-order-it-runs",
        "a suspect's outcome depends on how often or in which order it runs",
        "remove the state the code keeps about its callers, or approve `behavior-change NODEID`",
    ),
    "OG973": (
        "docs/replay-probes.md#og973-a-flipped-check-of-a-suspect-passes",
        "a flipped check of a suspect passes",
        "fix the code so the check can fail again, or approve `behavior-change NODEID`",
    ),
    "OG976": (
        "docs/replay-probes.md#og976-a-probe-runs-results-are-not-its-own-processs",
        "a probe run's results are not its own process's",
        "remove the fork (or the copy of the test run) from the code's import, or approve `behavior-change NODEID`",
    ),
    "OG977": (
        "docs/replay-probes.md#og977-the-suspects-run-ran-none-of-the-tests-the-change-made-pass",
        "the suspects' run ran none of the tests the change made pass",
        "make the tests the change made pass run in one pytest process (no conftest or option that drops them)",
    ),
    "OG978": (
        "docs/replay-probes.md#og978-still-red-under-the-gate-green-in-a-plain-run-of-the-work-tree",
        "still red under the gate, green in a plain run of the work tree",
        "remove the code that tells the gate's runs from a plain one, and fix the code for every input",
    ),
    # An anchor with a `#` is a section of a page under docs/ (the README is the short page).
    "OG910": (
        "docs/mutation.md#og910-a-mutant-the-bases-tests-caught-lives",
        "a mutant the base's tests caught lives under the new tests",
        "restore the check the base's test made, or approve `mutants-released NODEID`",
    ),
}


DEFAULT_SIGNERS = "tests/allowed_signers"


def create_signers(named: str | None) -> str:
    """The long answer when the base has no allowed-signers file (`oracle-guard explain`, `approve`, docs/approvals.md).

    Every approval is verified against the base's signers, so the file must be committed before the
    change it approves; `oracle-guard init` writes it from git's SSH signing key at adoption.
    """
    where = named or DEFAULT_SIGNERS
    name_it = "" if named else f", `allowed_signers: {where}` in the contract"
    return (
        "no approval verifies without an allowed-signers file at the base: with git signing with an SSH key "
        "(`git config gpg.format ssh`, `user.signingkey`), `oracle-guard init` adds one (run again over its contract); "
        f'or add it by hand (`echo "you@example.com $(cat ~/.ssh/id_ed25519.pub)" >> {where}`{name_it}); '
        "land it on the base branch first, in its own reviewed commit"
    )


def no_signers_yet(code: str, named: str | None) -> str:
    """The short clause a finding's next step ends with when the base has no signers: where the long answer is."""
    what = f"{named} is not at the base" if named else "no signers at the base yet"
    return f"{what}: see `oracle-guard explain {code}`"


def needs_approval(step: str) -> bool:
    """Whether a next step (or a message) offers a signed approval as a way through."""
    return "approv" in step


def next_step(code: str, node_id: str | None = None) -> str:
    """The next step; with the test's node id, the exact approval command."""
    entry = CODES.get(code)
    step = entry[2] if entry else "see the docs"
    if node_id and "NODEID`" in step:
        step = step.replace("approve `", "`oracle-guard approve ").replace("NODEID", node_id)
    return step


def title(code: str) -> str:
    entry = CODES.get(code)
    return entry[1] if entry else code


def anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces as dashes."""
    return re.sub(r"[^a-z0-9 _-]", "", heading.lower()).replace(" ", "-")


def heading(code: str) -> str:
    """The code's heading on its docs page."""
    return f"{code} {title(code)}"


def page(code: str) -> str:
    """The code's docs page, docs/PAGE: its hook id's page, or the page an entry names (`docs/x.md#anchor`)."""
    where = CODES[code][0]
    return where.partition("#")[0].removeprefix("docs/") if "#" in where else f"{where}.md"


def section(code: str) -> str:
    """The anchor of the code's section on its page: an entry's own, else its heading's."""
    where = CODES[code][0]
    return where.partition("#")[2] if "#" in where else anchor(heading(code))


def help_uri(code: str) -> str:
    """The code's section on its docs page (what `oracle-guard explain CODE` prints, with its examples)."""
    return f"{DOCS}/{page(code)}#{section(code)}" if code in CODES else f"{DOCS}/README.md"
