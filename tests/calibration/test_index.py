"""The calibration cache: a set whose bytes validated once loads again without validating or
hashing, to the same columns and items; any change of the bytes runs the exact load and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_gate.calibration import load as load_module
from rubric_gate.calibration import load_calibration
from rubric_gate.calibration.model import CalibrationItem
from rubric_gate.errors import InputError

LINES = [
    {"id": "r1", "input": {"task": "x", "n": [1, 2.5, None]}, "output": "é \"quoted\"", "label": "fail", "flaw": "unplanned"},
    {"id": "r2", "input": "in", "output": {"a": True}, "label": "pass", "split": "evaluation"},
    {"id": "r3", "input": "in", "output": "other", "label": "pass"},
]


def write(path: Path, lines: list[dict], extra: str = "") -> Path:
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines) + extra)
    return path


def exact_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = load_module._parse_exactly

    def spy(source):  # type: ignore[no-untyped-def]
        calls.append(source.display)
        return real(source)

    monkeypatch.setattr(load_module, "_parse_exactly", spy)
    return calls


def observed(items: tuple[CalibrationItem, ...]) -> list:
    return [(item.model_dump_json(), repr(item), item.content_hash, item.flawed, item.unplanned,
             item.model_fields_set) for item in items]


def test_a_rerun_on_the_same_bytes_skips_validation_and_gives_the_same_items(tmp_path, monkeypatch) -> None:
    path = write(tmp_path / "c.jsonl", LINES, "\n  \n")
    calls = exact_calls(monkeypatch)
    first = load_calibration(path)
    second = load_calibration(path)
    assert calls == [str(path)]  # only the first load validated
    assert observed(second.items) == observed(first.items)
    assert second.items == first.items
    fresh = [CalibrationItem.model_validate(line) for line in LINES]
    assert [item.content_hash for item in second.items] == [item.content_hash for item in fresh]


def test_changed_bytes_are_validated_again(tmp_path, monkeypatch) -> None:
    path = write(tmp_path / "c.jsonl", LINES)
    load_calibration(path)
    calls = exact_calls(monkeypatch)
    write(path, [*LINES, {"id": "r1", "input": "in", "output": "o", "label": "pass"}])
    with pytest.raises(InputError) as caught:
        load_calibration(path)
    assert str(caught.value).endswith(":4: duplicate item id 'r1' (first at line 1)")
    assert calls == [str(path)]


def test_a_damaged_cache_file_is_ignored(tmp_path, monkeypatch) -> None:
    from rubric_gate.calibration import index

    path = write(tmp_path / "c.jsonl", LINES)
    load_calibration(path)
    cache = index.cache_path(index.content_digest(path.read_bytes()))
    assert cache is not None and cache.exists()
    whole = json.loads(cache.read_bytes())
    damages = [b"not json", b'["only one"]', b"[1, 2, 3]",
               json.dumps({**whole, "ids": whole["ids"][:2]}).encode(),  # not one per item
               json.dumps({**whole, "labels": "pfx"}).encode(),
               json.dumps({**whole, "unplanned": [1]}).encode(),  # a correct item cannot be unplanned
               json.dumps({**whole, "meta": [[0, "[1]"]]}).encode()]  # meta is an object
    for damage in damages:
        cache.write_bytes(damage)
        calls = exact_calls(monkeypatch)
        assert [item.id for item in load_calibration(path).items] == ["r1", "r2", "r3"]
        assert calls == [str(path)]


def test_index_off_writes_no_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("RUBRIC_GATE_INDEX", "off")
    path = write(tmp_path / "c.jsonl", LINES)
    calls = exact_calls(monkeypatch)
    load_calibration(path)
    load_calibration(path)
    assert calls == [str(path), str(path)]


def test_a_copy_with_new_content_gets_a_new_hash(tmp_path) -> None:
    item = load_calibration(write(tmp_path / "c.jsonl", LINES)).items[2]
    old = item.content_hash
    edited = item.model_copy(update={"output": "changed"})
    assert edited.content_hash != old
    assert edited.content_hash == CalibrationItem(id="r3", input="in", output="changed", label="pass").content_hash
    assert item.model_copy().content_hash == old
