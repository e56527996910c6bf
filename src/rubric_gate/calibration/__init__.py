"""Calibration sets: outputs labeled pass or fail by a human."""

from rubric_gate.calibration.load import CalibrationSet, load_calibration, parse_calibration
from rubric_gate.calibration.model import UNPLANNED, CalibrationItem, item_content_hash

__all__ = [
    "UNPLANNED",
    "CalibrationItem",
    "CalibrationSet",
    "item_content_hash",
    "load_calibration",
    "parse_calibration",
]
