"""The two rates of base vs head as proposed and base vs gated, paired on the calibration items."""

from __future__ import annotations

import numpy as np

from rubric_gate.comparison.paired import PairedComparison, compare_paired

RATES = ("correct_passed", "flawed_caught")


def compare_rubrics(flawed: np.ndarray, base_fails: np.ndarray,
                    others: dict[str, np.ndarray]) -> list[PairedComparison]:
    """For each other rubric (name -> per-item "the rubric fails it") and each rate, base vs it.

    correct_passed compares passing on the correct items, flawed_caught failing on the flawed ones.
    """
    flawed = np.asarray(flawed, dtype=bool)
    base_fails = np.asarray(base_fails, dtype=bool)
    comparisons = []
    for target, fails in others.items():
        fails = np.asarray(fails, dtype=bool)
        comparisons.append(compare_paired(~base_fails[~flawed], ~fails[~flawed], source="base", target=target,
                                          rate="correct_passed"))
        comparisons.append(compare_paired(base_fails[flawed], fails[flawed], source="base", target=target,
                                          rate="flawed_caught"))
    return comparisons


def significant_correct_drop(comparisons: list[PairedComparison], alpha: float) -> str | None:
    """Why the head as proposed fails the drop rule, or None: correct passed fell and p < alpha."""
    for c in comparisons:
        if (c.target == "head" and c.rate == "correct_passed" and c.delta is not None and c.delta < 0
                and c.p_value is not None and c.p_value < alpha):
            return (f"the head as proposed passes fewer correct outputs than the base "
                    f"({c.from_count} -> {c.to_count} of {c.total}, exact McNemar p = {c.p_value:.3g} "
                    f"< {alpha:g})")
    return None
