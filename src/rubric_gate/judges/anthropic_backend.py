"""Anthropic Messages API backend, with the answer schema enforced as structured output."""

from __future__ import annotations

import os
from typing import Any

import anthropic

from rubric_gate.errors import JudgeError
from rubric_gate.judges.backend import JudgeRequest, Reply, classify, request_timeout


def message_params(model: str, request: JudgeRequest) -> dict[str, Any]:
    """The Messages API body for one judge call (also a Message Batches request's `params`)."""
    # The SDK no longer exposes `temperature`; structured output pins the reply shape.
    return {
        "model": model,
        "max_tokens": request.max_tokens,
        "messages": [{"role": "user", "content": request.prompt}],
        "output_config": {"format": {"type": "json_schema", "schema": request.schema}},
    }


def reply_from_message(message: Any) -> Reply:
    """Text and token usage of a Message (a live reply or a batch's succeeded result)."""
    text = "".join(getattr(block, "text", "") for block in message.content if block.type == "text")
    usage = message.usage
    return Reply(text, usage.input_tokens or 0, usage.output_tokens or 0)


class AnthropicBackend:
    def __init__(self, model: str) -> None:
        if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
            raise JudgeError("anthropic judge: set the ANTHROPIC_API_KEY environment variable")
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
