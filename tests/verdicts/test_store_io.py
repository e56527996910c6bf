"""Reading and appending verdict files: exact line errors on both parse paths, no data lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_gate.calibration import CalibrationItem, load_calibration
from rubric_gate.cli.errors import handle_errors
from rubric_gate.errors import InputError
from rubric_gate.verdicts import Verdict, VerdictStore
from rubric_gate.verdicts.compare import added_lines

ITEM = CalibrationItem(id="r1", input="env", output="report", label="pass")
GOOD = '{"item": "r1", "check_text": "c", "answer": "yes"}'


def _error(tmp_path: Path, text: str | bytes, *, use_index: bool = True) -> str:
    path = tmp_path / "v.jsonl"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(InputError) as info:
        VerdictStore.load(path, use_index=use_index)
    return info.value.message


@pytest.mark.parametrize(("line", "fragment"), [
    ('{"item": "r1", "check_text": "c", "answer": "yes", "item": "r2"}', "duplicate key 'item'"),
    ('{"item": "r1", "check_text": "c", "answer" : "yes", "answer": "no"}', "duplicate key 'answer'"),
    ('{"item": "r1", "check_text": "c", "answer": "maybe"}', "answer must be 'yes', 'no' or 'n/a', got 'maybe'"),
    ('{"item": "r1", "check_text": "c", "answer": "yes", "colour": "red"}', "unknown key 'colour'"),
    ('{"item": "r1", "answer": "yes"}', "missing required key 'check_text'"),
    ('{"item": "", "check_text": "c", "answer": "yes"}', "item: String should have at least 1 character"),
    ('{"item": "r1", "check_text": "c", "answer": "yes", "usage": {"input_tokens": -1}}', "usage.input_tokens"),
    ('{"item": "r1", "check_text": "\\ud800", "answer": "yes"}', "half a surrogate pair"),
    ('{"item": "r1", "check_text": "c", "answer": "yes"', "malformed JSON"),
    ('["r1"]', "each line must be a JSON object"),
])
def test_bad_lines_name_their_line_exactly_as_before(tmp_path: Path, line: str, fragment: str) -> None:
    message = _error(tmp_path, f"{GOOD}\n\n{line}\n{GOOD}\n")
    assert message.startswith(f"{tmp_path / 'v.jsonl'}:3: "), message
    assert fragment in message


def test_unterminated_string_is_reported_without_a_doubled_at(tmp_path: Path) -> None:
    message = _error(tmp_path, f'{GOOD}\n{{"item": "r1", "check_text": "c\n{GOOD}\n')
    assert ":2: malformed JSON (Unterminated string starting at column" in message
    assert "at at" not in message


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    message = _error(tmp_path, f"{GOOD}\n{GOOD}\n".encode() + b'{"item": "r\xff1", "check_text": "c", "answer": "no"}\n')
    assert message.endswith(":3: not UTF-8 text (byte 12 of the line)"), message
    calibration = tmp_path / "cal.jsonl"
    calibration.write_bytes(b'{"id": "a", "input": "x", "output": "y", "label": "pass"}\n{"id": "\xc3"}\n')
    with pytest.raises(InputError) as info:
        load_calibration(calibration)
    assert info.value.message.endswith("cal.jsonl:2: not UTF-8 text (byte 9 of the line)"), info.value.message


def test_values_pydantic_coerces_are_still_accepted(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text('{"item": "r1", "check_text": "c", "answer": "no", "usage": {"input_tokens": "3"}, "quote": null}\n'
                    '{"item": "r1", "check_text": "say \\"x\\": y", "answer": "no", "usage": {"input_tokens": 3.0}}\n')
    store = VerdictStore.load(path)
    assert [v.usage.input_tokens for v in store] == [3, 3]  # type: ignore[union-attr]
    assert store.find('say "x": y', ITEM) == list(store)[1]
    assert [(v.check_text, v.answer) for v in store] == [("c", "no"), ('say "x": y', "no")]


def test_append_keeps_a_complete_last_line_without_newline(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text(GOOD)  # as an editor saves it: no final newline
    store = VerdictStore.load(path)
    store.append([Verdict(item="r1", check_text="d", answer="no")])
    assert path.read_text().splitlines() == [GOOD, Verdict(item="r1", check_text="d", answer="no").to_json_line().strip()]
    reloaded = VerdictStore.load(path)
    assert [reloaded.find(text, ITEM) for text in ("c", "d")] == list(reloaded)


def test_append_cuts_a_torn_last_line_even_mid_character(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    path.write_bytes(f"{GOOD}\n".encode() + '{"item": "r1", "check_text": "é'.encode()[:-1])
    assert len(VerdictStore.load(path)) == 1  # torn mid-character: still just a torn line
    VerdictStore.load(path).append([Verdict(item="r1", check_text="d", answer="no")])
    assert [v.check_text for v in VerdictStore.load(path)] == ["c", "d"]


def test_copying_a_store_re_reads_nothing(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text("".join(json.dumps({"item": "r1", "check_text": f"c{i}", "answer": "no"}) + "\n" for i in range(5)))
    base = VerdictStore.load(path)
    copy = VerdictStore(base, path=tmp_path / "new.jsonl")
    copy.append([Verdict(item="r1", check_text="c0", answer="yes")])
    assert base.find("c0", ITEM).answer == "no" and copy.find("c0", ITEM).answer == "yes"  # type: ignore[union-attr]
    assert len(base) == 5 and len(copy) == 6
    assert (tmp_path / "new.jsonl").read_text().count("\n") == 1


def test_memory_error_exits_2_not_the_gate_failed_code(capsys: pytest.CaptureFixture[str]) -> None:
    @handle_errors
    def command() -> int:
        raise MemoryError

    assert command() == 2
    assert "out of memory" in capsys.readouterr().err


def _store_text(lines: list[dict]) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


def test_added_lines_finds_only_new_lines_and_ignores_reformatted_copies(tmp_path: Path) -> None:
    base_lines = [{"item": "r1", "check_text": f"c{i}", "answer": "no", "quote": "q"} for i in range(4)]
    base = VerdictStore.from_bytes(_store_text(base_lines).encode(), "base")
    reformatted = json.dumps(base_lines[2], indent=None, separators=(",", ":"))  # same verdict, new spacing
    new = {"item": "r1", "check_text": "c9", "answer": "yes"}
    changed = {**base_lines[1], "answer": "yes"}
    head_text = _store_text(base_lines[:2]) + reformatted + "\n" + _store_text([base_lines[3], new, changed])
    head = VerdictStore.from_bytes(head_text.encode(), "head")
    assert [v.model_dump(exclude_none=True) for v in added_lines(base, head)] == [new, changed]
    assert added_lines(head, head) == []


def test_after_keyed_only_and_merged_into_a_new_file(tmp_path: Path) -> None:
    lines = [{"item": "r1", "check_text": "hand", "answer": "no"},
             {"item": "r1", "check_text": "judged", "answer": "yes", "judge": "openai:m", "prompt": "v1",
              "item_hash": ITEM.content_hash, "task_hash": "t1"}]
    path = tmp_path / "cache.jsonl"
    path.write_text(_store_text(lines))
    loaded = VerdictStore.load(path)
    keyed = loaded.keyed_only()
    assert [v.check_text for v in keyed] == ["judged"]
    assert keyed.find("judged", ITEM, judge="openai:m", prompt="v1", task="t1") == Verdict(**lines[1])
    target = tmp_path / "out.jsonl"
    merged = VerdictStore.from_bytes(_store_text(lines[:1]).encode(), "base").merged(keyed, path=target)
    before = len(merged)
    merged.append([Verdict(item="r1", check_text="new", answer="no")])
    assert [v.check_text for v in merged.after(before)] == ["new"]
    assert [v.check_text for v in merged] == ["hand", "judged", "new"]
    assert target.read_text().count("\n") == 1 and merged.path == target
