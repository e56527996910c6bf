"""Pair a deleted rubric with the added file that replaces it, so a rewrite is gated as an edit.

Git's rename detection needs a file to stay mostly the same: a PR that moves a rubric (out of
the glob, too) and rewrites it, or gives it a new id, would otherwise show as a deletion and a
new, ungated file. A deleted rubric is paired with an added file under the `rubrics` glob
carrying the same rubric id, or else the same calibration set.
"""

from __future__ import annotations

from rubric_gate.action.commits.changed import ChangedFile
from rubric_gate.action.commits.snapshot import Snapshots

MAX_REWRITE_CANDIDATES = 100


def pair_rewrites(changes: list[ChangedFile], snapshots: Snapshots) -> list[ChangedFile]:
    """`changes` with each deleted rubric that an added file under the globs replaces (same rubric
    id, else same calibration set) turned into a rename of it."""
    removed = {c.path: snapshots.merge_base.rubric_keys(c.path) for c in changes if c.status == "removed"}
    if not any(removed.values()):
        return changes
    # Only rubrics the PR adds (under the glob, or promptfoo configs the settings newly name): a
    # rubric rewritten to a path outside them is no longer gated, so it stays a deletion (as a
    # git-detected rename out of the glob is).
    added = [f for f in changes if f.status == "added"]
    candidates = [(f.path, snapshots.head.rubric_keys(f.path)) for f in added[:MAX_REWRITE_CANDIDATES]]
    out: list[ChangedFile] = []
    paired: set[str] = set()
    for change in changes:
        keys = removed.get(change.path) if change.status == "removed" else None
        match = None
        if keys:
            for key in ("id", "calibration"):
                match = next((path for path, head in candidates
                              if path not in paired and key in keys and head.get(key) == keys[key]), None)
                if match:
                    break
        if match is not None:
            paired.add(match)
            name_error = next((f.name_error for f in added if f.path == match), None)
            out.append(ChangedFile(match, change.path, "renamed", name_error=name_error))
        else:
            out.append(change)
    return [c for c in out if not (c.status == "added" and c.path in paired)]
