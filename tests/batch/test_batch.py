"""Batch judging through the real anthropic and openai SDKs against the local fake batch APIs:
routing by custom_id, resubmission, resume after a lost batch id, --no-wait, splitting."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from rubric_gate.batch import BatchJournal, journal_path, judge_in_batches
from rubric_gate.batch.outcome import BatchUnansweredError
from rubric_gate.errors import JudgeError
from rubric_gate.judges import PROMPT_VERSION, judge_missing, missing_pairs
from rubric_gate.llm.errors import UnansweredError
from rubric_gate.verdicts import VerdictStore
from tests.fakes.batches import FakeBatches
from tests.fakes.llm import FakeLLM
from tests.judges.conftest import expected, make_items, make_rubric

JUDGES = ["anthropic:claude-haiku-4-5", "openai:gpt-4o-mini"]
POLL = 0.01


@pytest.fixture
def batches(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeBatches]:
    server = FakeBatches().start()
    for name in ("ANTHROPIC_AUTH_TOKEN", "RUBRIC_GATE_PRICES", "RUBRIC_GATE_BATCH_PRICES",
                 "RUBRIC_GATE_BATCH_MAX_REQUESTS", "RUBRIC_GATE_BATCH_MAX_BYTES", "RUBRIC_GATE_BATCH_RESUBMITS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.anthropic_url)
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-anthropic-SECRET")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-SECRET")
    monkeypatch.setenv("RUBRIC_GATE_JUDGE_TIMEOUT", "5")
    yield server
    server.stop()


def store_at(tmp_path: Path) -> VerdictStore:
    return VerdictStore.load(tmp_path / "verdicts.jsonl", missing_ok=True)


def run(tmp_path: Path, judge: str, items_n: int = 8, **options: object):
    return judge_in_batches([make_rubric()], make_items(items_n), store_at(tmp_path), judge,
                            poll_interval=POLL, progress=False, **options)  # type: ignore[arg-type]


def assert_all_judged_once(tmp_path: Path, fake: FakeBatches, judge: str, items_n: int = 8) -> list:
    items = make_items(items_n)
    saved = list(VerdictStore.load(tmp_path / "verdicts.jsonl"))
    assert len(saved) == 5 * items_n
    assert len({(v.check_text, v.item) for v in saved}) == len(saved)  # each pair stored once
    by_id = {i.id: i for i in items.items}
    for verdict in saved:
        item = by_id[verdict.item]
        assert verdict.judge == judge and verdict.prompt == PROMPT_VERSION
        assert verdict.item_hash == item.content_hash
        assert verdict.answer == expected(verdict.check_text, item.output), verdict
        assert verdict.batch in fake.created
    assert not missing_pairs([make_rubric()], items, store_at(tmp_path), judge)
    return saved


@pytest.mark.parametrize("judge", JUDGES)
def test_every_pair_judged_once_and_routed_by_custom_id(batches: FakeBatches, tmp_path: Path, judge: str) -> None:
    batches.polls_to_end = 2
    outcome = run(tmp_path, judge)
    assert outcome.complete and outcome.stats.calls == 40 and outcome.stats.failed == 0
    assert len(batches.created) == 1 and outcome.submitted == batches.created == outcome.collected
    assert_all_judged_once(tmp_path, batches, judge)
    # Results came back shuffled, and every pair was asked exactly once.
    assert [r["custom_id"] for r in batches.batches[batches.created[0]].results] != sorted(
        (r["custom_id"] for r in batches.batches[batches.created[0]].results), key=lambda c: int(c.split("-")[1]))
    assert set(batches.requested.values()) == {1} and len(batches.requested) == 40
    assert (outcome.stats.input_tokens, outcome.stats.output_tokens) == (4000, 400)
    assert "40 batch requests answered" in outcome.summary and "at batch prices" in outcome.summary


def test_batch_verdict_is_a_live_verdict_plus_batch_id(batches: FakeBatches, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    live = FakeLLM().start()
    try:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", live.anthropic_url)
        judge_missing([make_rubric()], make_items(), VerdictStore.load(tmp_path / "live.jsonl", missing_ok=True),
                      JUDGES[0], progress=False)
    finally:
        live.stop()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", batches.anthropic_url)
    run(tmp_path, JUDGES[0])
    strip = {"at", "batch"}
    live_lines = {json.dumps({k: v for k, v in json.loads(x).items() if k not in strip}, sort_keys=True)
                  for x in (tmp_path / "live.jsonl").read_text().splitlines()}
    batch_lines = [json.loads(x) for x in (tmp_path / "verdicts.jsonl").read_text().splitlines()]
    assert all(x["batch"] == batches.created[0] for x in batch_lines)
    assert {json.dumps({k: v for k, v in x.items() if k not in strip}, sort_keys=True) for x in batch_lines} == live_lines
    # The same request body as the live call, as the batch request's params.
    params = batches.batches[batches.created[0]].requests[0]["params"]
    assert params["output_config"]["format"]["type"] == "json_schema" and params["model"] == "claude-haiku-4-5"


@pytest.mark.parametrize("judge", JUDGES)
def test_errored_expired_and_malformed_are_resubmitted(batches: FakeBatches, tmp_path: Path, judge: str) -> None:
    batches.rules = {"mentions kiwi": ["errored"] * 8, "mentions fig": ["expired"] * 3,
                     "mentions plum": ["nonjson"] * 2, "mentions pear": ["canceled"]}
    outcome = run(tmp_path, judge)
    assert outcome.complete and outcome.stats.failed == 0
    assert len(batches.created) == 2  # the first batch, then one with the 14 unanswered pairs
    assert len(batches.batches[batches.created[1]].requests) == 14 and outcome.stats.retries == 14
    assert_all_judged_once(tmp_path, batches, judge)
    assert sum(n for (check, _), n in batches.requested.items() if "kiwi" in check) == 16


def test_resubmission_is_bounded_and_nothing_is_guessed(batches: FakeBatches, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUBRIC_GATE_BATCH_RESUBMITS", "1")
    batches.rules = {"mentions kiwi": ["errored"] * 100}
    with pytest.raises(JudgeError, match="8 pairs have no valid answer after 1 resubmissions, none guessed") as raised:
        run(tmp_path, JUDGES[0])
    assert len(batches.created) == 2
    # The typed error carries what the run did: the failures listed, its statistics and outcome.
    error = raised.value
    assert isinstance(error, UnansweredError) and isinstance(error, BatchUnansweredError)
    assert len(error.failures) == 8 and all(" @ " in f for f in error.failures)
    assert error.stats is error.outcome.stats and error.stats.failed == 8
    assert error.outcome.submitted == batches.created and error.outcome.complete
    saved = list(VerdictStore.load(tmp_path / "verdicts.jsonl"))
    assert len(saved) == 32 and not any("kiwi" in v.check_text for v in saved)


@pytest.mark.parametrize(("judge", "status"), [(JUDGES[1], "expired"), (JUDGES[1], "cancelled"),
                                               (JUDGES[0], "expired"), (JUDGES[0], "cancelled")])
def test_expired_or_cancelled_batch_is_resubmitted(batches: FakeBatches, tmp_path: Path, judge: str,
                                                   status: str) -> None:
    batches.batch_status = [status]
    outcome = run(tmp_path, judge)
    assert outcome.complete and len(batches.created) == 2 and outcome.stats.retries == 40
    assert_all_judged_once(tmp_path, batches, judge)


def test_kill_while_collecting_stores_each_verdict_once(batches: FakeBatches, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed after some verdicts were appended but before the batch was marked collected."""
    import rubric_gate.batch.collect as collect

    monkeypatch.setattr(collect, "APPEND_CHUNK", 10)
    appended = 0
    real_append = VerdictStore.append

    def append_then_die(self: VerdictStore, verdicts, **options) -> None:  # type: ignore[no-untyped-def]
        nonlocal appended
        real_append(self, verdicts, **options)
        appended += 1
        if appended == 2:
            raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(VerdictStore, "append", append_then_die)
        with pytest.raises(KeyboardInterrupt):
            run(tmp_path, JUDGES[0])
    assert len((tmp_path / "verdicts.jsonl").read_text().splitlines()) == 20
    outcome = run(tmp_path, JUDGES[0])
    assert outcome.submitted == [] and outcome.collected == batches.created
    assert len((tmp_path / "verdicts.jsonl").read_text().splitlines()) == 40
    assert_all_judged_once(tmp_path, batches, JUDGES[0])


@pytest.mark.parametrize("judge", JUDGES)
def test_no_wait_then_reruns_collect_and_finally_make_no_request(batches: FakeBatches, tmp_path: Path,
                                                                 judge: str) -> None:
    batches.hold = True
    first = run(tmp_path, judge, wait_seconds=0)
    assert first.pending_pairs == 40 and len(first.pending) == 1 and not first.complete
    assert "judging 40 pairs in batch" in first.summary and "re-run to collect" in first.summary
    assert not (tmp_path / "verdicts.jsonl").exists()
    again = run(tmp_path, judge, wait_seconds=0)  # still processing: polls, submits nothing
    assert again.pending_pairs == 40 and again.submitted == [] and len(batches.created) == 1
    batches.hold = False
    collected = run(tmp_path, judge)
    assert collected.complete and collected.submitted == [] and collected.collected == batches.created
    assert_all_judged_once(tmp_path, batches, judge)
    assert not journal_path(tmp_path / "verdicts.jsonl").exists()  # nothing open: journal dropped
    before = batches.total_requests
    last = run(tmp_path, judge)
    assert batches.total_requests == before and last.stats.calls == 0 and last.stats.reused == 40


@pytest.mark.parametrize("judge", JUDGES)
def test_lost_batch_id_is_found_again_not_resubmitted(batches: FakeBatches, tmp_path: Path, judge: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A kill between the provider accepting a batch and the journal recording its id."""
    def killed(self: BatchJournal, local: str, batch_id: str) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(BatchJournal, "submitted", killed)
        with pytest.raises(KeyboardInterrupt):
            run(tmp_path, judge)
    assert len(batches.created) == 1
    journal = journal_path(tmp_path / "verdicts.jsonl").read_text()
    assert '"event":"open"' in journal and '"event":"submitted"' not in journal
    outcome = run(tmp_path, judge)
    assert len(batches.created) == 1 and outcome.collected == batches.created
    assert_all_judged_once(tmp_path, batches, judge)


@pytest.mark.parametrize("judge", JUDGES)
def test_split_into_batches_above_the_size_limit(batches: FakeBatches, tmp_path: Path, judge: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUBRIC_GATE_BATCH_MAX_BYTES", "6000")
    outcome = run(tmp_path, judge)
    assert outcome.complete and len(batches.created) > 2
    sizes = [sum(len(json.dumps(r, separators=(",", ":")).encode()) + 1 for r in b.requests)
             for b in batches.batches.values()]
    assert max(sizes) <= 6000 and sum(len(b.requests) for b in batches.batches.values()) == 40
    assert_all_judged_once(tmp_path, batches, judge)


def test_split_by_request_count_and_checklist_mode(batches: FakeBatches, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUBRIC_GATE_BATCH_MAX_REQUESTS", "3")
    outcome = run(tmp_path, JUDGES[0], mode="checklist")  # one request per item: 8 requests
    assert outcome.complete and [len(b.requests) for b in batches.batches.values()] == [3, 3, 2]
    saved = list(VerdictStore.load(tmp_path / "verdicts.jsonl"))
    assert len(saved) == 40 and all(v.batch in batches.created for v in saved)


def test_dry_run_and_max_calls_count_batch_requests(batches: FakeBatches, tmp_path: Path) -> None:
    dry = run(tmp_path, JUDGES[0], dry_run=True)
    live = judge_missing([make_rubric()], make_items(), store_at(tmp_path), JUDGES[0], dry_run=True)
    assert dry.stats.planned == 40 and "would send 40 batch requests" in dry.summary
    assert dry.stats.cost_usd == pytest.approx(live.cost_usd / 2)
    with pytest.raises(JudgeError, match="40 batch requests needed, above --max-calls 39"):
        run(tmp_path, JUDGES[0], max_calls=39)
    assert batches.total_requests == 0 and not (tmp_path / "verdicts.jsonl").exists()


def test_journal_keeps_other_judges_batches_and_survives_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl.batches"
    journal = BatchJournal(path)
    for local, judge in (("rgA", JUDGES[0]), ("rgB", JUDGES[1])):
        journal.open_batch(local, judge.split(":")[0], judge, PROMPT_VERSION)
        journal.add_request(local, f"{local}-0", [("r1", "sha256:1", "k1", "The  output mentions apple", "t1")])
        journal.sync()
        journal.submitted(local, f"id-{local}")
    journal.closed("rgB", "id-rgB")
    journal.close()
    with path.open("a") as handle:
        handle.write('{"event":"closed","local":"rgA"')  # a kill mid-write: that step never happened
    reopened = BatchJournal(path)
    (open_a,) = reopened.open_batches(JUDGES[0], PROMPT_VERSION)
    assert (open_a.batch_id, open_a.requests) == ("id-rgA", 1)
    assert ("The output mentions apple", "sha256:1", "t1") in open_a.keys and len(open_a.keys) == 1
    assert ("The output mentions apple", "sha256:2", "t1") not in open_a.keys
    assert reopened.open_batches(JUDGES[1], PROMPT_VERSION) == []
    assert reopened.open_batches(JUDGES[0], "v0-other") == []
    assert reopened.requests_of("rgA") == {"rgA-0": [("r1", "sha256:1", "k1", "The  output mentions apple", "t1")]}
    assert not reopened.remove_if_idle()  # rgA is still open
    reopened.closed("rgA", "id-rgA")  # the torn line is cut before this one is written
    assert reopened.open_batches(JUDGES[0], PROMPT_VERSION) == []
    assert reopened.remove_if_idle() and not path.exists()


def test_batch_prices_are_half_the_live_table_unless_overridden(monkeypatch: pytest.MonkeyPatch) -> None:
    from rubric_gate.batch import batch_price, estimate_batch_cost

    monkeypatch.delenv("RUBRIC_GATE_PRICES", raising=False)
    monkeypatch.delenv("RUBRIC_GATE_BATCH_PRICES", raising=False)
    assert batch_price("claude-haiku-4-5-20251001") == (0.5, 2.5)
    assert batch_price("gpt-4o-mini") == (0.075, 0.3)
    assert estimate_batch_cost("unknown-model", 10, 10) is None
    monkeypatch.setenv("RUBRIC_GATE_BATCH_PRICES", '{"gpt-4o-mini": [0.1, 0.2]}')
    assert batch_price("gpt-4o-mini") == (0.1, 0.2)
    monkeypatch.setenv("RUBRIC_GATE_BATCH_PRICES", "{not json")
    with pytest.raises(JudgeError, match="RUBRIC_GATE_BATCH_PRICES"):
        batch_price("gpt-4o-mini")


def test_openai_compatible_server_without_key_gets_the_live_body(batches: FakeBatches, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")  # a local server (vLLM) through OPENAI_BASE_URL alone
    run(tmp_path, JUDGES[1], items_n=2)
    batch = batches.batches[batches.created[0]]
    assert batch.metadata["tool"] == "rubric-gate" and batch.metadata["store"] == "verdicts.jsonl"
    body = batch.requests[0]["body"]
    assert body["response_format"]["json_schema"]["strict"] is True and body["temperature"] == 0
    assert "max_tokens" in body and body["model"] == "gpt-4o-mini"
    assert_all_judged_once(tmp_path, batches, JUDGES[1], items_n=2)


@pytest.mark.parametrize("judge", JUDGES)
def test_a_journal_edited_to_swap_two_requests_pairs_routes_neither_result(batches: FakeBatches, tmp_path: Path,
                                                                          judge: str) -> None:
    """The journal can come back from a place others write (a PR's cache scope): each custom_id
    ends with a digest of the pairs it was sent for, which the provider echoes, so a result is
    never stored for pairs the journal swapped in. Those pairs are judged again instead."""
    batches.hold = True
    first = run(tmp_path, judge, wait_seconds=0)
    assert first.pending_pairs == 40
    journal = journal_path(tmp_path / "verdicts.jsonl")
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    requests = [i for i, line in enumerate(lines) if line.get("event") == "request"]
    a, b = requests[0], requests[1]
    lines[a]["pairs"], lines[b]["pairs"] = lines[b]["pairs"], lines[a]["pairs"]
    journal.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    batches.hold = False
    collected = run(tmp_path, judge)
    assert collected.complete
    assert len(batches.created) == 2  # the two swapped requests' pairs went out again
    assert_all_judged_once(tmp_path, batches, judge)  # every stored answer is its own pair's
