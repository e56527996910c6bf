"""Anthropic: the Messages API live (the answer schema enforced as structured output) and
Message Batches (create with per-request custom_id and params, retrieve, stream results, list
to find a batch whose id was lost)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
from anthropic.types.messages import MessageBatch

from rubric_gate.llm.batch_limits import BatchLimits
from rubric_gate.llm.errors import classify, provider_errors
from rubric_gate.llm.protocols import (
    CUT_OFF,
    STOPPED,
    BatchState,
    JudgeRequest,
    Reply,
    RequestResult,
)
from rubric_gate.llm.replies import without_keywords
from rubric_gate.llm.retry import request_timeout

# The SDK retries the few control calls a batch run makes (create, retrieve, list, download).
CONTROL_RETRIES = 5


def live_client(model: str) -> AnthropicClient:
    return AnthropicClient(model)


def batch_client(model: str) -> AnthropicBatches:
    return AnthropicBatches(model)


# Anthropic's structured outputs refuse numeric ranges, string lengths, `maxItems` and a
# `minItems` above 1 (its SDK's `transform_schema` moves them into the description, as here);
# `enum` and `minItems` 0 or 1 are enforced. The parsers check every bound after the reply.
ANTHROPIC_UNSUPPORTED = frozenset({"minLength", "maxLength", "maxItems", "minimum", "maximum", "minItems>1"})
CUT_OFF_REASONS = frozenset({"max_tokens", "model_context_window_exceeded"})
STOPPED_REASONS = frozenset({"end_turn", "stop_sequence"})


def content(request: JudgeRequest) -> str | list[dict[str, Any]]:
    """The user message: with a shared prefix (instructions, task, input, output), two text
    blocks, the first marked for the prompt cache, so the next check of the same item reads it
    from the cache (a tenth of the input price) instead of paying for it again. A prefix below
    the model's minimum cacheable length is simply not cached."""
    cut = request.shared_prefix
    if not 0 < cut < len(request.prompt):
        return request.prompt
    return [{"type": "text", "text": request.prompt[:cut], "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": request.prompt[cut:]}]


def message_params(model: str, request: JudgeRequest) -> dict[str, Any]:
    """The Messages API body for one judge call (also a Message Batches request's `params`)."""
    # The SDK no longer exposes `temperature`: a re-ask differs by the format reminder at the end
    # of its prompt (JudgeRequest.attempt); structured output pins the reply shape.
    return {
        "model": model,
        "max_tokens": request.max_tokens,
        "messages": [{"role": "user", "content": content(request)}],
        "output_config": {"format": {"type": "json_schema",
                                     "schema": without_keywords(request.schema, ANTHROPIC_UNSUPPORTED)}},
    }


def reply_from_message(message: Any) -> Reply:
    """Text, stop reason, served model and token usage of a Message (a live reply or a batch's
    succeeded result). Anthropic counts cached prompt tokens apart from `input_tokens`: reads
    and writes are added back, so `input_tokens` is every prompt token, as OpenAI counts it."""
    text = "".join(getattr(block, "text", "") for block in message.content if block.type == "text")
    usage = message.usage
    read = getattr(usage, "cache_read_input_tokens", None) or 0
    written = getattr(usage, "cache_creation_input_tokens", None) or 0
    reason = str(getattr(message, "stop_reason", None) or "")
    finish = CUT_OFF if reason in CUT_OFF_REASONS else STOPPED if reason in STOPPED_REASONS or not reason else reason
    return Reply(text, (usage.input_tokens or 0) + read + written, usage.output_tokens or 0, finish=finish,
                 cached_tokens=read, cache_write_tokens=written, model=str(getattr(message, "model", None) or ""))


class AnthropicClient:
    def __init__(self, model: str) -> None:
        self.model = model
        # Our runner owns retries (backoff, retry-after, adaptive concurrency): the SDK's are off.
        self.client = anthropic.AsyncAnthropic(max_retries=0, timeout=request_timeout())

    async def complete(self, request: JudgeRequest) -> Reply:
        try:
            # The SDK no longer exposes `temperature` (API 2026-10-21 rejects it), so `--samples`
            # answers rely on the model's default sampling; structured output pins the reply shape.
            message = await self.client.messages.create(**message_params(self.model, request))
        except anthropic.APIError as exc:
            raise classify(exc, "anthropic") from None
        return reply_from_message(message)

    async def aclose(self) -> None:
        await self.client.close()


# Per batch: 100,000 requests or 256 MB, whichever comes first (Anthropic's batch processing
# guide). The margin leaves room for the body's own JSON around the requests.
LIMITS = BatchLimits(max_requests=100_000, max_bytes=256_000_000 - 64_000)
LOOKBACK_S = 120.0  # clock skew allowed when looking for a batch created after an intent


BODY_HEAD, BODY_TAIL = b'{"requests":[', b"]}"


def _body(requests_file: Path) -> Iterator[bytes]:
    """The JSONL requests file as one JSON body: newline-separated lines become comma-separated."""
    yield BODY_HEAD
    with requests_file.open("rb") as handle:
        for index, line in enumerate(handle):
            yield (b"," if index else b"") + line.rstrip(b"\n")
    yield BODY_TAIL


class AnthropicBatches:
    provider = "anthropic"

    def __init__(self, model: str) -> None:
        self.model = model
        self.limits = LIMITS.lowered_by_env()
        self.client = anthropic.Anthropic(max_retries=CONTROL_RETRIES, timeout=request_timeout())

    def request_line(self, custom_id: str, request: JudgeRequest) -> dict[str, Any]:
        return {"custom_id": custom_id, "params": message_params(self.model, request)}

    def submit(self, local: str, requests_file: Path, metadata: dict[str, str]) -> str:
        """POST the batch body `{"requests": [...]}` streamed from the requests file, so not even
        one batch is parsed into memory. Message Batches take no metadata: the custom ids carry
        the journal's local id. Not retried by the SDK: a retry after a lost response could
        create the batch twice; a rerun finds it through `find` instead."""
        size, count = requests_file.stat().st_size, 0
        with requests_file.open("rb") as handle:
            count = sum(1 for _ in handle)
        length = len(BODY_HEAD) + size - count + max(0, count - 1) + len(BODY_TAIL)
        with provider_errors(self.provider, "creating a message batch"):
            batch = self.client.with_options(max_retries=0).post(
                "/v1/messages/batches", cast_to=MessageBatch, content=_body(requests_file),
                options={"headers": {"Content-Type": "application/json", "Content-Length": str(length)}},
            )
        return batch.id

    def retrieve(self, batch_id: str) -> BatchState:
        with provider_errors(self.provider, f"retrieving batch {batch_id}"):
            batch = self.client.messages.batches.retrieve(batch_id)
        counts = batch.request_counts
        return BatchState(batch_id, batch.processing_status, batch.processing_status == "ended",
                          counts.succeeded, counts.errored, counts.expired, counts.canceled, counts.processing)

    def results(self, batch_id: str) -> Iterator[RequestResult]:
        with provider_errors(self.provider, f"reading the results of batch {batch_id}"):
            for line in self.client.messages.batches.results(batch_id):
                result = line.result
                if result.type == "succeeded":
                    yield RequestResult(line.custom_id, reply_from_message(result.message))
                elif result.type == "errored":
                    error = getattr(getattr(result, "error", None), "error", None)
                    kind = getattr(error, "type", "error")
                    message = getattr(error, "message", "")
                    yield RequestResult(line.custom_id, None, f"errored ({kind}: {str(message)[:200]})")
                else:
                    yield RequestResult(line.custom_id, None, str(result.type))

    def find(self, local: str, created_after: float, requests: int, exclude: set[str]) -> str | None:
        """A batch created after the intent with its request count: Message Batches carry no
        metadata. A wrong match is harmless: results are routed by custom ids, which name `local`."""
        with provider_errors(self.provider, "listing message batches"):
            for batch in self.client.messages.batches.list(limit=100):
                if batch.created_at.timestamp() < created_after - LOOKBACK_S:
                    break
                counts = batch.request_counts
                total = counts.succeeded + counts.errored + counts.expired + counts.canceled + counts.processing
                if batch.id not in exclude and total == requests:
                    return batch.id
        return None

    def close(self) -> None:
        self.client.close()
