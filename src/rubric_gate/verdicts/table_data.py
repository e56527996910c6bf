"""The verdict store's memory: interned strings and one numpy array per column, no object per verdict.

A row is one verdict line: its normalised check text, item id, item hash, (judge, prompt)
and answer as small integers, plus where its line starts, so the full `Verdict` (quote,
usage, ...) can be read back on demand. Rows stay in file order: later rows win.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import islice, repeat
from pathlib import Path
from typing import Any

import numpy as np

NONE = -1  # no item hash / no such string
ANSWER_CODES = {"yes": 0, "no": 1, "n/a": 2}  # the answer column; a check failed where code == 1
NO = ANSWER_CODES["no"]
ANSWER_NAMES = {code: name for name, code in ANSWER_CODES.items()}
YES, NOT_APPLICABLE = ANSWER_CODES["yes"], ANSWER_CODES["n/a"]  # "n/a" never fails an item


class Pool:
    """Strings interned to dense integer ids, in first-seen order."""

    __slots__ = ("ids", "values")

    def __init__(self, values: list[Any] | None = None) -> None:
        self.values: list[Any] = list(values or ())
        self.ids: dict[Any, int] = {v: i for i, v in enumerate(self.values)}

    def add(self, value: Any) -> int:
        found = self.ids.get(value)
        if found is None:
            found = self.ids[value] = len(self.values)
            self.values.append(value)
        return found

    def add_all(self, values: Iterable[Any]) -> array:
        """`add` of each value, in one pass in C, as an int32 array: `setdefault` gives a new
        value the dict's size as it is met (`len`, taken just before), then the values the
        pass added are listed from the end of the dict (its order is insertion order)."""
        ids = self.ids
        before = len(ids)
        out = array("i", list(map(ids.setdefault, values, map(len, repeat(ids)))))
        if len(ids) > before:
            self.values.extend(reversed(list(islice(reversed(ids), len(ids) - before))))
        return out

    def __len__(self) -> int:
        return len(self.values)

    def copy(self) -> Pool:
        pool = Pool.__new__(Pool)
        pool.values, pool.ids = list(self.values), dict(self.ids)
        return pool


COLUMNS: tuple[tuple[str, str, Any], ...] = (
    # name, array.array typecode, numpy dtype
    ("text", "i", np.int32),
    ("item", "i", np.int32),
    ("hash", "i", np.int32),
    ("source", "i", np.int32),  # (judge, prompt, task_hash)
    ("answer", "b", np.int8),  # ANSWER_CODES: 0 yes, 1 no, 2 n/a
    ("sample", "i", np.int32),  # repeated sampling: 0-based index of the answer (absent: 0)
    ("offset", "q", np.int64),  # byte offset of the line (bytes segments) or list index (objects)
)


_CODES = {name: (code, dtype) for name, code, dtype in COLUMNS}


@dataclass
class Segment:
    """Where rows [row_start, ...) came from, to read a full verdict back."""

    row_start: int
    path: Path | None = None  # a file on disk, read at `offset`
    data: bytes | None = None  # text held in memory (e.g. read from git)
    objects: list[Any] | None = None  # Verdict objects given in memory


@dataclass
class Columns:
    """Growable columns: frozen numpy arrays plus `array` tails that appends go to."""

    frozen: dict[str, np.ndarray] = field(default_factory=lambda: {n: np.empty(0, d) for n, _, d in COLUMNS})
    tail: dict[str, array] = field(default_factory=lambda: {n: array(c) for n, c, _ in COLUMNS})

    def __len__(self) -> int:
        return len(self.frozen["text"]) + len(self.tail["text"])

    def arrays(self) -> dict[str, np.ndarray]:
        if len(self.tail["text"]) or len(self.tail["offset"]):
            for name, _, _ in COLUMNS:
                self.column(name)
        return self.frozen

    def column(self, name: str) -> np.ndarray:
        """One column as an array, its tail moved into it (the other columns' tails left alone)."""
        if len(self.tail[name]):
            code, dtype = _CODES[name]
            # The tail's buffer becomes the array itself (no copy) when nothing is frozen yet;
            # a fresh `array` takes further appends.
            extra = np.frombuffer(self.tail[name], dtype=dtype)
            self.frozen[name] = extra if not len(self.frozen[name]) else np.concatenate([self.frozen[name], extra])
            self.tail[name] = array(code)
        return self.frozen[name]

    def extend_arrays(self, arrays: dict[str, np.ndarray]) -> None:
        current = self.arrays()
        for name, _, dtype in COLUMNS:
            current[name] = arrays[name].astype(dtype, copy=False) if not len(current[name]) else \
                np.concatenate([current[name], arrays[name].astype(dtype, copy=False)])

    def copy(self) -> Columns:
        """Columns with the same rows: the frozen arrays are shared, read-only (every write makes
        new arrays: `arrays` and `extend_arrays` concatenate), so a copy costs no column memory."""
        return Columns({n: _read_only(a) for n, a in self.arrays().items()})

    def share_prefix(self, longer: Columns) -> None:
        """Hold these rows as a view of `longer`'s first rows, which are the same rows (a blob
        extending this one): the columns are then held once for both."""
        rows = len(self)
        self.arrays()
        for name, _, _ in COLUMNS:  # a column at a time: its old and new arrays are held together, not all of them
            theirs = longer.column(name)
            assert len(theirs) >= rows
            self.frozen[name] = _read_only(theirs[:rows])


def _read_only(array_: np.ndarray) -> np.ndarray:
    view = array_.view()
    view.flags.writeable = False
    return view


class VerdictData:
    """All rows of a store; lookups are built lazily and dropped when rows are added."""

    def __init__(self) -> None:
        self.texts = Pool()  # normalised check texts
        self.items = Pool()
        self.hashes = Pool()
        self.sources = Pool()  # (judge, prompt, task_hash)
        self.columns = Columns()
        self.segments: list[Segment] = []
        self.raw_texts: dict[str, int] = {}  # check text as written -> normalised text id
        self._lookups: Any = None

    def __len__(self) -> int:
        return len(self.columns)

    def changed(self) -> None:
        self._lookups = None

    def copy(self) -> VerdictData:
        other = VerdictData()
        other.texts, other.items, other.hashes, other.sources = (
            self.texts.copy(), self.items.copy(), self.hashes.copy(), self.sources.copy())
        other.columns = self.columns.copy()
        other.segments = list(self.segments)
        other.raw_texts = dict(self.raw_texts)
        return other

    def extend(self, other: VerdictData) -> None:
        """Append `other`'s rows after ours (they win on conflict), mapping its string ids onto ours."""
        base = len(self)

        def remap(mine: Pool, theirs: Pool) -> np.ndarray:
            return np.array([mine.add(v) for v in theirs.values] + [NONE], dtype=np.int32)

        maps = {"text": remap(self.texts, other.texts), "item": remap(self.items, other.items),
                "hash": remap(self.hashes, other.hashes), "source": remap(self.sources, other.sources)}
        theirs = other.columns.arrays()
        # index -1 (NONE) maps through the trailing NONE entry
        moved = {name: (maps[name][theirs[name]] if name in maps else theirs[name]) for name in theirs}
        self.columns.extend_arrays(moved)
        for segment in other.segments:
            self.segments.append(Segment(segment.row_start + base, segment.path, segment.data, segment.objects))
        for raw, text_id in other.raw_texts.items():
            self.raw_texts.setdefault(raw, int(maps["text"][text_id]))
        self.changed()

    def subset(self, rows: np.ndarray) -> VerdictData:
        """The given rows (ascending), sharing string pools and line sources with this data."""
        other = VerdictData()
        other.texts, other.items, other.hashes, other.sources = (
            self.texts.copy(), self.items.copy(), self.hashes.copy(), self.sources.copy())
        other.raw_texts = dict(self.raw_texts)
        arrays = self.columns.arrays()
        other.columns = Columns({name: array_[rows] for name, array_ in arrays.items()})
        bounds = [s.row_start for s in self.segments] + [len(self)]
        for number, segment in enumerate(self.segments):
            first, end = np.searchsorted(rows, bounds[number]), np.searchsorted(rows, bounds[number + 1])
            if end > first:  # offsets are kept, so the rows still point into the same source
                other.segments.append(Segment(int(first), segment.path, segment.data, segment.objects))
        return other
