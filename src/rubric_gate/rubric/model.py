"""The rubric a team versions in git: checks a judge answers yes/no for each output."""

from __future__ import annotations

import functools
import re
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, field_validator, model_validator

# C0 and C1 controls (line breaks and tabs too), DEL, and the bidirectional controls.
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@functools.lru_cache(maxsize=1 << 13)  # a run asks for the same few hundred texts per verdict
def normalize_text(text: str) -> str:
    """Whitespace-normalised check text: the identity a verdict is recorded against."""
    return re.sub(r"\s+", " ", text).strip()


class Origin(StrEnum):
    """Where a check came from."""

    hand = "hand"
    generated = "generated"
    review = "review"
    label = "label"


class MaxFailures(BaseModel):
    """Aggregation "at most K checks may say no"."""

    model_config = ConfigDict(extra="forbid")
    max_failures: Annotated[int, Field(
        ge=0, strict=True,  # `true` or "1" is a mistake, not 1
        description="An output passes when at most this many checks answer no (a plain integer >= 0).",
    )]


Aggregation = Literal["all-pass"] | MaxFailures


class Check(BaseModel):
    """One yes/no question the judge answers about each output."""

    model_config = ConfigDict(extra="forbid")

    id: Annotated[str, Field(
        min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
        description="Stable id across edits (letters, digits, '_', '.', '-'); the gate diffs rubric versions by id.",
    )]
    text: Annotated[str, Field(
        min_length=1,
        description="The yes/no question the judge answers about one output; verdicts are recorded against this text.",
    )]
    origin: Annotated[Origin, Field(
        description="Where the check came from: hand (written by a person), generated, review (added by model "
                    "review) or label (derived from human labels; frozen by default).",
    )] = Origin.hand
    frozen: Annotated[bool | None, Field(
        description="A frozen check cannot be deleted, reworded or unfrozen. Defaults to true exactly when origin is label.",
    )] = None
    source: Annotated[str | list[str] | None, Field(
        description="Free provenance, e.g. the calibration items a label-derived check was taught by.",
    )] = None

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("check text is empty")
        return value

    @model_validator(mode="after")
    def _default_frozen(self) -> Check:
        # Label-derived checks encode what human labels taught: frozen unless said otherwise.
        if self.frozen is None:
            self.frozen = self.origin is Origin.label
        return self

    @property
    def normalized_text(self) -> str:
        return normalize_text(self.text)

    @property
    def is_frozen(self) -> bool:
        return bool(self.frozen)


class Rubric(BaseModel):
    """A checklist rubric for an LLM judge, versioned in git and gated by rubric-gate."""

    model_config = ConfigDict(extra="forbid")

    id: Annotated[str, Field(min_length=1, description="The rubric's name.")]
    # Written as a string or a number, held as text (the validator below): the schema says the former.
    version: Annotated[str, WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "number"}]}),
                       Field(description="Any string or number; shown in reports exactly as written.")]
    task: Annotated[str, Field(min_length=1, description="What the graded output must do; the judge sees it.")]
    calibration: Annotated[str, Field(
        min_length=1, description="Path of the labeled calibration set (JSONL), relative to the repository root.",
    )]
    verdicts: Annotated[str, Field(
        min_length=1, description="Path of the recorded verdict store (JSONL), relative to the repository root.",
    )]
    judge: Annotated[str | None, Field(
        description="Default live judge as PROVIDER:MODEL (anthropic:MODEL or openai:MODEL); "
                    "without it recorded verdicts are replayed.",
    )] = None
    aggregation: Annotated[Aggregation, Field(
        description="'all-pass' (default): an output passes only if every check says yes; "
                    "or {max_failures: K}: it passes when at most K checks say no.",
    )] = "all-pass"
    checks: Annotated[list[Check], Field(min_length=1, description="The checks, in the order reports show them.")]

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ValueError("version must be a string or a number")
        return str(value)

    @field_validator("judge")
    @classmethod
    def _judge_form(cls, value: str | None) -> str | None:
        if value is not None and ":" not in value:
            raise ValueError("judge must look like PROVIDER:MODEL, e.g. anthropic:claude-sonnet-4-6")
        if value is not None and _CONTROLS.search(value):
            # The judge's name is printed as it judges (the log, a terminal): an ESC or a line
            # break in it would be an escape sequence or a workflow command line of its own.
            raise ValueError("judge may not contain a control character (an escape, a line break or a tab)")
        return value

    @property
    def max_failures(self) -> int:
        return 0 if self.aggregation == "all-pass" else self.aggregation.max_failures

    def check(self, check_id: str) -> Check:
        for check in self.checks:
            if check.id == check_id:
                return check
        raise KeyError(check_id)

    @property
    def check_ids(self) -> list[str]:
        return [c.id for c in self.checks]


KNOWN_KEYS: dict[str, list[str]] = {
    "rubric": list(Rubric.model_fields),
    "check": list(Check.model_fields),
    "aggregation": list(MaxFailures.model_fields),
}
