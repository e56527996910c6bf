"""A derived, disposable cache of what validating a calibration set computed, keyed by its bytes.

A calibration set that validated once is the same set while its bytes are the same: the cache
(one small JSON file per distinct content, beside the verdict indexes in `index_dir()`) holds
the item columns a gate reads (`ItemColumns`: ids, labels, splits, meta and each item's content
hash, the costly part of a load: a canonical `json.dumps` and a sha256 per item). A rerun on
unchanged bytes reads them without parsing a line, and builds the items, when they are asked
for, without validating them again. Any change
of the bytes, of the item model or of this format misses the cache, and the full, exact load
runs (and its errors name `file:line` as always). `RUBRIC_GATE_INDEX=off` disables it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import orjson

from rubric_gate.calibration.columns import ItemColumns
from rubric_gate.calibration.model import CalibrationItem
from rubric_gate.verdicts.index import index_dir

FORMAT = "2"


def _model_fingerprint() -> str:
    fields = [(name, repr(info.annotation), repr(info.metadata), repr(info.default))
              for name, info in CalibrationItem.model_fields.items()]
    return hashlib.sha256(repr((FORMAT, fields)).encode()).hexdigest()[:16]


def content_digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def cache_path(digest: str) -> Path | None:
    """Where the cache entry of the bytes whose sha256 is `digest` lives (None: caching is off)."""
    directory = index_dir()
    if directory is None:
        return None
    return directory / f"calibration-{digest[:32]}-{_model_fingerprint()}.json"


def cached_columns(digest: str, lines: int) -> ItemColumns | None:
    """The item columns recorded for exactly these bytes, or None (not cached, unreadable, or
    not one entry per item)."""
    path = cache_path(digest)
    if path is None:
        return None
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return ItemColumns.from_json(data, lines)


def store_columns(digest: str, columns: ItemColumns) -> None:
    path = cache_path(digest)
    if path is None:
        return
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        import tempfile  # a first read only: a rerun reads the columns stored here

        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".calibration-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(orjson.dumps(columns.to_json()))
            os.replace(temporary, path)  # readers see the whole file or none
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


LABELS = {"pass": "pass", "fail": "fail"}  # one string object per label, not one per item


def items_from_cache(text: str, hashes: Sequence[str]) -> tuple[CalibrationItem, ...] | None:
    """The items of a set validated before (same bytes), built without validating again; None
    where a value reads differently here (then the caller runs the exact load)."""
    items = []
    lines = (line for line in text.split("\n") if line.strip())
    missing = object()
    defaults = {name: missing if info.is_required() else info.get_default(call_default_factory=True)
                for name, info in CalibrationItem.model_fields.items()}
    width = len(defaults)
    required = {name for name, default in defaults.items() if default is missing}
    new, set_attribute, loads = CalibrationItem.__new__, object.__setattr__, orjson.loads
    field_sets: dict[tuple[str, ...], set[str]] = {}
    try:
        for line, content_hash in zip(lines, hashes, strict=True):
            obj = loads(line)
            # What `model_construct` does, without its per-call overhead (10k items: 0.25 s).
            values = {**defaults, **obj}  # in field order; a key the model lacks makes it longer
            if len(values) != width or not obj.keys() >= required:
                return None
            values["content_hash"] = content_hash  # the cached_property's slot
            item = new(CalibrationItem)
            values["label"] = LABELS.get(values["label"], values["label"])
            set_attribute(item, "__dict__", values)
            fields = tuple(obj)
            set_attribute(item, "__pydantic_fields_set__", field_sets.get(fields) or field_sets.setdefault(fields, set(obj)))
            set_attribute(item, "__pydantic_extra__", None)
            set_attribute(item, "__pydantic_private__", None)
            items.append(item)
    except (orjson.JSONDecodeError, TypeError, ValueError):
        return None
    return tuple(items)
