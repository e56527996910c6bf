"""What a run found, as plain data: per-rubric summaries, per-check and per-change rows, and
how far a panel's verdicts can be trusted. Built by the pipeline from the pure layers
(attribution, gate, reliability, comparison); rendered by report/, read by the action."""

from rubric_gate.results.judge_change import (
    CheckAgreement,
    DecisionPair,
    Flips,
    JudgeChange,
    UnderJudge,
    judges_label,
)
from rubric_gate.results.model import (
    ChangeRow,
    CheckReport,
    CheckRow,
    HeldChange,
    RubricSummary,
    Withheld,
)
from rubric_gate.results.reliability import (
    ChangeReliability,
    CheckReliability,
    JudgeAgreement,
    ParaphraseStability,
    ReliabilityReport,
    SampleStability,
)

__all__ = [
    "ChangeReliability",
    "ChangeRow",
    "CheckAgreement",
    "CheckReliability",
    "CheckReport",
    "CheckRow",
    "DecisionPair",
    "Flips",
    "HeldChange",
    "JudgeAgreement",
    "JudgeChange",
    "ParaphraseStability",
    "ReliabilityReport",
    "RubricSummary",
    "SampleStability",
    "UnderJudge",
    "Withheld",
    "judges_label",
]
