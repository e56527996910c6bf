"""The parsed columns of the git blobs the action reads, indexed by blob id across runs.

A blob id is a hash of the bytes, so an index found under it needs no re-check against the
bytes: it holds them parsed. The action's index directory travels with its verdict cache
(`actions/cache`), under the same trust as the cache: `blob-<id>.sqlite` and its column file.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

import orjson

from rubric_gate.verdicts.column_files import remove_unnamed
from rubric_gate.verdicts.index import (
    POOLS,
    SCHEMA_VERSION,
    Index,
    connect,
    index_dir,
    insert_segment,
    read_segments,
    remove_index,
    segment_row,
)
from rubric_gate.verdicts.table_data import VerdictData

MAX_BLOB_INDEXES = 6  # the least recently used beyond these are removed


def blob_index_path(blob_id: str) -> Path | None:
    directory = index_dir()
    return None if directory is None else directory / f"blob-{blob_id}.sqlite"


def load_blob(blob_id: str, size: int) -> tuple[VerdictData, int, bool] | None:
    """The parsed columns of blob `blob_id` (`size` bytes), its newline count and whether it ends
    in one; None when it is not indexed (or the index does not read)."""
    location = blob_index_path(blob_id)
    if location is None or not location.is_file():
        return None
    try:
        db = sqlite3.connect(f"file:{location}?mode=ro", uri=True, timeout=60)
    except sqlite3.Error:
        return None
    try:
        index = Index(db, location)
        if (index.meta("version") != SCHEMA_VERSION or index.meta("blob") != blob_id
                or index.meta("size") != str(size)):
            return None
        data = VerdictData()
        read_segments(index, data)
        lines, ends = int(index.meta("lines") or 0), index.meta("ends_with_newline") == "1"
    except (sqlite3.Error, ValueError, KeyError, OSError, orjson.JSONDecodeError):
        return None
    finally:
        db.close()
    with contextlib.suppress(OSError):
        os.utime(location)  # recently used: kept when older ones are removed
    return data, lines, ends


def store_blob(blob_id: str, data: VerdictData, size: int, lines: int, ends_with_newline: bool) -> None:
    """Index blob `blob_id`'s parsed columns (written to a temporary file, then renamed into
    place, so a reader never sees half of one); best effort: a failure only costs a parse."""
    location = blob_index_path(blob_id)
    if location is None:
        return
    partial = location.with_name(f"{location.name}.{os.getpid()}.partial")  # its column file is the blob's too
    try:
        location.parent.mkdir(parents=True, exist_ok=True)
        remove_index(partial)
        db = connect(partial)
        try:
            index = Index(db, partial)
            db.execute("BEGIN IMMEDIATE")
            for key, value in (("version", SCHEMA_VERSION), ("blob", blob_id), ("size", str(size)),
                               ("lines", str(lines)), ("ends_with_newline", "1" if ends_with_newline else "0")):
                index.set_meta(key, value)
            pools, columns = segment_row(data, dict.fromkeys(POOLS, 0), 0, 0, len(data))
            insert_segment(index, 0, size, lines, blob_id, pools, columns)
            db.execute("COMMIT")
            db.execute("PRAGMA journal_mode=DELETE")  # one self-contained file to rename
            named = index.column_files()
        finally:
            db.close()
        os.replace(partial, location)
        remove_unnamed(location, named)  # a previous index of the same blob's
        _prune_blob_indexes(location.parent)
    except (OSError, sqlite3.Error):
        remove_index(partial)


def _prune_blob_indexes(directory: Path) -> None:
    found = []
    for path in directory.glob("blob-*.sqlite"):
        with contextlib.suppress(OSError):
            found.append((path.stat().st_mtime_ns, path))
    for _, path in sorted(found, reverse=True)[MAX_BLOB_INDEXES:]:
        remove_index(path)



