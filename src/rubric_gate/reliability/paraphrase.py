"""Paraphrase stability: how often a reworded check answers as the original does."""

from __future__ import annotations

import numpy as np


def paraphrase_agreement(original: np.ndarray, paraphrases: np.ndarray) -> float | None:
    """Mean over paraphrases of the share of items on which the paraphrase's answer equals the
    original's; `paraphrases` is shaped (paraphrases, items). None without paraphrases or items."""
    original = np.asarray(original, dtype=bool)
    paraphrases = np.asarray(paraphrases, dtype=bool).reshape(-1, original.shape[0])
    if paraphrases.shape[0] == 0 or original.shape[0] == 0:
        return None
    return float((paraphrases == original[np.newaxis, :]).mean(axis=1).mean())
