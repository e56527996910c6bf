"""The one layer that asks a model: request and reply shapes and the client protocols
(`protocols`), typed errors (`errors`), the provider registry (`registry`, `spec`), one retry
loop (`retry`), the concurrency limiter and call budget (`limiter`), the structured-reply
entry point (`replies`), the dry-run estimate and failure listing (`accounting`), stored
questions (`asks`) and prices (`pricing`). See docs/providers.md.

Names load on first use (PEP 562): parsing a judge spec or checking for a key loads no SDK.
"""

from __future__ import annotations

from rubric_gate.lazy import lazy_exports

_EXPORTS = {
    "JudgeRequest": "rubric_gate.llm.protocols",
    "Reply": "rubric_gate.llm.protocols",
    "LiveClient": "rubric_gate.llm.protocols",
    "BatchClient": "rubric_gate.llm.protocols",
    "TransientError": "rubric_gate.llm.errors",
    "AuthFailure": "rubric_gate.llm.errors",
    "FatalError": "rubric_gate.llm.errors",
    "MalformedReply": "rubric_gate.llm.errors",
    "UnansweredError": "rubric_gate.llm.errors",
    "PROVIDERS": "rubric_gate.llm.registry",
    "Provider": "rubric_gate.llm.registry",
    "JudgeSpec": "rubric_gate.llm.spec",
    "parse_judge_spec": "rubric_gate.llm.spec",
    "live_client": "rubric_gate.llm.spec",
    "batch_client": "rubric_gate.llm.spec",
    "RetryPolicy": "rubric_gate.llm.retry",
    "call_with_retries": "rubric_gate.llm.retry",
    "AdaptiveLimiter": "rubric_gate.llm.limiter",
    "refuse_over_budget": "rubric_gate.llm.limiter",
    "reply_object": "rubric_gate.llm.replies",
    "Ask": "rubric_gate.llm.asks",
    "CallStats": "rubric_gate.llm.asks",
    "run_asks": "rubric_gate.llm.asks",
    "raise_failures": "rubric_gate.llm.asks",
    "estimate_cost": "rubric_gate.llm.pricing",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports("rubric_gate.llm", _EXPORTS, globals())
