"""OpenAI Batch: upload a JSONL input file (purpose=batch), create a batch for the Chat
Completions endpoint the live judge uses (24h window, metadata naming the tool and store),
retrieve it, and stream its output and error files. Works against compatible servers that
implement /v1/files and /v1/batches (vLLM does) through OPENAI_BASE_URL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import openai
from openai.types.chat import ChatCompletion
from pydantic import ValidationError

from rubric_gate.batch.client import CONTROL_RETRIES, BatchState, RequestResult, provider_errors
from rubric_gate.batch.requests import BatchLimits
from rubric_gate.judges.backend import JudgeRequest, request_timeout
from rubric_gate.judges.openai_backend import (
    chat_params,
    openai_credentials,
    reply_from_completion,
)

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
