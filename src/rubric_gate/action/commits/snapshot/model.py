"""A snapshot: one commit's view of every fact the gate depends on.

The rubrics under the globs and the promptfoo configs its `.rubric-gate.yaml` names (read in
place: their id, calibration set, verdicts and task come from that file, at the same commit),
the calibration sets and the verdict files they name, each read
once through the one reader (`action.commits.sources`: by tree entry, regular blobs only) and each blob
parsed once per run (`snapshot.memo`, `action.commits.blob_cache`: by blob id, shared across snapshots).

Two sides: the *trusted* one, what the base branch vouches for (the PR's merge base and the base
branch's tip), and the *proposed* one, the PR's head as it will merge: each file the PR changes
as the head has it, every other file as the tip has it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from rubric_gate.action.commits.blob_cache import read_store
from rubric_gate.action.commits.changed import ChangedFile, matches_any
from rubric_gate.action.commits.snapshot.memo import ParseMemo, SettingsFile, default_memo
from rubric_gate.action.commits.sources import FileReader, RepoFile, TreeEntry, check_repo_path
from rubric_gate.calibration import CalibrationSet
from rubric_gate.errors import InputError
from rubric_gate.rubric import RubricDocument
from rubric_gate.rubric.mapping import MAPPING_FILE, PromptfooEntry
from rubric_gate.verdicts import VerdictStore


class Snapshot:
    """The files of one commit as the gate reads them. Absent files are None; a file that is
    not a regular blob, or does not parse, is the reader's or parser's InputError."""

    def __init__(self, reader: FileReader, sha: str, name: str, memo: ParseMemo | None = None) -> None:
        self.reader = reader
        self.sha = sha
        self.name = name  # "merge base", "base tip", "head", "proposed": for messages
        self.memo = memo or default_memo()
        self._rubric_paths: dict[tuple[str, ...], list[str]] = {}

    def __repr__(self) -> str:
        return f"Snapshot({self.name} {self.sha[:7]})"

    # -- where each path is read ---------------------------------------------------------------
    def commit_of(self, path: str) -> str | None:
        """The commit `path` is read from in this snapshot (None: not in it)."""
        return self.sha

    def display(self, path: str) -> str:
        return f"{(self.commit_of(path) or self.sha)[:7]}:{path}"

    def paths(self) -> list[str]:
        """Every non-directory path (symlinks and submodules too, so that one is refused, not skipped)."""
        return self.reader.list_files(self.sha)

    def rubric_paths(self, globs: tuple[str, ...]) -> list[str]:
        """The paths under the `rubrics` globs (matched once per snapshot: a tree can be large),
        then the promptfoo configs this snapshot's settings file names (none when it does not
        load: each config then fails to load where it is gated)."""
        if globs not in self._rubric_paths:
            found = [p for p in self.paths() if matches_any(p, globs)]
            try:
                named = self.configs()
            except InputError:
                named = {}
            matched = set(found)
            found += [p for p in named if p not in matched]
            self._rubric_paths[globs] = found
        return list(self._rubric_paths[globs])

    def settings_file(self) -> SettingsFile | None:
        """`.rubric-gate.yaml` at this snapshot (None: there is none; not a regular file: the
        reader's InputError)."""
        found = self.file(MAPPING_FILE)
        return None if found is None else SettingsFile(found.blob_id, found.text, self.display(MAPPING_FILE))

    def configs(self) -> dict[str, PromptfooEntry]:
        """The promptfoo configs the settings file names that this snapshot has, by path, with
        their entries; {} without settings; an InputError naming its line when it does not load."""
        named = self.memo.configs(self.settings_file())
        out = {}
        for path, entry in named.items():
            try:
                present = self.entry(path) is not None
            except InputError:  # a path no file can have: the config's loading says so where it is gated
                continue
            if present:
                out[path] = entry
        return out

    # -- reading ---------------------------------------------------------------------------------
    def _where(self, path: str) -> tuple[str | None, str]:
        """The commit to read `path` from and the path as git lists it (`./a//b` is `a/b`;
        `..`, absolute paths and backslashes are refused before any lookup)."""
        path = check_repo_path(self.sha, path)
        return self.commit_of(path), path

    def entry(self, path: str) -> TreeEntry | None:
        sha, path = self._where(path)
        return None if sha is None else self.reader.entry(sha, path)

    def file(self, path: str) -> RepoFile | None:
        sha, path = self._where(path)
        return None if sha is None else self.reader.read_file(sha, path)

    def text(self, path: str) -> str | None:
        found = self.file(path)
        return None if found is None else found.text

    def blob_id(self, path: str) -> str | None:
        """The regular file's blob id (other entries: the reader's InputError), None when absent."""
        sha, path = self._where(path)
        return None if sha is None else self.reader.blob_id(sha, path)

    def rubric_keys(self, path: str) -> dict[str, str]:
        """`id`, `calibration`, `verdicts`, `judge`, `task` as the one YAML loader reads them ({}
        when absent, not a regular file, or not loading: the error is reported where it is gated)."""
        try:
            found = self.file(path)
        except InputError:
            return {}
        if found is None:
            return {}
        return self.memo.rubric_keys(found.blob_id, found.text, self.display(path), found.path, self.settings_file)

    def rubric(self, path: str, repo_path: str | None = None) -> RubricDocument | None:
        found = self.file(path)
        if found is None:
            return None
        # A promptfoo config is read with the settings file of the same snapshot (asked only for one).
        return self.memo.rubric(found.blob_id, found.text, self.display(path), repo_path, path=found.path,
                                settings=self.settings_file, settings_display=self.display(MAPPING_FILE))

    def calibration(self, path: str) -> CalibrationSet | None:
        """Every labeled item, all splits."""
        found = self.file(path)
        return None if found is None else self.memo.calibration(found.blob_id, found.text, self.display(path))

    def verdicts(self, path: str) -> VerdictStore | None:
        sha, path = self._where(path)
        return None if sha is None else read_store(self.reader, sha, path)


class ProposedSnapshot(Snapshot):
    """The PR's head as it will merge onto the base tip: what the PR changed (since its merge
    base) as the head has it, everything else as the tip has it."""

    def __init__(self, reader: FileReader, head_sha: str, tip_sha: str, files: Iterable[ChangedFile],
                 memo: ParseMemo | None = None) -> None:
        super().__init__(reader, head_sha, "proposed", memo)
        self.tip_sha = tip_sha
        self._from_head: set[str] = set()
        self._gone: set[str] = set()
        for f in files:
            if f.status == "removed":
                self._gone.add(f.path)
            else:
                self._from_head.add(f.path)
                if f.previous:
                    self._gone.add(f.previous)
        self._gone -= self._from_head

    def commit_of(self, path: str) -> str | None:
        if path in self._from_head:
            return self.sha
        return None if path in self._gone else self.tip_sha

    def paths(self) -> list[str]:
        on_tip = [p for p in self.reader.list_files(self.tip_sha) if p not in self._gone and p not in self._from_head]
        head = set(self.reader.list_files(self.sha))
        return sorted([*on_tip, *(p for p in self._from_head if p in head)])


@dataclass
class Snapshots:
    """What a PR is gated on: the trusted side (merge base and base tip) and the proposed one."""

    merge_base: Snapshot
    tip: Snapshot  # the base branch's tip: `merge_base` itself when the branch has not moved
    head: Snapshot  # the PR's head commit, as the diff from the merge base lists its changes
    proposed: Snapshot  # the head as it will merge onto the tip
    files: list[ChangedFile] = field(default_factory=list)  # the PR's changes since the merge base

    @property
    def tip_moved(self) -> bool:
        return self.tip is not self.merge_base

    @property
    def trusted(self) -> tuple[Snapshot, ...]:
        """What the base branch vouches for: the merge base, and the tip when it moved on."""
        return (self.merge_base, self.tip) if self.tip_moved else (self.merge_base,)

    @property
    def reader(self) -> FileReader:
        return self.merge_base.reader


def load_snapshots(reader: FileReader, merge_base: str, tip: str, head: str, files: list[ChangedFile],
                   memo: ParseMemo | None = None) -> Snapshots:
    """The snapshots of one PR (`files`: its changes from `merge_base` to `head`). Nothing is read
    until asked for; what is read is read once."""
    memo = memo or default_memo()
    base = Snapshot(reader, merge_base, "merge base", memo)
    at_tip = base if tip == merge_base else Snapshot(reader, tip, "base tip", memo)
    return Snapshots(base, at_tip, Snapshot(reader, head, "head", memo),
                     ProposedSnapshot(reader, head, tip, files, memo), list(files))
