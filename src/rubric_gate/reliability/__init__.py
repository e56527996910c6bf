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
from rubric_gate.reliability.alpha import nominal_alpha, pairwise_kappa
from rubric_gate.reliability.intervals import wilson_interval
from rubric_gate.reliability.majority import Vote, flip_rate, majority
from rubric_gate.reliability.paraphrase import (
    paraphrase_agreement,
    paraphrase_kappa,
    paraphrase_phi,
)

__all__ = [
    "Estimate",
    "LabelAgreement",
    "Vote",
    "balanced_accuracy",
    "bootstrap_interval",
    "cohen_kappa",
    "flip_rate",
    "label_agreement",
    "majority",
    "mcc",
    "nominal_alpha",
    "pairwise_kappa",
    "paraphrase_agreement",
    "paraphrase_kappa",
    "paraphrase_phi",
    "wilson_interval",
]
