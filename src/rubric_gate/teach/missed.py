"""Which flawed calibration items no check catches, grouped by their labelled flaw (pure logic)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from rubric_gate.attribution import rubric_fails
from rubric_gate.calibration import CalibrationItem
from rubric_gate.rubric.ids import fresh_check_id

UNCATEGORISED = "uncategorised"


@dataclass(frozen=True)
class MissGroup:
    """Flawed items sharing a `flaw` category that pass the rubric as it stands."""

    flaw: str | None
    items: tuple[CalibrationItem, ...]

    @property
    def name(self) -> str:
        return self.flaw or UNCATEGORISED

    @property
    def item_ids(self) -> list[str]:
        return [i.id for i in self.items]


def missed_mask(failed: np.ndarray, flawed: np.ndarray, max_failures: int) -> np.ndarray:
    """Flawed items the rubric passes: no check (or at most `max_failures`) says no."""
    return cast(np.ndarray, np.asarray(flawed, dtype=bool) & ~rubric_fails(failed, max_failures))


def missed_groups(items: Sequence[CalibrationItem], failed: np.ndarray, flawed: np.ndarray,
                  max_failures: int) -> list[MissGroup]:
    """Groups of missed items, largest first (ties in order of first appearance)."""
    grouped: dict[str | None, list[CalibrationItem]] = {}
    for index in np.flatnonzero(missed_mask(failed, flawed, max_failures)):
        item = items[int(index)]
        grouped.setdefault(item.flaw, []).append(item)
    order = sorted(grouped.items(), key=lambda kv: -len(kv[1]))  # stable: first appearance breaks ties
    return [MissGroup(flaw, tuple(members)) for flaw, members in order]


def proposal_id(group: MissGroup, taken: set[str]) -> str:
    """A fresh check id naming the flaw it was taught by: `taught-wrong-resource`, `-2`, ..."""
    return fresh_check_id(group.name, taken, prefix="taught-", fallback="flaw")
