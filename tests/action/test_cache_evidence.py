"""The verdict cache is not evidence (issue 17, design item 3), end to end through `rubric-gate
action` against the fake GitHub with a real git repository.

GitHub restores the caches a pull request's own runs saved before the base branch's, and any
workflow running for the PR can save one under the gate's key prefix: what the action restores
in a PR's run may be planted. So a recorded answer the PR changes stands without the override
only where the configured judge, live in this run, gives it at the full key of the line the head
reads (judge, prompt version, task, check text, item content, sample); the cache never confirms
one. The flow docs/action.md suggests (commit the cache's verdicts after a merge) keeps working:
the copied lines are re-judged, pair by pair.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

from rubric_gate.action.cache.provenance import CACHE_ARTIFACT
from tests.action.harness import (
    FAILS,
    REPO,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    rubric_yaml,
    verdicts_jsonl,
)
from tests.action.test_hostile_round3 import (
    JUDGE,
    _gate,
    _item_hash,
    _judge_env,
    _truthful_judge,
    _verdict,
)
from tests.action.test_integrity import _on_main

TASK = "Review a cloud security design."


def _cache_file(scenario: Scenario) -> Path:
    return scenario.git.path / ".rubric-gate" / "cache" / "verdicts.jsonl"


def _warm_main(scenario: Scenario) -> list[dict]:
    """The push run on main judges every pair into the cache: its lines, as `actions/cache` saves them."""
    scenario.fake.judge = _truthful_judge
    push = scenario.run(scenario.base_sha, judge=JUDGE, event_name="push",
                        env_extra={**_judge_env(scenario), "GITHUB_SHA": scenario.base_sha})
    assert push.code == 0, push.stdout + push.stderr
    lines = [json.loads(line) for line in _cache_file(scenario).read_text().splitlines()]
    assert len(lines) == 20 and all(v["judge"] == JUDGE and v["task_hash"] for v in lines)  # A-D on R1-R5
    return lines


def _copied(lines: list[dict]) -> str:
    """The follow-up PR: the cache's verdicts appended to the rubric's verdict file."""
    return verdicts_jsonl(TEXTS) + "".join(json.dumps(v) + "\n" for v in lines)


def _standard(result) -> list[dict]:
    return result.report()["standard"]


def test_the_follow_up_pr_copying_the_cache_passes_re_judged_pair_by_pair(scenario: Scenario) -> None:
    lines = _warm_main(scenario)
    calls = scenario.fake.judge_calls
    head = scenario.git.commit({VERDICTS: _copied(lines)}, "record the cache's verdicts")
    result = _gate(scenario, head, judge=JUDGE, env_extra=_judge_env(scenario))
    assert result.code == 0, result.stdout + result.stderr
    assert [f["blocking"] for f in _standard(result)] == [False], _standard(result)
    assert "re-judged these pairs" in _standard(result)[0]["message"]
    # Each copied pair was judged again, live: the restored cache (which held them all) confirmed none.
    assert scenario.fake.judge_calls - calls == len(lines)


def test_a_copied_line_whose_answer_the_judge_does_not_give_needs_the_override(scenario: Scenario) -> None:
    lines = _warm_main(scenario)
    flipped = [dict(v, answer="no") if (v["item"], v["check_text"]) == ("R4", TEXTS["C"]) else v for v in lines]
    head = scenario.git.commit({VERDICTS: _copied(flipped)}, "record the cache's verdicts, one flipped")
    result = _gate(scenario, head, judge=JUDGE, env_extra=_judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    blocking = [f for f in _standard(result) if f["blocking"]]
    assert len(blocking) == 1 and "C on R4: yes -> no" in blocking[0]["message"], _standard(result)
    assert "R1" not in blocking[0]["message"]  # the copied lines the judge gave again stand


def test_a_copied_line_keyed_to_another_judge_prompt_or_task_needs_the_override(scenario: Scenario) -> None:
    """Only a configured judge, under the current prompt version and the task of a rubric reading
    the file, can re-judge a keyed line at its own key: any other key is nobody's answer here."""
    lines = _warm_main(scenario)
    for field, value in (("judge", "openai:other-model"), ("prompt", "per-check-v0"), ("task_hash", "0" * 16)):
        scenario.git("reset", "-q", "--hard", scenario.base_sha)
        changed = [dict(v, **{field: value}) if (v["item"], v["check_text"]) == ("R1", TEXTS["A"]) else v
                   for v in lines]
        head = scenario.git.commit({VERDICTS: _copied(changed)}, f"a copied line with another {field}")
        result = _gate(scenario, head, judge=JUDGE, env_extra=_judge_env(scenario))
        blocking = [f for f in _standard(result) if f["blocking"]]
        # (Under another task the line is stale for demo's: it also hides the answer it outranks.)
        assert result.code == 1 and blocking, (field, _standard(result))
        assert all("on R1" in f["message"] and "R2" not in f["message"] for f in blocking), (field, blocking)


def test_copied_lines_without_a_judge_need_the_override(scenario: Scenario) -> None:
    """Replay (no judge, or a fork's run without the secret): nobody can re-judge the copied lines."""
    lines = _warm_main(scenario)
    head = scenario.git.commit({VERDICTS: _copied(lines)}, "record the cache's verdicts")
    assert _gate(scenario, head).code == 1
    fork = _gate(scenario, head, fork=True, judge=JUDGE)  # the judge's key is not given to a fork
    assert fork.code == 1 and any(f["blocking"] for f in _standard(fork))


def test_a_planted_cache_entry_does_not_excuse_a_flipped_answer(scenario: Scenario) -> None:
    """A workflow the PR adds saves a cache holding the judge's "answer" C: no on R1 (truly yes),
    keyed exactly as the configured judge would record it; the gate's run restores it. The PR flips
    the record to match and edits the rubric, so the gate judges C: before, the planted entry was
    read as this run's judging and excused the flip."""
    from rubric_gate.judges import PROMPT_VERSION
    from rubric_gate.verdicts import task_hash

    cache = _cache_file(scenario)
    cache.parent.mkdir(parents=True)
    cache.write_text(_verdict("C", "R1", "no", judge=JUDGE, prompt=PROMPT_VERSION, item_hash=_item_hash("R1"),
                              task_hash=task_hash(TASK)))
    scenario.fake.judge = _truthful_judge
    flipped = verdicts_jsonl(TEXTS, {**FAILS, "R1": FAILS["R1"] | {"C"}})
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"]).replace("version: 1", "version: 2"),
                                VERDICTS: flipped}, "bump demo, add A2; flip C on R1")
    result = _gate(scenario, head, judge=JUDGE, env_extra=_judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    blocking = [f for f in _standard(result) if f["blocking"]]
    assert any(f"{TEXTS['C']} on R1: yes -> no" in f["message"] for f in blocking), _standard(result)


def test_a_re_run_reads_nothing_the_prs_own_runs_cached_and_the_judged_flip_still_stands(scenario: Scenario) -> None:
    """What the first run judged is saved under the PR's scope, where any workflow running for the
    PR can save too: the re-run judges it again (the same calls), and the flip the judge confirms
    stands again."""
    wrong = verdicts_jsonl(TEXTS, {**FAILS, "R4": set()})  # D on R4 recorded wrongly as yes
    scenario.git("reset", "-q", "--hard", _on_main(scenario, {VERDICTS: wrong}, "D on R4 recorded wrongly"))
    scenario.fake.judge = _truthful_judge
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"]).replace("version: 1", "version: 2"),
                                VERDICTS: verdicts_jsonl(TEXTS)}, "bump demo, add A2; fix D on R4")
    first = _gate(scenario, head, judge=JUDGE, env_extra=_judge_env(scenario))
    assert first.code == 0, first.stdout + first.stderr
    calls = scenario.fake.judge_calls
    assert _cache_file(scenario).read_text().count("\n") == calls  # saved for the next run, under the PR's scope
    again = _gate(scenario, head, judge=JUDGE, env_extra=_judge_env(scenario))
    assert again.code == 0, again.stdout + again.stderr
    assert scenario.fake.judge_calls == 2 * calls


X_TEXT = "Is key rotation automated?"


def test_a_planted_cache_entry_does_not_make_a_new_check_share_a_deleted_checks_catch(scenario: Scenario) -> None:
    """A catches R1 and no other check does. The PR deletes A and adds X; the planted cache says X
    answers "no" on R1 (the judge, asked, says "yes"): read as the judge's answer, X shares A's catch."""
    from rubric_gate.judges import PROMPT_VERSION
    from rubric_gate.verdicts import task_hash

    cache = _cache_file(scenario)
    cache.parent.mkdir(parents=True)
    cache.write_text(_verdict(X_TEXT, "R1", "no", judge=JUDGE, prompt=PROMPT_VERSION, item_hash=_item_hash("R1"),
                              task_hash=task_hash(TASK)))
    scenario.fake.judge = _truthful_judge  # X, unknown to it: "yes" on every item
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D", "X"], extra={"X": X_TEXT})}, "A -> X")
    result = _gate(scenario, head, judge=JUDGE, env_extra=_judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr


# -- the cache the base branch vouches for: an artifact of a push run on it ------------------------

class ActionsRuns:
    """The fake GitHub's Actions runs and artifacts (list runs, a run's artifacts, the zip behind a
    redirect), as the REST API shapes them: each run with its event, branch and head repository."""

    def __init__(self, scenario: Scenario) -> None:
        self.fake = scenario.fake
        self.base_sha = scenario.base_sha  # a push run of the branch ran on one of its commits
        self.runs: list[dict] = []
        self.zips: dict[int, bytes] = {}
        answer = self.fake._answer

        def _answer(method: str, path: str, token: str | None, body: object) -> tuple[int, object]:
            found = self._route(method, path)
            return answer(method, path, token, body) if found is None else found

        self.fake._answer = _answer  # type: ignore[method-assign]

    def add_run(self, *, event: str, branch: str, head_repo: str = REPO, verdicts: str | None = None,
                head_sha: str | None = None) -> int:
        run_id = self.fake.new_id()
        api = f"{self.fake.url}/repos/{REPO}"
        self.runs.insert(0, {"id": run_id, "event": event, "head_branch": branch,
                             "head_sha": head_sha or self.base_sha,
                             "status": "completed", "conclusion": "success",
                             "head_repository": {"full_name": head_repo, "name": head_repo.split("/")[1]},
                             "artifacts_url": f"{api}/actions/runs/{run_id}/artifacts",
                             "url": f"{api}/actions/runs/{run_id}"})
        if verdicts is not None:
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w") as archive:
                archive.writestr("verdicts.jsonl", verdicts)
            self.zips[run_id] = buffer.getvalue()
        return run_id

    def _route(self, method: str, path: str) -> tuple[int, object] | None:
        prefix = f"/repos/{REPO}/actions"
        if method != "GET":
            return None
        query = self.fake._query
        if path == f"{prefix}/runs":
            runs = [r for r in self.runs if query.get("branch") in (None, r["head_branch"])
                    and query.get("event") in (None, r["event"])]
            return 200, {"total_count": len(runs), "workflow_runs": runs}
        match = re.fullmatch(rf"{prefix}/runs/(\d+)/artifacts", path)
        if match:
            run_id = int(match.group(1))
            arts = [{"id": run_id, "name": CACHE_ARTIFACT, "expired": False, "size_in_bytes": len(self.zips[run_id]),
                     "archive_download_url": f"{self.fake.url}{prefix}/artifacts/{run_id}/zip"}] \
                if run_id in self.zips else []
            return 200, {"total_count": len(arts), "artifacts": arts}
        match = re.fullmatch(rf"{prefix}/artifacts/(\d+)/zip", path)
        if match:  # a redirect to short-lived storage, as the API answers
            self.fake._headers["Location"] = f"{self.fake.url}/storage/{match.group(1)}.zip"
            return 302, {}
        match = re.fullmatch(r"/storage/(\d+)\.zip", path)
        if match:
            return 200, self.zips[int(match.group(1))]
        return None


def _base_ref_env(scenario: Scenario) -> dict[str, str]:
    return {**_judge_env(scenario), "GITHUB_BASE_REF": "main"}


def _lines(verdicts: list[dict]) -> str:
    return "".join(json.dumps(v) + "\n" for v in verdicts)


def test_the_follow_up_pr_passes_without_calls_when_the_base_branchs_cache_artifact_has_the_lines(
        scenario: Scenario) -> None:
    lines = _warm_main(scenario)
    runs = ActionsRuns(scenario)
    runs.add_run(event="push", branch="main", verdicts=_lines(lines))
    calls = scenario.fake.judge_calls
    head = scenario.git.commit({VERDICTS: _copied(lines)}, "record the cache's verdicts")
    result = _gate(scenario, head, judge=JUDGE, env_extra=_base_ref_env(scenario))
    assert result.code == 0, result.stdout + result.stderr
    assert [f["blocking"] for f in _standard(result)] == [False], _standard(result)
    assert scenario.fake.judge_calls == calls  # every copied line is the base branch's cache's own answer
    assert "the verdict cache of push run" in result.stdout


def test_only_a_push_run_on_the_base_branch_of_this_repository_vouches_for_a_cache(scenario: Scenario) -> None:
    """Runs a PR can start (its own, a fork's push to a branch named `main`, another branch's
    push) leave artifacts too: their caches are not the base branch's, so the copied lines are
    judged live, and a planted answer there confirms nothing."""
    lines = _warm_main(scenario)
    planted = [dict(v, answer="no") if (v["item"], v["check_text"]) == ("R4", TEXTS["C"]) else v for v in lines]
    runs = ActionsRuns(scenario)
    runs.add_run(event="pull_request", branch="main", verdicts=_lines(planted))
    runs.add_run(event="push", branch="main", head_repo="mallory/rubrics", verdicts=_lines(planted))
    runs.add_run(event="push", branch="pr", verdicts=_lines(planted))
    head = scenario.git.commit({VERDICTS: _copied(planted)}, "record the 'cache's' verdicts")
    result = _gate(scenario, head, judge=JUDGE, env_extra=_base_ref_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    blocking = [f for f in _standard(result) if f["blocking"]]
    assert len(blocking) == 1 and "C on R4: yes -> no" in blocking[0]["message"], _standard(result)
    assert "left a `rubric-gate-verdict-cache` artifact" in result.stdout


def publish_warm_cache(scenario: Scenario) -> dict[str, str]:
    """What the workflow's push run uploads after the warm-up (`rubric-gate-verdict-cache`): the
    cache file as an artifact of a push run on main. The env a PR's run then reads it with."""
    ActionsRuns(scenario).add_run(event="push", branch="main", verdicts=_cache_file(scenario).read_text())
    return {"GITHUB_BASE_REF": "main"}


def test_without_actions_read_the_base_branchs_cache_is_not_read_and_the_pairs_are_judged_live(
        scenario: Scenario) -> None:
    lines = _warm_main(scenario)
    runs = ActionsRuns(scenario)
    runs.add_run(event="push", branch="main", verdicts=_lines(lines))
    route = runs._route
    runs._route = lambda method, path: ((403, {"message": "Resource not accessible by integration"})  # type: ignore[method-assign]
                                        if "/actions/" in path else route(method, path))
    calls = scenario.fake.judge_calls
    head = scenario.git.commit({VERDICTS: _copied(lines)}, "record the cache's verdicts")
    result = _gate(scenario, head, judge=JUDGE, env_extra=_base_ref_env(scenario))
    assert result.code == 0, result.stdout + result.stderr
    assert scenario.fake.judge_calls - calls == len(lines)  # confirmed live, pair by pair
    assert "the job needs `actions: read`" in result.stdout


def test_a_cache_artifact_that_is_no_zip_or_holds_no_verdict_file_is_no_trusted_cache(scenario: Scenario) -> None:
    lines = _warm_main(scenario)
    runs = ActionsRuns(scenario)
    run_id = runs.add_run(event="push", branch="main", verdicts=_lines(lines))
    runs.zips[run_id] = b"PK\x03\x04 not a zip"
    calls = scenario.fake.judge_calls
    head = scenario.git.commit({VERDICTS: _copied(lines)}, "record the cache's verdicts")
    result = _gate(scenario, head, judge=JUDGE, env_extra=_base_ref_env(scenario))
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
