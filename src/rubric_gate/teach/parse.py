"""Strict parsing of a teach reply: exactly one check text and a reason."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rubric_gate.audit.parse import REASON, one_line
from rubric_gate.audit.render import plain
from rubric_gate.llm.errors import MalformedReply
from rubric_gate.llm.replies import copies, reply_object, short_text, strict_object

MAX_CHECK_CHARS = 600

TEACH_SCHEMA: dict[str, Any] = strict_object({"text": short_text(MAX_CHECK_CHARS), "why": REASON})


@dataclass(frozen=True)
class TaughtText:
    text: str
    why: str

    def to_result(self) -> dict[str, str]:
        return {"text": self.text, "why": self.why}

    @classmethod
    def from_result(cls, result: dict[str, Any]) -> TaughtText:
        return cls(str(result["text"]), str(result["why"]))


def parse_teach(text: str, instructions: str = "") -> TaughtText:
    """The taught check; one copied from the prompt's own words (`instructions`) is no answer."""
    obj = reply_object(text, {"text", "why"})
    check = obj["text"]
    if not isinstance(check, str) or not check.strip():
        raise MalformedReply("text must be a non-empty string")
    cleaned = " ".join(check.split())
    if plain(cleaned) != cleaned:
        raise MalformedReply("the check contains control or bidirectional-override characters")
    if len(cleaned) > MAX_CHECK_CHARS:
        raise MalformedReply(f"the check is longer than {MAX_CHECK_CHARS} characters")
    if instructions and copies(cleaned, instructions, min_chars=8):
        raise MalformedReply("the check copies the prompt's own words, not a new check")
    return TaughtText(cleaned, one_line(obj["why"], "why"))
