"""Recorded answers are the evidence the gate replays: a PR may add answers for the checks it adds
(which may reject a change, never excuse one), but changing, filling in, hiding or removing the
answers the base branch recorded needs the override unless the configured judge confirms them live.
"""

from __future__ import annotations

import json
import unicodedata

import pytest

from rubric_gate.judges import PROMPT_VERSION
from rubric_gate.verdicts import task_hash
from tests.action.harness import (
    CALIBRATION,
    DELETE_A,
    EXTRA,
    FAILS,
    JUDGE,
    LABELS,
    OTHER,
    OVERRIDE,
    RUBRIC,
    TASK,
    TEXTS,
    VERDICTS,
    Scenario,
    apply_label,
    calibration_jsonl,
    commit_on_main,
    content_hash_of,
    flip_answer,
    judge_env,
    judged_by,
    keyed_line,
    marked_comment_body,
    merge_into_main,
    merge_pr,
    not_both_green,
    other_rubric,
    rejected_run,
    route_closed,
    rubric_with_keys,
    rubric_yaml,
    run_gated,
    truthful_judge,
    truthful_judge_strict,
    two_prs,
    verdict_line,
    verdicts_jsonl,
)


def test_a_judged_rubric_does_not_cover_changed_answers_of_another_sharing_its_verdicts(scenario: Scenario) -> None:
    """The judge re-judges the edited rubric's checks only: an answer the PR flips for a check of
    another rubric sharing the verdict file was never re-judged, so it needs the override."""
    second = rubric_yaml(["C", "E"]).replace("id: demo", "id: second")
    main = commit_on_main(scenario, {"rubrics/second.yaml": second}, "a second rubric on the same verdicts")
    scenario.git("reset", "-q", "--hard", main)
    # The judge agrees with the PR that D passes R4 (an excused change is one the judge confirms).
    scenario.fake.judge = lambda prompt: "yes" if TEXTS["D"] in prompt and "review R4" in prompt \
        else truthful_judge_strict(prompt)
    # E no longer fails the correct item R5 (only `second` has E), nor D R4 (demo's D, re-judged).
    flipped = {**FAILS, "R5": set(), "R4": set()}
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"]), VERDICTS: verdicts_jsonl(TEXTS, flipped)},
                               "add A2 to demo; flip D on R4 and E on R5")
    result = scenario.run(head, judge="openai:fake-model",
                          env_extra={"OPENAI_BASE_URL": f"{scenario.fake.url}/v1", "OPENAI_API_KEY": "sk-test"})
    assert result.code == 1, result.stdout + result.stderr
    rejudged, unjudged = result.report()["standard"]
    assert not rejudged["blocking"] and "on R4: no -> yes" in rejudged["message"] and "R5" not in rejudged["message"]
    assert unjudged["blocking"] and "on R5: no -> yes" in unjudged["message"] and "R4" not in unjudged["message"]


def test_changed_answers_are_found_for_every_calibration_set_sharing_a_verdict_file(scenario: Scenario) -> None:
    other_items = {"S1": "fail", "S2": "pass"}
    other = "".join(json.dumps({"id": i, "input": f"other {i}", "output": f"other review {i}", "label": lab}) + "\n"
                    for i, lab in other_items.items())
    recorded = verdicts_jsonl(TEXTS) + "".join(
        json.dumps({"item": i, "check_text": TEXTS["C"], "answer": a}) + "\n" for i, a in (("S1", "no"), ("S2", "yes")))
    second = rubric_yaml(["C"]).replace("id: demo", "id: second").replace(CALIBRATION, "calibration/other.jsonl")
    main = commit_on_main(scenario, {"calibration/other.jsonl": other, VERDICTS: recorded, "rubrics/second.yaml": second},
                    "a second rubric on its own labels, sharing the verdict file")
    scenario.git("reset", "-q", "--hard", main)
    head = scenario.git.commit({VERDICTS: recorded.replace('"S1", "check_text": "Is public network exposure justified?", '
                                                           '"answer": "no"', '"S1", "check_text": "Is public network '
                                                           'exposure justified?", "answer": "yes"')}, "flip C on S1")
    assert head != main
    result = scenario.run(head)
    assert result.code == 1, result.stdout + result.stderr
    assert "on S1: no -&gt; yes" in marked_comment_body(scenario)


def test_moving_the_verdict_store_away_from_its_rubric_needs_the_override(scenario: Scenario) -> None:
    """Left behind, the rubric names a file that no longer exists: every later replay finds no verdicts."""
    scenario.git("mv", VERDICTS, "calibration/elsewhere.verdicts.jsonl")
    head = scenario.git.commit({}, "move the verdict store")
    result = scenario.run(head)
    assert result.code == 1, result.stdout + result.stderr
    (finding,) = result.report()["standard"]
    moved = result.differences()["verdicts.moved"]
    assert finding["blocking"] and moved["needs_override"] and finding["message"] == moved["message"]
    assert "calibration/elsewhere.verdicts.jsonl" in finding["message"]  # says where it went


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
        RUBRIC: rubric_with_keys(["B", "C", "D"], verdicts="calibration/mine.jsonl"),
        "calibration/mine.jsonl": _verdict("B", "R1", "no"),
    }, "delete A, new verdict file")
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    assert "repoints 'verdicts' from" in scenario.fake.marked_comments()[0]["body"]
    changes = {c["check"]: c["decision"] for c in result.report()["rubrics"][0]["report"]["changes"]}
    assert changes == {"A": "rejected"}  # gated on the base's verdicts all the same


# -- verdict lines dressed up as something they are not ---------------------------------------

def _delete_a_with(scenario: Scenario, lines: str):
    """Delete A (the only check catching R1) with `lines` appended to the verdict file."""
    return scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"]), VERDICTS: verdicts_jsonl(TEXTS) + lines},
                               "delete A, with extra verdict lines")


@pytest.mark.parametrize("trust", ["true", "false"])
def test_a_verdict_keyed_as_the_configured_judge_cannot_share_a_catch(scenario: Scenario, trust: str) -> None:
    from rubric_gate.judges import PROMPT_VERSION
    from rubric_gate.verdicts import task_hash

    spoof = verdict_line("B", "R1", "no", judge=JUDGE, prompt=PROMPT_VERSION, item_hash=content_hash_of("R1"),
                     task_hash=task_hash("Review a cloud security design."))
    head = _delete_a_with(scenario, spoof)
    scenario.fake.judge = truthful_judge
    result = run_gated(scenario, head, judge=JUDGE, env_extra=judge_env(scenario), trust_pr_verdicts=trust)
    assert result.code == 1, result.stdout + result.stderr


def test_a_keyed_verdict_with_the_judge_key_missing_cannot_share_a_catch(scenario: Scenario) -> None:
    """A fork: the configured judge has no key, so the record is replayed."""
    from rubric_gate.judges import PROMPT_VERSION
    from rubric_gate.verdicts import task_hash

    spoof = verdict_line("B", "R1", "no", judge=JUDGE, prompt=PROMPT_VERSION, item_hash=content_hash_of("R1"),
                     task_hash=task_hash("Review a cloud security design."))
    head = _delete_a_with(scenario, spoof)
    result = run_gated(scenario, head, fork=True, judge=JUDGE)
    assert result.code == 1, result.stdout + result.stderr


@pytest.mark.parametrize("line", [
    verdict_line("B", "R1", "no", sample=1),
    verdict_line("B", "ZZ", "no", item_hash=content_hash_of("R1")),
    verdict_line("B", "R1", "no", task_hash="0" * 16),
    verdict_line(TEXTS["B"].replace(" ", "  "), "R1", "no"),
    verdict_line(TEXTS["B"].upper(), "R1", "no"),
], ids=["sample-index", "hash-only", "other-task", "respaced-text", "upper-case-text"])
def test_a_dressed_up_verdict_line_cannot_share_a_catch(scenario: Scenario, line: str) -> None:
    head = _delete_a_with(scenario, line)
    for trust in ("true", "false"):
        result = run_gated(scenario, head, trust_pr_verdicts=trust)
        assert result.code == 1, (trust, result.stdout + result.stderr)


def test_a_verdict_line_with_a_stale_item_hash_cannot_hide_a_recorded_answer(scenario: Scenario) -> None:
    """The base's (A, R1) "no" re-recorded later in the file as "yes" with a hash that matches no
    item: read under the rubric's task the pair has no answer any more (a stale answer wins and is
    no answer). That is a lost answer, reported as one (the record's answer is compared as the
    gate reads it), and once merged a PR deleting A stops on a missing verdict: never "yes"."""
    first = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + verdict_line("A", "R1", "yes",
                                                                             item_hash="sha256:" + "0" * 16)},
                                "re-record A on R1 under a stale hash")
    first_result = run_gated(scenario, first)
    scenario.git("checkout", "-q", "main")
    scenario.git("merge", "-q", "--ff-only", "pr")
    scenario.base_sha = scenario.fake.base_sha = first
    scenario.git("checkout", "-q", "pr")
    second = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = run_gated(scenario, second)
    assert (first_result.code, result.code) == (1, 2), first_result.stdout + result.stdout
    assert "removes 1 recorded verdict" in first_result.stdout


def test_a_torn_last_verdict_line_is_not_a_silent_deletion(scenario: Scenario) -> None:
    """The last recorded line cut mid-JSON (no newline): a committed file is not a torn write."""
    text = verdicts_jsonl(TEXTS)
    lines = text.splitlines(keepends=True)
    # Move (A, R1) to the end, then cut it: the store skips a torn tail.
    a_r1 = next(line for line in lines if json.loads(line)["item"] == "R1" and json.loads(line)["check_text"] == TEXTS["A"])
    rest = "".join(line for line in lines if line is not a_r1)
    head = scenario.git.commit({VERDICTS: rest + a_r1.rstrip("\n")[:-2], RUBRIC: rubric_yaml(["B", "C", "D"])},
                               "delete A; tear (A, R1)")
    result = run_gated(scenario, head)
    assert result.code == 1, result.stdout + result.stderr


# -- the record as the gate replays it, not line by line --------------------------------------

def _superseded(answer_then: str) -> str:
    """The base record with (A, R1) recorded twice: first `answer_then`, then corrected to "no"."""
    lines = verdicts_jsonl(TEXTS).splitlines(keepends=True)
    return verdict_line("A", "R1", answer_then) + "".join(lines)


@pytest.mark.parametrize("dressing", [
    {"item_hash": "sha256:" + "0" * 16}, {"task_hash": "0" * 16},
    {"sample": 1},
    {"judge": "x:y", "prompt": "v0"},
], ids=["stale-item-hash", "other-task", "sample-1", "judge-key"])
def test_making_a_correction_line_stale_is_a_changed_answer(scenario: Scenario, dressing: dict) -> None:
    main = commit_on_main(scenario, {VERDICTS: _superseded("yes")}, "(A, R1) re-recorded: yes, then no")
    scenario.git("reset", "-q", "--hard", main)
    correction = verdict_line("A", "R1", "no")
    record = (scenario.git.path / VERDICTS).read_text()
    assert record.count(correction) == 1
    first = scenario.git.commit({VERDICTS: record.replace(correction, verdict_line("A", "R1", "no", **dressing))},
                                "annotate a verdict line")
    first_result = run_gated(scenario, first)
    scenario.git("checkout", "-q", "main")
    scenario.git("merge", "-q", "--ff-only", "pr")
    scenario.base_sha = scenario.fake.base_sha = first
    scenario.git("checkout", "-q", "pr")
    second = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    second_result = run_gated(scenario, second)
    assert route_closed(first_result.code, second_result.code), first_result.stdout + second_result.stdout


def test_flipping_a_keyed_answer_behind_a_keyless_one_is_a_changed_answer(scenario: Scenario) -> None:
    from rubric_gate.judges import PROMPT_VERSION
    from rubric_gate.verdicts import task_hash

    key = {"judge": JUDGE, "prompt": PROMPT_VERSION, "task_hash": task_hash("Review a cloud security design.")}
    keyed = "".join(verdict_line(cid, item, "no" if cid in FAILS[item] else "yes", item_hash=content_hash_of(item), **key)
                    for cid in "ABCD" for item in LABELS)
    main = commit_on_main(scenario, {VERDICTS: keyed + verdicts_jsonl(TEXTS)}, "commit the judge's verdicts, then the record")
    scenario.git("reset", "-q", "--hard", main)
    record = (scenario.git.path / VERDICTS).read_text()
    flipped_line = verdict_line("A", "R1", "no", item_hash=content_hash_of("R1"), **key)
    assert record.count(flipped_line) == 1
    first = scenario.git.commit({VERDICTS: record.replace(flipped_line, flipped_line.replace('"no"', '"yes"'))},
                                "flip the judge's (A, R1)")
    scenario.fake.judge = truthful_judge
    inputs = {"judge": JUDGE, "env_extra": judge_env(scenario)}
    first_result = run_gated(scenario, first, **inputs)
    scenario.git("checkout", "-q", "main")
    scenario.git("merge", "-q", "--ff-only", "pr")
    scenario.base_sha = scenario.fake.base_sha = first
    scenario.git("checkout", "-q", "pr")
    second = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    second_result = run_gated(scenario, second, **inputs)
    assert route_closed(first_result.code, second_result.code), first_result.stdout + second_result.stdout


def test_a_keyed_answer_inserted_before_the_record_is_a_changed_answer(scenario: Scenario) -> None:
    from rubric_gate.judges import PROMPT_VERSION
    from rubric_gate.verdicts import task_hash

    key = {"judge": JUDGE, "prompt": PROMPT_VERSION, "task_hash": task_hash("Review a cloud security design.")}
    planted = verdict_line("A", "R1", "yes", item_hash=content_hash_of("R1"), **key)
    first = scenario.git.commit({VERDICTS: planted + verdicts_jsonl(TEXTS)}, "a keyed line at the top")
    scenario.fake.judge = truthful_judge
    inputs = {"judge": JUDGE, "env_extra": judge_env(scenario)}
    first_result = run_gated(scenario, first, **inputs)
    scenario.git("checkout", "-q", "main")
    scenario.git("merge", "-q", "--ff-only", "pr")
    scenario.base_sha = scenario.fake.base_sha = first
    scenario.git("checkout", "-q", "pr")
    second = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    second_result = run_gated(scenario, second, **inputs)
    assert route_closed(first_result.code, second_result.code), first_result.stdout + second_result.stdout


# -- a verdict file the base names but does not have ---------------------------------------------

def test_creating_the_verdict_file_the_rubric_names_is_reviewed_like_changing_it(scenario: Scenario) -> None:
    """A judged rubric keeps its verdicts in the cache: the file its `verdicts` key names does
    not exist. PR 1 creates it with the judge's key on one invented answer ((B, R1) "no"); once
    merged, the next run reads it as the judge's answer and A's catch of R1 looks shared."""
    main = commit_on_main(scenario, {VERDICTS: None}, "verdicts live in the cache: no verdict file")
    scenario.git("reset", "-q", "--hard", main)
    inputs = judged_by(scenario)
    one, two = two_prs(scenario, {VERDICTS: keyed_line("B", "R1", "no")}, {RUBRIC: rubric_yaml(["B", "C", "D"])},
                        **inputs)
    not_both_green(one, two)


# -- verdict lines keyed to a look-alike judge -----------------------------------------------------

@pytest.mark.parametrize("key", [{"judge": "OpenAI:fake-model"}, {"judge": " openai:fake-model"},
                                 {"judge": "openai:fake-model", "prompt": PROMPT_VERSION.upper()},
                                 {"task_hash": task_hash(TASK).upper()},
                                 {"item_hash": content_hash_of("R1").upper()}],
                         ids=["judge-case", "judge-space", "prompt-case", "task-case", "item-hash-case"])
def test_a_look_alike_judge_key_cannot_plant_a_catch(scenario: Scenario, key: dict) -> None:
    inputs = judged_by(scenario)
    one, two = two_prs(scenario, {VERDICTS: verdicts_jsonl(TEXTS) + keyed_line("B", "R1", "no", **key)},
                        {RUBRIC: rubric_yaml(["B", "C", "D"])}, **inputs)
    not_both_green(one, two)


# -- the base does not load -------------------------------------------------------------------------

def test_a_broken_base_verdict_line_fixed_to_another_answer_needs_the_override(scenario: Scenario) -> None:
    line = f'"check_text": "{TEXTS["B"]}", "answer": "yes"'
    record = verdicts_jsonl(TEXTS).replace(line + "}", line, 1)  # B on R1: no closing brace
    main = commit_on_main(scenario, {VERDICTS: record}, "a broken line")
    scenario.git("reset", "-q", "--hard", main)
    fixed = verdicts_jsonl(TEXTS, {**FAILS, "R1": {"A", "B"}})
    head = scenario.git.commit({VERDICTS: fixed, RUBRIC: rubric_yaml(["B", "C", "D"])}, "fix the line; delete A")
    assert run_gated(scenario, head).code != 0


# -- an answer the judge gave under one task excuses nothing under another -------------------------

LENIENT_TASK = "Say whether the design is pleasant to read."
LENIENT = "rubrics/lenient.yaml"


def _task_judge(prompt: str) -> str:
    """Truthful under demo's task; under the lenient task, B answers no on R1."""
    if LENIENT_TASK in prompt and TEXTS["B"] in prompt and "review R1" in prompt:
        return "no"
    return truthful_judge(prompt)


def test_a_judges_answer_under_another_rubrics_task_does_not_excuse_a_changed_answer(scenario: Scenario) -> None:
    """lenient.yaml shares demo's labels, verdict file and check B. PR 1 touches lenient (so the
    judge answers B on R1 under its task: "no") and records that "no" as demo's keyed answer.
    The judge never answered B on R1 under demo's task; once merged, deleting A looks safe."""
    lenient = rubric_yaml(["B", "C"]).replace("id: demo", "id: lenient").replace(TASK, LENIENT_TASK)
    main = commit_on_main(scenario, {LENIENT: lenient}, "a lenient rubric sharing the record")
    scenario.git("reset", "-q", "--hard", main)
    inputs = judged_by(scenario, _task_judge)
    first = {LENIENT: lenient.replace("version: 1", "version: 2"),
             VERDICTS: verdicts_jsonl(TEXTS) + keyed_line("B", "R1", "no")}
    one, two = two_prs(scenario, first, {RUBRIC: rubric_yaml(["B", "C", "D"])}, **inputs)
    not_both_green(one, two)


# -- a rubric the base cannot read vouches for none of its checks' answers -------------------------

def test_answers_filled_in_while_the_base_rubric_is_broken_are_reviewed(scenario: Scenario) -> None:
    """demo.yaml on main does not load (a check id twice, as two clean merges can leave it), and
    its record lacks (B, R1). PR 1 only fills that gap with "no": no rubric file changes. PR 2 is
    the reviewed, overridden fix of the YAML. PR 3 deletes A, whose catch of R1 B now "shares"."""
    record = "".join(line for line in verdicts_jsonl(TEXTS).splitlines(keepends=True)
                     if not (json.loads(line)["item"] == "R1" and json.loads(line)["check_text"] == TEXTS["B"]))
    broken = rubric_yaml(["A", "B", "C", "D", "C"])
    main = commit_on_main(scenario, {RUBRIC: broken, VERDICTS: record}, "two merges left C twice")
    scenario.git("reset", "-q", "--hard", main)
    first = scenario.git.commit({VERDICTS: record + verdict_line("B", "R1", "no")}, "PR 1: fill (B, R1)")
    one = run_gated(scenario, first)
    merge_pr(scenario)
    fix = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"])}, "PR 2: the YAML fix, overridden")
    apply_label(scenario, "labeled")
    assert run_gated(scenario, fix, labels=(OVERRIDE,)).code == 0
    merge_pr(scenario)
    scenario.fake.label_events.clear()
    third = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "PR 3: delete A")
    three = run_gated(scenario, third)
    not_both_green(one, three)


def test_answers_filled_in_while_the_rubrics_labels_are_missing_are_reviewed(scenario: Scenario) -> None:
    """As above, with the rubric broken by a missing calibration set: PR 1 fills (B, R1) "no";
    PR 2 restores the labels (overridden); PR 3 deletes A."""
    from tests.action.harness import CALIBRATION, calibration_jsonl

    record = "".join(line for line in verdicts_jsonl(TEXTS).splitlines(keepends=True)
                     if not (json.loads(line)["item"] == "R1" and json.loads(line)["check_text"] == TEXTS["B"]))
    main = commit_on_main(scenario, {CALIBRATION: None, VERDICTS: record}, "labels to come")
    scenario.git("reset", "-q", "--hard", main)
    first = scenario.git.commit({VERDICTS: record + verdict_line("B", "R1", "no")}, "PR 1: fill (B, R1)")
    one = run_gated(scenario, first)
    merge_pr(scenario)
    fix = scenario.git.commit({CALIBRATION: calibration_jsonl()}, "PR 2: the labels, overridden")
    apply_label(scenario, "labeled")
    assert run_gated(scenario, fix, labels=(OVERRIDE,)).code == 0
    merge_pr(scenario)
    scenario.fake.label_events.clear()
    third = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "PR 3: delete A")
    not_both_green(one, run_gated(scenario, third))


# -- a configured judge's evidence is its own answers, live or not -------------------------------

def test_answers_the_judge_disagreed_with_do_not_decide_a_forks_run_once_merged(scenario: Scenario) -> None:
    """PR 1 (judged) adds X with its own answers, among them X "no" on R1; the judge answers yes
    there (X has no blame either way, so X is accepted, with a note). Merged, those answers are
    the record. PR 2 comes from a fork: the judge cannot run, the record is replayed, and X's
    invented "no" makes A's catch of R1 look shared."""
    extra = {"X": "Is key rotation automated?"}
    lies = "".join(verdict_line(extra["X"], i, "no" if i == "R1" else "yes") for i in LABELS)
    inputs = judged_by(scenario)
    first = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=extra),
                                 VERDICTS: verdicts_jsonl(TEXTS) + lies}, "PR 1: add X")
    one = run_gated(scenario, first, **inputs)
    merge_pr(scenario)
    second = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D", "X"], extra=extra)}, "PR 2 (a fork): delete A")
    two = run_gated(scenario, second, fork=True, judge=JUDGE)  # a fork's run has no OPENAI_API_KEY
    not_both_green(one, two)


def test_answers_recorded_for_no_check_do_not_decide_a_forks_run_once_merged(scenario: Scenario) -> None:
    """PR 1 (judged) records answers for a text no check has: nothing weighs them. PR 2 (a fork:
    the judge cannot run) adds X and deletes A. The record's answers for X vouch for nothing until
    a check with X's text is in the base rubric (`trust.evidence`), so here they are PR 2's own:
    untrusted, they cannot share A's catch (and stand in for no judge)."""
    extra = {"X": "Is key rotation automated?"}
    lies = "".join(verdict_line(extra["X"], i, "no" if i == "R1" else "yes") for i in LABELS)
    inputs = judged_by(scenario)
    first = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + lies}, "PR 1: answers for a check nobody has")
    one = run_gated(scenario, first, **inputs)
    merge_pr(scenario)
    second = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D", "X"], extra=extra)},
                                 "PR 2 (a fork): add X, delete A")
    two = run_gated(scenario, second, fork=True, judge=JUDGE)
    not_both_green(one, two)


def _record_without(*pairs: tuple[str, str]) -> str:
    return "".join(line for line in verdicts_jsonl(TEXTS).splitlines(keepends=True)
                   if (next(k for k, t in TEXTS.items() if t == json.loads(line)["check_text"]),
                       json.loads(line)["item"]) not in pairs)


# -- verdict-file lines: encodings, duplicates, spellings ----------------------------------------

class TestVerdictLineEncoding:
    """One verdict file, many spellings of one line: each must read as the gate's lookup reads it."""

    def test_crlf_line_endings_with_a_flipped_answer(self, scenario: Scenario) -> None:
        record = flip_answer(verdicts_jsonl(TEXTS), "B", "R1", "no").replace("\n", "\r\n")
        head = scenario.git.commit({VERDICTS: record, **DELETE_A}, "CRLF; B no on R1; delete A")
        rejected_run(scenario, head)

    def test_a_bom_before_an_appended_line(self, scenario: Scenario) -> None:
        line = "\ufeff" + verdict_line("B", "R1", "no")
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line, **DELETE_A}, "a BOM mid-file")
        rejected_run(scenario, head, code=2)

    def test_a_bom_at_the_start_of_a_rewritten_record(self, scenario: Scenario) -> None:
        record = "\ufeff" + flip_answer(verdicts_jsonl(TEXTS), "B", "R1", "no")
        head = scenario.git.commit({VERDICTS: record, **DELETE_A}, "a leading BOM; B no on R1")
        rejected_run(scenario, head)

    def test_a_nul_byte_inside_a_line(self, scenario: Scenario) -> None:
        line = verdict_line("B", "R1", "no").replace('"answer"', '"answer"\x00', 1)
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line, **DELETE_A}, "a NUL")
        rejected_run(scenario, head, code=2)

    def test_an_escaped_duplicate_answer_key(self, scenario: Scenario) -> None:
        """`\\u0061nswer` decodes to `answer`: a second answer key in another spelling."""
        line = verdict_line("B", "R1", "yes").replace("}", ', "\\u0061nswer": "no"}')
        record = verdicts_jsonl(TEXTS).replace(json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "yes"})
                                               + "\n", line)
        head = scenario.git.commit({VERDICTS: record, **DELETE_A}, "answer twice, escaped")
        rejected_run(scenario, head, code=2)

    def test_a_line_padded_past_a_megabyte(self, scenario: Scenario) -> None:
        line = verdict_line("B", "R1", "no").replace("{", "{" + " " * (2 << 20), 1)
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line, **DELETE_A}, "a long line")
        rejected_run(scenario, head)

    def test_a_duplicate_line_for_a_pair_with_the_other_answer(self, scenario: Scenario) -> None:
        """The base's (B, R1) "yes" stays; a second line says "no": which one the lookup reads is
        a change of the record either way."""
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + verdict_line("B", "R1", "no"), **DELETE_A},
                                   "a second (B, R1)")
        rejected_run(scenario, head)

    def test_reordered_lines_put_a_stale_duplicate_first(self, scenario: Scenario) -> None:
        """main recorded (B, R1) twice: "no" then a re-recorded "yes". The PR only reorders lines."""
        record = verdicts_jsonl(TEXTS)
        yes = json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "yes"}) + "\n"
        no = json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "no"}) + "\n"
        main = commit_on_main(scenario, {VERDICTS: record.replace(yes, no + yes)}, "B on R1 re-recorded")
        scenario.git("reset", "-q", "--hard", main)
        head = scenario.git.commit({VERDICTS: record.replace(yes, yes + no), **DELETE_A}, "reorder; delete A")
        rejected_run(scenario, head)

    def test_check_text_spelled_with_a_no_break_space(self, scenario: Scenario) -> None:
        """NBSP is whitespace to the text's normalisation: the line answers B."""
        spelled = TEXTS["B"].replace(" ", "\u00a0", 1)
        line = json.dumps({"item": "R1", "check_text": spelled, "answer": "no"}) + "\n"
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line, **DELETE_A}, "B (nbsp) no on R1")
        rejected_run(scenario, head)

    def test_check_text_in_nfd_in_the_rubric_and_its_verdicts(self, scenario: Scenario) -> None:
        """B reworded to a text that renders alike (a combining accent) with the PR's own "no"."""
        extra = {"Bd": unicodedata.normalize("NFD", "Are IAM rôles scoped to least privilege?")}
        lines = "".join(verdict_line(extra["Bd"], i, "no" if i in ("R1", "R2", "R3") else "yes") for i in LABELS)
        head = scenario.git.commit({RUBRIC: rubric_yaml(["B=Bd", "C", "D"], extra=extra),
                                    VERDICTS: verdicts_jsonl(TEXTS) + lines}, "B in NFD; delete A")
        rejected_run(scenario, head)

    def test_an_answer_given_as_a_number(self, scenario: Scenario) -> None:
        line = verdict_line("B", "R1", "no").replace('"no"', "0")
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line, **DELETE_A}, "answer 0")
        rejected_run(scenario, head, code=2)

    def test_an_item_id_given_as_a_number(self, scenario: Scenario) -> None:
        labels = {**LABELS, "6": "fail"}
        cal = calibration_jsonl(labels)
        main = commit_on_main(scenario, {CALIBRATION: cal, VERDICTS: verdicts_jsonl(TEXTS, {**FAILS, "6": {"A"}}, labels)},
                        "item 6, caught by A alone")
        scenario.git("reset", "-q", "--hard", main)
        line = json.dumps({"item": 6, "check_text": TEXTS["B"], "answer": "no"}) + "\n"
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS, {**FAILS, "6": {"A"}}, labels) + line,
                                    RUBRIC: rubric_yaml(["B", "C", "D", "E"])}, "item 6 as a number")
        rejected_run(scenario, head, code=2)


# -- verdict lines that claim a judge --------------------------------------------------------------

class TestKeyedEvidence:
    """Keyed lines are what a judged run reads as its judge's answers."""

    def test_keyed_lines_recorded_for_no_check_do_not_decide_a_judged_run_once_merged(self, scenario: Scenario) -> None:
        """PR 1 records keyed answers (the configured judge's key) for a check text no rubric has:
        nobody weighs or judges them. PR 2, judged, adds that check and deletes A: the judged run
        reads the record's keyed "no" on R1 as its judge's answer, and A's catch looks shared."""
        inputs = judged_by(scenario)
        lies = "".join(keyed_line(EXTRA["X"], i, "no" if i == "R1" else "yes") for i in LABELS)
        first = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + lies}, "PR 1: keyed answers for X")
        one = run_gated(scenario, first, **inputs)
        merge_pr(scenario)
        second = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D", "X"], extra=EXTRA)}, "PR 2: X in, A out")
        two = run_gated(scenario, second, **inputs)
        # Closed at PR 1: a keyed answer where the base had none is the judge's answer nobody judged.
        assert one.code == 1 and "did not confirm" in one.stdout, one.stdout + two.stdout

    def test_keyed_lines_under_a_hash_only_item_reference(self, scenario: Scenario) -> None:
        """An item named by content hash alone (an id no item has), answering B "no" on R1."""
        line = verdict_line("B", "R1-copy", "no", item_hash=content_hash_of("R1"))
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line, **DELETE_A}, "B no on R1 by hash")
        rejected_run(scenario, head)

    def test_keyed_later_samples_flip_a_majority(self, scenario: Scenario) -> None:
        inputs = judged_by(scenario)
        lines = keyed_line("B", "R1", "no", sample=1) + keyed_line("B", "R1", "no", sample=2)
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + lines, **DELETE_A}, "samples 1, 2: no")
        rejected_run(scenario, head, samples="3", **inputs)

    def test_a_keyed_line_naming_the_judge_in_a_fork_run(self, scenario: Scenario) -> None:
        """A fork's run has no key: a line keyed to the configured judge is still the PR's."""
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + keyed_line("B", "R1", "no"), **DELETE_A},
                                   "the judge's key, written by hand")
        rejected_run(scenario, head, fork=True, judge=JUDGE)


# -- which item a line answers: by id, else by content hash ---------------------------------------

class TestItemReference:
    """A replay lookup reads a line by item id, and by content hash where the id's row is
    missing or stale; a review of the record must locate each line the same way."""

    def test_a_gap_filled_by_a_line_naming_another_item_with_the_gaps_hash(self, scenario: Scenario) -> None:
        """main lacks (B, R1). PR 1 appends a line for item R2 carrying R1's content hash, "no";
        the review locates it as R2's (answered), the lookup of R1 finds it by hash. PR 2 deletes A."""
        record = _record_without(("B", "R1"))
        main = commit_on_main(scenario, {VERDICTS: record}, "(B, R1) not recorded")
        scenario.git("reset", "-q", "--hard", main)
        line = verdict_line("B", "R2", "no", item_hash=content_hash_of("R1"))
        first = scenario.git.commit({VERDICTS: record + line}, "PR 1: R2's line with R1's hash")
        one = run_gated(scenario, first)
        merge_pr(scenario)
        second = scenario.git.commit(DELETE_A, "PR 2: delete A")
        two = run_gated(scenario, second)
        # The review reads the line as the lookups do: R1 gains B's "no" by its hash and R2's own
        # answer is outranked by a line that is stale for R2, so PR 1 is reviewed (a fill and a
        # lost answer); merged anyway, B has no answer on R2 and PR 2 stops.
        assert one.code == 1 and "on R1: none -> no" in one.stdout and "on R2 (no)" in one.stdout, one.stdout
        assert two.code == 2 and "no verdict for checks B" in two.stdout, two.stdout

    def test_a_line_for_a_caught_item_with_a_wrong_hash_and_the_other_answer(self, scenario: Scenario) -> None:
        line = verdict_line("B", "R1", "no", item_hash="0" * 16)
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line, **DELETE_A}, "B no on R1, stale hash")
        rejected_run(scenario, head)

    def test_a_line_for_another_item_with_the_caught_items_hash(self, scenario: Scenario) -> None:
        line = verdict_line("B", "R2", "no", item_hash=content_hash_of("R1"))
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line, **DELETE_A}, "R2 with R1's hash")
        rejected_run(scenario, head)


# -- answers laundered through the record: recorded where nobody reads them, used later -----------

class TestLaunderedEvidence:
    """With `trust_pr_verdicts: false` a PR's own verdicts never stand in for a judge; with the
    default (true) they stand for the checks the PR adds, with a note naming them unverified, so
    a reviewer reads them before they become the record. A route is a PR whose answers become
    the record without either: weighed by no rule, named by no note. Closed where the record is
    read (`trust.evidence`): answers for a text the gated rubric's base lacks count as the PR's
    own in the PR that adds the check, whoever recorded them and whichever rubric read them."""

    def _launder(self, scenario: Scenario, first_files: dict[str, str | None], **inputs: str):
        lies = "".join(verdict_line(EXTRA["X"], i, "no" if i == "R1" else "yes") for i in LABELS)
        first = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + lies, **first_files}, "PR 1: X's answers")
        one = run_gated(scenario, first, **inputs)
        merge_pr(scenario)
        second = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D", "X"], extra=EXTRA)}, "PR 2: X in, A out")
        two = run_gated(scenario, second, **inputs)
        return one, two

    @pytest.mark.parametrize("trust", ["true", "false"])
    def test_answers_for_a_check_no_rubric_has(self, scenario: Scenario, trust: str) -> None:
        """No judge anywhere: PR 1 records X's answers, which no rubric reads."""
        one, two = self._launder(scenario, {}, trust_pr_verdicts=trust)
        assert one.code == 1 or two.code == 1, one.stdout + two.stdout

    @pytest.mark.parametrize("trust", ["true", "false"])
    def test_answers_for_the_check_of_a_new_helper_rubric(self, scenario: Scenario, trust: str) -> None:
        """PR 1 adds a rubric (scored, not gated) with check X on demo's labels and record."""
        one, two = self._launder(scenario, {"rubrics/helper.yaml": other_rubric(["X"], "helper")}, trust_pr_verdicts=trust)
        assert one.code == 1 or two.code == 1, one.stdout + two.stdout

    def test_answers_for_a_check_the_pr_adds_to_the_rubric_need_a_judge_when_untrusted(self, scenario: Scenario) -> None:
        one, _two = self._launder(scenario, {RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=EXTRA)},
                                 trust_pr_verdicts="false")
        assert one.code == 1 and "unverified verdict(s) added by this PR" in one.stdout + one.summary, one.stdout

    def test_answers_for_a_check_the_pr_adds_are_named_unverified_by_default(self, scenario: Scenario) -> None:
        """The default trusts them once reviewed (so the comment names them): by design, PR 2
        then stands on PR 1's record."""
        one, two = self._launder(scenario, {RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=EXTRA)})
        assert (one.code, two.code) == (0, 0), one.stdout + two.stdout
        assert "5 unverified verdict(s)" in one.summary, one.summary

    def test_with_a_configured_judge_in_both_runs(self, scenario: Scenario) -> None:
        one, two = self._launder(scenario, {}, **judged_by(scenario))
        # The judge answers X in PR 2: R1 is A's alone again. (PR 1 may pass, as today, or need the
        # override, as the fix of the routes above may make it: this route stops at PR 2 either way.)
        assert one.code in (0, 1) and two.code == 1, one.stdout + two.stdout


# -- labels and records several rubrics share ---------------------------------------------------

def _item_line(item: str, label: str, **fields: object) -> str:
    return json.dumps({"id": item, "input": f"design {item}", "output": f"review {item}", "label": label,
                       **fields}) + "\n"


class TestSharedEvidence:
    def _other_on_main(self, scenario: Scenario, checks: list[str], task: str = "Review a cloud design briefly.") -> None:
        other = rubric_yaml(checks, extra=EXTRA).replace("id: demo", "id: other").replace(TASK, task)
        main = commit_on_main(scenario, {OTHER: other}, "other.yaml shares the labels and the record")
        scenario.git("reset", "-q", "--hard", main)

    def test_deleting_a_rubric_whose_checks_another_rubric_also_has(self, scenario: Scenario) -> None:
        self._other_on_main(scenario, ["A", "B", "C", "D"])
        head = scenario.git.commit({RUBRIC: None}, "delete demo: other.yaml has the same checks")
        rejected_run(scenario, head)

    def test_a_relabel_only_the_unedited_rubric_reads(self, scenario: Scenario) -> None:
        """other.yaml has its own set; the PR relabels it and edits only demo (harmlessly)."""
        other_cal = "calibration/other.jsonl"
        other = rubric_yaml(["A", "B"]).replace("id: demo", "id: other").replace(CALIBRATION, other_cal)
        main = commit_on_main(scenario, {OTHER: other, other_cal: calibration_jsonl()}, "other.yaml, its own labels")
        scenario.git("reset", "-q", "--hard", main)
        head = scenario.git.commit({other_cal: calibration_jsonl({**LABELS, "R1": "pass"}),
                                    RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace("version: 1", "version: 2")},
                                   "relabel other's R1; bump demo")
        rejected_run(scenario, head)

    def test_a_check_moved_to_the_other_rubric_then_demo_deleted(self, scenario: Scenario) -> None:
        self._other_on_main(scenario, ["E"])
        other = rubric_yaml(["A", "E"], extra=EXTRA).replace("id: demo", "id: other").replace(
            TASK, "Review a cloud design briefly.")
        head = scenario.git.commit({RUBRIC: None, OTHER: other}, "A to other.yaml; demo deleted")
        rejected_run(scenario, head)

    def test_a_flip_in_the_shared_record_excused_under_one_task_only(self, scenario: Scenario) -> None:
        """The judge re-judges (B, R1) under demo's task ("no": it was wrong) but other.yaml reads
        the same keyless line under its own task, where the judge keeps "yes" (the pair is re-judged
        under every task reading the file, so a judge that agreed under both would excuse it)."""
        self._other_on_main(scenario, ["B", "E"])

        def judge(prompt: str) -> str:
            if TEXTS["B"] in prompt and "review R1" in prompt and TASK in prompt:
                return "no"
            return truthful_judge(prompt)

        inputs = judged_by(scenario, judge)
        record = verdicts_jsonl(TEXTS).replace(
            json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "yes"}),
            json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "no"}))
        head = scenario.git.commit({VERDICTS: record, RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace(
            "version: 1", "version: 2")}, "B no on R1; touch demo so the judge runs")
        rejected_run(scenario, head, **inputs)

    def test_an_item_rewritten_to_an_equivalent_json_spelling_hides_no_relabel(self, scenario: Scenario) -> None:
        """R1's line with its keys reordered and a letter escaped (the same content to JSON), and
        its label flipped: still a relabel."""
        cal = calibration_jsonl().replace(_item_line("R1", "fail"),
                                          '{"label": "pass", "output": "review R\\u0031", "input": "design R1", '
                                          '"id": "R1"}\n')
        assert cal != calibration_jsonl()
        head = scenario.git.commit({CALIBRATION: cal}, "R1 respelled, relabeled")
        rejected_run(scenario, head)

    def test_an_item_whose_input_becomes_an_equal_number(self, scenario: Scenario) -> None:
        """main labels R6 with a numeric input; the PR writes `1.0` for `1` (the same number to the
        judge's eye, another content to the hash) and deletes A, which alone catches R6."""
        labels = {**LABELS, "R6": "fail"}
        cal = calibration_jsonl(LABELS) + '{"id": "R6", "input": 1, "output": "review R6", "label": "fail"}\n'
        main = commit_on_main(scenario, {CALIBRATION: cal, VERDICTS: verdicts_jsonl(TEXTS, {**FAILS, "R6": {"A"}}, labels)},
                        "R6")
        scenario.git("reset", "-q", "--hard", main)
        head = scenario.git.commit({CALIBRATION: cal.replace('"input": 1,', '"input": 1.0,'), **DELETE_A},
                                   "R6's input 1.0; delete A")
        rejected_run(scenario, head)


# -- answers for a check text main gave a rubric since the PR branched --------------------------

F_TEXT = "Does the design name an owner for every key?"


class TestTextsMainAddedSince:
    """Answers recorded for a text no rubric has are allowed (named, untrusted until a PR adds
    the check). A text main's tip has, though, is a check the base branch has: what the PR
    records for it is, once merged, the record that check is replayed from."""

    def _main_adds_f(self, scenario: Scenario) -> None:
        # main's PR was judged: F's verdicts live in the verdict cache, not in the file.
        commit_on_main(scenario, {RUBRIC: rubric_yaml(["A", "B", "C", "D", "F"], extra={"F": F_TEXT})}, "main adds F")

    def test_answers_for_a_text_main_added_since_then_a_deletion(self, scenario: Scenario) -> None:
        self._main_adds_f(scenario)
        lies = "".join(verdict_line(F_TEXT, i, "no" if i == "R1" else "yes") for i in LABELS)
        first = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + lies}, "PR 1: answers for F's text")
        one = run_gated(scenario, first)
        merge_into_main(scenario, "pr")
        scenario.git("checkout", "-q", "-B", "pr2", "main")
        second = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D", "F"], extra={"F": F_TEXT})},
                                     "PR 2: delete A")
        two = run_gated(scenario, second, fork=True)
        assert one.code != 0 or two.code != 0, one.stdout + two.stdout

    def test_answers_for_a_text_main_added_since_are_reviewed_at_once(self, scenario: Scenario) -> None:
        self._main_adds_f(scenario)
        lies = "".join(verdict_line(F_TEXT, i, "no" if i == "R1" else "yes") for i in LABELS)
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + lies}, "answers for F's text")
        rejected_run(scenario, head)
