"""What the batch runner needs from a provider's batch API: the protocol and its neutral shapes
live in `rubric_gate.llm.protocols`, the clients in the provider modules the registry names."""

from __future__ import annotations

from rubric_gate.llm.errors import provider_errors
from rubric_gate.llm.protocols import BatchClient, BatchState, RequestResult
from rubric_gate.llm.spec import JudgeSpec, batch_client


def make_batch_client(spec: JudgeSpec) -> BatchClient:
    return batch_client(spec)


__all__ = ["BatchClient", "BatchState", "RequestResult", "make_batch_client", "provider_errors"]
