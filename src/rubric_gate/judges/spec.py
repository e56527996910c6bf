"""The judge spec `PROVIDER:MODEL`: defined in `rubric_gate.llm.spec` beside the provider registry."""

from rubric_gate.llm.spec import JudgeSpec, parse_judge_spec

__all__ = ["JudgeSpec", "parse_judge_spec"]
