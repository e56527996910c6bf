"""The request and reply shapes, defined in `rubric_gate.llm.protocols`; named here for the
batch request writer, which builds judge requests."""

from rubric_gate.llm.protocols import JudgeRequest, Reply

__all__ = ["JudgeRequest", "Reply"]
