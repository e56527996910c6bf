"""`check` and the action gate through one service: the same edit, judged by the same panel with
the same samples, gets the same decisions, and both spend one call budget per run."""

from __future__ import annotations

import json

import pytest

from rubric_gate.cli.main import main
from tests.action.harness import FAILS, LABELS, RUBRIC, TEXTS, Scenario, rubric_yaml


def _judge(prompt: str) -> str:
    check = next((cid for cid, text in TEXTS.items() if text in prompt), None)
    item = next((i for i in LABELS if f"review {i}" in prompt), None)
    return "no" if check is not None and item is not None and check in FAILS[item] else "yes"


def _env(scenario: Scenario) -> dict[str, str]:
    return {"OPENAI_BASE_URL": f"{scenario.fake.url}/v1", "OPENAI_API_KEY": "sk-test"}


def test_check_and_the_action_decide_an_edit_alike_with_a_panel_and_samples(
        scenario: Scenario, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    scenario.fake.judge = _judge
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D", "A2"])}, "delete A, add A2")
    judges = "openai:fake-a,openai:fake-b"
    action = scenario.run(head, judge=judges, samples="3", env_extra=_env(scenario))
    assert action.code == 1, action.stdout + action.stderr
    (rubric,) = action.report()["rubrics"]
    in_action = {(c["check"], c["change"], c["decision"]) for c in rubric["report"]["changes"]}

    for name, value in _env(scenario).items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(scenario.git.path)
    capsys.readouterr()
    code = main(["check", "--base", f"main:{RUBRIC}", "--head", f"{head}:{RUBRIC}", "--judge", judges,
                 "--samples", "3", "--format", "json"])
    out = capsys.readouterr().out
    assert code == 1, out
    in_check = {(c["check"], c["change"], c["decision"]) for c in json.loads(out)["changes"]}
    assert in_check == in_action and ("A", "deleted", "rejected") in in_check, (in_check, in_action)
    assert json.loads(out)["judging"]["judges"] and rubric["report"]["judging"]["judges"]  # both asked the panel


def test_the_actions_call_budget_is_one_per_run(scenario: Scenario) -> None:
    """`max_judge_calls` bounds the run: judging a new check text on 5 items with 2 judges needs 10."""
    scenario.fake.judge = _judge
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"])}, "add A2")
    result = scenario.run(head, judge="openai:fake-a,openai:fake-b", max_judge_calls="6", env_extra=_env(scenario))
    assert result.code != 0 and scenario.fake.judge_calls <= 6, (scenario.fake.judge_calls, result.stdout)
