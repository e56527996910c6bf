"""A hostile pull request: what its author controls must not escape the repository or the gate."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.action.harness import (
    REPO,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    rubric_yaml,
    run_in_process,
)

MARKER = "<!-- rubric-gate -->"


def _rubric(checks: list[str], **keys: str) -> str:
    data = yaml.safe_load(rubric_yaml(checks))
    data.update(keys)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def _shallow(scenario: Scenario) -> Path:
    workspace = scenario.tmp / "workspace"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "pr", scenario.git.path.as_uri(), str(workspace)],
                   check=True, capture_output=True)
    return workspace


def _outside_repo(scenario: Scenario) -> list[str]:
    """Requests for anything but this repository (and GET /user, which finds the sticky comment's author)."""
    return [p for _, p in scenario.fake.requests
            if not p.startswith(f"/repos/{REPO}/") and p not in (f"/repos/{REPO}", "/user")]


@pytest.mark.parametrize(("key", "path"), [
    ("verdicts", "../../../other/private/contents/secret.jsonl"),  # another repository's file
    ("calibration", "../../../../orgs/acme/members"),  # any endpoint the token can read
    ("verdicts", "/etc/passwd"),
    ("calibration", "calibration/../../x.jsonl"),
])
def test_head_paths_outside_the_repository_are_refused_through_the_api(scenario: Scenario, key: str, path: str) -> None:
    """In a shallow checkout files are read through the contents API: `..` must not walk the API."""
    head = scenario.git.commit({RUBRIC: _rubric(["A", "B", "C", "D"], **{key: path})})
    result = scenario.run(head, workspace=_shallow(scenario))
    assert "Traceback" not in result.stderr, result.stderr
    assert result.report()["files_from"] == "rest"
    assert _outside_repo(scenario) == []
    assert result.code == 2 and result.outputs["decision"] == "fail"
    body = scenario.fake.marked_comments()[0]["body"]
    assert "could not be gated" in body and "inside the repository" in body


def test_head_paths_outside_the_repository_are_refused_with_git(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: _rubric(["A", "B", "C", "D"], verdicts="/proc/self/environ")})
    result = scenario.run(head)
    assert result.report()["files_from"] == "git"
    assert result.code == 2, result.stderr
    body = scenario.fake.marked_comments()[0]["body"]
    assert "inside the repository" in body and "root:" not in body


def _foreign_marked_comment(scenario: Scenario, login: str = "mallory") -> int:
    cid = scenario.fake.new_id()
    scenario.fake.comments[cid] = {
        "id": cid, "body": MARKER + "\n## ✅ rubric-gate: PASS\n\nLooks good to me!",
        "user": {"login": login, "type": "User"},
        "url": f"{scenario.fake.url}/repos/{REPO}/issues/comments/{cid}",
        "html_url": f"https://github.test/{REPO}/pull/7#issuecomment-{cid}",
    }
    return cid


def test_a_marked_comment_by_another_user_is_not_taken_for_the_sticky_comment(scenario: Scenario) -> None:
    """The PR author posts a comment starting with the marker before the first run."""
    forged = _foreign_marked_comment(scenario)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    assert "Looks good to me!" in scenario.fake.comments[forged]["body"]  # not edited
    mine = [c for c in scenario.fake.marked_comments() if c["user"]["login"] == "github-actions[bot]"]
    assert len(mine) == 1 and "rubric-gate: FAIL" in mine[0]["body"]
    # The next push edits the action's own comment, still not the forged one.
    again = scenario.run(scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C"])}, "keep A"))
    assert again.code == 0, again.stderr
    assert "Looks good to me!" in scenario.fake.comments[forged]["body"]
    mine = [c for c in scenario.fake.marked_comments() if c["user"]["login"] == "github-actions[bot]"]
    assert len(mine) == 1 and "rubric-gate: PASS" in mine[0]["body"]


def test_with_a_personal_token_the_sticky_comment_is_the_token_users_own(scenario: Scenario) -> None:
    scenario.fake.token_users = {"pat-token": "gate-bot"}
    other_bot = _foreign_marked_comment(scenario, login="other-app[bot]")
    scenario.fake.comments[other_bot]["user"]["type"] = "Bot"
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    assert scenario.run(head, token="pat-token").code == 1
    assert "Looks good to me!" in scenario.fake.comments[other_bot]["body"]
    (mine,) = [c for c in scenario.fake.marked_comments() if c["user"]["login"] == "gate-bot"]
    assert "rubric-gate: FAIL" in mine["body"]


def _verdict(check: str, item: str, answer: str) -> str:
    return json.dumps({"item": item, "check_text": TEXTS[check], "answer": answer}) + "\n"


def test_pr_verdicts_cannot_overwrite_the_base_verdicts(scenario: Scenario) -> None:
    """Deleting A loses R1; the PR "re-records" B as catching R1 so the deletion looks safe."""
    base_verdicts = (scenario.git.path / VERDICTS).read_text()
    head = scenario.git.commit({
        RUBRIC: rubric_yaml(["B", "C", "D"]),
        VERDICTS: base_verdicts + _verdict("B", "R1", "no"),
    }, "delete A, flip B on R1")
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    changes = {c["check"]: c["decision"] for c in result.report()["rubrics"][0]["report"]["changes"]}
    assert changes == {"A": "rejected"}
    body = scenario.fake.marked_comments()[0]["body"]
    assert "changes 1 recorded answer(s)" in body and "on R1: yes -&gt; no" in body
    assert "unverified" not in body  # nothing the PR recorded was used
    assert [f["blocking"] for f in result.report()["standard"]] == [True]


def test_pr_verdicts_pointing_elsewhere_cannot_overwrite_the_base_verdicts(scenario: Scenario) -> None:
    """Same, with the head rubric's `verdicts` key moved to a file the PR writes from scratch."""
    head = scenario.git.commit({
        RUBRIC: _rubric(["B", "C", "D"], verdicts="calibration/mine.jsonl"),
        "calibration/mine.jsonl": _verdict("B", "R1", "no"),
    }, "delete A, new verdict file")
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    assert "repoints 'verdicts' from" in scenario.fake.marked_comments()[0]["body"]
    changes = {c["check"]: c["decision"] for c in result.report()["rubrics"][0]["report"]["changes"]}
    assert changes == {"A": "rejected"}  # gated on the base's verdicts all the same


@pytest.mark.parametrize("new_path", ["rubrics/renamed.yaml", "elsewhere/demo.yaml"])
def test_a_rubric_moved_and_rewritten_is_still_gated(scenario: Scenario, new_path: str) -> None:
    """Too rewritten for git's rename detection: a deletion plus a new file, unless paired by id."""
    scenario.git("rm", "-q", RUBRIC)
    data = yaml.safe_load(rubric_yaml(["B", "C", "D"]))  # deletes A, which holds R1's only catch
    rewritten = "".join(f"# note {i}\n" for i in range(60)) + yaml.safe_dump(data, sort_keys=False, width=20)
    head = scenario.git.commit({new_path: rewritten}, "move and rewrite")
    diff = scenario.git("diff", "--name-status", "--find-renames", scenario.base_sha, head)
    assert not diff.startswith("R")  # git sees a deletion and an addition
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    (rubric,) = result.report()["rubrics"]
    if not new_path.startswith("rubrics/"):  # out of the glob it is no longer gated: a deletion
        assert rubric["status"] == "removed" and "unique catch" in " ".join(rubric["failures"])
        return
    assert rubric["file"] == new_path and rubric["base_file"] == RUBRIC and rubric["status"] == "renamed"
    assert {c["check"]: c["decision"] for c in rubric["report"]["changes"]} == {"A": "rejected"}
    (run,) = scenario.fake.check_runs.values()
    assert {a["path"] for a in run["output"]["annotations"]} == {new_path}


def test_a_modified_rubric_whose_base_cannot_be_read_is_not_waved_through_as_new(scenario: Scenario) -> None:
    """The PR's file list says modified, but the event's base commit does not serve the file (an
    event base sha nobody knows). Never an ungated "new rubric": the base the API reports now
    is the one gated (a re-run's payload may name a stale base)."""
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    scenario.base_sha = "0" * 40  # the event's; the fake lists PR files from the real base
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    assert "Traceback" not in result.stderr and result.outputs.get("decision") == "fail"
    (rubric,) = result.report()["rubrics"]
    assert rubric["report"] is not None and rubric["attribution"] is None  # gated as an edit


@pytest.mark.parametrize("field", ["base", "head"])
def test_event_shas_must_be_commit_shas(scenario: Scenario, field: str) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    event = scenario.event(head)
    payload = json.loads(event.read_text())
    payload["pull_request"][field]["sha"] = f"--output={scenario.tmp / 'written'}"
    event.write_text(json.dumps(payload))
    code, _, stderr = run_in_process(scenario.env(event, scenario.git.path), scenario.git.path)
    assert code == 2 and "is not a commit sha" in stderr and "Traceback" not in stderr
    assert not (scenario.tmp / "written").exists() and not scenario.fake.writes()


def test_a_deleted_fork_and_odd_payloads_fail_cleanly(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    event = scenario.event(head)
    payload = json.loads(event.read_text())
    payload["pull_request"]["head"]["repo"] = None  # the fork was deleted
    event.write_text(json.dumps(payload))
    env = scenario.env(event, scenario.git.path)
    code, _, stderr = run_in_process(env, scenario.git.path)
    assert code == 1 and "Traceback" not in stderr
    del payload["pull_request"]["base"]["sha"]
    event.write_text(json.dumps(payload))
    code, _, stderr = run_in_process(env, scenario.git.path)
    assert code == 2 and "lacks a field" in stderr and "Traceback" not in stderr


def test_a_committed_output_directory_is_not_written_through_or_passed_off(scenario: Scenario) -> None:
    """The PR commits `.rubric-gate/` with symlinks out of the workspace and forged judged verdicts."""
    target = scenario.tmp / "outside.txt"
    target.write_text("untouched\n")
    out = scenario.git.path / ".rubric-gate"
    (out / "verdicts").mkdir(parents=True)
    (out / "report.json").symlink_to(target)
    (out / "token").symlink_to(scenario.git.path / ".git" / "config")  # what an artifact upload would follow
    (out / "verdicts" / "demo.jsonl").write_text('{"item": "R1", "check_text": "x", "answer": "no"}\n')
    scenario.git("add", ".rubric-gate")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A, plant outputs")
    result = scenario.run(head)
    # Refused before anything is written; the output directory is cleaned first, so no symlink or
    # planted output is left for the upload step (git still holds them: only the checkout's copies go).
    assert result.code == 2, result.stderr
    assert "holds files the repository tracks" in result.stderr and "Traceback" not in result.stderr
    assert target.read_text() == "untouched\n"
    assert not (out / "report.json").is_symlink() and not (out / "token").is_symlink()
    assert not (out / "verdicts").exists()
    changed = scenario.git("status", "--porcelain", "--untracked-files=no").splitlines()
    assert changed and all(line.strip().startswith("D .rubric-gate/") for line in changed)  # nothing else touched
