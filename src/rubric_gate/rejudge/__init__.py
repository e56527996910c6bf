"""A judge change gated like a rubric edit: the calibration set under the old and the new judge,
compared check by check and rate by rate, with rule J's verdict (`compare_judges`)."""

from rubric_gate.rejudge.compare import (
    compare_judges,
    decisions_under_both,
    kappa_estimate,
    lost_shared_catches,
    lost_unique_catches,
)

__all__ = ["compare_judges", "decisions_under_both", "kappa_estimate", "lost_shared_catches", "lost_unique_catches"]
