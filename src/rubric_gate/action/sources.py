"""Read a file as of a commit: with git when the workspace has the history, else the REST API."""

from __future__ import annotations

import base64
import posixpath
import subprocess
from pathlib import Path, PurePosixPath
from typing import Protocol

from github import GithubException, UnknownObjectException
from github.Repository import Repository

from rubric_gate.errors import InputError
from rubric_gate.sources.files import decode_text, read_git_file


class FileReader(Protocol):
    kind: str

    def read(self, sha: str, path: str) -> str | None:
        """The file's text at `sha`, or None when it does not exist there."""

    def list_files(self, sha: str) -> list[str]:
        """Every file path in the tree at `sha`."""


def check_repo_path(sha: str, path: str) -> str:
    """`path` relative to the repository root (`./a//b` is `a/b`) if it names a file inside the
    repository; else an InputError.

    Paths come from the PR's own rubric. Read through the API, `..` segments would walk out of
    `/repos/OWNER/REPO/contents/` to any endpoint the token can read (the HTTP client resolves
    them), so they are refused here, for git reads too, with absolute paths and backslashes.
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


class GitReader:
    kind = "git"

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        # A file at a commit never changes: each is read once, however many steps ask
        # (pairing, the standard review, the judge lookup and the gate all read the rubrics).
        self._texts: dict[tuple[str, str], str | None] = {}
        self._blobs: dict[tuple[str, str], str | None] = {}  # blob ids: stores parsed once per blob

    def read(self, sha: str, path: str) -> str | None:
        path = check_repo_path(sha, path)
        if (sha, path) not in self._texts:
            self._texts[(sha, path)] = self._read(sha, path)
        return self._texts[(sha, path)]

    def blob_id(self, sha: str, path: str) -> str | None:
        """The git blob id of `path` at `sha` (a hash of its bytes), None when it is no file there."""
        path = check_repo_path(sha, path)
        if (sha, path) not in self._blobs:
            proc = subprocess.run(["git", "cat-file", "--batch-check"], cwd=self.workspace, capture_output=True,
                                  input=f"{sha}:{path}\n".encode("utf-8", "surrogateescape"), check=False)
            blob, _, kind = proc.stdout.decode("ascii", "replace").partition(" ")
            self._blobs[(sha, path)] = blob if proc.returncode == 0 and kind.startswith("blob ") else None
        return self._blobs[(sha, path)]

    def _read(self, sha: str, path: str) -> str | None:
        exists = subprocess.run(
            ["git", "cat-file", "-e", f"{sha}:{path}"], cwd=self.workspace, capture_output=True, check=False
        )
        if exists.returncode != 0:
            return None
        return read_git_file(sha, path, self.workspace)

    def list_files(self, sha: str) -> list[str]:
        proc = subprocess.run(["git", "ls-tree", "-r", "-z", "--name-only", "--end-of-options", sha],
                              cwd=self.workspace, capture_output=True, check=False)
        if proc.returncode != 0:
            raise InputError(f"commit {sha[:7]}", "cannot list its files")
        return [p for p in proc.stdout.decode("utf-8", "replace").split("\0") if p]


class RestReader:
    kind = "rest"

    def __init__(self, repo: Repository) -> None:
        self.repo = repo
        self._texts: dict[tuple[str, str], str | None] = {}  # each file at a commit costs one API call

    def list_files(self, sha: str) -> list[str]:
        try:
            tree = self.repo.get_git_tree(sha, recursive=True)
        except GithubException as exc:
            raise InputError(f"commit {sha[:7]}", f"cannot list its files through the GitHub API (HTTP {exc.status})") from None
        if tree.raw_data.get("truncated"):
            raise InputError(f"commit {sha[:7]}", "the GitHub API truncated its file list (over 100,000 files); "
                             "check out the repository with history (`fetch-depth: 0`) instead")
        return [entry.path for entry in tree.tree if entry.type == "blob"]

    def read(self, sha: str, path: str) -> str | None:
        path = check_repo_path(sha, path)
        if (sha, path) not in self._texts:
            self._texts[(sha, path)] = self._read(sha, path)
        return self._texts[(sha, path)]

    def _read(self, sha: str, path: str) -> str | None:
        try:
            content = self.repo.get_contents(path, ref=sha)
        except UnknownObjectException:
            return None
        except GithubException as exc:
            raise InputError(f"{sha[:12]}:{path}", f"cannot read through the GitHub API (HTTP {exc.status})") from None
        if isinstance(content, list):
            raise InputError(f"{sha[:12]}:{path}", "is a directory, expected a file")
        try:
            if content.encoding == "base64":
                data = content.decoded_content
            else:
                # Over 1 MB the contents API returns no content (encoding "none"); the Git blobs
                # API serves the same bytes up to 100 MB.
                data = base64.b64decode(self.repo.get_git_blob(content.sha).content)
        except GithubException as exc:
            raise InputError(f"{sha[:12]}:{path}", f"cannot read through the GitHub API (HTTP {exc.status})") from None
        return decode_text(data, f"{sha[:12]}:{path}")
