"""Live judges: ask a model the (check, item) pairs the verdict store lacks, each exactly once
per judge, prompt version and content.

Names load on first use (PEP 562), so a replay-only run that never judges imports neither
asyncio, the provider SDKs, jinja2 nor rich.progress.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_gate.lazy import lazy_exports

if TYPE_CHECKING:  # the same names for the type checker (a test keeps the two equal)
    from rubric_gate.judges.api import judge_missing as judge_missing
    from rubric_gate.judges.pairs import Pair as Pair
    from rubric_gate.judges.pairs import missing_pairs as missing_pairs
    from rubric_gate.judges.prompt import CHECKLIST_PROMPT_VERSION as CHECKLIST_PROMPT_VERSION
    from rubric_gate.judges.prompt import PROMPT_VERSION as PROMPT_VERSION
    from rubric_gate.judges.prompt import prompt_version as prompt_version
    from rubric_gate.judges.stats import JudgeRunStats as JudgeRunStats

_EXPORTS = {
    "CHECKLIST_PROMPT_VERSION": "rubric_gate.judges.prompt",
    "PROMPT_VERSION": "rubric_gate.judges.prompt",
    "prompt_version": "rubric_gate.judges.prompt",
    "JudgeRunStats": "rubric_gate.judges.stats",
    "Pair": "rubric_gate.judges.pairs",
    "missing_pairs": "rubric_gate.judges.pairs",
    "judge_missing": "rubric_gate.judges.api",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports("rubric_gate.judges", _EXPORTS, globals())
