"""Commits held in memory, read through the action's `FileReader` interface: the snapshots and
their classified diff run on them without git (unit speed). Blob ids are git's (the SHA-1 of
`blob <size>\\0<bytes>`), so equal content has equal ids across commits, as in a repository."""

from __future__ import annotations

import hashlib

from rubric_gate.action.commits.sources import RepoFile, TreeEntry


def blob_id(text: str) -> str:
    data = text.encode("utf-8")
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git's object id


class MemoryRepo:
    """Commits by name, each a dict of path -> text; `commit` derives one from another."""

    kind = "memory"

    def __init__(self) -> None:
        self.commits: dict[str, dict[str, str]] = {}

    def commit(self, sha: str, files: dict[str, str | None], parent: str | None = None) -> str:
        """A commit `sha`: `parent`'s files with `files` written over them (None: deleted)."""
        tree = dict(self.commits[parent]) if parent is not None else {}
        for path, text in files.items():
            if text is None:
                tree.pop(path, None)
            else:
                tree[path] = text
        self.commits[sha] = tree
        return sha

    # -- the FileReader interface ------------------------------------------------------------------
    def entry(self, sha: str, path: str) -> TreeEntry | None:
        text = self.commits[sha].get(path)
        return None if text is None else TreeEntry(path, "100644", blob_id(text))

    def read_file(self, sha: str, path: str) -> RepoFile | None:
        text = self.commits[sha].get(path)
        return None if text is None else RepoFile(path, text, blob_id(text))

    def read(self, sha: str, path: str) -> str | None:
        return self.commits[sha].get(path)

    def blob_id(self, sha: str, path: str) -> str | None:
        text = self.commits[sha].get(path)
        return None if text is None else blob_id(text)

    def list_files(self, sha: str) -> list[str]:
        return sorted(self.commits[sha])
