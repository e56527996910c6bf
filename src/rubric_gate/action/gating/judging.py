"""The live judge, loaded lazily: the action runs in replay mode when it is unavailable."""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Any

from rubric_gate.calibration import CalibrationSet
from rubric_gate.llm.registry import PROVIDERS, secret_variables
from rubric_gate.rubric import RubricDocument
from rubric_gate.verdicts import VerdictStore

__all__ = ["SECRET_VARIABLES", "JudgeBackend", "has_credentials", "load_backend", "secret_values"]

# Every provider's secret variables, from the provider registry (which loads no SDK).
SECRET_VARIABLES = secret_variables()


@dataclass(frozen=True)
class JudgeBackend:
    spec: str
    prompt: str
    module: Any

    def judge_missing(self, docs: list[RubricDocument], calibration: CalibrationSet, store: VerdictStore,
                      *, concurrency: int, max_calls: int | None) -> dict[str, Any]:
        stats = self.module.judge_missing([d.rubric for d in docs], calibration, store, self.spec,
                                          concurrency=concurrency, max_calls=max_calls, progress=False)
        return stats.to_dict() if hasattr(stats, "to_dict") else {"summary": str(stats)}


def has_credentials(spec: str, env: dict[str, str] | None = None) -> bool:
    env = dict(os.environ) if env is None else env
    entry = PROVIDERS.get(spec.split(":", 1)[0].strip().lower())
    return entry is None or entry.has_credentials(env)


def secret_values(env: dict[str, str] | None = None) -> list[str]:
    env = dict(os.environ) if env is None else env
    return [env[name] for name in SECRET_VARIABLES if env.get(name, "").strip()]


def load_backend(spec: str) -> tuple[JudgeBackend | None, str | None]:
    """The judge backend, or None and why not (missing module or credentials)."""
    if not has_credentials(spec):
        return None, f"judge `{spec}` is configured but its API key is not set (secrets are not given to fork PRs)"
    try:
        module = importlib.import_module("rubric_gate.judges")
        prompt = module.PROMPT_VERSION
        module.judge_missing  # noqa: B018 - fail here, not mid-run, if the API is missing
    except (ImportError, AttributeError) as exc:
        return None, f"judge `{spec}` is configured but live judging is unavailable in this build ({exc})"
    return JudgeBackend(spec, str(prompt), module), None
