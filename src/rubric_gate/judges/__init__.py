"""Live judges: ask a model the (check, item) pairs the verdict store lacks, each exactly once
per judge, prompt version and content.

Names load on first use (PEP 562), so a replay-only run that never judges imports neither
asyncio, the provider SDKs, jinja2 nor rich.progress.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "CHECKLIST_PROMPT_VERSION": "rubric_gate.judges.prompt",
    "PROMPT_VERSION": "rubric_gate.judges.prompt",
    "prompt_version": "rubric_gate.judges.prompt",
    "JudgeRunStats": "rubric_gate.judges.stats",
    "JudgeSpec": "rubric_gate.judges.spec",
    "parse_judge_spec": "rubric_gate.judges.spec",
    "Pair": "rubric_gate.judges.pairs",
    "missing_pairs": "rubric_gate.judges.pairs",
    "estimate_cost": "rubric_gate.judges.pricing",
    "judge_missing": "rubric_gate.judges.api",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rubric_gate.judges' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
