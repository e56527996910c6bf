"""What the rest of the tool needs from a provider: the shapes of a request and a reply, a live
client and a batch client. A leaf module: it imports nothing of the tool at run time, so
provider modules and their users can both depend on it without a cycle."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from rubric_gate.llm.batch_limits import BatchLimits


@dataclass(frozen=True)
class JudgeRequest:
    """One call to a model: the prompt and the JSON schema its reply must match."""

    prompt: str
    schema: dict[str, Any]
    schema_name: str
    max_tokens: int
    sampled: bool = False  # an extra `--samples` answer: sample where the provider lets us


@dataclass(frozen=True)
class Reply:
    text: str
    input_tokens: int
    output_tokens: int


class LiveClient(Protocol):
    """A provider's live API: one completion per call. Raises the neutral errors of
    `rubric_gate.llm.errors` (TransientError, AuthFailure, FatalError), never SDK errors."""

    async def complete(self, request: JudgeRequest) -> Reply: ...

    async def aclose(self) -> None: ...


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
    """A provider's batch API (half price, results within a day)."""

    provider: str
    limits: BatchLimits

    def request_line(self, custom_id: str, request: JudgeRequest) -> dict[str, Any]: ...

    def submit(self, local: str, requests_file: Path, metadata: dict[str, str]) -> str: ...

    def retrieve(self, batch_id: str) -> BatchState: ...

    def results(self, batch_id: str) -> Iterator[RequestResult]: ...

    def find(self, local: str, created_after: float, requests: int, exclude: set[str]) -> str | None: ...

    def close(self) -> None: ...
