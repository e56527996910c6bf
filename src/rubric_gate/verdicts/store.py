"""The verdict store: an append-only JSONL file of verdicts, held as columns for lookup.

Verdicts are held as columns (`table_data`), not one object each; the lookups are
`VerdictQueries`' (`query.py`), a row is read back as a full `Verdict` from its line only when
asked (`lines.py`), what two stores hold differently is `compare.py`'s question, and writes go
through `VerdictWriter` (`writer.py`). Later lines win over earlier ones, so re-recording a pair
supersedes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from rubric_gate.errors import InputError
from rubric_gate.sources import SourceText, read_source
from rubric_gate.sources.files import _looks_like_git_spec
from rubric_gate.verdicts.lines import all_verdicts
from rubric_gate.verdicts.model import Verdict
from rubric_gate.verdicts.parse import RowBuilder, parse_blocks, parse_bytes
from rubric_gate.verdicts.query import VerdictQueries
from rubric_gate.verdicts.table_data import Segment, VerdictData
from rubric_gate.verdicts.writer import VerdictWriter, payload

if TYPE_CHECKING:
    from rubric_gate.verdicts.blobs import BlobCache, ParsedBlob


class VerdictStore(VerdictQueries):
    def __init__(self, verdicts: Iterable[Verdict] = (), path: Path | None = None, display: str = "<verdicts>") -> None:
        self.path = path
        self.display = display
        self._data: VerdictData
        self._shared = False  # columns shared with other stores of the same blob (copy on write)
        self._blob: ParsedBlob | None = None  # the blob whose shared columns these are, while shared
        if isinstance(verdicts, VerdictStore):  # shares nothing mutable, re-parses nothing
            self._data = verdicts._data.copy()
        else:
            self._data = VerdictData()
            self._add_objects(list(verdicts))

    @classmethod
    def _wrap(cls, data: VerdictData, path: Path | None, display: str) -> VerdictStore:
        store = cls(path=path, display=display)
        store._data = data
        return store

    @classmethod
    def _of_blob(cls, blob: ParsedBlob, data: VerdictData, path: Path | None, display: str) -> VerdictStore:
        """A store of `blob`'s columns `data`, shared until it is written to."""
        store = cls._wrap(data, path, display)
        store._shared, store._blob = True, blob
        return store

    @classmethod
    def from_blob(cls, blob_id: str, content: bytes | str | Path | Callable[[], bytes | str | Path | None],
                  display: str, *, cache: BlobCache | None = None) -> VerdictStore:
        """The store in git blob `blob_id`: parsed once per process (`content` is bytes, text, a
        file holding the bytes, or a function returning one of those, called only on a miss),
        its columns shared with every other store of the same blob until one of them is
        written to. A blob extending one parsed before (a PR's appended verdicts) parses only
        its added lines. No path: nothing is appended to a blob."""
        from rubric_gate.verdicts.blobs import default_cache

        blob = (cache or default_cache()).blob(blob_id, content, display)
        return cls._of_blob(blob, blob.data, None, display)

    @property
    def blob(self) -> ParsedBlob | None:
        """The blob whose columns this store is, while it is unwritten (None: not a blob's)."""
        return self._blob

    def same_blob(self, other: VerdictStore) -> bool:
        """Whether both stores are one blob's columns (the same bytes), unwritten."""
        return self._blob is not None and self._blob is other._blob

    def _own_data(self) -> VerdictData:
        """This store's columns, copied first if they are shared with other stores."""
        if self._shared:
            self._data = self._data.copy()
            self._shared = False
            self._blob = None
        return self._data

    # -- reading -----------------------------------------------------------------------------
    @classmethod
    def from_source(cls, source: SourceText) -> VerdictStore:
        """Parse JSONL text already in memory (e.g. read from git); no index."""
        return cls.from_bytes(source.text.encode("utf-8"), source.display, path=source.path)

    @classmethod
    def from_bytes(cls, raw: bytes, display: str, path: Path | None = None) -> VerdictStore:
        data = VerdictData()
        data.segments.append(Segment(0, data=raw))
        parse_bytes(raw, RowBuilder(data), display)
        return cls._wrap(data, path, display)

    @classmethod
    def load(cls, spec: str | Path, cwd: Path | None = None, *, missing_ok: bool = False,
             use_index: bool = True) -> VerdictStore:
        """A store from a file (through the on-disk index when enabled) or from git `REF:PATH`."""
        path = Path(spec) if cwd is None or Path(spec).is_absolute() else cwd / spec
        if missing_ok and ":" not in str(spec) and not path.exists():
            return cls(path=path, display=str(spec))
        if isinstance(spec, str) and _looks_like_git_spec(spec):
            return cls.from_source(read_source(spec, cwd))
        display = str(spec)
        if not display.strip():
            raise InputError("''", "empty path, expected a file")
        if not path.exists():
            raise InputError(display, "file not found")
        if path.is_dir():
            raise InputError(display, "is a directory, expected a file")
        from rubric_gate.verdicts.index import load_file

        return cls._wrap(load_file(path, display, use_index=use_index), path, display)

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self) -> Iterator[Verdict]:
        """Every verdict in file order (each read back from its line: for tools, not hot paths)."""
        return all_verdicts(self._data, self.display)

    # -- combining ---------------------------------------------------------------------------
    def merged(self, other: VerdictStore, *, path: Path | None = None, display: str | None = None) -> VerdictStore:
        """A store holding this store's verdicts, then `other`'s (which win on conflict).

        Columns are concatenated; no verdict is re-read or re-serialised. `path`/`display`
        name the file the merged store appends to (default: this store's).
        """
        data = self._data.copy()
        data.extend(other._data)
        return VerdictStore._wrap(data, path if path is not None else self.path,
                                  display if display is not None else self.display)

    def after(self, start: int) -> VerdictStore:
        """The verdicts after the first `start` (e.g. those appended by a judging run), in memory."""
        rows = np.arange(start, len(self._data), dtype=np.int64)
        return VerdictStore._wrap(self._data.subset(rows), None, self.display)

    def keyed_only(self) -> VerdictStore:
        """The verdicts that record judge, prompt version, task hash and item hash (a live judge's), in memory."""
        data = self._data
        arrays = data.columns.arrays()
        keyed_sources = np.array([bool(judge and prompt and task) for judge, prompt, task in data.sources.values]
                                 + [False])
        mask = keyed_sources[arrays["source"]] & (arrays["hash"] >= 0)
        if data.hashes.values:
            mask &= np.array([bool(h) for h in data.hashes.values] + [False])[arrays["hash"]]
        return VerdictStore._wrap(data.subset(np.flatnonzero(mask)), None, self.display)

    # -- writing -----------------------------------------------------------------------------
    def _add_objects(self, verdicts: list[Verdict]) -> None:
        """Rows for `verdicts`, held as the objects themselves."""
        if not verdicts:
            return
        data = self._own_data()
        last = data.segments[-1] if data.segments else None
        if last is not None and last.objects is not None and last.row_start + len(last.objects) == len(data):
            segment = last  # consecutive appends share one segment
        else:
            segment = Segment(len(data), objects=[])
            data.segments.append(segment)
        assert segment.objects is not None
        RowBuilder(data).add_objects(verdicts, len(segment.objects))
        segment.objects.extend(verdicts)
        data.changed()

    def _add_lines(self, lines: bytes, start: int) -> None:
        """Rows for lines of this store's file: `lines`, written at byte `start`."""
        data = self._own_data()
        last = data.segments[-1] if data.segments else None
        if last is None or last.path != self.path or last.data is not None or last.objects is not None:
            data.segments.append(Segment(len(data), path=self.path))
        parse_blocks([(lines, start, False)], RowBuilder(data), self.display, 1)
        data.changed()

    def append(self, verdicts: Iterable[Verdict], *, sync: bool = True, keep: bool = True) -> None:
        """Append verdicts to the file in one write, flushed (and fsynced unless `sync` is False).
        `keep=False` holds no `Verdict` object: the rows are read from the lines just written, as
        a loaded file's are (batch collection: memory per verdict is its columns only)."""
        verdicts = list(verdicts)
        if not verdicts:
            return
        if self.path is None:
            self._add_objects(verdicts)
            return
        lines = payload(verdicts)
        writer = VerdictWriter(self.path)
        try:
            start = writer.write_payload(lines, len(verdicts))
        finally:
            writer.close(sync=sync)
        if keep:
            self._add_objects(verdicts)
        else:
            self._add_lines(lines, start)

    def writer(self) -> VerdictWriter:
        """A handle for many appends: each `write` reaches the OS at once (a kill -9 loses
        nothing written); `sync` makes them durable, so callers can batch fsyncs."""
        if self.path is None:
            raise ValueError("an in-memory store has no file to write")
        return VerdictWriter(self.path, self)
