"""Confidence intervals for proportions."""

from __future__ import annotations

import math

Z95 = 1.959963984540054  # two-sided 95% normal quantile


def wilson_interval(successes: int, total: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval for successes/total; None when there are no trials.

    Chosen over the normal approximation because calibration sets are small (20-50 items per
    class) and rates sit near 0 or 1, where the normal interval leaves [0, 1].
    """
    if total <= 0:
        return None
    p = successes / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    # At 0/n and n/n the bound is exactly 0 or 1; floating point would leave 1e-16 off.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == total else min(1.0, centre + half)
    return (low, high)
