"""Stored answers against the same judge asked again (pure): flips over what the gate reads, n/a
changes, kappa with its interval, the exact McNemar test, the population-weighted flip rate, and
the thresholds' verdict."""

from __future__ import annotations

import numpy as np

from rubric_gate.comparison import mcnemar_exact_p
from rubric_gate.drift.model import CheckDrift, Thresholds
from rubric_gate.rejudge import kappa_estimate
from rubric_gate.reliability import Estimate


def weighted_flip_rate(flipped: np.ndarray, weights: np.ndarray) -> float | None:
    """Σ w·flip / Σ w over the sampled pairs, each weighted by its stratum's share of the population
    over its pairs in the sample: the share of the whole store that flipped, not of the sample."""
    weights = np.asarray(weights, dtype=float)
    total = float(weights.sum())
    return float((weights * np.asarray(flipped, dtype=bool)).sum() / total) if total else None


def paired(stored_failed: np.ndarray, now_failed: np.ndarray) -> tuple[int, int, Estimate, float | None]:
    """(yes→no, no→yes, kappa, McNemar p) over the sampled pairs, as the gate reads them."""
    a, b = np.asarray(stored_failed, dtype=bool), np.asarray(now_failed, dtype=bool)
    to_no, to_yes = int((~a & b).sum()), int((a & ~b).sum())
    return to_no, to_yes, kappa_estimate(a, b), (mcnemar_exact_p(to_no, to_yes) if len(a) else None)


def per_check(check_ids: list[str], checks: np.ndarray, stored_failed: np.ndarray, now_failed: np.ndarray,
              na_changed: np.ndarray) -> list[CheckDrift]:
    """`checks`: the index into `check_ids` of each sampled pair."""
    out = []
    for index, check in enumerate(check_ids):
        mine = checks == index
        if mine.any():
            out.append(CheckDrift(check, int(mine.sum()), int((mine & ~stored_failed & now_failed).sum()),
                                  int((mine & stored_failed & ~now_failed).sum()), int((mine & na_changed).sum())))
    return out


def drift_reasons(flip_rate: float | None, to_no: int, to_yes: int, p_value: float | None,
                  thresholds: Thresholds) -> list[str]:
    reasons = []
    if flip_rate is not None and flip_rate > thresholds.max_flip_rate:
        reasons.append(f"{100 * flip_rate:.1f}% of the stored pairs answer otherwise now (estimated from the sample), "
                       f"above --max-flip-rate {100 * thresholds.max_flip_rate:g}%")
    if p_value is not None and p_value < thresholds.alpha:
        way = "stricter: it fails what it passed" if to_no > to_yes else "more lenient: it passes what it failed"
        reasons.append(f"the flips lean one way ({to_no} yes→no, {to_yes} no→yes; exact McNemar p = {p_value:.2g} "
                       f"< {thresholds.alpha:g}): the judge became {way}")
    return reasons
