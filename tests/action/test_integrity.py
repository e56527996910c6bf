"""A required check teams can trust: each scenario of a busy repository, end to end.

Real git repositories with a PR branch behind main, relabels, deletions, renames and a judge
whose verdicts are cached between runs; a fake GitHub on 127.0.0.1.
"""

from __future__ import annotations

import json
import subprocess

import yaml

from tests.action.harness import (
    CALIBRATION,
    FAILS,
    LABELS,
    OVERRIDE,
    RUBRIC,
    TEXTS,
    VERDICTS,
    ActionsRuns,
    Scenario,
    calibration_jsonl,
    commit_on_main,
    rubric_yaml,
    verdicts_jsonl,
    warm_main,
    with_origin,
    writer_override,
)


def _changes(result) -> dict[str, tuple[str, str]]:
    (rubric,) = [r for r in result.report()["rubrics"] if r["report"]]
    return {c["check"]: (c["change"], c["decision"]) for c in rubric["report"]["changes"]}


# -- gate what the PR changes -------------------------------------------------------------------

def test_a_pr_behind_main_is_not_blamed_for_mains_edits(scenario: Scenario) -> None:
    merge_base = scenario.base_sha
    pr_head = scenario.git.commit({"README.md": "docs only\n", RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"])},
                                  "add A2 (blame-free)")
    # Meanwhile main adds a frozen label-derived check and its verdicts.
    frozen = with_origin(rubric_yaml(["A", "B", "C", "D", "E"]), E="label")
    main_tip = commit_on_main(scenario, {RUBRIC: frozen})
    result = scenario.run(pr_head)
    assert result.code == 0, result.stdout + result.stderr
    assert _changes(result) == {"A2": ("added", "accepted")}  # not "E deleted"
    report = result.report()
    assert report["base_sha"] == merge_base and report["base_branch_sha"] == main_tip
    body = scenario.fake.marked_comments()[0]["body"]
    assert f"Gated against {merge_base[:7]}" in body and main_tip[:7] in body
    html = (result.workspace / ".rubric-gate" / "report.html").read_text()
    assert html.count("<svg") >= 3  # base, head and gated charts


def test_a_pure_rename_of_a_frozen_check_and_of_a_blamed_check_is_accepted(scenario: Scenario) -> None:
    base = commit_on_main(scenario, {RUBRIC: with_origin(rubric_yaml(["A", "B", "C", "D"]), A="label")}, "A is frozen")
    scenario.git("merge", "-q", "--ff-only", "main")
    assert scenario.git("rev-parse", "HEAD") == base
    renamed = with_origin(rubric_yaml(["A", "B", "C", "D"]), A="label").replace("id: A\n", "id: A-renamed\n") \
        .replace("id: D\n", "id: D-renamed\n")  # D answers no on the correct item R4: it has blame
    head = scenario.git.commit({RUBRIC: renamed}, "rename A and D")
    result = scenario.run(head)
    assert result.code == 0, result.stdout + result.stderr
    assert _changes(result) == {"A-renamed": ("renamed", "accepted"), "D-renamed": ("renamed", "accepted")}
    gated = yaml.safe_load(result.report()["rubrics"][0]["report"]["gated_rubric"])
    assert [c["id"] for c in gated["checks"]] == ["A-renamed", "B", "C", "D-renamed"]
    body = scenario.fake.marked_comments()[0]["body"]
    assert "renamed A -&gt; A-renamed" in body or "renamed A -> A-renamed" in body


def test_a_copied_file_in_a_shallow_checkout_is_a_new_rubric(scenario: Scenario) -> None:
    copy = "rubrics/copy.yaml"
    head = scenario.git.commit({copy: rubric_yaml(["A", "B", "C", "D"]).replace("id: demo", "id: copy")}, "copy")
    scenario.fake.copies = {copy: RUBRIC}
    workspace = scenario.tmp / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "pr", scenario.git.path.as_uri(), str(workspace)],
                   check=True, capture_output=True)
    result = scenario.run(head, workspace=workspace)
    assert result.code == 0, result.stdout + result.stderr
    (rubric,) = result.report()["rubrics"]
    assert rubric["status"] == "added" and rubric["attribution"]["rubric"] == "copy"


# -- close the bypasses -------------------------------------------------------------------------

def test_a_relabel_only_pr_fails_naming_each_item_and_passes_with_a_writers_override(scenario: Scenario) -> None:
    relabeled = {**{k: v for k, v in LABELS.items() if k != "R2"}, "R4": "fail", "R6": "pass"}
    head = scenario.git.commit({CALIBRATION: calibration_jsonl(relabeled)}, "relabel R4, drop R2, add R6")
    result = scenario.run(head)
    assert result.code == 1, result.stdout + result.stderr
    assert result.report()["rubrics"] == []
    body = scenario.fake.marked_comments()[0]["body"]
    assert "R4 (pass -&gt; fail)" in body and "removed 1: R2 (fail)" in body and "added 1: R6 (pass)" in body
    (run,) = scenario.fake.check_runs.values()
    assert run["conclusion"] == "failure"

    writer_override(scenario)
    overridden = scenario.run(head, labels=(OVERRIDE,))
    assert overridden.code == 0 and overridden.outputs["decision"] == "pass"


def test_adding_labeled_items_is_allowed_and_reported(scenario: Scenario) -> None:
    head = scenario.git.commit({CALIBRATION: calibration_jsonl({**LABELS, "R6": "pass"})}, "add R6")
    result = scenario.run(head)
    assert result.code == 0, result.stdout + result.stderr
    assert "added 1: R6 (pass)" in scenario.fake.marked_comments()[0]["body"]


def test_changing_a_recorded_answer_without_a_rubric_change_fails(scenario: Scenario) -> None:
    flipped = {**FAILS, "R4": set()}  # D no longer fails the correct item R4
    head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS, flipped)}, "flip D on R4")
    result = scenario.run(head)
    assert result.code == 1, result.stdout + result.stderr
    assert "on R4: no -&gt; yes" in scenario.fake.marked_comments()[0]["body"]


def test_deleting_a_rubric_that_does_work_fails_and_re_adding_it_under_a_new_id_is_gated(scenario: Scenario) -> None:
    deleted = scenario.git.commit({RUBRIC: None}, "delete the rubric")
    result = scenario.run(deleted)
    assert result.code == 1, result.stdout + result.stderr
    (rubric,) = result.report()["rubrics"]
    assert rubric["status"] == "removed" and "unique catch" in " ".join(rubric["failures"])

    # Same calibration set, new id and path, A dropped: paired with the deleted rubric and gated.
    readded = rubric_yaml(["B", "C", "D"]).replace("id: demo", "id: demo-v2")
    head = scenario.git.commit({"rubrics/v2/demo-v2.yaml": "# rewritten\n" + readded}, "re-add as demo-v2")
    again = scenario.run(head)
    assert again.code == 1, again.stdout + again.stderr
    (rubric,) = again.report()["rubrics"]
    assert rubric["status"] == "renamed" and rubric["base_file"] == RUBRIC
    assert _changes(again) == {"A": ("deleted", "rejected")}


def test_a_new_rubric_is_scored_and_one_with_a_missing_calibration_file_is_an_input_error(scenario: Scenario) -> None:
    good = rubric_yaml(["A", "B"]).replace("id: demo", "id: second")
    head = scenario.git.commit({"rubrics/second.yaml": good}, "second rubric")
    result = scenario.run(head)
    assert result.code == 0, result.stdout + result.stderr
    (rubric,) = result.report()["rubrics"]
    assert [c["id"] for c in rubric["attribution"]["checks"]] == ["A", "B"]
    body = scenario.fake.marked_comments()[0]["body"]
    assert "new rubric" in body and "| Check |" in body

    broken = good.replace(CALIBRATION, "calibration/missing.jsonl")
    head = scenario.git.commit({"rubrics/second.yaml": broken}, "point at a missing file")
    result = scenario.run(head)
    assert result.code == 2 and result.outputs["decision"] == "fail"
    assert "calibration/missing.jsonl" in scenario.fake.marked_comments()[0]["body"]


def test_a_broken_base_rubric_fails_closed_and_a_writers_override_unblocks_the_fix(scenario: Scenario) -> None:
    """A base that does not load vouches for nothing (two PRs that each load can merge into one that
    does not, and the next PR would go ungated): the fix is scored for the reviewer, and needs the
    override."""
    commit_on_main(scenario, {RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace("task:", "tsak:")}, "typo merged")
    scenario.git("merge", "-q", "--ff-only", "main")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"])}, "fix the typo")
    result = scenario.run(head)
    assert result.code == 1, result.stdout + result.stderr
    (rubric,) = result.report()["rubrics"]
    assert rubric["attribution"] is not None and "base version does not load" in " ".join(rubric["notices"])
    assert any("does not load at the base" in f for f in rubric["failures"]), rubric["failures"]
    writer_override(scenario)
    assert scenario.run(head, labels=(OVERRIDE,)).code == 0


def test_the_override_does_not_apply_to_an_input_error(scenario: Scenario) -> None:
    writer_override(scenario)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "F"], extra={"F": "Unjudged?"})})
    result = scenario.run(head, labels=(OVERRIDE,))
    assert result.code == 2 and result.outputs["decision"] == "fail"
    body = scenario.fake.marked_comments()[0]["body"]
    assert "The override does not apply" in body and "[!WARNING]" not in body


# -- never fail open ----------------------------------------------------------------------------

def test_a_glob_that_matches_nothing_is_an_input_error(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head, rubrics="rubric/**/*.yaml")
    assert result.code == 2 and "'rubric/**/*.yaml' matches no file" in result.stderr
    for glob in ("rubrics", "/rubrics/", "./rubrics/*.YAML"):
        assert scenario.run(head, rubrics=glob).code == 1, glob  # the deletion is found and gated


def test_an_output_dir_outside_the_workspace_is_refused(scenario: Scenario) -> None:
    head = scenario.git.commit({"README.md": "x\n"})
    result = scenario.run(head, output_dir=str(scenario.tmp / "elsewhere"))
    assert result.code == 2 and "inside the workspace" in result.stderr


# -- reuse verdicts judged in CI ----------------------------------------------------------------

def test_three_runs_with_a_judge_reuse_the_cache(scenario: Scenario) -> None:
    """The cache the runs reuse is the one the base branch vouches for: the artifact of main's
    push run (A-D judged on R1-R5). What a PR's own runs cached is saved under its scope, where any
    workflow running for the PR can save too: not read, so each run judges the PR's A2 again."""

    truth = {item: set(fails) for item, fails in FAILS.items()}

    def judge(prompt: str) -> str:
        check = next(cid for cid, text in TEXTS.items() if text in prompt)
        item = next(i for i in LABELS if f"review {i}" in prompt)
        return "no" if check in truth[item] else "yes"

    warmed = warm_main(scenario)  # 20 calls
    ActionsRuns(scenario).add_run(event="push", branch="main",
                                  verdicts="".join(json.dumps(v) + "\n" for v in warmed))
    scenario.fake.judge = judge
    env = {"OPENAI_BASE_URL": f"{scenario.fake.url}/v1", "OPENAI_API_KEY": "sk-test", "GITHUB_BASE_REF": "main"}
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"])}, "add A2")
    first = scenario.run(head, judge="openai:fake-model", env_extra=env)
    assert first.code == 0, first.stdout + first.stderr
    assert scenario.fake.judge_calls == 25  # A2's 5 pairs: A-D came from main's cache

    again = scenario.run(head, judge="openai:fake-model", env_extra=env)
    assert again.code == 0 and scenario.fake.judge_calls == 30  # A2 again: the PR's own cache is not read

    edited = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2=E"])}, "A2 reworded")
    third = scenario.run(edited, judge="openai:fake-model", env_extra=env)
    assert third.code == 1  # E fails the correct item R5
    assert scenario.fake.judge_calls == 35  # exactly the new text's 5 pairs

    # A PR cannot plant cached verdicts: the cache directory must not be tracked.
    cache = scenario.git.path / ".rubric-gate" / "cache" / "verdicts.jsonl"
    lines = cache.read_text().splitlines()
    # What a PR's run restored is set aside before it runs: the file holds the last run's own judging.
    assert len(lines) == 5 and all(json.loads(line)["judge"] == "openai:fake-model" for line in lines)
    assert scenario.git("status", "--porcelain", "--", VERDICTS) == ""


def test_two_rubrics_sharing_a_store_judge_each_pair_once_and_a_push_warms_the_cache(scenario: Scenario) -> None:
    scenario.fake.judge = lambda prompt: "yes"
    env = {"OPENAI_BASE_URL": f"{scenario.fake.url}/v1", "OPENAI_API_KEY": "sk-test"}
    second = rubric_yaml(["A", "B"]).replace("id: demo", "id: second")
    head = scenario.git.commit({"rubrics/second.yaml": second, RUBRIC: rubric_yaml(["A", "B", "C"])}, "two rubrics")
    scenario.run(head, judge="openai:fake-model", env_extra=env)
    assert scenario.fake.judge_calls == 20  # A-D on 5 items; the second rubric's A and B are the same pairs

    push = scenario.run(head, judge="openai:fake-model", event_name="push", env_extra={**env, "GITHUB_SHA": head})
    assert push.code == 0, push.stdout + push.stderr
    assert scenario.fake.judge_calls == 20  # everything on the branch is cached already


def test_an_api_key_alone_judges_nothing_and_says_which_input_to_set(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head, env_extra={"ANTHROPIC_API_KEY": "sk-ant-test"})
    assert result.code == 1
    body = scenario.fake.marked_comments()[0]["body"]
    assert "no judge is configured" in body and "'judge' input" in body


def test_a_judge_panel_with_samples_in_the_action(scenario: Scenario) -> None:
    """`judge: a, b` with `samples: 3`: the gate decides on the majority and says how sure it is."""
    def truth(prompt: str, *, flip: bool = False) -> str:
        check = next(cid for cid, text in TEXTS.items() if text in prompt)
        item = next(i for i in LABELS if f"review {i}" in prompt)
        answer = "no" if check in FAILS[item] else "yes"
        if flip and check == "A2" and item == "R4":  # judge b thinks A2 fails the correct item R4
            answer = "no"
        return answer

    scenario.fake.judge_by_model = {"a": truth, "b": lambda p: truth(p, flip=True), "c": truth}
    env = {"OPENAI_BASE_URL": f"{scenario.fake.url}/v1", "OPENAI_API_KEY": "sk-test"}
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"])}, "add A2")
    result = scenario.run(head, judge="openai:a, openai:b, openai:c", samples="3", env_extra=env)
    assert result.code == 0, result.stdout + result.stderr  # 2 of 3 judges: A2 passes R4
    (rubric,) = result.report()["rubrics"]
    (change,) = rubric["report"]["changes"]
    assert change["by_judge"] == {"openai:a": "accepted", "openai:b": "rejected", "openai:c": "accepted"}
    assert scenario.fake.judge_calls == 3 * 3 * 25  # three judges, three samples, 5 texts x 5 items
    assert "How sure" in scenario.fake.marked_comments()[0]["body"]
    again = scenario.run(head, judge="openai:a, openai:b, openai:c", samples="3", env_extra=env)
    # What the first run cached is saved under the PR's scope, which the re-run does not read.
    assert again.code == 0 and scenario.fake.judge_calls == 450
