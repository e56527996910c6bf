"""The one layer that asks a model: request and reply shapes and the client protocols
(`protocols`), typed errors (`errors`), the provider registry (`registry`, `spec`), one retry
loop (`retry`), the concurrency limiter and call budget (`limiter`), the structured-reply
entry point (`replies`), the dry-run estimate and failure listing (`accounting`), stored
questions (`asks`) and prices (`pricing`). See docs/providers.md.

Names load on first use (PEP 562): parsing a judge spec or checking for a key loads no SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_gate.lazy import lazy_exports

if TYPE_CHECKING:  # the same names for the type checker (a test keeps the two equal)
    from rubric_gate.llm.asks import Ask as Ask
    from rubric_gate.llm.asks import CallStats as CallStats
    from rubric_gate.llm.asks import raise_failures as raise_failures
    from rubric_gate.llm.asks import run_asks as run_asks
    from rubric_gate.llm.errors import AuthFailure as AuthFailure
    from rubric_gate.llm.errors import FatalError as FatalError
    from rubric_gate.llm.errors import MalformedReply as MalformedReply
    from rubric_gate.llm.errors import TransientError as TransientError
    from rubric_gate.llm.errors import UnansweredError as UnansweredError
    from rubric_gate.llm.limiter import AdaptiveLimiter as AdaptiveLimiter
    from rubric_gate.llm.limiter import refuse_over_budget as refuse_over_budget
    from rubric_gate.llm.pricing import estimate_cost as estimate_cost
    from rubric_gate.llm.protocols import BatchClient as BatchClient
    from rubric_gate.llm.protocols import JudgeRequest as JudgeRequest
    from rubric_gate.llm.protocols import LiveClient as LiveClient
    from rubric_gate.llm.protocols import Reply as Reply
    from rubric_gate.llm.registry import PROVIDERS as PROVIDERS
    from rubric_gate.llm.registry import Provider as Provider
    from rubric_gate.llm.replies import reply_object as reply_object
    from rubric_gate.llm.retry import RetryPolicy as RetryPolicy
    from rubric_gate.llm.retry import call_with_retries as call_with_retries
    from rubric_gate.llm.spec import JudgeSpec as JudgeSpec
    from rubric_gate.llm.spec import batch_client as batch_client
    from rubric_gate.llm.spec import live_client as live_client
    from rubric_gate.llm.spec import parse_judge_spec as parse_judge_spec

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
