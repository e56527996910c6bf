"""Parsed verdict stores by git blob id: each distinct store is parsed once per process.

A git blob id is a hash of the file's bytes, so the columns parsed for one blob serve every
rubric, and both sides of a pull request, that name the same bytes. A blob whose bytes extend
a blob already parsed (a PR that appends verdicts to the base's store) is read as that blob's
columns plus its added lines; the extension is checked byte for byte, never assumed. Stores
handed out share the parsed columns and copy them on their first write.

A blob may be given as bytes, or as a file holding its bytes (`Path`): a file is streamed
through the parser and read back line by line, so a large store is never held in memory.
With `persist`, the parsed columns also go to the on-disk index keyed by blob id
(`blob_index.load_blob`), so the next process that sees the same blob skips the parse.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

import numpy as np

from rubric_gate.verdicts.file_scan import FileScan
from rubric_gate.verdicts.parse import RowBuilder, parse_bytes
from rubric_gate.verdicts.table_data import Segment, VerdictData

MAX_BLOBS = 64  # distinct stores kept per process (an action run reads a few)
COMPARE_CHUNK = 1 << 18  # as the parser's blocks: small buffers, which the allocator hands back
GIT_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # SHA-1 or SHA-256 repositories
Loader = Callable[[], "bytes | str | Path | None"]
_T = TypeVar("_T")


@dataclass(eq=False)
class ParsedBlob:
    """One blob's parsed columns, where its bytes are, and the cache that parsed it."""

    blob_id: str
    cache: BlobCache
    data: VerdictData
    size: int
    lines: int  # newlines in the blob: the line number before its first added line
    ends_with_newline: bool
    raw: bytes | None = None  # the bytes, when given in memory
    path: Path | None = None  # else the file holding them

    def extends(self, other: ParsedBlob) -> bool:
        """Whether this blob is `other`'s bytes (ending in a newline) plus more lines (compared
        byte for byte once per pair of blob ids)."""
        if other.size >= self.size or not other.ends_with_newline:
            return False
        return self.cache.memo((other, self), "extends", lambda: _same_bytes(other.chunks(other.size),
                                                                             self.chunks(other.size)))

    def segment(self) -> Segment:
        return Segment(0, path=self.path, data=self.raw)

    def chunks(self, length: int) -> Iterator[bytes]:
        """The first `length` bytes, in chunks."""
        if self.raw is not None:
            view = memoryview(self.raw)[:length]
            for at in range(0, len(view), COMPARE_CHUNK):
                yield bytes(view[at: at + COMPARE_CHUNK])
            return
        assert self.path is not None
        with self.path.open("rb") as handle:
            left = length
            while left > 0:
                chunk = handle.read(min(COMPARE_CHUNK, left))
                if not chunk:
                    return
                left -= len(chunk)
                yield chunk


def _first_rows_equal(short: VerdictData, long: VerdictData) -> bool:
    """Whether `long`'s first rows are `short`'s rows, column by column (ids and offsets)."""
    mine, theirs = short.columns.arrays(), long.columns.arrays()
    rows = len(mine["text"])
    return all(np.array_equal(mine[name], theirs[name][:rows]) for name in ("offset", *mine))


def _same_bytes(one: Iterator[bytes], other: Iterator[bytes]) -> bool:
    """Whether two chunk streams hold the same bytes (chunks may be cut differently)."""
    left = right = b""
    while True:
        if not left:
            left = next(one, b"")
        if not right:
            right = next(other, b"")
        if not left or not right:
            return not left and not right
        n = min(len(left), len(right))
        if left[:n] != right[:n]:
            return False
        left, right = left[n:], right[n:]


class BlobCache:
    """Parsed columns by blob id (one per process by default: `default_cache()`), and what is
    computed from those blobs, by blob id too (a blob's bytes never change)."""

    def __init__(self, *, persist: bool = False) -> None:
        self._parsed: dict[str, ParsedBlob] = {}
        self._memo: dict[tuple[tuple[str, ...], Hashable], Any] = {}
        self.persist = persist  # also read and write the on-disk index keyed by blob id
        self.parses = 0  # full parses (for tests and benchmarks)
        self.extensions = 0  # blobs read as a cached prefix plus added lines
        self.indexed = 0  # blobs read from the on-disk index

    def __contains__(self, blob_id: str) -> bool:
        return blob_id in self._parsed

    def memo(self, blobs: tuple[ParsedBlob, ...], key: Hashable, build: Callable[[], _T]) -> _T:
        """`build()`, computed once per `key` and the ids of `blobs` while they are cached here
        (blobs of another cache: every time). `key` names, by value, what else the result
        depends on (never by an object's id, which a later object may reuse)."""
        if any(blob.cache is not self for blob in blobs):
            return build()
        entry = (tuple(blob.blob_id for blob in blobs), key)
        if entry not in self._memo:
            self._memo[entry] = build()
        return cast(_T, self._memo[entry])  # what `build` made for this entry

    def known(self, blobs: tuple[ParsedBlob, ...], key: Hashable) -> Any:
        """What `memo` computed for `blobs` and `key`, None when it has not."""
        return self._memo.get((tuple(blob.blob_id for blob in blobs), key))

    def data(self, blob_id: str, content: bytes | str | Path | Loader, display: str) -> VerdictData:
        """The parsed columns of `blob_id` (see `blob`)."""
        return self.blob(blob_id, content, display).data

    def blob(self, blob_id: str, content: bytes | str | Path | Loader, display: str) -> ParsedBlob:
        """Blob `blob_id` parsed, parsing `content` (bytes, text, a file holding the bytes, or a
        function returning one of those) only when no store of that blob was parsed before."""
        found = self._parsed.get(blob_id)
        if found is not None:
            return found
        given = content() if callable(content) else content
        if isinstance(given, str):
            given = given.encode("utf-8", "surrogateescape")
        blob = ParsedBlob(blob_id, self, VerdictData(), 0, 0, False)
        if isinstance(given, Path):
            blob.path = given
            blob.size = given.stat().st_size
        else:
            blob.raw = given or b""
            blob.size = len(blob.raw)
        blob.data = self._load(blob_id, blob, display)
        self._hold_shared_rows_once(blob)
        if len(self._parsed) >= MAX_BLOBS:  # a long-lived process: drop the oldest, and what was computed from it
            oldest = next(iter(self._parsed))
            del self._parsed[oldest]
            self._memo = {entry: value for entry, value in self._memo.items() if oldest not in entry[0]}
        self._parsed[blob_id] = blob
        return blob

    def _load(self, blob_id: str, blob: ParsedBlob, display: str) -> VerdictData:
        persist = self.persist and GIT_OBJECT_ID.fullmatch(blob_id) is not None
        if persist:
            from rubric_gate.verdicts.blob_index import load_blob

            indexed = load_blob(blob_id, blob.size)
            if indexed is not None:
                data, blob.lines, blob.ends_with_newline = indexed
                data.segments = [blob.segment()]
                self.indexed += 1
                return data
        prefix = self._longest_prefix(blob)
        if prefix is None:
            data = VerdictData()
            data.segments.append(blob.segment())
            self._parse(blob, RowBuilder(data), display, 0, 1)
            self.parses += 1
        else:
            data = prefix.data.copy()  # the prefix's columns shared, not copied
            data.segments = [blob.segment()]  # offsets into the prefix are offsets into this blob
            self._parse(blob, RowBuilder(data), display, prefix.size, prefix.lines + 1)
            data.changed()
            # The prefix's rows are this blob's first rows: held once, as a view of this blob's.
            prefix.data.columns.share_prefix(data.columns)
            self.extensions += 1
        if persist:
            from rubric_gate.verdicts.blob_index import store_blob

            store_blob(blob_id, data, blob.size, blob.lines, blob.ends_with_newline)
        return data

    @staticmethod
    def _parse(blob: ParsedBlob, builder: RowBuilder, display: str, start: int, first_line: int) -> None:
        if blob.raw is not None:
            parse_bytes(blob.raw, builder, display, start=start, first_line=first_line)
            blob.lines = blob.raw.count(b"\n")
            blob.ends_with_newline = blob.raw.endswith(b"\n")
            return
        assert blob.path is not None
        with blob.path.open("rb") as handle:
            scan = FileScan(handle, start)
            scan.parse(builder, display, first_line)
            blob.lines = first_line - 1 + scan.complete_lines
            blob.ends_with_newline = not scan.unterminated and (blob.size > 0)

    def _hold_shared_rows_once(self, blob: ParsedBlob) -> None:
        """Where `blob`'s first rows equal all of another blob's (or the reverse), hold those
        rows once: the shorter's columns become views of the longer's. A head read from the
        index beside its base's index is two full copies until then."""
        rows = len(blob.data)
        for other in self._parsed.values():
            short, long = (other, blob) if len(other.data) < rows else (blob, other)
            if len(short.data) and len(short.data) < len(long.data) and _first_rows_equal(short.data, long.data):
                short.data.columns.share_prefix(long.data.columns)

    def _longest_prefix(self, blob: ParsedBlob) -> ParsedBlob | None:
        """The longest parsed blob that `blob` extends by whole lines (one ending in a newline)."""
        candidates = sorted((p for p in self._parsed.values()
                             if p.size < blob.size and p.ends_with_newline),
                            key=lambda p: -p.size)
        for parsed in candidates:
            if blob.extends(parsed):
                return parsed
        return None

    def clear(self) -> None:
        self._parsed.clear()
        self._memo.clear()


class _OfBlob(Protocol):
    @property
    def blob(self) -> ParsedBlob | None: ...


def memoised(stores: tuple[_OfBlob, ...], key: Hashable, build: Callable[[], _T]) -> _T:
    """`build()`, computed once per `key` for every store of the same blobs while each of
    `stores` is an unwritten blob's columns (a blob's bytes never change), else every time.
    For results that every rubric reading the same stores computes alike; `key` names, by
    value, what else the result depends on."""
    blobs = tuple(store.blob for store in stores)
    if not blobs or any(blob is None for blob in blobs):
        return build()
    known = cast("tuple[ParsedBlob, ...]", blobs)
    return known[0].cache.memo(known, key, build)


_DEFAULT = BlobCache(persist=True)


def default_cache() -> BlobCache:
    return _DEFAULT
