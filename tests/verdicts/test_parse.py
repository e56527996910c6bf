"""The verdict parser's fast path (typed block decoding) takes only lines the exact path
accepts, with the same values; everything else gets the exact path's `file:line` error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_gate.calibration import CalibrationItem
from rubric_gate.errors import InputError
from rubric_gate.verdicts import Verdict, VerdictStore, line_struct
from rubric_gate.verdicts import parse as parse_module

ITEM = CalibrationItem(id="r1", input="in", output="out", label="pass")


def line(**fields: object) -> str:
    return json.dumps({"item": "r1", "check_text": "c", "answer": "yes", **fields}) + "\n"


def load(tmp_path: Path, text: str) -> VerdictStore:
    path = tmp_path / "v.jsonl"
    path.write_text(text)
    return VerdictStore.load(path, use_index=False)


def error_of(tmp_path: Path, text: str) -> str:
    with pytest.raises(InputError) as caught:
        load(tmp_path, text)
    return str(caught.value)


def test_a_duplicate_key_deep_in_a_block_names_its_line(tmp_path: Path) -> None:
    good = line() * 999
    bad = '{"item": "r1", "check_text": "c", "answer": "yes", "answer": "no"}\n'
    assert error_of(tmp_path, good + bad + good).endswith(":1000: duplicate key 'answer'")


def test_an_escaped_quote_cannot_hide_a_duplicate_key(tmp_path: Path) -> None:
    # \u0022 decodes to a quote without a quote character: two of them balance the two quotes
    # of a duplicated key in a count; the fast path must still refuse the line.
    bad = '{"item": "r\\u0022\\u0022", "check_text": "c", "answer": "yes", "answer": "no"}\n'
    assert error_of(tmp_path, line() * 10 + bad).endswith(":11: duplicate key 'answer'")
    ok = '{"item": "r\\u0022", "check_text": "c", "answer": "no"}\n'
    assert [v.item for v in load(tmp_path, line() + ok)] == ["r1", 'r"']


def test_escaped_quotes_in_values_stay_on_the_fast_path(tmp_path: Path) -> None:
    store = load(tmp_path, line(quote='he said "no"', check_text='a "quoted" check') * 3)
    assert len(store) == 3 and next(iter(store)).quote == 'he said "no"'


@pytest.mark.parametrize("text, message", [
    ('{"item": "r1", "check_text": "c", "answer": "maybe"}\n', "answer must be 'yes', 'no' or 'n/a'"),
    ('{"item": "", "check_text": "c", "answer": "yes"}\n', "item"),
    ('{"item": "r1", "check_text": "c", "answer": "yes", "colour": "red"}\n', "unknown key 'colour'"),
    ('{"item": "r1", "check_text": 3, "answer": "yes"}\n', "check_text"),
    ('{"item": "r1", "check_text": "c", "answer": "yes", "sample": -1}\n', "sample"),
    ('{"item": "r1", "check_text": "c", "answer": "yes", "usage": {"input_tokens": -2}}\n', "usage.input_tokens"),
])
def test_bad_values_in_a_block_get_the_exact_error(tmp_path: Path, text: str, message: str) -> None:
    error = error_of(tmp_path, line() * 50 + text)
    assert ":51: " in error and message in error


def test_values_the_model_accepts_but_the_fast_path_does_not_take_still_load(tmp_path: Path) -> None:
    # null optional fields, coercible token counts: the exact path accepts them as before
    odd = [line(judge=None), line(usage={"input_tokens": "5"}), line(sample=0, at=None)]
    store = load(tmp_path, line() * 5 + "".join(odd) + "\n  \n" + line(answer="no"))
    assert len(store) == 9
    assert [v.usage.input_tokens for v in store if v.usage] == [5]
    assert store.answers("c", [ITEM])[0].tolist() == [True]  # the last line wins


def test_every_optional_text_field_of_the_model_takes_the_fast_path(tmp_path: Path, monkeypatch) -> None:
    optional = [name for name, info in Verdict.model_fields.items()
                if info.annotation == (str | None) and not info.metadata]
    assert set(optional) == set(line_struct.OPTIONAL_TEXT) and {"judge", "prompt", "item_hash"} <= set(optional)
    calls: list[int] = []
    real = parse_module.slow_line

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(parse_module, "slow_line", counting)
    full = line(**{name: f"{name} value" for name in optional}, usage={"input_tokens": 3, "output_tokens": 4},
                sample=2)
    store = load(tmp_path, full * 20)
    assert calls == [] and len(store) == 20
    first = next(iter(store))
    assert all(getattr(first, name) == f"{name} value" for name in optional)
    assert first.usage is not None and first.usage.output_tokens == 4
    load(tmp_path, full + line(judge=None))
    assert calls == [1]  # the null takes the exact path, the rest did not


def test_fast_and_exact_paths_build_the_same_columns(tmp_path: Path, monkeypatch) -> None:
    import random

    rng = random.Random(3)
    lines = []
    for n in range(3000):
        fields: dict[str, object] = {"item": f"r{rng.randrange(40)}", "check_text": f"check  {rng.randrange(9)}",
                                     "answer": rng.choice(["yes", "no"])}
        if rng.random() < 0.5:
            fields.update(judge=rng.choice(["a", "b"]), prompt="v1", item_hash=f"sha256:{rng.randrange(30):016x}")
        if rng.random() < 0.2:
            fields["sample"] = rng.randrange(3)
        if rng.random() < 0.1:
            fields["quote"] = 'q "x" é'
        lines.append(json.dumps(fields, ensure_ascii=rng.random() < 0.5) + ("\r" if n % 97 == 0 else ""))
    text = "\n".join(lines) + "\n"
    fast = load(tmp_path, text)._data
    monkeypatch.setattr(line_struct, "decode_line", lambda raw: (_ for _ in ()).throw(line_struct.msgspec.DecodeError()))
    exact = load(tmp_path, text)._data
    for name in ("texts", "items", "hashes", "sources"):
        assert getattr(fast, name).values == getattr(exact, name).values
    assert fast.raw_texts == exact.raw_texts
    for name, column in fast.columns.arrays().items():
        assert column.tolist() == exact.columns.arrays()[name].tolist(), name


@pytest.mark.parametrize("field", ["judge", "prompt", "task_hash"])
@pytest.mark.parametrize("odd_row", [0, 1, 199])
def test_a_block_whose_rows_differ_in_one_source_field_keeps_each_rows_source(
        tmp_path: Path, monkeypatch, field: str, odd_row: int) -> None:
    shared = {"judge": "a", "prompt": "v1", "task_hash": "t1"}
    text = "".join(line(item=f"r{n}", **{**shared, field: "other" if n == odd_row else shared[field]})
                   for n in range(200))
    fast = load(tmp_path, text)._data
    never = lambda *args: (_ for _ in ()).throw(line_struct.msgspec.DecodeError())  # noqa: E731
    monkeypatch.setattr(line_struct, "decode_lines", never)
    monkeypatch.setattr(line_struct, "decode_line", never)
    exact = load(tmp_path, text)._data
    assert len(fast.sources) == 2 and fast.sources.values == exact.sources.values
    assert fast.columns.arrays()["source"].tolist() == exact.columns.arrays()["source"].tolist()
    assert fast.columns.arrays()["source"].tolist().count(1 if odd_row == 0 else 0) == 199


def test_a_block_interned_at_once_gets_the_ids_one_add_at_a_time_gives() -> None:
    from rubric_gate.verdicts.table_data import Pool

    values = ["b", "a", "b", "c", "a", "d", "d", "e"]
    one_by_one, at_once = Pool(["a"]), Pool(["a"])
    expected = [one_by_one.add(value) for value in values]
    assert at_once.add_all(iter(values)).tolist() == expected
    assert at_once.values == one_by_one.values and at_once.ids == one_by_one.ids
    assert at_once.add_all(["e", "a"]).tolist() == [4, 0] and at_once.values == ["a", "b", "c", "d", "e"]
