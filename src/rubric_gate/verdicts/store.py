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
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar, cast

import numpy as np

from rubric_gate.errors import InputError
from rubric_gate.rubric.model import normalize_text
from rubric_gate.sources import SourceText, read_source
from rubric_gate.sources.files import _looks_like_git_spec
from rubric_gate.sources.jsonl import TornLine, decode_line, parse_line
from rubric_gate.verdicts.lookup import find_rows
from rubric_gate.verdicts.model import ItemKey, Verdict
from rubric_gate.verdicts.parse import RowBuilder, parse_blocks, parse_bytes, slow_line
from rubric_gate.verdicts.table_data import ANSWER_CODES, NO, NONE, YES, Segment, VerdictData

if TYPE_CHECKING:
    from rubric_gate.verdicts.blobs import BlobCache, ParsedBlob

if sys.platform == "win32":  # pragma: no cover - no fcntl there
    fcntl = None
else:
    import fcntl


ANSWER_NAMES = {code: name for name, code in ANSWER_CODES.items()}
_T = TypeVar("_T")


class VerdictStore:
    def __init__(self, verdicts: Iterable[Verdict] = (), path: Path | None = None, display: str = "<verdicts>") -> None:
        self.path = path
        self.display = display
        self._item_keys: tuple[Any, ...] | None = None
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
    def from_blob(cls, blob_id: str, content: bytes | str | Path | Callable[[], bytes | str | Path | None],
                  display: str, *, cache: BlobCache | None = None) -> VerdictStore:
        """The store in git blob `blob_id`: parsed once per process (`content` is bytes, text, a
        file holding the bytes, or a function returning one of those, called only on a miss),
        its columns shared with every other store of the same blob until one of them is
        written to. A blob extending one parsed before (a PR's appended verdicts) parses only
        its added lines. No path: nothing is appended to a blob."""
        from rubric_gate.verdicts.blobs import default_cache

        blob = (cache or default_cache()).blob(blob_id, content, display)
        store = cls._wrap(blob.data, None, display)
        store._shared = True
        store._blob = blob
        return store

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
        _add_columns(data, verdicts, len(segment.objects))
        segment.objects.extend(verdicts)
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
            return cast(Verdict, segment.objects[offset])
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
        return self._read_back(raw)

    def _read_back(self, raw: bytes) -> Verdict:
        """A verdict line read back (it parsed before): pydantic's JSON reader for the common
        line, the exact path for any it refuses."""
        try:
            return Verdict.model_validate_json(raw)
        except ValueError:
            verdict = slow_line(raw, self.display, 0, last=False)
            assert verdict is not None
            return verdict

    def _verdicts(self, rows: np.ndarray) -> list[Verdict]:
        """The verdicts of `rows` (ascending), each file read once in chunks."""
        data = self._data
        offsets = data.columns.arrays()["offset"]
        bounds = [s.row_start for s in data.segments] + [len(data)]
        out: list[Verdict] = []
        for number, segment in enumerate(data.segments):
            first, end = np.searchsorted(rows, bounds[number]), np.searchsorted(rows, bounds[number + 1])
            if first == end:
                continue
            if segment.path is not None and segment.objects is None and segment.data is None:
                out.extend(self._read_back(line) for line in _lines_at(segment.path, offsets[rows[first:end]].tolist()))
            else:
                out.extend(self._verdict(int(row), segment=segment) for row in rows[first:end])
        return out

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
        return cast("tuple[np.ndarray, np.ndarray]", cached[2])

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

    def find_answers(self, lookups: Sequence[tuple[str, ItemKey, str | None, str | None, str | None, int]],
                     ) -> list[str | None]:
        """For each (check text, item, judge, prompt, task, sample), the answer of the verdict
        `find` returns (None: no verdict), one vectorised lookup per distinct key but the item."""
        groups: dict[tuple[str, str | None, str | None, str | None, int], list[int]] = {}
        for index, (text, _, judge, prompt, task, sample) in enumerate(lookups):
            groups.setdefault((text, judge, prompt, task, sample), []).append(index)
        out: list[str | None] = [None] * len(lookups)
        for (text, judge, prompt, task, sample), indexes in groups.items():
            codes, missing = self.answer_codes(text, [lookups[i][1] for i in indexes], judge=judge, prompt=prompt,
                                               sample=sample, task=task)
            for index, code, absent in zip(indexes, codes.tolist(), missing.tolist(), strict=True):
                if not absent:
                    out[index] = ANSWER_NAMES[code]
        return out

    def merged(self, other: VerdictStore, *, path: Path | None = None, display: str | None = None) -> VerdictStore:
        """A store holding this store's verdicts, then `other`'s (which win on conflict).

        Columns are concatenated; no verdict is re-read or re-serialised. `path`/`display`
        name the file the merged store appends to (default: this store's).
        """
        data = self._data.copy()
        data.extend(other._data)
        return VerdictStore._wrap(data, path if path is not None else self.path,
                                  display if display is not None else self.display)

    def shared_result(self, key: Hashable, keep: object, build: Callable[[], _T]) -> _T:
        """`build()`, computed once per `key` for every store of this blob while they share its
        columns (a blob's bytes never change), else every time. `key` names what else the
        result depends on (object ids are fine: `keep` holds those objects alive with it).
        For results that every rubric reading the same store computes alike."""
        if self._blob is None:
            return build()
        result = self._blob.memo(key, keep, build)
        if isinstance(result, VerdictStore):
            result._shared = True  # handed to every such rubric: a write copies first
        return result

    def merged_lines(self, verdicts: list[Verdict], source: VerdictStore) -> VerdictStore:
        """`self.merged(VerdictStore(verdicts))`, for `verdicts` taken from `source.added_since(self)`.

        When they are all of them and `source`'s blob is this store's blob plus exactly those
        lines, that is `source`'s own columns: shared (copied on write), not rebuilt per rubric."""
        mine, theirs = self._blob, source._blob
        if mine is not None and theirs is not None:
            known = theirs.added_known(mine)
            if (known is not None and len(verdicts) == len(known) == len(source) - len(self)
                    and all(a is b for a, b in zip(verdicts, known, strict=True)) and theirs.extends(mine)):
                store = VerdictStore._wrap(source._data, self.path, self.display)
                store._shared, store._blob = True, theirs
                return store
        return self.merged(VerdictStore(verdicts))

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

    def _new_lines(self, base: VerdictStore, prefix_rows: int) -> np.ndarray:
        """The rows after the first `prefix_rows` (which are `base`'s rows, sharing its string
        ids) whose line `base` does not hold. A line equal to a base line parses to the same
        check text and item, so only the base lines of those (text, item) keys are compared."""
        arrays = self._data.columns.arrays()
        fresh = np.arange(prefix_rows, len(self._data), dtype=np.int64)
        if not len(fresh):
            return fresh
        span = max(1, len(self._data.items)) + 1
        keys = arrays["text"].astype(np.int64) * span + (arrays["item"] + 1)
        shared = np.flatnonzero(np.isin(keys[:prefix_rows], keys[fresh]))
        if not len(shared):
            return fresh
        known = self._line_fingerprints(shared)
        return fresh[~np.isin(self._line_fingerprints(fresh), known)]

    def _line_fingerprints(self, rows: np.ndarray | None = None) -> np.ndarray:
        """A hash of each row's line as written (trailing whitespace aside), in row order; of the
        given `rows` (ascending) only, when given. A file is read in chunks, never whole."""
        data = self._data
        all_offsets = data.columns.arrays()["offset"]
        rows = np.arange(len(data), dtype=np.int64) if rows is None else rows
        out = np.empty(len(rows), dtype=np.int64)
        bounds = [s.row_start for s in data.segments] + [len(data)]
        for number, segment in enumerate(data.segments):
            first, end = int(np.searchsorted(rows, bounds[number])), int(np.searchsorted(rows, bounds[number + 1]))
            offsets = all_offsets[rows[first:end]].tolist()
            if segment.objects is not None:
                for at, offset in enumerate(offsets, first):
                    out[at] = hash(segment.objects[offset].to_json_line().rstrip().encode())
            elif segment.data is not None:
                raw = segment.data
                for at, offset in enumerate(offsets, first):
                    stop = raw.find(b"\n", offset)
                    out[at] = hash(raw[offset: stop if stop >= 0 else None].rstrip())
            else:
                assert segment.path is not None
                for at, line in enumerate(_lines_at(segment.path, offsets), first):
                    out[at] = hash(line.rstrip())
        return out

    def differing_lines(self, base: VerdictStore) -> tuple[tuple[Verdict, ...], tuple[Verdict, ...]]:
        """The lines (`base`'s, then this store's) that can make a lookup read otherwise here.

        A lookup of (check text, item) reads two groups of lines, the text's lines for the item's
        id and those for its content hash, and the last line of a group wins. Where a group holds
        the same lines in the same order on both sides, every lookup reading it agrees; where
        not, the lines at each position that differs are returned, from either side. So a copy of
        an earlier line, a reordering and a removal are seen like a new line: what is compared is
        what the gate reads, not which lines one side lacks (`added_since`'s question).

        A blob extending the other (a PR appending lines) differs by exactly its added lines,
        kept for every store of the two blobs.
        """
        mine, theirs = self._blob, base._blob
        if mine is not None and theirs is not None:
            if mine is theirs:
                return (), ()
            if mine.extends(theirs):
                return (), self._appended_lines(theirs)
            if theirs.extends(mine):
                return base._appended_lines(mine), ()
        before, after = _differing_rows(base._data, self._data)
        return tuple(base._verdicts(before)), tuple(self._verdicts(after))

    def texts(self) -> list[str]:
        """The (normalised) check texts this store records answers for."""
        return list(self._data.texts.values)

    def _appended_lines(self, prefix: ParsedBlob) -> tuple[Verdict, ...]:
        """The verdicts of this store's rows after `prefix`'s (a blob this store's blob extends),
        read back once for every store of the two blobs: `differing_lines` and `added_since` ask
        for the same lines (a PR appending 10k verdicts: 13 MiB of `Verdict`s each time)."""
        assert self._blob is not None
        return self._blob.memo(("appended", id(prefix)), prefix, lambda: tuple(
            self._verdicts(np.arange(len(prefix.data), len(self._data), dtype=np.int64))))

    def same_blob(self, other: VerdictStore) -> bool:
        """Whether both stores are one blob's columns (the same bytes), unwritten."""
        return self._blob is not None and self._blob is other._blob

    def appended_to(self, base: VerdictStore) -> tuple[Verdict, ...] | None:
        """The lines this store's blob adds after all of `base`'s bytes; None unless it is `base`'s
        bytes plus whole lines (then what a merge of it with another version leaves is unknown)."""
        mine, theirs = self._blob, base._blob
        if mine is None or theirs is None or not (mine is theirs or mine.extends(theirs)):
            return None
        return self.differing_lines(base)[1]

    def added_since(self, base: VerdictStore) -> list[Verdict]:
        """This store's verdicts that `base` does not hold: lines not in `base`, unless one is a
        reformatted copy (same fields) of a `base` verdict for the same check text and item.
        These are the lines a PR wrote; whether the answers the gate reads changed is
        `differing_lines`' question (a copy of an earlier base line is no new line, yet it wins).

        For a PR's head store against its base: only the new lines are read back as `Verdict`s.
        Two blob stores where one extends the other (the PR appended lines) compare only the
        appended lines, and the answer is kept for every store of the same two blobs.
        """
        mine, theirs = self._blob, base._blob
        if mine is not None and theirs is not None:
            if mine.extends(theirs) or mine is theirs:
                return list(mine.added_since(theirs, lambda: self._added_since(
                    base, len(theirs.data), lambda: self._appended_lines(theirs))))
            if theirs.extends(mine):
                return []  # every line of this blob starts the other one
        return self._added_since(base)

    def _added_since(self, base: VerdictStore, prefix_rows: int | None = None,
                     appended: Callable[[], Sequence[Verdict]] | None = None) -> list[Verdict]:
        """`added_since`; `prefix_rows`: this store's first rows are `base`'s rows (same lines),
        and `appended()`, when given, the verdicts of the rows after them."""
        if prefix_rows is None:
            candidates = np.flatnonzero(~np.isin(self._line_fingerprints(), base._line_fingerprints()))
        else:
            candidates = self._new_lines(base, prefix_rows)
        if not len(candidates):
            return []
        if appended is None or prefix_rows is None:
            fresh = self._verdicts(candidates)
        else:
            lines = appended()
            fresh = [lines[row] for row in (candidates - prefix_rows).tolist()]
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
            rows = np.flatnonzero(np.isin(keys, np.fromiter(wanted, dtype=np.int64)))
            known.update(verdict.to_json_line() for verdict in base._verdicts(rows))
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


def _add_columns(data: VerdictData, verdicts: list[Verdict], first_offset: int) -> None:
    """Append `verdicts`' rows (as `RowBuilder.add_verdict` would, a column at a time)."""
    builder = RowBuilder(data)
    texts = [builder.text_id(text) for text in dict.fromkeys(v.check_text for v in verdicts)]
    text_ids = dict(zip(dict.fromkeys(v.check_text for v in verdicts), texts, strict=True))
    sources: dict[tuple[str | None, str | None, str | None], int] = {}
    tail = data.columns.tail
    n = len(verdicts)
    tail["text"].extend([text_ids[v.check_text] for v in verdicts])
    tail["item"].extend([data.items.add(v.item) for v in verdicts])
    tail["hash"].extend([NONE if v.item_hash is None else data.hashes.add(v.item_hash) for v in verdicts])
    for v in verdicts:
        key = (v.judge, v.prompt, v.task_hash)
        if key not in sources:
            sources[key] = data.sources.add(key)
    tail["source"].extend([sources[(v.judge, v.prompt, v.task_hash)] for v in verdicts])
    tail["answer"].extend([ANSWER_CODES[v.answer] for v in verdicts])
    tail["sample"].extend([v.sample or 0 for v in verdicts])
    tail["offset"].extend(range(first_offset, first_offset + n))


def _differing_rows(before: VerdictData, after: VerdictData) -> tuple[np.ndarray, np.ndarray]:
    """The rows of each side (ascending) at a position of their (text, item id) or (text, item
    hash) group that the other side does not fill with the same line as lookups read it (item,
    hash, judge/prompt/task, answer and sample); `differing_lines`' general case. Strings are
    compared through ids shared by both sides, so the comparison is exact."""
    pools = ("texts", "items", "hashes", "sources")
    joint: dict[str, dict[Any, int]] = {name: {} for name in pools}
    mapped = []
    for data in (before, after):
        maps = {name: np.array([joint[name].setdefault(v, len(joint[name])) for v in getattr(data, name).values]
                               + [NONE], dtype=np.int64) for name in pools}
        a = data.columns.arrays()
        mapped.append({"text": maps["texts"][a["text"]], "item": maps["items"][a["item"]],
                       "hash": maps["hashes"][a["hash"]], "source": maps["sources"][a["source"]],
                       "answer": a["answer"].astype(np.int64), "sample": a["sample"].astype(np.int64)})
    sizes = {"text": len(joint["texts"]), "item": len(joint["items"]) + 1, "hash": len(joint["hashes"]) + 1,
             "source": len(joint["sources"]) + 1, "answer": len(ANSWER_CODES),
             "sample": 1 + max((int(m["sample"].max()) for m in mapped if len(m["sample"])), default=0)}
    differs = [np.zeros(len(m["text"]), dtype=bool) for m in mapped]
    for by, other in (("item", "hash"), ("hash", "item")):
        keys = []
        for m in mapped:
            rows = np.flatnonzero(m[by] >= 0)  # rows without an item hash are in no hash group
            group = m["text"][rows] * sizes[by] + m[by][rows]
            order = np.argsort(group, kind="stable")  # file order within each group
            ordered = group[order]
            starts = np.ones(len(ordered), dtype=bool)
            starts[1:] = ordered[1:] != ordered[:-1]
            at = np.arange(len(ordered))
            position = np.empty(len(rows), dtype=np.int64)
            position[order] = at - np.maximum.accumulate(np.where(starts, at, 0))
            keys.append((rows, [group, position, m[other][rows] + 1, m["source"][rows] + 1, m["answer"][rows],
                                m["sample"][rows]]))
        longest = max((int(columns[1].max()) for _, columns in keys if len(columns[1])), default=0)
        bounds = [sizes["text"] * sizes[by], longest + 1, sizes[other] + 1, sizes["source"] + 1, sizes["answer"],
                  sizes["sample"]]
        packed = [_packed(columns, bounds) for _, columns in keys]
        for side, (rows, _) in enumerate(keys):
            differs[side][rows[~np.isin(packed[side], packed[1 - side])]] = True
    return np.flatnonzero(differs[0]), np.flatnonzero(differs[1])


def _packed(columns: list[np.ndarray], bounds: list[int]) -> np.ndarray:
    """Rows of non-negative integer `columns` (each below its bound) as one comparable key per
    row: packed into as few int64 words as hold them exactly, several viewed as one byte string."""
    words: list[np.ndarray] = []
    word, room = None, 1
    for column, bound in zip(columns, bounds, strict=True):
        if word is not None and room * bound < 2**62:
            word, room = word * bound + column, room * bound
        else:
            if word is not None:
                words.append(word)
            word, room = column.astype(np.int64), bound
    assert word is not None
    words.append(word)
    if len(words) == 1:
        return words[0]
    stacked = np.ascontiguousarray(np.stack(words, axis=1))
    return stacked.view(np.dtype((np.void, stacked.dtype.itemsize * len(words)))).ravel()


def _lines_at(path: Path, offsets: list[int], chunk: int = 1 << 22) -> Iterator[bytes]:
    """The lines starting at `offsets` (ascending) of a file, read a chunk at a time."""
    with path.open("rb") as handle:
        buffer, buffer_start = b"", 0
        for offset in offsets:
            at = offset - buffer_start
            stop = buffer.find(b"\n", at) if 0 <= at <= len(buffer) else -1
            if stop < 0:
                handle.seek(offset)
                buffer, buffer_start, at = handle.read(chunk), offset, 0
                stop = buffer.find(b"\n")
                while stop < 0 and len(buffer) >= chunk:  # a line longer than a chunk
                    more = handle.read(chunk)
                    if not more:
                        break
                    buffer += more
                    stop = buffer.find(b"\n")
            yield buffer[at: stop if stop >= 0 else None]


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
