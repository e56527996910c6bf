"""What the batch runner needs from a provider's batch API, and the neutral shapes it returns."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from rubric_gate.batch.requests import BatchLimits
from rubric_gate.errors import JudgeAuthError, JudgeError
from rubric_gate.judges.backend import AuthFailure, JudgeRequest, Reply, TransientError, classify
from rubric_gate.judges.spec import JudgeSpec

# The SDKs retry the few control calls a batch run makes (create, retrieve, list, download).
CONTROL_RETRIES = 5


@dataclass(frozen=True)
class BatchState:
    batch_id: str
    status: str  # the provider's own word
    ended: bool
    succeeded: int = 0
    errored: int = 0
    expired: int = 0
    canceled: int = 0
    processing: int = 0
    detail: str = ""  # why a whole batch failed (OpenAI input validation), if it did

    @property
    def progress(self) -> str:
        return (f"{self.succeeded} succeeded, {self.errored} errored, {self.expired} expired, "
                f"{self.processing} processing")


@dataclass(frozen=True)
class RequestResult:
    custom_id: str
    reply: Reply | None  # None: the request has no answer (errored, expired, canceled)
    error: str = ""


class BatchClient(Protocol):
    provider: str
    limits: BatchLimits

    def request_line(self, custom_id: str, request: JudgeRequest) -> dict[str, Any]: ...

    def submit(self, local: str, requests_file: Path, metadata: dict[str, str]) -> str: ...

    def retrieve(self, batch_id: str) -> BatchState: ...

    def results(self, batch_id: str) -> Iterator[RequestResult]: ...

    def find(self, local: str, created_after: float, requests: int, exclude: set[str]) -> str | None: ...

    def close(self) -> None: ...


@contextmanager
def provider_errors(provider: str, action: str) -> Iterator[None]:
    """SDK errors as one-line JudgeErrors (rejected credentials as JudgeAuthError)."""
    try:
        yield
    except JudgeError:
        raise
    except Exception as exc:  # the SDKs' APIError family, after their own retries
        if not hasattr(exc, "request") and not hasattr(exc, "status_code"):
            raise
        neutral = classify(exc, provider)
        if isinstance(neutral, AuthFailure):
            raise JudgeAuthError(str(neutral)) from None
        if isinstance(neutral, TransientError):
            raise JudgeError(f"{provider} batch: {action} failed ({neutral}); the journal keeps every "
                             "submitted batch, re-run to resume") from None
        raise JudgeError(f"{provider} batch: {action}: {neutral}") from None


def make_batch_client(spec: JudgeSpec) -> BatchClient:
    if spec.provider == "anthropic":
        from rubric_gate.batch.anthropic_batches import AnthropicBatches

        return AnthropicBatches(spec.model)
    if spec.provider == "openai":
        from rubric_gate.batch.openai_batches import OpenAIBatches

        return OpenAIBatches(spec.model)
    raise JudgeError(f"unknown provider '{spec.provider}'")
