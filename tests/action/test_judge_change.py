"""A PR that changes a rubric's `judge` from one judge to another: when both can be called here
(their API keys are set), the action compares them on the calibration set and rule J decides, as
`check --against-judge` does; when they cannot, the change needs the override, as before. The
edit itself stays gated by the base's judge."""

from __future__ import annotations

import json

from tests.action.harness import (
    LABELS,
    RUBRIC,
    TEXTS,
    Scenario,
    commit_on_main,
    judge_env,
    marked_comment_body,
    rubric_yaml,
    run_gated,
    truthful_judge,
)
from tests.support import gfm
from tests.support.cli import rubric_gate

OLD, NEW = "openai:old-model", "openai:new-model"
RUN_LINK = "https://github.test/acme/rubrics/actions/runs/42"


def _drops_a_on_r1(prompt: str) -> str:
    """The new model no longer fails R1 on A: A's unique catch (R1 is failed by A alone)."""
    return "yes" if TEXTS["A"] in prompt and "review R1" in prompt else truthful_judge(prompt)


def _on_old_judge(scenario: Scenario) -> None:
    main = commit_on_main(scenario, {RUBRIC: rubric_yaml(["A", "B", "C", "D"], judge=OLD)}, "judged by old-model")
    scenario.git("reset", "-q", "--hard", main)


def _change_judge(scenario: Scenario, new_model) -> str:
    _on_old_judge(scenario)
    scenario.fake.judge_by_model = {"old-model": truthful_judge, "new-model": new_model}
    return scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"], judge=NEW)}, "switch the judge")


def _differences(result, kind_prefix: str = "rubric.judge") -> list[dict]:
    return [d for d in result.report()["differences"] if d["kind"].startswith(kind_prefix)]


def test_a_judge_change_that_loses_a_unique_catch_is_rejected_by_rule_j(scenario: Scenario) -> None:
    head = _change_judge(scenario, _drops_a_on_r1)
    result = run_gated(scenario, head, env_extra=judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    (rubric,) = result.report()["rubrics"]
    change = rubric["report"]["judge_change"]
    assert change["old_judge"] == [OLD] and change["new_judge"] == [NEW] and change["decision"] == "fail"
    assert change["reasons"] == ["A: the new judge loses 1 unique catch (R1): the rubric no longer catches what "
                                 "only it caught"]
    # Rule J decided the key: the gate's, not a finding that needs the override.
    assert [(d["kind"], d["rule"], d["needs_override"]) for d in _differences(result)] == [
        ("rubric.judge_gated", "gate", False)]
    assert result.report()["standard"] == []
    body = marked_comment_body(scenario)
    root = gfm.assert_report_structure(body, rubric["report"], allowed_links=(RUN_LINK,),
                                       own=(head[:7], scenario.base_sha[:7]))
    table = next(t for t in gfm.tables(root) if gfm.table_header(t)[:2] == ["Check", "Agreement"])
    assert {row[0]: row[7] for row in gfm.table_rows(table)}["A"] == "1 → 0 (1 lost)"
    assert "Judge change (rule J): FAIL" in body


def test_a_judge_change_that_keeps_every_catch_passes_without_the_override(scenario: Scenario) -> None:
    head = _change_judge(scenario, truthful_judge)
    result = run_gated(scenario, head, env_extra=judge_env(scenario))
    assert result.code == 0, result.stdout + result.stderr
    (rubric,) = result.report()["rubrics"]
    assert rubric["report"]["judge_change"]["decision"] == "pass"
    assert result.report()["standard"] == []
    assert scenario.fake.judge_calls == 2 * 4 * len(LABELS)  # each judge once per (check, item), no more


def test_without_the_judges_keys_a_judge_change_needs_the_override(scenario: Scenario) -> None:
    head = _change_judge(scenario, truthful_judge)
    result = run_gated(scenario, head)  # no OPENAI_API_KEY: neither judge can be called
    assert result.code == 1, result.stdout + result.stderr
    assert [(d["kind"], d["needs_override"]) for d in _differences(result)] == [("rubric.judge", True)]
    (finding,) = result.report()["standard"]
    assert finding["blocking"] and "rule J" in finding["message"] and scenario.fake.judge_calls == 0


def test_an_added_judge_key_is_not_compared_and_needs_the_override(scenario: Scenario) -> None:
    """From recorded verdicts to a judge the PR names: nothing this run trusts calls that judge."""
    scenario.fake.judge = truthful_judge
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"], judge=NEW)}, "add a judge")
    result = run_gated(scenario, head, env_extra=judge_env(scenario))
    assert result.code == 1 and scenario.fake.judge_calls == 0
    assert [(d["kind"], d["needs_override"]) for d in _differences(result)] == [("rubric.judge", True)]


def test_the_action_and_check_agree_on_the_judge_change(scenario: Scenario, monkeypatch) -> None:
    """The same PR through `check` (the head's key differs from the base's: gated as a judge change)."""
    head = _change_judge(scenario, _drops_a_on_r1)
    result = run_gated(scenario, head, env_extra=judge_env(scenario))
    (rubric,) = result.report()["rubrics"]
    for name, value in judge_env(scenario).items():
        monkeypatch.setenv(name, value)
    scenario.git("checkout", "-q", head)
    cli = rubric_gate(scenario.git.path, "check", "--base", f"{scenario.base_sha}:{RUBRIC}", "--head", RUBRIC,
                      "--format", "json")
    assert cli.returncode == 1, cli.stderr
    ours, theirs = rubric["report"]["judge_change"], json.loads(cli.stdout)["judge_change"]
    for key in ("decision", "reasons", "checks", "rates", "comparisons", "decisions"):
        assert ours[key] == theirs[key], key
    assert {c["id"]: c["flips"]["no_to_yes"]["flawed"] for c in ours["checks"]} == {"A": 1, "B": 0, "C": 0, "D": 0}
