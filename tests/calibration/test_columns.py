"""A loaded calibration set keeps the columns a gate reads (ids, content hashes, labels, splits,
meta) and reads its items, input and output included, again from the source when asked."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from rubric_gate.calibration import (
    CalibrationItem,
    CalibrationSet,
    load_calibration,
    parse_calibration,
)
from rubric_gate.calibration import load as load_module
from rubric_gate.errors import InputError
from rubric_gate.sources import SourceText

LINES = [
    {"id": "r1", "input": {"task": "x"}, "output": "é", "label": "fail", "flaw": "unplanned",
     "meta": {"annotator": "ann", "batch": 12345678901234567890123}},
    {"id": "r2", "input": "in", "output": {"a": True}, "label": "pass", "split": "evaluation"},
    {"id": "r3", "input": "in", "output": "other", "label": "fail", "flaw": "tone", "split": "calibration"},
    {"id": "r4", "input": "in", "output": "fourth", "label": "pass", "meta": {"score": float("nan")}},
]


def write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    return path


def fresh() -> list[CalibrationItem]:
    return [CalibrationItem.model_validate(line) for line in LINES]


def same_meta(a: dict, b: dict) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)  # NaN != NaN, its text is equal


@pytest.mark.parametrize("run", ["cold", "cached"])
def test_columns_are_the_items_values(tmp_path, run) -> None:
    path = write(tmp_path / "c.jsonl", LINES)
    if run == "cached":
        load_calibration(path)
    loaded = load_calibration(path)
    items = fresh()
    assert loaded.ids == tuple(i.id for i in items)
    assert [k.content_hash for k in loaded.keys] == [i.content_hash for i in items]
    assert loaded.flawed.tolist() == [True, False, True, False]
    assert loaded.unplanned.tolist() == [True, False, False, False]
    assert not loaded.flawed.flags.writeable and not loaded.unplanned.flags.writeable
    assert list(loaded.meta) == ["r1", "r4"]
    assert loaded.meta["r1"]["batch"] == 12345678901234567890123  # beyond 64 bits, kept exactly
    assert math.isnan(loaded.meta["r4"]["score"])
    evaluation = loaded.split("evaluation")
    assert evaluation.ids == ("r2",) and evaluation.flawed.tolist() == [False]
    calibration = loaded.split("calibration")
    assert calibration.ids == ("r1", "r3", "r4") and list(calibration.meta) == ["r1", "r4"]
    assert [i.output for i in calibration.items] == ["é", "other", "fourth"]


@pytest.mark.parametrize("run", ["cold", "cached"])
def test_a_gate_reads_no_item_text(tmp_path, monkeypatch, run) -> None:
    """Loading (a validating one too: it keeps no item), splitting, and everything a lookup
    reads come from the columns; the items are read only when asked for."""
    path = write(tmp_path / "c.jsonl", LINES)
    if run == "cached":
        load_calibration(path)
    reads: list[str] = []
    real = load_module._items_reader

    def counting(*args):  # type: ignore[no-untyped-def]
        read = real(*args)

        def wrapped():  # type: ignore[no-untyped-def]
            reads.append("read")
            return read()
        return wrapped

    monkeypatch.setattr(load_module, "_items_reader", counting)
    loaded = load_calibration(path)
    subset = loaded.split("calibration")
    _ = (len(subset), subset.ids, subset.keys, subset.flawed, subset.unplanned, subset.meta)
    assert reads == []
    assert [i.id for i in subset.items] == ["r1", "r3", "r4"]
    assert subset.items is subset.items
    assert reads == ["read"]


def test_items_read_again_are_the_validated_items(tmp_path) -> None:
    path = write(tmp_path / "c.jsonl", LINES)
    for _ in range(2):  # cold, then from the cache
        items = load_calibration(path).items
        expected = fresh()
        assert [i.model_dump_json() for i in items] == [i.model_dump_json() for i in expected]
        assert [i.content_hash for i in items] == [i.content_hash for i in expected]
        assert [i.model_fields_set for i in items] == [i.model_fields_set for i in expected]


def test_a_file_changed_before_its_items_are_read_is_an_error(tmp_path) -> None:
    path = write(tmp_path / "c.jsonl", LINES)
    loaded = load_calibration(path)
    write(path, [*LINES[:3], {**LINES[3], "output": "edited"}])
    with pytest.raises(InputError) as caught:
        _ = loaded.items
    assert str(caught.value) == f"{path}: changed while it was being read: run again"
    path.unlink()
    with pytest.raises(InputError, match="cannot be read again"):
        _ = loaded.items


def test_a_set_read_from_git_keeps_its_text(tmp_path) -> None:
    text = "".join(json.dumps(line) + "\n" for line in LINES)
    loaded = parse_calibration(SourceText("main:c.jsonl", text, None))
    assert [i.id for i in loaded.items] == ["r1", "r2", "r3", "r4"]


def test_a_set_built_from_items_has_their_columns() -> None:
    built = CalibrationSet(tuple(fresh()), "cal")
    assert built.ids == ("r1", "r2", "r3", "r4") and len(built) == 4
    assert np.array_equal(built.flawed, [True, False, True, False])
    assert built.split("calibration").items == tuple(fresh()[i] for i in (0, 2, 3))
    with pytest.raises(ValueError):
        CalibrationSet(None, "cal")
