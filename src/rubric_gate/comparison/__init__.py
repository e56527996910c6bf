"""How sure a change is: base and head judged on the same items, compared pair by pair."""

from rubric_gate.comparison.paired import (
    PairedComparison,
    compare_paired,
    mcnemar_exact_p,
    paired_difference_interval,
)
from rubric_gate.comparison.rubrics import RATES, compare_rubrics, significant_correct_drop
from rubric_gate.comparison.text import comparison_lines

__all__ = [
    "RATES",
    "PairedComparison",
    "compare_paired",
    "compare_rubrics",
    "comparison_lines",
    "mcnemar_exact_p",
    "paired_difference_interval",
    "significant_correct_drop",
]
