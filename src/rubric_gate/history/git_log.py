"""The commits that touched a rubric file, following renames (`git log --follow`)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from rubric_gate.errors import InputError

_RECORD, _FIELD = "\x1e", "\x00"


@dataclass(frozen=True)
class Revision:
    commit: str
    date: str  # committer date, ISO 8601
    subject: str
    path: str  # the rubric's path in that commit (it may have been renamed since)
    deleted: bool = False  # the commit deleted the file (nothing to score)


def rubric_revisions(root: Path, path: str) -> list[Revision]:
    """Oldest first. Raises InputError when git fails or the path has no history."""
    args = ["git", "log", "--follow", "--name-status", "--format=" + _RECORD + "%H%x00%cI%x00%s", "--", path]
    try:
        proc = subprocess.run(args, cwd=root, capture_output=True, check=False)
    except OSError as exc:
        raise InputError(path, f"cannot run git ({exc.strerror})") from None
    if proc.returncode != 0:
        detail = proc.stderr.decode(errors="replace").strip().splitlines()
        raise InputError(path, f"git log failed ({detail[-1] if detail else 'unknown error'})")
    revisions = []
    for record in proc.stdout.decode("utf-8", errors="replace").split(_RECORD)[1:]:
        header, _, body = record.partition("\n")
        commit, date, subject = ([*header.split(_FIELD), "", ""])[:3]
        status_line = next((line for line in body.splitlines() if line.strip()), "")
        parts = status_line.split("\t")
        status = parts[0][:1] if parts else ""
        at = parts[-1] if len(parts) > 1 else path  # for a rename "R100\told\tnew": the new name
        revisions.append(Revision(commit, date, subject, at, deleted=status == "D"))
    if not revisions:
        raise InputError(path, "no git history for this path (is it committed?)")
    return revisions[::-1]
