"""The shared retry loop through the real Anthropic SDK against the fake server: 529
("overloaded") is back pressure like 429, the server's retry-after is waited at least, retries
are bounded, and what is left unanswered is raised as a typed error carrying the run's stats."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from rubric_gate.judges import JudgeRunStats, judge_missing
from rubric_gate.llm.errors import UnansweredError
from rubric_gate.llm.retry import MAX_RETRY_AFTER_S, RetryPolicy
from rubric_gate.verdicts import VerdictStore
from tests.fakes.llm import FakeLLM
from tests.judges.conftest import expected, make_items, make_rubric

JUDGE = "anthropic:claude-test"


def _arrivals(server: FakeLLM) -> list[float]:
    times: list[float] = []
    handle = server.handle

    def recording(handler: Any, body: dict[str, Any]) -> None:
        times.append(time.monotonic())
        handle(handler, body)

    server.handle = recording  # type: ignore[method-assign]
    return times


def test_overloaded_529_lowers_concurrency_and_waits_the_retry_after(fake: FakeLLM, tmp_path: Path) -> None:
    fake.retry_after = "0.4"
    fake.script = ["529"] * 4  # the first wave at concurrency 4 is refused
    arrivals = _arrivals(fake)
    store = VerdictStore.load(tmp_path / "verdicts.jsonl", missing_ok=True)
    items = make_items()
    stats = judge_missing([make_rubric()], items, store, JUDGE, concurrency=4, progress=False)
    assert (stats.calls, stats.retries, stats.failed) == (40, 4, 0)
    assert stats.concurrency == 4 and stats.lowest_concurrency <= 2
    # No retry before the server's retry-after: the first retry follows its own refusal (of the first
    # wave, whose last request may arrive later than that refusal on a loaded machine) by 0.4 s.
    assert arrivals[4] - arrivals[0] >= 0.4
    outputs = {i.id: i.output for i in items.items}
    assert all(v.answer == expected(v.check_text, outputs[v.item]) for v in store)


def test_retries_are_bounded_and_the_rest_is_raised_with_its_stats(fake: FakeLLM, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUBRIC_GATE_MAX_RETRIES", "2")
    fake.rules = {"mentions kiwi": "529"}
    store = VerdictStore.load(tmp_path / "verdicts.jsonl", missing_ok=True)
    with pytest.raises(UnansweredError) as raised:
        judge_missing([make_rubric()], make_items(), store, JUDGE, concurrency=4, progress=False)
    stats = raised.value.stats
    assert isinstance(stats, JudgeRunStats) and (stats.calls, stats.failed) == (32, 8)
    assert sorted(raised.value.failures) == [f"k4 @ r{i}: gave up after 2 retries (HTTP 529)" for i in range(8)]
    assert str(raised.value).startswith(f"{JUDGE}: 8 pairs have no valid answer, none guessed (8 rate limited): k4 @ r")
    assert len(VerdictStore.load(tmp_path / "verdicts.jsonl")) == 32  # the good ones are kept


def test_a_huge_retry_after_is_capped() -> None:
    policy = RetryPolicy(base_delay=1.0)
    assert MAX_RETRY_AFTER_S <= policy.delay(0, 10**9) <= MAX_RETRY_AFTER_S + 0.25
