"""Paired proportions: one rate measured twice on the same items (pure functions).

The two measurements are not independent samples, so the interval for their difference and
the test use the pairing: only the discordant items (success under one, not the other) carry
information about the change.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rubric_gate.reliability.intervals import Z95, wilson_interval


def mcnemar_exact_p(gained: int, lost: int) -> float:
    """Exact McNemar test: two-sided binomial test of `gained` among the discordant items at 1/2.

    With no discordant item there is no evidence of a difference: p = 1. At 1/2 the binomial is
    symmetric, so the two-sided p is twice the smaller tail, P(X <= m) for m = min(gained, lost),
    capped at 1 (what `scipy.stats.binomtest` computes; the tests compare the two). The tail is
    C(n, m) / 2^n (exact integers, one correctly rounded division) times 1 + r_m + r_m r_(m-1) + ...,
    with r_i = C(n, i-1) / C(n, i) = i / (n - i + 1), summed until a term no longer counts.
    """
    n = gained + lost
    m = min(gained, lost)
    if n == 0 or 2 * m == n:
        return 1.0
    ratio_sum, term = 1.0, 1.0
    for i in range(m, 0, -1):
        term *= i / (n - i + 1)
        ratio_sum += term
        if term < ratio_sum * 1e-17:
            break
    return min(1.0, 2 * (math.comb(n, m) / (1 << n)) * ratio_sum)


def paired_difference_interval(both: int, from_only: int, to_only: int, neither: int,
                               z: float = Z95) -> tuple[float, float] | None:
    """Newcombe's hybrid score interval (1998, method 10) for p_to - p_from on paired data.

    Each marginal rate gets its Wilson interval; the two are combined with the estimated
    correlation between the paired outcomes (phi, shrunk towards 0 by n/2 when positive, as
    Newcombe does), so agreeing items narrow the interval. None when there are no items.
    """
    n = both + from_only + to_only + neither
    if n == 0:
        return None
    from_k, to_k = both + from_only, both + to_only
    p_from, p_to = from_k / n, to_k / n
    from_interval, to_interval = wilson_interval(from_k, n, z), wilson_interval(to_k, n, z)
    assert from_interval is not None and to_interval is not None  # n > 0
    (lo_from, hi_from), (lo_to, hi_to) = from_interval, to_interval
    margins = from_k * (n - from_k) * to_k * (n - to_k)
    phi = 0.0
    if margins:
        cross = both * neither - from_only * to_only
        if cross > n / 2:
            phi = (cross - n / 2) / math.sqrt(margins)
        elif cross < 0:
            phi = cross / math.sqrt(margins)
    delta = p_to - p_from
    down_to, up_from = p_to - lo_to, hi_from - p_from
    up_to, down_from = hi_to - p_to, p_from - lo_from
    low = delta - math.sqrt(max(0.0, down_to**2 - 2 * phi * down_to * up_from + up_from**2))
    high = delta + math.sqrt(max(0.0, up_to**2 - 2 * phi * up_to * down_from + down_from**2))
    return (max(-1.0, low), min(1.0, high))


@dataclass(frozen=True)
class PairedComparison:
    """One rate, `from` rubric vs `to` rubric, on the same items."""

    source: str  # "base"
    target: str  # "head" | "gated"
    rate: str  # "correct_passed" | "flawed_caught"
    from_count: int
    to_count: int
    total: int
    gained: int  # items a success under `to` only
    lost: int  # items a success under `from` only
    ci95: tuple[float, float] | None
    p_value: float | None

    @property
    def delta(self) -> float | None:
        return (self.to_count - self.from_count) / self.total if self.total else None

    def to_dict(self) -> dict:
        return {
            "from": self.source,
            "to": self.target,
            "rate": self.rate,
            "from_count": [self.from_count, self.total],
            "to_count": [self.to_count, self.total],
            "delta": None if self.delta is None else round(self.delta, 4),
            "ci95": None if self.ci95 is None else [round(self.ci95[0], 4), round(self.ci95[1], 4)],
            "discordant": [self.gained, self.lost],
            "p_value": self.p_value,  # full precision: 1e-9 is not 0
        }


def compare_paired(from_success: np.ndarray, to_success: np.ndarray, *, source: str, target: str,
                   rate: str) -> PairedComparison:
    """Compare two success vectors over the same items (already restricted to the rate's items)."""
    a = np.asarray(from_success, dtype=bool)
    b = np.asarray(to_success, dtype=bool)
    both, from_only = int((a & b).sum()), int((a & ~b).sum())
    to_only, neither = int((~a & b).sum()), int((~a & ~b).sum())
    total = len(a)
    return PairedComparison(
        source=source, target=target, rate=rate,
        from_count=both + from_only, to_count=both + to_only, total=total,
        gained=to_only, lost=from_only,
        ci95=paired_difference_interval(both, from_only, to_only, neither),
        p_value=mcnemar_exact_p(to_only, from_only) if total else None,
    )
