"""The pairs a batch run still has to judge, streamed instead of listed.

One vectorised store lookup per check text marks the missing (check text, item) pairs in a
boolean matrix (1 byte per pair); `Pair` objects and jobs are built one at a time from it as
requests are written. The pairs, their order and the jobs are those of
`judges.pairs.missing_pairs` fed to the old `iter_jobs` (the live runner's lists), without a
list of every pair: a run's memory stays flat in the number of pairs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from rubric_gate.calibration import CalibrationItem, CalibrationSet
from rubric_gate.judges.pairs import Pair
from rubric_gate.judges.prompt import Mode, prompt_version
from rubric_gate.judges.runner import Job, build_jobs
from rubric_gate.rubric import Rubric, normalize_text
from rubric_gate.verdicts import VerdictStore, task_hash

PairKey = tuple[str, str, str]


@dataclass(frozen=True)
class _Text:
    check_id: str
    check_text: str
    key_text: str  # normalised: the key's first part


class PairGrid:
    """Every distinct pair of the rubrics: check texts x items, in `all_pairs`' order (its list
    reversed: the last distinct text first, its items last first), under the last rubric's task."""

    def __init__(self, rubrics: Sequence[Rubric], calibration: CalibrationSet) -> None:
        self.task = rubrics[-1].task if rubrics else ""
        self.task_hash = task_hash(self.task)
        texts: dict[str, _Text] = {}
        for rubric in reversed(rubrics):
            for check in rubric.checks:
                key_text = normalize_text(check.text)
                texts.setdefault(key_text, _Text(check.id, check.text, key_text))
        items: dict[str, CalibrationItem] = {}  # one item per content (the first)
        for item in calibration.items:
            items.setdefault(item.content_hash, item)
        self.texts = list(reversed(texts.values()))
        self.items = list(reversed(items.values()))
        self.item_hashes = list(reversed(items.keys()))

    def __len__(self) -> int:
        return len(self.texts) * len(self.items)

    def pair(self, t: int, i: int) -> Pair:
        text = self.texts[t]
        return Pair(text.check_id, text.check_text, self.items[i], self.task,
                    item_hash=self.item_hashes[i], task_hash=self.task_hash)

    def key(self, t: int, i: int) -> PairKey:
        return self.texts[t].key_text, self.item_hashes[i], self.task_hash


class PendingPairs:
    """The missing pairs of a grid (no verdict from `judge` under the mode's prompt version and
    the task), less those `skip(key)` excludes (in an open batch, or out of retries)."""

    def __init__(self, grid: PairGrid, store: VerdictStore, judge: str, mode: Mode,
                 skip: Callable[[PairKey], bool] | None = None) -> None:
        self.grid, self.mode = grid, mode
        prompt = prompt_version(mode)
        ids = [item.id for item in grid.items]
        self.missing = np.zeros((len(grid.texts), len(grid.items)), dtype=bool)
        for t, text in enumerate(grid.texts):
            rows = store.rows_for_keys(text.check_text, ids, grid.item_hashes, judge=judge, prompt=prompt,
                                       task=grid.task_hash)
            self.missing[t] = rows < 0
        self.count_missing = int(self.missing.sum())
        if skip is not None:
            for t, i in zip(*np.nonzero(self.missing), strict=True):
                if skip(grid.key(int(t), int(i))):
                    self.missing[t, i] = False

    def __len__(self) -> int:
        return int(self.missing.sum())

    def __bool__(self) -> bool:
        return bool(self.missing.any())

    def requests(self) -> int:
        """Requests the pairs need: one per pair, or (checklist) one per item."""
        if self.mode == "per-check":
            return len(self)
        return int(self.missing.any(axis=0).sum())

    def pairs(self) -> Iterator[Pair]:
        """The pairs in `missing_pairs`' order: text by text, items within."""
        for t, i in zip(*np.nonzero(self.missing), strict=True):
            yield self.grid.pair(int(t), int(i))

    def jobs(self) -> Iterator[Job]:
        """One job per pair, or (checklist) per item, in the order the old `iter_jobs` built them:
        items by their first missing pair; an item's pairs in text order."""
        if self.mode == "per-check":
            for pair in self.pairs():
                yield Job((pair,))
            return
        columns = np.asarray(self.missing.any(axis=0), dtype=bool)
        first = np.where(columns, self.missing.argmax(axis=0), len(self.grid.texts))
        for i in np.lexsort((np.arange(len(self.grid.items)), first))[: int(columns.sum())]:
            group = [self.grid.pair(int(t), int(i)) for t in np.flatnonzero(self.missing[:, i])]
            yield from build_jobs(group, self.mode)
