"""A stratified sample of stored pairs (pure): each stratum gets its share of the sample, at least
one pair while the sample is large enough to give every stratum one, and the population shares
to weight what the sample finds back to the whole store."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Sample:
    chosen: np.ndarray  # indices into the population, ascending
    strata: np.ndarray  # the stratum of each chosen pair
    weights: dict[int, float]  # stratum -> its share of the population / its pairs in the sample


def allocate(sizes: np.ndarray, n: int) -> np.ndarray:
    """Pairs per stratum for a sample of `n`: proportional by largest remainder, with one for every
    stratum first when `n` covers them all (so a rare "no" of a check is asked about), never more
    than a stratum holds."""
    sizes = np.asarray(sizes, dtype=np.int64)
    n = int(min(n, sizes.sum()))
    counts = np.zeros(len(sizes), dtype=np.int64)
    if n <= 0:
        return counts
    if n >= int((sizes > 0).sum()):
        counts[sizes > 0] = 1
    left = n - int(counts.sum())
    while left > 0:
        room = sizes - counts
        share = room / room.sum() * left
        whole = np.minimum(np.floor(share).astype(np.int64), room)
        if whole.sum() == 0:  # give the rest one at a time, largest remainder first
            order = np.lexsort((np.arange(len(sizes)), -(share - np.floor(share))))
            for index in order[:left]:
                if room[index] > 0:
                    counts[index] += 1
            break
        counts += whole
        left = n - int(counts.sum())
    return counts


def stratified_sample(strata: np.ndarray, n: int, seed: int) -> Sample:
    """`strata`: one stratum number per population pair. A seeded draw without replacement within
    each stratum: the same seed draws the same pairs."""
    strata = np.asarray(strata, dtype=np.int64)
    labels, inverse, sizes = np.unique(strata, return_inverse=True, return_counts=True)
    counts = allocate(sizes, n)
    rng = np.random.default_rng(seed)
    chosen = []
    weights: dict[int, float] = {}
    total = len(strata)
    for index, (label, count) in enumerate(zip(labels.tolist(), counts.tolist(), strict=True)):
        if not count:
            continue
        members = np.flatnonzero(inverse == index)
        chosen.append(rng.choice(members, size=count, replace=False))
        weights[int(label)] = (len(members) / total) / count
    picked = np.sort(np.concatenate(chosen)) if chosen else np.zeros(0, dtype=np.int64)
    return Sample(picked, strata[picked], weights)
