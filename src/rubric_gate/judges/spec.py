"""Parse a judge spec `PROVIDER:MODEL`."""

from __future__ import annotations

from dataclasses import dataclass

from rubric_gate.errors import JudgeError

PROVIDERS = ("anthropic", "openai")


@dataclass(frozen=True)
class JudgeSpec:
    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"


def parse_judge_spec(text: str) -> JudgeSpec:
    provider, sep, model = text.strip().partition(":")
    if not sep or not model.strip():
        raise JudgeError(f"judge '{text}': expected PROVIDER:MODEL, e.g. anthropic:claude-sonnet-4-6")
    provider = provider.strip().lower()
    if provider not in PROVIDERS:
        raise JudgeError(f"judge '{text}': unknown provider '{provider}' (known: {', '.join(PROVIDERS)})")
    return JudgeSpec(provider, model.strip())
