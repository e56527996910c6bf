"""What one batch may hold, per provider: below the batch clients (`protocols.BatchClient.limits`)
and the batch runner that cuts requests into batches (`batch.requests`), so neither imports the other."""

from __future__ import annotations

import os
from dataclasses import dataclass

from rubric_gate.errors import JudgeError

ENV_MAX_REQUESTS = "RUBRIC_GATE_BATCH_MAX_REQUESTS"
ENV_MAX_BYTES = "RUBRIC_GATE_BATCH_MAX_BYTES"


@dataclass(frozen=True)
class BatchLimits:
    """What one batch may hold: requests, and bytes of serialised request lines."""

    max_requests: int
    max_bytes: int

    def lowered_by_env(self) -> BatchLimits:
        """RUBRIC_GATE_BATCH_MAX_REQUESTS / _MAX_BYTES can only lower the provider's limits."""
        limits = self
        for name, attr in ((ENV_MAX_REQUESTS, "max_requests"), (ENV_MAX_BYTES, "max_bytes")):
            text = os.environ.get(name)
            if not text:
                continue
            try:
                value = int(text)
            except ValueError:
                raise JudgeError(f"{name}: expected a whole number, got {text!r}") from None
            if value < 1:
                raise JudgeError(f"{name}: must be at least 1, got {value}")
            limits = BatchLimits(**{**limits.__dict__, attr: min(getattr(limits, attr), value)})
        return limits
