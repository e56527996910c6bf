"""Which rubric files a pull request changes: git diff when the history is there, else PR files."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from github.Repository import Repository

from rubric_gate.errors import InputError


@dataclass(frozen=True)
class ChangedFile:
    path: str  # path at head (the old path for a deleted file)
    previous: str | None  # path at base when renamed
    status: str  # added | modified | removed | renamed

    @property
    def base_path(self) -> str:
        return self.previous or self.path


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """`**/` spans any number of directories, `*` and `?` stay within one path segment."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def matches_any(path: str, globs: tuple[str, ...]) -> bool:
    return any(glob_to_regex(g.removeprefix("./")).match(path) for g in globs)


def _git(workspace: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=workspace, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise InputError("git " + " ".join(args[:2]), proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed")
    return proc.stdout


def changed_via_git(workspace: Path, base_sha: str, head_sha: str) -> list[ChangedFile]:
    # Diff from the merge base, as GitHub's "Files changed" does, so base-branch commits
    # made after the PR branched are not reported as the PR's changes.
    merge_base = _git(workspace, "merge-base", base_sha, head_sha).strip() or base_sha
    raw = _git(workspace, "diff", "--name-status", "-z", "--find-renames", merge_base, head_sha)
    fields = raw.split("\0")
    files: list[ChangedFile] = []
    i = 0
    statuses = {"A": "added", "M": "modified", "D": "removed", "T": "modified"}
    while i < len(fields) and fields[i]:
        code = fields[i]
        if code.startswith(("R", "C")):
            files.append(ChangedFile(fields[i + 2], fields[i + 1], "renamed"))
            i += 3
        else:
            files.append(ChangedFile(fields[i + 1], None, statuses.get(code[:1], "modified")))
            i += 2
    return files


def changed_via_rest(repo: Repository, number: int) -> list[ChangedFile]:
    files = []
    for f in repo.get_pull(number).get_files():
        status = "modified" if f.status in ("changed", "copied") else f.status
        files.append(ChangedFile(f.filename, f.previous_filename if status == "renamed" else None, status))
    return files


def rubric_changes(files: list[ChangedFile], globs: tuple[str, ...]) -> list[ChangedFile]:
    return [f for f in files if matches_any(f.path, globs) or (f.previous and matches_any(f.previous, globs))]
