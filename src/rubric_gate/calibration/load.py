"""Load a calibration set (JSONL) with one-line errors naming file and line."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from rubric_gate.calibration.columns import ColumnsBuilder, ItemColumns, ItemKey
from rubric_gate.calibration.model import CalibrationItem
from rubric_gate.errors import InputError
from rubric_gate.sources import SourceText, iter_jsonl, read_source
from rubric_gate.sources.files import decode_text


class CalibrationSet:
    """A labeled set: its items' columns (what a gate decision reads), and the items themselves,
    read again from their source when asked for (judging, excerpts) where the set was loaded."""

    def __init__(self, items: Sequence[CalibrationItem] | None, display: str, *,
                 columns: ItemColumns | None = None,
                 read_items: Callable[[], tuple[CalibrationItem, ...]] | None = None) -> None:
        if items is None and (columns is None or read_items is None):
            raise ValueError("a calibration set without its items needs their columns and a way to read them")
        self.display = display
        self._items = None if items is None else tuple(items)
        self._columns = columns
        self._read_items = read_items
        self._keys: tuple[ItemKey, ...] | None = None

    def __len__(self) -> int:
        return len(self.columns)

    def __repr__(self) -> str:
        return f"CalibrationSet({self.display!r}, {len(self)} items)"

    @property
    def items(self) -> tuple[CalibrationItem, ...]:
        if self._items is None:
            assert self._read_items is not None and self._columns is not None
            items = self._read_items()
            if tuple(item.id for item in items) != self._columns.ids:
                raise InputError(self.display, "changed while it was being read: run again")
            self._items = items
        return self._items

    @property
    def columns(self) -> ItemColumns:
        if self._columns is None:
            self._columns = ItemColumns.of(self.items)
        return self._columns

    @property
    def ids(self) -> tuple[str, ...]:
        return self.columns.ids

    @property
    def keys(self) -> tuple[ItemKey, ...]:
        """(id, content hash) per item, what a verdict lookup reads; the same tuple each time."""
        if self._keys is None:
            self._keys = self.columns.keys()
        return self._keys

    @property
    def flawed(self) -> np.ndarray:
        """Read-only (computed once: every summary of every rubric asks for it)."""
        return self.columns.flawed

    @property
    def unplanned(self) -> np.ndarray:
        return self.columns.unplanned

    @property
    def meta(self) -> dict[str, dict[str, Any]]:
        """id -> meta of the items that carry one."""
        return self.columns.meta

    def split(self, name: str) -> CalibrationSet:
        """Items of one split; items without a split count as calibration items."""
        chosen = self.columns.in_split(name)
        if len(chosen) == len(self):
            return self
        if self._items is not None:
            return CalibrationSet(tuple(self._items[i] for i in chosen.tolist()), self.display)
        return CalibrationSet(None, self.display, columns=self.columns.take(chosen),
                              read_items=lambda: tuple(self.items[i] for i in chosen.tolist()))


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
    """The set's item columns, validated once per content (cached by its bytes). Its items are
    read again from the source when asked for: a gate reads the columns only."""
    from rubric_gate.calibration import index

    raw = source.text.encode("utf-8", "surrogatepass")
    digest = index.content_digest(raw)
    del raw
    lines = sum(1 for line in source.text.split("\n") if line.strip())
    columns = index.cached_columns(digest, lines) if lines else None
    if columns is None:
        columns, items = _parse_exactly(source)
        index.store_columns(digest, columns)
        if items is not None:
            return CalibrationSet(items, source.display, columns=columns)
    return CalibrationSet(None, source.display, columns=columns,
                          read_items=_items_reader(source, digest, columns.content_hashes))


def _items_reader(source: SourceText, digest: str, hashes: tuple[str, ...]) -> Callable[[], tuple[CalibrationItem, ...]]:
    """Reads the items again: from the file when it has one (the same bytes, or an error), else
    from the text given (read from git: kept)."""
    from rubric_gate.calibration import index

    path, display = source.path, source.display
    kept = source.text if path is None else None

    def read() -> tuple[CalibrationItem, ...]:
        if path is None:
            assert kept is not None
            text = kept
        else:
            try:
                text = decode_text(path.read_bytes(), display)
            except OSError as exc:
                raise InputError(display, f"cannot be read again ({exc.strerror or exc})") from None
            if index.content_digest(text.encode("utf-8", "surrogatepass")) != digest:
                raise InputError(display, "changed while it was being read: run again")
        items = index.items_from_cache(text, hashes)
        if items is None:
            items = _parse_exactly(SourceText(display, text, None))[1]
            assert items is not None
        return items

    return read


def _parse_exactly(source: SourceText) -> tuple[ItemColumns, tuple[CalibrationItem, ...] | None]:
    """Validate every line: the columns, and the items where the source has no file to read them
    from again (text read from git, held anyway). From a file, each item is dropped once its
    columns are taken: 100k items held at once took 60 MiB more at the peak."""
    columns = ColumnsBuilder()
    kept: list[CalibrationItem] | None = [] if source.path is None else None
    seen: dict[str, int] = {}  # id -> line
    by_content: dict[str, int] = {}  # content hash -> the first item's position
    for line_no, obj in iter_jsonl(source.text, source.display):
        item = parse_item(obj, source.display, line_no)
        if item.id in seen:
            raise InputError(source.display, f"duplicate item id '{item.id}' (first at line {seen[item.id]})", line_no)
        seen[item.id] = line_no
        first = by_content.setdefault(item.content_hash, len(columns))
        if first < len(columns) and columns.flawed[first] != item.flawed:
            # The judge sees input and output only: one output cannot be both right and wrong.
            first_id, first_label = columns.ids[first], "fail" if columns.flawed[first] else "pass"
            raise InputError(source.display, f"item '{item.id}' has the same input and output as '{first_id}' "
                             f"(line {seen[first_id]}) but the opposite label ({item.label} vs {first_label})", line_no)
        columns.add(item)
        if kept is not None:
            kept.append(item)
    if not len(columns):
        raise InputError(source.display, "calibration set is empty")
    return columns.done(), None if kept is None else tuple(kept)


def load_calibration(spec: str | Path, cwd: Path | None = None) -> CalibrationSet:
    return parse_calibration(read_source(spec, cwd))
