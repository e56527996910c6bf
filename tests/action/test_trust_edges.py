"""Issue 17, the edges of the trust boundary: what keys a verdict, which events are gated, what an
override covers, and how the action fails. Each test is a real git repository, a PR and
`rubric-gate action` against the fake GitHub (the judge faked over HTTP where one is used)."""

from __future__ import annotations

import json

import yaml
from harness import FAILS, LABELS, RUBRIC, TEXTS, Scenario, rubric_yaml
from test_integrity import _on_main

HELPER = "rubrics/aaa-helper.yaml"  # sorts before rubrics/demo.yaml: gated (and judged) first
JUDGE_ENV = {"OPENAI_API_KEY": "sk-test"}


def _judge_env(scenario: Scenario) -> dict[str, str]:
    return {**JUDGE_ENV, "OPENAI_BASE_URL": f"{scenario.fake.url}/v1"}


def _helper_yaml() -> str:
    """A rubric sharing check B's text and the items, under a task that makes B catch R1."""
    data = yaml.safe_load(rubric_yaml(["B", "C", "D"]))
    data["id"] = "helper"
    data["task"] = "Lenient helper: flag every design that mentions R1."
    return yaml.safe_dump(data, sort_keys=False, width=10**6)


def _task_sensitive_judge(prompt: str) -> str:
    """B answers no on R1 only under the helper's task: the task is part of what the judge reads."""
    check = next(cid for cid, text in TEXTS.items() if text in prompt)
    item = next(i for i in LABELS if f"review {i}" in prompt)
    if "Lenient helper" in prompt and check == "B" and item == "R1":
        return "no"
    return "no" if check in FAILS[item] else "yes"


def _changes(result) -> dict[str, tuple[str, str]]:
    rubric = next(r for r in result.report()["rubrics"] if r["file"] == RUBRIC)
    return {c["check"]: (c["change"], c["decision"]) for c in rubric["report"]["changes"]}


# -- a verdict is keyed by the task it was judged under ---------------------------------------------

def test_a_helper_rubrics_verdicts_are_not_reused_for_the_strict_rubric_in_the_same_run(scenario: Scenario) -> None:
    scenario.fake.judge = _task_sensitive_judge
    head = scenario.git.commit({HELPER: _helper_yaml(), RUBRIC: rubric_yaml(["B", "C", "D"])},
                               "add a lenient helper, delete A")
    result = scenario.run(head, judge="openai:m", env_extra=_judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    assert _changes(result) == {"A": ("deleted", "rejected")}
    cached = [json.loads(line) for line in (result.workspace / ".rubric-gate/cache/verdicts.jsonl").open()]
    assert len({v["task_hash"] for v in cached}) == 2  # B judged under each task


def test_a_helper_rubrics_cached_verdicts_are_not_reused_by_a_later_run(scenario: Scenario) -> None:
    scenario.fake.judge = _task_sensitive_judge
    first = scenario.git.commit({HELPER: _helper_yaml()}, "add a lenient helper")
    assert scenario.run(first, judge="openai:m", env_extra=_judge_env(scenario)).code == 0
    scenario.git("reset", "-q", "--hard", scenario.base_sha)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head, judge="openai:m", env_extra=_judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    assert _changes(result) == {"A": ("deleted", "rejected")}


def test_the_push_warm_up_judges_each_rubric_under_its_own_task(scenario: Scenario) -> None:
    scenario.fake.judge = _task_sensitive_judge
    main = _on_main(scenario, {HELPER: _helper_yaml()}, "main gets a lenient helper")
    scenario.git("checkout", "-q", "main")
    push = scenario.run(main, judge="openai:m", event_name="push",
                        env_extra={**_judge_env(scenario), "GITHUB_SHA": main})
    assert push.code == 0, push.stdout + push.stderr
    warmed = scenario.fake.judge_calls
    assert warmed == 35  # the helper's 3 texts and demo's 4 on 5 items: B judged under both tasks
    scenario.git("checkout", "-q", "pr")
    scenario.git("reset", "-q", "--hard", main)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head, judge="openai:m", env_extra=_judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    assert _changes(result) == {"A": ("deleted", "rejected")}
    assert scenario.fake.judge_calls == warmed  # the PR reused the warm-up's verdicts, each under its task
