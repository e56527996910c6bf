"""Replay lookups: verdicts match by normalised check text and by item content."""

from __future__ import annotations

import numpy as np

from rubric_gate.calibration import CalibrationItem
from rubric_gate.verdicts import Verdict, VerdictStore

ITEM = CalibrationItem(id="r1", input="env", output="report", label="pass")


def test_whitespace_is_normalised_and_later_lines_win() -> None:
    store = VerdictStore([
        Verdict(item="r1", check_text="Names  the\nresource.", answer="no"),
        Verdict(item="r1", check_text="Names the resource.", answer="yes"),
    ])
    found = store.find("  Names the resource. ", ITEM)
    assert found is not None and found.answer == "yes"
    assert store.find("Names the resource!", ITEM) is None


def test_a_verdict_for_old_item_content_is_stale() -> None:
    edited = ITEM.model_copy(update={"output": "a different report"})
    verdict = Verdict(item="r1", check_text="c", answer="no", item_hash=ITEM.content_hash)
    store = VerdictStore([verdict])
    assert store.find("c", ITEM) == verdict
    assert store.find("c", edited) is None


def test_item_hash_finds_a_renamed_item() -> None:
    renamed = ITEM.model_copy(update={"id": "r1-renamed"})
    verdict = Verdict(item="r1", check_text="c", answer="yes", item_hash=ITEM.content_hash)
    store = VerdictStore([verdict])
    assert store.find("c", renamed) == verdict


def test_keyed_lookup_needs_judge_and_prompt_to_match() -> None:
    verdict = Verdict(item="r1", check_text="c", answer="yes", judge="openai:m", prompt="v1", item_hash=ITEM.content_hash)
    store = VerdictStore([verdict])
    assert store.find("c", ITEM, judge="openai:m", prompt="v1") == verdict
    assert store.find("c", ITEM, judge="openai:m", prompt="v2") is None
    assert store.find("c", ITEM, judge="anthropic:m", prompt="v1") is None


def test_append_survives_a_torn_last_line(tmp_path) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text('{"item": "r1", "check_text": "c", "answer": "yes"}\n{"item": "r1", "chec')
    store = VerdictStore.load(path)
    assert len(store) == 1
    store.append([Verdict(item="r1", check_text="d", answer="no")])
    reloaded = VerdictStore.load(path)
    assert len(reloaded) == 2  # the torn fragment is cut, every whole line stays
    assert path.read_text().count("\n") == 2
    assert reloaded.find("d", ITEM) == Verdict(item="r1", check_text="d", answer="no")


def test_samples_replay_only_the_first_and_key_live_lookups() -> None:
    from rubric_gate.verdicts.parse import RowBuilder

    store = VerdictStore()
    builder = RowBuilder(store._data)
    # (answer, judge, sample): sample 1 of the judge says no; sample 0 says yes
    for offset, (answer, judge, sample) in enumerate([("yes", "j", 0), ("no", "j", 1), ("no", None, 2)]):
        builder.add("r1", "c", answer, judge, "v1" if judge else None, ITEM.content_hash, offset, sample)
    store._data.changed()
    assert store.answers("c", [ITEM])[0].tolist() == [False]  # replay: sample 0, the judge's yes
    assert store.answers("c", [ITEM], sample=1)[1].tolist() == [True]  # replay keys no samples
    assert store.answers("c", [ITEM], judge="j", prompt="v1", sample=1)[0].tolist() == [True]
    assert store.answers("c", [ITEM], judge="j", prompt="v1", sample=3)[1].tolist() == [True]


def test_dense_and_sorted_lookups_agree(monkeypatch) -> None:
    import random

    from rubric_gate.verdicts import lookup

    rng = random.Random(7)
    items = [CalibrationItem(id=f"r{i}", input="x", output=str(i), label="pass") for i in range(6)]
    verdicts = [Verdict(item=rng.choice(items).id, check_text=f"c{rng.randrange(4)}", answer=rng.choice(["yes", "no"]),
                        item_hash=rng.choice([None, items[rng.randrange(6)].content_hash]))
                for _ in range(200)]

    def columns() -> list:
        store = VerdictStore(verdicts)
        return [store.rows(f"c{t}", items).tolist() for t in range(5)]

    dense = columns()
    monkeypatch.setattr(lookup, "BLOCK", 7)  # many blocks
    assert columns() == dense
    monkeypatch.setattr(lookup.KeyIndex, "build", classmethod(
        lambda cls, keys, rows, space: lookup.KeyIndex._sorted(keys, rows)))
    monkeypatch.setattr(lookup.Lookups, "_dense_by_id", lambda self, a, space: lookup.KeyIndex._sorted(
        a["text"].astype("int64") * self.n_items + a["item"], np.arange(len(a["text"]))))
    assert columns() == dense


def test_keyed_lookups_filled_in_blocks_agree_with_one_sorted_index(monkeypatch) -> None:
    import random

    from rubric_gate.verdicts import lookup

    rng = random.Random(11)
    items = [CalibrationItem(id=f"r{i}", input="x", output=str(i), label="pass") for i in range(6)]
    verdicts = [Verdict(item=rng.choice(items).id, check_text=f"c{rng.randrange(3)}", answer=rng.choice(["yes", "no"]),
                        judge=rng.choice(["j1", "j2"]), prompt="v1", sample=rng.randrange(3),
                        item_hash=rng.choice([None, items[rng.randrange(6)].content_hash]))
                for _ in range(300)]

    def found() -> list:
        store = VerdictStore(verdicts)
        return [store.answers(f"c{t}", items, judge=judge, prompt="v1", sample=sample)[k].tolist()
                for t in range(4) for judge in ("j1", "j2", "j3") for sample in range(4) for k in (0, 1)]

    dense = found()
    assert any(any(column) for column in dense)
    monkeypatch.setattr(lookup, "BLOCK", 7)  # many blocks
    assert found() == dense
    monkeypatch.setattr(lookup.Lookups, "_dense_keyed", lambda self, a, space: lookup.KeyIndex._sorted(
        self._key_of(a, rows := np.flatnonzero(a["hash"] >= 0)), rows))  # last row per key by a stable sort
    assert found() == dense


def test_a_verdict_is_keyed_by_the_task_it_was_judged_under(tmp_path) -> None:
    from rubric_gate.verdicts import task_hash

    strict, lenient = task_hash("Review a design."), task_hash("Lenient helper.")
    assert task_hash("Review  a\ndesign. ") == strict  # whitespace-normalised, as check texts
    judged = Verdict(item="r1", check_text="c", answer="no", judge="openai:m", prompt="v1",
                     item_hash=ITEM.content_hash, task_hash=lenient)
    hand = Verdict(item="r1", check_text="h", answer="no")
    path = tmp_path / "v.jsonl"
    path.write_text(judged.to_json_line() + hand.to_json_line())
    for store in (VerdictStore([judged, hand]), VerdictStore.load(path), VerdictStore.load(path)):  # fast path, index
        assert store.find("c", ITEM, judge="openai:m", prompt="v1", task=lenient) == judged
        assert store.find("c", ITEM, judge="openai:m", prompt="v1", task=strict) is None
        assert store.find("c", ITEM, judge="openai:m", prompt="v1") is None  # a key without the task is another key
        # Replay under another task: stale; without a task (or for a hand verdict): as before.
        assert store.find("c", ITEM, task=strict) is None
        assert store.find("c", ITEM, task=lenient) == judged and store.find("c", ITEM) == judged
        assert store.find("h", ITEM, task=strict) == hand
        renamed = ITEM.model_copy(update={"id": "r1-renamed"})  # found by content hash: still stale
        assert store.find("c", renamed, task=strict) is None and store.find("c", renamed, task=lenient) == judged
    untasked = judged.model_copy(update={"task_hash": None})
    assert len(VerdictStore([untasked, judged]).keyed_only()) == 1  # the cache keeps fully keyed verdicts only
