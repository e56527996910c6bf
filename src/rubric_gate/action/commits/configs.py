"""Which promptfoo configs a pull request changes: the configs `.rubric-gate.yaml` names at the
merge base or at the head, whose file, entry or naming the PR changes.

A config is a rubric only with its entry: the entry says which labels and verdicts gate it, its
id and its task. So a PR that edits only the settings file changes every config whose entry it
edits (a repointed calibration set is a changed rubric key, which needs the override), a config
it stops naming is deleted (gated on what it loses, as a rubric moved out of the `rubrics`
globs), and a config it starts naming is new (scored on its own labels). Where the settings file
does not load, the other side's names stand and each config fails to load there: at the head
that is bad input (exit 2), at the base it fails closed (the base vouches for nothing).
"""

from __future__ import annotations

from collections.abc import Mapping

from rubric_gate.action.commits.changed import ChangedFile, matches_any, rubric_changes
from rubric_gate.action.commits.snapshot import Snapshot, Snapshots
from rubric_gate.errors import InputError

# path -> the entry it has there (None: the settings file does not load, so its entry is unknown)
Named = Mapping[str, object]


def named_configs(snapshot: Snapshot, other: Snapshot) -> Named:
    """The configs `snapshot`'s settings name; where they do not load, those `other` names that
    `snapshot` has, each with an unknown entry (compared as changed)."""
    try:
        return snapshot.configs()
    except InputError:
        try:
            names = other.configs()
        except InputError:
            names = {}
        return {path: None for path in names if snapshot.entry(path) is not None}


def config_changes(files: list[ChangedFile], globs: tuple[str, ...], base: Named, head: Named) -> list[ChangedFile]:
    """The configs named in `base` (the merge base's settings) or `head` (the head's) that the PR
    changes, as changed rubric files; files under the `rubrics` globs are `rubric_changes`'s.
    Both mappings list only configs their commit has."""
    out: list[ChangedFile] = []
    seen: set[str] = set()
    for f in files:
        old = f.base_path
        if matches_any(f.path, globs) or matches_any(old, globs):
            seen.update((f.path, old))  # a rubric by the globs: listed by `rubric_changes`
            continue
        was, now = old in base, f.status != "removed" and f.path in head
        if not (was or now):
            continue
        seen.update((f.path, old))
        if now:
            # a file the settings newly name is a new rubric, wherever its bytes came from
            out.append(f if was or f.status == "added" else ChangedFile(f.path, None, "added", name_error=f.name_error))
        elif f.status == "removed":
            out.append(f)
        else:  # still in the repository, but no longer named (or renamed to a path that is not)
            out.append(ChangedFile(old, None, "removed", moved_to=f.path if f.status == "renamed" else None,
                                   name_error=f.name_error, unlisted=True))
    for path in sorted(set(base) | set(head)):
        if path in seen:
            continue
        if path in base and path in head:
            if base[path] is None or head[path] is None or base[path] != head[path]:
                out.append(ChangedFile(path, None, "modified"))  # its entry changed: a rubric key, or unknown
        elif matches_any(path, globs):
            out.append(ChangedFile(path, None, "modified"))  # a rubric by the globs either way: read as one
        elif path in base:
            out.append(ChangedFile(path, None, "removed", unlisted=True))
        else:
            out.append(ChangedFile(path, None, "added"))
    return out


def changed_rubrics(snapshots: Snapshots, globs: tuple[str, ...]) -> list[ChangedFile]:
    """Every rubric the PR changes: files under the globs, then promptfoo configs."""
    files = snapshots.files
    base = named_configs(snapshots.merge_base, snapshots.head)
    head = named_configs(snapshots.head, snapshots.merge_base)
    return rubric_changes(files, globs) + config_changes(files, globs, base, head)


__all__ = ["changed_rubrics", "config_changes", "named_configs"]
