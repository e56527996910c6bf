"""A judge watched over time: stored verdicts asked again on a stratified sample and compared
under the same full key (`drift_rubric`), with the thresholds that say it drifted."""

from rubric_gate.drift.model import DRIFT_ALPHA, MAX_FLIP_RATE, DriftReport, RubricDrift, Thresholds
from rubric_gate.drift.run import drift_rubric
from rubric_gate.drift.sample import allocate, stratified_sample

__all__ = ["DRIFT_ALPHA", "MAX_FLIP_RATE", "DriftReport", "RubricDrift", "Thresholds", "allocate", "drift_rubric",
           "stratified_sample"]
