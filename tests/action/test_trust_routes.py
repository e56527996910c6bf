"""Routes to a green check, each closed at the trust boundary and tried end to end.

Every test is a real git repository, a PR and `rubric-gate action` against the fake GitHub. What
the base branch vouches for (its rubrics, labels and recorded verdicts; verdicts the configured
judge produced in this run) is trusted; what the PR supplies may reject a change, never excuse one.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from tests.action.harness import (
    CALIBRATION,
    FAILS,
    LABELS,
    NEWLINE_RUBRIC,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    commit_on_main,
    rubric_yaml,
    shallow_workspace,
    verdicts_jsonl,
)

JUDGE_ENV = {"OPENAI_API_KEY": "sk-test"}


def _judge_env(scenario: Scenario) -> dict[str, str]:
    return {"OPENAI_BASE_URL": f"{scenario.fake.url}/v1", **JUDGE_ENV}


def _errors(result) -> str:
    return " ".join(r["error"] or "" for r in result.report()["rubrics"])


def _truthful_judge(prompt: str) -> str:
    check = next((cid for cid, text in TEXTS.items() if text in prompt), None)
    item = next((i for i in LABELS if f"review {i}" in prompt), None)
    if check is None or item is None:
        return "yes"
    return "no" if check in FAILS[item] else "yes"


# -- one reader: YAML tags and symlinks ---------------------------------------------------------

def test_a_tag_on_the_root_mapping_is_refused_naming_its_line(scenario: Scenario) -> None:
    """`--- !rubric`: a second YAML reader saw `{}`, so a repointed `calibration` and a reworded
    `task` went unseen."""
    (scenario.git.path / "calibration/easy.jsonl").write_text(
        (scenario.git.path / CALIBRATION).read_text().replace('"fail"', '"pass"'))
    tagged = "--- !rubric\n" + rubric_yaml(["A", "B", "C", "D"]).replace(CALIBRATION, "calibration/easy.jsonl") \
        .replace("Review a cloud security design.", "Every design here is compliant.")
    scenario.git("add", "calibration/easy.jsonl")
    head = scenario.git.commit({RUBRIC: tagged}, "tag the root, repoint, reword the task")
    result = scenario.run(head)
    assert result.code == 2 and result.outputs["decision"] == "fail", result.stdout + result.stderr
    assert f"{head[:7]}:{RUBRIC}:1: YAML tag '!rubric' is not allowed" in _errors(result)


def test_a_binary_tagged_calibration_path_is_refused(scenario: Scenario) -> None:
    """`calibration: !!binary ...` decodes to another path: a hidden repoint (and relabel)."""
    (scenario.git.path / "calibration/easy.jsonl").write_text(
        (scenario.git.path / CALIBRATION).read_text().replace('"fail"', '"pass"'))
    scenario.git("add", "calibration/easy.jsonl")
    hidden = base64.b64encode(b"calibration/easy.jsonl").decode()
    text = rubric_yaml(["A", "B", "C", "D"]).replace(f"calibration: {CALIBRATION}", f"calibration: !!binary {hidden}")
    head = scenario.git.commit({RUBRIC: text}, "repoint through a binary tag")
    result = scenario.run(head)
    assert result.code == 2 and result.outputs["decision"] == "fail", result.stdout + result.stderr
    line = text.splitlines().index(f"calibration: !!binary {hidden}") + 1
    assert f"{RUBRIC}:{line}: YAML tag '!!binary' is not allowed" in _errors(result)


def test_the_cli_refuses_yaml_tags_too(tmp_path: Path) -> None:
    from rubric_gate.cli.main import main

    rubric = tmp_path / "r.yaml"
    rubric.write_text("--- !rubric\n" + rubric_yaml(["A"]))
    assert main(["lint", str(rubric)]) == 2


@pytest.mark.parametrize("shallow", [False, True], ids=["git", "rest"])
def test_a_rubric_replaced_by_a_symlink_is_refused(scenario: Scenario, shallow: bool) -> None:
    """The symlink's blob is its target string, here the base YAML: read as text it was the
    unchanged rubric, while a checkout follows the link somewhere else."""
    path = scenario.git.path / RUBRIC
    target = path.read_text()
    path.unlink()
    os.symlink(target, path)
    scenario.git("add", RUBRIC)
    head = scenario.git.commit({}, "the rubric becomes a symlink")
    result = scenario.run(head, workspace=shallow_workspace(scenario) if shallow else None)
    assert result.code == 2 and result.outputs["decision"] == "fail", result.stdout + result.stderr
    assert f"{RUBRIC}: is a symlink (mode 120000)" in _errors(result)


# -- untrusted evidence can only reject ---------------------------------------------------------

X_TEXT = "Is data encrypted in transit?"


def _x_catches_r1(scenario: Scenario) -> str:
    """Add check X with the PR's own "no" on R1 and delete A, the only check catching R1."""
    verdicts = verdicts_jsonl(TEXTS) + "".join(
        json.dumps({"item": i, "check_text": X_TEXT, "answer": "no" if i == "R1" else "yes"}) + "\n" for i in LABELS)
    return scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D", "X"], extra={"X": X_TEXT}), VERDICTS: verdicts},
                               "add X, which 'catches' R1; delete A")


@pytest.mark.parametrize(("fork", "judge", "trust"), [
    (True, True, "true"), (True, True, "false"), (False, False, "true"), (True, False, "true"),
], ids=["fork-keyless-judge-trusted", "fork-keyless-judge-untrusted", "replay-trusted", "fork-replay-trusted"])
def test_pr_written_verdicts_cannot_share_the_catch_of_a_deleted_check(scenario: Scenario, fork: bool, judge: bool,
                                                                      trust: str) -> None:
    head = _x_catches_r1(scenario)
    inputs = {"judge": "openai:fake-model"} if judge else {}
    result = scenario.run(head, fork=fork, trust_pr_verdicts=trust, **inputs)
    assert result.code == 1 and result.outputs["decision"] == "fail", result.stdout + result.stderr
    (rubric,) = result.report()["rubrics"]
    decisions = {c["check"]: c["decision"] for c in rubric["report"]["changes"]}
    assert decisions["A"] == "rejected"
    reason = next(c["reason"] for c in rubric["report"]["changes"] if c["check"] == "A")
    assert "R1" in reason


def test_pr_verdicts_that_only_add_blame_still_reject(scenario: Scenario) -> None:
    """The other side of the rule: a PR's own "no" on a correct item makes its added check fail."""
    verdicts = verdicts_jsonl(TEXTS) + "".join(
        json.dumps({"item": i, "check_text": X_TEXT, "answer": "no" if i == "R4" else "yes"}) + "\n" for i in LABELS)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra={"X": X_TEXT}),
                                VERDICTS: verdicts}, "add X with blame")
    result = scenario.run(head, trust_pr_verdicts="true")
    assert result.code == 1, result.stdout + result.stderr


def test_pr_verdicts_for_a_new_check_still_pass_when_trusted(scenario: Scenario) -> None:
    """`trust_pr_verdicts: true` keeps its meaning for what it is for: a new check's own record."""
    verdicts = verdicts_jsonl(TEXTS) + "".join(
        json.dumps({"item": i, "check_text": X_TEXT, "answer": "no" if i == "R1" else "yes"}) + "\n" for i in LABELS)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra={"X": X_TEXT}),
                                VERDICTS: verdicts}, "add X")
    result = scenario.run(head, trust_pr_verdicts="true")
    assert result.code == 0, result.stdout + result.stderr


def test_a_judged_flip_of_an_answer_another_rubric_uses_is_not_excused(scenario: Scenario) -> None:
    """demo is judged (its check C on R1-R5); `second` shares C's text and the verdict file on its
    own items. Re-judging C for demo excuses nothing about C on S1: that pair is re-judged itself
    (the changed answer is what needs a trusted source), and the judge keeps the record's "no"."""
    other_items = {"S1": "fail", "S2": "pass"}
    other = "".join(json.dumps({"id": i, "input": f"other {i}", "output": f"other review {i}", "label": lab}) + "\n"
                    for i, lab in other_items.items())
    recorded = verdicts_jsonl(TEXTS) + "".join(
        json.dumps({"item": i, "check_text": TEXTS["C"], "answer": a}) + "\n" for i, a in (("S1", "no"), ("S2", "yes")))
    second = rubric_yaml(["C"]).replace("id: demo", "id: second").replace(CALIBRATION, "calibration/other.jsonl")
    main = commit_on_main(scenario, {"calibration/other.jsonl": other, VERDICTS: recorded, "rubrics/second.yaml": second},
                    "a second rubric on its own labels, sharing the verdict file")
    scenario.git("reset", "-q", "--hard", main)
    scenario.fake.judge = lambda prompt: "no" if "other review S1" in prompt else _truthful_judge(prompt)
    flipped = recorded.replace(f'"S1", "check_text": "{TEXTS["C"]}", "answer": "no"',
                               f'"S1", "check_text": "{TEXTS["C"]}", "answer": "yes"')
    assert flipped != recorded
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"]).replace("version: 1", "version: 2"),
                                VERDICTS: flipped}, "bump demo, add A2; flip C on S1")
    result = scenario.run(head, judge="openai:fake-model", env_extra=_judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    blocking = [f for f in result.report()["standard"] if f["blocking"]]
    assert any("on S1: no -> yes" in f["message"] for f in blocking), result.report()["standard"]


def _without_line(text: str, check: str, item: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True)
                   if not (json.loads(line)["check_text"] == TEXTS[check] and json.loads(line)["item"] == item))


def test_deleting_a_recorded_verdict_line_needs_the_override(scenario: Scenario) -> None:
    head = scenario.git.commit({VERDICTS: _without_line(verdicts_jsonl(TEXTS), "A", "R1")}, "drop A on R1")
    result = scenario.run(head)
    assert result.code == 1, result.stdout + result.stderr
    (finding,) = result.report()["standard"]
    assert finding["blocking"] and "removes 1 recorded verdict" in finding["message"] and f"{TEXTS['A']} on R1" in finding["message"]


def test_a_refilled_verdict_line_does_not_excuse_deleting_its_check(scenario: Scenario) -> None:
    """main lost the line (A, R1); the next PR fills it "yes" (so A catches only R2, which B
    shares) and deletes A."""
    main = commit_on_main(scenario, {VERDICTS: _without_line(verdicts_jsonl(TEXTS), "A", "R1")}, "a line went missing")
    scenario.git("reset", "-q", "--hard", main)
    refill = json.dumps({"item": "R1", "check_text": TEXTS["A"], "answer": "yes"}) + "\n"
    head = scenario.git.commit({VERDICTS: (scenario.git.path / VERDICTS).read_text() + refill,
                                RUBRIC: rubric_yaml(["B", "C", "D"])}, "fill A on R1 with yes, delete A")
    for trust in ("true", "false"):
        result = scenario.run(head, trust_pr_verdicts=trust)
        assert result.code == 2 and result.outputs["decision"] == "fail", result.stdout + result.stderr


# -- gate what lands: every changed file, on the base tip ---------------------------------------

def test_a_shallow_checkout_with_over_3000_changed_files_fails_closed(scenario: Scenario) -> None:
    """The PR files API lists at most 3,000 files: a rubric edit sorted after them went ungated."""
    for i in range(3001):
        (scenario.git.path / "docs" / f"n{i:04}.md").parent.mkdir(exist_ok=True)
        (scenario.git.path / "docs" / f"n{i:04}.md").write_text(f"{i}\n")
    scenario.git("add", "docs")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "3001 notes, and delete A")
    result = scenario.run(head, workspace=shallow_workspace(scenario))
    assert result.code == 2, result.stdout + result.stderr  # the job fails: a required check stays red
    assert "changes 3,002 files, but the GitHub API listed 3,000" in result.stdout + result.stderr


def test_a_rubric_under_a_directory_named_with_a_newline_is_gated(scenario: Scenario) -> None:
    main = commit_on_main(scenario, {NEWLINE_RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace("id: demo", "id: nl")},
                    "a team folder")
    scenario.git("reset", "-q", "--hard", main)
    head = scenario.git.commit({NEWLINE_RUBRIC: rubric_yaml(["B", "C", "D"]).replace("id: demo", "id: nl")},
                               "delete A from the team's rubric")
    result = scenario.run(head)
    assert result.code == 1 and result.outputs["decision"] == "fail", result.stdout + result.stderr
    (rubric,) = result.report()["rubrics"]
    assert rubric["file"] == NEWLINE_RUBRIC


A3_TEXT = "Is every stored byte encrypted?"


def test_two_prs_deleting_each_of_a_redundant_pair_cannot_both_land(scenario: Scenario) -> None:
    """A and A3 catch the same items. PR 1 deletes A and merges; PR 2, branched before, deletes A3.
    Against its merge base A3 is redundant; on the base tip it holds R1 alone."""
    extra = {"A3": A3_TEXT}
    fails = {item: checks | ({"A3"} if "A" in checks else set()) for item, checks in FAILS.items()}
    base = scenario.git.commit({RUBRIC: rubric_yaml(["A", "A3", "B", "C", "D"], extra=extra),
                                VERDICTS: verdicts_jsonl({**TEXTS, **extra}, fails)}, "A3 duplicates A")
    scenario.git("checkout", "-q", "main")
    scenario.git("merge", "-q", "--ff-only", "pr")
    scenario.base_sha = scenario.fake.base_sha = base
    first = scenario.git.commit({RUBRIC: rubric_yaml(["A3", "B", "C", "D"], extra=extra)}, "PR 1: delete A")
    scenario.git("checkout", "-q", "pr")
    alone = scenario.run(first)  # gated before it merged: A3 still catches R1
    assert alone.code == 0, alone.stdout + alone.stderr
    scenario.base_sha = scenario.fake.base_sha = first  # PR 1 merged (fast-forward)
    second = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"], extra=extra)}, "PR 2: delete A3")
    result = scenario.run(second)
    assert result.code == 1 and result.outputs["decision"] == "fail", result.stdout + result.stderr
    assert "R1" in json.dumps(result.report()["rubrics"])


def test_a_verdict_only_pr_filling_a_gap_of_a_base_check_needs_the_override(scenario: Scenario) -> None:
    """The first half of the refill, on its own: merged, its "yes" would be the record that
    lets the next PR delete A."""
    main = commit_on_main(scenario, {VERDICTS: _without_line(verdicts_jsonl(TEXTS), "A", "R1")}, "a line went missing")
    scenario.git("reset", "-q", "--hard", main)
    refill = json.dumps({"item": "R1", "check_text": TEXTS["A"], "answer": "yes"}) + "\n"
    head = scenario.git.commit({VERDICTS: (scenario.git.path / VERDICTS).read_text() + refill}, "fill A on R1")
    result = scenario.run(head)
    assert result.code == 1, result.stdout + result.stderr
    (finding,) = result.report()["standard"]
    filled = result.differences()["answer.filled"]
    assert finding["blocking"] and (filled["count"], filled["rule"], filled["message"]) == (1, "override", finding["message"])


def test_deleting_a_rubric_is_gated_on_what_the_base_tip_gives_it(scenario: Scenario) -> None:
    """At the merge base `extra` holds only E (no catch); main has since added A to it, the
    only check there catching R1. Deleting the file now loses that catch."""
    scenario.git.commit({"rubrics/extra.yaml": rubric_yaml(["E"]).replace("id: demo", "id: extra")}, "extra: E")
    scenario.git("checkout", "-q", "main")
    scenario.git("merge", "-q", "--ff-only", "pr")
    scenario.base_sha = scenario.fake.base_sha = scenario.git("rev-parse", "HEAD")
    scenario.git("checkout", "-q", "pr")
    commit_on_main(scenario, {"rubrics/extra.yaml": rubric_yaml(["A", "E"]).replace("id: demo", "id: extra")}, "extra: A")
    head = scenario.git.commit({"rubrics/extra.yaml": None}, "delete extra")
    result = scenario.run(head)
    assert result.code == 1 and result.outputs["decision"] == "fail", result.stdout + result.stderr
    (rubric,) = result.report()["rubrics"]
    assert any("tip" in f and "unique catch" in f for f in rubric["failures"]), rubric


@pytest.mark.parametrize("name", [CALIBRATION, VERDICTS])
def test_a_calibration_set_or_verdict_file_replaced_by_a_symlink_is_refused(scenario: Scenario, name: str) -> None:
    path = scenario.git.path / name
    target = path.read_text()
    path.unlink()
    os.symlink(target[:2000], path)
    scenario.git("add", name)
    head = scenario.git.commit({}, f"{name} becomes a symlink")
    result = scenario.run(head)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.code == 2, result.stdout + result.stderr
    assert f"{name}: is a symlink (mode 120000)" in result.stdout + result.stderr


def test_a_flipped_answer_the_judge_contradicts_is_not_excused(scenario: Scenario) -> None:
    """The judge re-judged D on R4 and says "no"; the PR records "yes". Merged, the record would
    say what the judge did not, for every later replay."""
    scenario.fake.judge = _truthful_judge
    flipped = {**FAILS, "R4": set()}
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"]), VERDICTS: verdicts_jsonl(TEXTS, flipped)},
                               "add A2; flip D on R4")
    result = scenario.run(head, judge="openai:fake-model", env_extra=_judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    (finding,) = result.report()["standard"]
    assert finding["blocking"] and "on R4: no -> yes" in finding["message"]


@pytest.mark.parametrize(("on_main", "in_pr", "what"), [
    (["A", "B", "C", "D", "X=E"], ["A", "B", "C", "D", "X=A2"], "added by this PR and, with other text"),
    (["A=E", "B", "C", "D"], ["A=A2", "B", "C", "D"], "edited by this PR and, differently"),
], ids=["both-add-X", "both-edit-A"])
def test_a_check_id_the_pr_and_main_each_changed_differently_is_reported(
        scenario: Scenario, on_main: list[str], in_pr: list[str], what: str) -> None:
    """Applied onto the base tip, one version of the id would win silently: the merge is reported."""
    commit_on_main(scenario, {RUBRIC: rubric_yaml(on_main)}, "main changes a check")
    head = scenario.git.commit({RUBRIC: rubric_yaml(in_pr)}, "the PR changes the same check id")
    result = scenario.run(head)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.code == 1 and result.outputs["decision"] == "fail", result.stdout + result.stderr
    (rubric,) = result.report()["rubrics"]
    assert [f for f in rubric["failures"] if what in f and "rebase the PR and keep one" in f], rubric["failures"]


def test_a_check_id_the_pr_and_main_added_alike_is_no_conflict(scenario: Scenario) -> None:
    commit_on_main(scenario, {RUBRIC: rubric_yaml(["A", "B", "C", "D", "X=A2"])}, "main adds X")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X=A2"])}, "the PR adds the same X")
    result = scenario.run(head)
    assert result.code == 0 and result.outputs["decision"] == "pass", result.stdout + result.stderr


def test_a_judged_flip_is_not_excused_for_a_rubric_reading_it_under_another_task(scenario: Scenario) -> None:
    """`lenient` shares demo's labels, the verdict file and check D, under another task. The base
    records D on R4 as "yes"; the PR flips it to "no" and the judge says "no" for demo: the pair is
    re-judged under every task reading the file, and under lenient's the judge keeps "yes"."""
    wrong = verdicts_jsonl(TEXTS, {**FAILS, "R4": set()})
    lenient = (rubric_yaml(["D"]).replace("id: demo", "id: lenient")
               .replace("task: Review a cloud security design.", "task: Review a cloud design, leniently."))
    main = commit_on_main(scenario, {VERDICTS: wrong, "rubrics/lenient.yaml": lenient}, "lenient, sharing the record")
    scenario.git("reset", "-q", "--hard", main)
    scenario.fake.judge = lambda prompt: "yes" if "leniently" in prompt else _truthful_judge(prompt)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"]).replace("version: 1", "version: 2"),
                                VERDICTS: verdicts_jsonl(TEXTS)}, "bump demo, add A2; flip D on R4")
    result = scenario.run(head, judge="openai:fake-model", env_extra=_judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    blocking = [f for f in result.report()["standard"] if f["blocking"]]
    assert any("on R4: yes -> no" in f["message"] and "did not confirm" in f["message"] for f in blocking), \
        result.report()["standard"]


def test_a_judged_flip_is_excused_when_every_rubric_reading_it_shares_the_task(scenario: Scenario) -> None:
    """The same flip with one task: the judge re-judged the pair under the only task reading it."""
    wrong = verdicts_jsonl(TEXTS, {**FAILS, "R4": set()})
    main = commit_on_main(scenario, {VERDICTS: wrong}, "D on R4 recorded wrongly")
    scenario.git("reset", "-q", "--hard", main)
    scenario.fake.judge = _truthful_judge
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"]).replace("version: 1", "version: 2"),
                                VERDICTS: verdicts_jsonl(TEXTS)}, "bump demo, add A2; fix D on R4")
    result = scenario.run(head, judge="openai:fake-model", env_extra=_judge_env(scenario))
    findings = result.report()["standard"]
    assert [f["blocking"] for f in findings] == [False] and "re-judged these pairs" in findings[0]["message"], findings
    assert result.code == 0, result.stdout + result.stderr
