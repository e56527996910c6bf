"""Vectorised verdict lookups: for one check text, the winning row for every item at once.

Each key kind (text + item id, text + item hash, judge/prompt + text + item hash) is one
int64 per row; a stable sort keeps, per key, the last row in file order (later wins), and
`searchsorted` answers a whole column of items in one call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from rubric_gate.verdicts.table_data import NONE, VerdictData

DENSE_MIN = 1 << 20
BLOCK = 1 << 20


@dataclass(frozen=True)
class KeyIndex:
    """Last row per key: a dense table when the key space is small, else sorted keys."""

    table: np.ndarray | None  # dense: table[key] = row or NONE
    keys: np.ndarray | None  # sorted: unique keys ...
    rows: np.ndarray | None  # ... and their last rows

    @classmethod
    def build(cls, keys: np.ndarray, rows: np.ndarray, space: int) -> KeyIndex:
        if space <= max(DENSE_MIN, 4 * len(keys)):
            table = np.full(space, NONE, dtype=rows.dtype)
            np.maximum.at(table, keys, rows)  # rows ascend, so the maximum is the last line
            return cls(table, None, None)
        return cls._sorted(keys, rows)

    @classmethod
    def _sorted(cls, keys: np.ndarray, rows: np.ndarray) -> KeyIndex:
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        last = np.ones(len(ordered), dtype=bool)
        last[:-1] = ordered[1:] != ordered[:-1]
        return cls(None, ordered[last], rows[order[last]])

    def find(self, wanted: np.ndarray) -> np.ndarray:
        if self.table is not None:
            return cast(np.ndarray, self.table[wanted])
        assert self.keys is not None and self.rows is not None
        if not len(self.keys):
            return np.full(len(wanted), NONE, dtype=np.int64)
        pos = np.searchsorted(self.keys, wanted)
        pos[pos >= len(self.keys)] = 0
        return np.where(self.keys[pos] == wanted, self.rows[pos], NONE)


def _dtype(bound: int) -> type[np.signedinteger[Any]]:
    """int32 while values stay below 2**31 (half the memory), else int64."""
    return np.int32 if bound < 2**31 - 1 else np.int64


class Lookups:
    """The three key indexes of one state of the rows, each built on first use."""

    def __init__(self, data: VerdictData) -> None:
        self.data = data
        self.n_items, self.n_hashes = max(1, len(data.items)), max(1, len(data.hashes))
        self.n_texts, self.n_sources = max(1, len(data.texts)), max(1, len(data.sources))
        samples = data.columns.arrays()["sample"]
        self.n_samples = int(samples.max()) + 1 if len(samples) else 1
        self._by_id: KeyIndex | None = None
        self._by_hash: KeyIndex | None = None
        self._keyed: KeyIndex | None = None

    def _hashed(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        a = self.data.columns.arrays()
        rows = np.flatnonzero(a["hash"] >= 0).astype(_dtype(len(a["hash"])))
        return rows, a["text"][rows].astype(np.int64), a["hash"][rows].astype(np.int64)

    @property
    def by_id(self) -> KeyIndex:
        """Replay reads one answer per pair: the first sample's (sample 0)."""
        if self._by_id is None:
            a = self.data.columns.arrays()
            space = self.n_texts * self.n_items
            first = a["sample"] == 0
            if first.all() and space <= max(DENSE_MIN, 4 * len(first)):
                self._by_id = self._dense_by_id(a, space)
            else:
                rows = np.flatnonzero(first).astype(_dtype(len(first)))
                keys = a["text"][rows].astype(np.int64) * self.n_items + a["item"][rows]
                self._by_id = KeyIndex.build(keys, rows, space)
        return self._by_id

    def _dense_by_id(self, a: dict[str, np.ndarray], space: int) -> KeyIndex:
        """The dense table filled a block of rows at a time, so no full-length temporaries."""
        kind = _dtype(max(space, len(a["text"])))
        table = np.full(space, NONE, dtype=kind)
        for start in range(0, len(a["text"]), BLOCK):
            keys = a["text"][start: start + BLOCK].astype(kind)
            keys *= self.n_items
            keys += a["item"][start: start + BLOCK]
            np.maximum.at(table, keys, np.arange(start, start + len(keys), dtype=kind))
        return KeyIndex(table, None, None)

    @property
    def by_hash(self) -> KeyIndex:
        if self._by_hash is None:
            rows, text, hashes = self._hashed()
            first = self.data.columns.arrays()["sample"][rows] == 0
            rows, text, hashes = rows[first], text[first], hashes[first]
            self._by_hash = KeyIndex.build(text * self.n_hashes + hashes, rows, self.n_texts * self.n_hashes)
        return self._by_hash

    @property
    def keyed(self) -> KeyIndex:
        if self._keyed is None:
            a = self.data.columns.arrays()
            space = self.n_sources * self.n_texts * self.n_hashes * self.n_samples
            if space <= max(DENSE_MIN, 4 * int(np.count_nonzero(a["hash"] >= 0))):
                self._keyed = self._dense_keyed(a, space)
            else:
                rows, text, hashes = self._hashed()
                source = a["source"][rows].astype(np.int64)
                keys = ((source * self.n_texts + text) * self.n_hashes + hashes) * self.n_samples + a["sample"][rows]
                self._keyed = KeyIndex.build(keys, rows, space)
        return self._keyed

    def _key_of(self, a: dict[str, np.ndarray], rows: np.ndarray) -> np.ndarray:
        """The keyed index's key of `rows`: (source, text, item hash, sample), one int64 each."""
        keys: np.ndarray = a["source"][rows].astype(np.int64)
        keys *= self.n_texts
        keys += a["text"][rows]
        keys *= self.n_hashes
        keys += a["hash"][rows]
        keys *= self.n_samples
        keys += a["sample"][rows]
        return keys

    def _dense_keyed(self, a: dict[str, np.ndarray], space: int) -> KeyIndex:
        """`keyed` as a dense table (the same table `KeyIndex.build` makes), filled a block of
        rows at a time: a batch collection rebuilds it after every append, and full-length key
        temporaries (~40 bytes a row) were most of its peak memory above the columns."""
        kind = _dtype(len(a["hash"]))  # a row number, as `KeyIndex.build` keeps it
        table = np.full(space, NONE, dtype=kind)
        for start in range(0, len(a["hash"]), BLOCK):
            rows = np.flatnonzero(a["hash"][start: start + BLOCK] >= 0)
            rows += start
            np.maximum.at(table, self._key_of(a, rows), rows.astype(kind, copy=False))
        return KeyIndex(table, None, None)


def lookups(data: VerdictData) -> Lookups:
    if data._lookups is None:
        data._lookups = Lookups(data)
    return cast(Lookups, data._lookups)


def find_rows(data: VerdictData, text_id: int | None, item_ids: np.ndarray, hash_ids: np.ndarray,
              source_id: int | None = None, keyed: bool = False, sample: int = 0,
              stale_sources: np.ndarray | None = None) -> np.ndarray:
    """The winning row per item (NONE where there is none).

    Replay (`keyed` False): the verdict for this item id unless it records another item hash
    (stale), else one for the item's content hash; a row whose source is marked in
    `stale_sources` (recorded under another task) counts as none. Keyed: judge/prompt/task,
    text and hash must match.
    """
    n = len(item_ids)
    if not keyed:
        texts = np.array([NONE if text_id is None else text_id], dtype=np.int64)
        return cast(np.ndarray, replay_rows(data, texts, item_ids, hash_ids, sample, stale_sources)[0])
    item_ids, hash_ids = item_ids.astype(np.int64), hash_ids.astype(np.int64)
    found = np.full(n, NONE, dtype=np.int64)
    if text_id is None or not len(data) or source_id is None:
        return found
    index = lookups(data)
    if sample >= index.n_samples:
        return found
    hashed = hash_ids >= 0
    wanted = ((source_id * index.n_texts + text_id) * index.n_hashes + hash_ids[hashed]) * index.n_samples + sample
    found[hashed] = index.keyed.find(wanted)
    return found


def replay_rows(data: VerdictData, text_ids: np.ndarray, item_ids: np.ndarray, hash_ids: np.ndarray,
                sample: int = 0, stale_sources: np.ndarray | None = None) -> np.ndarray:
    """`find_rows`' replay answer for several texts at once: the winning row per (text, item),
    one row of the result per text id (NONE: a text no verdict records)."""
    found = np.full((len(text_ids), len(item_ids)), NONE, dtype=np.int64)
    if not len(data) or sample or not len(item_ids):
        return found
    index = lookups(data)
    item_ids, hash_ids = item_ids.astype(np.int64), hash_ids.astype(np.int64)
    texts, known = np.flatnonzero(text_ids >= 0), item_ids >= 0
    if not len(texts):
        return found
    text_ids = text_ids.astype(np.int64)
    if known.all():  # every item has a verdict somewhere (the usual store)
        rows = index.by_id.find((text_ids[texts, None] * index.n_items + item_ids).ravel()).reshape(len(texts), -1)
        rows = rows.astype(np.int64, copy=False)
    else:
        rows = found[texts]
        rows[:, known] = index.by_id.find((text_ids[texts, None] * index.n_items + item_ids[known]).ravel()
                                          ).reshape(len(texts), -1)
    if not len(data.hashes) and stale_sources is None:
        found[texts] = rows  # no line records an item hash: none is stale, none found by content
        return found
    hashes = np.broadcast_to(hash_ids, rows.shape)
    hit = rows >= 0
    if hit.any():
        recorded = data.columns.arrays()["hash"][rows[hit]]
        stale = (recorded >= 0) & (recorded != hashes[hit])  # recorded for older content
        if stale_sources is not None:
            stale |= stale_sources[data.columns.arrays()["source"][rows[hit]]]
        where = np.flatnonzero(hit)[stale]
        rows.flat[where] = NONE
    retry = (rows < 0) & (hashes >= 0)
    if retry.any() and len(data.hashes):
        text_of = np.broadcast_to(text_ids[texts, None], rows.shape)
        rows[retry] = index.by_hash.find(text_of[retry] * index.n_hashes + hashes[retry])
        if stale_sources is not None:
            again = rows >= 0
            rows.flat[np.flatnonzero(again)[stale_sources[data.columns.arrays()["source"][rows[again]]]]] = NONE
    found[texts] = rows
    return found
