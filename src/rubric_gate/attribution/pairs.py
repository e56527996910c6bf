"""Pairs of checks that jointly hold catches: each deletable alone, not both."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from rubric_gate.attribution.shapley import failure_counts


@dataclass(frozen=True)
class JointCatch:
    checks: tuple[int, int]  # column indices
    catches: int  # flawed items lost if both checks go


def joint_catches(failed: np.ndarray, flawed: np.ndarray, max_failures: int = 0, *,
                  counts: np.ndarray | None = None) -> list[JointCatch]:
    """Pairs whose removal together loses a catch that neither loses alone.

    An item failed by exactly k + 2 checks stays caught when any one of them goes and is
    lost when two go; under all-pass (k = 0) these are items failed by exactly two checks.
    Only k = 0 has a single pair per item; for k > 0 every pair inside F counts.
    `counts`: `failure_counts(failed)` when the caller has it already.
    """
    failed = np.asarray(failed, dtype=bool)
    flawed = np.asarray(flawed, dtype=bool)
    counts = failure_counts(failed) if counts is None else counts
    rows = np.flatnonzero(flawed & (counts == max_failures + 2))
    tally: Counter[tuple[int, int]] = Counter()
    for row in rows:
        cols = np.flatnonzero(failed[row])
        for a_index in range(len(cols)):
            for b_index in range(a_index + 1, len(cols)):
                tally[(int(cols[a_index]), int(cols[b_index]))] += 1
    return [JointCatch(pair, n) for pair, n in sorted(tally.items(), key=lambda kv: (-kv[1], kv[0]))]
