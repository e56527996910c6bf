"""What the gate reads of each calibration item, without its input and output.

A gate decision needs an item's id, content hash, label, whether its flaw is unplanned, its
split and its `meta`; the input and output are read by a judge or an excerpt in a report only.
Columns of those values cost ~150 bytes an item where the validated items cost ~600 plus their
text (100k items: 61 MiB), so a loaded set keeps these and reads its items again when asked.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any, NamedTuple

import numpy as np

from rubric_gate.calibration.model import CalibrationItem

SPLIT_CODES = {None: "-", "calibration": "c", "evaluation": "e"}
SPLITS = {code: name for name, code in SPLIT_CODES.items()}


class ItemKey(NamedTuple):
    """An item as a verdict lookup keys it."""

    id: str
    content_hash: str


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class ItemColumns:
    """One entry per item, in file order."""

    ids: tuple[str, ...]
    content_hashes: tuple[str, ...]
    flawed: np.ndarray  # read-only bool
    unplanned: np.ndarray  # read-only bool: flawed with flaw "unplanned"
    splits: str  # one SPLIT_CODES character per item
    meta: dict[str, dict[str, Any]]  # id -> meta, for the items that carry one

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def of(cls, items: Sequence[CalibrationItem]) -> ItemColumns:
        builder = ColumnsBuilder()
        for item in items:
            builder.add(item)
        return builder.done()

    def keys(self) -> tuple[ItemKey, ...]:
        # `tuple.__new__` directly: a NamedTuple's own `__new__` is Python code (10k items: 10 ms)
        return tuple(map(tuple.__new__, repeat(ItemKey), zip(self.ids, self.content_hashes, strict=True)))

    def in_split(self, name: str) -> np.ndarray:
        """Indexes of the items of split `name`; items without a split count as calibration items."""
        codes = np.frombuffer(self.splits.encode("ascii"), dtype=np.uint8)
        chosen = codes == ord(SPLIT_CODES[name])
        if name == "calibration":
            chosen |= codes == ord(SPLIT_CODES[None])
        return np.flatnonzero(chosen)

    def take(self, indexes: np.ndarray) -> ItemColumns:
        picked = indexes.tolist()
        ids = tuple(self.ids[i] for i in picked)
        return ItemColumns(ids, tuple(self.content_hashes[i] for i in picked), _frozen(self.flawed[indexes]),
                           _frozen(self.unplanned[indexes]), "".join(self.splits[i] for i in picked),
                           {i: self.meta[i] for i in ids if i in self.meta})

    # -- the calibration cache's form (`calibration/index.py`) -------------------------------
    def to_json(self) -> dict[str, Any]:
        positions = {item_id: n for n, item_id in enumerate(self.ids)}
        return {
            "ids": list(self.ids),
            "hashes": list(self.content_hashes),
            "labels": "".join("f" if flawed else "p" for flawed in self.flawed.tolist()),
            "unplanned": np.flatnonzero(self.unplanned).tolist(),
            "splits": self.splits,
            # `json`, not orjson: the same numbers (any size, NaN) the calibration file's reader gives
            "meta": [[positions[item_id], json.dumps(meta)] for item_id, meta in self.meta.items()],
        }

    @classmethod
    def from_json(cls, data: Any, count: int) -> ItemColumns | None:
        """The columns of a cache entry, or None where it is not one of `count` items."""
        try:
            ids, hashes, labels, splits = data["ids"], data["hashes"], data["labels"], data["splits"]
            if not (len(ids) == len(hashes) == len(labels) == len(splits) == count):
                return None
            if not all(type(value) is str for value in (*ids, *hashes)) or set(labels) - {"p", "f"} \
                    or set(splits) - set(SPLITS):
                return None
            flawed = np.frombuffer(labels.encode("ascii"), dtype=np.uint8) == ord("f")
            unplanned = np.zeros(count, dtype=bool)
            unplanned[np.array(data["unplanned"], dtype=np.int64)] = True
            meta = {ids[n]: json.loads(text) for n, text in data["meta"]}
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            return None
        if (unplanned & ~flawed).any() or not all(type(m) is dict for m in meta.values()):
            return None
        return cls(tuple(ids), tuple(hashes), _frozen(flawed), _frozen(unplanned), splits, meta)



class ColumnsBuilder:
    """Columns gathered one item at a time, so a validating load need not keep its items."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.hashes: list[str] = []
        self.flawed: list[bool] = []
        self.unplanned: list[bool] = []
        self.splits: list[str] = []
        self.meta: dict[str, dict[str, Any]] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, item: CalibrationItem) -> None:
        self.ids.append(item.id)
        self.hashes.append(item.content_hash)
        self.flawed.append(item.flawed)
        self.unplanned.append(item.unplanned)
        self.splits.append(SPLIT_CODES[item.split])
        if item.meta is not None:
            self.meta[item.id] = item.meta

    def done(self) -> ItemColumns:
        return ItemColumns(tuple(self.ids), tuple(self.hashes), _frozen(np.array(self.flawed, dtype=bool)),
                           _frozen(np.array(self.unplanned, dtype=bool)), "".join(self.splits), self.meta)
