"""Strict parsing of a repair reply: only library operators, the right number of checks each."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rubric_gate.audit.parse import REASON, one_line
from rubric_gate.llm.errors import MalformedReply
from rubric_gate.llm.replies import (
    array_of,
    copies,
    list_of,
    one_of,
    reply_object,
    short_text,
    strict_object,
)
from rubric_gate.repair.operators import (
    MAX_ANTI_GAMING,
    MAX_APPLICABILITY_GATES,
    MAX_SPLIT,
    MAX_WORDS,
    OPERATORS,
    SPLIT,
)
from rubric_gate.rubric import normalize_text

MAX_CHECK_CHARS = 600

def repair_schema(k: int) -> dict[str, Any]:
    """At most `k` candidates, each a library operator with as many bounded check texts as it
    returns: two to MAX_SPLIT for a split, exactly one for every other operator."""
    split = strict_object({"operator": one_of([SPLIT]),
                           "checks": array_of(short_text(MAX_CHECK_CHARS), 2, MAX_SPLIT), "why": REASON})
    other = strict_object({"operator": one_of([name for name in OPERATORS if name != SPLIT]),
                           "checks": array_of(short_text(MAX_CHECK_CHARS), 1, 1), "why": REASON})
    return list_of("candidates", {"anyOf": [split, other]}, max_items=k)


_ANTI_GAMING = re.compile(r"\bdo not (?:answer (?:yes|no)|reward|penali[sz]e|credit|count)\b|\bnot merely because\b",
                          re.IGNORECASE)
_APPLICABILITY = re.compile(r"\bonly (?:when|if|applies)\b|\bapplies only\b", re.IGNORECASE)


def over_budget(text: str) -> str | None:
    """Why a rewritten check breaks the structural budget, or None."""
    words = len(text.split())
    if words > MAX_WORDS:
        return f"{words} words (at most {MAX_WORDS})"
    clauses = len(_ANTI_GAMING.findall(text))
    if clauses > MAX_ANTI_GAMING:
        return f"{clauses} anti-gaming clauses (at most {MAX_ANTI_GAMING})"
    gates = len(_APPLICABILITY.findall(text))
    if gates > MAX_APPLICABILITY_GATES:
        return f"{gates} applicability gates (at most {MAX_APPLICABILITY_GATES})"
    return None


@dataclass(frozen=True)
class Candidate:
    operator: str
    texts: tuple[str, ...]
    why: str

    def to_result(self) -> dict[str, Any]:
        return {"operator": self.operator, "checks": list(self.texts), "why": self.why}

    @classmethod
    def from_result(cls, result: dict[str, Any]) -> Candidate:
        return cls(str(result["operator"]), tuple(str(t) for t in result["checks"]), str(result["why"]))


def parse_repairs(text: str, original: str, k: int, instructions: str = "") -> list[Candidate]:
    """Candidates in the model's order, duplicates and no-op rewrites dropped; anything outside
    the operator library, more than `k` candidates, or a check text copied from the prompt's own
    words (`instructions`: its template) makes the whole reply invalid."""
    obj = reply_object(text, {"candidates"})
    entries = obj["candidates"]
    if not isinstance(entries, list):
        raise MalformedReply("candidates is not a list")
    if len(entries) > k:
        raise MalformedReply(f"{len(entries)} candidates, at most {k} were asked for")
    seen = {normalize_text(original)}
    out: list[Candidate] = []
    for entry in entries:
        if not isinstance(entry, dict) or set(entry) != {"operator", "checks", "why"}:
            raise MalformedReply("a candidate must have exactly the keys operator, checks, why")
        operator = entry["operator"]
        if operator not in OPERATORS:
            raise MalformedReply(f"operator {operator!r} is not in the library")
        texts = entry["checks"]
        if not isinstance(texts, list) or not all(isinstance(t, str) and t.strip() for t in texts):
            raise MalformedReply("checks must be a list of non-empty strings")
        allowed = range(2, MAX_SPLIT + 1) if operator == SPLIT else range(1, 2)
        if len(texts) not in allowed:
            raise MalformedReply(f"{operator} must return {allowed.start}-{allowed.stop - 1} checks, got {len(texts)}")
        if any(len(t) > MAX_CHECK_CHARS for t in texts):
            raise MalformedReply(f"a rewritten check is longer than {MAX_CHECK_CHARS} characters")
        if instructions and any(copies(t, instructions) for t in texts):
            raise MalformedReply("a rewritten check copies the prompt's own words, not a rewrite")
        cleaned = tuple(" ".join(t.split()) for t in texts)
        if any(over_budget(t) for t in cleaned):
            continue  # outside the structural budget: dropped, the rest of the reply stands
        key = " | ".join(normalize_text(t) for t in cleaned)
        if key in seen:
            continue
        seen.add(key)
        out.append(Candidate(operator, cleaned, one_line(entry["why"], "why")))
    return out
