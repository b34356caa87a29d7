"""Each changed file with the base file it is compared with: the same path, its old name if renamed, or none.

The engines that judge a change file by file (oracle_guard.rules.pydiff for the rules,
oracle-shrink for the checks) read every changed and deleted file of the
change, not only the reported ones: a test may have moved between files.
One helper so both read the same blobs the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from oracle_guard.repo import changes


@dataclass
class FilePairs:
    paths: list[str]  # the reported paths, then every other changed path
    new: dict[str, bytes | None]  # new contents by new path
    base: dict[str, bytes | None]  # base contents by base path (old names and deleted files)
    old_of: dict[str, str | None]  # new path -> base path (None: a new file)
    deleted: list[str]  # base paths of deleted files

    def base_data(self, path: str) -> bytes | None:
        """The base contents of new PATH (its old name's), None for a new file."""
        old = self.old_of[path]
        return self.base.get(old) if old else None

    def changed(self, path: str) -> bool:
        """Whether PATH's contents differ from its base file's (a new file always differs)."""
        return self.new.get(path) != self.base_data(path)


def pair_files(
    change_set: changes.ChangeSet, paths: Sequence[str], suffixes: tuple[str, ...] | None = None
) -> FilePairs:
    """PATHS and the other changed files (ending in SUFFIXES, if given), read on both sides of CHANGE_SET."""
    wanted = set(paths)
    others = [p for p in change_set.changed_paths if p not in wanted and (suffixes is None or p.endswith(suffixes))]
    every = list(paths) + others
    new = change_set.read_new(every)
    old_of = {p: change_set.old_path(p) for p in every}
    deleted = [p for p in change_set.deleted if suffixes is None or p.endswith(suffixes)]
    base = change_set.read_base([o for o in old_of.values() if o] + deleted)
    return FilePairs(every, new, base, old_of, deleted)
