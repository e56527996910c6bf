"""The rubric a team versions in git: checks a judge answers yes/no for each output."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


def normalize_text(text: str) -> str:
    """Whitespace-normalised check text: the identity a verdict is recorded against."""
    return re.sub(r"\s+", " ", text).strip()


class Origin(StrEnum):
    hand = "hand"
    generated = "generated"
    review = "review"
    label = "label"


class MaxFailures(BaseModel):
    """Aggregation "at most K checks may say no"."""

    model_config = ConfigDict(extra="forbid")
    max_failures: Annotated[int, Field(ge=0, strict=True)]  # `true` or "1" is a mistake, not 1


Aggregation = Literal["all-pass"] | MaxFailures


class Check(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")]
    text: Annotated[str, Field(min_length=1)]
    origin: Origin = Origin.hand
    frozen: bool | None = None
    source: str | list[str] | None = None

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
    model_config = ConfigDict(extra="forbid")

    id: Annotated[str, Field(min_length=1)]
    version: str | int | float
    task: Annotated[str, Field(min_length=1)]
    calibration: Annotated[str, Field(min_length=1)]
    verdicts: Annotated[str, Field(min_length=1)]
    judge: str | None = None
    aggregation: Aggregation = "all-pass"
    checks: Annotated[list[Check], Field(min_length=1)]

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
        return value

    @property
    def max_failures(self) -> int:
        return 0 if self.aggregation == "all-pass" else self.aggregation.max_failures  # type: ignore[union-attr]

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
