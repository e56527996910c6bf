"""Strict parsing of audit replies: exactly the expected object, quotes that really occur."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rubric_gate.llm.errors import MalformedReply
from rubric_gate.llm.replies import YES_NO, occurs_in, reply_object, short_text, strict_object

PROPERTIES = ("atomic", "consistent", "observable", "operational", "scoped")
MAX_REASON_CHARS = 400
MAX_QUOTE_CHARS = 300

# Reasons and quotes bounded in the schema (the provider stops a looping model); reasons longer
# than the bound are cut by `one_line` for providers that ignore it, quotes are checked below.
REASON = short_text(MAX_REASON_CHARS)
_PROPERTY_SCHEMA: dict[str, Any] = strict_object({"answer": YES_NO, "reason": REASON})
STRUCTURE_SCHEMA: dict[str, Any] = strict_object({name: _PROPERTY_SCHEMA for name in PROPERTIES})
GROUNDING_SCHEMA: dict[str, Any] = strict_object({"beyond_task": YES_NO, "quote": short_text(MAX_QUOTE_CHARS),
                                                  "reason": REASON})


@dataclass(frozen=True)
class StructureAnswer:
    holds: dict[str, bool]
    reasons: dict[str, str]

    def to_result(self) -> dict[str, Any]:
        return {name: {"holds": self.holds[name], "reason": self.reasons[name]} for name in PROPERTIES}

    @classmethod
    def from_result(cls, result: dict[str, Any]) -> StructureAnswer:
        return cls({n: bool(result[n]["holds"]) for n in PROPERTIES}, {n: str(result[n]["reason"]) for n in PROPERTIES})


@dataclass(frozen=True)
class GroundingAnswer:
    grounded: bool
    quote: str
    reason: str

    def to_result(self) -> dict[str, Any]:
        return {"grounded": self.grounded, "quote": self.quote, "reason": self.reason}

    @classmethod
    def from_result(cls, result: dict[str, Any]) -> GroundingAnswer:
        return cls(bool(result["grounded"]), str(result["quote"]), str(result["reason"]))


def one_line(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise MalformedReply(f"{what} is not a string")
    return " ".join(value.split())[:MAX_REASON_CHARS]


def yes_no(value: Any, what: str) -> bool:
    if value not in ("yes", "no"):
        raise MalformedReply(f"{what} must be 'yes' or 'no', got {value!r}")
    return bool(value == "yes")


def parse_structure(text: str) -> StructureAnswer:
    obj = reply_object(text, set(PROPERTIES))
    holds: dict[str, bool] = {}
    reasons: dict[str, str] = {}
    for name in PROPERTIES:
        entry = obj[name]
        if not isinstance(entry, dict) or set(entry) != {"answer", "reason"}:
            raise MalformedReply(f"{name}: expected an object with keys answer and reason")
        holds[name] = yes_no(entry["answer"], f"{name}.answer")
        reasons[name] = one_line(entry["reason"], f"{name}.reason")
    return StructureAnswer(holds, reasons)


def parse_grounding(text: str, task: str, check: str) -> GroundingAnswer:
    """The quote must come from the task (grounded) or from the check (beyond the task): a model
    that cannot point at the words it relies on has not answered."""
    obj = reply_object(text, {"beyond_task", "quote", "reason"})
    beyond = yes_no(obj["beyond_task"], "beyond_task")
    quote = one_line(obj["quote"], "quote")[:MAX_QUOTE_CHARS]
    reason = one_line(obj["reason"], "reason")
    source, where = (check, "check") if beyond else (task, "task")
    if not occurs_in(quote, source):
        # The reminder names where to copy from, never the rejected quote (a small model copies
        # its prompt's prose, the reminder included, into the quote).
        raise MalformedReply(f"quote {quote[:60]!r} does not occur in the {where}",
                             hint=f"its quote was not copied word for word from inside the <{where}> tags")
    return GroundingAnswer(not beyond, quote, reason)


