"""Paraphrase stability: how often a reworded check answers as the original does."""

from __future__ import annotations

import numpy as np

from rubric_gate.reliability.agreement import cohen_kappa, mcc


def paraphrase_agreement(original: np.ndarray, paraphrases: np.ndarray) -> float | None:
    """Mean over paraphrases of the share of items on which the paraphrase's answer equals the
    original's; `paraphrases` is shaped (paraphrases, items). None without paraphrases or items."""
    original = np.asarray(original, dtype=bool)
    paraphrases = np.asarray(paraphrases, dtype=bool).reshape(-1, original.shape[0])
    if paraphrases.shape[0] == 0 or original.shape[0] == 0:
        return None
    return float((paraphrases == original[np.newaxis, :]).mean(axis=1).mean())


def paraphrase_kappa(original: np.ndarray, paraphrases: np.ndarray) -> float | None:
    """Mean over paraphrases of Cohen's kappa between the original's answers and the paraphrase's.

    Raw agreement hides noise when one answer is rare: a rewording answering at random with 5%
    "no" agrees about 90% of the time with an original that also says "no" 5% of the time, but
    its kappa is about 0. Paraphrases whose kappa is undefined (both constant on the same
    answer) are left out of the mean; None when every one is.
    """
    original = np.asarray(original, dtype=bool)
    paraphrases = np.asarray(paraphrases, dtype=bool).reshape(-1, original.shape[0])
    if paraphrases.shape[0] == 0 or original.shape[0] == 0:
        return None
    kappas = [k for k in (cohen_kappa(original, p) for p in paraphrases) if k is not None]
    return float(np.mean(kappas)) if kappas else None


def paraphrase_phi(original: np.ndarray, paraphrases: np.ndarray) -> float | None:
    """Mean over paraphrases of the phi coefficient between the original's answers and the
    paraphrase's: PReMISE's paraphrase stability (the mean Spearman rho between the scores under
    the original and under each paraphrase), which for yes/no answers is phi (ranks of a 0/1
    variable are a linear function of it, and Pearson on two 0/1 variables is phi). Undefined
    paraphrases (either side constant) are left out; None when every one is."""
    original = np.asarray(original, dtype=bool)
    paraphrases = np.asarray(paraphrases, dtype=bool).reshape(-1, original.shape[0])
    if paraphrases.shape[0] == 0 or original.shape[0] == 0:
        return None
    phis = [v for v in (mcc(p, original) for p in paraphrases) if v is not None]
    return float(np.mean(phis)) if phis else None
