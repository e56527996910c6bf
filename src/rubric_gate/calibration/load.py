"""Load a calibration set (JSONL) with one-line errors naming file and line."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from rubric_gate.calibration.model import CalibrationItem
from rubric_gate.errors import InputError
from rubric_gate.sources import SourceText, iter_jsonl, read_source


@dataclass(frozen=True)
class CalibrationSet:
    items: tuple[CalibrationItem, ...]
    display: str

    def __len__(self) -> int:
        return len(self.items)

    @cached_property
    def flawed(self) -> np.ndarray:
        """Read-only (computed once: every summary of every rubric asks for it)."""
        return _frozen(np.array([item.flawed for item in self.items], dtype=bool))

    @cached_property
    def unplanned(self) -> np.ndarray:
        return _frozen(np.array([item.unplanned for item in self.items], dtype=bool))

    def split(self, name: str) -> CalibrationSet:
        """Items of one split; items without a split count as calibration items."""
        chosen = tuple(i for i in self.items if (i.split or "calibration") == name)
        return CalibrationSet(chosen, self.display)


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def parse_item(obj: dict, display: str, line_no: int) -> CalibrationItem:
    """One calibration line's object as an item; problems become an `InputError` naming the line."""
    try:
        return CalibrationItem.model_validate(obj)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(p) for p in error["loc"]) or "item"
        if error["type"] == "extra_forbidden":
            what = f"unknown key '{key}' (known keys: id, input, output, label, flaw, split, meta)"
        elif error["type"] == "missing":
            what = f"missing required key '{key}'"
        elif key == "label":
            what = f"label must be 'pass' or 'fail', got {obj.get('label')!r}"
        else:
            what = f"{key}: {error['msg']}"
        raise InputError(display, what, line_no) from None


def parse_calibration(source: SourceText) -> CalibrationSet:
    from rubric_gate.calibration import index

    raw = source.text.encode("utf-8", "surrogatepass")
    lines = sum(1 for line in source.text.split("\n") if line.strip())
    hashes = index.cached_hashes(raw, lines) if lines else None
    if hashes is not None:
        cached = index.items_from_cache(source.text, hashes)
        if cached is not None:
            return CalibrationSet(cached, source.display)
    result = _parse_exactly(source)
    index.store_hashes(raw, [item.content_hash for item in result.items])
    return result


def _parse_exactly(source: SourceText) -> CalibrationSet:
    items: list[CalibrationItem] = []
    seen: dict[str, int] = {}
    by_content: dict[str, tuple[int, CalibrationItem]] = {}
    for line_no, obj in iter_jsonl(source.text, source.display):
        item = parse_item(obj, source.display, line_no)
        if item.id in seen:
            raise InputError(source.display, f"duplicate item id '{item.id}' (first at line {seen[item.id]})", line_no)
        seen[item.id] = line_no
        first = by_content.setdefault(item.content_hash, (line_no, item))
        if first[1].label != item.label:
            # The judge sees input and output only: one output cannot be both right and wrong.
            raise InputError(source.display, f"item '{item.id}' has the same input and output as '{first[1].id}' "
                             f"(line {first[0]}) but the opposite label ({item.label} vs {first[1].label})", line_no)
        items.append(item)
    if not items:
        raise InputError(source.display, "calibration set is empty")
    from rubric_gate.calibration.index import compact

    return CalibrationSet(compact(tuple(items)), source.display)


def load_calibration(spec: str | Path, cwd: Path | None = None) -> CalibrationSet:
    return parse_calibration(read_source(spec, cwd))
