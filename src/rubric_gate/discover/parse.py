"""Strict parsing of extraction and merge replies: the expected objects, in range, or re-asked."""

from __future__ import annotations

import re
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
    """One assignment per criterion shown (`minItems` = `maxItems` = their count, each naming one
    of their ids), so a provider that enforces the schema cannot leave a criterion out; criteria
    given the same group name are merged, each group of two or more getting one replacing check.
    A criterion named twice (the one thing an array cannot forbid) is refused after parsing."""
    assignment = strict_object({"id": one_of(ids), "group": short_text(MAX_NAME_CHARS)})
    group = strict_object({"group": short_text(MAX_NAME_CHARS), "check": short_text(MAX_CHECK_CHARS)})
    return strict_object({"assignments": array_of(assignment, len(ids), len(ids)),
                          "groups": array_of(group, 0, max(1, len(ids) // 2))})


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


def _group_key(name: str) -> str:
    return " ".join(name.split()).casefold()


def parse_merge(text: str, ids: list[str], instructions: str = "") -> list[Merge]:
    """Each criterion assigned once to a group name; each name given to two or more criteria is a
    group, with one replacing check in `groups` (a check copied from the prompt's own words,
    `instructions`, is no answer). Names given to one criterion leave it as it is."""
    obj = reply_object(text, {"assignments", "groups"})
    assignments, listed = obj["assignments"], obj["groups"]
    if not isinstance(assignments, list) or not isinstance(listed, list):
        raise MalformedReply("assignments and groups must be lists")
    known = set(ids)
    members: dict[str, list[str]] = {}
    names: dict[str, str] = {}
    for entry in assignments:
        if not isinstance(entry, dict) or set(entry) != {"id", "group"}:
            raise MalformedReply("an assignment must have exactly the keys id and group")
        cid = entry["id"]
        if cid not in known:
            raise MalformedReply(f"unknown criterion id {str(cid)[:40]!r}",
                                 hint="an assignment named an id that is not one of the criteria shown")
        if any(cid in group for group in members.values()):
            raise MalformedReply(f"criterion {cid} is assigned twice", hint="a criterion was assigned twice")
        name = one_line(_text(entry["group"], "group", MAX_NAME_CHARS), "group")
        names.setdefault(_group_key(name), name)
        members.setdefault(_group_key(name), []).append(cid)
    missing = [cid for cid in ids if not any(cid in group for group in members.values())]
    if missing:
        raise MalformedReply(f"criteria without an assignment: {', '.join(missing)}",
                             hint="not every criterion was assigned, each exactly once")
    checks: dict[str, str] = {}
    for entry in listed:
        if not isinstance(entry, dict) or set(entry) != {"group", "check"}:
            raise MalformedReply("a group must have exactly the keys group and check")
        key = _group_key(_text(entry["group"], "group", MAX_NAME_CHARS))
        check = _text(entry["check"], "check", MAX_CHECK_CHARS)
        if len(re.findall(r"[^\W_]+", check)) < 3 or (instructions and copies(check, instructions, min_chars=8)):
            raise MalformedReply(f"a group's check is no sentence of its own ({check[:40]!r})",
                                 hint="a group's check was the format's example, not a check written for it")
        if key in checks:
            raise MalformedReply(f"group {names.get(key, key)[:40]!r} has two checks",
                                 hint="a group was given two checks")
        checks[key] = check
    out = []
    for key, ids_in in members.items():
        if len(ids_in) < 2:
            continue
        if key not in checks:
            raise MalformedReply(f"group {names[key][:40]!r} of {len(ids_in)} criteria has no check",
                                 hint="a group of two or more criteria had no entry in groups")
        if not re.search(r"[^\W\d_]{2,}", names[key]):
            raise MalformedReply(f"group name {names[key][:40]!r} of {len(ids_in)} criteria has no word",
                                 hint="a group of two or more criteria was named without a word of its own")
        out.append(Merge(tuple(ids_in), names[key], checks[key]))
    return out
