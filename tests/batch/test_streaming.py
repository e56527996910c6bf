"""Streamed batch submission and collection give what the listed pairs gave: the same pairs,
order, jobs and request counts as `missing_pairs` fed to the old `iter_jobs`; results routed
through journal offsets; collected rows read back from the written lines; journal recovery."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_gate.batch.journal import BatchJournal, journal_path
from rubric_gate.batch.keys import PairKeys
from rubric_gate.batch.pending import PairGrid, PendingPairs
from rubric_gate.calibration import CalibrationItem, CalibrationSet
from rubric_gate.judges import PROMPT_VERSION, missing_pairs
from rubric_gate.judges.pairs import Pair
from rubric_gate.judges.prompt import prompt_version
from rubric_gate.judges.runner import Job, build_jobs
from rubric_gate.rubric import Check, Rubric
from rubric_gate.verdicts import Verdict, VerdictStore, task_hash
from tests.judges.conftest import make_items, make_rubric

JUDGE = "openai:gpt-4o-mini"


def old_iter_jobs(pairs: list[Pair], mode: str) -> list[Job]:
    """The submission order before streaming (batch/requests.py's iter_jobs), kept as the reference."""
    if mode == "per-check":
        return [job for pair in pairs for job in build_jobs([pair], mode)]  # type: ignore[arg-type]
    groups: dict[tuple[str, str], list[Pair]] = {}
    for pair in pairs:
        groups.setdefault((pair.item_hash, pair.task), []).append(pair)
    return [job for group in groups.values() for job in build_jobs(group, mode)]  # type: ignore[arg-type]


def old_count_requests(pairs: list[Pair], mode: str) -> int:
    if mode == "per-check":
        return len(pairs)
    return len({(p.item.content_hash, p.task) for p in pairs})


def rubrics() -> list[Rubric]:
    """A base and a head sharing checks, one reworded only in whitespace, one added, one removed."""
    base = make_rubric()
    head_checks = [Check(id="k0", text="The  output mentions apple"), *base.checks[1:4],
                   Check(id="k9", text="The output mentions lime")]
    return [base, base.model_copy(update={"checks": head_checks, "task": "List fruit, please."})]


def items() -> CalibrationSet:
    made = list(make_items(8).items)
    # same content as r3 under another id: one pair per content, as all_pairs counts them
    made.insert(5, CalibrationItem(id="r3-again", input="basket 3", output=made[3].output, label=made[3].label))
    return CalibrationSet(tuple(made), "cal")


def partly_judged(tmp_path: Path, mode: str) -> VerdictStore:
    store = VerdictStore.load(tmp_path / "verdicts.jsonl", missing_ok=True)
    chosen = rubrics()
    task = task_hash(chosen[-1].task)
    cal = items()
    recorded = []
    for n, (check, item) in enumerate((c, i) for c in chosen[-1].checks for i in cal.items):
        if n % 3 == 0:  # a third judged already, some under another prompt version (still missing)
            prompt = prompt_version(mode) if n % 2 == 0 else "v0-other"
            recorded.append(Verdict(item=item.id, check_text=check.text, answer="yes", judge=JUDGE, prompt=prompt,
                                    item_hash=item.content_hash, task_hash=task))
    store.append(recorded)
    return store


@pytest.mark.parametrize("mode", ["per-check", "checklist"])
def test_streamed_pairs_jobs_and_counts_are_the_listed_ones(tmp_path: Path, mode: str) -> None:
    store = partly_judged(tmp_path, mode)
    listed = missing_pairs(rubrics(), items(), store, JUDGE, mode=mode)  # type: ignore[arg-type]
    pending = PendingPairs(PairGrid(rubrics(), items()), store, JUDGE, mode)  # type: ignore[arg-type]
    assert 0 < len(listed) < len(PairGrid(rubrics(), items()))
    assert list(pending.pairs()) == listed
    assert len(pending) == pending.count_missing == len(listed)
    assert list(pending.jobs()) == old_iter_jobs(listed, mode)
    assert pending.requests() == old_count_requests(listed, mode)
    assert [job.request for job in pending.jobs()] == [job.request for job in old_iter_jobs(listed, mode)]


def test_skipped_pairs_leave_the_stream_but_count_as_missing(tmp_path: Path) -> None:
    store = partly_judged(tmp_path, "checklist")
    listed = missing_pairs(rubrics(), items(), store, JUDGE, mode="checklist")
    busy = PairKeys(p.key for p in listed[::2])
    pending = PendingPairs(PairGrid(rubrics(), items()), store, JUDGE, "checklist", lambda key: key in busy)
    assert list(pending.pairs()) == listed[1::2]
    assert pending.count_missing == len(listed)
    assert list(pending.jobs()) == old_iter_jobs(listed[1::2], "checklist")


def test_pair_keys_hold_digests_with_exact_count_and_membership() -> None:
    keys = PairKeys([("a", "h1", "t"), ("a", "h1", "t"), ("b", "h1", "t")])
    assert len(keys) == 2
    assert ("a", "h1", "t") in keys and ("b", "h1", "t") in keys
    assert ("a", "h2", "t") not in keys and ("a", "h1", "") not in keys
    keys.add(("a", "h2", "t"))
    assert ("a", "h2", "t") in keys and len(keys) == 3


def test_request_index_hands_each_request_out_once_and_reads_the_rest_back(tmp_path: Path) -> None:
    journal = BatchJournal(tmp_path / "v.jsonl.batches")
    journal.open_batch("rgA", "openai", JUDGE, PROMPT_VERSION)
    for n in range(4):
        journal.add_request("rgA", f"rgA-{n}", [(f"r{n}", f"h{n}", "k1", "text", "t")])
    journal.add_request("rgA", "custom-id", [("rx", "hx", "k1", "text", "t")])  # not the cutter's form
    journal.open_batch("rgB", "openai", JUDGE, PROMPT_VERSION)
    journal.add_request("rgB", "rgB-0", [("other", "ho", "k1", "text", "t")])
    journal.add_request("rgA", "rgA-2", [("r2-again", "h2", "k1", "text", "t")])  # repeated: the last wins
    journal.sync()
    assert journal.requests_of("rgA") == {
        "rgA-0": [("r0", "h0", "k1", "text", "t")], "rgA-1": [("r1", "h1", "k1", "text", "t")],
        "rgA-2": [("r2-again", "h2", "k1", "text", "t")], "rgA-3": [("r3", "h3", "k1", "text", "t")],
        "custom-id": [("rx", "hx", "k1", "text", "t")]}
    with journal.request_index("rgA") as index:
        assert len(index) == 5
        assert index.take("rgA-1") == [("r1", "h1", "k1", "text", "t")]
        assert index.take("rgA-1") is None  # a repeated result is not routed twice
        assert index.take("rgB-0") is None and index.take("rgA-9") is None and index.take("rgA-01") is None
        assert index.take("custom-id") == [("rx", "hx", "k1", "text", "t")]
        assert index.take("custom-id") is None
        assert list(index.remaining()) == [[("r0", "h0", "k1", "text", "t")], [("r2-again", "h2", "k1", "text", "t")],
                                           [("r3", "h3", "k1", "text", "t")]]
    journal.close()


def test_journal_recovery_streams_and_keeps_what_reads(tmp_path: Path) -> None:
    path = journal_path(tmp_path / "verdicts.jsonl")
    journal = BatchJournal(path)
    journal.open_batch("rgA", "openai", JUDGE, PROMPT_VERSION)
    journal.add_request("rgA", "rgA-0", [("r1", "h1", "k1", "The output mentions apple", "t1")])
    journal.add_request("rgA", "rgA-1", [("r2", "h2", "k1", "The output mentions apple", "t1")])
    journal.sync()
    journal.submitted("rgA", "batch-1")
    journal.close()
    lines = path.read_bytes().splitlines(keepends=True)
    damaged = lines[0] + b'{"event": "request", "local": "rgA", \xff\n' + lines[2] + lines[3] + b'{"event": "clo'
    path.write_bytes(damaged)
    reopened = BatchJournal(path)
    (batch,) = reopened.open_batches(JUDGE, PROMPT_VERSION)
    assert batch.batch_id == "batch-1" and batch.requests == 1
    assert ("The output mentions apple", "h2", "t1") in batch.keys
    assert ("The output mentions apple", "h1", "t1") not in batch.keys
    assert path.read_bytes() == lines[0] + lines[2] + lines[3]  # the bad line and the torn tail dropped
    (aside,) = tmp_path.glob("verdicts.jsonl.batches.damaged-*")
    assert aside.read_bytes() == damaged
    assert "line 2 of the batch journal did not read" in reopened.warnings[0]
    assert reopened.requests_of("rgA") == {"rgA-1": [("r2", "h2", "k1", "The output mentions apple", "t1")]}
    reopened.close()


def test_rows_appended_without_objects_read_like_kept_ones(tmp_path: Path) -> None:
    verdicts = [Verdict(item=f"r{i}", check_text="The output mentions apple", answer="no" if i % 2 else "yes",
                        judge=JUDGE, prompt=PROMPT_VERSION, item_hash=f"h{i}", task_hash="t", quote=f"q{i}",
                        batch="b1") for i in range(5)]
    kept = VerdictStore.load(tmp_path / "kept.jsonl", missing_ok=True)
    streamed = VerdictStore.load(tmp_path / "streamed.jsonl", missing_ok=True)
    (tmp_path / "streamed.jsonl").write_text('{"item": "r0", "check_text": "x", "answer": "yes"}')  # no newline
    streamed = VerdictStore.load(tmp_path / "streamed.jsonl")
    kept.append([Verdict(item="r0", check_text="x", answer="yes")])
    for store in (kept, streamed):
        store.append(verdicts[:2], keep=store is kept)
        store.append(verdicts[2:], keep=store is kept)
    assert list(streamed) == list(kept)
    assert not any(segment.objects for segment in streamed._data.segments)
    for store in (kept, streamed, VerdictStore.load(tmp_path / "streamed.jsonl")):
        rows = store.rows_for_keys("The output mentions apple", ["r1", "r4"], ["h1", "h4"], judge=JUDGE,
                                   prompt=PROMPT_VERSION, task="t")
        assert [store._verdict(int(r)) for r in rows] == [verdicts[1], verdicts[4]]
    assert json.loads((tmp_path / "streamed.jsonl").read_text().splitlines()[3])["quote"] == "q2"
