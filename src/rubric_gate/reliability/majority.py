"""Majority votes over repeated answers and the instability they hide.

Votes are booleans "answered no" (failed), shaped (raters, items): raters are a judge's
samples, or the judges of a panel. An "n/a" answer is an abstention, read the same way
everywhere (the gate's majority, the flip rate, ties, Krippendorff's alpha): it casts no vote.
The majority is taken among the raters who voted; a tie among them counts as "no"; an item
no rater voted on (every answer n/a) is itself n/a, which never fails it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Vote:
    failed: np.ndarray  # per item: most of the votes cast are no (a tie counts as no)
    tie: np.ndarray  # per item: as many votes no as yes (at least one each)
    split: np.ndarray  # per item: the votes cast are not all the same
    abstained: np.ndarray  # per item: no rater voted (every answer n/a): the item is n/a, never failed


def majority(votes: np.ndarray, abstained: np.ndarray | None = None) -> Vote:
    """Majority per item among the raters who voted (`abstained`: same shape, True where the
    answer was n/a). A tie counts as "no": the gate then treats the pair as failed, the cautious
    reading for a check (it may blame the check, never hide a catch it lacks)."""
    votes = np.asarray(votes, dtype=bool)
    if votes.ndim != 2 or votes.shape[0] == 0:
        raise ValueError("votes must be shaped (raters, items) with at least one rater")
    cast = np.ones_like(votes) if abstained is None else ~np.asarray(abstained, dtype=bool)
    if cast.shape != votes.shape:
        raise ValueError("abstentions must be shaped like the votes")
    no = (votes & cast).sum(axis=0)
    yes = (~votes & cast).sum(axis=0)
    tie = (no == yes) & (no > 0)
    return Vote(failed=(no > 0) & (no >= yes), tie=tie, split=(no > 0) & (yes > 0), abstained=(no + yes) == 0)


def flip_rate(samples: np.ndarray, abstained: np.ndarray | None = None) -> float | None:
    """Share of items whose samples' votes do not all agree (PReMISE's flip rate; an n/a sample
    casts no vote); None without items."""
    samples = np.asarray(samples, dtype=bool)
    if samples.shape[-1] == 0:
        return None
    return float(majority(samples, abstained).split.mean())
