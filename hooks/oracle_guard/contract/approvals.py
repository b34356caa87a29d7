"""Signed approvals: the only way a weakening passes.

INTERFACE (stable): hooks that find a weakening describe it as one canonical
*statement* and ask ``Approvals.load(...).covers(statement)``.  Statements
are single lines::

    fixture-rotate <fixture-id> <old-sha256> <new-sha256>
    fixture-unlock <fixture-id> <old-sha256>          (dropped from the contract)
    fixture-repoint <fixture-id> <old-path> <new-path>
    property-retire <property-id>
    property-lower <property-id> <old-min> <new-min>
    property-repoint <property-id> <old-module>:<old-name> <new-module>:<new-name>
    freeze-add <freeze-id> <expires> <remaining_reruns>
    test-retire <test-node-id>
    test-skip <test-node-id>
    skip-add <test-node-id>          (OG101, OG201, OG202)
    check-removed <test-node-id>     (OG301, OG307, OG310, OG311)
    expected-change <test-node-id>   (OG303, OG304, OG306, OG309, OG312-OG314)
    signers-change <sha256 of the new allowed-signers file>
    contract-setting <key> <old> <new>                (see oracle_guard/contract/trust.py)
    behavior-change <test-node-id>              (the base's test fails on the new code: oracle-replay)
    mutants-released <test-node-id>             (mutants the base's test caught live now: check --mutate, OG910)

An approval is a file ``<approvals dir>/*.approval`` (default
``tests/approvals/``): the statement on its first line, then an SSH signature
of exactly that line (``ssh-keygen -Y sign -n oracle-guard``, the format git
uses for SSH-signed commits).  It is checked with ``ssh-keygen -Y verify``
against the allowed-signers file named by the contract **as both stood at the
base revision**, so a patch cannot approve itself by adding a key.  No
signers file at the base, no ``ssh-keygen``, a bad signature: nothing is
approved (fail closed).  An approval covers exactly its statement.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from oracle_guard.repo import git
from oracle_guard.reporting.report import UsageError, notice

if TYPE_CHECKING:
    from oracle_guard.contract import contract as contract_mod
    from oracle_guard.repo.changes import ChangeSet

NAMESPACE = "oracle-guard"
SUFFIX = ".approval"
NONCE = "nonce="
MAX_APPROVAL_BYTES = 64 * 1024
SIGNERS_DOCS = "docs/approvals.md#no-signers-at-the-base-yet"  # the long answer, out of the finding's line
# verb -> number of arguments after it
VERBS = {
    "fixture-rotate": 3,
    "fixture-unlock": 2,
    "fixture-repoint": 3,
    "property-retire": 1,
    "property-lower": 3,
    "property-repoint": 3,
    "freeze-add": 3,
    "test-retire": 1,
    "test-skip": 1,
    "signers-change": 1,
    "contract-setting": 3,
    # The static findings (oracle_guard.rules.static_approvals): NODE ID of the test the finding is in.
    "skip-add": 1,
    "check-removed": 1,
    "expected-change": 1,
    "behavior-change": 1,
    "mutants-released": 1,  # the base's test caught mutants the new tests let live (probes/mutation/gate.py)
}


def canonical(statement: str) -> str:
    """One line, single spaces: the exact bytes that are signed (plus a newline)."""
    return " ".join(statement.split())


def command_for(statement: str) -> str:
    """What a human runs to approve STATEMENT (for messages)."""
    return f"oracle-guard approve {canonical(statement)}"


def signers_missing(
    base_contract: contract_mod.Contract | None, read_base: Callable[[list[str]], dict[str, bytes | None]]
) -> str | None:
    """None when the base has an allowed-signers file; else the path its contract names ("" when none is named).

    READ_BASE reads files at the base.  Without that file no approval verifies, so a hint that offers one says so.
    """
    named = base_contract.allowed_signers if base_contract is not None else None
    if not named:
        return ""
    data = read_base([named]).get(named)
    return None if data and data.strip() else named


def _ssh_keygen() -> str | None:
    return shutil.which("ssh-keygen")


def canonical_armor(text: str) -> str:
    """The armored signature with each line stripped and blank lines dropped, LF line ends.

    Base64 and the BEGIN/END lines hold no whitespace, so a checkout with
    ``core.autocrlf`` (CRLF), an editor's trailing spaces or indentation change
    nothing that was signed; a copy of a spent approval stays spent in any spelling.
    """
    lines = [line.strip() for line in text.splitlines()]
    return "\n".join(line for line in lines if line) + "\n"


def _signature_of(text: str) -> tuple[str, str, str] | None:
    """(statement, armored signature, signed line) of an approval file, or None if malformed.

    The signed line may end in ``nonce=<hex>`` (``oracle-guard approve`` adds
    one): it is signed with the statement, so approving the same statement
    again gives a new signature, and a copy of a spent approval stays spent.
    The statement line is read canonically (the first line that is not blank;
    whitespace runs, tabs, any line end, a byte-order mark): the canonical line is
    what ``oracle-guard approve`` signs, so an editor's re-spacing changes nothing
    that was signed, and any other change to the line fails the signature.
    """
    lines = [_unmarked(line) for line in text.splitlines()]  # any line end: LF, CRLF, a lone CR, U+2028
    first = next((i for i, line in enumerate(lines) if line), len(lines))
    if first == len(lines):
        return None
    line, rest = lines[first], "\n".join(lines[first + 1 :])
    if not rest.lstrip().startswith("-----BEGIN SSH SIGNATURE-----"):
        return None
    signed = canonical(line)
    words = signed.split(" ")
    statement = " ".join(words[:-1]) if len(words) > 1 and words[-1].startswith(NONCE) else signed
    return statement, canonical_armor(rest), signed


def _unmarked(line: str) -> str:
    """LINE without the whitespace and byte-order marks (U+FEFF) an editor may put around it."""
    return line.strip().lstrip("\ufeff").strip()


def verify(statement: str, signature: str, allowed_signers: bytes) -> str | None:
    """The principal who signed STATEMENT, or None. Needs ssh-keygen."""
    tool = _ssh_keygen()
    if tool is None:
        return None
    message = (canonical(statement) + "\n").encode()
    with tempfile.TemporaryDirectory(prefix="oracle-guard-") as tmp:
        signers_path = os.path.join(tmp, "allowed_signers")
        sig_path = os.path.join(tmp, "approval.sig")
        with open(signers_path, "wb") as f:
            f.write(allowed_signers)
        with open(sig_path, "w", encoding="utf-8", newline="\n") as f:
            f.write(canonical_armor(signature))  # ssh-keygen refuses an armour with CR or stray spaces
        found = subprocess.run(
            (tool, "-Y", "find-principals", "-s", sig_path, "-f", signers_path),
            capture_output=True,
        )
        if found.returncode != 0:
            return None
        for principal in found.stdout.decode("utf-8", "replace").split():
            checked = subprocess.run(
                (tool, "-Y", "verify", "-f", signers_path, "-I", principal, "-n", NAMESPACE, "-s", sig_path),
                input=message,
                capture_output=True,
            )
            if checked.returncode == 0:
                return principal
    return None


def _approval_files(folder: str, change_set: ChangeSet) -> dict[str, bytes]:
    """Approval files the change being judged adds or edits, with their new bytes.

    Only the change counts: an approval already at the base was used there,
    and an untracked file is no part of a staged commit (git's diff, not the
    folder's listing, says what the change holds; no extra git process).
    """
    prefix = folder.rstrip("/") + "/"
    names = [p for p in change_set.changed_paths if p.startswith(prefix) and p.endswith(SUFFIX)]
    if not names:
        return {}
    blobs = change_set.read_new(names)
    return {k: v for k, v in blobs.items() if v is not None and len(v) <= MAX_APPROVAL_BYTES}


def _signatures_at(rev: str, folders: Sequence[str]) -> set[str]:
    """Signatures of the approval files already committed at REV: they were spent there."""
    specs = [f.rstrip("/") + "/" for f in dict.fromkeys(folders) if f]
    out = git.run("--literal-pathspecs", "ls-tree", "-r", "-z", "--name-only", rev, "--", *specs)
    names = [os.fsdecode(n) for n in out.split(b"\0") if n.endswith(SUFFIX.encode())]
    spent = set()
    for data in git.read_blobs(rev, names).values():
        parsed = _signature_of(data.decode("utf-8", "replace")) if data else None
        if parsed is not None:
            spent.add(parsed[1].strip())
    return spent


@dataclass
class Approvals:
    statements: frozenset[str] = field(default_factory=frozenset)  # already verified
    candidates: dict[str, list[tuple[str, str, str]]] = field(
        default_factory=dict
    )  # statement -> [(file, signature, signed line)]
    allowed_signers: bytes | None = None
    why_none: str = f"no allowed-signers file is configured at the base revision yet (see {SIGNERS_DOCS})"
    _checked: dict[str, bool] = field(default_factory=dict)
    base: str | None = None  # the base revision: approvals committed there are spent
    folders: tuple[str, ...] = ()
    _spent: set[str] | None = None

    @classmethod
    def load(
        cls,
        change_set: ChangeSet | None,
        base_contract: contract_mod.Contract | None,
        new_contract: contract_mod.Contract | None,
    ) -> Approvals:
        """Approvals in the change, checked against the base's allowed signers."""
        signers_path = base_contract.allowed_signers if base_contract is not None else None
        base = change_set.base if change_set is not None else None
        result = cls()
        if not signers_path or not base or change_set is None or base_contract is None:
            return result
        blob = git.read_blobs(base, [signers_path]).get(signers_path)
        if not blob or not blob.strip():
            result.why_none = (
                f"the allowed-signers file {signers_path} does not exist at the base revision (see {SIGNERS_DOCS})"
            )
            return result
        result.allowed_signers = blob
        folder = (new_contract.approvals if new_contract is not None else None) or base_contract.approvals
        result.base, result.folders = base, (folder, base_contract.approvals)
        for path, data in _approval_files(folder, change_set).items():
            parsed = _signature_of(data.decode("utf-8", "replace"))
            if parsed is not None:
                result.candidates.setdefault(parsed[0], []).append((path, parsed[1], parsed[2]))
        if result.candidates:
            result.spent()
        return result

    def covers(self, statement: str) -> bool:
        statement = canonical(statement)
        if statement in self.statements:
            return True
        if statement in self._checked:
            return self._checked[statement]
        ok = False
        if self.allowed_signers is not None and statement in self.candidates:
            if _ssh_keygen() is None:
                notice("ssh-keygen is not on PATH: signed approvals cannot be verified, so none counts (fail closed)")
            else:
                fresh = [
                    (sig, signed) for _, sig, signed in self.candidates[statement] if sig.strip() not in self.spent()
                ]
                ok = any(verify(signed, sig, self.allowed_signers) for sig, signed in fresh)
        self._checked[statement] = ok
        return ok

    def spent(self) -> set[str]:
        """Signatures already at the base: an approval counts once, in the change that adds it."""
        if self._spent is None:
            self._spent = _signatures_at(self.base, self.folders) if self.base else set()
        return self._spent

    def explain(self, statement: str) -> str:
        """Why STATEMENT is not approved and how to approve it, for a finding."""
        if self.allowed_signers is None:
            return f"needs a signed approval, but {self.why_none}"
        candidates = self.candidates.get(canonical(statement), [])
        if candidates and all(sig.strip() in self.spent() for _, sig, _ in candidates):
            return f"its approval was already committed at the base and was used there; an approval counts once: sign a new one: `{command_for(statement)}`"
        if canonical(statement) in self.candidates:
            return "its approval's signature does not verify against the base's allowed signers"
        return f"needs a signed approval: `{command_for(statement)}`"


# -- signing (the `oracle-guard approve` command is oracle_guard/commands/approve.py) ------------


def sign(statement: str, key: str) -> str:
    tool = _ssh_keygen()
    if tool is None:
        raise UsageError("ssh-keygen is not on PATH; install OpenSSH 8.2 or newer to sign approvals")
    message = (canonical(statement) + "\n").encode()
    with tempfile.TemporaryDirectory(prefix="oracle-guard-") as tmp:
        key_file = key
        if key.startswith("key::"):  # git's literal-public-key form: the private half is in the agent
            key_file = os.path.join(tmp, "key.pub")
            with open(key_file, "w", encoding="utf-8") as f:
                f.write(key[5:] + "\n")
        elif not os.path.exists(os.path.expanduser(key)):
            raise UsageError(f"signing key {key} does not exist")
        proc = subprocess.run(
            (tool, "-Y", "sign", "-f", os.path.expanduser(key_file), "-n", NAMESPACE),
            input=message,
            capture_output=True,
        )
    if proc.returncode != 0 or b"BEGIN SSH SIGNATURE" not in proc.stdout:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"ssh-keygen could not sign with {key}: {err[-1] if err else 'no signature'}")
    return proc.stdout.decode()


def parse_statement(words: Sequence[str]) -> str:
    words = " ".join(words).split()  # a statement pasted as one quoted word, in any spacing, is the same statement
    if not words:
        raise UsageError(f"say what to approve: one of {', '.join(VERBS)}")
    verb, args = words[0], list(words[1:])
    if verb not in VERBS:
        raise UsageError(f"unknown approval '{verb}'; one of {', '.join(VERBS)}")
    if len(args) != VERBS[verb] or any(not a.strip() or any(c.isspace() for c in a) for a in args):
        raise UsageError(f"'{verb}' takes {VERBS[verb]} argument(s) without spaces (see `oracle-guard approve --help`)")
    return canonical(" ".join([verb, *args]))


def file_name(statement: str) -> str:
    verb, _, rest = statement.partition(" ")
    subject = re.sub(r"[^A-Za-z0-9_.-]+", "_", rest.split(" ")[0])[:60]
    digest = hashlib.sha256(statement.encode()).hexdigest()[:12]
    return f"{verb}-{subject}-{digest}{SUFFIX}"
