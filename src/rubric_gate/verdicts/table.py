"""The verdict table: which checks answered no on which items."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from rubric_gate.verdicts.model import ItemKey
from rubric_gate.verdicts.store import VerdictStore
from rubric_gate.verdicts.table_data import NO, NOT_APPLICABLE


@dataclass(frozen=True)
class VerdictColumn:
    """One check text's answers over the items: `failed[i]` is True where it answered no."""

    check_text: str
    failed: np.ndarray
    missing: np.ndarray  # True where no verdict exists
    not_applicable: np.ndarray | None = None  # True where the answer was "n/a" (None: none was)

    @property
    def not_applicable_count(self) -> int:
        return 0 if self.not_applicable is None else int(self.not_applicable.sum())

    @cached_property
    def complete(self) -> bool:
        """No item lacks a verdict (asked once per check each time a matrix is built)."""
        return not bool(self.missing.any())


def verdict_column(
    check_text: str,
    items: Sequence[ItemKey],
    store: VerdictStore,
    *,
    judge: str | None = None,
    prompt: str | None = None,
    sample: int = 0,
    task: str | None = None,
) -> VerdictColumn:
    """One vectorised lookup for the whole column (items' keys are computed once per store)."""
    codes, missing = store.answer_codes(check_text, items, judge=judge, prompt=prompt, sample=sample, task=task)
    not_applicable = (codes == NOT_APPLICABLE) & ~missing
    return VerdictColumn(check_text, codes == NO, missing, not_applicable if not_applicable.any() else None)
