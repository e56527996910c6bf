"""The edges of the trust boundary: what keys a verdict, which events are gated, what an
override covers, and how the action fails. Each test is a real git repository, a PR and
`rubric-gate action` against the fake GitHub (the judge faked over HTTP where one is used)."""

from __future__ import annotations

import json

import yaml

from tests.action.harness import (
    FAILS,
    LABELS,
    OVERRIDE,
    RUBRIC,
    TEXTS,
    Scenario,
    commit_on_main,
    label_by_writer,
    merge_group,
    publish_warm_cache,
    rubric_yaml,
)

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
    main = commit_on_main(scenario, {HELPER: _helper_yaml()}, "main gets a lenient helper")
    scenario.git("checkout", "-q", "main")
    push = scenario.run(main, judge="openai:m", event_name="push",
                        env_extra={**_judge_env(scenario), "GITHUB_SHA": main})
    assert push.code == 0, push.stdout + push.stderr
    warmed = scenario.fake.judge_calls
    assert warmed == 35  # the helper's 3 texts and demo's 4 on 5 items: B judged under both tasks
    scenario.git("checkout", "-q", "pr")
    scenario.git("reset", "-q", "--hard", main)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")

    result = scenario.run(head, judge="openai:m", env_extra={**_judge_env(scenario), **publish_warm_cache(scenario)})
    assert result.code == 1, result.stdout + result.stderr
    assert _changes(result) == {"A": ("deleted", "rejected")}
    assert scenario.fake.judge_calls == warmed  # the PR reused the warm-up's verdicts, each under its task


def test_an_override_does_not_cover_pushes_after_the_label(scenario: Scenario) -> None:
    label_by_writer(scenario)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    overridden = scenario.run(head, labels=(OVERRIDE,))
    assert overridden.code == 0 and overridden.report()["override"], overridden.stdout + overridden.stderr
    later = scenario.git.commit({RUBRIC: rubric_yaml(["C", "D"])}, "and delete B too, after the label")
    result = scenario.run(later, labels=(OVERRIDE,), action="synchronize")
    assert result.code == 1, result.stdout + result.stderr
    assert result.report()["override"] is None
    assert "applied before its head" in scenario.fake.marked_comments()[0]["body"]
    runs = {r["head_sha"]: r["conclusion"] for r in scenario.fake.check_runs.values()}
    assert runs == {head: "success", later: "failure"}


def test_a_label_removed_since_the_payload_does_not_count(scenario: Scenario) -> None:
    """A re-run of the `labeled` run replays its payload, which still lists the label."""
    label_by_writer(scenario)
    label_by_writer(scenario, "unlabeled")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head, labels=(OVERRIDE,))
    assert result.code == 1, result.stdout + result.stderr
    assert result.report()["override"] is None


def test_the_unlabeled_event_re_gates_without_the_override(scenario: Scenario) -> None:
    label_by_writer(scenario)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    assert scenario.run(head, labels=(OVERRIDE,)).code == 0
    label_by_writer(scenario, "unlabeled")
    result = scenario.run(head, labels=(OVERRIDE,), action="unlabeled")
    assert result.code == 1, result.stdout + result.stderr
    assert [r["conclusion"] for r in scenario.fake.check_runs.values()] == ["success", "failure"]


def test_another_labels_event_leaves_the_heads_check_as_it_is(scenario: Scenario) -> None:
    """An overridden head stays overridden when another label comes and goes (gated again: only a
    failure stands, and the override holds through the grant its `labeled` run recorded), and the
    job's own status (which a required check may name) repeats a failing check, never a bare pass."""
    label_by_writer(scenario)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    assert scenario.run(head, labels=(OVERRIDE,)).code == 0
    result = scenario.run(head, labels=(OVERRIDE, "documentation"))
    assert result.code == 0 and "nothing to re-gate" not in result.stdout, result.stdout
    assert [r["conclusion"] for r in scenario.fake.check_runs.values()] == ["success", "success"]
    later = scenario.git.commit({RUBRIC: rubric_yaml(["C", "D"])}, "delete B")
    assert scenario.run(later, labels=(OVERRIDE,), action="synchronize").code == 1
    again = scenario.run(later, labels=(OVERRIDE, "documentation"))
    assert again.code == 1 and "nothing to re-gate" in again.stdout and len(scenario.fake.check_runs) == 3


def test_an_edit_cannot_stand_in_for_a_cancelled_run(scenario: Scenario) -> None:
    """A push whose run was cancelled (the workflow's concurrency group), then a title edit: with
    no check on the head to stand by, the edit's run gates it."""
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head, action="edited", payload={"changes": {"title": {"from": "PR"}}})
    assert result.code == 1, result.stdout + result.stderr
    assert [r["conclusion"] for r in scenario.fake.check_runs.values()] == ["failure"]


def test_a_merge_group_is_gated_like_a_pr(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    scenario.git("checkout", "-q", "-b", "gh-readonly-queue/main/pr-7", scenario.base_sha)
    scenario.git("merge", "-q", "--no-ff", "-m", "Merge pull request #7", head)
    group = scenario.git("rev-parse", "HEAD")
    result = scenario.run(group, event_name="merge_group", payload=merge_group(scenario, group))
    assert result.code == 1, result.stdout + result.stderr
    assert _changes(result) == {"A": ("deleted", "rejected")}
    (run,) = scenario.fake.check_runs.values()
    assert run["head_sha"] == group and run["conclusion"] == "failure"
    assert scenario.fake.comments == {}  # a merge group has no conversation to comment on


def test_a_pr_retargeted_to_main_is_re_gated(scenario: Scenario) -> None:
    """Green against `staging` (which already lacks A's catch), retargeted to `main`: gated again."""
    scenario.git("checkout", "-q", "-b", "staging", scenario.base_sha)
    staging = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "staging deleted A")
    scenario.git("checkout", "-q", "pr")
    scenario.git("reset", "-q", "--hard", staging)
    head = scenario.git.commit({"README.md": "docs\n"}, "a docs change")
    main = scenario.base_sha
    scenario.base_sha = scenario.fake.base_sha = staging
    assert scenario.run(head).code == 0  # against staging there is nothing to gate
    scenario.base_sha = scenario.fake.base_sha = main
    retarget = {"changes": {"base": {"ref": {"from": "staging"}, "sha": {"from": staging}}}}
    result = scenario.run(head, action="edited", payload=retarget)
    assert result.code == 1, result.stdout + result.stderr
    assert _changes(result) == {"A": ("deleted", "rejected")}
    assert [r["conclusion"] for r in scenario.fake.check_runs.values()] == ["success", "failure"]
    title_only = scenario.run(head, action="edited", payload={"changes": {"title": {"from": "PR"}}})
    assert title_only.code == 1 and "nothing to re-gate" in title_only.stdout  # the head's last check stands
    assert len(scenario.fake.check_runs) == 2


# -- judging: the configured judge, as PRs judge, within one budget per run ----------------------------

def _truth(prompt: str) -> str:
    check = next(cid for cid, text in TEXTS.items() if text in prompt)
    item = next(i for i in LABELS if f"review {i}" in prompt)
    return "no" if check in FAILS[item] else "yes"


def test_max_judge_calls_bounds_the_whole_run(scenario: Scenario) -> None:
    scenario.fake.judge = _truth
    second = yaml.safe_load(rubric_yaml(["A", "B", "C", "D"]))
    second.update(id="second", task="Review a network design.")  # another task: its own 20 pairs
    head = scenario.git.commit({"rubrics/second.yaml": yaml.safe_dump(second, sort_keys=False, width=10**6),
                                RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"])}, "two rubrics to judge")
    result = scenario.run(head, judge="openai:m", max_judge_calls="30", env_extra=_judge_env(scenario))
    assert result.code == 2, result.stdout + result.stderr
    assert scenario.fake.judge_calls == 25  # the first rubric's 25; the second's 20 would pass 30
    assert "above --max-calls 5" in result.stdout


def test_a_new_rubrics_own_judge_key_is_not_used(scenario: Scenario) -> None:
    scenario.fake.judge = _truth
    new = yaml.safe_load(rubric_yaml(["A", "B"], judge="openai:pricey"))
    new["id"] = "new"
    head = scenario.git.commit({"rubrics/new.yaml": yaml.safe_dump(new, sort_keys=False, width=10**6)}, "a new rubric")
    result = scenario.run(head, env_extra=_judge_env(scenario))
    assert scenario.fake.judge_calls == 0, result.stdout + result.stderr
    assert "takes effect once merged" in scenario.fake.marked_comments()[0]["body"]


def test_the_push_warm_up_judges_the_panel_and_samples_a_pr_uses(scenario: Scenario) -> None:
    scenario.fake.judge_by_model = {"a": _truth, "b": _truth}
    env = _judge_env(scenario)
    scenario.git("checkout", "-q", "main")
    push = scenario.run(scenario.base_sha, judge="openai:a, openai:b", samples="3", event_name="push",
                        env_extra={**env, "GITHUB_SHA": scenario.base_sha})
    assert push.code == 0, push.stdout + push.stderr
    assert scenario.fake.judge_calls == 2 * 3 * 20  # two judges, three samples, 4 texts x 5 items
    scenario.git("checkout", "-q", "pr")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A=A2", "B", "C", "D"])}, "reword A")

    result = scenario.run(head, judge="openai:a, openai:b", samples="3", env_extra={**env, **publish_warm_cache(scenario)})
    assert result.code == 1, result.stdout + result.stderr  # A2 catches nothing: R1's only catch is lost
    assert scenario.fake.judge_calls == 2 * 3 * 25  # the PR judged only A2's pairs


# -- where the action writes -----------------------------------------------------------------------

def test_a_committed_comment_symlink_is_not_left_for_the_upload_step(scenario: Scenario) -> None:
    out = scenario.git.path / ".rubric-gate"
    out.mkdir()
    (out / "comment.md").symlink_to("../.git/config")
    scenario.git("add", ".rubric-gate")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A, plant a comment")
    result = scenario.run(head)
    assert result.code == 2 and "holds files the repository tracks" in result.stderr, result.stderr
    assert not (out / "comment.md").is_symlink() and not (out / "comment.md").exists()
    assert (scenario.git.path / ".git" / "config").is_file()  # the target itself is untouched


def test_a_verdict_cache_inside_an_output_name_is_refused(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head, verdict_cache=".rubric-gate/verdicts")
    assert result.code == 2, result.stdout + result.stderr
    assert "verdict_cache" in result.stderr and "output `verdicts`" in result.stderr
    assert "Traceback" not in result.stderr


# -- a crash is exit 3 ------------------------------------------------------------------------------

def test_an_unexpected_exception_in_the_action_exits_3_with_one_line(scenario: Scenario, monkeypatch) -> None:
    import rubric_gate.action.gating.pull_request as gating_module

    def boom(*args, **kwargs):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(gating_module, "diff_snapshots", boom)
    logs = scenario.tmp / "logs"
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head, env_extra={"RUNNER_TEMP": str(logs)})
    assert result.code == 3, result.stdout + result.stderr
    (line,) = result.stderr.splitlines()
    assert "internal error" in line and "RuntimeError: boom second line" in line and "Traceback" not in line
    (log,) = logs.glob("rubric-gate-crash-*.log")
    assert str(log) in line and "Traceback" in log.read_text() and "boom" in log.read_text()
