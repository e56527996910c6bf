"""OpenAI: Chat Completions live (OpenAI itself or any compatible server via OPENAI_BASE_URL)
and the Batch API (upload a JSONL input file, create a batch for the same endpoint with a 24h
window and metadata naming the tool and store, retrieve it, stream its output and error
files; vLLM implements /v1/files and /v1/batches too)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlparse

import openai
from openai.types.chat import ChatCompletion
from pydantic import ValidationError

from rubric_gate.llm.batch_limits import BatchLimits
from rubric_gate.llm.errors import classify, provider_errors
from rubric_gate.llm.protocols import STOPPED, BatchState, JudgeRequest, Reply, RequestResult
from rubric_gate.llm.registry import provider
from rubric_gate.llm.replies import without_keywords
from rubric_gate.llm.retry import request_timeout

# The SDK retries the few control calls a batch run makes (create, retrieve, list, download).
CONTROL_RETRIES = 5


def live_client(model: str) -> OpenAIClient:
    return OpenAIClient(model)


def batch_client(model: str) -> OpenAIBatches:
    return OpenAIBatches(model)


# Local servers (vLLM, Ollama, llama.cpp) ignore the key, but the SDK insists on one.
LOCAL_PLACEHOLDER_KEY = "not-needed-for-local-server"
# OpenAI's strict structured outputs take `pattern` and `format` on strings, `minItems` and
# `maxItems` on arrays, `enum`, but refuse string lengths (its Structured Outputs guide,
# "Supported properties"): those bounds go into the description there. Compatible servers
# (llama.cpp's JSON-schema grammar, vLLM) enforce them, so they get the schema whole.
OPENAI_UNSUPPORTED = frozenset({"minLength", "maxLength"})
# A re-ask after a reply that did not parse: each one raises the temperature by this step (at
# most to 1.0) and sends a new seed, so a deterministic server does not repeat the same reply.
REASK_TEMPERATURE_STEP = 0.4


def sampling_options(max_tokens: int, *, local: bool, sampled: bool = False, reask: int = 0) -> dict[str, Any]:
    """Temperature 0 unless RUBRIC_GATE_TEMPERATURE=none (reasoning models reject it).

    Extra `--samples` answers (sample 1, 2, ...) are drawn at RUBRIC_GATE_SAMPLE_TEMPERATURE
    (default 0.7, as in PReMISE's re-runs) so repeated asks can disagree; with
    RUBRIC_GATE_TEMPERATURE=none no temperature is sent at all (the model's default sampling).
    A re-ask steps the temperature up and sends a seed (`reask`): never the identical request.
    Local servers widely accept `max_tokens`; OpenAI's newer models want `max_completion_tokens`.
    """
    options: dict[str, Any] = {"max_tokens" if local else "max_completion_tokens": max_tokens}
    temperature = os.environ.get("RUBRIC_GATE_TEMPERATURE", "0").strip().lower()
    if temperature not in ("none", ""):
        if sampled:
            temperature = os.environ.get("RUBRIC_GATE_SAMPLE_TEMPERATURE", "0.7").strip()
        value = float(temperature)
        if reask:
            value = max(value, min(1.0, value + REASK_TEMPERATURE_STEP * reask))
        options["temperature"] = value
    if reask:
        options["seed"] = reask
    return options


def chat_params(model: str, request: JudgeRequest, *, local: bool) -> dict[str, Any]:
    """The Chat Completions body for one judge call (also an OpenAI Batch request line's `body`).

    The prompt is one user message whose shared part comes first (instructions, task, input,
    output; the check last), so OpenAI's automatic prefix caching and a local server's prompt
    cache reuse it from one check of an item to the next."""
    schema = request.schema if local else without_keywords(request.schema, OPENAI_UNSUPPORTED)
    return {
        "model": model,
        "messages": [{"role": "user", "content": request.prompt}],
        **sampling_options(request.max_tokens, local=local, sampled=request.sampled, reask=request.reask),
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": request.schema_name, "schema": schema, "strict": True},
        },
    }


def reply_from_completion(completion: Any) -> Reply:
    """Text, finish reason, served model and token usage (cached prompt tokens included) of a
    ChatCompletion (a live reply or a batch output line's body)."""
    choice = completion.choices[0] if completion.choices else None
    text = choice.message.content if choice is not None and choice.message is not None else None
    usage = completion.usage
    details = getattr(usage, "prompt_tokens_details", None) if usage else None
    return Reply(
        text or "",
        (usage.prompt_tokens or 0) if usage else 0,
        (usage.completion_tokens or 0) if usage else 0,
        finish=str(getattr(choice, "finish_reason", None) or STOPPED),
        cached_tokens=int(getattr(details, "cached_tokens", None) or 0),
        model=str(getattr(completion, "model", None) or ""),
    )


def is_compatible_server(base_url: str | None) -> bool:
    """OPENAI_BASE_URL names a server other than OpenAI's own (vLLM, Ollama, llama.cpp, a proxy)."""
    if not base_url:
        return False
    host = (urlparse(base_url).hostname or "").lower()
    return not (host == "openai.com" or host.endswith(".openai.com"))


def openai_credentials() -> tuple[str, bool]:
    """The API key (a placeholder for a keyless local server) and whether the server is local."""
    api_key = os.environ.get("OPENAI_API_KEY")
    local = is_compatible_server(os.environ.get("OPENAI_BASE_URL"))
    if not api_key:
        provider("openai").require_credentials()  # OPENAI_BASE_URL set: a keyless local server
        api_key = LOCAL_PLACEHOLDER_KEY
    return api_key, local


class OpenAIClient:
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

ENDPOINT: Final = "/v1/chat/completions"
# Per batch input file: 50,000 requests and 200 MB (OpenAI Batch API reference).
LIMITS = BatchLimits(max_requests=50_000, max_bytes=200_000_000)
ENDED = ("completed", "expired", "cancelled", "failed")
LOOKBACK_S = 120.0
LOCAL_ID_KEY = "rubric_gate_batch"


class OpenAIBatches:
    provider = "openai"

    def __init__(self, model: str) -> None:
        api_key, self.local = openai_credentials()
        self.model = model
        self.limits = LIMITS.lowered_by_env()
        self.client = openai.OpenAI(api_key=api_key, max_retries=CONTROL_RETRIES, timeout=request_timeout())

    def request_line(self, custom_id: str, request: JudgeRequest) -> dict[str, Any]:
        return {"custom_id": custom_id, "method": "POST", "url": ENDPOINT,
                "body": chat_params(self.model, request, local=self.local)}

    def submit(self, local: str, requests_file: Path, metadata: dict[str, str]) -> str:
        with provider_errors(self.provider, "uploading the batch input file"), requests_file.open("rb") as handle:
            uploaded = self.client.files.create(file=(f"{local}.jsonl", handle, "application/jsonl"),
                                                purpose="batch")
        # Not retried by the SDK: a retry after a lost response could create the batch twice;
        # a rerun finds it by its metadata instead.
        with provider_errors(self.provider, "creating a batch"):
            batch = self.client.with_options(max_retries=0).batches.create(
                input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window="24h",
                metadata={**metadata, LOCAL_ID_KEY: local},
            )
        return batch.id

    def retrieve(self, batch_id: str) -> BatchState:
        with provider_errors(self.provider, f"retrieving batch {batch_id}"):
            batch = self.client.batches.retrieve(batch_id)
        counts = batch.request_counts
        total, done, failed = (counts.total, counts.completed, counts.failed) if counts else (0, 0, 0)
        ended = batch.status in ENDED
        rest = max(0, total - done - failed)
        detail = ""
        if batch.status == "failed" and batch.errors and batch.errors.data:
            detail = "; ".join(f"{e.code}: {e.message}" for e in batch.errors.data[:3])
        return BatchState(
            batch_id, batch.status, ended, succeeded=done, errored=failed,
            expired=rest if batch.status == "expired" else 0,
            canceled=rest if batch.status == "cancelled" else 0,
            processing=0 if ended else rest, detail=detail,
        )

    def results(self, batch_id: str) -> Iterator[RequestResult]:
        with provider_errors(self.provider, f"retrieving batch {batch_id}"):
            batch = self.client.batches.retrieve(batch_id)
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            with provider_errors(self.provider, f"reading file {file_id} of batch {batch_id}"), \
                    self.client.files.with_streaming_response.content(file_id) as response:
                for text in response.iter_lines():
                    try:
                        line = json.loads(text)
                    except json.JSONDecodeError:
                        continue  # no readable custom_id: its pairs count as without a result
                    if isinstance(line, dict):
                        yield _result(line)

    def find(self, local: str, created_after: float, requests: int, exclude: set[str]) -> str | None:
        """The batch whose metadata names `local` (its id was lost to a kill mid-submit)."""
        with provider_errors(self.provider, "listing batches"):
            for batch in self.client.batches.list(limit=100):
                if batch.created_at < created_after - LOOKBACK_S:
                    break
                if (batch.metadata or {}).get(LOCAL_ID_KEY) == local and batch.id not in exclude:
                    return batch.id
        return None

    def close(self) -> None:
        self.client.close()


def _result(line: dict[str, Any]) -> RequestResult:
    custom_id = str(line.get("custom_id"))
    response = line.get("response") or {}
    error = line.get("error")
    if not error and response.get("status_code") == 200:
        try:
            completion = ChatCompletion.model_validate(response.get("body"))
        except ValidationError:
            return RequestResult(custom_id, None, "malformed reply (unreadable chat completion)")
        return RequestResult(custom_id, reply_from_completion(completion))
    if error:
        return RequestResult(custom_id, None, f"errored ({error.get('code')}: {str(error.get('message'))[:200]})")
    body = response.get("body") or {}
    message = (body.get("error") or {}).get("message", "") if isinstance(body, dict) else ""
    return RequestResult(custom_id, None, f"errored (HTTP {response.get('status_code')}: {str(message)[:200]})")
