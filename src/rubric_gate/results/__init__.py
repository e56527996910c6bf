"""What a run found, as plain data: per-rubric summaries, per-check and per-change rows, and
how far a panel's verdicts can be trusted. Built by the pipeline from the pure layers
(attribution, gate, reliability, comparison); rendered by report/, read by the action.

A panel's reliability and a judge change's comparison load on first use (PEP 562): a replay
with one judge builds neither (their dataclasses are a few ms of every rerun's start-up).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_gate.lazy import lazy_exports
from rubric_gate.results.model import ChangeRow as ChangeRow
from rubric_gate.results.model import CheckReport as CheckReport
from rubric_gate.results.model import CheckRow as CheckRow
from rubric_gate.results.model import HeldChange as HeldChange
from rubric_gate.results.model import RubricSummary as RubricSummary
from rubric_gate.results.model import Withheld as Withheld

if TYPE_CHECKING:  # the same names for the type checker (a test keeps the two equal)
    from rubric_gate.results.judge_change import CheckAgreement as CheckAgreement
    from rubric_gate.results.judge_change import DecisionPair as DecisionPair
    from rubric_gate.results.judge_change import Flips as Flips
    from rubric_gate.results.judge_change import JudgeChange as JudgeChange
    from rubric_gate.results.judge_change import UnderJudge as UnderJudge
    from rubric_gate.results.judge_change import judges_label as judges_label
    from rubric_gate.results.reliability import ChangeReliability as ChangeReliability
    from rubric_gate.results.reliability import CheckReliability as CheckReliability
    from rubric_gate.results.reliability import JudgeAgreement as JudgeAgreement
    from rubric_gate.results.reliability import ParaphraseStability as ParaphraseStability
    from rubric_gate.results.reliability import ReliabilityReport as ReliabilityReport
    from rubric_gate.results.reliability import SampleStability as SampleStability

_EXPORTS = {
    "CheckAgreement": "rubric_gate.results.judge_change",
    "DecisionPair": "rubric_gate.results.judge_change",
    "Flips": "rubric_gate.results.judge_change",
    "JudgeChange": "rubric_gate.results.judge_change",
    "UnderJudge": "rubric_gate.results.judge_change",
    "judges_label": "rubric_gate.results.judge_change",
    "ChangeReliability": "rubric_gate.results.reliability",
    "CheckReliability": "rubric_gate.results.reliability",
    "JudgeAgreement": "rubric_gate.results.reliability",
    "ParaphraseStability": "rubric_gate.results.reliability",
    "ReliabilityReport": "rubric_gate.results.reliability",
    "SampleStability": "rubric_gate.results.reliability",
}

__all__ = sorted([*_EXPORTS, "ChangeRow", "CheckReport", "CheckRow", "HeldChange", "RubricSummary", "Withheld"])

__getattr__, __dir__ = lazy_exports("rubric_gate.results", _EXPORTS, globals())
