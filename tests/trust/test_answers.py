"""The verdict guard compares the answers every lookup reads at the base and at the head, whatever
lines moved them: checked against a brute-force reading of every lookup key on random edits."""

from __future__ import annotations

import itertools
import json
import random

import pytest

from rubric_gate.calibration import CalibrationItem
from rubric_gate.trust import changed_answers, filled_answers, removed_answers
from rubric_gate.trust.answers import answer_readings
from rubric_gate.trust.differences import rule_of, verdict_field
from rubric_gate.verdicts import Verdict, VerdictStore
from rubric_gate.verdicts.blobs import BlobCache

ITEMS = tuple(CalibrationItem(id=f"R{i}", input="in", output=str(i), label="pass") for i in range(3))
TEXTS = ("Is it safe?", "Is it kind?")
TASKS = ("t1", "t2")
SOURCES = ({}, {"judge": "j", "prompt": "p", "task_hash": "t1"}, {"judge": "j", "prompt": "p", "task_hash": "t2"},
           {"task_hash": "t2"})


def _line(rng: random.Random) -> str:
    item = rng.choice([*ITEMS, None])
    record: dict = {"item": item.id if item else "ZZ", "check_text": rng.choice(TEXTS),
                    "answer": rng.choice(["yes", "no", "n/a"]), **rng.choice(SOURCES)}
    if rng.random() < 0.6:  # the item's hash, another item's (stale, or a fallback by hash), or none
        record["item_hash"] = rng.choice(ITEMS).content_hash
    if rng.random() < 0.2:
        record["sample"] = 1
    return json.dumps(record) + "\n"


def _edit(rng: random.Random, lines: list[str]) -> list[str]:
    out = list(lines)
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["copy", "append", "delete", "swap", "insert"])
        if kind == "copy" and out:
            out.append(rng.choice(out))
        elif kind == "delete" and out:
            out.pop(rng.randrange(len(out)))
        elif kind == "swap" and len(out) > 1:
            i, j = rng.sample(range(len(out)), 2)
            out[i], out[j] = out[j], out[i]
        elif kind == "insert":
            out.insert(rng.randint(0, len(out)), _line(rng))
        else:
            out.append(_line(rng))
    return out


def _keys() -> list[tuple]:
    replay = [(None, None, task, 0) for task in (None, *TASKS)]
    keyed = [(s["judge"], s["prompt"], s["task_hash"], sample) for s in SOURCES if "judge" in s for sample in (0, 1)]
    return replay + keyed


def _every_reading(store: VerdictStore) -> dict[tuple, str | None]:
    lookups = [(text, item, *key) for text, item, key in itertools.product(TEXTS, ITEMS, _keys())]
    return {(text, item.id, *key): answer for (text, item, *key), answer in zip(lookups, store.find_answers(lookups),
                                                                                  strict=True)}


def _stores(base_lines: list[str], head_lines: list[str], as_blobs: bool) -> tuple[VerdictStore, VerdictStore]:
    base_raw, head_raw = "".join(base_lines).encode(), "".join(head_lines).encode()
    if not as_blobs:
        return VerdictStore.from_bytes(base_raw, "base"), VerdictStore.from_bytes(head_raw, "head")
    cache = BlobCache()
    return (VerdictStore.from_blob("base", base_raw, "base", cache=cache),
            VerdictStore.from_blob("head", head_raw, "head", cache=cache))


@pytest.mark.parametrize("seed", range(120))
def test_every_answer_a_lookup_reads_differently_is_compared(seed: int) -> None:
    rng = random.Random(seed)
    base_lines = [_line(rng) for _ in range(rng.randint(0, 8))]
    # Every third edit only appends (the blob fast path: the head extends the base).
    head_lines = base_lines + [_line(rng) for _ in range(rng.randint(1, 3))] if seed % 3 == 0 else \
        _edit(rng, base_lines)
    base, head = _stores(base_lines, head_lines, as_blobs=seed % 2 == 0)
    before, after = _every_reading(base), _every_reading(head)
    compared = {(r.text, r.item.id, *key): (b, a) for r in answer_readings(base, head, ITEMS, TASKS)
                for key, b, a in r.answers}
    for key, answer in before.items():
        if answer != after[key]:
            assert compared.get(key) == (answer, after[key]), (key, base_lines, head_lines)
    for key, (b, a) in compared.items():  # and each compared reading is the store's
        assert (before.get(key, b), after.get(key, a)) == (b, a)


def _store(*records: dict) -> VerdictStore:
    return VerdictStore.from_bytes("".join(json.dumps(r) + "\n" for r in records).encode(), "v")


def test_a_copy_of_an_earlier_line_is_a_changed_answer() -> None:
    no, yes = ({"item": "R0", "check_text": TEXTS[0], "answer": a} for a in ("no", "yes"))
    base = _store(no, yes)
    assert [str(a) for a in changed_answers(base, _store(no, yes, no), ITEMS)] == [f"{TEXTS[0]} on R0: yes -> no"]
    assert changed_answers(base, _store(no, yes, yes), ITEMS) == []  # the same answer, re-recorded


def test_a_stale_line_winning_over_an_answer_is_a_removed_one() -> None:
    line = {"item": "R0", "check_text": TEXTS[0], "answer": "no"}
    stale = {**line, "answer": "yes", "item_hash": ITEMS[1].content_hash}
    assert [str(r) for r in removed_answers(_store(line), _store(line, stale), ITEMS)] == [f"{TEXTS[0][:60]} on R0 (no)"]


def test_a_line_recorded_under_another_task_hides_the_answer_under_the_rubrics_task() -> None:
    line = {"item": "R0", "check_text": TEXTS[0], "answer": "no"}
    other_task = {**line, "answer": "yes", "task_hash": "t2"}
    assert removed_answers(_store(line), _store(line, other_task), ITEMS) == []  # any task: still answered
    assert len(removed_answers(_store(line), _store(line, other_task), ITEMS, tasks=["t1"])) == 1


def test_an_answer_under_the_rubrics_task_where_the_base_had_only_another_tasks_is_a_fill() -> None:
    other_task = {"item": "R0", "check_text": TEXTS[0], "answer": "yes", "task_hash": "t2"}
    keyless = {"item": "R0", "check_text": TEXTS[0], "answer": "no"}
    filled = filled_answers(_store(other_task), _store(other_task, keyless), ITEMS, tasks=["t1"])
    assert [(f.item, f.base, f.head) for f in filled] == [("R0", "none", "no")]


def test_the_merged_record_is_the_tips_lines_then_the_lines_the_pr_appended() -> None:
    from rubric_gate.trust import merged_record

    no, yes = ({"item": "R0", "check_text": TEXTS[0], "answer": a} for a in ("no", "yes"))
    raw = {"base": [no], "tip": [no, yes], "appended": [no, no], "edited": [yes]}
    cache = BlobCache()
    stores = {name: VerdictStore.from_blob(name, "".join(json.dumps(r) + "\n" for r in lines).encode(), name,
                                           cache=cache) for name, lines in raw.items()}
    merged = merged_record(stores["base"], stores["appended"], stores["tip"])
    assert merged is not None and len(merged) == 3
    assert [str(a) for a in changed_answers(stores["tip"], merged, ITEMS)] == [f"{TEXTS[0]} on R0: yes -> no"]
    assert merged_record(stores["base"], stores["edited"], stores["tip"]) is None  # only a rebase tells
    assert merged_record(stores["base"], stores["base"], stores["tip"]) is stores["tip"]


# -- what a trusted source must have answered for a change to stand --------------------------------

def _keyed(answer: str, item: CalibrationItem = ITEMS[0], **key: object) -> dict:
    return {"item": item.id, "check_text": TEXTS[0], "answer": answer, "judge": "j", "prompt": "p",
            "task_hash": "t1", "item_hash": item.content_hash, **key}


def _needs(base: VerdictStore, head: VerdictStore, judges: dict[str, str] | None = None, tasks=("t1",)):
    from rubric_gate.trust import confirmation_keys

    (answer,) = changed_answers(base, head, ITEMS, tasks) or filled_answers(base, head, ITEMS, tasks)
    return confirmation_keys(answer, head, tasks, {"j": "p"} if judges is None else judges)


def test_a_keyed_line_is_confirmed_at_its_own_full_key_only() -> None:
    from rubric_gate.trust import confirmed_at

    base = _store({"item": "R0", "check_text": TEXTS[0], "answer": "yes"})
    line = _keyed("no", sample=2)
    needs = _needs(base, _store({"item": "R0", "check_text": TEXTS[0], "answer": "yes"}, line))
    assert needs == [(("j", "p", "t1", TEXTS[0], ITEMS[0].content_hash, 2), "no")]
    assert confirmed_at(needs, _store(line))
    assert not confirmed_at(needs, _store(_keyed("yes", sample=2)))  # the trusted source answers otherwise
    for other in ({"sample": 0}, {"prompt": "p2"}, {"judge": "k"}, {"task_hash": "t2"}):
        assert not confirmed_at(needs, _store({**line, **other})), other  # the same answer at another key


def test_a_keyed_line_no_configured_judge_reads_cannot_be_confirmed() -> None:
    base = _store({"item": "R0", "check_text": TEXTS[0], "answer": "yes"})
    head = _store({"item": "R0", "check_text": TEXTS[0], "answer": "yes"}, _keyed("no"))
    assert _needs(base, head, judges={"j": "p2"}) is None  # another prompt version
    assert _needs(base, head, judges={"k": "p"}) is None  # another judge
    assert _needs(base, head, judges={}) is None  # no judge
    other_task = _store({"item": "R0", "check_text": TEXTS[0], "answer": "yes"}, _keyed("no", task_hash="t9"))
    assert _needs(base, other_task, tasks=("t1", "t9")) is not None
    assert _needs(base, other_task, tasks=("t1", "t2")) is None  # a task no rubric reading the file has


def test_a_keyless_line_needs_every_configured_judge_under_every_task() -> None:
    base = _store({"item": "R0", "check_text": TEXTS[0], "answer": "yes"})
    head = _store({"item": "R0", "check_text": TEXTS[0], "answer": "no"})
    needs = _needs(base, head, judges={"j": "p", "k": "q"}, tasks=("t1", "t2"))
    assert needs is not None and {key[:3] for key, _ in needs} == {("j", "p", "t1"), ("j", "p", "t2"),
                                                                   ("k", "q", "t1"), ("k", "q", "t2")}
    assert {answer for _, answer in needs} == {"no"}


# Each field of a recorded verdict changed alone, on a line as hand-recorded and on one a judge wrote.
HAND = {"item": "R0", "check_text": TEXTS[0], "answer": "no"}
JUDGED = {**HAND, "judge": "openai:j", "prompt": "p0", "task_hash": "t1", "item_hash": ITEMS[0].content_hash}
CHANGED = {"item": "R2", "check_text": TEXTS[1], "answer": "yes", "judge": "openai:m", "prompt": "p1",
           "item_hash": ITEMS[1].content_hash, "task_hash": "t2", "sample": 1, "check": "A", "quote": "q",
           "usage": {"input_tokens": 1, "output_tokens": 1}, "at": "2024-01-01T00:00:00Z", "batch": "b1",
           "unverified_quote": "q", "served_model": "m2"}


def _store(*lines: dict) -> VerdictStore:
    return VerdictStore.from_bytes("".join(json.dumps(line) + "\n" for line in lines).encode(), "v.jsonl")


@pytest.mark.parametrize("name", list(Verdict.model_fields))
def test_each_verdict_fields_rule_is_whether_a_change_of_it_alone_moves_an_answer(name: str) -> None:
    """What a lookup matches on and the answer it reads are compared (a change needs the override
    unless a judge confirms it); the other fields are notes no lookup reads."""
    other = {"item": "R1", "check_text": TEXTS[0], "answer": "yes"}
    moved = False
    for line in (HAND, JUDGED):
        base, head = _store(line, other), _store({**line, name: CHANGED[name]}, other)
        moved |= any(found(base, head, ITEMS, TASKS) for found in (changed_answers, removed_answers, filled_answers))
    assert moved == rule_of(verdict_field(name)).needs_override
