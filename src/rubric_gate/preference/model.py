"""The preference-fit figures of one rubric on one pairs file, as plain data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rubric_gate.llm.asks import CallStats


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


@dataclass
class CheckFit:
    check: str
    applicability: float  # share of the pairs' prompts the check applies to
    chosen_win_share: float  # share of pairs where chosen meets the check and rejected does not
    chosen_loss_share: float
    weight: float  # Bradley-Terry coefficient

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "applicability": _round(self.applicability),
                "chosen_win_share": _round(self.chosen_win_share), "chosen_loss_share": _round(self.chosen_loss_share),
                "weight": _round(self.weight)}


@dataclass
class PreferenceFit:
    pairs_file: str
    pairs: int
    judge: str
    pref_acc: float  # rubric-conditioned pairwise judge: share of pairs it prefers the chosen response
    pref_acc_without: float  # the same judge and prompt without the rubric
    applicability: float  # mean over prompts of the share of checks that apply
    effective_dimensionality: float
    mean_abs_correlation: float | None
    cv_accuracy: float | None
    cv_folds: int
    weight_entropy: float | None
    regularisation_c: float | None
    checks: list[CheckFit] = field(default_factory=list)
    usage: list[CallStats] = field(default_factory=list)
    judging: list[dict[str, Any]] = field(default_factory=list)

    @property
    def k(self) -> int:
        return len(self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pairs_file": self.pairs_file, "pairs": self.pairs, "judge": self.judge,
            "pref_acc": _round(self.pref_acc), "pref_acc_without": _round(self.pref_acc_without),
            "pref_acc_gain": _round(self.pref_acc - self.pref_acc_without),
            "applicability": _round(self.applicability),
            "effective_dimensionality": _round(self.effective_dimensionality),
            "effective_dimensionality_per_check": _round(self.effective_dimensionality / self.k) if self.k else None,
            "mean_abs_correlation": _round(self.mean_abs_correlation),
            "cv_accuracy": _round(self.cv_accuracy), "cv_folds": self.cv_folds,
            "weight_entropy": _round(self.weight_entropy), "regularisation_c": self.regularisation_c,
            "checks": [c.to_dict() for c in self.checks],
            "usage": [u.to_dict() for u in self.usage], "judging": list(self.judging),
        }
