"""The gate service's request: one set of rules for `check`'s options and the action's inputs."""

from __future__ import annotations

import pytest

from rubric_gate.service import CallBudget, GateRequest, RequestError


@pytest.mark.parametrize(("fields", "setting", "words"), [
    ({"judges": ("openai:m",), "samples": 2}, "samples", "odd"),
    ({"samples": 3}, "judge", "need a judge"),
    ({"min_stability": 0.5}, "judge", "need a judge"),
    ({"judges": ("openai:m",), "min_stability": 1.5}, "min_stability", "between 0 and 1"),
    ({"batch": True}, "batch", "needs a judge"),
    ({"judges": ("openai:a", "openai:b"), "batch": True}, "batch", "one judge once per pair"),
    ({"judges": ("openai:m",), "samples": 3, "batch": True}, "batch", "one judge once per pair"),
])
def test_a_request_the_gate_cannot_run_is_refused_naming_its_setting(fields: dict, setting: str, words: str) -> None:
    with pytest.raises(RequestError) as caught:
        GateRequest(**fields)
    assert caught.value.setting == setting and words in caught.value.message


def test_what_a_request_measures() -> None:
    assert not GateRequest().measures_reliability and GateRequest().judge is None
    assert not GateRequest(judges=("openai:m",)).measures_reliability
    assert GateRequest(judges=("openai:m",), samples=3).measures_reliability
    assert GateRequest(judges=("openai:a", "openai:b")).measures_reliability
    assert GateRequest(judges=("openai:a", "openai:b"), audit_rule=True).audit_panel() == ["openai:a"]
    assert GateRequest(judges=("openai:a",), audit_judges=("openai:c",)).audit_panel() == ["openai:c"]


def test_a_request_awaiting_its_judges_is_checked_once_they_are_named() -> None:
    waiting = GateRequest(samples=3, batch=False, awaiting_judges=True)  # the rules needing a judge wait
    with pytest.raises(RequestError) as caught:
        GateRequest(samples=2, awaiting_judges=True)  # those holding whoever judges do not
    assert caught.value.setting == "samples"
    assert waiting.judged_by(("openai:m",)) == GateRequest(judges=("openai:m",), samples=3)
    assert waiting.judged_by(()) == GateRequest()  # replay: nothing to ask a judge for


def test_one_budget_is_spent_across_steps() -> None:
    budget = CallBudget(10)
    budget.spend({"calls": 4})
    budget.spend({"calls": None})
    assert budget.left() == 6
    budget.spend({"calls": 9})
    assert budget.left() == 0 and CallBudget(None).left() is None
