"""Which rubric files a pull request changes: git diff when the history is there, else PR files."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

from github.Repository import Repository

from rubric_gate.errors import InputError
from rubric_gate.globs import matches_any, matches_as_written, normalize_glob, unmatched_globs  # noqa: F401  (one meaning: rubric_gate.globs)


@dataclass(frozen=True)
class ChangedFile:
    path: str  # path at head (the old path for a deleted file)
    previous: str | None  # path at base when renamed
    status: str  # added | modified | removed | renamed
    moved_to: str | None = None  # for "removed": renamed out of the `rubrics` glob, to here
    name_error: str | None = None  # why a name git stores cannot be read (not UTF-8): an input error where it is gated
    unlisted: bool = False  # for "removed": a promptfoo config `.rubric-gate.yaml` no longer names

    @property
    def base_path(self) -> str:
        return self.previous or self.path


def _git_bytes(workspace: Path, *args: str) -> bytes:
    proc = subprocess.run(["git", *args], cwd=workspace, capture_output=True, check=False)
    if proc.returncode != 0:
        stderr = proc.stderr.decode("utf-8", "replace").strip()
        raise InputError("git " + " ".join(args[:2]), stderr.splitlines()[-1] if stderr else "failed")
    return proc.stdout


def _git(workspace: Path, *args: str) -> str:
    return _git_bytes(workspace, *args).decode("utf-8", "replace")


def _path(raw: bytes, errors: list[str]) -> str:
    """A file name from git, which stores names as bytes, as the tree reader lists it (invalid
    UTF-8 replaced). A name that is not UTF-8 is recorded in `errors`: two such names can read
    alike, and the GitHub API and the globs read names as UTF-8, so it is an input error where
    the file is gated."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        shown = raw.decode("utf-8", "backslashreplace")
        errors.append(f"the file name {shown!r} is not UTF-8, which the GitHub API and the `rubrics` globs cannot "
                      "read as it is stored; rename it")
        return raw.decode("utf-8", "replace")


def merge_base_via_git(workspace: Path, base_sha: str, head_sha: str) -> str:
    return _git(workspace, "merge-base", base_sha, head_sha).strip() or base_sha


def merge_base_via_rest(repo: Repository, base_sha: str, head_sha: str) -> str:
    return repo.compare(base_sha, head_sha).merge_base_commit.sha


def changed_via_git(workspace: Path, merge_base: str, head_sha: str) -> list[ChangedFile]:
    # Diff from the merge base, as GitHub's "Files changed" does, so base-branch commits
    # made after the PR branched are not reported as the PR's changes.
    raw = _git_bytes(workspace, "diff", "--name-status", "-z", "--find-renames", merge_base, head_sha)
    fields = raw.split(b"\0")
    files: list[ChangedFile] = []
    i = 0
    statuses = {"A": "added", "M": "modified", "D": "removed", "T": "modified"}
    while i < len(fields) and fields[i]:
        code = fields[i].decode("ascii", "replace")
        errors: list[str] = []
        if code.startswith("R"):
            found = ChangedFile(_path(fields[i + 2], errors), _path(fields[i + 1], errors), "renamed")
            i += 3
        elif code.startswith("C"):  # a copy is a new file; its source is unchanged
            found = ChangedFile(_path(fields[i + 2], errors), None, "added")
            i += 3
        else:
            found = ChangedFile(_path(fields[i + 1], errors), None, statuses.get(code[:1], "modified"))
            i += 2
        files.append(replace(found, name_error=errors[0]) if errors else found)
    return files


REST_FILES_LIMIT = 3000  # "Responses include a maximum of 3000 files" (List pull request files)


def changed_via_rest(repo: Repository, number: int, head_sha: str) -> list[ChangedFile]:
    """The PR's changed files from the API, all of them or an InputError (fail closed): the list
    stops at 3,000 files, and a rubric edit past the cut would go ungated. The API lists the PR's
    current head: a run for another head (a re-run after a push) cannot use it."""
    pull = repo.get_pull(number)
    if pull.head.sha != head_sha:
        raise InputError(f"pull request #{number}", f"its head is now {pull.head.sha[:7]}, but this run is for "
                         f"{head_sha[:7]}, whose changes the files API does not list; check out with history "
                         "(`fetch-depth: 0`) or gate the current head")
    files = []
    for f in pull.get_files():
        # "copied": a new file whose content matches another (its source is unchanged).
        status = {"changed": "modified", "copied": "added"}.get(f.status, f.status)
        files.append(ChangedFile(f.filename, f.previous_filename if status == "renamed" else None, status))
    total = pull.changed_files
    if total is None or len(files) < total:
        shown = "an unknown number of" if total is None else f"{total:,}"
        raise InputError(f"pull request #{number}", f"changes {shown} files, but the GitHub API listed "
                         f"{len(files):,} (it lists at most {REST_FILES_LIMIT:,}): rubric edits past the cut would go "
                         "ungated; check out with history (`fetch-depth: 0`) so that git lists every change")
    return files


def rubric_changes(files: list[ChangedFile], globs: tuple[str, ...]) -> list[ChangedFile]:
    out = []
    for f in files:
        if (f.previous and matches_as_written(f.previous, globs) and not matches_as_written(f.path, globs)
                and matches_any(f.path, globs)):
            # Moved only in case (rubrics/ -> RUBRICS/): still matched ignoring case, but gone from
            # where every case-sensitive reader of the globs looks: that is its deletion too.
            out.append(ChangedFile(f.previous, None, "removed", moved_to=f.path, name_error=f.name_error))
        elif matches_any(f.path, globs):
            out.append(f)
        elif f.previous and matches_any(f.previous, globs):
            # Moved out of the glob, the rubric is no longer gated (its next edit would pass
            # unseen): that is its deletion.
            out.append(ChangedFile(f.previous, None, "removed", moved_to=f.path, name_error=f.name_error))
    return out
