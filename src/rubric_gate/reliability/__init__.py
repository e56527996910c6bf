"""How far to trust the verdicts: intervals and agreement statistics (pure functions)."""

from rubric_gate.reliability.agreement import (
    Estimate,
    LabelAgreement,
    balanced_accuracy,
    bootstrap_interval,
    cohen_kappa,
    label_agreement,
    mcc,
)
from rubric_gate.reliability.intervals import wilson_interval

__all__ = [
    "Estimate",
    "LabelAgreement",
    "balanced_accuracy",
    "bootstrap_interval",
    "cohen_kappa",
    "label_agreement",
    "mcc",
    "wilson_interval",
]
