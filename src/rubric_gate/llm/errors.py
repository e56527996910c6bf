"""Typed errors of a model call, and the mapping from SDK errors to them.

Provider modules translate SDK exceptions with `classify`; the retry loop decides on the type
alone (no attributes looked up on foreign exceptions past this module).
"""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rubric_gate.errors import JudgeAuthError, JudgeError

# 429: rate limited; 529: Anthropic's "overloaded". Both ask the caller to send less: back off
# and lower the concurrency, not only wait.
BACK_PRESSURE_STATUSES = frozenset({429, 529})
# 5xx that say "never" rather than "not now" (RFC 9110): 501 Not Implemented (llama-server's
# /v1/embeddings without --embeddings), 505 HTTP Version Not Supported. Asking again cannot help.
FINAL_SERVER_STATUSES = frozenset({501, 505})
# An error body's `type` that says the same whatever the status (llama.cpp: not_supported_error).
FINAL_ERROR_TYPES = frozenset({"not_supported_error"})


class ProviderError(Exception):
    """A neutral error raised by a live or batch client."""


class TransientError(ProviderError):
    """Worth retrying: 429, 529, other 5xx (not 501/505), 408/409, timeouts, connection errors."""

    def __init__(self, reason: str, retry_after: float | None = None, rate_limited: bool = False, *,
                 timed_out: bool = False, unreachable: bool = False, url: str = "") -> None:
        super().__init__(reason)
        self.retry_after = retry_after  # seconds the server asked for, if it did
        self.rate_limited = rate_limited  # back pressure: the caller should lower its concurrency
        self.timed_out = timed_out  # no reply in time: the server may be overloaded, send less too
        self.unreachable = unreachable  # no connection at all (refused, unknown host): maybe a dead endpoint
        self.url = url  # where the request went, for the one line that names a dead endpoint

    @property
    def back_pressure(self) -> bool:
        """The server is asking for less, by status (429/529) or by not answering in time."""
        return self.rate_limited or self.timed_out


class AuthFailure(ProviderError):
    """Credentials rejected: stop the whole run."""


class FatalError(ProviderError):
    """A non-retryable provider error (bad request, unknown model): stop the whole run."""


class MalformedReply(ValueError):
    """The reply does not match the schema; the caller may ask again, never guess. The message
    names what was wrong, the reply's own words included (for the failure listing); `hint`, when
    given, is what the re-ask's reminder says instead: words that never echo the reply, so a
    model that copies text from its prompt cannot copy its rejected value back."""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


class UnansweredError(JudgeError):
    """A run ended with calls that have no valid answer (the good ones are saved); nothing was
    guessed. `stats` is the run's statistics object, `failures` one line per call or pair."""

    def __init__(self, message: str, *, failures: list[str], stats: Any = None) -> None:
        super().__init__(message)
        self.failures = failures
        self.stats = stats


def parse_retry_after(headers: Any, *, now: float | None = None) -> float | None:
    """Seconds from `retry-after-ms`, or `retry-after` in seconds or as an HTTP date; None if
    absent or unreadable."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            seconds = float(value) / 1000.0
        except ValueError:
            seconds = -1.0
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(str(value))
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
        return max(0.0, seconds)
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def classify(exc: Exception, provider: str) -> ProviderError:
    """Map an SDK exception (both SDKs share this shape) to a neutral error."""
    status = getattr(exc, "status_code", None)
    response = getattr(exc, "response", None)
    if isinstance(status, int):
        if status in (401, 403):
            return AuthFailure(f"{provider}: authentication failed (HTTP {status}); check the API key")
        kind, said = _error_body(exc)
        final = status in FINAL_SERVER_STATUSES or kind in FINAL_ERROR_TYPES
        if not final and (status in (408, 409) or status in BACK_PRESSURE_STATUSES or status >= 500):
            after = parse_retry_after(getattr(response, "headers", None))
            return TransientError(f"HTTP {status}", after, rate_limited=status in BACK_PRESSURE_STATUSES)
        detail = said or getattr(exc, "message", None) or type(exc).__name__
        return FatalError(f"{provider}: HTTP {status}: {' '.join(str(detail).split())[:300]}")
    name = type(exc).__name__
    url = _request_url(exc)
    if "Timeout" in name:
        return TransientError("timeout", timed_out=True, url=url)
    if "Connection" in name:
        return TransientError("connection error", unreachable=True, url=url)
    return FatalError(f"{provider}: {name}: {str(exc)[:300]}")


def _error_body(exc: Exception) -> tuple[str, str]:
    """The error body's `type` and `message`, when the server sent a JSON error: the OpenAI SDK
    keeps the body's `error` object, Anthropic's the whole `{"type": "error", "error": {...}}`."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    if not isinstance(body, dict):
        return "", ""
    kind, message = body.get("type"), body.get("message")
    return (kind if isinstance(kind, str) else ""), (message if isinstance(message, str) else "")


def _request_url(exc: Exception) -> str:
    try:  # httpx raises RuntimeError for a request never attached; the SDKs always attach one
        return str(getattr(getattr(exc, "request", None), "url", "") or "")
    except RuntimeError:
        return ""


class EndpointUnreachable(JudgeError):
    """Connections to the provider failed again and again with no reply in between: a dead
    endpoint (a wrong base URL, a server that is not running). The run stops at once."""


@contextmanager
def provider_errors(provider: str, action: str) -> Iterator[None]:
    """For a batch run's control calls (the SDK retries them): SDK errors as one-line
    JudgeErrors, rejected credentials as JudgeAuthError."""
    try:
        yield
    except JudgeError:
        raise
    except Exception as exc:  # the SDKs' APIError family, after their own retries
        if not hasattr(exc, "request") and not hasattr(exc, "status_code"):
            raise
        neutral = classify(exc, provider)
        if isinstance(neutral, AuthFailure):
            raise JudgeAuthError(str(neutral)) from None
        if isinstance(neutral, TransientError):
            raise JudgeError(f"{provider} batch: {action} failed ({neutral}); the journal keeps every "
                             "submitted batch, re-run to resume") from None
        raise JudgeError(f"{provider} batch: {action}: {neutral}") from None
