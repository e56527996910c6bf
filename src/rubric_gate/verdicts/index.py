"""A derived, disposable on-disk index of a verdict JSONL file, so reruns skip the parse.

The JSONL stays the source of truth. The index (one SQLite file per store, in
`$RUBRIC_GATE_INDEX_DIR`, else `$XDG_CACHE_HOME/rubric-gate`, else `~/.cache/rubric-gate`,
named by a hash of the store's absolute path) holds the parsed columns in segments, each
covering a byte range of the file with the sha256 of those bytes:

- unchanged file (same inode, size, mtime and ctime as when verified, and not modified in
  the second before that): the segments are read as they are;
- otherwise every segment's bytes are hashed again; if all match, only the bytes after the
  last segment are parsed and stored as a new segment (an append is incremental); any
  mismatch (a hand edit) drops the index and the file is parsed in full;
- only whole lines are indexed: a last line without a newline is parsed on every read.

SQLite transactions make a crash mid-write leave the previous index, and concurrent
readers and writers safe; a corrupt or unreadable index is deleted and rebuilt.
`RUBRIC_GATE_INDEX=off` disables it. Stores read from git (`REF:PATH`) are not indexed by path;
the action indexes the blobs it reads by blob id (`load_blob` / `store_blob`, below).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import time
from pathlib import Path
from typing import BinaryIO

import numpy as np
import orjson

from rubric_gate.verdicts.parse import FileScan, RowBuilder, parse_blocks
from rubric_gate.verdicts.table_data import COLUMNS, Segment, VerdictData

SCHEMA_VERSION = "4"  # 3: sources are (judge, prompt, task_hash); 4: the answer column holds answer codes
MAX_SEGMENTS = 12  # then compacted into one (no re-parse, just concatenation)
RACY_WINDOW_NS = 1_000_000_000  # a file modified within this of its check may change unseen
HASH_CHUNK = 1 << 22
POOLS = ("texts", "items", "hashes", "sources")


def index_dir() -> Path | None:
    if os.environ.get("RUBRIC_GATE_INDEX", "").strip().lower() in ("off", "0", "false", "no"):
        return None
    explicit = os.environ.get("RUBRIC_GATE_INDEX_DIR")
    if explicit:
        return Path(explicit)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "rubric-gate"


def index_path(store: Path) -> Path | None:
    """Where the index of `store` lives (None when indexing is off)."""
    directory = index_dir()
    if directory is None:
        return None
    key = hashlib.sha256(str(store.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return directory / f"verdicts-{key}.sqlite"


def _connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=60, isolation_level=None)
    # Columns are read back as blobs through overflow pages: 64 KiB pages read them in half the
    # CPU of 4 KiB ones (100k x 64: 0.44 -> 0.2 s). Takes effect only when the file is created.
    db.execute("PRAGMA page_size=65536")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    version = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
    if version is not None and version[0] != SCHEMA_VERSION:  # written by another version: start over
        db.execute("BEGIN IMMEDIATE")
        db.execute("DROP TABLE IF EXISTS segments")
        db.execute("DELETE FROM meta")
        db.execute("COMMIT")
    columns = ", ".join(f"{name} BLOB" for name, _, _ in COLUMNS)
    db.execute(
        "CREATE TABLE IF NOT EXISTS segments (seq INTEGER PRIMARY KEY, start INTEGER NOT NULL,"
        " end INTEGER NOT NULL, lines INTEGER NOT NULL, digest TEXT NOT NULL, rows INTEGER NOT NULL,"
        f" pools BLOB NOT NULL, {columns})"
    )
    return db


def _stat_key(st: os.stat_result) -> str:
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def _segment_digest(handle: BinaryIO, start: int, end: int) -> str:
    digest = hashlib.sha256()
    handle.seek(start)
    left = end - start
    while left > 0:
        chunk = handle.read(min(HASH_CHUNK, left))
        if not chunk:
            break
        digest.update(chunk)
        left -= len(chunk)
    return digest.hexdigest()


class _Index:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def segments(self) -> list[tuple[int, int, int, int, str]]:
        return self.db.execute("SELECT seq, start, end, lines, digest FROM segments ORDER BY seq").fetchall()

    def clear(self) -> None:
        self.db.execute("DELETE FROM segments")
        self.db.execute("DELETE FROM meta")


def _valid_prefix(index: _Index, path: Path, st: os.stat_result) -> tuple[int, int] | None:
    """(segments to keep, bytes they cover) if the indexed prefix is unchanged, else None."""
    if index.meta("version") != SCHEMA_VERSION or index.meta("store") != str(path.resolve()):
        return None
    segments = index.segments()
    if not segments:
        return (0, 0)
    end = segments[-1][2]
    checked = index.meta("checked")
    if checked is not None:
        stat_key, _, checked_at = checked.rpartition("@")
        quiet = max(st.st_mtime_ns, st.st_ctime_ns) < int(checked_at) - RACY_WINDOW_NS
        if stat_key == _stat_key(st) and quiet:
            return (len(segments), end)
    if st.st_size < end:
        return None
    with path.open("rb") as handle:
        for _, start, stop, _, digest in segments:
            if _segment_digest(handle, start, stop) != digest:
                return None
    return (len(segments), end)


def _read_segments(index: _Index, data: VerdictData) -> None:
    parts: dict[str, list[np.ndarray]] = {name: [] for name, _, _ in COLUMNS}
    for seq, pool_blob in index.db.execute("SELECT seq, pools FROM segments ORDER BY seq").fetchall():
        pools = orjson.loads(pool_blob)
        for name in POOLS:
            pool = getattr(data, name)
            for value in pools[name]:
                pool.add(tuple(value) if name == "sources" else value)
        for raw_text, text_id in pools["raw_texts"]:
            data.raw_texts[raw_text] = text_id
        for name, _, dtype in COLUMNS:
            # Incremental blob I/O: one copy straight into a bytes object, no row buffer.
            with index.db.blobopen("segments", name, seq, readonly=True) as blob:
                parts[name].append(np.frombuffer(blob.read(), dtype=dtype))
    if parts["text"]:
        data.columns.extend_arrays({
            name: (arrays[0] if len(arrays) == 1 else np.concatenate(arrays)) for name, arrays in parts.items()
        })


def _insert_segment(db: sqlite3.Connection, start: int, end: int, lines: int, digest: str, pools: bytes,
                    columns: list[np.ndarray]) -> None:
    """Insert a segment, streaming each column into its blob (no copy of the whole column)."""
    names = [name for name, _, _ in COLUMNS]
    cursor = db.execute(
        f"INSERT INTO segments (start, end, lines, digest, rows, pools, {', '.join(names)})"
        f" VALUES (?, ?, ?, ?, ?, ?, {', '.join('zeroblob(?)' for _ in names)})",
        (start, end, lines, digest, len(columns[0]), pools, *[column.nbytes for column in columns]),
    )
    seq = cursor.lastrowid
    assert seq is not None  # set by the INSERT just made
    for name, column in zip(names, columns, strict=True):
        view = np.ascontiguousarray(column).data.cast("B")
        if not len(view):
            continue
        with db.blobopen("segments", name, seq) as blob:
            for at in range(0, len(view), HASH_CHUNK):
                blob.write(view[at: at + HASH_CHUNK])


def _segment_row(data: VerdictData, seen: dict[str, int], raw_seen: int, row_start: int,
                 row_end: int) -> tuple[bytes, list[np.ndarray]]:
    """New pool entries since `seen` and the columns of rows [row_start, row_end) (views)."""
    pools: dict[str, list] = {name: getattr(data, name).values[seen[name]:] for name in POOLS}
    pools["raw_texts"] = list(data.raw_texts.items())[raw_seen:]
    arrays = data.columns.arrays()
    return orjson.dumps(pools), [arrays[name][row_start:row_end] for name, _, _ in COLUMNS]


def load_file(path: Path, display: str, *, use_index: bool = True) -> VerdictData:
    """Parse `path`, reusing and extending its index when there is a usable one."""
    location = index_path(path) if use_index else None
    db = None
    if location is not None:
        with contextlib.suppress(OSError, sqlite3.Error):
            db = _open_checked(location)
    try:
        return _load(path, display, db)
    finally:
        if db is not None:
            db.close()


def _open_checked(location: Path) -> sqlite3.Connection | None:
    try:
        return _connect(location)
    except sqlite3.DatabaseError:  # not a database any more: it is only a cache
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.unlink(f"{location}{suffix}")
        return _connect(location)


def _load(path: Path, display: str, db: sqlite3.Connection | None) -> VerdictData:
    data = VerdictData()
    data.segments.append(Segment(0, path=path))
    with path.open("rb") as handle:
        st = os.fstat(handle.fileno())
        kept, start, lines_before = 0, 0, 0
        index = _Index(db) if db is not None else None
        if index is not None:
            try:
                prefix = _valid_prefix(index, path, st)
                if prefix is not None:
                    kept, start = prefix
                    if kept:
                        _read_segments(index, data)
                        lines_before = index.segments()[-1][3]
            except (sqlite3.Error, ValueError, orjson.JSONDecodeError):
                data = VerdictData()
                data.segments.append(Segment(0, path=path))
                kept, start, lines_before, index = 0, 0, 0, None
        seen = {name: len(getattr(data, name)) for name in POOLS}
        raw_seen = len(data.raw_texts)
        row_start = len(data)
        scan = FileScan(handle, start)
        parse_blocks(scan.blocks(), RowBuilder(data), display, lines_before + 1)
        complete_rows = len(data)
        tail_offsets = data.columns.tail["offset"]
        if scan.unterminated and len(tail_offsets) and tail_offsets[-1] >= scan.complete_end:
            complete_rows -= 1  # a last line without a newline is read every time, never indexed
        data.changed()
        if index is not None and (scan.complete_end > start or kept == 0):
            with contextlib.suppress(sqlite3.Error, OSError):
                _store(index, path, st, kept, start, scan, lines_before + scan.complete_lines,
                       data, seen, raw_seen, row_start, complete_rows)
        elif index is not None:
            with contextlib.suppress(sqlite3.Error, OSError):
                _mark_checked(index, st)
    return data


def _mark_checked(index: _Index, st: os.stat_result) -> None:
    index.set_meta("checked", f"{_stat_key(st)}@{time.time_ns()}")


def _store(index: _Index, path: Path, st: os.stat_result, kept: int, start: int, scan: FileScan,
           lines: int, data: VerdictData, seen: dict[str, int], raw_seen: int, row_start: int,
           row_end: int) -> None:
    db = index.db
    db.execute("BEGIN IMMEDIATE")
    try:
        current = index.segments()
        if kept and (len(current) != kept or current[-1][2] != start):
            db.execute("ROLLBACK")  # another process extended the index meanwhile: leave it to them
            return
        if kept == 0:
            index.clear()
            current = []
            index.set_meta("version", SCHEMA_VERSION)
            index.set_meta("store", str(path.resolve()))
        if scan.complete_end > start:
            pools, columns = _segment_row(data, seen, raw_seen, row_start, row_end)
            _insert_segment(db, start, scan.complete_end, lines, scan.digest.hexdigest(), pools, columns)
        if len(current) + 1 > MAX_SEGMENTS:
            _compact(index, data, scan.complete_end, lines, path, row_end)
        _mark_checked(index, st)
        db.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise


def _compact(index: _Index, data: VerdictData, end: int, lines: int, path: Path, rows: int) -> None:
    with path.open("rb") as handle:
        digest = _segment_digest(handle, 0, end)
    pools, columns = _segment_row(data, dict.fromkeys(POOLS, 0), 0, 0, rows)
    index.db.execute("DELETE FROM segments")
    _insert_segment(index.db, 0, end, lines, digest, pools, columns)


# -- git blobs: keyed by blob id ------------------------------------------------------------
# A blob id is a hash of the bytes, so an index found under it needs no re-check against the
# bytes: it holds them parsed. The action's index directory travels with its verdict cache.
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
        index = _Index(db)
        if (index.meta("version") != SCHEMA_VERSION or index.meta("blob") != blob_id
                or index.meta("size") != str(size)):
            return None
        data = VerdictData()
        _read_segments(index, data)
        lines, ends = int(index.meta("lines") or 0), index.meta("ends_with_newline") == "1"
    except (sqlite3.Error, ValueError, KeyError, orjson.JSONDecodeError):
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
    partial = location.with_name(f"{location.name}.{os.getpid()}.partial")
    try:
        location.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
        db = _connect(partial)
        try:
            index = _Index(db)
            db.execute("BEGIN IMMEDIATE")
            for key, value in (("version", SCHEMA_VERSION), ("blob", blob_id), ("size", str(size)),
                               ("lines", str(lines)), ("ends_with_newline", "1" if ends_with_newline else "0")):
                index.set_meta(key, value)
            pools, columns = _segment_row(data, dict.fromkeys(POOLS, 0), 0, 0, len(data))
            _insert_segment(db, 0, size, lines, blob_id, pools, columns)
            db.execute("COMMIT")
            db.execute("PRAGMA journal_mode=DELETE")  # one self-contained file to rename
        finally:
            db.close()
        os.replace(partial, location)
        _prune_blob_indexes(location.parent)
    except (OSError, sqlite3.Error):
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.unlink(f"{partial}{suffix}")


def _prune_blob_indexes(directory: Path) -> None:
    found = []
    for path in directory.glob("blob-*.sqlite"):
        with contextlib.suppress(OSError):
            found.append((path.stat().st_mtime_ns, path))
    for _, path in sorted(found, reverse=True)[MAX_BLOB_INDEXES:]:
        with contextlib.suppress(OSError):
            path.unlink()
