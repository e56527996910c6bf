"""Vectorised verdict lookups: for one check text, the winning row for every item at once.

Each key kind (text + item id, text + item hash, judge/prompt + text + item hash) is one
int64 per row; a stable sort keeps, per key, the last row in file order (later wins), and
`searchsorted` answers a whole column of items in one call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rubric_gate.verdicts.table_data import NONE, VerdictData


def _last_per_key(keys: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    last = np.ones(len(ordered), dtype=bool)
    last[:-1] = ordered[1:] != ordered[:-1]
    return ordered[last], rows[order[last]]


def _find(keys: np.ndarray, rows: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    if not len(keys):
        return np.full(len(wanted), NONE, dtype=np.int64)
    pos = np.searchsorted(keys, wanted)
    pos[pos >= len(keys)] = 0
    return np.where(keys[pos] == wanted, rows[pos], NONE)


@dataclass
class Lookups:
    n_items: int
    n_hashes: int
    n_texts: int
    by_id: tuple[np.ndarray, np.ndarray]
    by_hash: tuple[np.ndarray, np.ndarray]
    keyed: tuple[np.ndarray, np.ndarray]

    @classmethod
    def build(cls, data: VerdictData) -> Lookups:
        a = data.columns.arrays()
        n_items, n_hashes, n_texts = max(1, len(data.items)), max(1, len(data.hashes)), max(1, len(data.texts))
        rows = np.arange(len(a["text"]), dtype=np.int64)
        text = a["text"].astype(np.int64)
        by_id = _last_per_key(text * n_items + a["item"], rows)
        hashed = a["hash"] >= 0
        hash_ids = a["hash"][hashed].astype(np.int64)
        by_hash = _last_per_key(text[hashed] * n_hashes + hash_ids, rows[hashed])
        keyed_keys = (a["source"][hashed].astype(np.int64) * n_texts + text[hashed]) * n_hashes + hash_ids
        keyed = _last_per_key(keyed_keys, rows[hashed])
        return cls(n_items, n_hashes, n_texts, by_id, by_hash, keyed)


def lookups(data: VerdictData) -> Lookups:
    if data._lookups is None:
        data._lookups = Lookups.build(data)
    return data._lookups


def find_rows(data: VerdictData, text_id: int | None, item_ids: np.ndarray, hash_ids: np.ndarray,
              source_id: int | None = None, keyed: bool = False) -> np.ndarray:
    """The winning row per item (NONE where there is none).

    Replay (`keyed` False): the verdict for this item id unless it records another item hash
    (stale), else one for the item's content hash. Keyed: judge/prompt, text and hash must match.
    """
    n = len(item_ids)
    if text_id is None or not len(data) or (keyed and source_id is None):
        return np.full(n, NONE, dtype=np.int64)
    index = lookups(data)
    hashed = hash_ids >= 0
    if keyed:
        found = np.full(n, NONE, dtype=np.int64)
        wanted = (source_id * index.n_texts + text_id) * index.n_hashes + hash_ids[hashed]
        found[hashed] = _find(*index.keyed, wanted)
        return found
    found = np.full(n, NONE, dtype=np.int64)
    known = item_ids >= 0
    found[known] = _find(*index.by_id, text_id * index.n_items + item_ids[known])
    hit = found >= 0
    if hit.any():
        recorded = data.columns.arrays()["hash"][found[hit]]
        stale = (recorded >= 0) & (recorded != hash_ids[hit])  # recorded for older content
        found[np.flatnonzero(hit)[stale]] = NONE
    retry = (found < 0) & hashed
    if retry.any():
        found[retry] = _find(*index.by_hash, text_id * index.n_hashes + hash_ids[retry])
    return found
