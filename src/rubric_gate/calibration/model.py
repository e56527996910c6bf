"""A labeled calibration item: one output a human judged pass or fail."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

UNPLANNED = "unplanned"


class CalibrationItem(BaseModel):
    """One line of a calibration set: an output a human labeled pass or fail."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Annotated[str, Field(min_length=1, description="Unique item id within the calibration set.")]
    input: Annotated[Any, Field(description="The task instance or source the output answers (any JSON).")]
    output: Annotated[Any, Field(description="The graded output (any JSON).")]
    label: Annotated[Literal["pass", "fail"], Field(description="The human's verdict: pass (correct) or fail (flawed).")]
    flaw: Annotated[str | None, Field(
        description="Category of a flawed output; 'unplanned' marks omissions no check was written for.",
    )] = None
    split: Annotated[Literal["calibration", "evaluation"] | None, Field(
        description="calibration (default): the gate decides on these items; evaluation: held out.",
    )] = None
    # The object's schema spelled out: pydantic 2.10 omits `additionalProperties: true`, 2.14 writes it.
    meta: Annotated[Annotated[dict[str, Any], WithJsonSchema({"type": "object", "additionalProperties": True})]
                    | None, Field(
        description="Free information about the item (annotator, source, batch, ...): kept and shown in "
                    "JSON reports, never shown to the judge and not part of the item's content hash.",
    )] = None

    @property
    def flawed(self) -> bool:
        return self.label == "fail"

    @property
    def unplanned(self) -> bool:
        return self.flawed and self.flaw == UNPLANNED

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> CalibrationItem:
        copied = super().model_copy(update=update, deep=deep)
        if update:
            copied.__dict__.pop("content_hash", None)  # the copy's content may differ: hash it anew
        return copied

    @cached_property
    def content_hash(self) -> str:
        """Hash of what the judge sees of this item (input and output), not its id or label."""
        return item_content_hash(self.input, self.output)


# `json.dumps(value, sort_keys=True, ensure_ascii=False)`, without a new encoder per item.
_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False)


def item_content_hash(input_value: Any, output_value: Any) -> str:
    canonical = _CANONICAL.encode({"input": input_value, "output": output_value})
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]
