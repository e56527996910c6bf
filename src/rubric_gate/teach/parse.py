"""Strict parsing of a teach reply: exactly one check text and a reason."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rubric_gate.audit.parse import one_line
from rubric_gate.audit.render import plain
from rubric_gate.llm.errors import MalformedReply
from rubric_gate.llm.replies import STRING, reply_object, strict_object

MAX_CHECK_CHARS = 600

TEACH_SCHEMA: dict[str, Any] = strict_object({"text": STRING, "why": STRING})


@dataclass(frozen=True)
class TaughtText:
    text: str
    why: str

    def to_result(self) -> dict[str, str]:
        return {"text": self.text, "why": self.why}

    @classmethod
    def from_result(cls, result: dict[str, Any]) -> TaughtText:
        return cls(str(result["text"]), str(result["why"]))


def parse_teach(text: str) -> TaughtText:
    obj = reply_object(text, {"text", "why"})
    check = obj["text"]
    if not isinstance(check, str) or not check.strip():
        raise MalformedReply("text must be a non-empty string")
    cleaned = " ".join(check.split())
    if plain(cleaned) != cleaned:
        raise MalformedReply("the check contains control or bidirectional-override characters")
    if len(cleaned) > MAX_CHECK_CHARS:
        raise MalformedReply(f"the check is longer than {MAX_CHECK_CHARS} characters")
    return TaughtText(cleaned, one_line(obj["why"], "why"))
