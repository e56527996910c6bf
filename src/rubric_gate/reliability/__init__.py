"""How far to trust the verdicts: intervals and agreement statistics (pure functions)."""

from rubric_gate.reliability.intervals import wilson_interval

__all__ = ["wilson_interval"]
