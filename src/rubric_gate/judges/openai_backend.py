"""OpenAI Chat Completions backend: OpenAI itself or any compatible server via OPENAI_BASE_URL."""

from __future__ import annotations

import os
from typing import Any

import openai

from rubric_gate.errors import JudgeError
from rubric_gate.judges.backend import JudgeRequest, Reply, classify, request_timeout

# Local servers (vLLM, Ollama, llama.cpp) ignore the key, but the SDK insists on one.
LOCAL_PLACEHOLDER_KEY = "not-needed-for-local-server"


def sampling_options(max_tokens: int, *, local: bool, sampled: bool = False) -> dict[str, Any]:
    """Temperature 0 unless RUBRIC_GATE_TEMPERATURE=none (reasoning models reject it).

    Extra `--samples` answers (sample 1, 2, ...) are drawn at RUBRIC_GATE_SAMPLE_TEMPERATURE
    (default 0.7, as in PReMISE's re-runs) so repeated asks can disagree; with
    RUBRIC_GATE_TEMPERATURE=none no temperature is sent at all (the model's default sampling).
    Local servers widely accept `max_tokens`; OpenAI's newer models want `max_completion_tokens`.
    """
    options: dict[str, Any] = {"max_tokens" if local else "max_completion_tokens": max_tokens}
    temperature = os.environ.get("RUBRIC_GATE_TEMPERATURE", "0").strip().lower()
    if temperature not in ("none", ""):
        if sampled:
            temperature = os.environ.get("RUBRIC_GATE_SAMPLE_TEMPERATURE", "0.7").strip()
        options["temperature"] = float(temperature)
    return options


def chat_params(model: str, request: JudgeRequest, *, local: bool) -> dict[str, Any]:
    """The Chat Completions body for one judge call (also an OpenAI Batch request line's `body`)."""
    return {
        "model": model,
        "messages": [{"role": "user", "content": request.prompt}],
        **sampling_options(request.max_tokens, local=local, sampled=request.sampled),
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": request.schema_name, "schema": request.schema, "strict": True},
        },
    }


def reply_from_completion(completion: Any) -> Reply:
    """Text and token usage of a ChatCompletion (a live reply or a batch output line's body)."""
    text = completion.choices[0].message.content if completion.choices else None
    usage = completion.usage
    return Reply(
        text or "",
        usage.prompt_tokens if usage else 0,
        usage.completion_tokens if usage else 0,
    )


def openai_credentials() -> tuple[str, bool]:
    """The API key (a placeholder for a keyless local server) and whether the server is local."""
    api_key = os.environ.get("OPENAI_API_KEY")
    local = bool(os.environ.get("OPENAI_BASE_URL"))
    if not api_key:
        if not local:
            raise JudgeError(
                "openai judge: set the OPENAI_API_KEY environment variable "
                "(or OPENAI_BASE_URL for a local OpenAI-compatible server)"
            )
        api_key = LOCAL_PLACEHOLDER_KEY
    return api_key, local


class OpenAIBackend:
    def __init__(self, model: str) -> None:
        api_key, self.local = openai_credentials()
        self.model = model
        # Our runner owns retries (backoff, retry-after, adaptive concurrency): the SDK's are off.
        self.client = openai.AsyncOpenAI(api_key=api_key, max_retries=0, timeout=request_timeout())

    async def complete(self, request: JudgeRequest) -> Reply:
        try:
            completion = await self.client.chat.completions.create(
                **chat_params(self.model, request, local=self.local)
            )
        except openai.APIError as exc:
            raise classify(exc, "openai") from None
        return reply_from_completion(completion)

    async def aclose(self) -> None:
        await self.client.close()
