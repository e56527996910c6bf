"""Pair a deleted rubric with the added file that replaces it, so a rewrite is gated as an edit.

Git's rename detection needs a file to stay mostly the same: a PR that moves a rubric (out of
the glob, too) and rewrites it, or gives it a new id, would otherwise show as a deletion and a
new, ungated file. A deleted rubric is paired with an added file under the `rubrics` glob
carrying the same rubric id, or else the same calibration set.
"""

from __future__ import annotations

import posixpath

from rubric_gate.action.changed import ChangedFile, matches_any
from rubric_gate.action.sources import FileReader
from rubric_gate.errors import InputError
from rubric_gate.sources import load_located_yaml

MAX_REWRITE_CANDIDATES = 100


def rubric_keys(reader: FileReader, sha: str, path: str) -> dict[str, str]:
    """The rubric's `id`, `calibration`, `verdicts`, `judge` and `task` ({} if it does not load).

    Read by the one reader and YAML loader the gate uses (tags refused, symlinks refused), so
    these keys are the ones the gate acts on; a rubric that does not load is an error where it
    is gated, never an empty mapping that hides a repointed key.

    The two paths are normalised (`./a//b` is `a/b`) so that they compare equal to the paths git
    lists: a rubric naming its labels `./calibration/x.jsonl` still has them reviewed.
    """
    try:
        text = reader.read(sha, path)
        data = load_located_yaml(text, f"{sha[:7]}:{path}").data if text else None
    except InputError:
        return {}
    if not isinstance(data, dict):
        return {}
    keys = {key: str(data[key]) for key in ("id", "calibration", "verdicts", "judge", "task")
            if isinstance(data.get(key), str | int | float) and not isinstance(data.get(key), bool)}
    for key in ("calibration", "verdicts"):
        if keys.get(key, "").strip():
            keys[key] = posixpath.normpath(keys[key])
    return keys


def pair_rewrites(changes: list[ChangedFile], files: list[ChangedFile], reader: FileReader,
                  base_sha: str, head_sha: str, globs: tuple[str, ...]) -> list[ChangedFile]:
    removed = {c.path: rubric_keys(reader, base_sha, c.path) for c in changes if c.status == "removed"}
    if not any(removed.values()):
        return changes
    # Only files under the glob: a rubric rewritten to a path outside it is no longer gated, so
    # it stays a deletion (as a git-detected rename out of the glob is).
    added = [f for f in files if f.status == "added" and matches_any(f.path, globs)]
    candidates = [(f.path, rubric_keys(reader, head_sha, f.path)) for f in added[:MAX_REWRITE_CANDIDATES]]
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
            out.append(ChangedFile(match, change.path, "renamed"))
        else:
            out.append(change)
    return [c for c in out if not (c.status == "added" and c.path in paired)]
