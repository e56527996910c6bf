"""Read a pairs file: one `{"id", "prompt", "chosen", "rejected"}` object a line (optional `meta`);
any problem is an InputError naming the file and line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rubric_gate.calibration import CalibrationItem, CalibrationSet, item_content_hash
from rubric_gate.errors import InputError
from rubric_gate.sources import SourceText, iter_jsonl, read_source

KNOWN_KEYS = "id, prompt, chosen, rejected, meta"


class PreferencePair(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Annotated[str, Field(min_length=1)]
    prompt: Any
    chosen: Any  # the response people preferred
    rejected: Any
    meta: dict[str, Any] | None = None

    @property
    def chosen_id(self) -> str:
        return f"{self.id}:chosen"

    @property
    def rejected_id(self) -> str:
        return f"{self.id}:rejected"


@dataclass(frozen=True)
class PairSet:
    pairs: tuple[PreferencePair, ...]
    display: str

    def __len__(self) -> int:
        return len(self.pairs)

    def as_items(self) -> CalibrationSet:
        """Each pair as two items judged like calibration outputs (chosen labelled pass,
        rejected fail): verdicts on them are stored and reused by content like any others."""
        items: list[CalibrationItem] = []
        for pair in self.pairs:
            items.append(CalibrationItem(id=pair.chosen_id, input=pair.prompt, output=pair.chosen, label="pass"))
            items.append(CalibrationItem(id=pair.rejected_id, input=pair.prompt, output=pair.rejected, label="fail"))
        return CalibrationSet(tuple(items), self.display)


def _parse_pair(obj: dict[str, Any], display: str, line_no: int) -> PreferencePair:
    try:
        return PreferencePair.model_validate(obj)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(p) for p in error["loc"]) or "pair"
        if error["type"] == "extra_forbidden":
            what = f"unknown key '{key}' (known keys: {KNOWN_KEYS})"
        elif error["type"] == "missing":
            what = f"missing required key '{key}'"
        else:
            what = f"{key}: {error['msg']}"
        raise InputError(display, what, line_no) from None


def parse_pairs(source: SourceText) -> PairSet:
    pairs: list[PreferencePair] = []
    seen: dict[str, int] = {}
    for line_no, obj in iter_jsonl(source.text, source.display):
        pair = _parse_pair(obj, source.display, line_no)
        if pair.id in seen:
            raise InputError(source.display, f"duplicate pair id '{pair.id}' (first at line {seen[pair.id]})", line_no)
        if item_content_hash(pair.prompt, pair.chosen) == item_content_hash(pair.prompt, pair.rejected):
            raise InputError(source.display, f"pair '{pair.id}': chosen and rejected are the same response", line_no)
        seen[pair.id] = line_no
        pairs.append(pair)
    if not pairs:
        raise InputError(source.display, "pairs file is empty")
    return PairSet(tuple(pairs), source.display)


def load_pairs(spec: str | Path, cwd: Path | None = None) -> PairSet:
    return parse_pairs(read_source(spec, cwd))
