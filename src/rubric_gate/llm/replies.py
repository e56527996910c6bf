"""The one entry point for a structured reply: the model was asked for a JSON object matching a
schema; anything else (prose, a code fence, a list, other keys) is a MalformedReply, so the
caller asks again or records a failure. Nothing is repaired or guessed here."""

from __future__ import annotations

import json
from collections.abc import Set
from typing import Any

from rubric_gate.llm.errors import MalformedReply

YES_NO: dict[str, Any] = {"type": "string", "enum": ["yes", "no"]}
STRING: dict[str, Any] = {"type": "string"}


def strict_object(properties: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema of an object the providers' strict structured output accepts: every
    property required and no other key (OpenAI's strict mode demands both; `reply_object` then
    checks the keys). One place, so no schema can leave a property optional by a missed name."""
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def list_of(key: str, item: dict[str, Any]) -> dict[str, Any]:
    """A strict object holding one array, `{key: [item, ...]}`."""
    return strict_object({key: {"type": "array", "items": item}})


def reply_object(text: str, keys: Set[str] | None = None) -> dict[str, Any]:
    """The reply as a JSON object; with `keys`, exactly those keys."""
    try:
        value = json.loads(text.strip())
    except (json.JSONDecodeError, AttributeError) as exc:
        raise MalformedReply(f"not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise MalformedReply("reply is not a JSON object")
    if keys is not None and set(value) != set(keys):
        raise MalformedReply(f"expected keys {sorted(keys)}, got {sorted(value)}")
    return value
