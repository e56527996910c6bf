"""Paraphrases go through the shared call layer: a burst of 429s lowers the concurrency (the
old paraphrase loop only waited and came back at full width), and they are retried, not lost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rubric_gate.llm.errors import UnansweredError
from rubric_gate.paraphrase import ParaphraseStore, ensure_paraphrases
from tests.fakes.llm import FakeLLM

TEXTS = ["The output mentions apple", "The output mentions pear"]


def _record_arrivals(server: FakeLLM) -> list[int]:
    """How many requests were already in flight when each request arrived."""
    arrivals: list[int] = []
    handle = server.handle

    def recording(handler: Any, body: dict[str, Any]) -> None:
        with server.lock:
            arrivals.append(server.in_flight)
        handle(handler, body)

    server.handle = recording  # type: ignore[method-assign]
    return arrivals


def test_a_429_burst_lowers_paraphrase_concurrency(fake: FakeLLM, tmp_path: Path) -> None:
    fake.delay = 0.05
    fake.script = ["429"] * 4  # the first wave, at the paraphraser's full width of 4, is refused
    arrivals = _record_arrivals(fake)
    store = ParaphraseStore.load(tmp_path / "p.jsonl")
    found, asked = ensure_paraphrases(TEXTS, "anthropic:judge-a", 3, store)
    assert asked == 6 and [len(found[t]) for t in TEXTS] == [3, 3]
    assert fake.received == 6 + 4  # every refused call asked again, once
    assert max(arrivals[:4]) == 3  # the first wave: 4 at once
    # Right after the 429s: at most 2 at once (halved; it creeps back up one success at a time).
    assert max(arrivals[4:6]) <= 1, str(arrivals)


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
