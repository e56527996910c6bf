"""The rubric files' part of the classified diff (`snapshot.diff`): each changed rubric and its
keys, rubric ids two files share, and trusted rubrics that do not load (they vouch for nothing,
so every file a PR changes outside the globs may be theirs)."""

from __future__ import annotations

import unicodedata

from rubric_gate.action.commits.changed import ChangedFile, matches_any
from rubric_gate.action.commits.snapshot.model import Snapshot, Snapshots
from rubric_gate.errors import InputError
from rubric_gate.rubric.promptfoo import grading_changes
from rubric_gate.trust import classify_rubric_changes, wording
from rubric_gate.trust.differences import Difference, Kind
from rubric_gate.trust.wording import first

__all__ = ["rubric_differences", "shared_ids", "unreadable_rubrics", "why_unreadable"]


def why_unreadable(snapshot: Snapshot, path: str) -> str:
    try:
        snapshot.rubric(path)
    except InputError as exc:
        return exc.message
    return "its `calibration` or `verdicts` is not a path"


def unreadable_rubrics(unreadable: dict[str, str], files: list[ChangedFile], known: set[str],
                        globs: tuple[str, ...]) -> list[Difference]:
    """Fail closed on a trusted rubric whose files cannot be read: it is named in every comment
    as vouching for nothing, and every file the PR changes outside the rubric globs (and not
    already a file a readable rubric names, ruled above) may be its calibration set or verdict
    file, so changing it needs the override until the rubric is fixed."""
    if not unreadable:
        return []
    users = tuple(sorted(unreadable))
    named = first(users, 5)
    out = [Difference(Kind.RUBRIC_UNREADABLE, path, (path,),
                      f"does not load on the base branch ({why}), so it vouches for nothing and which calibration set "
                      "and verdict file it reads is unknown: every file a PR changes outside the rubric globs needs the "
                      "override until it is fixed (its fix is gated as a rubric whose base does not load)")
           for path, why in sorted(unreadable.items())]
    for f in files:
        for path in dict.fromkeys(p for p in (f.base_path, f.path) if p):
            if path in known or matches_any(path, globs):
                continue
            out.append(Difference(Kind.FILE_MAYBE_IN_USE, path, users,
                                  f"may be the calibration set or verdict file of {named}, which does not load on the "
                                  "base branch (which files it reads is unknown), so this change needs the override "
                                  "until that rubric is fixed"))
    return out


def rubric_differences(snapshots: Snapshots, change: ChangedFile, judge_gated: bool = False) -> list[Difference]:
    """The rubric file itself, and its keys classified (`trust.rubric_diff`). A version that
    does not load is reported where the rubric is gated; a change of `judge` that rule J decided
    (`judge_gated`) is the gate's, reported with its table."""
    users = (change.path,)
    if change.status == "added":
        return [Difference(Kind.RUBRIC_ADDED, change.path, users)]
    if change.status == "removed":
        return [Difference(Kind.RUBRIC_REMOVED, change.path, users)]
    out = [Difference(Kind.RUBRIC_MOVED, change.path, users)] if change.status == "renamed" else []
    try:
        base_doc, head_doc = snapshots.merge_base.rubric(change.base_path), snapshots.head.rubric(change.path)
    except InputError:
        return out
    if base_doc is None or head_doc is None:
        return out
    for diff in classify_rubric_changes(base_doc.rubric, head_doc.rubric):
        if diff.key == "judge" and judge_gated:
            out.append(Difference(Kind.RUBRIC_JUDGE_GATED, change.path, users))
            continue
        out.append(Difference(diff.kind, change.path, users, wording.rubric_key_message(diff)))
    if base_doc.grading is not None and head_doc.grading is not None:  # promptfoo configs
        out.extend(Difference(Kind.PROMPTFOO_GRADING, change.path, users, message)
                   for message in grading_changes(base_doc.grading, head_doc.grading))
    return out


def shared_ids(snapshots: Snapshots, globs: tuple[str, ...]) -> list[Difference]:
    """Rubric ids the proposed snapshot gives to more than one file, where no trusted snapshot
    already did: a consumer that looks a rubric up by id could read a copy that was scored as a
    new rubric and never gated. Compared as a reader would confuse them (stricter): ignoring case,
    compatibility forms (fullwidth letters) and invisible format characters."""
    def sharing(snapshot: Snapshot) -> dict[str, list[str]]:
        by_id: dict[str, list[str]] = {}
        for path in snapshot.rubric_paths(globs):
            rubric_id = snapshot.rubric_keys(path).get("id", "").strip()
            if rubric_id:
                by_id.setdefault(_id_key(rubric_id), []).append(path)
        return {k: v for k, v in by_id.items() if len(v) > 1}

    proposed = sharing(snapshots.proposed)
    if not proposed:
        return []
    trusted_pairs = {frozenset((a, b)) for snapshot in snapshots.trusted for paths in sharing(snapshot).values()
                     for a in paths for b in paths if a != b}
    changed = {f.path for f in snapshots.files}
    out = []
    for paths in proposed.values():
        if all(frozenset((a, b)) in trusted_pairs for a in paths for b in paths if a != b):
            continue  # the base branch already has them so: not this PR's doing
        rubric_id = snapshots.proposed.rubric_keys(paths[0])["id"]
        path = next((p for p in paths if p in changed), paths[0])
        out.append(Difference(Kind.RUBRIC_ID_SHARED, path, tuple(paths), wording.shared_id(rubric_id, paths),
                              len(paths)))
    return out


def _id_key(rubric_id: str) -> str:
    folded = unicodedata.normalize("NFKC", rubric_id).casefold()
    return "".join(ch for ch in folded if unicodedata.category(ch) != "Cf")
