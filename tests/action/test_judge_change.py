"""A PR that changes a rubric's `judge` from one judge to another: when both can be called here
(their API keys are set), the action compares them on the calibration set and rule J decides, as
`check --against-judge` does; when they cannot, the change needs the override, as before. The
edit itself stays gated by the base's judge."""

from __future__ import annotations

import json

from tests.action.harness import (
    FAILS,
    LABELS,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    commit_on_main,
    judge_env,
    keyed_line,
    marked_comment_body,
    rubric_yaml,
    run_gated,
    truthful_judge,
    verdicts_jsonl,
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


# -- what a PR that names the new judge cannot get through ---------------------------------------

def _only_d_catches_r3(prompt: str) -> str:
    """B and C no longer fail R3 (D alone catches it now), and D no longer fails R4."""
    if "review R3" in prompt and (TEXTS["B"] in prompt or TEXTS["C"] in prompt):
        return "yes"
    if "review R4" in prompt and TEXTS["D"] in prompt:
        return "yes"
    return truthful_judge(prompt)


def test_an_edit_the_new_judge_rejects_fails_the_judge_change(scenario: Scenario) -> None:
    """The PR deletes D (its catch of R3 is shared under the old judge, which gates the edit) and
    switches to a judge under which D alone catches R3: merged, the rubric graded by the new
    judge would no longer catch R3. The edit must pass under the judge the rubric lands with."""
    _on_old_judge(scenario)
    scenario.fake.judge_by_model = {"old-model": truthful_judge, "new-model": _only_d_catches_r3}
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C"], judge=NEW)}, "switch the judge, delete D")
    result = run_gated(scenario, head, env_extra=judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    (rubric,) = result.report()["rubrics"]
    assert [(c["check"], c["decision"]) for c in rubric["report"]["changes"]] == [("D", "accepted")]
    change = rubric["report"]["judge_change"]
    assert change["decisions"] == [{"check": "D", "change": "deleted", "old": "accepted", "new": "rejected",
                                    "same": False}]
    assert change["decision"] == "fail"
    assert change["reasons"] == ["D (deleted): accepted with the old judge's verdicts but rejected with the new "
                                 "judge's, which the rubric is graded by once this merges"]


def _yes_to_everything(prompt: str) -> str:
    return "yes"


def _shared_catches(prompt: str) -> str:
    """An old judge under which every flawed item is caught by two checks or more (no unique catch)."""
    fails = {"R1": {"A", "B"}, "R2": {"A", "B"}, "R3": {"B", "C", "D"}}
    check = next((cid for cid, text in TEXTS.items() if text in prompt), None)
    item = next((i for i in LABELS if f"review {i}" in prompt), None)
    return "no" if check in fails.get(item or "", set()) else "yes"


def test_a_judge_that_answers_yes_to_everything_is_rejected_where_every_catch_is_shared(scenario: Scenario) -> None:
    """With no unique catch to lose and too few flawed items for a significant drop, a judge that
    catches nothing would pass: the rubric no longer catching a flawed item it caught is a loss
    whether one check or several caught it."""
    _on_old_judge(scenario)
    scenario.fake.judge_by_model = {"old-model": _shared_catches, "yes-model": _yes_to_everything}
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"], judge="openai:yes-model")}, "a yes-man")
    result = run_gated(scenario, head, env_extra=judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    (rubric,) = result.report()["rubrics"]
    change = rubric["report"]["judge_change"]
    assert [c["lost_unique_catches"] for c in change["checks"]] == [[], [], [], []]
    assert change["lost_shared_catches"] == ["R1", "R2", "R3"]
    assert change["reasons"] == ["the new judge no longer catches 3 flawed items the rubric caught with more than "
                                 "one check (R1, R2, R3)"]


def test_the_comment_says_which_judge_the_comparison_judged_on_its_own(scenario: Scenario) -> None:
    """The action gates the edit with the base's judge, so the side judged for the comparison alone
    is the new one: its calls are not the old judge's."""
    head = _change_judge(scenario, truthful_judge)
    result = run_gated(scenario, head, env_extra=judge_env(scenario))
    assert result.code == 0, result.stdout + result.stderr
    body = marked_comment_body(scenario)
    line = next(line for line in body.splitlines() if "no other edit to decide" in line)
    assert "Old judge:" not in line
    assert "Judged for the comparison alone: openai:new-model: 20 calls" in line


# -- what held: the PR's judge fails closed ---------------------------------------------------------

def test_a_judge_that_answers_not_applicable_to_everything_is_rejected(scenario: Scenario) -> None:
    """n/a does not fail an item: a judge abstaining on everything catches nothing."""
    head = _change_judge(scenario, lambda prompt: "n/a")
    result = run_gated(scenario, head, env_extra=judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    (rubric,) = result.report()["rubrics"]
    change = rubric["report"]["judge_change"]
    assert change["decision"] == "fail" and [c["new"]["not_applicable"] for c in change["checks"]] == [5, 5, 5, 5]


def test_a_new_judge_without_a_valid_answer_for_a_pair_is_not_guessed(scenario: Scenario) -> None:
    """The new judge never answers A on R1 (A's unique catch): the pair stays unanswered, rule J
    cannot compare, and the judge change needs the override."""
    head = _change_judge(scenario, lambda p: "maybe" if TEXTS["A"] in p and "review R1" in p else truthful_judge(p))
    result = scenario.run(head, env_extra=judge_env(scenario))
    assert result.code == 2, result.stdout + result.stderr
    assert "A @ R1: no valid answer" in result.stdout and "none guessed" in result.stdout
    assert [(d["kind"], d["needs_override"]) for d in _differences(result)] == [("rubric.judge", True)]


def test_verdicts_the_pr_records_under_the_new_judge_do_not_stand_in_for_it(scenario: Scenario) -> None:
    """Lines keyed by the new judge's full key (all truthful) in the PR's verdict file: the new
    judge (which answers yes to everything) is still asked live, and the answers nobody judged
    need the override."""
    _on_old_judge(scenario)
    scenario.fake.judge_by_model = {"old-model": truthful_judge, "new-model": lambda prompt: "yes"}
    planted = "".join(keyed_line(c, i, "no" if c in FAILS[i] else "yes", judge=NEW) for c in "ABCD" for i in LABELS)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"], judge=NEW),
                                VERDICTS: verdicts_jsonl(TEXTS) + planted}, "switch the judge, bring its answers")
    result = run_gated(scenario, head, env_extra=judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    (rubric,) = result.report()["rubrics"]
    assert rubric["report"]["judge_change"]["decision"] == "fail"
    assert scenario.fake.judge_calls == 2 * 4 * len(LABELS)
    assert ("answer.changed", True) in [(d["kind"], d["needs_override"]) for d in result.report()["differences"]]


def test_a_panel_past_the_call_budget_fails_closed(scenario: Scenario) -> None:
    """Five new judges on 20 pairs each, with 50 calls for the run: nothing is compared."""
    _on_old_judge(scenario)
    panel = ", ".join(f"openai:m{n}" for n in range(5))
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"], judge=panel)}, "a five-judge panel")
    scenario.fake.judge = truthful_judge
    result = scenario.run(head, env_extra=judge_env(scenario), max_judge_calls="50")
    assert result.code == 2, result.stdout + result.stderr
    assert "above --max-calls" in result.stdout
    assert [(d["kind"], d["needs_override"]) for d in _differences(result)] == [("rubric.judge", True)]
