"""Render the audit and repair prompt templates (Jinja2, sandboxed, all user text fenced as data)."""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources
from typing import Any

from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from rubric_gate.judges.prompt import fence


@cache
def template_source(package: str, name: str) -> str:
    return resources.files(package).joinpath("prompts", name).read_text("utf-8")


def template_version(package: str, name: str) -> str:
    """Changes whenever the template text changes, so stored findings key on it."""
    stem = name.removesuffix(".j2")
    return f"{stem}-v1-" + hashlib.sha256(template_source(package, name).encode("utf-8")).hexdigest()[:12]


@cache
def _environment() -> SandboxedEnvironment:
    env = SandboxedEnvironment(autoescape=False, undefined=StrictUndefined, keep_trailing_newline=True)
    env.filters["fence"] = fence
    return env


def render(package: str, name: str, **data: Any) -> str:
    return _environment().from_string(template_source(package, name)).render(**data)
