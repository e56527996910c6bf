"""Read a file as of a commit, by its tree entry: with git when the workspace has the history,
else the GitHub API (whose trees list the same modes and blob ids).

One reader for everything a PR touches (rubrics, calibration sets, verdict files): only a
regular blob is read. A symlink's blob is its target string and a submodule has no blob, so
either, read as text, would pass for a file nobody wrote (a symlink "containing" the base YAML).
"""

from __future__ import annotations

import base64
import posixpath
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO, Protocol

from github import GithubException
from github.Repository import Repository

from rubric_gate.errors import InputError
from rubric_gate.sources.files import decode_text

REGULAR_MODES = ("100644", "100755")
MODE_NAMES = {"120000": "a symlink", "160000": "a submodule", "040000": "a directory"}


@dataclass(frozen=True)
class TreeEntry:
    path: str
    mode: str  # git's file mode: 100644/100755 regular, 120000 symlink, 160000 submodule, 040000 tree
    blob_id: str  # the object id: the same bytes have the same id at every commit


@dataclass(frozen=True)
class RepoFile:
    """A regular file's text at a commit, with its blob id (equal ids: equal bytes)."""

    path: str
    text: str
    blob_id: str


class FileReader(Protocol):
    kind: str

    def entry(self, sha: str, path: str) -> TreeEntry | None:
        """The tree entry at `sha`, or None when there is none."""

    def read_file(self, sha: str, path: str) -> RepoFile | None:
        """The regular file at `sha`, None when absent; any other kind of entry is an InputError."""

    def read(self, sha: str, path: str) -> str | None:
        """The file's text at `sha`, or None when it does not exist there."""

    def blob_id(self, sha: str, path: str) -> str | None:
        """The regular file's blob id at `sha`, None when absent (other entries: InputError)."""

    def list_files(self, sha: str) -> list[str]:
        """Every non-directory path in the tree at `sha` (symlinks and submodules included, so
        that one under the `rubrics` glob is refused rather than skipped)."""


def check_repo_path(sha: str, path: str) -> str:
    """`path` relative to the repository root (`./a//b` is `a/b`) if it names a file inside the
    repository; else an InputError.

    Paths come from the PR's own rubric: `..` segments, absolute paths and backslashes are
    refused before any lookup.
    """
    parts = PurePosixPath(path).parts
    if (not path.strip() or path.startswith("/") or "\\" in path or "\0" in path
            or any(part == ".." for part in parts)):
        raise InputError(f"{sha[:7]}:{path}", "must be a path inside the repository, relative to its root "
                         "(no leading '/', no '..', no '\\')")
    return posixpath.normpath(path)


def has_commit(workspace: Path, sha: str) -> bool:
    proc = subprocess.run(
        ["git", "cat-file", "-e", f"{sha}^{{commit}}"], cwd=workspace, capture_output=True, check=False
    )
    return proc.returncode == 0


def is_shallow(workspace: Path) -> bool:
    """A shallow (or unreadable) checkout may lack commits that exist: only a full one proves absence."""
    proc = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=workspace, capture_output=True,
                          text=True, check=False)
    return proc.returncode != 0 or proc.stdout.strip() != "false"


class _TreeReader:
    """Shared by both readers: one tree listing per commit, each blob read once (by blob id: the
    merge base and the base tip, or the head, holding the same bytes read them once)."""

    kind = ""

    def __init__(self) -> None:
        self._trees: dict[str, dict[str, TreeEntry]] = {}
        self._files: dict[tuple[str, str], RepoFile | None] = {}
        self._texts: dict[str, str] = {}  # blob id -> its text

    def _list_tree(self, sha: str) -> dict[str, TreeEntry]:
        raise NotImplementedError

    def _blob(self, entry: TreeEntry, display: str) -> bytes:
        raise NotImplementedError

    def tree(self, sha: str) -> dict[str, TreeEntry]:
        if sha not in self._trees:
            self._trees[sha] = self._list_tree(sha)
        return self._trees[sha]

    def entry(self, sha: str, path: str) -> TreeEntry | None:
        return self.tree(sha).get(check_repo_path(sha, path))

    def list_files(self, sha: str) -> list[str]:
        return [path for path, e in self.tree(sha).items() if e.mode != "040000"]

    def read_file(self, sha: str, path: str) -> RepoFile | None:
        path = check_repo_path(sha, path)
        key = (sha, path)
        if key not in self._files:
            self._files[key] = self._read_file(sha, path)
        return self._files[key]

    def _read_file(self, sha: str, path: str) -> RepoFile | None:
        entry = self.tree(sha).get(path)
        if entry is None:
            return None
        display = f"{sha[:7]}:{path}"
        if entry.mode not in REGULAR_MODES:
            what = MODE_NAMES.get(entry.mode, f"not a regular file (mode {entry.mode})")
            if entry.mode in MODE_NAMES:
                what = f"{what} (mode {entry.mode})"
            raise InputError(display, f"is {what}; rubrics, calibration sets and verdict files must be "
                             "regular files committed as such")
        text = self._texts.get(entry.blob_id)
        if text is None:
            text = self._texts[entry.blob_id] = decode_text(self._blob(entry, display), display)
        return RepoFile(path, text, entry.blob_id)

    def read(self, sha: str, path: str) -> str | None:
        file = self.read_file(sha, path)
        return None if file is None else file.text

    def write_blob(self, sha: str, path: str, handle: BinaryIO) -> bool:
        """Write the regular file's bytes at `sha` to `handle` (streamed: a large verdict store is
        never held in memory); False when absent. Other entries: the InputError of `read_file`."""
        if self.blob_id(sha, path) is None:
            return False
        entry = self.entry(sha, path)
        assert entry is not None
        self._write_blob(entry, f"{sha[:7]}:{entry.path}", handle)
        return True

    def _write_blob(self, entry: TreeEntry, display: str, handle: BinaryIO) -> None:
        handle.write(self._blob(entry, display))

    def blob_id(self, sha: str, path: str) -> str | None:
        """The blob id of the regular file `path` at `sha` (stores are parsed once per blob), None
        when absent. Any other kind of entry is the same InputError `read_file` raises: a symlink
        whose target string equals a regular file's bytes has that file's blob id."""
        entry = self.entry(sha, path)
        if entry is None:
            return None
        if entry.mode not in REGULAR_MODES:
            self.read_file(sha, path)  # raises, naming the path and the mode
        return entry.blob_id


class GitReader(_TreeReader):
    kind = "git"

    def __init__(self, workspace: Path) -> None:
        super().__init__()
        self.workspace = workspace

    def _list_tree(self, sha: str) -> dict[str, TreeEntry]:
        # -z: names exactly as stored (a newline in a directory name stays one); -t: trees too,
        # so that a directory named like a file is told apart from a missing file.
        proc = subprocess.run(["git", "ls-tree", "-r", "-t", "-z", "--full-tree", "--end-of-options", sha],
                              cwd=self.workspace, capture_output=True, check=False)
        if proc.returncode != 0:
            raise InputError(f"commit {sha[:7]}", "cannot list its files")
        entries: dict[str, TreeEntry] = {}
        for record in proc.stdout.split(b"\0"):
            if not record:
                continue
            meta, _, raw_path = record.partition(b"\t")
            mode, _kind, oid = meta.decode().split()
            path = raw_path.decode("utf-8", "replace")
            entries[path] = TreeEntry(path, mode, oid)
        return entries

    def _blob(self, entry: TreeEntry, display: str) -> bytes:
        proc = subprocess.run(["git", "cat-file", "blob", entry.blob_id], cwd=self.workspace,
                              capture_output=True, check=False)
        if proc.returncode != 0:
            raise InputError(display, f"cannot read from git (blob {entry.blob_id[:12]} missing)")
        return proc.stdout


    def _write_blob(self, entry: TreeEntry, display: str, handle: BinaryIO) -> None:
        proc = subprocess.run(["git", "cat-file", "blob", entry.blob_id], cwd=self.workspace, stdout=handle,
                              stderr=subprocess.DEVNULL, check=False)
        if proc.returncode != 0:
            raise InputError(display, f"cannot read from git (blob {entry.blob_id[:12]} missing)")


class RestReader(_TreeReader):
    kind = "rest"

    def __init__(self, repo: Repository) -> None:
        super().__init__()
        self.repo = repo
        self._sizes: dict[str, int] = {}  # blob id -> size, as the trees list them
        self._session: Any = None

    def _list_tree(self, sha: str) -> dict[str, TreeEntry]:
        try:
            tree = self.repo.get_git_tree(sha, recursive=True)
        except GithubException as exc:
            raise InputError(f"commit {sha[:7]}", f"cannot list its files through the GitHub API (HTTP {exc.status})") from None
        if tree.raw_data.get("truncated"):
            raise InputError(f"commit {sha[:7]}", "the GitHub API truncated its file list (over 100,000 files); "
                             "check out the repository with history (`fetch-depth: 0`) instead")
        self._sizes.update((e.sha, e.size) for e in tree.tree if e.type == "blob" and e.size is not None)
        return {e.path: TreeEntry(e.path, e.mode.rjust(6, "0"), e.sha) for e in tree.tree}

    def _write_blob(self, entry: TreeEntry, display: str, handle: BinaryIO) -> None:
        # Raw bytes, streamed to the spool and checked against the blob id (`rest_blobs`).
        size = self._sizes.get(entry.blob_id)
        if size is None:
            return super()._write_blob(entry, display, handle)
        from rubric_gate.action.commits.rest_blobs import blob_session, stream_blob

        if self._session is None:
            self._session = blob_session(self.repo.requester)
        repo_url = self.repo.url  # a lazy repository's is relative to the API's base URL
        if repo_url.startswith("/"):
            repo_url = self.repo.requester.base_url + repo_url
        stream_blob(self._session, f"{repo_url}/git/blobs/{entry.blob_id}", entry.blob_id, size, display, handle)

    def _blob(self, entry: TreeEntry, display: str) -> bytes:
        # The Git blobs API serves any regular file up to 100 MB, by the id the tree listed.
        try:
            return base64.b64decode(self.repo.get_git_blob(entry.blob_id).content)
        except GithubException as exc:
            raise InputError(display, f"cannot read through the GitHub API (HTTP {exc.status})") from None
