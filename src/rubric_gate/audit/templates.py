"""Render the audit and repair prompt templates (Jinja2, sandboxed, all user text fenced as data)."""

from __future__ import annotations

import hashlib
import re
from functools import cache
from importlib import resources
from typing import Any

from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from rubric_gate.judges.prompt import as_text, fence_tags

# Every tag our audit, repair and attack templates use: data that looks like one is neutralised,
# so an output or a check cannot close its block and speak as the prompt.
_TAG = re.compile(
    r"<\s*(/?)\s*(task|input|output|checks|check|old_check|gate_reason|audit_findings|failed_correct|caught_flawed"
    r"|example|attack_brief|claimed_output"
    r"|missed_flawed|passed_correct|false_accepts|fooled_by|unstable|flaw|pair|prompt|chosen|rejected|response|criteria|criterion|rubric)\b",
    re.IGNORECASE,
)


def fence(value: Any) -> str:
    """Data for a prompt: tags are found as the judge's fence finds them (spaces, invisible and
    fullwidth characters do not hide one)."""
    return fence_tags(value, _TAG)


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


def prompt_example(item: Any, limit: int) -> dict[str, str]:
    """A calibration item as a prompt shows it: id, input and output as text, each cut to `limit`."""
    return {"id": item.id, "input": as_text(item.input)[:limit], "output": as_text(item.output)[:limit]}
