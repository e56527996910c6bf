"""The preference-fit figures as pure functions of arrays (PReMISE §3.2, §4.3-4.4, App. B.1.3, B.3).

- effective dimensionality: exp(Shannon entropy of the normalised eigenvalues of cov(S)), S the
  responses x checks score matrix;
- Bradley-Terry fit: an L2 logistic regression of the preference on per-check score differences,
  no intercept (BT has none), C chosen by nested cross-validation; `cv_accuracy` is the mean
  held-out accuracy over stratified folds, `weight_entropy` the Shannon entropy of |beta| / sum
  |beta| divided by log K (1 = every check carries equal weight, 0 = one check does).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0)
MAX_FOLDS = 5


def effective_dimensionality(scores: np.ndarray) -> float:
    """exp(H(lambda / sum lambda)) over the eigenvalues of the checks' covariance; 0 when nothing varies."""
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 2 or scores.shape[0] < 2 or scores.shape[1] == 0:
        return 0.0
    eigen = np.clip(np.linalg.eigvalsh(np.cov(scores, rowvar=False).reshape(scores.shape[1], scores.shape[1])),
                    0.0, None)
    total = eigen.sum()
    if total <= 0:
        return 0.0
    p = eigen[eigen > 0] / total
    return float(math.exp(-(p * np.log(p)).sum()))


def mean_abs_correlation(scores: np.ndarray) -> float | None:
    """Mean |Pearson r| over pairs of checks that vary; None with fewer than two such checks."""
    scores = np.asarray(scores, dtype=float)
    varying = scores[:, scores.std(axis=0) > 0] if scores.size else scores
    if varying.ndim != 2 or varying.shape[1] < 2:
        return None
    r = np.corrcoef(varying, rowvar=False)
    upper = r[np.triu_indices_from(r, k=1)]
    return float(np.abs(upper).mean())


def weight_entropy(weights: np.ndarray) -> float | None:
    """H(|beta| / sum |beta|) / log K; None for K < 2 or all-zero weights."""
    w = np.abs(np.asarray(weights, dtype=float))
    if len(w) < 2 or w.sum() <= 0:
        return None
    p = w[w > 0] / w.sum()
    return max(0.0, float(-(p * np.log(p)).sum() / math.log(len(w))))  # no "-0.00" for one weight


@dataclass(frozen=True)
class BradleyTerry:
    cv_accuracy: float | None  # None when the folds cannot be formed (too few of one side)
    folds: int
    weights: tuple[float, ...]  # fitted on every pair
    C: float | None
    weight_entropy: float | None


def _model(minority: int, seed: int) -> Any:  # a scikit-learn estimator (no stubs)
    """L2 logistic regression without intercept, C picked by (inner) CV when the smaller side of
    the data it is fitted on has at least two pairs; else C = 1."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    base = LogisticRegression(C=1.0, fit_intercept=False, max_iter=1000)
    folds = min(3, minority)
    if folds < 2:
        return base
    return GridSearchCV(base, {"C": list(C_GRID)}, cv=StratifiedKFold(folds, shuffle=True, random_state=seed),
                        scoring="accuracy")


def bradley_terry(differences: np.ndarray, a_preferred: np.ndarray, seed: int = 42) -> BradleyTerry:
    """Fit P(A preferred) = sigmoid(beta . (s_A - s_B)) on per-check score differences."""
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    x = np.asarray(differences, dtype=float)
    y = np.asarray(a_preferred, dtype=int)
    minority = int(min(y.sum(), len(y) - y.sum()))
    if minority == 0 or x.shape[1] == 0:
        return BradleyTerry(None, 0, tuple(0.0 for _ in range(x.shape[1])), None, None)
    folds = min(MAX_FOLDS, minority)
    cv_accuracy = None
    if folds >= 2:
        outer = StratifiedKFold(folds, shuffle=True, random_state=seed)
        inner_minority = minority - math.ceil(minority / folds)  # in each outer training set, at least
        scores = cross_val_score(_model(inner_minority, seed), x, y, cv=outer, scoring="accuracy")
        cv_accuracy = float(scores.mean())
    model = _model(minority, seed).fit(x, y)
    fitted = getattr(model, "best_estimator_", model)
    weights = fitted.coef_[0]
    chosen_c = float(fitted.C)
    return BradleyTerry(cv_accuracy, folds if folds >= 2 else 0, tuple(float(w) for w in weights), chosen_c,
                        weight_entropy(weights))
