"""One judge answer to one (check, item) pair, as stored in a verdict JSONL file."""

from __future__ import annotations

import hashlib
import re
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

MAX_SAMPLE_INDEX = 2**31 - 1  # the sample column's int32, which the fast block decoder also stops at

# "n/a": the check does not apply to this output (it says when it applies); never a fail.
AnswerWord = Literal["yes", "no", "n/a"]


class ItemKey(Protocol):
    """What a verdict lookup reads of an item: a calibration item, or a journal's record of one."""

    @property
    def id(self) -> str: ...

    @property
    def content_hash(self) -> str: ...


class Usage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input_tokens: int = Field(0, ge=0)
    output_tokens: int = Field(0, ge=0)


class Verdict(BaseModel):
    """A recorded verdict.

    `item`, `check_text` and `answer` are all a hand-recorded verdict needs. Live judges also
    write the store key: `judge`, `prompt` (template version), `task_hash` (the rubric's task)
    and `item_hash` (content hash), so a verdict is reused exactly while everything the judge
    read is unchanged.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    item: str = Field(min_length=1)
    check_text: str = Field(min_length=1)
    answer: AnswerWord
    judge: str | None = None
    prompt: str | None = None
    item_hash: str | None = None
    task_hash: str | None = None  # `task_hash(rubric.task)`: the task the judge read
    check: str | None = None
    quote: str | None = None  # the judge's supporting quote, found in the item's output
    unverified_quote: str | None = None  # the judge's quote, NOT found in the output: never evidence
    usage: Usage | None = None
    at: str | None = None
    # Repeated sampling (`--samples N`): the 0-based index of this answer among a pair's
    # samples. Absent means 0, so verdicts recorded before sampling existed stay sample 0.
    # Bounded like the column it is kept in: a larger index is bad input, not a crash.
    sample: int | None = Field(default=None, ge=0, le=MAX_SAMPLE_INDEX, strict=True)
    batch: str | None = None  # the provider batch id, for verdicts judged through a Batch API
    served_model: str | None = None  # the model the reply named, when not exactly `judge`'s (a note, not a key)

    @property
    def failed(self) -> bool:
        return self.answer == "no"

    @property
    def not_applicable(self) -> bool:
        return self.answer == "n/a"

    def to_json_line(self) -> str:
        return self.model_dump_json(exclude_none=True) + "\n"


def task_hash(task: str) -> str:
    """The key of the task a judge read beside the check (whitespace-normalised, as check texts)."""
    return hashlib.sha256(re.sub(r"\s+", " ", task).strip().encode("utf-8")).hexdigest()[:16]
