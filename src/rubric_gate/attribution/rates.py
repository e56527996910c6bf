"""The two rates a rubric is judged by (never accuracy alone), and the predicted pass rate."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rubric_gate.attribution.shapley import column_counts, failure_counts
from rubric_gate.reliability.intervals import wilson_interval


@dataclass(frozen=True)
class Rate:
    count: int
    total: int

    @property
    def value(self) -> float | None:
        return self.count / self.total if self.total else None

    @property
    def ci95(self) -> tuple[float, float] | None:
        return wilson_interval(self.count, self.total)

    def to_dict(self) -> dict:
        ci = self.ci95
        return {
            "count": self.count,
            "total": self.total,
            "rate": self.value,
            "ci95": None if ci is None else [round(ci[0], 4), round(ci[1], 4)],
        }


@dataclass(frozen=True)
class Rates:
    correct_passed: Rate
    flawed_caught: Rate
    unplanned_caught: Rate
    predicted_correct_passed: float | None  # from per-check pass rates, as if checks were independent

    def to_dict(self) -> dict:
        return {
            "correct_passed": self.correct_passed.to_dict(),
            "flawed_caught": self.flawed_caught.to_dict(),
            "unplanned_caught": self.unplanned_caught.to_dict(),
            "predicted_correct_passed": self.predicted_correct_passed,
        }


def rubric_fails(failed: np.ndarray, max_failures: int = 0) -> np.ndarray:
    """Per item: True where the rubric as a whole fails it."""
    return failure_counts(np.asarray(failed, dtype=bool)) > max_failures


def predicted_pass_rate(failed_on_correct: np.ndarray, max_failures: int = 0) -> float | None:
    """Pass rate on correct items predicted from each check's own pass rate.

    Treats checks as independent: the product of pass rates under all-pass, the probability
    of at most k failures (Poisson-binomial) under max_failures k. Beside the actual rate it
    shows how much of the strictness is plain multiplication of per-check false fails.
    """
    failed_on_correct = np.asarray(failed_on_correct, dtype=bool)
    if failed_on_correct.shape[0] == 0:
        return None
    fail_p = column_counts(failed_on_correct) / failed_on_correct.shape[0]  # the mean, to the last bit
    # dist[j] = probability that exactly j checks fail, built one check at a time.
    dist = np.zeros(failed_on_correct.shape[1] + 1)
    dist[0] = 1.0
    for p in fail_p:
        dist[1:] = dist[1:] * (1 - p) + dist[:-1] * p
        dist[0] *= 1 - p
    return float(dist[: max_failures + 1].sum())


def compute_rates(
    failed: np.ndarray, flawed: np.ndarray, unplanned: np.ndarray | None = None, max_failures: int = 0, *,
    counts: np.ndarray | None = None,
) -> Rates:
    """`counts`: `failure_counts(failed)` when the caller has it already."""
    failed = np.asarray(failed, dtype=bool)
    flawed = np.asarray(flawed, dtype=bool)
    unplanned = np.zeros_like(flawed) if unplanned is None else np.asarray(unplanned, dtype=bool)
    fails = rubric_fails(failed, max_failures) if counts is None else counts > max_failures
    correct = ~flawed
    return Rates(
        correct_passed=Rate(int((correct & ~fails).sum()), int(correct.sum())),
        flawed_caught=Rate(int((flawed & fails).sum()), int(flawed.sum())),
        unplanned_caught=Rate(int((unplanned & fails).sum()), int(unplanned.sum())),
        predicted_correct_passed=predicted_pass_rate(failed[correct], max_failures),
    )
