"""Strict parsing of the pairwise verdict and the applicability answers."""

from __future__ import annotations

from typing import Any

from rubric_gate.audit.parse import yes_no
from rubric_gate.llm.errors import MalformedReply
from rubric_gate.llm.replies import YES_NO, list_of, one_of, reply_object, strict_object

PREFER_SCHEMA: dict[str, Any] = strict_object({"better": one_of(["A", "B"])})


def applies_schema(ids: list[str]) -> dict[str, Any]:
    """One answer per check id shown, each naming one of those ids."""
    return list_of("answers", strict_object({"id": one_of(ids), "applies": YES_NO}),
                   min_items=len(ids), max_items=len(ids))


def parse_prefer(text: str) -> str:
    better = reply_object(text, {"better"})["better"]
    if better not in ("A", "B"):
        raise MalformedReply(f"better must be 'A' or 'B', got {better!r}")
    return str(better)


def parse_applies(text: str, ids: list[str]) -> dict[str, bool]:
    """Exactly one answer per check id shown."""
    entries = reply_object(text, {"answers"})["answers"]
    if not isinstance(entries, list):
        raise MalformedReply("answers is not a list")
    out: dict[str, bool] = {}
    for entry in entries:
        if not isinstance(entry, dict) or set(entry) != {"id", "applies"}:
            raise MalformedReply("an answer must have exactly the keys id and applies")
        if entry["id"] not in ids or entry["id"] in out:
            raise MalformedReply(f"unexpected or repeated check id {entry['id']!r}")
        out[entry["id"]] = yes_no(entry["applies"], f"{entry['id']}.applies")
    if len(out) != len(ids):
        raise MalformedReply(f"expected {len(ids)} answers, got {len(out)}")
    return out
