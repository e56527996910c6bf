"""Pending judge jobs hold their pairs, not rendered prompts: a prompt is rendered when a worker
takes its job, so memory does not grow with the prompts of every pending pair."""

from __future__ import annotations

import pytest

from rubric_gate.calibration import CalibrationItem
from rubric_gate.judges import runner
from rubric_gate.judges.pairs import Pair
from rubric_gate.judges.prompt import render_checklist, render_per_check


def pairs(n_items: int, n_checks: int) -> list[Pair]:
    items = [CalibrationItem(id=f"r{i}", input=f"in {i}", output=f"out {i}", label="pass") for i in range(n_items)]
    return [Pair(f"c{j}", f"Check {j} holds.", item, "Summarize.") for item in items for j in range(n_checks)]


@pytest.mark.parametrize("mode", ["per-check", "checklist"])
def test_jobs_render_their_prompt_only_when_asked(mode: str, monkeypatch) -> None:
    rendered: list[str] = []
    monkeypatch.setattr(runner, "render_per_check", lambda *a: rendered.append("p") or render_per_check(*a))
    monkeypatch.setattr(runner, "render_checklist", lambda *a: rendered.append("c") or render_checklist(*a))
    jobs = runner.build_jobs(pairs(50, 3), mode)  # type: ignore[arg-type]
    assert len(jobs) == (150 if mode == "per-check" else 50)
    assert rendered == []
    request = jobs[7].request
    assert len(rendered) == 1
    if mode == "per-check":
        pair = jobs[7].pairs[0]
        assert request.prompt == render_per_check(pair.task, pair.item.input, pair.item.output, pair.check_text)
        assert request.max_tokens == runner.PER_CHECK_MAX_TOKENS
    else:
        first = jobs[7].pairs[0]
        assert request.prompt == render_checklist(first.task, first.item.input, first.item.output,
                                                  [(f"c{i + 1}", p.check_text) for i, p in enumerate(jobs[7].pairs)])
        assert jobs[7].labels == ("c1", "c2", "c3")
