"""The action with `batch: true`: pending batches leave the check in progress, a re-run collects."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.action.harness import RUBRIC, Scenario, rubric_yaml
from tests.fakes.batches import FakeBatches


@pytest.fixture
def batches() -> Iterator[FakeBatches]:
    server = FakeBatches().start()
    yield server
    server.stop()


def test_pending_batches_then_a_rerun_collects_without_resubmitting(scenario: Scenario, batches: FakeBatches) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"])}, "add A2")
    env = {"OPENAI_BASE_URL": batches.openai_url, "OPENAI_API_KEY": "sk-test",
           "RUBRIC_GATE_BATCH_POLL_SECONDS": "0.05"}
    batches.hold = True
    first = scenario.run(head, judge="openai:fake-model", batch="true", batch_wait="0", env_extra=env)
    assert first.code == 1, first.stdout + first.stderr  # not passed yet
    assert first.outputs["decision"] == "pending", first.stdout
    body = scenario.fake.marked_comments()[0]["body"]
    assert "judging 25 pair(s) in batch, re-run to collect" in body
    (run,) = scenario.fake.check_runs.values()
    assert run["status"] == "in_progress" and "conclusion" not in run
    journal = scenario.git.path / ".rubric-gate" / "cache" / "verdicts.jsonl.batches"
    assert journal.is_file()  # kept in the verdict cache for the re-run
    created = len(batches.batches)

    batches.hold = False
    second = scenario.run(head, judge="openai:fake-model", batch="true", batch_wait="1", env_extra=env)
    assert second.outputs["decision"] in ("pass", "fail"), second.stdout + second.stderr
    assert len(batches.batches) == created  # collected, not resubmitted
    assert "in batch" not in scenario.fake.marked_comments()[0]["body"]
    cached = (scenario.git.path / ".rubric-gate" / "cache" / "verdicts.jsonl").read_text().splitlines()
    assert len(cached) == 25 and all('"batch"' in line for line in cached)


def test_a_bad_byte_in_the_batch_journal_is_moved_aside_and_the_run_recovers(scenario: Scenario,
                                                                              batches: FakeBatches) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"])}, "add A2")
    env = {"OPENAI_BASE_URL": batches.openai_url, "OPENAI_API_KEY": "sk-test",
           "RUBRIC_GATE_BATCH_POLL_SECONDS": "0.05"}
    batches.hold = True
    first = scenario.run(head, judge="openai:fake-model", batch="true", batch_wait="0", env_extra=env)
    assert first.outputs["decision"] == "pending", first.stdout
    cache = scenario.git.path / ".rubric-gate" / "cache"
    journal = cache / "verdicts.jsonl.batches"
    with journal.open("ab") as handle:
        handle.write(b'{"event":"note","text":"\xff"}\n')  # one bad byte on a complete line
    batches.hold = False
    second = scenario.run(head, judge="openai:fake-model", batch="true", batch_wait="1", env_extra=env)
    assert "Traceback" not in second.stderr, second.stderr
    assert second.outputs["decision"] in ("pass", "fail"), second.stdout + second.stderr
    assert "of the batch journal did not read" in second.stdout
    (aside,) = cache.glob("verdicts.jsonl.batches.damaged-*")
    assert b"\xff" in aside.read_bytes()
