"""A labeled calibration item: one output a human judged pass or fail."""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

UNPLANNED = "unplanned"


class CalibrationItem(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Annotated[str, Field(min_length=1)]
    input: Any
    output: Any
    label: Literal["pass", "fail"]
    flaw: str | None = None
    split: Literal["calibration", "evaluation"] | None = None

    @property
    def flawed(self) -> bool:
        return self.label == "fail"

    @property
    def unplanned(self) -> bool:
        return self.flawed and self.flaw == UNPLANNED

    @property
    def content_hash(self) -> str:
        """Hash of what the judge sees of this item (input and output), not its id or label."""
        return item_content_hash(self.input, self.output)


def item_content_hash(input_value: Any, output_value: Any) -> str:
    canonical = json.dumps({"input": input_value, "output": output_value}, sort_keys=True, ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]
