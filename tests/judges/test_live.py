"""Real provider APIs (opt-in: `pytest --live`, with ANTHROPIC_API_KEY / OPENAI_API_KEY set)."""

from __future__ import annotations

import os

import pytest

from rubric_gate.judges import judge_missing
from rubric_gate.verdicts import VerdictStore
from tests.judges.conftest import make_items, make_rubric

LIVE_JUDGES = [
    ("anthropic:" + os.environ.get("RUBRIC_GATE_LIVE_ANTHROPIC_MODEL", "claude-haiku-4-5"), "ANTHROPIC_API_KEY"),
    ("openai:" + os.environ.get("RUBRIC_GATE_LIVE_OPENAI_MODEL", "gpt-4o-mini"), "OPENAI_API_KEY"),
]


@pytest.mark.live
@pytest.mark.parametrize(("judge", "key"), LIVE_JUDGES)
def test_live_judge_answers_obvious_pairs(tmp_path, judge: str, key: str) -> None:
    if not os.environ.get(key):
        pytest.skip(f"{key} not set")
    items = make_items(4)
    store = VerdictStore.load(tmp_path / "v.jsonl", missing_ok=True)
    stats = judge_missing([make_rubric(["apple", "pear"])], items, store, judge, concurrency=4, progress=False)
    assert stats.calls == 8 and stats.failed == 0 and stats.input_tokens > 0
    # Item i mentions apple when bit 0 of i is set, pear when bit 1 is set.
    answers = {(v.item, v.check_text.split()[-1]): v.answer for v in VerdictStore.load(store.path)}
    assert answers[("r3", "apple")] == "yes" and answers[("r0", "pear")] == "no"
