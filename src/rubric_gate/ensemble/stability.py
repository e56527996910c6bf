"""Which items a gate decision rests on, so an unstable verdict there marks the decision.

Each kind of change is decided on the changed check's own answers (see gate.rules): an
addition on the correct items it fails (blame), a deletion on the flawed items it catches
(unique catches), a rewording on every item where the old or new text answers. A change of
origin, frozen or source, or of aggregation, rests on no single check's answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import numpy as np

from rubric_gate.gate.diff import Change

ItemMask = Callable[[str], np.ndarray]  # check text -> per-item flag (unstable, tied)


def decisive_mask(change: Change, flag: ItemMask, flawed: np.ndarray) -> np.ndarray:
    flawed = np.asarray(flawed, dtype=bool)
    none = np.zeros(len(flawed), dtype=bool)
    if change.kind == "added" and change.head is not None:
        return cast(np.ndarray, flag(change.head.text) & ~flawed)
    if change.kind == "deleted" and change.base is not None:
        return cast(np.ndarray, flag(change.base.text) & flawed)
    if change.kind == "modified" and change.reworded and change.base is not None and change.head is not None:
        return flag(change.base.text) | flag(change.head.text)
    return none
