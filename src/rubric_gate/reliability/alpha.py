"""Inter-judge agreement: Krippendorff's alpha (nominal) and pairwise Cohen's kappa."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations

import numpy as np

from rubric_gate.reliability.agreement import cohen_kappa


def nominal_alpha(answers: np.ndarray, not_applicable: np.ndarray | None = None) -> float | None:
    """Krippendorff's alpha of yes/no answers shaped (judges, items); None when undefined:
    fewer than two judges or items, or no variation at all (every answer the same).

    `not_applicable` (same shape) marks "n/a" answers: they are missing values to alpha, so a
    judge answering n/a is neither agreement nor disagreement with one answering yes or no.
    """
    answers = np.asarray(answers, dtype=bool)
    if answers.ndim != 2 or answers.shape[0] < 2 or answers.shape[1] < 1:
        return None
    absent = np.zeros_like(answers) if not_applicable is None else np.asarray(not_applicable, dtype=bool)
    present = answers[~absent]
    if not len(present) or present.all() or not present.any():
        return None
    import krippendorff  # only panels need it: rates and intervals import this package too

    data = answers.astype(float)
    data[absent] = np.nan
    if (np.sum(~absent, axis=0) >= 2).sum() == 0:
        return None  # no item has two answers left to compare
    value = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    return None if np.isnan(value) else float(value)


def pairwise_kappa(answers: Mapping[str, np.ndarray]) -> list[tuple[str, str, float | None]]:
    """Cohen's kappa for each pair of judges over the same answers (judge -> bool array)."""
    return [(a, b, cohen_kappa(answers[a], answers[b])) for a, b in combinations(answers, 2)]
