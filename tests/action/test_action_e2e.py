"""`rubric-gate action` end to end: a real event file, a real git repository, a fake GitHub."""

from __future__ import annotations

import subprocess

from tests.action.harness import (
    CALIBRATION,
    FAILS,
    LABELS,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    calibration_jsonl,
    rubric_yaml,
    verdicts_jsonl,
)

MARKER = "<!-- rubric-gate -->"


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_failed_gate_comments_annotates_and_fails_then_edits_on_next_push(scenario: Scenario) -> None:
    head_yaml = rubric_yaml(["A=A2", "B", "C", "E"])  # reword A (loses R1), delete D, add E (blamed)
    head = scenario.git.commit({RUBRIC: head_yaml}, "edit rubric")
    result = scenario.run(head)

    assert result.code == 1, result.stderr
    assert result.outputs["decision"] == "fail"
    assert result.outputs["report"] == ".rubric-gate/report.json"
    report = result.report()
    decisions = {c["check"]: c["decision"] for c in report["rubrics"][0]["report"]["changes"]}
    assert decisions == {"A": "rejected", "D": "accepted", "E": "rejected"}

    comments = scenario.fake.marked_comments()
    assert len(comments) == 1
    body = comments[0]["body"]
    assert body.startswith(MARKER)
    assert "rubric-gate: FAIL" in body
    assert "<details>" in body and "Gated rubric" in body

    (run,) = scenario.fake.check_runs.values()
    assert run["name"] == "rubric-gate" and run["conclusion"] == "failure" and run["head_sha"] == head
    lines = {a["start_line"] for a in run["output"]["annotations"]}
    assert lines == {_line_of(head_yaml, "id: A"), _line_of(head_yaml, "id: E")}
    assert all(a["path"] == RUBRIC for a in run["output"]["annotations"])
    assert "rubric-gate: FAIL" in result.summary

    # Next push: only the accepted deletion remains. The same comment is edited.
    fixed = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C"])}, "keep A, drop E")
    second = scenario.run(fixed)
    assert second.code == 0, second.stderr
    assert second.outputs["decision"] == "pass"
    comments = scenario.fake.marked_comments()
    assert len(comments) == 1 and len(scenario.fake.comments) == 1
    assert "rubric-gate: PASS" in comments[0]["body"]
    assert sum(1 for m, p in scenario.fake.requests if m == "POST" and p.endswith("/comments")) == 1


def _outside_code(body: str) -> str:
    """The parts of a Markdown body GitHub renders as Markdown (not inside ``` fences)."""
    return "".join(part for i, part in enumerate(body.split("```")) if i % 2 == 0)


def test_user_text_arrives_inert(scenario: Scenario) -> None:
    nasty = "R5 @octocat|<script>alert(1)</script>"
    labels = {"R1": "fail", "R2": "fail", "R3": "fail", "R4": "pass", nasty: "pass"}
    fails = {"R1": {"A"}, "R2": {"A", "B"}, "R3": {"B", "C", "D"}, "R4": {"D"}, nasty: {"E"}}
    base = scenario.git.commit({CALIBRATION: calibration_jsonl(labels), VERDICTS: verdicts_jsonl(TEXTS, fails, labels)})
    scenario.base_sha = scenario.fake.base_sha = base
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "E"])}, "add E")
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    body = scenario.fake.marked_comments()[0]["body"]
    rendered = _outside_code(body)
    assert "alert(1)" in rendered  # the reason names the item...
    assert "<script>" not in rendered and "&lt;script&gt;" in rendered  # ...as inert text
    assert "@octocat" not in rendered and "@\u200boctocat" in rendered
    for line in rendered.splitlines():
        if line.startswith("|"):
            assert "octocat|" not in line


def test_fork_pr_with_read_only_token_reports_without_writing(scenario: Scenario) -> None:
    # The rubric's judge key (read at the base, where the PR cannot choose it), with no API key.
    scenario.base_sha = scenario.fake.base_sha = scenario.git.commit(
        {RUBRIC: rubric_yaml(["A", "B", "C", "D"], judge="anthropic:claude-test")}, "the rubric names its judge")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A=A2", "B", "C", "D"], judge="anthropic:claude-test")})
    result = scenario.run(head, fork=True, token="read-only-token")
    assert result.code == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.outputs["decision"] == "fail"
    assert not scenario.fake.comments and not scenario.fake.check_runs and not scenario.fake.statuses
    assert "No PR comment was posted" in result.summary and "fork" in result.summary
    assert "rubric-gate: FAIL" in result.summary
    assert "Replay mode" in result.summary
    assert "::warning::" in result.stdout
    comment_md = (result.workspace / result.outputs["comment"]).read_text()
    assert comment_md.startswith(MARKER) and "No PR comment was posted" not in comment_md


def test_override_by_a_writer_passes_with_a_warning(scenario: Scenario) -> None:
    scenario.fake.label_events = [{"event": "labeled", "actor": {"login": "maintainer"},
                                   "label": {"name": "rubric-gate:override"}}]
    scenario.fake.permissions = {"maintainer": "write"}
    scenario.fake.checks_forbidden = True  # and check runs refused: a commit status instead
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head, labels=("rubric-gate:override",))
    assert result.code == 0, result.stderr
    assert result.outputs["decision"] == "pass"
    body = scenario.fake.marked_comments()[0]["body"]
    assert "[!WARNING]" in body and "maintainer" in body and "@maintainer" not in body
    assert result.report()["override"]
    (status,) = scenario.fake.statuses
    assert status["state"] == "success" and status["context"] == "rubric-gate" and status["sha"] == head


def test_override_by_a_reader_is_refused(scenario: Scenario) -> None:
    scenario.fake.label_events = [
        {"event": "labeled", "actor": {"login": "maintainer"}, "label": {"name": "rubric-gate:override"}},
        {"event": "unlabeled", "actor": {"login": "maintainer"}, "label": {"name": "rubric-gate:override"}},
        {"event": "labeled", "actor": {"login": "drive-by"}, "label": {"name": "rubric-gate:override"}},
    ]
    scenario.fake.permissions = {"maintainer": "admin", "drive-by": "read"}
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head, labels=("rubric-gate:override",))
    assert result.code == 1, result.stderr
    assert result.outputs["decision"] == "fail"
    body = scenario.fake.marked_comments()[0]["body"]
    assert "Override refused" in body and "drive-by" in body
    (run,) = scenario.fake.check_runs.values()
    assert run["conclusion"] == "failure"


def test_shallow_checkout_reads_through_the_api(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A=A2", "B", "C"])}, "reword A, delete D")
    workspace = scenario.tmp / "workspace"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "pr", scenario.git.path.as_uri(), str(workspace)],
                   check=True, capture_output=True)
    result = scenario.run(head, workspace=workspace)
    assert result.code == 1, result.stderr
    assert result.report()["files_from"] == "rest"
    changes = {c["check"]: c["decision"] for c in result.report()["rubrics"][0]["report"]["changes"]}
    assert changes == {"A": "rejected", "D": "accepted"}
    assert any(p.endswith("/pulls/7/files") for _, p in scenario.fake.requests)
    # read by tree entry: the tree lists each file's mode and blob id, the blob API its bytes
    assert any("/git/trees/" in p for _, p in scenario.fake.requests)
    assert any("/git/blobs/" in p for _, p in scenario.fake.requests)


def test_pr_touching_no_rubric_passes_and_updates_an_earlier_comment(scenario: Scenario) -> None:
    first = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    assert scenario.run(first).code == 1
    # The author reverts the rubric and edits only the README.
    second = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"]), "README.md": "docs\n"}, "revert")
    result = scenario.run(second)
    assert result.code == 0, result.stderr
    assert result.outputs["decision"] == "pass"
    (comment,) = scenario.fake.comments.values()
    assert "changes no rubric" in comment["body"] and "FAIL" not in comment["body"]
    runs = sorted(scenario.fake.check_runs.values(), key=lambda r: r["id"])
    assert runs[-1]["conclusion"] == "success" and runs[-1]["head_sha"] == second


def test_pr_touching_no_rubric_creates_no_comment(scenario: Scenario) -> None:
    head = scenario.git.commit({"README.md": "docs\n"}, "docs only")
    result = scenario.run(head)
    assert result.code == 0 and result.outputs["decision"] == "pass"
    assert not scenario.fake.comments


def test_big_report_is_truncated_and_annotations_batched(scenario: Scenario) -> None:
    extra = {f"X{i}": f"Blamed check number {i}?" for i in range(60)}
    extra["LONG"] = "Is every one of these conditions met? " + "word " * 15000
    fails = {**{k: set(v) for k, v in {"R1": {"A"}, "R2": {"A", "B"}, "R3": {"B", "C", "D"}, "R4": {"D"}}.items()},
             "R5": set(extra) - {"LONG"}}
    scenario.git.commit({VERDICTS: verdicts_jsonl({**TEXTS, **extra}, fails)}, "record verdicts")
    scenario.base_sha = scenario.fake.base_sha = scenario.git("rev-parse", "HEAD")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", *extra], extra=extra)}, "many checks")
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    (comment,) = scenario.fake.comments.values()
    assert len(comment["body"]) <= 65536
    assert "Truncated" in comment["body"]
    assert _outside_code(comment["body"]).count("<details>") == _outside_code(comment["body"]).count("</details>")
    (run,) = scenario.fake.check_runs.values()
    assert len(run["output"]["annotations"]) == 60
    assert sum(1 for m, p in scenario.fake.requests if "/check-runs" in p) == 2  # create + one update


def test_pr_added_verdicts_are_flagged_and_can_fail(scenario: Scenario) -> None:
    new_text = {"F": "Is the threat model attached?"}
    added = verdicts_jsonl(new_text, {"R1": {"F"}})
    base_verdicts = (scenario.git.path / VERDICTS).read_text()
    head = scenario.git.commit({
        RUBRIC: rubric_yaml(["A", "B", "C", "D", "F"], extra=new_text),
        VERDICTS: base_verdicts + added,
    }, "add F with its verdicts")
    trusted = scenario.run(head)
    assert trusted.code == 0, trusted.stderr
    body = scenario.fake.marked_comments()[0]["body"]
    assert "5 unverified verdict(s)" in body and "used as recorded" in body
    strict = scenario.run(head, trust_pr_verdicts="false")
    assert strict.code == 1 and strict.outputs["decision"] == "fail"
    assert "trust_pr_verdicts" in scenario.fake.marked_comments()[0]["body"]


def test_label_edits_are_flagged_and_base_labels_used(scenario: Scenario) -> None:
    relabeled = {**LABELS, "R4": "fail"}
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"]), CALIBRATION: calibration_jsonl(relabeled)})
    result = scenario.run(head)
    assert result.code == 1  # deleting A still loses R1 under the base labels
    body = scenario.fake.marked_comments()[0]["body"]
    assert "relabeled 1: R4 (pass -&gt; fail)" in body


def test_missing_verdicts_are_an_input_error_reported_in_the_comment(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "F"], extra={"F": "Unjudged check?"})})
    result = scenario.run(head)
    assert result.code == 2
    assert result.outputs["decision"] == "fail"
    body = scenario.fake.marked_comments()[0]["body"]
    assert "could not be gated" in body and "no verdict for checks F" in body
    assert "`judge` input" in body and "--judge" not in body
    assert "record verdicts for them in calibration/demo.verdicts.jsonl in the PR" in body  # the file to write


def test_fail_on_never_reports_but_exits_zero(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head, fail_on="never")
    assert result.code == 0 and result.outputs["decision"] == "fail"
    (run,) = scenario.fake.check_runs.values()
    assert run["conclusion"] == "neutral"


def test_live_judge_rejudges_pr_verdicts_and_reports_disagreement(scenario: Scenario) -> None:
    """With judge credentials (an OpenAI-compatible endpoint here), PR-added verdicts are not used."""
    new_text = {"F": "Is the threat model attached?"}
    truth = {**FAILS, "R4": FAILS["R4"] | {"F"}}  # the judge: F fails a correct item

    def judge(prompt: str) -> str:
        check = next(cid for cid, text in {**TEXTS, **new_text}.items() if text in prompt)
        item = next(i for i in LABELS if f"review {i}" in prompt)
        return "no" if check in truth[item] else "yes"

    scenario.fake.judge = judge
    claimed = verdicts_jsonl(new_text, {"R1": {"F"}})  # the PR claims F only catches R1
    head = scenario.git.commit({
        RUBRIC: rubric_yaml(["A", "B", "C", "D", "F"], extra=new_text),
        VERDICTS: (scenario.git.path / VERDICTS).read_text() + claimed,
    }, "add F")
    result = scenario.run(head, judge="openai:fake-model",
                          env_extra={"OPENAI_BASE_URL": f"{scenario.fake.url}/v1", "OPENAI_API_KEY": "sk-test-secret"})
    assert result.code == 1, result.stdout + result.stderr
    assert "::add-mask::sk-test-secret" in result.stdout
    assert scenario.fake.judge_calls == 25  # 5 check texts x 5 items, none reusable (hand-recorded)
    rubric = result.report()["rubrics"][0]
    assert {c["check"]: c["decision"] for c in rubric["report"]["changes"]} == {"F": "rejected"}
    body = scenario.fake.marked_comments()[0]["body"]
    assert "re-judged" in body and "2 disagree" in body
    assert "Judge: openai:fake-model: 25 calls" in body
    cached = result.workspace / ".rubric-gate" / "cache" / "verdicts.jsonl"
    assert cached.is_file() and len(cached.read_text().splitlines()) == 25
    assert scenario.git("status", "--porcelain", "--", VERDICTS) == ""  # the PR's file is untouched


def test_check_summary_fits_githubs_byte_limit_for_non_ascii_reports(scenario: Scenario) -> None:
    """output.summary is limited to 65535 *bytes*: a long report in non-ASCII text must still post."""
    extra = {"LONG": "Sind alle Bedingungen erfüllt? " + "Prüfschritt für Überläufe; " * 4000}
    fails = {**{k: set(v) for k, v in FAILS.items()}, "R5": {"E"}}
    scenario.git.commit({VERDICTS: verdicts_jsonl({**TEXTS, **extra}, fails)}, "record verdicts")
    scenario.base_sha = scenario.fake.base_sha = scenario.git("rev-parse", "HEAD")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "E", "LONG"], extra=extra)}, "long check")
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    assert "No check run or commit status was posted" not in result.summary
    (run,) = scenario.fake.check_runs.values()
    summary = run["output"]["summary"]
    assert len(summary.encode("utf-8")) <= 65535 < len(summary.encode("utf-8")) + 10_000
    assert "Truncated" in summary and summary.count("```") % 2 == 0
    (comment,) = scenario.fake.comments.values()
    assert len(comment["body"]) <= 65536


def test_files_over_one_megabyte_are_read_through_the_blob_api(scenario: Scenario) -> None:
    """Over 1 MB the contents API returns no content (encoding "none"): the blob API serves it."""
    big = {**LABELS}
    lines = calibration_jsonl(big).splitlines(keepends=True)
    lines[0] = lines[0].replace('"input": "design R1"', '"input": "' + "design R1 " * 120_000 + '"')
    base = scenario.git.commit({CALIBRATION: "".join(lines)}, "long calibration input")
    scenario.base_sha = scenario.fake.base_sha = base
    assert (scenario.git.path / CALIBRATION).stat().st_size > 1024 * 1024
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A=A2", "B", "C"])}, "reword A, delete D")
    workspace = scenario.tmp / "workspace"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "pr", scenario.git.path.as_uri(), str(workspace)],
                   check=True, capture_output=True)
    result = scenario.run(head, workspace=workspace)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.code == 1, result.stderr
    assert result.report()["files_from"] == "rest"
    changes = {c["check"]: c["decision"] for c in result.report()["rubrics"][0]["report"]["changes"]}
    assert changes == {"A": "rejected", "D": "accepted"}
    assert any("/git/blobs/" in p for _, p in scenario.fake.requests)


def test_marked_comment_on_a_later_page_is_edited_not_duplicated(scenario: Scenario) -> None:
    """Comment lists are paginated (at most 100 a page): the sticky comment may be on page 2."""
    for i in range(130):
        cid = scenario.fake.new_id()
        scenario.fake.comments[cid] = {"id": cid, "body": f"chatter {i}", "user": {"login": "someone"},
                                       "url": f"{scenario.fake.url}/repos/x/issues/comments/{cid}",
                                       "html_url": f"https://github.test/c/{cid}"}
    cid = scenario.fake.new_id()
    scenario.fake.comments[cid] = {"id": cid, "body": MARKER + "\nold report", "user": {"login": "github-actions[bot]"},
                                   "url": f"{scenario.fake.url}/repos/acme/rubrics/issues/comments/{cid}",
                                   "html_url": f"https://github.test/c/{cid}"}
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    (comment,) = scenario.fake.marked_comments()
    assert comment["id"] == cid and "rubric-gate: FAIL" in comment["body"]
    assert not any(m == "POST" and p.endswith("/comments") for m, p in scenario.fake.requests)


def test_override_by_a_maintainer_counts_and_by_a_triager_does_not(scenario: Scenario) -> None:
    """The permission endpoint reports maintain as `write` and triage as `read` (role_name has the role)."""
    label = "rubric-gate:override"
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    scenario.fake.label_events = [{"event": "labeled", "actor": {"login": "tri"}, "label": {"name": label}}]
    scenario.fake.permissions = {"tri": "triage", "maint": "maintain"}
    assert scenario.run(head, labels=(label,)).code == 1
    assert "Override refused" in scenario.fake.marked_comments()[0]["body"]
    scenario.fake.label_events.append({"event": "labeled", "actor": {"login": "maint"}, "label": {"name": label}})
    result = scenario.run(head, labels=(label,))
    assert result.code == 0, result.stderr
    assert result.report()["override"]
