"""Batch requests: the live judge's jobs (streamed by `batch.pending`), serialised one at a
time, cut into batches by the provider's per-batch request-count and size limits."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from rubric_gate.errors import JudgeError
from rubric_gate.judges.runner import Job
from rubric_gate.llm.batch_limits import BatchLimits
from rubric_gate.llm.protocols import JudgeRequest


def new_local_id() -> str:
    """The journal's name for one batch; custom ids are `<local>-<n>-<digest>`, so they are unique across
    batches and match the providers' custom_id rules (letters, digits, `-`, `_`; at most 64)."""
    return "rg" + secrets.token_hex(6)


Serialise = Callable[[str, JudgeRequest], dict[str, Any]]


@dataclass(frozen=True)
class Line:
    custom_id: str
    job: Job
    data: bytes  # the serialised request line, newline-terminated


class BatchCutter:
    """Cuts a stream of jobs into batches. `next_batch()` returns (local id, lines) for one batch,
    produced lazily; consume them before asking for the next. A batch ends before a line that
    would take it past either limit; one line alone above the size limit is an error."""

    def __init__(self, jobs: Iterable[Job], limits: BatchLimits, serialise: Serialise,
                 bind: Callable[[Job], str] | None = None) -> None:
        self._jobs = iter(jobs)
        self.bind = bind  # a suffix for each request's custom_id (what it answers, `keys.request_digest`)
        self._held: Job | None = None
        self.limits = limits
        self.serialise = serialise

    def next_batch(self) -> tuple[str, Iterator[Line]] | None:
        if self._held is None:
            self._held = next(self._jobs, None)
            if self._held is None:
                return None
        local = new_local_id()
        return local, self._lines(local)

    def _lines(self, local: str) -> Iterator[Line]:
        count = size = 0
        while True:
            job = self._held if self._held is not None else next(self._jobs, None)
            self._held = None
            if job is None:
                return
            custom_id = f"{local}-{count}" + (f"-{self.bind(job)}" if self.bind is not None else "")
            data = (json.dumps(self.serialise(custom_id, job.request), ensure_ascii=False,
                               separators=(",", ":")) + "\n").encode("utf-8")
            if len(data) > self.limits.max_bytes:
                raise JudgeError(
                    f"one batch request is {len(data)} bytes, above the batch size limit "
                    f"{self.limits.max_bytes}; judge these pairs live (without --batch)"
                )
            if count >= self.limits.max_requests or size + len(data) > self.limits.max_bytes:
                self._held = job  # opens the next batch
                return
            count += 1
            size += len(data)
            yield Line(custom_id, job, data)
