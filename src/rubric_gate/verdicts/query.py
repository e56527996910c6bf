"""Looking verdicts up: which row answers (check text, item), for many items at once.

Two ways to find a verdict for (check text, item):
- replay (no live judge): any verdict for the same normalised check text and the same item,
  by id or content hash; a verdict whose `item_hash` no longer matches the item is stale.
- keyed (live judge): judge, prompt version, task hash, normalised check text and item
  content hash must all match, so exactly the pairs whose inputs changed are judged again.
Given a task hash, replay also takes a verdict recorded under another task as stale: a
verdict is never reused under a task it was not judged under.
Later lines win over earlier ones, so re-recording a pair supersedes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from rubric_gate.rubric.model import normalize_text
from rubric_gate.verdicts.lines import verdict_at
from rubric_gate.verdicts.lookup import find_rows
from rubric_gate.verdicts.model import ItemKey, Verdict
from rubric_gate.verdicts.table_data import ANSWER_NAMES, NO, NONE, YES, VerdictData

# (check text, item, judge, prompt, task, sample): one `find`, as `find_answers` takes many.
Lookup = tuple[str, ItemKey, str | None, str | None, str | None, int]


class VerdictQueries:
    """The lookups of a `VerdictStore` (its columns are `_data`)."""

    _data: VerdictData
    display: str
    # (items, their content hashes, (interned item ids, interned hash ids), pool sizes) of the
    # last items looked up: each item's hash is computed once per store.
    _item_keys: tuple[Any, ...] | None = None

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

    def _text_id(self, check_text: str) -> int | None:
        data = self._data
        text_id = data.raw_texts.get(check_text)
        return data.texts.ids.get(normalize_text(check_text)) if text_id is None else text_id

    def _other_task(self, task: str | None) -> np.ndarray | None:
        """Per source id (then one for no source): recorded under a task other than `task`."""
        if task is None:
            return None
        other_task = np.array([t is not None and t != task for _, _, t in self._data.sources.values] + [False])
        return other_task if other_task.any() else None

    def _rows(self, check_text: str, item_ids: np.ndarray, hash_ids: np.ndarray, judge: str | None,
              prompt: str | None, sample: int = 0, task: str | None = None) -> np.ndarray:
        data = self._data
        text_id = self._text_id(check_text)
        if judge is not None:
            source_id = data.sources.ids.get((judge, prompt, task))
            return find_rows(data, text_id, item_ids, hash_ids, source_id, keyed=True, sample=sample)
        # replay: a verdict recorded under another task is stale
        return find_rows(data, text_id, item_ids, hash_ids, sample=sample, stale_sources=self._other_task(task))

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
        if not len(rows) or missing.all():
            return np.full(len(rows), YES, dtype=np.int8), missing
        return np.where(missing, np.int8(YES), self._data.columns.arrays()["answer"][rows]), missing

    def find(self, check_text: str, item: ItemKey, *, judge: str | None = None, prompt: str | None = None,
             sample: int = 0, task: str | None = None) -> Verdict | None:
        """The verdict a lookup of (check text, item) reads (None: none)."""
        row = int(self.rows(check_text, [item], judge=judge, prompt=prompt, sample=sample, task=task)[0])
        return None if row < 0 else self._verdict(row)

    def _verdict(self, row: int) -> Verdict:
        """The verdict of one row, read back from its line."""
        return verdict_at(self._data, row, self.display)

    def find_answers(self, lookups: Sequence[Lookup]) -> list[str | None]:
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

    def texts(self) -> list[str]:
        """The (normalised) check texts this store records answers for."""
        return list(self._data.texts.values)
