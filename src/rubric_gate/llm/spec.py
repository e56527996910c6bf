"""Parse a judge spec `PROVIDER:MODEL` against the provider registry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rubric_gate.errors import JudgeError
from rubric_gate.llm.registry import PROVIDERS, provider

if TYPE_CHECKING:
    from rubric_gate.llm.protocols import BatchClient, LiveClient


@dataclass(frozen=True)
class JudgeSpec:
    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"


def parse_judge_spec(text: str) -> JudgeSpec:
    name, sep, model = text.strip().partition(":")
    if not sep or not model.strip():
        raise JudgeError(f"judge '{text}': expected PROVIDER:MODEL, e.g. anthropic:claude-sonnet-4-6")
    name = name.strip().lower()
    if name not in PROVIDERS:
        raise JudgeError(f"judge '{text}': unknown provider '{name}' (known: {', '.join(PROVIDERS)})")
    return JudgeSpec(name, model.strip())


def live_client(spec: JudgeSpec) -> LiveClient:
    """The provider's live client for this model (its credentials checked first)."""
    return provider(spec.provider).live_client(spec.model)


def batch_client(spec: JudgeSpec) -> BatchClient:
    """The provider's batch client for this model (its credentials checked first)."""
    return provider(spec.provider).batch_client(spec.model)
