"""Majority votes over repeated answers and the instability they hide.

Votes are booleans "answered no" (failed), shaped (raters, items): raters are a judge's
samples, or the judges of a panel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Vote:
    failed: np.ndarray  # per item: the majority answered no (a tie counts as no)
    tie: np.ndarray  # per item: exactly half the raters answered no
    split: np.ndarray  # per item: the raters did not all give the same answer


def majority(votes: np.ndarray) -> Vote:
    """Majority per item. A tie counts as "no": the gate then treats the pair as failed, the
    cautious reading for a check (it may blame the check, never hide a catch it lacks)."""
    votes = np.asarray(votes, dtype=bool)
    if votes.ndim != 2 or votes.shape[0] == 0:
        raise ValueError("votes must be shaped (raters, items) with at least one rater")
    no = votes.sum(axis=0)
    raters = votes.shape[0]
    tie = 2 * no == raters
    return Vote(failed=2 * no >= raters, tie=tie, split=(no > 0) & (no < raters))


def flip_rate(samples: np.ndarray) -> float | None:
    """Share of items whose samples do not all agree (PReMISE's flip rate); None without items."""
    samples = np.asarray(samples, dtype=bool)
    if samples.shape[-1] == 0:
        return None
    return float(majority(samples).split.mean())
