"""Paraphrases go through the shared call layer: a burst of 429s lowers the concurrency (the
old paraphrase loop only waited and came back at full width), and they are retried, not lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubric_gate.llm.errors import UnansweredError
from rubric_gate.llm.limiter import AdaptiveLimiter
from rubric_gate.paraphrase import ParaphraseStore, ensure_paraphrases
from tests.fakes.llm import FakeLLM

TEXTS = ["The output mentions apple", "The output mentions pear"]


def _record_limiter(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """The client's own view, in order: each call let through (with how many are then in flight),
    each cut on back pressure and each success (with the limit after it). Counted where the
    paraphraser holds its slot, not at the server, so a loaded machine's late handler threads
    cannot inflate it."""
    events: list[tuple[str, int]] = []
    enter, cut, success = AdaptiveLimiter.__aenter__, AdaptiveLimiter.on_rate_limited, AdaptiveLimiter.on_success

    async def entering(self: AdaptiveLimiter) -> None:
        await enter(self)
        events.append(("enter", self.in_flight))

    def cutting(self: AdaptiveLimiter) -> None:
        cut(self)
        events.append(("cut", self.limit))

    def succeeding(self: AdaptiveLimiter) -> None:
        success(self)
        events.append(("success", self.limit))

    monkeypatch.setattr(AdaptiveLimiter, "__aenter__", entering)
    monkeypatch.setattr(AdaptiveLimiter, "on_rate_limited", cutting)
    monkeypatch.setattr(AdaptiveLimiter, "on_success", succeeding)
    return events


def test_a_429_burst_lowers_paraphrase_concurrency(fake: FakeLLM, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    fake.delay = 0.05
    fake.script = ["429"] * 4  # the first wave, at the paraphraser's full width of 4, is refused
    events = _record_limiter(monkeypatch)
    store = ParaphraseStore.load(tmp_path / "p.jsonl")
    found, asked = ensure_paraphrases(TEXTS, "anthropic:judge-a", 3, store)
    assert asked == 6 and [len(found[t]) for t in TEXTS] == [3, 3]
    assert fake.received == 6 + 4  # every refused call asked again, once
    entered = [n for kind, n in events if kind == "enter"]
    assert max(entered[:4]) == 4  # the first wave: 4 at once
    first_cut = next(i for i, (kind, _) in enumerate(events) if kind == "cut")
    assert events[first_cut] == ("cut", 2)  # the burst halves the width
    until_success = next((i for i, (kind, _) in enumerate(events) if kind == "success"), len(events))
    after_cut = [n for kind, n in events[first_cut:until_success] if kind == "enter"]
    assert after_cut and max(after_cut) <= 2  # asked again at most 2 at once, not at full width
    assert max(n for kind, n in events if kind == "success") <= 4  # creeping back, never above the ceiling


def test_a_paraphrase_without_a_valid_answer_is_listed_not_guessed(fake: FakeLLM, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUBRIC_GATE_MAX_RETRIES", "1")
    fake.rules = {"mentions pear": "429"}
    store = ParaphraseStore.load(tmp_path / "p.jsonl")
    with pytest.raises(UnansweredError) as raised:
        ensure_paraphrases(TEXTS, "anthropic:judge-a", 1, store)
    failure = "anthropic:judge-a: paraphrase 1 of 'The output mentions pear': gave up after 1 retries (HTTP 429)"
    assert raised.value.failures == [failure]
    assert str(raised.value) == f"1 paraphrase calls have no valid answer, none guessed (1 rate limited): {failure}"
    assert store.get(TEXTS[0], "anthropic:judge-a", 0) is not None  # the good one is kept
    assert store.get(TEXTS[1], "anthropic:judge-a", 0) is None
