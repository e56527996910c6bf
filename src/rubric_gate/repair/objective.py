"""PReMISE's acceptance rule for refinement against false accepts (§3.4), as pure logic.

A rewrite r' of check r is kept only if it lowers the verified fool rate on a development split,
VFR_dev(r') < VFR_dev(r), while inter-judge agreement drops by at most delta,
alpha_dev(r') >= alpha_dev(r) - delta. Of several that pass, the Pareto frontier on (alpha, VFR).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from rubric_gate.reliability.alpha import nominal_alpha

DEFAULT_DELTA = 0.03
T = TypeVar("T")


@dataclass(frozen=True)
class Robustness:
    """A check text measured on the development split."""

    alpha: float | None  # inter-judge agreement (Krippendorff, nominal); None when undefined
    vfr: float  # verified fools / attacks
    fools: int = 0
    attacks: int = 0

    def to_dict(self) -> dict[str, float | int | None]:
        return {"alpha": None if self.alpha is None else round(self.alpha, 4), "vfr": round(self.vfr, 4),
                "fools": self.fools, "attacks": self.attacks}


def agreement(answers: np.ndarray) -> float | None:
    """Alpha of (judges, items) yes/no answers; 1.0 when every judge answers every item alike
    (alpha itself is undefined without variation); None with fewer than two judges."""
    answers = np.asarray(answers, dtype=bool)
    if answers.ndim != 2 or answers.shape[0] < 2 or answers.shape[1] < 1:
        return None
    if (answers == answers[0]).all():
        return 1.0
    return nominal_alpha(answers)


def vfr_accepts(before: Robustness, after: Robustness, delta: float = DEFAULT_DELTA) -> tuple[bool, str]:
    """(kept, why not) under the acceptance rule; an unmeasurable alpha never lets a rewrite through."""
    if not after.vfr < before.vfr:
        return False, f"fool rate {after.vfr:.2f} is not below the original's {before.vfr:.2f}"
    if before.alpha is None or after.alpha is None:
        return False, "inter-judge alpha could not be measured (needs two judges and answers that vary)"
    if after.alpha < before.alpha - delta - 1e-12:
        return False, f"alpha {after.alpha:.2f} drops more than {delta:.2f} below the original's {before.alpha:.2f}"
    return True, ""


def pareto_frontier(measured: Sequence[tuple[T, Robustness]]) -> list[T]:
    """Members no other member beats on both axes (higher alpha, lower VFR; one strictly)."""
    def dominates(a: Robustness, b: Robustness) -> bool:
        assert a.alpha is not None and b.alpha is not None
        return a.alpha >= b.alpha and a.vfr <= b.vfr and (a.alpha > b.alpha or a.vfr < b.vfr)

    return [key for key, m in measured if not any(dominates(o, m) for _, o in measured if o is not m)]
