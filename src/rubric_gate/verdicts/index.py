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
readers and writers safe; a corrupt or unreadable index is deleted and rebuilt. A segment's
columns are a file of their own beside the database (`column_files`), mapped when read.
`RUBRIC_GATE_INDEX=off` disables it. Stores read from git (`REF:PATH`) are not indexed by path;
the action indexes the blobs it reads by blob id (`blob_index`).
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

from rubric_gate.verdicts.column_files import files_of, read_columns, remove_unnamed, write_columns
from rubric_gate.verdicts.file_scan import FileScan
from rubric_gate.verdicts.parse import RowBuilder
from rubric_gate.verdicts.table_data import COLUMNS, Pool, Segment, VerdictData

# 3: sources are (judge, prompt, task_hash); 4: the answer column holds answer codes; 5: columns in files
SCHEMA_VERSION = "5"
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


def connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=60, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    version = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
    if version is not None and version[0] != SCHEMA_VERSION:  # written by another version: start over
        db.execute("BEGIN IMMEDIATE")
        db.execute("DROP TABLE IF EXISTS segments")
        db.execute("DELETE FROM meta")
        db.execute("COMMIT")
    db.execute(
        "CREATE TABLE IF NOT EXISTS segments (seq INTEGER PRIMARY KEY, start INTEGER NOT NULL,"
        " end INTEGER NOT NULL, lines INTEGER NOT NULL, digest TEXT NOT NULL, rows INTEGER NOT NULL,"
        " pools BLOB NOT NULL, columns TEXT NOT NULL)"
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


class Index:
    def __init__(self, db: sqlite3.Connection, location: Path) -> None:
        self.db = db
        self.location = location  # the database file, beside which the column files are
        self.written: list[str] = []  # column files this connection wrote (removed if not committed)

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

    def column_files(self) -> list[str]:
        return [name for (name,) in self.db.execute("SELECT columns FROM segments")]


def _valid_prefix(index: Index, path: Path, st: os.stat_result) -> tuple[int, int, bool] | None:
    """(segments to keep, bytes they cover, whether the file is as last checked) if the indexed
    prefix is unchanged, else None."""
    if index.meta("version") != SCHEMA_VERSION or index.meta("store") != str(path.resolve()):
        return None
    segments = index.segments()
    if not segments:
        return (0, 0, False)
    end = segments[-1][2]
    checked = index.meta("checked")
    if checked is not None:
        stat_key, _, checked_at = checked.rpartition("@")
        quiet = max(st.st_mtime_ns, st.st_ctime_ns) < int(checked_at) - RACY_WINDOW_NS
        if stat_key == _stat_key(st) and quiet:
            return (len(segments), end, True)
    if st.st_size < end:
        return None
    with path.open("rb") as handle:
        for _, start, stop, _, digest in segments:
            if _segment_digest(handle, start, stop) != digest:
                return None
    return (len(segments), end, False)


def read_segments(index: Index, data: VerdictData) -> None:
    parts: dict[str, list[np.ndarray]] = {name: [] for name, _, _ in COLUMNS}
    query = "SELECT rows, pools, columns FROM segments ORDER BY seq"
    for rows, pool_blob, columns in index.db.execute(query).fetchall():
        pools = orjson.loads(pool_blob)
        pools["sources"] = [tuple(value) for value in pools["sources"]]
        for name in POOLS:
            pool = getattr(data, name)
            if len(pool):
                for value in pools[name]:
                    pool.add(value)
            else:  # the first segment's strings: one dict built at once
                pool = Pool(pools[name])
                if len(pool.ids) != len(pool.values):
                    raise ValueError("an index pool holds a string twice")
                setattr(data, name, pool)
        data.raw_texts.update(pools["raw_texts"])
        for name, array_ in read_columns(index.location, columns, rows).items():
            parts[name].append(array_)
    if parts["text"]:
        data.columns.extend_arrays({
            name: (arrays[0] if len(arrays) == 1 else np.concatenate(arrays)) for name, arrays in parts.items()
        })


def insert_segment(index: Index, start: int, end: int, lines: int, digest: str, pools: bytes,
                   columns: list[np.ndarray]) -> None:
    """Insert a segment: its columns go to a new file (fsynced before the segment names it)."""
    name = write_columns(index.location, columns)
    index.written.append(name)
    index.db.execute("INSERT INTO segments (start, end, lines, digest, rows, pools, columns)"
                     " VALUES (?, ?, ?, ?, ?, ?, ?)", (start, end, lines, digest, len(columns[0]), pools, name))


def segment_row(data: VerdictData, seen: dict[str, int], raw_seen: int, row_start: int,
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
        return _load(path, display, None if db is None or location is None else Index(db, location))
    finally:
        if db is not None:
            db.close()


def _open_checked(location: Path) -> sqlite3.Connection | None:
    try:
        return connect(location)
    except sqlite3.DatabaseError:  # not a database any more: it is only a cache
        remove_index(location)
        return connect(location)


def remove_index(location: Path) -> None:
    """Delete an index: the database, its journal files and its column files."""
    for path in [location, *(Path(f"{location}{suffix}") for suffix in ("-wal", "-shm")), *files_of(location)]:
        with contextlib.suppress(OSError):
            path.unlink()


def _load(path: Path, display: str, index: Index | None) -> VerdictData:
    data = VerdictData()
    data.segments.append(Segment(0, path=path))
    with path.open("rb") as handle:
        st = os.fstat(handle.fileno())
        kept, start, lines_before, as_checked = 0, 0, 0, False
        if index is not None:
            try:
                prefix = _valid_prefix(index, path, st)
                if prefix is not None:
                    kept, start, as_checked = prefix
                    if kept:
                        read_segments(index, data)
                        lines_before = index.segments()[-1][3]
            except (sqlite3.Error, ValueError, OSError, orjson.JSONDecodeError):  # a column file gone too
                # (another process compacting meanwhile): parsed in full, and indexed again
                data = VerdictData()
                data.segments.append(Segment(0, path=path))
                kept, start, lines_before, as_checked = 0, 0, 0, False
        seen = {name: len(getattr(data, name)) for name in POOLS}
        raw_seen = len(data.raw_texts)
        row_start = len(data)
        scan = FileScan(handle, start)
        scan.parse(RowBuilder(data), display, lines_before + 1)
        complete_rows = len(data)
        tail_offsets = data.columns.tail["offset"]
        if scan.unterminated and len(tail_offsets) and tail_offsets[-1] >= scan.complete_end:
            complete_rows -= 1  # a last line without a newline is read every time, never indexed
        data.changed()
        if index is not None and (scan.complete_end > start or kept == 0):
            with contextlib.suppress(sqlite3.Error, OSError):
                _store(index, path, st, kept, start, scan, lines_before + scan.complete_lines,
                       data, seen, raw_seen, row_start, complete_rows)
        elif index is not None and not as_checked:  # hashed again: when (a read as checked writes nothing)
            with contextlib.suppress(sqlite3.Error, OSError):
                _mark_checked(index, st)
    return data


def _mark_checked(index: Index, st: os.stat_result) -> None:
    index.set_meta("checked", f"{_stat_key(st)}@{time.time_ns()}")


def _store(index: Index, path: Path, st: os.stat_result, kept: int, start: int, scan: FileScan,
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
            pools, columns = segment_row(data, seen, raw_seen, row_start, row_end)
            insert_segment(index, start, scan.complete_end, lines, scan.digest.hexdigest(), pools, columns)
        if len(current) + 1 > MAX_SEGMENTS:
            _compact(index, data, scan.complete_end, lines, path, row_end)
        _mark_checked(index, st)
        # Under the write lock no other writer has a file in flight: what no segment names now
        # (replaced, or left by a writer killed before its commit) goes.
        remove_unnamed(index.location, index.column_files())
        db.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        for name in index.written:  # this write's files: no segment names them
            with contextlib.suppress(OSError):
                (index.location.parent / name).unlink()
        raise


def _compact(index: Index, data: VerdictData, end: int, lines: int, path: Path, rows: int) -> None:
    with path.open("rb") as handle:
        digest = _segment_digest(handle, 0, end)
    pools, columns = segment_row(data, dict.fromkeys(POOLS, 0), 0, 0, rows)
    index.db.execute("DELETE FROM segments")
    insert_segment(index, 0, end, lines, digest, pools, columns)
