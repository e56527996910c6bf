"""Live judges: ask a model the (check, item) pairs the verdict store lacks, each exactly once
per judge, prompt version and content."""

from rubric_gate.judges.api import judge_missing
from rubric_gate.judges.pairs import Pair, missing_pairs
from rubric_gate.judges.pricing import estimate_cost
from rubric_gate.judges.prompt import CHECKLIST_PROMPT_VERSION, PROMPT_VERSION, prompt_version
from rubric_gate.judges.spec import JudgeSpec, parse_judge_spec
from rubric_gate.judges.stats import JudgeRunStats

__all__ = [
    "CHECKLIST_PROMPT_VERSION",
    "PROMPT_VERSION",
    "JudgeRunStats",
    "JudgeSpec",
    "Pair",
    "estimate_cost",
    "judge_missing",
    "missing_pairs",
    "parse_judge_spec",
    "prompt_version",
]
