"""The verdict store: an append-only JSONL file of verdicts, indexed for lookup.

Two ways to find a verdict for (check text, item):
- replay (no live judge): any verdict for the same normalised check text and the same item,
  by id or content hash; a verdict whose `item_hash` no longer matches the item is stale.
- keyed (live judge): judge, prompt version, task hash, normalised check text and item
  content hash must all match, so exactly the pairs whose inputs changed are judged again.
Given a task hash, replay also takes a verdict recorded under another task as stale: a
verdict is never reused under a task it was not judged under.
Later lines win over earlier ones, so re-recording a pair supersedes it.

Verdicts are held as columns (`table_data`), not one object each; `find` and iteration
read a full `Verdict` back from its line only when asked.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from rubric_gate.errors import InputError
from rubric_gate.rubric.model import normalize_text
from rubric_gate.sources import SourceText, read_source
from rubric_gate.sources.files import _looks_like_git_spec
from rubric_gate.sources.jsonl import TornLine, decode_line, parse_line
from rubric_gate.verdicts.lookup import find_rows
from rubric_gate.verdicts.model import ItemKey, Verdict
from rubric_gate.verdicts.parse import RowBuilder, parse_blocks, parse_bytes, slow_line
from rubric_gate.verdicts.table_data import NO, NONE, YES, Segment, VerdictData

if TYPE_CHECKING:
    from rubric_gate.verdicts.blobs import BlobCache

if sys.platform == "win32":  # pragma: no cover - no fcntl there
    fcntl = None
else:
    import fcntl


class VerdictStore:
    def __init__(self, verdicts: Iterable[Verdict] = (), path: Path | None = None, display: str = "<verdicts>") -> None:
        self.path = path
        self.display = display
        self._item_keys: tuple[Any, ...] | None = None
        self._data: VerdictData
        self._shared = False  # columns shared with other stores of the same blob (copy on write)
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
    def from_blob(cls, blob_id: str, content: bytes | str | Callable[[], bytes | str | None], display: str,
                  *, cache: BlobCache | None = None) -> VerdictStore:
        """The store in git blob `blob_id`: parsed once per process (`content` is bytes, text or
        a function returning them, called only on a miss), its columns shared with every other
        store of the same blob until one of them is written to. A blob extending one parsed
        before (a PR's appended verdicts) parses only its added lines. No path: nothing is
        appended to a blob."""
        from rubric_gate.verdicts.blobs import default_cache

        data = (cache or default_cache()).data(blob_id, content, display)
        store = cls._wrap(data, None, display)
        store._shared = True
        return store

    def _own_data(self) -> VerdictData:
        """This store's columns, copied first if they are shared with other stores."""
        if self._shared:
            self._data = self._data.copy()
            self._shared = False
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

    def _add_objects(self, verdicts: list[Verdict]) -> None:
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
        builder = RowBuilder(data)
        for verdict in verdicts:
            builder.add_verdict(verdict, len(segment.objects))
            segment.objects.append(verdict)
        data.changed()

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self) -> Iterator[Verdict]:
        """Every verdict in file order (each read back from its line: for tools, not hot paths)."""
        data = self._data
        segments = data.segments
        with _LineReader() as reader:
            for number, segment in enumerate(segments):
                end = segments[number + 1].row_start if number + 1 < len(segments) else len(data)
                if segment.objects is not None:
                    yield from segment.objects[: end - segment.row_start]
                    continue
                for row in range(segment.row_start, end):
                    yield self._verdict(row, reader, segment)

    def _verdict(self, row: int, reader: _LineReader | None = None, segment: Segment | None = None) -> Verdict:
        data = self._data
        if segment is None:
            starts = [s.row_start for s in data.segments]
            segment = data.segments[bisect.bisect_right(starts, row) - 1]
        offset = int(data.columns.arrays()["offset"][row])
        if segment.objects is not None:
            return segment.objects[offset]
        if segment.data is not None:
            end = segment.data.find(b"\n", offset)
            raw = segment.data[offset:] if end < 0 else segment.data[offset:end]
        else:
            assert segment.path is not None
            if reader is None:
                with _LineReader() as own:
                    raw = own.line(segment.path, offset)
            else:
                raw = reader.line(segment.path, offset)
        verdict = slow_line(raw, self.display, 0, last=False)
        assert verdict is not None
        return verdict

    # -- lookups -----------------------------------------------------------------------------
    def _keys_for(self, items: Sequence[ItemKey]) -> tuple[np.ndarray, np.ndarray]:
        """Interned item ids and content hashes of `items`: each item's hash computed once, and
        not at all while no verdict records an item hash."""
        data = self._data
        cached = self._item_keys
        sizes = (len(data.items), len(data.hashes))
        if cached is None or cached[0] is not items:
            cached = (items, None, None, None)
        if cached[3] != sizes:
            hashes = cached[1]
            if hashes is None and len(data.hashes):
                hashes = [item.content_hash for item in items]
            item_ids = np.array([data.items.ids.get(item.id, NONE) for item in items], dtype=np.int64)
            hash_ids = (np.full(len(items), NONE, dtype=np.int64) if hashes is None else
                        np.array([data.hashes.ids.get(h, NONE) for h in hashes], dtype=np.int64))
            cached = (items, hashes, (item_ids, hash_ids), sizes)
        self._item_keys = cached
        return cached[2]

    def rows(self, check_text: str, items: Sequence[ItemKey], *, judge: str | None = None,
             prompt: str | None = None, sample: int = 0, task: str | None = None) -> np.ndarray:
        """The winning row for each item (-1 where none), as `find` would choose it. `task` is
        the `task_hash` of the rubric's task (part of the key; None: any task)."""
        if judge is not None and not len(self._data.hashes):
            return np.full(len(items), NONE, dtype=np.int64)  # keyed lookups need item hashes
        item_ids, hash_ids = self._keys_for(items)
        return self._rows(check_text, item_ids, hash_ids, judge, prompt, sample, task)

    def rows_for_keys(self, check_text: str, item_ids: Sequence[str], item_hashes: Sequence[str], *,
                      judge: str | None = None, prompt: str | None = None, sample: int = 0,
                      task: str | None = None) -> np.ndarray:
        """Like `rows`, for items given by id and content hash (already computed by the caller)."""
        data = self._data
        ids = np.array([data.items.ids.get(i, NONE) for i in item_ids], dtype=np.int64)
        hashes = np.array([data.hashes.ids.get(h, NONE) for h in item_hashes], dtype=np.int64)
        return self._rows(check_text, ids, hashes, judge, prompt, sample, task)

    def _rows(self, check_text: str, item_ids: np.ndarray, hash_ids: np.ndarray, judge: str | None,
              prompt: str | None, sample: int = 0, task: str | None = None) -> np.ndarray:
        data = self._data
        text_id = data.raw_texts.get(check_text)
        if text_id is None:
            text_id = data.texts.ids.get(normalize_text(check_text))
        if judge is not None:
            source_id = data.sources.ids.get((judge, prompt, task))
            return find_rows(data, text_id, item_ids, hash_ids, source_id, keyed=True, sample=sample)
        other_task = None
        if task is not None:  # replay: a verdict recorded under another task is stale
            other_task = np.array([t is not None and t != task for _, _, t in data.sources.values] + [False])
            if not other_task.any():
                other_task = None
        return find_rows(data, text_id, item_ids, hash_ids, sample=sample, stale_sources=other_task)

    def answers(self, check_text: str, items: Sequence[ItemKey], *, judge: str | None = None,
                prompt: str | None = None, sample: int = 0, task: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(failed, missing) boolean arrays over `items` for one check text."""
        codes, missing = self.answer_codes(check_text, items, judge=judge, prompt=prompt, sample=sample, task=task)
        return codes == NO, missing

    def answer_codes(self, check_text: str, items: Sequence[ItemKey], *, judge: str | None = None,
                     prompt: str | None = None, sample: int = 0,
                     task: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(answer code per item: YES / NO / NOT_APPLICABLE, missing) over `items` for one check text.
        A missing verdict's code is YES; read `missing` first."""
        rows = self.rows(check_text, items, judge=judge, prompt=prompt, sample=sample, task=task)
        missing = rows < 0
        codes = np.full(len(rows), YES, dtype=np.int8)
        if len(rows):
            codes[~missing] = self._data.columns.arrays()["answer"][rows[~missing]]
        return codes, missing

    def find(
        self,
        check_text: str,
        item: ItemKey,
        *,
        judge: str | None = None,
        prompt: str | None = None,
        sample: int = 0,
        task: str | None = None,
    ) -> Verdict | None:
        row = int(self.rows(check_text, [item], judge=judge, prompt=prompt, sample=sample, task=task)[0])
        return None if row < 0 else self._verdict(row)

    def merged(self, other: VerdictStore, *, path: Path | None = None, display: str | None = None) -> VerdictStore:
        """A store holding this store's verdicts, then `other`'s (which win on conflict).

        Columns are concatenated; no verdict is re-read or re-serialised. `path`/`display`
        name the file the merged store appends to (default: this store's).
        """
        data = self._data.copy()
        data.extend(other._data)
        return VerdictStore._wrap(data, path if path is not None else self.path,
                                  display if display is not None else self.display)

    def since(self, start: int) -> VerdictStore:
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

    def _line_fingerprints(self) -> np.ndarray:
        """A hash of each row's line as written (trailing whitespace aside), in row order."""
        data = self._data
        offsets = data.columns.arrays()["offset"].tolist()
        out = np.empty(len(offsets), dtype=np.int64)
        bounds = [s.row_start for s in data.segments] + [len(data)]
        for number, segment in enumerate(data.segments):
            first, end = bounds[number], bounds[number + 1]
            if segment.objects is not None:
                for row in range(first, end):
                    out[row] = hash(segment.objects[offsets[row]].to_json_line().rstrip().encode())
                continue
            if segment.data is not None:
                raw = segment.data
            else:
                assert segment.path is not None  # a segment holds objects, text or a path
                raw = segment.path.read_bytes()
            for row in range(first, end):
                stop = raw.find(b"\n", offsets[row])
                out[row] = hash(raw[offsets[row]: stop if stop >= 0 else None].rstrip())
        return out

    def added_since(self, base: VerdictStore) -> list[Verdict]:
        """This store's verdicts that `base` does not hold: lines not in `base`, unless one is a
        reformatted copy (same fields) of a `base` verdict for the same check text and item.

        For a PR's head store against its base: only the new lines are read back as `Verdict`s.
        """
        candidates = np.flatnonzero(~np.isin(self._line_fingerprints(), base._line_fingerprints()))
        if not len(candidates):
            return []
        fresh = [self._verdict(int(row)) for row in candidates]
        # Canonical lines of the base verdicts that share a (check text, item) with a candidate.
        base_data = base._data
        arrays = base_data.columns.arrays()
        wanted = set()
        for verdict in fresh:
            text_id = base_data.texts.ids.get(normalize_text(verdict.check_text))
            item_id = base_data.items.ids.get(verdict.item)
            if text_id is not None and item_id is not None:
                wanted.add(text_id * max(1, len(base_data.items)) + item_id)
        known: set[str] = set()
        if wanted:
            keys = arrays["text"].astype(np.int64) * max(1, len(base_data.items)) + arrays["item"]
            for row in np.flatnonzero(np.isin(keys, np.fromiter(wanted, dtype=np.int64))):
                known.add(base._verdict(int(row)).to_json_line())
        return [v for v in fresh if v.to_json_line() not in known]

    # -- writing -----------------------------------------------------------------------------
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
        with VerdictWriter(self.path) as writer:
            if keep:
                writer.write(verdicts)
            else:
                payload = "".join(v.to_json_line() for v in verdicts).encode("utf-8")
                start = writer.write_payload(payload, len(verdicts))
            if sync:
                writer.sync()
        if keep:
            self._add_objects(verdicts)
        else:
            self._add_lines(payload, start)

    def _add_lines(self, payload: bytes, start: int) -> None:
        """Rows for lines of this store's file: `payload`, written at byte `start`."""
        data = self._own_data()
        last = data.segments[-1] if data.segments else None
        if last is None or last.path != self.path or last.data is not None or last.objects is not None:
            data.segments.append(Segment(len(data), path=self.path))
        parse_blocks([(payload, start, False)], RowBuilder(data), self.display, 1)
        data.changed()

    def writer(self) -> VerdictWriter:
        """A handle for many appends: each `write` reaches the OS at once (a kill -9 loses
        nothing written); `sync` makes them durable, so callers can batch fsyncs."""
        if self.path is None:
            raise ValueError("an in-memory store has no file to write")
        return VerdictWriter(self.path, self)


class VerdictWriter:
    """Appends whole lines under an exclusive lock, after repairing the file's last line once."""

    def __init__(self, path: Path, store: VerdictStore | None = None) -> None:
        self.path = path
        self.store = store
        path.parent.mkdir(parents=True, exist_ok=True)
        self.handle = path.open("ab")
        self.unsynced = 0
        with self._locked():
            _repair_tail(path)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        if fcntl is not None:
            fcntl.flock(self.handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(self.handle.fileno(), fcntl.LOCK_UN)

    def write(self, verdicts: list[Verdict]) -> None:
        if not verdicts:
            return
        self.write_payload("".join(v.to_json_line() for v in verdicts).encode("utf-8"), len(verdicts))
        if self.store is not None:
            self.store._add_objects(verdicts)

    def write_payload(self, payload: bytes, lines: int) -> int:
        """Write whole lines; returns the byte offset they start at."""
        with self._locked():
            self.handle.write(payload)
            self.handle.flush()
            start = self.handle.tell() - len(payload)  # append mode, under the lock: our bytes end the file
        self.unsynced += lines
        return start

    def sync(self) -> None:
        if self.unsynced:
            os.fsync(self.handle.fileno())
            self.unsynced = 0

    def close(self) -> None:
        if not self.handle.closed:
            self.sync()
            self.handle.close()

    def __enter__(self) -> VerdictWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _repair_tail(path: Path) -> None:
    """Before appending: cut a last line that does not parse (a write cut short by a crash),
    and end a complete last line (as editors save it) with the newline it lacks."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("r+b") as handle:
        end = handle.seek(0, os.SEEK_END)
        handle.seek(end - 1)
        if handle.read(1) == b"\n":
            return
        position = end
        tail = b""
        line_start = 0
        while position > 0:
            start = max(0, position - 65536)
            handle.seek(start)
            chunk = handle.read(position - start)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                tail = chunk[newline + 1:] + tail
                line_start = start + newline + 1
                break
            tail = chunk + tail
            position = start
        if _parses(tail, path):
            handle.seek(end)
            handle.write(b"\n")
        else:
            handle.truncate(line_start)
        handle.flush()
        os.fsync(handle.fileno())


def _parses(raw: bytes, path: Path) -> bool:
    try:
        parse_line(decode_line(raw, str(path), 0, last=True), str(path), 0, last=True)
    except TornLine:
        return False
    except InputError:
        return True  # complete JSON that is wrong in another way: the user's line, reported on read
    return True


class _LineReader:
    """Reads single lines from files by offset, keeping each file open while iterating."""

    def __init__(self) -> None:
        self.handles: dict[Path, BinaryIO] = {}

    def line(self, path: Path, offset: int) -> bytes:
        handle = self.handles.get(path)
        if handle is None:
            handle = self.handles[path] = path.open("rb")
        handle.seek(offset)
        return handle.readline().rstrip(b"\n")

    def __enter__(self) -> _LineReader:
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self.handles.values():
            handle.close()
