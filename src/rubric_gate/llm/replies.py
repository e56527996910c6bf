"""The one entry point for a structured reply: the model was asked for a JSON object matching a
schema; anything else (prose, a code fence, a list, other keys) is a MalformedReply, so the
caller asks again or records a failure. Nothing is repaired or guessed here."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence, Set
from typing import Any

from rubric_gate.llm.errors import MalformedReply

YES_NO: dict[str, Any] = {"type": "string", "enum": ["yes", "no"]}
STRING: dict[str, Any] = {"type": "string"}
EXCERPT_CHARS = 80  # how much of an unusable reply a failure listing shows


def short_text(max_length: int) -> dict[str, Any]:
    """A string of at most `max_length` characters: in the schema, so a provider that enforces
    it (llama.cpp's grammar, vLLM) cannot loop inside a quote until the token cap; the parsers
    check the same bound for providers that do not."""
    return {"type": "string", "maxLength": max_length}


def one_of(values: Sequence[str]) -> dict[str, Any]:
    """A string naming one of `values` (the real check or item ids a reply must name)."""
    return {"type": "string", "enum": list(values)}


def array_of(item: dict[str, Any], min_items: int = 0, max_items: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array", "items": item, "minItems": min_items}
    if max_items is not None:
        schema["maxItems"] = max_items
    return schema


def strict_object(properties: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema of an object the providers' strict structured output accepts: every
    property required and no other key (OpenAI's strict mode demands both; `reply_object` then
    checks the keys). One place, so no schema can leave a property optional by a missed name."""
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def list_of(key: str, item: dict[str, Any], min_items: int = 0, max_items: int | None = None) -> dict[str, Any]:
    """A strict object holding one array, `{key: [item, ...]}`, of a bounded length."""
    return strict_object({key: array_of(item, min_items, max_items)})


def without_keywords(schema: Any, unsupported: Set[str]) -> Any:
    """`schema` with the keywords a provider does not enforce (or refuses) taken out and stated
    in the property's description instead, so the model still reads the bound; `minItems` above
    1 counts as unsupported when "minItems>1" is named (Anthropic accepts only 0 and 1)."""
    if isinstance(schema, list):
        return [without_keywords(value, unsupported) for value in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in schema.items():
        if key in unsupported or (key == "minItems" and "minItems>1" in unsupported and value > 1):
            dropped.append(f"{key}: {value}")
        elif key in ("properties", "$defs"):
            out[key] = {name: without_keywords(sub, unsupported) for name, sub in value.items()}
        elif key in ("items", "anyOf"):
            out[key] = without_keywords(value, unsupported)
        else:
            out[key] = value
    if dropped:
        note = "{" + ", ".join(dropped) + "}"
        out["description"] = f"{out['description']} {note}" if out.get("description") else note
    return out


def excerpt(reply: str, limit: int = EXCERPT_CHARS) -> str:
    """The start of what a model said, safe to print anywhere: one JSON string literal with every
    control, non-ASCII and markup character escaped (no terminal escape, no Markdown, HTML or
    rich markup, no mention can come of it), cut to `limit` characters."""
    shown = json.dumps(reply[:limit], ensure_ascii=True)
    for char in "<>[]`@&|":
        shown = shown.replace(char, f"\\u{ord(char):04x}")
    return shown + ("..." if len(reply) > limit else "")


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


_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def comparable(text: str) -> str:
    """`text` as quotes are compared: case, runs of whitespace, typographic quotes and edge
    punctuation do not count."""
    return " ".join(text.translate(_QUOTES).lower().split()).strip(" .,;:'\"")


def copies(value: str, instructions: str, min_chars: int = 12) -> bool:
    """Whether `value` is the prompt's own wording copied back (a format example's placeholder,
    such as "the rewritten check text"), not something the model wrote."""
    wanted = comparable(value)
    return len(wanted) >= min_chars and wanted in comparable(instructions)


def occurs_in(quote: str, text: str) -> bool:
    """Whether a model's quote really occurs in `text` (the one test every quote passes: a
    judge's supporting quote in the item's output, an audit's in the task or check), as whole
    words: "no" is not a quote of "not only the consequence" (SmolLM2 quoted its answer word)."""
    wanted = comparable(quote)
    if not wanted:
        return False
    haystack = comparable(text)
    edge = r"(?<![^\W_])" if wanted[0].isalnum() else ""
    end = r"(?![^\W_])" if wanted[-1].isalnum() else ""
    return re.search(edge + re.escape(wanted) + end, haystack) is not None
