"""Pure selection logic of discovery: clustering, the support filter, maximal marginal relevance,
and preference-rank ordering (PReMISE §3.1 and §3.3)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Candidate:
    """A criterion in the pool: its text, and the extracted candidates and pairs behind it."""

    name: str
    text: str
    support: int = 1  # extracted candidates merged into it
    pairs: set[str] = field(default_factory=set)  # pairs those candidates came from


def cluster_labels(vectors: np.ndarray, n_clusters: int) -> np.ndarray:
    """Agglomerative clustering on cosine distance, average linkage (as in PReMISE's runs)."""
    if len(vectors) <= 1 or n_clusters >= len(vectors):
        return np.arange(len(vectors))
    from sklearn.cluster import AgglomerativeClustering

    zero = ~np.any(vectors, axis=1)
    if zero.any():  # no direction (a text TF-IDF could not see): its own axis, far from all others
        extra = np.zeros((len(vectors), int(zero.sum())))
        extra[np.flatnonzero(zero), np.arange(int(zero.sum()))] = 1.0
        vectors = np.hstack([vectors, extra])
    model = AgglomerativeClustering(n_clusters=n_clusters, metric="cosine", linkage="average")
    return np.asarray(model.fit_predict(vectors))  # scikit-learn has no type hints


def clusters(labels: np.ndarray, max_size: int) -> list[list[int]]:
    """Member indices per cluster, in order of first member, big ones cut into chunks of `max_size`."""
    grouped: dict[int, list[int]] = {}
    for index, label in enumerate(labels):
        grouped.setdefault(int(label), []).append(index)
    out: list[list[int]] = []
    for members in grouped.values():
        out.extend(members[i:i + max_size] for i in range(0, len(members), max_size))
    return out


def mmr_select(vectors: np.ndarray, relevance: Sequence[float], k: int, diversity: float) -> list[int]:
    """Maximal marginal relevance: repeatedly take the index maximising
    (1 - diversity) * relevance - diversity * (highest cosine similarity to those taken).
    `vectors` are L2-normalised; `relevance` is scaled to [0, 1] by its maximum."""
    n = len(relevance)
    if n == 0 or k <= 0:
        return []
    rel = np.asarray(relevance, dtype=float)
    rel = rel / rel.max() if rel.max() > 0 else rel
    sims = vectors @ vectors.T if len(vectors) else np.zeros((n, n))
    chosen: list[int] = []
    while len(chosen) < min(k, n):
        best, best_score = -1, -np.inf
        for i in range(n):
            if i in chosen:
                continue
            redundancy = max((sims[i, j] for j in chosen), default=0.0)
            score = (1 - diversity) * rel[i] - diversity * redundancy
            if score > best_score + 1e-12:
                best, best_score = i, score
        chosen.append(best)
    return chosen


@dataclass(frozen=True)
class PreferenceShare:
    wins: int  # pairs where the chosen response meets the check and the rejected does not
    losses: int  # the other way round
    ties: int

    @property
    def pairs(self) -> int:
        return self.wins + self.losses + self.ties

    @property
    def share(self) -> float:
        """Share of pairs where the chosen response wins on this check."""
        return self.wins / self.pairs if self.pairs else 0.0


def preference_share(chosen_yes: np.ndarray, rejected_yes: np.ndarray) -> PreferenceShare:
    chosen_yes, rejected_yes = np.asarray(chosen_yes, bool), np.asarray(rejected_yes, bool)
    wins = int((chosen_yes & ~rejected_yes).sum())
    losses = int((~chosen_yes & rejected_yes).sum())
    return PreferenceShare(wins, losses, len(chosen_yes) - wins - losses)


def preference_rank(shares: Sequence[PreferenceShare], support: Sequence[int], k: int) -> list[int]:
    """Indices of the top `k` by chosen-win share, then by fewer losses, then by support."""
    order = sorted(range(len(shares)), key=lambda i: (-shares[i].share, shares[i].losses, -support[i], i))
    return order[:k]
