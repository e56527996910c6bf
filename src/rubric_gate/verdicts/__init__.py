"""Verdicts: judge answers per (check, item), stored append-only and reused by content."""

from rubric_gate.verdicts.model import Usage, Verdict, task_hash
from rubric_gate.verdicts.store import VerdictStore
from rubric_gate.verdicts.table import VerdictColumn, verdict_column

__all__ = ["Usage", "Verdict", "VerdictColumn", "VerdictStore", "task_hash", "verdict_column"]
