"""Discovery's selection logic on cases worked out by hand."""

from __future__ import annotations

import numpy as np

from rubric_gate.discover.select import (
    cluster_labels,
    clusters,
    mmr_select,
    preference_rank,
    preference_share,
)


def test_mmr_trades_support_for_diversity() -> None:
    # a and b point the same way; c is orthogonal. Support: a 10, b 9, c 5.
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    support = [10, 9, 5]
    assert mmr_select(vectors, support, 2, diversity=0.0) == [0, 1]  # support alone
    # With d = 0.5: b scores 0.5*0.9 - 0.5*1 = -0.05, c scores 0.5*0.5 - 0 = 0.25: c is taken.
    assert mmr_select(vectors, support, 2, diversity=0.5) == [0, 2]
    assert mmr_select(vectors, support, 5, diversity=0.5) == [0, 2, 1]


def test_preference_share_and_rank() -> None:
    chosen = np.array([True, True, False, True])
    rejected = np.array([False, True, True, False])
    share = preference_share(chosen, rejected)
    assert (share.wins, share.losses, share.ties, share.share) == (2, 1, 1, 0.5)
    low = preference_share(np.array([True, False, False, False]), np.array([False, False, True, True]))
    even = preference_share(np.array([True, True, False, False]), np.array([False, False, True, True]))
    # Same share: fewer losses first; the lowest share last.
    assert preference_rank([low, share, even], [9, 1, 1], 3) == [1, 2, 0]


def test_clustering_groups_close_texts_and_survives_a_zero_vector() -> None:
    vectors = np.array([[1.0, 0.0], [0.99, 0.14], [0.0, 1.0], [0.1, 0.99], [0.0, 0.0]])
    vectors[:4] /= np.linalg.norm(vectors[:4], axis=1, keepdims=True)
    labels = cluster_labels(vectors, 3)
    assert labels[0] == labels[1] and labels[2] == labels[3] and labels[4] not in (labels[0], labels[2])
    assert clusters(np.array([0, 0, 0, 1]), max_size=2) == [[0, 1], [2], [3]]
