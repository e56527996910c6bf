"""The verdict cache is not evidence: a restored cache never confirms a changed answer. End to end
through `rubric-gate action` against the fake GitHub with a real git repository.

GitHub restores the caches a pull request's own runs saved before the base branch's, and any
workflow running for the PR can save one under the gate's key prefix: what the action restores
in a PR's run may be planted. So a recorded answer the PR changes stands without the override
only where the configured judge, live in this run, gives it at the full key of the line the head
reads (judge, prompt version, task, check text, item content, sample); the cache never confirms
one. The flow docs/action.md suggests (commit the cache's verdicts after a merge) keeps working:
the copied lines are re-judged, pair by pair.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.action.harness import (
    FAILS,
    JUDGE,
    RUBRIC,
    TEXTS,
    VERDICTS,
    ActionsRuns,
    Scenario,
    base_ref_env,
    commit_on_main,
    content_hash_of,
    jsonl_of_verdicts,
    judge_env,
    rubric_yaml,
    run_gated,
    saved_cache_path,
    standard_findings,
    truthful_judge,
    verdict_line,
    verdicts_jsonl,
    warm_main,
    with_cache_lines_appended,
)

TASK = "Review a cloud security design."


def test_the_follow_up_pr_copying_the_cache_passes_re_judged_pair_by_pair(scenario: Scenario) -> None:
    lines = warm_main(scenario)
    calls = scenario.fake.judge_calls
    head = scenario.git.commit({VERDICTS: with_cache_lines_appended(lines)}, "record the cache's verdicts")
    result = run_gated(scenario, head, judge=JUDGE, env_extra=judge_env(scenario))
    assert result.code == 0, result.stdout + result.stderr
    assert [f["blocking"] for f in standard_findings(result)] == [False], standard_findings(result)
    assert "re-judged these pairs" in standard_findings(result)[0]["message"]
    # Each copied pair was judged again, live: the restored cache (which held them all) confirmed none.
    assert scenario.fake.judge_calls - calls == len(lines)


def test_a_copied_line_whose_answer_the_judge_does_not_give_needs_the_override(scenario: Scenario) -> None:
    lines = warm_main(scenario)
    flipped = [dict(v, answer="no") if (v["item"], v["check_text"]) == ("R4", TEXTS["C"]) else v for v in lines]
    head = scenario.git.commit({VERDICTS: with_cache_lines_appended(flipped)}, "record the cache's verdicts, one flipped")
    result = run_gated(scenario, head, judge=JUDGE, env_extra=judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    blocking = [f for f in standard_findings(result) if f["blocking"]]
    assert len(blocking) == 1 and "C on R4: yes -> no" in blocking[0]["message"], standard_findings(result)
    assert "R1" not in blocking[0]["message"]  # the copied lines the judge gave again stand


def test_a_copied_line_keyed_to_another_judge_prompt_or_task_needs_the_override(scenario: Scenario) -> None:
    """Only a configured judge, under the current prompt version and the task of a rubric reading
    the file, can re-judge a keyed line at its own key: any other key is nobody's answer here."""
    lines = warm_main(scenario)
    for field, value in (("judge", "openai:other-model"), ("prompt", "per-check-v0"), ("task_hash", "0" * 16)):
        scenario.git("reset", "-q", "--hard", scenario.base_sha)
        changed = [dict(v, **{field: value}) if (v["item"], v["check_text"]) == ("R1", TEXTS["A"]) else v
                   for v in lines]
        head = scenario.git.commit({VERDICTS: with_cache_lines_appended(changed)}, f"a copied line with another {field}")
        result = run_gated(scenario, head, judge=JUDGE, env_extra=judge_env(scenario))
        blocking = [f for f in standard_findings(result) if f["blocking"]]
        # (Under another task the line is stale for demo's: it also hides the answer it outranks.)
        assert result.code == 1 and blocking, (field, standard_findings(result))
        assert all("on R1" in f["message"] and "R2" not in f["message"] for f in blocking), (field, blocking)


def test_copied_lines_without_a_judge_need_the_override(scenario: Scenario) -> None:
    """Replay (no judge, or a fork's run without the secret): nobody can re-judge the copied lines."""
    lines = warm_main(scenario)
    head = scenario.git.commit({VERDICTS: with_cache_lines_appended(lines)}, "record the cache's verdicts")
    assert run_gated(scenario, head).code == 1
    fork = run_gated(scenario, head, fork=True, judge=JUDGE)  # the judge's key is not given to a fork
    assert fork.code == 1 and any(f["blocking"] for f in standard_findings(fork))


def test_a_planted_cache_entry_does_not_excuse_a_flipped_answer(scenario: Scenario) -> None:
    """A workflow the PR adds saves a cache holding the judge's "answer" C: no on R1 (truly yes),
    keyed exactly as the configured judge would record it; the gate's run restores it. The PR flips
    the record to match and edits the rubric, so the gate judges C: before, the planted entry was
    read as this run's judging and excused the flip."""
    from rubric_gate.judges import PROMPT_VERSION
    from rubric_gate.verdicts import task_hash

    cache = saved_cache_path(scenario)
    cache.parent.mkdir(parents=True)
    cache.write_text(verdict_line("C", "R1", "no", judge=JUDGE, prompt=PROMPT_VERSION, item_hash=content_hash_of("R1"),
                              task_hash=task_hash(TASK)))
    scenario.fake.judge = truthful_judge
    flipped = verdicts_jsonl(TEXTS, {**FAILS, "R1": FAILS["R1"] | {"C"}})
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"]).replace("version: 1", "version: 2"),
                                VERDICTS: flipped}, "bump demo, add A2; flip C on R1")
    result = run_gated(scenario, head, judge=JUDGE, env_extra=judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    blocking = [f for f in standard_findings(result) if f["blocking"]]
    assert any(f"{TEXTS['C']} on R1: yes -> no" in f["message"] for f in blocking), standard_findings(result)


def test_a_re_run_reads_nothing_the_prs_own_runs_cached_and_the_judged_flip_still_stands(scenario: Scenario) -> None:
    """What the first run judged is saved under the PR's scope, where any workflow running for the
    PR can save too: the re-run judges it again (the same calls), and the flip the judge confirms
    stands again."""
    wrong = verdicts_jsonl(TEXTS, {**FAILS, "R4": set()})  # D on R4 recorded wrongly as yes
    scenario.git("reset", "-q", "--hard", commit_on_main(scenario, {VERDICTS: wrong}, "D on R4 recorded wrongly"))
    scenario.fake.judge = truthful_judge
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"]).replace("version: 1", "version: 2"),
                                VERDICTS: verdicts_jsonl(TEXTS)}, "bump demo, add A2; fix D on R4")
    first = run_gated(scenario, head, judge=JUDGE, env_extra=judge_env(scenario))
    assert first.code == 0, first.stdout + first.stderr
    calls = scenario.fake.judge_calls
    assert saved_cache_path(scenario).read_text().count("\n") == calls  # saved for the next run, under the PR's scope
    again = run_gated(scenario, head, judge=JUDGE, env_extra=judge_env(scenario))
    assert again.code == 0, again.stdout + again.stderr
    assert scenario.fake.judge_calls == 2 * calls


X_TEXT = "Is key rotation automated?"


def test_a_planted_cache_entry_does_not_make_a_new_check_share_a_deleted_checks_catch(scenario: Scenario) -> None:
    """A catches R1 and no other check does. The PR deletes A and adds X; the planted cache says X
    answers "no" on R1 (the judge, asked, says "yes"): read as the judge's answer, X shares A's catch."""
    from rubric_gate.judges import PROMPT_VERSION
    from rubric_gate.verdicts import task_hash

    cache = saved_cache_path(scenario)
    cache.parent.mkdir(parents=True)
    cache.write_text(verdict_line(X_TEXT, "R1", "no", judge=JUDGE, prompt=PROMPT_VERSION, item_hash=content_hash_of("R1"),
                              task_hash=task_hash(TASK)))
    scenario.fake.judge = truthful_judge  # X, unknown to it: "yes" on every item
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D", "X"], extra={"X": X_TEXT})}, "A -> X")
    result = run_gated(scenario, head, judge=JUDGE, env_extra=judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr


def test_the_follow_up_pr_passes_without_calls_when_the_base_branchs_cache_artifact_has_the_lines(
        scenario: Scenario) -> None:
    lines = warm_main(scenario)
    runs = ActionsRuns(scenario)
    runs.add_run(event="push", branch="main", verdicts=jsonl_of_verdicts(lines))
    calls = scenario.fake.judge_calls
    head = scenario.git.commit({VERDICTS: with_cache_lines_appended(lines)}, "record the cache's verdicts")
    result = run_gated(scenario, head, judge=JUDGE, env_extra=base_ref_env(scenario))
    assert result.code == 0, result.stdout + result.stderr
    assert [f["blocking"] for f in standard_findings(result)] == [False], standard_findings(result)
    assert scenario.fake.judge_calls == calls  # every copied line is the base branch's cache's own answer
    assert "the verdict cache of push run" in result.stdout


def test_only_a_push_run_on_the_base_branch_of_this_repository_vouches_for_a_cache(scenario: Scenario) -> None:
    """Runs a PR can start (its own, a fork's push to a branch named `main`, another branch's
    push) leave artifacts too: their caches are not the base branch's, so the copied lines are
    judged live, and a planted answer there confirms nothing."""
    lines = warm_main(scenario)
    planted = [dict(v, answer="no") if (v["item"], v["check_text"]) == ("R4", TEXTS["C"]) else v for v in lines]
    runs = ActionsRuns(scenario)
    runs.add_run(event="pull_request", branch="main", verdicts=jsonl_of_verdicts(planted))
    runs.add_run(event="push", branch="main", head_repo="mallory/rubrics", verdicts=jsonl_of_verdicts(planted))
    runs.add_run(event="push", branch="pr", verdicts=jsonl_of_verdicts(planted))
    head = scenario.git.commit({VERDICTS: with_cache_lines_appended(planted)}, "record the 'cache's' verdicts")
    result = run_gated(scenario, head, judge=JUDGE, env_extra=base_ref_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    blocking = [f for f in standard_findings(result) if f["blocking"]]
    assert len(blocking) == 1 and "C on R4: yes -> no" in blocking[0]["message"], standard_findings(result)
    assert "left a `rubric-gate-verdict-cache` artifact" in result.stdout


def test_without_actions_read_the_base_branchs_cache_is_not_read_and_the_pairs_are_judged_live(
        scenario: Scenario) -> None:
    lines = warm_main(scenario)
    runs = ActionsRuns(scenario)
    runs.add_run(event="push", branch="main", verdicts=jsonl_of_verdicts(lines))
    route = runs._route
    runs._route = lambda method, path: ((403, {"message": "Resource not accessible by integration"})  # type: ignore[method-assign]
                                        if "/actions/" in path else route(method, path))
    calls = scenario.fake.judge_calls
    head = scenario.git.commit({VERDICTS: with_cache_lines_appended(lines)}, "record the cache's verdicts")
    result = run_gated(scenario, head, judge=JUDGE, env_extra=base_ref_env(scenario))
    assert result.code == 0, result.stdout + result.stderr
    assert scenario.fake.judge_calls - calls == len(lines)  # confirmed live, pair by pair
    assert "the job needs `actions: read`" in result.stdout


def test_a_cache_artifact_that_is_no_zip_or_holds_no_verdict_file_is_no_trusted_cache(scenario: Scenario) -> None:
    lines = warm_main(scenario)
    runs = ActionsRuns(scenario)
    run_id = runs.add_run(event="push", branch="main", verdicts=jsonl_of_verdicts(lines))
    runs.zips[run_id] = b"PK\x03\x04 not a zip"
    calls = scenario.fake.judge_calls
    head = scenario.git.commit({VERDICTS: with_cache_lines_appended(lines)}, "record the cache's verdicts")
    result = run_gated(scenario, head, judge=JUDGE, env_extra=base_ref_env(scenario))
    assert result.code == 0 and scenario.fake.judge_calls - calls == len(lines), result.stdout + result.stderr
    assert "not a zip archive" in result.stdout


def test_a_merge_groups_base_branch_is_read_from_its_payload(tmp_path: Path) -> None:
    from rubric_gate.action.cache.provenance import base_ref_of

    event = tmp_path / "event.json"
    event.write_text(json.dumps({"merge_group": {"base_ref": "refs/heads/main", "head_sha": "f" * 40}}))
    assert base_ref_of({"GITHUB_EVENT_NAME": "merge_group", "GITHUB_EVENT_PATH": str(event)}) == "main"
    assert base_ref_of({"GITHUB_EVENT_NAME": "pull_request", "GITHUB_BASE_REF": "release"}) == "release"
    assert base_ref_of({"GITHUB_EVENT_NAME": "pull_request"}) is None
    event.write_text("{}")
    assert base_ref_of({"GITHUB_EVENT_NAME": "merge_group", "GITHUB_EVENT_PATH": str(event)}) is None
