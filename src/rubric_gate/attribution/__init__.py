"""Attribution: who gets the credit and the blame for each pass/fail outcome."""

from rubric_gate.attribution.pairs import JointCatch, joint_catches
from rubric_gate.attribution.rates import (
    Rate,
    Rates,
    compute_rates,
    predicted_pass_rate,
    rubric_fails,
)
from rubric_gate.attribution.shapley import (
    Attribution,
    attribute,
    column_counts,
    failure_counts,
    shapley_by_enumeration,
)

__all__ = [
    "Attribution",
    "JointCatch",
    "Rate",
    "Rates",
    "attribute",
    "column_counts",
    "compute_rates",
    "failure_counts",
    "joint_catches",
    "predicted_pass_rate",
    "rubric_fails",
    "shapley_by_enumeration",
]
