"""What the runner needs from a provider, and the neutral errors backends translate SDK errors to."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from rubric_gate.errors import JudgeError
from rubric_gate.judges.spec import JudgeSpec
from rubric_gate.tuning import env_number

DEFAULT_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class JudgeRequest:
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


class TransientError(Exception):
    """Worth retrying: 429, 5xx, timeouts, connection errors."""

    def __init__(self, reason: str, retry_after: float | None = None, rate_limited: bool = False) -> None:
        super().__init__(reason)
        self.retry_after = retry_after
        self.rate_limited = rate_limited


class AuthFailure(Exception):
    """Credentials rejected: stop the whole run."""


class FatalError(Exception):
    """A non-retryable provider error (bad request, unknown model): stop the whole run."""


class Backend(Protocol):
    async def complete(self, request: JudgeRequest) -> Reply: ...

    async def aclose(self) -> None: ...


def request_timeout() -> float:
    return env_number("RUBRIC_GATE_JUDGE_TIMEOUT", DEFAULT_TIMEOUT_S, minimum=0.001)


def parse_retry_after(headers: Any) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (seconds form); None if absent."""
    if headers is None:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue
        if seconds >= 0:
            return seconds
    return None


def classify(exc: Exception, provider: str) -> Exception:
    """Map an SDK exception (both SDKs share this shape) to a neutral error."""
    status = getattr(exc, "status_code", None)
    response = getattr(exc, "response", None)
    if isinstance(status, int):
        if status in (401, 403):
            return AuthFailure(f"{provider}: authentication failed (HTTP {status}); check the API key")
        if status in (408, 409, 429) or status >= 500:
            after = parse_retry_after(getattr(response, "headers", None))
            return TransientError(f"HTTP {status}", after, rate_limited=status == 429)
        detail = getattr(exc, "message", None) or type(exc).__name__
        return FatalError(f"{provider}: HTTP {status}: {str(detail)[:300]}")
    name = type(exc).__name__
    if "Timeout" in name:
        return TransientError("timeout")
    if "Connection" in name:
        return TransientError("connection error")
    return FatalError(f"{provider}: {name}: {str(exc)[:300]}")


def make_backend(spec: JudgeSpec) -> Backend:
    if spec.provider == "anthropic":
        from rubric_gate.judges.anthropic_backend import AnthropicBackend

        return AnthropicBackend(spec.model)
    if spec.provider == "openai":
        from rubric_gate.judges.openai_backend import OpenAIBackend

        return OpenAIBackend(spec.model)
    raise JudgeError(f"unknown provider '{spec.provider}'")
