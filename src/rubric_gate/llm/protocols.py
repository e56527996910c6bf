"""What the rest of the tool needs from a provider: the shapes of a request and a reply, a live
client and a batch client. A leaf module: it imports nothing of the tool at run time, so
provider modules and their users can both depend on it without a cycle."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from rubric_gate.llm.batch_limits import BatchLimits


@dataclass(frozen=True)
class JudgeRequest:
    """One call to a model: the prompt and the JSON schema its reply must match."""

    prompt: str
    schema: dict[str, Any]  # bounded (maxLength, minItems/maxItems, enum); each provider sends what it enforces
    schema_name: str
    max_tokens: int
    sampled: bool = False  # an extra `--samples` answer: sample where the provider lets us
    # The n-th re-ask after a reply that did not parse: the provider varies its sampling (a
    # temperature step and a seed), so a deterministic server does not repeat the same reply.
    reask: int = 0
    # The length of the prompt's leading part that other requests of the run share (the
    # instructions, task, input and output; the check comes last): cacheable where the provider
    # caches prompts on request (Anthropic's cache_control); 0 when nothing is shared.
    shared_prefix: int = 0

    def attempt(self, reask: int, why: str = "") -> JudgeRequest:
        """The request for this attempt: the first as it is; a re-ask after an unusable reply
        (`why`) with a reminder of the format at the end of the prompt (the shared part stays
        first, still cacheable) and its number, which each provider turns into a change of
        sampling. Never the identical request twice."""
        if not reask:
            return self
        reason = " ".join(why.split())[:REASON_CHARS] or "it was not the JSON object asked for"
        return replace(self, prompt=self.prompt + REMINDER.format(reason=reason), reask=reask)


def shared_until(prompt: str, tag: str) -> int:
    """The length of `prompt` before its last line holding `tag` (a template's own tag: data is
    fenced, so the last one is the template's): the part other requests of a run share, first,
    so a provider can cache it (`JudgeRequest.shared_prefix`); 0 when the tag is not there."""
    at = prompt.rfind(f"\n{tag}\n")
    return at + 1 if at >= 0 else 0


REASON_CHARS = 160
REMINDER = ("\n\nYour previous reply could not be used ({reason}). Reply with the one JSON object asked "
            "for above and nothing else; keep every quoted passage and reason short.")


# `Reply.finish`: the reply ended normally, or was cut off at the token cap.
STOPPED = "stop"
CUT_OFF = "length"


@dataclass(frozen=True)
class Reply:
    text: str
    input_tokens: int  # every prompt token, those read from or written to a prompt cache included
    output_tokens: int
    finish: str = STOPPED  # STOPPED, CUT_OFF, or the provider's own word ("content_filter", "refusal", ...)
    cached_tokens: int = 0  # input tokens read from the provider's prompt cache (priced lower)
    cache_write_tokens: int = 0  # input tokens written to the prompt cache (Anthropic prices them higher)
    model: str = ""  # the model that answered, as the provider names it ("" when not said)


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
