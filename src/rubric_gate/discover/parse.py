"""Strict parsing of extraction and merge replies: the expected objects, in range, or re-asked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rubric_gate.audit.parse import one_line
from rubric_gate.audit.render import plain
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

MIN_CRITERIA = 5
MAX_CRITERIA = 15
MAX_CHECK_CHARS = 400
MAX_NAME_CHARS = 80

_SCORE: dict[str, Any] = {"type": "integer", "minimum": 0, "maximum": 10}
EXTRACT_SCHEMA: dict[str, Any] = list_of("criteria", strict_object(
    {"name": short_text(MAX_NAME_CHARS), "check": short_text(MAX_CHECK_CHARS), "preferred_score": _SCORE,
     "other_score": _SCORE}), min_items=MIN_CRITERIA, max_items=MAX_CRITERIA)


def merge_schema(ids: list[str]) -> dict[str, Any]:
    """Groups of two or more of the criterion ids shown (each id in at most one group)."""
    group = strict_object({"members": array_of(one_of(ids), 2, len(ids)), "name": short_text(MAX_NAME_CHARS),
                           "check": short_text(MAX_CHECK_CHARS)})
    return list_of("groups", group, max_items=max(1, len(ids) // 2))


@dataclass(frozen=True)
class Criterion:
    name: str
    check: str
    preferred_score: int
    other_score: int

    def to_result(self) -> dict[str, Any]:
        return {"name": self.name, "check": self.check, "preferred_score": self.preferred_score,
                "other_score": self.other_score}

    @classmethod
    def from_result(cls, r: dict[str, Any]) -> Criterion:
        return cls(str(r["name"]), str(r["check"]), int(r["preferred_score"]), int(r["other_score"]))


@dataclass(frozen=True)
class Merge:
    members: tuple[str, ...]
    name: str
    check: str

    def to_result(self) -> dict[str, Any]:
        return {"members": list(self.members), "name": self.name, "check": self.check}

    @classmethod
    def from_result(cls, r: dict[str, Any]) -> Merge:
        return cls(tuple(str(m) for m in r["members"]), str(r["name"]), str(r["check"]))


def _text(value: Any, what: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise MalformedReply(f"{what} must be a non-empty string")
    cleaned = " ".join(value.split())
    if len(cleaned) > limit:
        raise MalformedReply(f"{what} is longer than {limit} characters")
    if plain(cleaned) != cleaned:
        raise MalformedReply(f"{what} contains control or bidirectional-override characters")
    return cleaned


def _score(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10:
        raise MalformedReply(f"{what} must be an integer from 0 to 10, got {value!r}")
    return value


def parse_extraction(text: str, instructions: str = "") -> list[Criterion]:
    """5-15 criteria; a check copied from the prompt's own words (`instructions`) is no answer."""
    entries = reply_object(text, {"criteria"})["criteria"]
    if not isinstance(entries, list) or not MIN_CRITERIA <= len(entries) <= MAX_CRITERIA:
        count = len(entries) if isinstance(entries, list) else "no"
        raise MalformedReply(f"expected {MIN_CRITERIA}-{MAX_CRITERIA} criteria, got {count}")
    out = []
    for entry in entries:
        if not isinstance(entry, dict) or set(entry) != {"name", "check", "preferred_score", "other_score"}:
            raise MalformedReply("a criterion must have exactly the keys name, check, preferred_score, other_score")
        check = _text(entry["check"], "check", MAX_CHECK_CHARS)
        if instructions and copies(check, instructions, min_chars=8):
            raise MalformedReply("a criterion copies the prompt's own words, not the responses'")
        out.append(Criterion(one_line(_text(entry["name"], "name", MAX_NAME_CHARS), "name"), check,
                             _score(entry["preferred_score"], "preferred_score"),
                             _score(entry["other_score"], "other_score")))
    return out


def parse_merge(text: str, ids: set[str]) -> list[Merge]:
    """Groups of at least two known ids, none in two groups."""
    entries = reply_object(text, {"groups"})["groups"]
    if not isinstance(entries, list):
        raise MalformedReply("groups is not a list")
    used: set[str] = set()
    out = []
    for entry in entries:
        if not isinstance(entry, dict) or set(entry) != {"members", "name", "check"}:
            raise MalformedReply("a group must have exactly the keys members, name, check")
        members = entry["members"]
        if not isinstance(members, list) or len(members) < 2 or not all(isinstance(m, str) for m in members):
            raise MalformedReply("members must list at least two criterion ids")
        unknown = [m for m in members if m not in ids]
        if unknown:
            raise MalformedReply(f"unknown criterion id {unknown[0]!r}")
        if used & set(members) or len(set(members)) != len(members):
            raise MalformedReply("a criterion appears in more than one group")
        used |= set(members)
        out.append(Merge(tuple(members), _text(entry["name"], "name", MAX_NAME_CHARS),
                         _text(entry["check"], "check", MAX_CHECK_CHARS)))
    return out
