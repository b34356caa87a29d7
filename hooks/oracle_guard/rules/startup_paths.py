"""forbid-test-aware-code's class 8 by path (OG968): start-up files, shadows of what the base's tests import,
new pytest11 entry points. Read from the change's paths and packaging; the base's facts come as callables."""

from __future__ import annotations

from typing import Callable

from oracle_guard.analysis.testaware import startup
from oracle_guard.repo import changes
from oracle_guard.repo.paths import TEST_FILES
from oracle_guard.reporting.report import Finding


def findings(
    change_set: changes.ChangeSet, tests_import: Callable[[str], bool], defines: Callable[[str], bool]
) -> list[Finding]:
    """Class 8 by path: start-up files, stdlib or test-dependency shadows, new pytest11 entry points."""
    findings = []
    for change in change_set.changes:
        path = change.path
        if path is None:
            continue
        renamed = change.old_path != path
        why = startup.startup_file(path)
        module = startup.top_module(path)
        if why and (renamed or path.rpartition("/")[2] in startup.STARTUP_NAMES or path.endswith(".pth")):
            findings.append(Finding(path, 1, 1, "OG968", f"a start-up file: {why}"))
        elif why is None and module and renamed and path.endswith(".py") and not TEST_FILES.search(path):
            shadowed = tests_import(module) and not defines(module)
            if shadowed:
                findings.append(
                    Finding(path, 1, 1, "OG968", f"it shadows `{module}`, which the base's tests import from elsewhere")
                )
        if path in startup.PACKAGING:
            old = change.old_path
            before = startup.entry_points(old, change_set.read_base([old])[old], "pytest11") if old else {}
            data = change_set.read_new([path])[path]
            for name, target in sorted(startup.entry_points(path, data, "pytest11").items()):
                if before.get(name) != target:
                    findings.append(
                        Finding(
                            path,
                            _line_of(data, name),
                            1,
                            "OG968",
                            f"new pytest11 entry point {name} = {target}: pytest loads it into every test run",
                        )
                    )
    return findings


def _line_of(data: bytes | None, word: str) -> int:
    text = (data or b"").decode("utf-8", "replace")
    at = text.find(word)
    return text.count("\n", 0, at) + 1 if at >= 0 else 1
