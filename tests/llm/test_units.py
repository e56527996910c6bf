"""The call layer's pure pieces: judge specs, prices, backoff and retry-after, the mapping of
SDK errors to typed ones, the adaptive limiter."""

from __future__ import annotations

import asyncio
from typing import ClassVar

import pytest

from rubric_gate.errors import JudgeError
from rubric_gate.llm.errors import (
    AuthFailure,
    FatalError,
    TransientError,
    classify,
    parse_retry_after,
)
from rubric_gate.llm.limiter import AdaptiveLimiter
from rubric_gate.llm.pricing import estimate_cost, model_price
from rubric_gate.llm.retry import RetryPolicy
from rubric_gate.llm.spec import parse_judge_spec


def test_judge_spec() -> None:
    spec = parse_judge_spec("openai:gpt-4o-mini")
    assert (spec.provider, spec.model, str(spec)) == ("openai", "gpt-4o-mini", "openai:gpt-4o-mini")
    for bad in ["gpt-4o", "openai:", "bedrock:claude"]:
        with pytest.raises(JudgeError):
            parse_judge_spec(bad)


def test_prices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RUBRIC_GATE_PRICES", raising=False)
    assert model_price("claude-haiku-4-5-20251001") == model_price("claude-haiku-4-5") == (1.0, 5.0)
    assert model_price("gpt-4o-2024-08-06") == (2.5, 10.0)
    assert estimate_cost("gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.75)
    assert estimate_cost("llama3.1:8b", 10, 10) is None
    monkeypatch.setenv("RUBRIC_GATE_PRICES", '{"llama3.1:8b": [0, 0], "gpt-4o": [1, 2]}')
    assert estimate_cost("llama3.1:8b", 10, 10) == 0 and model_price("gpt-4o") == (1.0, 2.0)
    monkeypatch.setenv("RUBRIC_GATE_PRICES", "{not json")
    with pytest.raises(JudgeError, match="RUBRIC_GATE_PRICES"):
        model_price("gpt-4o")


def test_backoff_and_retry_after() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=8.0)
    assert all(0.5 <= policy.delay(0, None) <= 1.0 for _ in range(50))
    assert all(4.0 <= policy.delay(5, None) <= 8.0 for _ in range(50))  # capped
    assert 3.0 <= policy.delay(0, 3.0) <= 3.25
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    # The HTTP-date form (RFC 9110): seconds from now; a date already past means "now".
    date = "Wed, 21 Oct 2015 07:28:00 GMT"
    assert parse_retry_after({"retry-after": date}, now=1445412480.0 - 30) == 30.0
    assert parse_retry_after({"retry-after": date}) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None


def test_classify_statuses() -> None:
    class Resp:
        headers: ClassVar[dict[str, str]] = {"retry-after": "1"}

    class StatusErr(Exception):
        def __init__(self, status: int) -> None:
            self.status_code, self.response, self.message = status, Resp(), "m"

    assert isinstance(classify(StatusErr(401), "p"), AuthFailure)
    assert isinstance(classify(StatusErr(403), "p"), AuthFailure)
    limited = classify(StatusErr(429), "p")
    assert isinstance(limited, TransientError) and limited.rate_limited and limited.retry_after == 1.0
    overloaded = classify(StatusErr(529), "p")  # Anthropic's "overloaded": back pressure like a 429
    assert isinstance(overloaded, TransientError) and overloaded.rate_limited and overloaded.retry_after == 1.0
    unavailable = classify(StatusErr(503), "p")
    assert isinstance(unavailable, TransientError) and not unavailable.rate_limited
    assert isinstance(classify(StatusErr(404), "p"), FatalError)


def test_a_server_error_that_says_never_is_final_and_shows_its_message() -> None:
    """501/505 (and llama.cpp's `not_supported_error` at any status) cannot succeed on a re-ask:
    the run stops with the server's own words, instead of 6 retries and 'HTTP 501'."""

    class StatusErr(Exception):
        def __init__(self, status: int, body: object) -> None:
            self.status_code, self.body, self.message = status, body, f"Error code: {status}"
            self.response = None

    llama = {"code": 501, "message": "This server does not support embeddings.\nStart it with --embeddings",
             "type": "not_supported_error"}
    error = classify(StatusErr(501, llama), "openai")
    assert isinstance(error, FatalError)
    assert str(error) == ("openai: HTTP 501: This server does not support embeddings. "
                          "Start it with --embeddings")
    assert isinstance(classify(StatusErr(505, None), "p"), FatalError)
    # The type alone is final too; Anthropic's SDK keeps the whole {"type": "error", "error": {...}}.
    wrapped = {"type": "error", "error": {"type": "not_supported_error", "message": "no tools here"}}
    assert str(classify(StatusErr(500, wrapped), "anthropic")) == "anthropic: HTTP 500: no tools here"
    assert isinstance(classify(StatusErr(500, {"type": "server_error", "message": "x"}), "p"), TransientError)


def test_a_quote_occurs_only_as_whole_words() -> None:
    """SmolLM2 answered a grounding audit with the quote "no", found inside "not": a quote is
    evidence only as whole words of the text (case, whitespace, typographic quotes and edge
    punctuation aside), for the judge's quotes and the audit's alike."""
    from rubric_gate.audit.parse import parse_grounding
    from rubric_gate.llm.errors import MalformedReply
    from rubric_gate.llm.replies import occurs_in

    check = "Every finding states the specific setting (for example 'publicAccess: container'), not only the consequence."
    assert not occurs_in("no", check) and not occurs_in("ing", check) and not occurs_in("", check)
    assert occurs_in("not only", check) and occurs_in("The Specific  setting", check)
    assert occurs_in("\u2018publicAccess: container\u2019", check) and occurs_in("consequence.", check)
    with pytest.raises(MalformedReply, match="does not occur in the check"):
        parse_grounding('{"beyond_task": "yes", "quote": "no", "reason": "r"}', "Review the cloud.", check)


def test_limiter_halves_on_rate_limits_and_recovers() -> None:
    async def scenario() -> tuple[int, int, int]:
        limiter = AdaptiveLimiter(8, cooldown=60)
        limiter.on_rate_limited()
        limiter.on_rate_limited()  # same burst: one cut
        after_burst = limiter.limit
        for _ in range(4):
            limiter.on_success()
        recovered = limiter.limit
        peak = 0

        async def work() -> None:
            nonlocal peak
            async with limiter:
                peak = max(peak, limiter.in_flight)
                await asyncio.sleep(0.01)

        await asyncio.gather(*(work() for _ in range(20)))
        return after_burst, recovered, peak

    after_burst, recovered, peak = asyncio.run(scenario())
    assert (after_burst, recovered) == (4, 5)
    assert peak <= 5 + 2  # grows by one per `limit` successes, never jumps


