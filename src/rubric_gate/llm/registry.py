"""The providers a judge spec `PROVIDER:MODEL` may name: one entry each.

An entry says which environment variables carry the credentials and which module implements
the provider; that module defines `live_client(model)` and `batch_client(model)`. The module is
imported only when a client is made, so reading the registry (the action checking for a key,
the CLI parsing `--judge`) loads no SDK. Adding a provider = one module + one entry here
(docs/providers.md).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rubric_gate.errors import JudgeError

if TYPE_CHECKING:
    from rubric_gate.llm.protocols import BatchClient, LiveClient


@dataclass(frozen=True)
class Provider:
    name: str
    module: str  # defines live_client(model) -> LiveClient and batch_client(model) -> BatchClient
    credentials: tuple[str, ...]  # the provider is usable when one of these is set
    secrets: tuple[str, ...]  # variables whose values are secret (masked in logs, never posted)
    missing_credentials: str  # the one-line error when none of `credentials` is set

    def has_credentials(self, env: Mapping[str, str] | None = None) -> bool:
        env = os.environ if env is None else env
        return any(env.get(name, "").strip() for name in self.credentials)

    def require_credentials(self) -> None:
        if not self.has_credentials():
            raise JudgeError(self.missing_credentials)

    def live_client(self, model: str) -> LiveClient:
        self.require_credentials()
        client: LiveClient = importlib.import_module(self.module).live_client(model)
        return client

    def batch_client(self, model: str) -> BatchClient:
        self.require_credentials()
        client: BatchClient = importlib.import_module(self.module).batch_client(model)
        return client


PROVIDERS: dict[str, Provider] = {
    entry.name: entry
    for entry in (
        Provider(
            "anthropic", "rubric_gate.llm.providers.anthropic",
            credentials=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
            secrets=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
            missing_credentials="anthropic judge: set the ANTHROPIC_API_KEY environment variable",
        ),
        Provider(
            # OPENAI_BASE_URL alone is enough: a local OpenAI-compatible server needs no key.
            "openai", "rubric_gate.llm.providers.openai",
            credentials=("OPENAI_API_KEY", "OPENAI_BASE_URL"),
            secrets=("OPENAI_API_KEY",),
            missing_credentials=("openai judge: set the OPENAI_API_KEY environment variable "
                                 "(or OPENAI_BASE_URL for a local OpenAI-compatible server)"),
        ),
    )
}


def provider(name: str) -> Provider:
    entry = PROVIDERS.get(name)
    if entry is None:
        raise JudgeError(f"unknown provider '{name}' (known: {', '.join(PROVIDERS)})")
    return entry


def secret_variables() -> tuple[str, ...]:
    """Every provider's secret variables, each once."""
    return tuple(dict.fromkeys(name for entry in PROVIDERS.values() for name in entry.secrets))
