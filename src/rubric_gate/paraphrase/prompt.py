"""The paraphrase request, after PReMISE's paraphrase-generation prompt (appendix E.5)."""

from __future__ import annotations

import re

from rubric_gate.llm.errors import MalformedReply
from rubric_gate.llm.replies import reply_object, short_text, strict_object

MAX_CHARS = 600  # as long as a check may be (teach, repair)
SCHEMA = strict_object({"paraphrase": short_text(MAX_CHARS)})
_TAG = re.compile(r"<(/?)(original)\b", re.IGNORECASE)


def render(check_text: str, index: int, count: int) -> str:
    fenced = _TAG.sub(lambda m: f"&lt;{m.group(1)}{m.group(2)}", check_text)
    return (
        "Rewrite the following checklist question so that it keeps its exact meaning but uses "
        "different wording, sentence structure and phrasing. Do not add or remove any requirement; "
        "it must still be answerable yes or no about an output.\n"
        f"This is rewording {index + 1} of {count}: make it differ from the other rewordings.\n\n"
        f"<original>\n{fenced}\n</original>\n\n"
        'Reply with JSON only: {"paraphrase": "<the reworded question>"}.'
    )


def parse(text: str) -> str:
    data = reply_object(text, {"paraphrase"})
    if not isinstance(data["paraphrase"], str):
        raise MalformedReply('expected {"paraphrase": "..."}')
    value = " ".join(data["paraphrase"].split())
    if not value:
        raise MalformedReply("empty paraphrase")
    if len(value) > MAX_CHARS:
        raise MalformedReply(f"paraphrase is longer than {MAX_CHARS} characters")
    return value
